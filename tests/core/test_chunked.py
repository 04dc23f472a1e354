"""Issue 36, item 2 (the library part): a simulation's runs as chunks on a Dask cluster equal one
process's simulation bit for bit, for every (environment, policy) pair every chapter registers, on
the numpy path and on the compiled kernels (the conformance test's chunked case)."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest

from causalbandits_lib.book.chapters import chapter_names, registry_entries
from causalbandits_lib.core.chunked import chunk_runs, join_results, run_in_chunks, simulate_in_chunks
from causalbandits_lib.core.environments import BernoulliBandit
from causalbandits_lib.core.policies import UCB1
from causalbandits_lib.core.recorders import RunningSums
from causalbandits_lib.core.registry import BanditEntry
from causalbandits_lib.core.runner import simulate

#: runs and their uneven chunks for the hand-made cases (the issue's 37 + 37 + 26, scaled to 10 runs)
N_RUNS, CHUNKS = 10, (4, 4, 2)


def uneven(n: int) -> list[int]:
    """Three chunks of unequal sizes for an entry's own number of runs (its layout of
    configurations x replications fixes it): 8 -> 4 + 3 + 1, 4 -> 2 + 1 + 1."""
    if n < 3:
        return [1] * n
    return [n - 2 - (n - 3) // 2, 1 + (n - 3) // 2, 1]


BANDITS = [e for e in registry_entries(chapter_names()) if isinstance(e, BanditEntry)]


@pytest.fixture(scope="module")
def scheduler():
    """A local Dask cluster of two single-thread worker processes (chunks are pickled to them)."""
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    )
    try:
        yield cluster.scheduler_address
    finally:
        cluster.close()


def _same(a, b) -> bool:
    if a.metrics.keys() != b.metrics.keys() or not np.array_equal(a.runs, b.runs):
        return False
    if any(not np.array_equal(a.metrics[k], b.metrics[k]) for k in a.metrics):
        return False
    if (a.sums is None) != (b.sums is None):
        return False
    return a.sums is None or all(np.array_equal(a.sums.sums[k], b.sums.sums[k]) for k in a.sums.sums)


def test_chunk_runs_cuts_consecutive_runs():
    assert chunk_runs(10, CHUNKS) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert uneven(8) == [4, 3, 1] and uneven(3) == [1, 1, 1] and uneven(1) == [1]
    assert chunk_runs(7, 3) == [[0, 1, 2], [3, 4], [5, 6]]
    assert chunk_runs(100, (37, 37, 26))[2] == list(range(74, 100))
    for bad in ((5, 4), (10, 0), 11, 0):
        with pytest.raises(ValueError):
            chunk_runs(10, bad)


def test_every_registered_pair_in_chunks_on_a_cluster_equals_one_process(scheduler):
    """Each pair at its registered horizon and number of runs, in three uneven chunks on the cluster."""
    cases = [(e, b) for e in BANDITS for b in ("numpy", "compiled") if b == "numpy" or e.has_kernel()]
    # every chapter that registers a pair (bestfair registers identifiers, which do not simulate)
    assert {e.name.split(".")[0] for e, _ in cases} == set(chapter_names()) - {"bestfair"}
    assert any(b == "compiled" for _, b in cases)
    bad = []
    for e, backend in cases:
        whole = e.simulate(e.T, n_runs=e.n_runs, backend=backend)
        sizes = uneven(e.n_runs)
        chunked = run_in_chunks(partial(e.simulate, e.T, backend=backend), e.n_runs, sizes, scheduler=scheduler)
        if chunked.info["chunks"] != sizes or not _same(whole, chunked):
            bad.append(f"{e.name} ({backend})")
    assert not bad, f"{len(bad)} of {len(cases)} differ in chunks: {bad[:5]}"


def _ignores_its_runs(env, policy, T, seed, runs):
    """A wrong chunk: simulates runs 0..len-1 whatever runs it is given."""
    return simulate(env, policy, T, seed, n_runs=len(runs))


def test_the_comparison_catches_a_chunk_that_simulates_other_runs():
    env, policy = BernoulliBandit([0.6, 0.5, 0.4]), UCB1(3)
    whole = simulate(env, policy, 50, 3, n_runs=N_RUNS)
    wrong = run_in_chunks(partial(_ignores_its_runs, env, policy, 50, 3), N_RUNS, CHUNKS)
    assert not _same(whole, wrong)
    assert _same(whole, simulate_in_chunks(env, policy, 50, 3, N_RUNS, CHUNKS, jobs=2))


def test_running_sums_are_joined_and_other_recorders_refused():
    env, policy = BernoulliBandit([0.6, 0.5]), UCB1(2)
    sums = RunningSums(lambda t, c, a, f, p: {"regret": f["regret"]}, [10, 40], name="sums40")
    whole = simulate(env, policy, 40, 1, n_runs=N_RUNS, metrics=(), recorders=[sums])
    chunked = simulate_in_chunks(env, policy, 40, 1, N_RUNS, CHUNKS, metrics=(), recorders=[sums])
    assert np.array_equal(whole.recorded["sums40"].sums["regret"], chunked.recorded["sums40"].sums["regret"])
    parts = [simulate(env, policy, 40, 1, runs=r) for r in chunk_runs(N_RUNS, CHUNKS)]
    parts[1].recorded["other"] = [1, 2]
    with pytest.raises(ValueError, match="other recorders"):
        join_results(parts)


def test_chunks_that_would_keep_other_values_than_the_whole_are_refused_before_running():
    env, policy = BernoulliBandit([0.6, 0.5]), UCB1(2)
    # 20 runs x 10^6 rounds keep running sums by default; a chunk of 10 would keep per-round values
    with pytest.raises(ValueError, match="give metrics"):
        simulate_in_chunks(env, policy, 10**6, 0, 20, 2)
