"""Best fair intervention: the four identification algorithms, all runs at once against one run at a time.

These are fixed-budget algorithms, not round-based bandits, so each case times itself
(``run(repeat)``, called by :func:`benchmarks.harness.run_case`) and reports the same columns:
``T`` is the budget of pulls, a step is one pull of one run, and the per-run results of
:func:`identify` and :func:`identify_loop` must be identical. Both start from a cold LP cache;
the loop shares its cache across its runs, as the vectorised version does. The ``warm_lp`` cases
share one pre-filled LP cache, so they time the simulation alone (the LP solves dominate otherwise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from causalbandits_lib.bestfair import AllocationLP, WeightedEstimator, identify, identify_loop
from causalbandits_lib.bestfair.synthetic import synthetic_instance

from .harness import _time, timing_row


@dataclass
class IdentificationCase:
    name: str
    setting: str
    algorithm: str
    T: int
    runs: tuple = (1, 10, 100)
    seed: int = 0
    target_ratio: float | None = None
    #: share one LP whose cache a first execution has filled: times the simulation without the LP
    warm_lp: bool = False

    def run(self, repeat: int = 3) -> list[dict]:
        inst = synthetic_instance(self.setting, np.random.default_rng(self.seed))
        problem, tol = inst.problem, inst.setting.tolerance

        shared = AllocationLP(problem.allocation_matrices, problem.costs)
        if self.warm_lp:
            identify(problem, self.algorithm, self.T, tol, self.seed, n_runs=max(self.runs), lp=shared)

        def lp():
            return shared if self.warm_lp else AllocationLP(problem.allocation_matrices, problem.costs)

        def vectorised(n):
            return identify(
                problem, self.algorithm, self.T, tol, self.seed, n_runs=n, lp=lp(), estimator=WeightedEstimator(problem)
            )

        def loop(n):
            return identify_loop(
                problem, self.algorithm, self.T, tol, self.seed, n, lp=lp(), estimator=WeightedEstimator(problem)
            )

        rows = []
        for n in self.runs:
            t_vec, vec = _time(lambda: vectorised(n), repeat)
            t_loop, ref = _time(lambda: loop(n), 1 if n > 10 else repeat)
            if not vec.equals(ref):
                raise AssertionError(f"{self.name}: vectorised and looped runs differ at n_runs={n}")
            rows.append(timing_row(self.name, n, self.T, t_vec, t_loop))
        return rows


CASES = [
    IdentificationCase("bestfair.csr_v2_loose", "loose", "CSR-V2", T=5000),
    IdentificationCase("bestfair.ts_v1_loose", "loose", "TS-V1", T=5000),
    IdentificationCase("bestfair.csr_v2_loose.warm_lp", "loose", "CSR-V2", T=5000, warm_lp=True),
    IdentificationCase("bestfair.ts_v1_loose.warm_lp", "loose", "TS-V1", T=5000, warm_lp=True),
]
