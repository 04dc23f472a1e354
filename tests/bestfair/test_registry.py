"""The chapter's registered identifiers (their conformance is ``tests/test_contracts.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.bestfair import registry as R
from causalbandits_lib.bestfair.algorithms import ALGORITHMS, Identification


def test_every_algorithm_is_registered_on_each_instance():
    names = [e.name for e in R.ENTRIES]
    assert len(names) == len(set(names)) and all(n.startswith("bestfair.") for n in names)
    for suffix in ("small", "small_split", "hepar2"):
        for alg in ALGORITHMS:
            assert f"bestfair.{alg.lower().replace('-', '_')}_{suffix}" in names


def test_the_small_instance_has_every_kind_of_arm():
    inst = R.small()
    facts, tol = inst.facts, R.SMALL.tolerance
    assert inst.problem.n_arms == 6 and facts["n_feasible"] == 4 and facts["n_better_infeasible"] == 1
    assert facts["best_fair_arm"] != facts["best_unconstrained_arm"]
    assert not inst.problem.fair(tol).all()


def test_the_former_benchmark_cases_are_entries():
    bench = {e.name: e for e in R.ENTRIES if e.bench_T is not None}
    assert sorted(bench) == sorted(
        [
            "bestfair.csr_v2_loose",
            "bestfair.ts_v1_loose",
            "bestfair.csr_v2_loose.warm_lp",
            "bestfair.ts_v1_loose.warm_lp",
        ]
    )
    for e in bench.values():
        assert (e.bench_T, e.bench_runs, e.target_ratio, e.seed) == (5000, (1, 10, 100), None, 0)
    inst = R.loose()
    assert inst.setting.name == "loose" and inst.problem.n_arms == 30


def test_warm_entries_share_a_filled_lp_and_cold_entries_do_not():
    entries = {e.name: e for e in R.ENTRIES}
    warm, cold = entries["bestfair.ts_v1_loose.warm_lp"], entries["bestfair.ts_v1_loose"]
    first, second = warm.make_identifier(warm.budget), warm.make_identifier(warm.budget)
    assert isinstance(first, Identification) and first.lp is second.lp
    result = first.identify(warm.seed, range(warm.n_runs))
    assert result.info["lp_solves"] == 0  # every remaining set was solved when the LP was filled
    fresh = cold.make_identifier(cold.budget)
    assert fresh.lp is not cold.make_identifier(cold.budget).lp
    again = fresh.identify(cold.seed, range(cold.n_runs))
    assert again.info["lp_solves"] > 0 and again.equals(result)
    assert np.array_equal(again.chosen, result.chosen)


def test_every_entry_offers_the_compiled_path_and_one_has_800_cells():
    """So the conformance check compares the compiled path with the numpy path on every entry,
    among them a problem the size of notebook bestfair/04's binomial variant."""
    entries = {e.name: e for e in R.ENTRIES}
    assert all(e.has_kernel() for e in entries.values() if not e.name.endswith(".warm_lp"))
    binomial = entries["bestfair.csr_v2_binomial"]
    ident = binomial.make(binomial.budget, "compiled")
    assert ident.backend == "compiled" and ident.problem.n_cells == 800
    assert binomial.make(binomial.budget).backend == "numpy"


class _Drifting(Identification):
    """An identification whose compiled path answers differently in one run."""

    def identify(self, seed, runs):
        result = super().identify(seed, runs)
        if self.backend == "compiled":
            result.chosen = result.chosen.copy()
            result.chosen[0] = (result.chosen[0] + 1) % self.problem.n_arms
        return result


def test_the_conformance_check_catches_a_compiled_path_that_differs():
    from causalbandits_lib.core.registry import ConformanceError, IdentifierEntry, conformance

    def make(T):
        inst = R.small()
        return _Drifting(inst.problem, "CSR-V2", T, inst.setting.tolerance)

    entry = IdentifierEntry("bestfair.drifting", make, budget=400, n_runs=2)
    with pytest.raises(ConformanceError, match="the compiled path and the numpy reference differ"):
        conformance(entry)
    honest = IdentifierEntry("bestfair.honest", R.ENTRIES[0].make_identifier, budget=400, n_runs=2)
    assert conformance(honest) == ["identified", "compiled"]
