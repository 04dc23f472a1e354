"""The runner: per-run streams independent of the number of runs, vectorised equals looped."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.core.environments import BernoulliBandit, ContextualBernoulliBandit, GaussianBandit
from causalbandits_lib.core.policies import UCB1
from causalbandits_lib.core.runner import simulate, simulate_loop
from causalbandits_lib.core.streams import RoundNoise, RunStreams, stream_key


def test_stream_key_is_stable():
    # a fixed value: a change of hashing would silently change every published number
    assert stream_key("env/rewards") == int.from_bytes(
        __import__("hashlib").sha256(b"env/rewards").digest()[:4], "little"
    )
    assert stream_key("a") != stream_key("b")


@pytest.mark.parametrize("kind", ["uniform", "normal", "exponential"])
def test_round_noise_does_not_depend_on_chunk_size(kind):
    gens = lambda: RunStreams(3, [0, 1, 2]).generators("x")  # noqa: E731
    a = RoundNoise(gens(), (4,), kind, chunk=7)
    b = RoundNoise(gens(), (4,), kind, chunk=1000)
    for t in range(40):
        np.testing.assert_array_equal(a.at(t), b.at(t))


def test_round_noise_skipping_rounds_gives_same_numbers():
    a = RoundNoise(RunStreams(3, [0, 1]).generators("x"), (2,), "uniform", chunk=5)
    b = RoundNoise(RunStreams(3, [0, 1]).generators("x"), (2,), "uniform", chunk=5)
    full = [a.at(t) for t in range(23)]
    np.testing.assert_array_equal(b.at(22), full[22])
    with pytest.raises(ValueError, match="must not go back"):
        b.at(3)


@given(n_runs=st.integers(1, 6), extra=st.integers(0, 5), seed=st.integers(0, 2**32))
@settings(max_examples=25, deadline=None)
def test_a_run_does_not_depend_on_its_neighbours(n_runs, extra, seed):
    """Run i's draws are the same whether simulated with n_runs or n_runs+extra runs."""
    small = RunStreams(seed, range(n_runs)).per_round("s", (3,), "normal")
    large = RunStreams(seed, range(n_runs + extra)).per_round("s", (3,), "normal")
    for t in (0, 1, 2000):
        np.testing.assert_array_equal(small.at(t), large.at(t)[:n_runs])


def test_named_streams_differ_and_children_are_namespaced():
    s = RunStreams(1, [0])
    assert not np.array_equal(s.once("a", (5,)), s.once("b", (5,)))
    assert not np.array_equal(s.child("env/").once("a", (5,)), s.child("policy/").once("a", (5,)))


def test_run_streams_reject_bad_runs():
    with pytest.raises(ValueError, match="must not repeat"):
        RunStreams(0, [1, 1])
    with pytest.raises(ValueError, match="non-empty"):
        RunStreams(0, [])


@pytest.mark.parametrize(
    "make_env, make_policy",
    [
        (lambda: BernoulliBandit([0.7, 0.6, 0.5]), lambda: UCB1(3)),
        (lambda: GaussianBandit([0.2, 0.0, -0.1], sigma=0.5), lambda: UCB1(3)),
        (lambda: ContextualBernoulliBandit([0.5, 0.5], [[0.2, 0.8], [0.9, 0.1]]), lambda: UCB1(2, n_contexts=2)),
    ],
)
def test_vectorised_equals_loop(make_env, make_policy):
    vec = simulate(make_env(), make_policy(), T=300, seed=11, n_runs=5)
    loop = simulate_loop(make_env, make_policy, T=300, seed=11, n_runs=5)
    for name in ("regret", "reward"):
        np.testing.assert_array_equal(vec[name], loop[name])
    assert vec["regret"].shape == (5, 300)


def test_simulate_validates_arguments():
    with pytest.raises(ValueError, match="exactly one of n_runs"):
        simulate(BernoulliBandit([0.5, 0.4]), UCB1(2), T=5, seed=0)
    with pytest.raises(ValueError, match="T=0"):
        simulate(BernoulliBandit([0.5, 0.4]), UCB1(2), T=0, seed=0, n_runs=1)
    with pytest.raises(KeyError, match="not produced"):
        simulate(BernoulliBandit([0.5, 0.4]), UCB1(2), T=5, seed=0, n_runs=1, metrics=["nope"])


def test_same_seed_same_numbers_different_seed_different():
    a = simulate(BernoulliBandit([0.6, 0.5]), UCB1(2), T=200, seed=1, n_runs=4)
    b = simulate(BernoulliBandit([0.6, 0.5]), UCB1(2), T=200, seed=1, n_runs=4)
    c = simulate(BernoulliBandit([0.6, 0.5]), UCB1(2), T=200, seed=2, n_runs=4)
    np.testing.assert_array_equal(a["reward"], b["reward"])
    assert not np.array_equal(a["reward"], c["reward"])


