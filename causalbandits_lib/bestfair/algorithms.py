"""CSR-V1, CSR-V2 (Alg. 1 and 2) and the two-stage baselines (Alg. 4 and 5), vectorised over runs.

All four are phase-based: in phase ``l`` they solve ALLOCATE once for each distinct remaining set,
pull, estimate every arm's outcome and both fairness gaps with the clipped estimators at
``ε = 2^{-(l-1)}``, and eliminate arms. The state of every independent run (its remaining set, its
sample pool as cell counts, its answer) is an array with a leading runs axis; only the multinomial
draws of a phase loop over runs, each from the run's own generator
(:class:`~causalbandits_lib.core.streams.RunStreams`), so run ``i``'s result does not depend on which
other runs are simulated with it. The stream of run ``i`` is the same for every algorithm and budget
(:data:`PULL_STREAM_PREFIX`): comparisons are on common random numbers, paired by run.
:func:`identify_loop` is the reference that simulates one run at
a time; the notebook, the conformance test and the benchmark check that it agrees with
:func:`identify` bit for bit.

Backends (:data:`BACKENDS`): the readable path keeps every run's pool as cell counts and evaluates
:meth:`~.estimators.WeightedEstimator.estimate`; the compiled path (:mod:`.kernels`, the default
``"auto"`` where it reproduces the readable one) keeps counts at the reward cells only and
evaluates the same sums in numba, bit for bit. Both draw the same multinomials and solve the same
LPs (once per distinct remaining set and phase, whatever the number of runs that share it); the
tests and the registry's conformance check compare them.

:class:`Identification` is one algorithm on one problem with a budget of ``T`` pulls, in the shape
of the core's :class:`~causalbandits_lib.core.protocols.Identifier` protocol (``identify(seed,
runs)``); :func:`identify` builds one and runs it. The chapter's registry
(:mod:`.registry`) registers identifications for the conformance test and the benchmark.

Reconstructed or unstated details (notes §3 and §8), each a field of :class:`AlgorithmConfig`:

- ``n(T) = ⌈log2(10 √T)⌉`` phases and ``τ(l) = T / (l · loḡ n(T))`` pulls in phase ``l`` (A1, A2);
- the clip level ``2 log(2/ε) M_kj`` with a base-2 logarithm (A5);
- CSR's elimination rule (Eq. 35/36 margins ``5/2^l`` and ``3/2^l``; A3); when no arm is certified
  fair the phase eliminates nothing (the paper's "go to next phase", A4);
- after the last phase CSR returns the best estimate in the last certified-fair set ``F``, or
  "no fair arm" (:data:`NO_FAIR_ARM`) if ``F`` is empty (A4); the two-stage baseline returns the
  best estimate among the survivors;
- the average-cost budget is ``B = 1/√T`` with the cheap arm free (§5), for both stages of the
  baseline, each of which gets half of the ``T`` pulls;
- ``Ŷ`` uses only natural pulls and ``ζ̂`` only the forced-``S`` pulls (A8); V2 pools all pulls
  so far (within a stage for the baseline) but clips with the current phase's ``ε``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from ..core.runner import BACKENDS, note_work
from ..core.streams import RunStreams, run_indices
from .allocation import (
    ALL_BLOCKS,
    FAIRNESS_BLOCKS,
    OUTCOME_BLOCK,
    PHASE_RULES,
    AllocationLP,
    n_phases,
    phase_budgets,
    round_allocations,
)
from .estimators import ESTIMATES, WeightedEstimator
from .model import FairArmsProblem

__all__ = [
    "ALGORITHMS",
    "ALLOCATION_RULES",
    "BACKENDS",
    "NO_FAIR_ARM",
    "PULL_STREAM_PREFIX",
    "AlgorithmConfig",
    "IdentificationResult",
    "Identification",
    "identify",
    "identify_loop",
    "resolve_backend",
]

#: The four algorithms of the paper's figures (red, green, blue, purple).
ALGORITHMS = ("CSR-V1", "CSR-V2", "TS-V1", "TS-V2")

#: How a phase's pulls are allocated (see :class:`AlgorithmConfig`).
ALLOCATION_RULES = ("maxmin", "split")

#: The answer "no fair arm exists".
NO_FAIR_ARM = -1
_UNDECIDED = -2

#: Prefix of the pull streams: run ``i`` draws its multinomial pulls from stream ``bestfair/pulls`` of
#: run ``i`` whatever the algorithm and budget, so runs are paired across algorithms and budgets (the
#: first phase of CSR-V1 and CSR-V2 draws the very same pulls; later phases share the stream's state
#: only as far as their allocations agree).
PULL_STREAM_PREFIX = "bestfair/"


@dataclass(frozen=True)
class AlgorithmConfig:
    """The choices the paper leaves open, with the defaults of the implementation notes.

    Attributes
    ----------
    phase_rule : str
        Reading of ``n(T)`` (see :func:`~.allocation.n_phases`).
    log_base : float
        Base of the logarithm in the clip level ``2 log(2/ε)``.
    reward_margin, fairness_margin : float
        Eliminate ``k`` if ``Ŷ_H > Ŷ_k + reward_margin/2^l``; certify or reject fairness with
        ``fairness_margin/2^l`` (the paper's 5 and 3).
    budget : float or None
        The average-cost budget ``B``; None means ``1/√T`` (the paper's §5 rule).
    stage_split : float
        Fraction of ``T`` the two-stage baseline spends on fairness screening (the paper: half).
    allocation : {"maxmin", "split"}
        ``"maxmin"``: the paper's ALLOCATE, one max-min LP over every kind of pull the algorithm
        uses. ``"split"`` (our variant, not the paper's): the phase's pulls are split equally between
        the kinds of pull used, and each share is allocated by the single-block max-min LP; it keeps
        one badly conditioned block (a huge ``D``) from starving the others.

    ``allocation``, ``phase_rule`` and ``log_base`` are also the names of the notebooks' parameters
    (``notebooks/bestfair/parameters.yml``). ``budget`` is the average *cost* budget ``B``; the
    number of pulls ``T`` (the paper's "budget" on its figures' x axes) is not a configuration.

    Raises
    ------
    ValueError
        Naming the field, its value and what is allowed.
    """

    phase_rule: str = "log2_10sqrtT"
    log_base: float = 2.0
    reward_margin: float = 5.0
    fairness_margin: float = 3.0
    budget: float | None = None
    stage_split: float = 0.5
    allocation: str = "maxmin"

    def __post_init__(self):
        if self.phase_rule not in PHASE_RULES:
            raise ValueError(f"phase_rule={self.phase_rule!r}; allowed are {PHASE_RULES}")
        if not self.log_base > 1:
            raise ValueError(f"log_base={self.log_base!r} must be > 1")
        for name in ("reward_margin", "fairness_margin"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name}={getattr(self, name)!r} must be positive")
        if self.budget is not None and not self.budget >= 0:
            raise ValueError(f"budget={self.budget!r} must be >= 0 or None")
        if not 0 < self.stage_split < 1:
            raise ValueError(f"stage_split={self.stage_split!r} must be in (0, 1)")
        if self.allocation not in ALLOCATION_RULES:
            raise ValueError(f"allocation={self.allocation!r}; allowed are {ALLOCATION_RULES}")

    def budget_for(self, T: int) -> float:
        """``B`` for a total of ``T`` pulls."""
        return 1.0 / math.sqrt(T) if self.budget is None else float(self.budget)


@dataclass
class IdentificationResult:
    """What one algorithm did in each of ``n`` runs.

    Attributes
    ----------
    chosen : int ndarray, shape (n,)
        The returned arm, or :data:`NO_FAIR_ARM`.
    best_arm : int
        The true best fair arm ``k*`` (``-1`` if none); ``error = chosen != best_arm``.
    remaining : bool ndarray, shape (n, P + 1, K)
        The remaining set ``R`` before phase 1 and after each of the ``P`` phases.
    fair_set : bool ndarray, shape (n, P, K)
        CSR's certified-fair set ``F(l)`` (empty for the two-stage baseline and after a run ended).
    allocation : int ndarray, shape (n, P, 3, K)
        Pulls of each kind of each arm in each phase.
    estimates : float ndarray, shape (n, P, 3, K)
        ``Ŷ, ζ̂^{s,s'}, ζ̂^{s',s}`` computed in each phase (NaN where not computed).
    stage : int ndarray, shape (P,)
        1 for every CSR phase; 1 (fairness screening) or 2 (SRIS) for the two-stage baseline.
    finished : int ndarray, shape (n,)
        The phase after which a run had a single arm left (0 if it ran to the end).

    Results of the same identification compare bit for bit (:meth:`equals`), stack when their runs
    are disjoint (:meth:`concatenate`) and restrict to some runs (:meth:`select_runs`).
    """

    algorithm: str
    T: int
    tolerance: float
    seed: int
    runs: np.ndarray
    chosen: np.ndarray
    best_arm: int
    remaining: np.ndarray
    fair_set: np.ndarray
    allocation: np.ndarray
    estimates: np.ndarray
    stage: np.ndarray
    finished: np.ndarray
    info: dict[str, Any] = field(default_factory=dict)

    ARRAYS = ("runs", "chosen", "remaining", "fair_set", "allocation", "estimates", "finished")

    @property
    def error(self) -> np.ndarray:
        """Per-run error indicator ``chosen != k*`` (a wrong "no fair arm" counts), shape ``(n,)``."""
        return self.chosen != self.best_arm

    @property
    def error_rate(self) -> float:
        return float(self.error.mean())

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    def equals(self, other: "IdentificationResult") -> bool:
        """Bit-for-bit equality of every per-run array (NaN equal to NaN)."""
        return all(
            np.array_equal(getattr(self, a), getattr(other, a), equal_nan=getattr(self, a).dtype.kind == "f")
            for a in self.ARRAYS
        )

    @staticmethod
    def concatenate(results: Sequence["IdentificationResult"]) -> "IdentificationResult":
        """The results of disjoint runs of the same algorithm, problem and budget stacked in the given
        order (the LP solves they report are summed; the backend is kept if they share it)."""
        first = results[0]
        arrays = {a: np.concatenate([getattr(r, a) for r in results]) for a in IdentificationResult.ARRAYS}
        info: dict[str, Any] = {"lp_solves": sum(r.info.get("lp_solves", 0) for r in results)}
        backends = {r.info.get("backend") for r in results}
        if len(backends) == 1 and None not in backends:
            info["backend"] = backends.pop()
        return IdentificationResult(
            algorithm=first.algorithm,
            T=first.T,
            tolerance=first.tolerance,
            seed=first.seed,
            best_arm=first.best_arm,
            stage=first.stage,
            info=info,
            **arrays,
        )

    def select_runs(self, rows: Sequence[int]) -> "IdentificationResult":
        """The result restricted to the given rows (positions along the runs axis, in that order)."""
        rows = np.asarray(rows, dtype=np.int64)
        return replace(self, info=dict(self.info), **{a: getattr(self, a)[rows] for a in self.ARRAYS})


def _distinct_rows(masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a boolean matrix and, for each row, the index of its distinct row (the
    order of the distinct rows is immaterial: each is solved cold). Up to 62 columns a row is read
    as the bits of an integer, which is quicker than ``np.unique(..., axis=0)``."""
    if masks.shape[1] > 62:
        uniq, inverse = np.unique(masks, axis=0, return_inverse=True)
        return uniq, inverse.ravel()
    codes = masks @ (np.int64(1) << np.arange(masks.shape[1], dtype=np.int64))
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    return masks[first], inverse.ravel()


class _CellCounts:
    """The readable sample pool: every run's cell counts ``(n, 3, K, C)`` of every kind of pull of
    every arm, evaluated by :meth:`WeightedEstimator.estimate` (the reference of the compiled
    :class:`~.kernels.RewardCounts`)."""

    def __init__(self, n_runs: int, estimator: WeightedEstimator):
        p = estimator.problem
        self.est = estimator
        self.shape = (int(n_runs), 3, p.n_arms, p.n_cells)
        self.counts = np.zeros(self.shape, dtype=np.int64)

    def clear(self) -> None:
        self.counts = np.zeros(self.shape, dtype=np.int64)

    def add(self, alloc: np.ndarray, draws, cumulative: bool) -> None:
        counts = np.zeros(self.shape, dtype=np.int64)  # fresh zero pages: cheaper than a copy
        for i, rows, drawn in draws:
            counts[i].reshape(-1, self.shape[3])[rows] = drawn
        self.counts = self.counts + counts if cumulative else counts

    def estimates(self, phase: int, which: tuple[str, ...], active: np.ndarray) -> list[np.ndarray]:
        return [self.est.estimate(self.counts, phase, w) for w in which]


class _Runs:
    """Shared machinery of one algorithm execution: pulls, allocation, estimates, histories."""

    def __init__(self, problem, algorithm, T, tolerance, seed, runs, config, lp, estimator, n_total_phases, compiled):
        self.problem = problem
        self.config = config
        self.tolerance = tolerance
        self.lp = lp
        self.n = len(runs)
        K, C = problem.n_arms, problem.n_cells
        self.K = K
        # One stream per run shared by every algorithm and budget (common random numbers): run ``i``
        # of two algorithms, or of one algorithm at two budgets, draws the same random numbers.
        streams = RunStreams(seed, runs, prefix=PULL_STREAM_PREFIX)
        self.gens = streams.generators("pulls")
        self.budget = config.budget_for(T)
        self.probs = problem.cell_probs.reshape(3 * K, C)
        if compiled:
            from .kernels import RewardCounts

            self.samples = RewardCounts(self.n, estimator)
        else:
            self.samples = _CellCounts(self.n, estimator)
        P = n_total_phases
        self.remaining = np.zeros((self.n, P + 1, K), dtype=bool)
        self.fair_set = np.zeros((self.n, P, K), dtype=bool)
        self.allocation = np.zeros((self.n, P, 3, K), dtype=np.int64)
        self.estimates = np.full((self.n, P, 3, K), np.nan)
        self.chosen = np.full(self.n, _UNDECIDED, dtype=np.int64)
        self.finished = np.zeros(self.n, dtype=np.int64)
        self.solves_before = lp.solves

    def allocate(self, R: np.ndarray, active: np.ndarray, pulls: int, blocks) -> tuple[np.ndarray, list]:
        """Pulls of each kind of each arm for every run (zero for a run that has stopped), and the
        draws to make: one ``(runs, rows)`` per distinct remaining set among the active runs, with
        ``rows`` the flat ``(kind, arm)`` indices of its non-zero pulls. The LP is solved (or
        looked up) once per distinct remaining set."""
        alloc = np.zeros((self.n, 3, self.K), dtype=np.int64)
        idx = np.flatnonzero(active)
        if len(idx) == 0:
            return alloc, []
        uniq, inverse = _distinct_rows(R[idx])
        per = round_allocations(np.stack([self.fractions(mask, blocks) for mask in uniq]), pulls)
        alloc[idx] = per[inverse]
        members = np.split(idx[np.argsort(inverse, kind="stable")], np.cumsum(np.bincount(inverse))[:-1])
        groups = [(runs, np.flatnonzero(per[u])) for u, runs in enumerate(members)]
        return alloc, groups

    def fractions(self, mask: np.ndarray, blocks) -> np.ndarray:
        if self.config.allocation == "maxmin" or sum(blocks) == 1:
            return self.lp.fractions(mask, self.budget, blocks)
        parts = [self.lp.fractions(mask, self.budget, tuple(b == c for c in range(3))) for b in range(3) if blocks[b]]
        return sum(parts) / len(parts)

    def pull(self, alloc: np.ndarray, groups: list, cumulative: bool) -> None:
        """Draw every active run's pulls from its own generator and add them to the sample pools
        (or replace the pools: V1). Run ``i`` draws ``multinomial(n, p)``, ``n`` its non-zero pulls
        in flat ``(kind, arm)`` order and ``p`` those rows of the cell probabilities; the runs of a
        group share ``n`` and ``p``."""
        flat = alloc.reshape(self.n, -1)
        draws = []
        for runs, rows in groups:
            n, pvals = flat[runs[0], rows], self.probs[rows]
            draws.extend((i, rows, self.gens[i].multinomial(n, pvals)) for i in runs)
        self.samples.add(alloc, draws, cumulative)

    def estimate(self, phase: int, which: tuple[str, ...], active: np.ndarray) -> list[np.ndarray]:
        """The estimates ``which`` for every run from its pool (values of runs that are not active
        are never used)."""
        return self.samples.estimates(phase, which, active)

    def unfair(self, z: np.ndarray, zr: np.ndarray, phase: int) -> np.ndarray:
        m, tol = self.config.fairness_margin / 2.0**phase, self.tolerance
        return (z - m > tol) | (z + m < -tol) | (zr - m > tol) | (zr + m < -tol)

    def certified_fair(self, z: np.ndarray, zr: np.ndarray, phase: int) -> np.ndarray:
        m, tol = self.config.fairness_margin / 2.0**phase, self.tolerance
        return (z + m < tol) & (z - m > -tol) & (zr + m < tol) & (zr - m > -tol)

    def result(self, algorithm, T, seed, runs, stage, backend) -> IdentificationResult:
        return IdentificationResult(
            algorithm=algorithm,
            T=int(T),
            tolerance=float(self.tolerance),
            seed=int(seed),
            runs=np.asarray(runs, dtype=np.int64),
            chosen=self.chosen,
            best_arm=self.problem.best_fair_arm(self.tolerance),
            remaining=self.remaining,
            fair_set=self.fair_set,
            allocation=self.allocation,
            estimates=self.estimates,
            stage=np.asarray(stage, dtype=np.int64),
            finished=self.finished,
            info={"lp_solves": self.lp.solves - self.solves_before, "budget": self.budget, "backend": backend},
        )


def _csr(problem, T, tolerance, seed, runs, config, cumulative, algorithm, lp, est, backend) -> IdentificationResult:
    P = n_phases(T, config.phase_rule)
    taus = phase_budgets(T, P)
    s = _Runs(problem, algorithm, T, tolerance, seed, runs, config, lp, est, P, backend == "compiled")
    n, K = s.n, s.K
    R = np.ones((n, K), dtype=bool)
    active = np.ones(n, dtype=bool)
    last_F = np.zeros((n, K), dtype=bool)
    last_Y = np.full((n, K), np.nan)
    s.remaining[:, 0] = R
    for phase in range(1, P + 1):
        if active.any():
            alloc, groups = s.allocate(R, active, int(taus[phase - 1]), ALL_BLOCKS)
            s.pull(alloc, groups, cumulative)
            Yh, z, zr = s.estimate(phase, ESTIMATES, active)
            F = R & s.certified_fair(z, zr, phase)
            with np.errstate(invalid="ignore"):
                YH = np.where(F, Yh, -np.inf).max(axis=1)
                elim = (YH[:, None] > Yh + config.reward_margin / 2.0**phase) | s.unfair(z, zr, phase)
            update = active & F.any(axis=1)
            R = np.where(update[:, None], R & ~elim, R)
            act = active[:, None]
            last_F = np.where(act, F, last_F)
            last_Y = np.where(act, Yh, last_Y)
            s.allocation[:, phase - 1] = alloc
            s.fair_set[:, phase - 1] = F & act
            s.estimates[:, phase - 1] = np.where(act[:, None, :], np.stack([Yh, z, zr], axis=1), np.nan)
            single = active & (R.sum(axis=1) == 1)
            s.chosen[single] = np.argmax(R[single], axis=1)
            s.finished[single] = phase
            active = active & ~single
        s.remaining[:, phase] = R
    undecided = s.chosen == _UNDECIDED
    has_F = last_F.any(axis=1)
    best_in_F = np.argmax(np.where(last_F, np.nan_to_num(last_Y, nan=-np.inf), -np.inf), axis=1)
    s.chosen[undecided & has_F] = best_in_F[undecided & has_F]
    s.chosen[undecided & ~has_F] = NO_FAIR_ARM
    return s.result(algorithm, T, seed, runs, np.ones(P), backend)


def _two_stage(
    problem, T, tolerance, seed, runs, config, cumulative, algorithm, lp, est, backend
) -> IdentificationResult:
    T1 = int(round(T * config.stage_split))
    T2 = int(T) - T1
    P1, P2 = n_phases(T1, config.phase_rule), n_phases(T2, config.phase_rule)
    taus1, taus2 = phase_budgets(T1, P1), phase_budgets(T2, P2)
    s = _Runs(problem, algorithm, T, tolerance, seed, runs, config, lp, est, P1 + P2, backend == "compiled")
    n, K = s.n, s.K
    R = np.ones((n, K), dtype=bool)
    s.remaining[:, 0] = R
    # Stage 1: fairness screening; a run stops screening once one arm is left (Alg. 4, "break").
    for phase in range(1, P1 + 1):
        active = (R.sum(axis=1) > 1) & (s.chosen == _UNDECIDED)
        if active.any():
            alloc, groups = s.allocate(R, active, int(taus1[phase - 1]), FAIRNESS_BLOCKS)
            s.pull(alloc, groups, cumulative)
            z, zr = s.estimate(phase, ("fairness", "fairness_reverse"), active)
            with np.errstate(invalid="ignore"):
                R = np.where(active[:, None], R & ~s.unfair(z, zr, phase), R)
            act = active[:, None]
            s.allocation[:, phase - 1] = alloc
            s.estimates[:, phase - 1, 1:] = np.where(act[:, None, :], np.stack([z, zr], axis=1), np.nan)
            empty = active & ~R.any(axis=1)
            s.chosen[empty] = NO_FAIR_ARM
            s.finished[empty] = phase
        s.remaining[:, phase] = R
    # Stage 2: successive rejects with importance sampling (Sen et al. 2017) on the survivors.
    s.samples.clear()
    last_Y = np.full((n, K), np.nan)
    active = s.chosen == _UNDECIDED
    for phase in range(1, P2 + 1):
        single = active & (R.sum(axis=1) == 1)
        s.chosen[single] = np.argmax(R[single], axis=1)
        s.finished[single] = P1 + phase - 1
        active = active & ~single
        if active.any():
            alloc, groups = s.allocate(R, active, int(taus2[phase - 1]), OUTCOME_BLOCK)
            s.pull(alloc, groups, cumulative)
            (Yh,) = s.estimate(phase, ("outcome",), active)
            with np.errstate(invalid="ignore"):
                YH = np.where(R, Yh, -np.inf).max(axis=1)
                elim = YH[:, None] > Yh + config.reward_margin / 2.0**phase
            R = np.where(active[:, None], R & ~elim, R)
            act = active[:, None]
            last_Y = np.where(act, Yh, last_Y)
            s.allocation[:, P1 + phase - 1] = alloc
            s.estimates[:, P1 + phase - 1, 0] = np.where(act, Yh, np.nan)
        s.remaining[:, P1 + phase] = R
    undecided = s.chosen == _UNDECIDED
    single = undecided & (R.sum(axis=1) == 1)
    s.finished[single] = P1 + P2
    best = np.argmax(np.where(R, np.nan_to_num(last_Y, nan=-np.inf), -np.inf), axis=1)
    s.chosen[undecided] = best[undecided]
    return s.result(algorithm, T, seed, runs, np.r_[np.ones(P1), 2 * np.ones(P2)], backend)


def resolve_backend(backend: str) -> str:
    """``"numpy"`` or ``"compiled"``: what ``backend`` (one of :data:`BACKENDS`) runs here.

    Raises
    ------
    ValueError
        If ``backend`` is not one of :data:`BACKENDS`, or is ``"compiled"`` where the kernels do not
        reproduce the readable estimators (:func:`.kernels.reproduces`).
    """
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; allowed are {BACKENDS}")
    if backend == "numpy":
        return "numpy"
    from .kernels import reproduces

    if reproduces():
        return "compiled"
    if backend == "compiled":
        raise ValueError("backend='compiled' is not available: the kernels do not reproduce the numpy estimators here")
    return "numpy"


@dataclass(frozen=True)
class Identification:
    """One of :data:`ALGORITHMS` on one problem with a budget of ``T`` pulls: an
    :class:`~causalbandits_lib.core.protocols.Identifier`.

    Attributes
    ----------
    problem : FairArmsProblem
    algorithm : {"CSR-V1", "CSR-V2", "TS-V1", "TS-V2"}
    T : int
        Total number of pulls (the paper's "budget" on the x axis of its figures).
    tolerance : float
        The fairness tolerance ``𝓔``.
    config : AlgorithmConfig, optional
        Default: ``AlgorithmConfig()``.
    lp : AllocationLP, optional
        Pass one to share its cache of LP solutions with other identifications (it must belong to
        ``problem``); default: a fresh one, shared by every :meth:`identify` of this object.
    estimator : WeightedEstimator, optional
        Pass one to share its cached weights (its ``log_base`` must match ``config``); default: a
        fresh one.
    backend : {"auto", "numpy", "compiled"}
        How the sample pools and the estimators are evaluated (:data:`BACKENDS`): ``"numpy"`` the
        readable path (cell counts and :meth:`WeightedEstimator.estimate`), ``"compiled"`` the
        kernels of :mod:`.kernels` (identical results), ``"auto"`` the kernels where they
        reproduce the readable estimators (:func:`.kernels.reproduces`), else numpy. The result's
        ``info["backend"]`` says which ran.

    Raises
    ------
    ValueError
        Naming the argument that is not allowed.
    """

    problem: FairArmsProblem
    algorithm: str
    T: int
    tolerance: float
    config: AlgorithmConfig | None = None
    lp: AllocationLP | None = None
    estimator: WeightedEstimator | None = None
    backend: str = "auto"

    def __post_init__(self):
        if self.algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm={self.algorithm!r}; allowed are {ALGORITHMS}")
        if int(self.T) != self.T or self.T < 16:
            raise ValueError(f"T={self.T!r} must be an integer >= 16")
        if not self.tolerance > 0:
            raise ValueError(f"tolerance={self.tolerance!r} must be positive")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend={self.backend!r}; allowed are {BACKENDS}")
        problem = self.problem
        config = self.config or AlgorithmConfig()
        lp = self.lp
        if lp is None:
            lp = AllocationLP(problem.allocation_matrices, problem.costs)
        elif lp.K != problem.n_arms or not np.array_equal(lp.W, problem.allocation_matrices):
            raise ValueError("the AllocationLP given belongs to another problem")
        estimator = self.estimator
        if estimator is None:
            estimator = WeightedEstimator(problem, config.log_base)
        elif estimator.problem is not problem or estimator.log_base != config.log_base:
            raise ValueError("the WeightedEstimator given belongs to another problem or log base")
        for name, value in (("T", int(self.T)), ("tolerance", float(self.tolerance)), ("config", config)):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "lp", lp)
        object.__setattr__(self, "estimator", estimator)

    def with_backend(self, backend: str) -> "Identification | None":
        """The same identification on ``backend`` (one of :data:`BACKENDS`), sharing the LP and
        the estimator; None for ``"compiled"`` where the kernels do not reproduce the numpy path
        (the registry's conformance check compares the two paths through it)."""
        if backend == "compiled" and resolve_backend("auto") != "compiled":
            return None
        return replace(self, backend=backend)

    def identify(self, seed: int, runs: Sequence[int]) -> IdentificationResult:
        """Run the runs ``runs`` (global indices) from root seed ``seed``; run ``i`` draws from stream
        ``bestfair/pulls`` of run ``i`` only (the same stream for every algorithm and budget)."""
        runs = run_indices(None, runs)
        cumulative = self.algorithm.endswith("V2")
        run = _csr if self.algorithm.startswith("CSR") else _two_stage
        backend = resolve_backend(self.backend)
        started = time.perf_counter()
        result = run(
            self.problem,
            self.T,
            self.tolerance,
            int(seed),
            runs,
            self.config,
            cumulative,
            self.algorithm,
            self.lp,
            self.estimator,
            backend,
        )
        # the records' work ledger (timings.simulations): a budget of T pulls counts as T rounds
        note_work(
            type(self.problem).__name__, self.algorithm, backend, len(runs), self.T, time.perf_counter() - started
        )
        return result


def identify(
    problem: FairArmsProblem,
    algorithm: str,
    T: int,
    tolerance: float,
    seed: int,
    n_runs: int | None = None,
    runs: Sequence[int] | None = None,
    config: AlgorithmConfig | None = None,
    lp: AllocationLP | None = None,
    estimator: WeightedEstimator | None = None,
    backend: str = "auto",
) -> IdentificationResult:
    """Run one of :data:`ALGORITHMS` with a budget of ``T`` pulls, all runs at once.

    Parameters
    ----------
    problem : FairArmsProblem
    algorithm : {"CSR-V1", "CSR-V2", "TS-V1", "TS-V2"}
    T : int
        Total number of pulls (the paper's "budget" on the x axis of its figures).
    tolerance : float
        The fairness tolerance ``𝓔``.
    seed : int
        Root seed; run ``i`` draws from stream ``bestfair/pulls`` of run ``i``, the same for every
        algorithm and budget, so results of run ``i`` are paired across them.
    n_runs, runs
        Either the number of runs (indices ``0..n_runs-1``) or explicit run indices.
    config : AlgorithmConfig, optional
    lp : AllocationLP, optional
        Pass one to share its cache of LP solutions across calls (it must belong to ``problem``).
    estimator : WeightedEstimator, optional
        Pass one to share its cached weights (its ``log_base`` must match ``config``).
    backend : {"auto", "numpy", "compiled"}
        See :class:`Identification`.
    """
    identification = Identification(problem, algorithm, T, tolerance, config, lp, estimator, backend)
    return identification.identify(seed, run_indices(n_runs, runs))


def identify_loop(
    problem: FairArmsProblem,
    algorithm: str,
    T: int,
    tolerance: float,
    seed: int,
    n_runs: int,
    config: AlgorithmConfig | None = None,
    lp: AllocationLP | None = None,
    estimator: WeightedEstimator | None = None,
    backend: str = "auto",
) -> IdentificationResult:
    """Reference: the same algorithm one run at a time (identical to :func:`identify`, run for run);
    the runs share one LP and one estimator, and so their caches."""
    identification = Identification(problem, algorithm, T, tolerance, config, lp, estimator, backend)
    return IdentificationResult.concatenate([identification.identify(seed, [i]) for i in range(int(n_runs))])
