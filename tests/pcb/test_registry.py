"""The chapter's registry: what it registers and the settings the benchmark relies on.

Conformance itself (protocols, all runs at once equal one at a time, runs independent of their
neighbours) is ``tests/test_contracts.py``.
"""

from __future__ import annotations

import numpy as np

from causalbandits_lib.core.registry import BanditEntry
from causalbandits_lib.pcb import registry as R


def test_every_pair_of_notebook_4_is_registered():
    names = [e.name for e in R.ENTRIES]
    assert len(names) == len(set(names)) and all(n.startswith("pcb.") for n in names)
    assert {f"pcb.figure4.{n.lower().replace('-', '_')}" for n in R.FIGURE4_NAMES} <= set(names)
    assert {f"pcb.table1_world.{n.lower().replace('-', '_')}" for n in R.TABLE1_WORLD_NAMES} <= set(names)
    assert {"pcb.ucb", "pcb.ucb_pcb_per_run"} <= set(names)
    assert all(isinstance(e, BanditEntry) for e in R.ENTRIES)


def test_benchmark_entries_keep_the_former_bench_settings():
    bench = {e.name: e for e in R.ENTRIES if e.bench_T is not None}
    assert set(bench) == {"pcb.linucb_pcb_contextual", "pcb.ucb_pcb"}
    for e in bench.values():
        assert (e.bench_T, tuple(e.bench_runs), e.target_ratio, e.seed) == (2000, (1, 10, 100), None, 0)
    assert bench["pcb.ucb_pcb"].make_policy().horizon == 2000


def test_benchmark_bounds_are_valid():
    """The population sound bounds the benchmarks clip with contain the truth (they are the bounds
    at infinite data), per cell and averaged over contexts."""
    s = R.population_setting()
    assert np.all(s["lo"] <= s["truth"]) and np.all(s["truth"] <= s["hi"])
    assert np.all(s["arm_lo"] <= s["arm_means"]) and np.all(s["arm_means"] <= s["arm_hi"])
    assert np.any(s["arm_hi"] < s["arm_means"].max())  # some arm is eliminated: clipping matters


def test_priors_have_a_row_per_run_of_their_entries():
    by_name = {e.name: e for e in R.ENTRIES}
    for name in ("pcb.figure4.linucb_pcb", "pcb.ucb_pcb_per_run", "pcb.linucb_random.warm"):
        e = by_name[name]
        res = e.simulate(5, n_runs=e.n_runs)
        assert res["regret"].shape == (e.n_runs, 5)