def test_replicated_layout_shares_streams_across_configurations():
    streams = RunStreams(5, range(6), replications=3)
    assert streams.base.tolist() == [0, 1, 2, 0, 1, 2] and streams.config.tolist() == [0, 0, 0, 1, 1, 1]
    u = streams.once("x", (2,))
    np.testing.assert_array_equal(u[:3], u[3:])  # configuration 1 sees configuration 0's numbers
    np.testing.assert_array_equal(u[:3], RunStreams(5, range(3)).once("x", (2,)))
    assert streams.per_config([10.0, 20.0], "tau").tolist() == [10, 10, 10, 20, 20, 20]
    assert streams.per_config(7.0, "tau").tolist() == [7.0] * 6
    with pytest.raises(ValueError, match="tau gives 2 configurations but run 4 belongs to configuration 2"):
        RunStreams(5, range(6), replications=2).per_config([1.0, 2.0], "tau")
    assert streams.replicas().runs.tolist() == [0, 1, 2] and streams.inverse.tolist() == [0, 1, 2, 0, 1, 2]
    assert streams.child("env/").replications == 3


def test_simulate_with_replications_gives_each_configuration_the_same_environment():
    # UCB1 has no randomness of its own: every configuration of a replication plays identically
    res = simulate(BernoulliBandit([0.6, 0.5, 0.4]), UCB1(3), 200, seed=2, n_runs=4, replications=2)
    np.testing.assert_array_equal(res["reward"][:2], res["reward"][2:])
    alone = simulate(BernoulliBandit([0.6, 0.5, 0.4]), UCB1(3), 200, seed=2, n_runs=2)
    np.testing.assert_array_equal(res["reward"][:2], alone["reward"])
    loop = simulate_loop(lambda: BernoulliBandit([0.6, 0.5, 0.4]), lambda: UCB1(3), 200, 2, 4, replications=2)
    np.testing.assert_array_equal(res["reward"], loop["reward"])


def test_backends_agree_and_say_which_ran():
    from causalbandits_lib.core.recorders import RecorderBase

    env = lambda: BernoulliBandit([0.7, 0.6, 0.5])  # noqa: E731
    fast = simulate(env(), UCB1(3), 3000, seed=9, n_runs=6)
    slow = simulate(env(), UCB1(3), 3000, seed=9, n_runs=6, backend="numpy")
    assert fast.info["backend"] == "compiled" and slow.info["backend"] == "numpy"
    for m in ("reward", "regret"):
        np.testing.assert_array_equal(fast[m], slow[m])

    # a probe before every decision needs the per-round path: auto falls back, compiled refuses
    class EveryRound(RecorderBase):
        name = "every"

        def before_decision(self, t, context, policy):
            pass

    assert simulate(env(), UCB1(3), 20, 0, n_runs=2, recorders=[EveryRound()]).info["backend"] == "numpy"
    with pytest.raises(ValueError, match="probes before each decision"):
        simulate(env(), UCB1(3), 20, 0, n_runs=2, recorders=[EveryRound()], backend="compiled")
    with pytest.raises(ValueError, match="has no compiled kernel"):
        simulate(env(), UCB1(3, n_contexts=2), 20, 0, n_runs=2, backend="compiled")
    with pytest.raises(ValueError, match="backend='fast' is not one of"):
        simulate(env(), UCB1(3), 20, 0, n_runs=2, backend="fast")


def test_the_compiled_path_leaves_the_policy_in_the_numpy_path_state():
    a, b = UCB1(4), UCB1(4)
    simulate(GaussianBandit([0.1, 0.2, 0.3, 0.4]), a, 2500, seed=1, n_runs=3)
    simulate(GaussianBandit([0.1, 0.2, 0.3, 0.4]), b, 2500, seed=1, n_runs=3, backend="numpy")
    np.testing.assert_array_equal(a.stats.counts, b.stats.counts)
    np.testing.assert_array_equal(a.stats.sums, b.stats.sums)


DRAWS = [("uniform", "random"), ("normal", "standard_normal"), ("exponential", "standard_exponential")]


@pytest.mark.parametrize("kind, draw", DRAWS)
def test_round_noise_is_the_documented_stream(kind, draw):
    """Round t of run i's stream s is row t of the chunks drawn from
    Generator(PCG64(SeedSequence(seed, spawn_key=(i, stream_key(s))))), whatever the buffering."""
    noise = RunStreams(7, [3, 0], prefix="env/").per_round("x", (2,), kind, chunk=5)
    got = np.stack([noise.at(t) for t in range(12)], axis=1)
    for row, run in enumerate((3, 0)):
        gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence(7, spawn_key=(run, stream_key("env/x")))))
        chunks = [getattr(gen, draw)((5, 2)) for _ in range(3)]
        np.testing.assert_array_equal(got[row], np.concatenate(chunks)[:12])


