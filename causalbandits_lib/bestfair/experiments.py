"""The chapter's experiments: the budget curves of Figures 3, 5 and 6 and replicated samples.

- :func:`budget_curves`: :func:`~.algorithms.identify` for every algorithm at every budget, one
  task of :func:`~causalbandits_lib.core.parallel.map_tasks` per budget and family of algorithms
  that solve the same LPs (:func:`lp_families`; notebooks ``bestfair/04`` and ``bestfair/05``);
  :func:`error_rates`, the per-run errors of the same;
- :func:`draw_counts`: cell counts of a fixed allocation for many independent replicates (the
  Monte Carlo check of the estimators, notebook ``bestfair/01``);
- the checks behind the chapter's claims on per-run errors (:mod:`causalbandits_lib.core.checks`
  applied to this chapter's measurements): :func:`check_lower` (a paired ordering, optionally by a
  stated margin), :func:`check_falls` (error at the largest budget below that at the smallest),
  :func:`check_mean_at_least` and :func:`combine_parts` (one claim made of several checks),
  :func:`check_at_or_below` (one algorithm at or below another, budget by budget) and
  :func:`check_csr_at_or_below_baselines` (Figure 5's statement); :func:`grid_mean_se`, each
  algorithm's per-run grid mean summarised as mean and standard error.

Run ``i`` of every algorithm at every budget draws from the same stream (``seed``, run ``i``,
:data:`~.algorithms.PULL_STREAM_PREFIX`): comparisons are paired on common random numbers, and the
standard error of a mean paired difference is that of the differences.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..core import checks
from ..core.checks import Verdict
from ..core.parallel import map_tasks
from ..core.streams import RunStreams
from .algorithms import ALGORITHMS, AlgorithmConfig, IdentificationResult, identify
from .allocation import AllocationLP
from .estimators import WeightedEstimator
from .model import FairArmsProblem

__all__ = [
    "budget_curves",
    "lp_families",
    "instance_errors",
    "many_instance_errors",
    "many_budget_curves",
    "Case",
    "first_budget_below",
    "error_rates",
    "draw_counts",
    "check_falls",
    "check_at_or_below",
    "check_csr_at_or_below_baselines",
    "mean_se",
    "grid_mean_se",
    "no_fair_arm_declarations",
]


def draw_counts(
    problem: FairArmsProblem, allocation: np.ndarray, seed: int, n_runs: int, stream: str = "bestfair/replicates"
) -> np.ndarray:
    """Cell counts of a fixed allocation for ``n_runs`` independent replicates.

    Parameters
    ----------
    allocation : int ndarray, shape (3, K)
        Pulls of each kind of each arm.

    Returns
    -------
    int ndarray, shape (n_runs, 3, K, C); replicate ``i`` draws from its own stream.
    """
    alloc = np.asarray(allocation, dtype=np.int64)
    if alloc.shape != (3, problem.n_arms) or np.any(alloc < 0):
        raise ValueError(
            f"allocation must be non-negative integers with shape (3, {problem.n_arms}); got {alloc.shape}"
        )
    gens = RunStreams(seed, range(int(n_runs)), prefix=stream + "/").generators("pulls")
    out = np.zeros((int(n_runs), 3, problem.n_arms, problem.n_cells), dtype=np.int64)
    nz = alloc > 0
    for i, g in enumerate(gens):
        out[i][nz] = g.multinomial(alloc[nz], problem.cell_probs[nz])
    return out


def error_rates(
    problem: FairArmsProblem,
    budgets: Sequence[int],
    tolerance: float,
    seed: int,
    n_runs: int,
    algorithms: Sequence[str] = ALGORITHMS,
    config: AlgorithmConfig | None = None,
    lp: AllocationLP | None = None,
) -> dict[str, np.ndarray]:
    """Per-run error indicators of each algorithm at each budget.

    Returns
    -------
    dict of algorithm to bool ndarray of shape ``(len(budgets), n_runs)``.
    """
    curves = budget_curves(problem, algorithms, budgets, tolerance, seed, n_runs, config=config, lp=lp)
    return {name: np.stack([r.error for r in results]) for name, results in curves.items()}


def budget_curves(
    problem: FairArmsProblem,
    algorithms: Sequence[str],
    budgets: Sequence[int],
    tolerance: float,
    seed: int,
    n_runs: int,
    config: AlgorithmConfig | None = None,
    lp: AllocationLP | None = None,
    estimator: WeightedEstimator | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    backend: str = "auto",
) -> dict[str, list[IdentificationResult]]:
    """:func:`identify` for every algorithm at every budget: the curves of Figures 3, 5 and 6.

    The pairs are grouped into tasks of :func:`causalbandits_lib.core.parallel.map_tasks`, one per
    budget and family of algorithms (:func:`lp_families`: the V1 and V2 variants of an algorithm
    solve the same LPs), largest budget first; a task's identifications share one LP and one
    estimator, and so their caches (a solution is never shared across budgets: the average-cost
    budget ``B = 1/√T`` is part of every LP unless ``config.budget`` fixes it). With ``jobs > 1``
    the tasks run on that many worker processes and with ``scheduler`` on a Dask cluster; in this
    process (``jobs == 1``) every task shares ``lp`` and ``estimator``. Run ``i`` draws only from
    its own stream (``seed`` and ``i``, shared by every pair), and the LP is solved without warm
    starts, so the results are identical however they are run.

    Returns
    -------
    dict of algorithm to one :class:`IdentificationResult` per budget, in budget order.
    """
    case = Case(problem, tolerance, n_runs)
    return many_budget_curves(
        [case], algorithms, budgets, seed, config, jobs, scheduler, backend, lps=[(lp, estimator)]
    )[0]


@dataclass(frozen=True)
class Case:
    """One problem of :func:`many_budget_curves`: its tolerance and its number of runs."""

    problem: FairArmsProblem
    tolerance: float
    n_runs: int


def many_budget_curves(
    cases: Sequence[Case],
    algorithms: Sequence[str],
    budgets: Sequence[int],
    seed: int,
    config: AlgorithmConfig | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    backend: str = "auto",
    lps: Sequence[tuple[AllocationLP | None, WeightedEstimator | None]] | None = None,
) -> list[dict[str, list[IdentificationResult]]]:
    """:func:`budget_curves` of several problems in one call of
    :func:`~causalbandits_lib.core.parallel.map_tasks`: the tasks of every problem side by side,
    the largest budgets first, so that worker processes stay busy to the end (one call per problem
    leaves a worker idle while the other finishes that problem's largest budget). The numbers are
    those of :func:`budget_curves` on each problem alone."""
    tasks, where = _budget_tasks(cases, algorithms, budgets, seed, config, jobs, scheduler, backend, lps)
    outcomes = _run_tasks(_identify_all, tasks, jobs, scheduler)
    done = [dict() for _ in cases]
    for c, task, o in zip(where, tasks, outcomes):
        for alg, result in zip(task["algorithms"], o.result):
            done[c][alg, task["T"]] = result
    return [{alg: [d[alg, int(T)] for T in budgets] for alg in algorithms} for d in done]


def _budget_tasks(cases, algorithms, budgets, seed, config, jobs, scheduler, backend, lps=None):
    """The tasks of :func:`many_budget_curves` (one per case, budget and family of algorithms, the
    largest budgets first) and the case of each."""
    local = jobs == 1 and not scheduler
    config = config or AlgorithmConfig() if local else config
    shared = []
    for i, case in enumerate(cases):
        lp, estimator = lps[i] if lps is not None else (None, None)
        if local:  # one LP and one estimator per problem for every pair, so their caches are shared
            lp = lp or AllocationLP(case.problem.allocation_matrices, case.problem.costs)
            estimator = estimator or WeightedEstimator(case.problem, config.log_base)
        shared.append((lp if local else None, estimator if local else None))
    order = sorted(
        ((c, b) for c in range(len(cases)) for b in range(len(budgets))), key=lambda cb: (-int(budgets[cb[1]]), cb[0])
    )
    tasks, where = [], []
    for c, b in order:
        for family in lp_families(algorithms):
            case = cases[c]
            tasks.append(
                dict(
                    problem=case.problem,
                    algorithms=family,
                    T=int(budgets[b]),
                    tolerance=case.tolerance,
                    seed=seed,
                    n_runs=case.n_runs,
                    config=config,
                    lp=shared[c][0],
                    estimator=shared[c][1],
                    backend=backend,
                )
            )
            where.append(c)
    return tasks, where


def _run_tasks(fn, tasks, jobs, scheduler):
    """:func:`~causalbandits_lib.core.parallel.map_tasks` of ``fn`` over the budget tasks; raises
    naming the first task that failed."""
    outcomes = map_tasks(fn, tasks, jobs=jobs, scheduler=scheduler, retries=1)
    for task, outcome in zip(tasks, outcomes):
        if not outcome.ok:
            raise RuntimeError(f"{', '.join(task['algorithms'])} at T={task['T']} failed: {outcome.error}")
    return outcomes


def lp_families(algorithms: Sequence[str]) -> list[tuple[str, ...]]:
    """The algorithms grouped by the LPs they solve, in the given order: CSR-V1 and CSR-V2 solve
    the same ones, and so do TS-V1 and TS-V2 (the pools differ, not the allocation rule)."""
    families: dict[str, list[str]] = {}
    for alg in algorithms:
        families.setdefault(alg.split("-")[0], []).append(alg)
    return [tuple(f) for f in families.values()]


def _identify_all(
    problem: FairArmsProblem,
    algorithms: Sequence[str],
    T: int,
    tolerance: float,
    seed: int,
    n_runs: int,
    config: AlgorithmConfig | None,
    lp: AllocationLP | None,
    estimator: WeightedEstimator | None,
    backend: str,
) -> list[IdentificationResult]:
    """One task of :func:`budget_curves`: the algorithms at budget ``T``, sharing one LP and one
    estimator (fresh ones where none is given, as in a worker process)."""
    config = config or AlgorithmConfig()
    lp = lp or AllocationLP(problem.allocation_matrices, problem.costs)
    estimator = estimator or WeightedEstimator(problem, config.log_base)
    return [
        identify(
            problem, alg, T, tolerance, seed, n_runs=n_runs, config=config, lp=lp, estimator=estimator, backend=backend
        )
        for alg in algorithms
    ]


def _result_errors(result: IdentificationResult, k_star: int) -> tuple[np.ndarray, np.ndarray | None]:
    """What :func:`many_instance_errors` keeps of one result: the per-run errors and, for a
    two-stage baseline (when the problem has a best fair arm), whether ``k*`` was no longer in ``R``
    when the screening stage ended."""
    lost = None
    if result.algorithm.startswith("TS") and k_star >= 0:
        lost = ~result.remaining[:, int((result.stage == 1).sum()), k_star]
    return result.error, lost


def _identify_errors(**task) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """One task of :func:`many_instance_errors`: :func:`_identify_all`, of whose results only
    :func:`_result_errors` is returned (a worker then sends back a few kilobytes, not every run's
    allocations and estimates of every phase)."""
    k_star = task["problem"].best_fair_arm(task["tolerance"])
    return [_result_errors(r, k_star) for r in _identify_all(**task)]


def instance_errors(
    problem: FairArmsProblem,
    algorithms: Sequence[str],
    budgets: Sequence[int],
    tolerance: float,
    seed: int,
    n_runs: int,
    config: AlgorithmConfig | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    backend: str = "auto",
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Per-run errors of every algorithm at every budget on one instance, and for the two-stage
    baselines whether ``k*`` was lost in the fairness screening.

    Returns
    -------
    errors : dict of algorithm to bool ndarray, shape ``(len(budgets), n_runs)``
        ``chosen != k*`` (a wrong "no fair arm" counts).
    lost : dict of two-stage algorithm to bool ndarray, shape ``(len(budgets), n_runs)``
        ``k*`` no longer in ``R`` when the screening stage ends.
    """
    case = Case(problem, tolerance, n_runs)
    return many_instance_errors([case], algorithms, budgets, seed, config, jobs, scheduler, backend)[0]


def many_instance_errors(
    cases: Sequence[Case],
    algorithms: Sequence[str],
    budgets: Sequence[int],
    seed: int,
    config: AlgorithmConfig | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
    backend: str = "auto",
) -> list[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:
    """:func:`instance_errors` of every case: the tasks of :func:`many_budget_curves` in one call of
    :func:`~causalbandits_lib.core.parallel.map_tasks`, each returning only the errors and the
    screening losses of its results (:func:`_identify_errors`; the same numbers as taking them from
    :func:`many_budget_curves`' results, which the tests check)."""
    tasks, where = _budget_tasks(cases, algorithms, budgets, seed, config, jobs, scheduler, backend)
    outcomes = _run_tasks(_identify_errors, tasks, jobs, scheduler)
    done: list[dict] = [dict() for _ in cases]
    for c, task, o in zip(where, tasks, outcomes):
        for alg, kept in zip(task["algorithms"], o.result):
            done[c][alg, task["T"]] = kept
    out = []
    for d in done:
        errors = {alg: np.stack([d[alg, int(T)][0] for T in budgets]) for alg in algorithms}
        lost = {
            alg: np.stack([d[alg, int(T)][1] for T in budgets])
            for alg in algorithms
            if d[alg, int(budgets[0])][1] is not None
        }
        out.append((errors, lost))
    return out


def no_fair_arm_declarations(
    problem: FairArmsProblem,
    algorithms: Sequence[str],
    budgets: Sequence[int],
    tolerance: float,
    seed: int,
    n_runs: int,
    lp: AllocationLP | None = None,
    estimator: WeightedEstimator | None = None,
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Which runs of each algorithm declare that no arm is fair, at every budget, and in which phase
    each run first certified an arm at the largest budget (Theorem 2's experiment). The algorithms
    run one after the other, each over the budgets in order (:func:`~.algorithms.identify`).

    Returns
    -------
    declared : dict of algorithm to bool ndarray, shape ``(len(budgets), n_runs)``
        ``chosen == -1``.
    first_certified : dict of algorithm to int ndarray, shape ``(n_runs,)``
        The first phase (from 1) whose certified set was not empty at the largest budget; 0: never.
    """
    declared, first_certified = {}, {}
    for name in algorithms:
        results = [
            identify(problem, name, T, tolerance, seed, n_runs=n_runs, lp=lp, estimator=estimator) for T in budgets
        ]
        declared[name] = np.stack([r.chosen == -1 for r in results])
        certified = results[-1].fair_set.any(axis=2)  # (runs, phases) at the largest budget
        first_certified[name] = np.where(certified.any(axis=1), certified.argmax(axis=1) + 1, 0)
    return declared, first_certified


def first_budget_below(budgets: Sequence[int], error: np.ndarray, level: float) -> int | None:
    """The smallest budget of the grid from which the mean error (``error``: shape
    ``(len(budgets), n_runs)``) stays below ``level``; None if it never does."""
    mean = np.asarray(error, dtype=float).mean(axis=1)
    below = mean < level
    for i in range(len(budgets)):
        if below[i:].all():
            return int(budgets[i])
    return None


# -- the checks behind the claims ----------------------------------------------------------------


def check_falls(first: np.ndarray, last: np.ndarray) -> Verdict:
    """The per-run error at the largest budget (``last``) is below that at the smallest (``first``),
    paired by run (:func:`~causalbandits_lib.core.checks.check_falls`). Zero error in every run at
    both budgets leaves nothing to fall and counts as holding (the rule stated with the claims
    before the paired test)."""
    return checks.check_falls(first, last, ("T_max", "T_min"))


def check_at_or_below(per: dict[str, np.ndarray], a: str, b: str, budgets: Sequence[int]) -> Verdict:
    """Algorithm ``a`` at or below algorithm ``b`` at every budget, on the per-run errors ``per``
    (algorithm to shape ``(len(budgets), n_runs)``), paired by run: strictly below by 2 standard
    errors of the paired differences holds, above is contradicted, a difference within noise is
    inconclusive, and so is equality in every run ("at" the baseline, not below it). The budgets
    are combined by :func:`~causalbandits_lib.core.checks.check_parts`."""

    def at(i):
        if np.array_equal(per[a][i], per[b][i]):
            return checks.not_testable(f"{a} and {b} equal in every run: at the baseline, not below it (inconclusive)")
        return checks.check_paired_lower(per[a][i], per[b][i], (a, b))

    parts = {f"T={T}": at(i) for i, T in enumerate(budgets)}
    return checks.check_parts(
        parts, f"{a} < {b} by 2 se of the paired differences, budget by budget (equal in every run: inconclusive)"
    )


def check_csr_at_or_below_baselines(per: dict[str, np.ndarray], budgets: Sequence[int]) -> Verdict:
    """CSR-V1 and CSR-V2 each at or below both two-stage baselines (:func:`check_at_or_below` for
    the four pairs), combined by :func:`~causalbandits_lib.core.checks.check_parts`."""
    return checks.check_parts(
        {f"{a} ≤ {b}": check_at_or_below(per, a, b, budgets) for a in ("CSR-V1", "CSR-V2") for b in ("TS-V1", "TS-V2")},
        "every CSR algorithm at or below every baseline, each judged budget by budget",
    )


def mean_se(samples: np.ndarray) -> dict[str, float]:
    """The mean and standard error of ``samples`` (:func:`~causalbandits_lib.core.checks.mean_se`)
    as ``{"mean": ..., "se": ...}``, the form a claim's ``measured`` shows."""
    return dict(zip(("mean", "se"), checks.mean_se(samples)))


def grid_mean_se(per: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    """Each algorithm's per-run mean error over the budget grid (``per``: algorithm to shape
    ``(len(budgets), n_runs)``) as :func:`mean_se` over the runs."""
    return {alg: mean_se(err.mean(axis=0)) for alg, err in per.items()}