@pytest.mark.parametrize("rounds", [[0], [5, 1023, 1024, 1025], [2047, 2048, 2999]])
def test_probed_rounds_keep_the_kernel_and_see_the_numpy_state(rounds):
    """A recorder that names the rounds it probes keeps the compiled kernel: the blocks end before
    each probed round, and the probe sees exactly the policy and context of the numpy path."""
    from causalbandits_lib.core.recorders import AtRounds

    def probe(t, context, policy):
        return t, context, policy.stats.counts.copy(), policy.stats.sums.copy()

    def run(backend):
        return simulate(
            ContextualBernoulliBandit([0.3, 0.7], [[0.2, 0.8, 0.5], [0.9, 0.1, 0.4]]),
            UCB1(3, n_contexts=2),
            3000,
            seed=4,
            n_runs=5,
            recorders=[AtRounds(probe, rounds, name="p")],
            backend=backend,
        )

    fast, slow = run("compiled"), run("numpy")
    assert fast.info["backend"] == "compiled"
    assert [p[0] for p in fast.recorded["p"]] == sorted(rounds)
    for a, b in zip(fast.recorded["p"], slow.recorded["p"]):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    for m in ("reward", "regret"):
        np.testing.assert_array_equal(fast[m], slow[m])


def test_default_keeps_running_sums_when_per_round_arrays_would_be_large(monkeypatch):
    import causalbandits_lib.core.runner as runner

    env = lambda: BernoulliBandit([0.7, 0.6, 0.5])  # noqa: E731
    full = simulate(env(), UCB1(3), 2500, seed=2, n_runs=4)
    assert set(full.metrics) == {"regret", "reward"} and full.sums is None
    monkeypatch.setattr(runner, "PER_ROUND_BUDGET", 1000)
    for backend in ("numpy", "compiled"):
        light = simulate(env(), UCB1(3), 2500, seed=2, n_runs=4, backend=backend)
        assert light.metrics == {} and light.sums is not None
        t, cum = light.curve("regret")
        assert t[0] == 1 and t[-1] == 2500
        # running sums equal numpy's cumulative sum at the checkpoints, bit for bit
        np.testing.assert_array_equal(cum, full.cumulative("regret")[:, t - 1])
        np.testing.assert_array_equal(light.final("reward"), np.cumsum(full["reward"], axis=1)[:, -1])
        with pytest.raises(KeyError, match="was not kept per round"):
            light.cumulative("regret")


def test_per_round_values_that_cannot_fit_are_refused_before_running(monkeypatch):
    import causalbandits_lib.core.runner as runner

    monkeypatch.setattr(runner, "available_memory", lambda: 10_000)
    with pytest.raises(MemoryError, match=r"1000 runs x 100000 rounds needs at least 1.49 GB"):
        simulate(BernoulliBandit([0.5, 0.4]), UCB1(2), 100_000, seed=0, n_runs=1000, metrics=("regret", "reward"))


def test_the_work_ledger_names_every_simulation():
    from causalbandits_lib.core.runner import work_ledger

    with work_ledger() as entries:
        simulate(BernoulliBandit([0.5, 0.4]), UCB1(2), 50, seed=0, n_runs=3)
        simulate(BernoulliBandit([0.5, 0.4]), UCB1(2), 50, seed=0, n_runs=3, backend="numpy")
    simulate(BernoulliBandit([0.5, 0.4]), UCB1(2), 50, seed=0, n_runs=3)  # after the ledger closed
    assert [(e["environment"], e["policy"], e["backend"], e["runs"], e["rounds"]) for e in entries] == [
        ("BernoulliBandit", "UCB1", "compiled", 3, 50),
        ("BernoulliBandit", "UCB1", "numpy", 3, 50),
    ]
    from causalbandits_lib.core.runner import work_by_pair

    rows = work_by_pair(entries + [dict(entries[0], seconds=100.0)])
    assert [(r["backend"], r["calls"], r["run_steps"]) for r in rows] == [("compiled", 2, 300), ("numpy", 1, 150)]


def test_simulations_in_worker_processes_reach_the_parent_ledger():
    from causalbandits_lib.core.parallel import map_tasks
    from causalbandits_lib.core.runner import work_ledger

    tasks = [dict(env=BernoulliBandit([0.5, 0.4]), policy=UCB1(2), T=40, seed=s, n_runs=2) for s in range(3)]
    with work_ledger() as entries:
        outcomes = map_tasks(simulate, tasks, jobs=2)
    assert all(o.ok for o in outcomes)
    assert sorted((e["policy"], e["rounds"], e["runs"]) for e in entries) == [("UCB1", 40, 2)] * 3
