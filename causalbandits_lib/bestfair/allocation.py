"""The phase schedule and the max-min budget allocation (ALLOCATE, Alg. 3 / Alg. 6).

In every phase the algorithms choose fractions ``ν_Y, ν_s, ν_{s'} ∈ R^K_{≥0}`` of the phase's pulls
for each arm and kind of pull by the linear program

``v*(B, R) = max_ν  min_{k ∈ R} min([A ν_Y]_k, [B ν_s]_k, [C ν_{s'}]_k)``
``s.t.  Σ_i c_i ν_{Y,i} + a_i ν_{s,i} + b_i ν_{s',i} ≤ B,   Σ_i ν_{Y,i} + ν_{s,i} + ν_{s',i} = 1``

with ``A = 1/M``, ``B = 1/D^{s',s}``, ``C = 1/D^{s,s'}`` (entrywise reciprocals;
:attr:`FairArmsProblem.allocation_matrices`). By Lemma 8 it maximises the smallest effective sample
fraction ``Z_k/τ`` or ``O_k/τ`` over the remaining arms. A kind of pull that an algorithm does not
use (the ``Y`` block in stage 1 of the two-stage baseline, the fairness blocks in its stage 2) is
fixed to zero and dropped from the ``min``.

The LP is solved by HiGHS (``highspy``, the solver cvxpy itself installs): one model per
:class:`AllocationLP` holds a row for every (kind of pull, arm); a solve only changes which rows
and columns are active and the budget, and starts cold, so its answer does not depend on earlier
solves. :func:`linprog_allocation` states the same LP through ``scipy.optimize.linprog`` (the
readable reference), and ``solver="CLARABEL"`` solves it with cvxpy as a cross-check. Each
distinct ``(blocks, B, R)`` costs one solve and is cached: every run, algorithm and budget that
shares an :class:`AllocationLP` shares its solutions (:func:`~.experiments.budget_curves` shares
one wherever a solution can recur: the same ``B``, i.e. the same budget ``T``). The optimal value
is unique; the optimal fractions need not be, and an interior-point solver (CLARABEL) may return
a point inside an optimal face where the simplex method returns a vertex: the integer rounding of
the pulls follows whichever it gets (the book's records use HiGHS).
"""

from __future__ import annotations

import math
from typing import Sequence

import highspy
import numpy as np
from scipy.sparse import csc_matrix

__all__ = [
    "PHASE_RULES",
    "n_phases",
    "harmonic",
    "phase_budgets",
    "round_allocation",
    "round_allocations",
    "AllocationLP",
    "linprog_allocation",
    "ALL_BLOCKS",
    "FAIRNESS_BLOCKS",
    "OUTCOME_BLOCK",
]

#: Kinds of pull an allocation may use, in POOLS order (natural, S=s, S=s').
ALL_BLOCKS = (True, True, True)
FAIRNESS_BLOCKS = (False, True, True)
OUTCOME_BLOCK = (True, False, False)

#: Readings of the garbled ``n(T) = ⌈log 2 log 10 √T⌉`` (notes, A1); the first is our default.
PHASE_RULES = ("log2_10sqrtT", "log2_sqrtT", "ln2_ln_10sqrtT")


def n_phases(T: int, rule: str = "log2_10sqrtT") -> int:
    """Number of phases ``n(T)``.

    ``"log2_10sqrtT"``: ``⌈log2(10 √T)⌉`` (default; 9 phases at ``T = 1000``, 12 at ``10^5``);
    ``"log2_sqrtT"``: ``⌈log2 √T⌉``; ``"ln2_ln_10sqrtT"``: ``⌈ln 2 · ln(10 √T)⌉``.
    """
    if int(T) != T or T < 2:
        raise ValueError(f"T={T!r} must be an integer >= 2")
    if rule == "log2_10sqrtT":
        n = math.ceil(math.log2(10 * math.sqrt(T)))
    elif rule == "log2_sqrtT":
        n = math.ceil(math.log2(math.sqrt(T)))
    elif rule == "ln2_ln_10sqrtT":
        n = math.ceil(math.log(2) * math.log(10 * math.sqrt(T)))
    else:
        raise ValueError(f"rule={rule!r}; allowed are {PHASE_RULES}")
    return max(1, n)


def harmonic(n: int) -> float:
    """``loḡ(n) = Σ_{i=1}^n 1/i``."""
    return float(sum(1.0 / i for i in range(1, int(n) + 1)))


def phase_budgets(T: int, n: int) -> np.ndarray:
    """Pulls per phase, ``τ(l) = T / (l · loḡ(n))`` rounded, the remainder in the last phase so
    that they sum to exactly ``T`` (notes, A2 and A15). Shape ``(n,)``, int."""
    if int(n) != n or n < 1:
        raise ValueError(f"n={n!r} phases must be a positive integer")
    if int(T) != T or T < n:
        raise ValueError(f"T={T!r} must be an integer >= the number of phases {n}")
    h = harmonic(n)
    tau = np.floor(T / (np.arange(1, n + 1) * h) + 0.5).astype(np.int64)
    tau[-1] = T - tau[:-1].sum()
    if tau[-1] < 0:  # cannot happen for n >= 1, kept as a guard
        raise AssertionError(f"phase budgets {tau} do not sum to T={T}")
    return tau


def round_allocation(nu: np.ndarray, total: int) -> np.ndarray:
    """Integer pull counts from fractions by the largest-remainder method.

    Parameters
    ----------
    nu : ndarray, shape (3, K)
        Fractions summing to 1 (entries below 1e-9 are treated as 0, the solver's round-off).
    total : int
        Pulls in the phase.

    Returns
    -------
    int ndarray, shape (3, K), summing to ``total``; ties go to the lowest flat index.
    """
    nu = np.asarray(nu, dtype=float)
    if np.any(~np.isfinite(nu)) or np.any(nu < -1e-6):
        raise ValueError("allocation fractions must be finite and non-negative")
    nu = np.where(nu < 1e-9, 0.0, nu)
    s = nu.sum()
    if s <= 0:
        raise ValueError("allocation fractions are all zero")
    exact = (nu / s * int(total)).reshape(-1)  # C order, whatever the layout of ``nu``
    base = np.floor(exact).astype(np.int64)
    left = int(total) - int(base.sum())
    if left:
        order = np.argsort(-(exact - base), kind="stable")[:left]
        base[order] += 1
    return base.reshape(nu.shape)


def round_allocations(nu: np.ndarray, total: int) -> np.ndarray:
    """:func:`round_allocation` of every ``nu[u]`` with the same ``total``, in one pass.

    Parameters
    ----------
    nu : ndarray, shape (U, 3, K)
        Fractions, each ``nu[u]`` summing to 1, C-contiguous (each row's sum then adds its numbers
        in the order ``nu[u].sum()`` does, so the results are those of :func:`round_allocation`).
    total : int

    Returns
    -------
    int ndarray, shape (U, 3, K)
    """
    nu = np.ascontiguousarray(nu, dtype=float)
    if np.any(~np.isfinite(nu)) or np.any(nu < -1e-6):
        raise ValueError("allocation fractions must be finite and non-negative")
    flat = np.where(nu < 1e-9, 0.0, nu).reshape(len(nu), -1)
    s = flat.sum(axis=1)
    if np.any(s <= 0):
        raise ValueError("allocation fractions are all zero")
    exact = flat / s[:, None] * int(total)
    base = np.floor(exact).astype(np.int64)
    left = int(total) - base.sum(axis=1)
    # the ``left`` largest remainders of each row get one more pull, ties to the lowest index
    order = np.argsort(-(exact - base), axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(flat.shape[1]), order.shape), axis=1)
    base += rank < left[:, None]
    return base.reshape(nu.shape)


class AllocationLP:
    """ALLOCATE as a parametrised cvxpy problem, with a cache keyed by ``(blocks, B, R)``.

    Derived in notebooks/bestfair/02_allocation_and_algorithms.md, section 'The budget and the allocation LP'
    (equation ``bestfair-allocation-lp``).

    Parameters
    ----------
    matrices : ndarray, shape (3, K, K)
        ``A, B, C`` (e.g. :attr:`FairArmsProblem.allocation_matrices`).
    costs : ndarray, shape (3, K)
        Per-sample costs ``c, a, b``.
    solver : str
        ``"highs"`` (default; HiGHS through ``highspy``) or a cvxpy solver name (``"CLARABEL"``).
    """

    def __init__(self, matrices: np.ndarray, costs: np.ndarray, solver: str = "highs"):
        W = np.asarray(matrices, dtype=float)
        if W.ndim != 3 or W.shape[0] != 3 or W.shape[1] != W.shape[2]:
            raise ValueError(f"matrices has shape {W.shape}; expected (3, K, K)")
        if np.any(~np.isfinite(W)) or np.any(W < 0):
            raise ValueError("allocation matrices must be finite and non-negative")
        self.K = W.shape[1]
        costs = np.asarray(costs, dtype=float)
        if costs.shape != (3, self.K):
            raise ValueError(f"costs has shape {costs.shape}; expected (3, {self.K})")
        self.W = W
        self.costs = costs
        self.solver = solver
        self._highs: highspy.Highs | None = None
        self._cols_blocks: tuple[bool, ...] | None = None  # the blocks whose column bounds the model holds
        self._problems: dict[tuple[bool, ...], tuple] = {}
        # fractions and values, keyed by (blocks, B, R)
        self._cache: dict[tuple, np.ndarray] = {}
        self._values: dict[tuple, float] = {}
        self._block_data: dict[tuple[bool, ...], tuple[np.ndarray, np.ndarray, float]] = {}
        self.solves = 0

    def _highs_model(self) -> highspy.Highs:
        """The HiGHS model with every row: ``t - [W_b nu_b]_k <= 0`` for each block ``b`` and arm
        ``k``, the cost row and the sum-to-one row (bounds are set per solve)."""
        if self._highs is None:
            K, n = self.K, 3 * self.K + 1
            A = np.zeros((3 * K + 2, n))
            for b in range(3):
                A[b * K : (b + 1) * K, b * K : (b + 1) * K] = -self.W[b]
            A[: 3 * K, -1] = 1.0
            A[3 * K, : 3 * K] = self.costs.ravel()
            A[3 * K + 1, : 3 * K] = 1.0
            M = csc_matrix(A)
            lp = highspy.HighsLp()
            lp.num_col_, lp.num_row_ = n, 3 * K + 2
            lp.col_cost_ = np.r_[np.zeros(3 * K), -1.0]  # maximise t
            lp.col_lower_ = np.r_[np.zeros(3 * K), -highspy.kHighsInf]
            lp.col_upper_ = np.full(n, highspy.kHighsInf)
            lp.row_lower_ = np.r_[np.full(3 * K + 1, -highspy.kHighsInf), 1.0]
            lp.row_upper_ = np.r_[np.zeros(3 * K), 1.0, 1.0]
            lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
            lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = M.indptr, M.indices, M.data
            h = highspy.Highs()
            h.setOptionValue("output_flag", False)
            # The LP is small (3K + 1 columns); presolve costs more than it saves: without it a cold
            # solve is about 3x faster (the solutions agree with presolve's to ~1e-13).
            h.setOptionValue("presolve", "off")
            h.passModel(lp)
            self._highs = h
            self._cols_blocks = None  # a new model holds the initial column bounds
            # what every solve passes unchanged: the row and column indices and lower bounds
            self._rows = (np.arange(3 * K + 2, dtype=np.int32), np.r_[np.full(3 * K + 1, -highspy.kHighsInf), 1.0])
            self._cols = (np.arange(n, dtype=np.int32), np.r_[np.zeros(3 * K), -highspy.kHighsInf])
        return self._highs

    def _blocks(self, blocks: tuple[bool, ...]) -> tuple[np.ndarray, np.ndarray, float]:
        """For a choice of blocks: which are used (shape ``(3, 1)``), the columns' upper bounds (an
        unused block's fractions are fixed to zero, ``t`` is free) and the cheapest usable cost."""
        out = self._block_data.get(blocks)
        if out is None:
            used = np.array(blocks)[:, None]
            cols_up = np.r_[np.where(used, highspy.kHighsInf, np.zeros(self.K)).ravel(), highspy.kHighsInf]
            out = (used, cols_up, float(self.costs[used & np.ones((3, self.K), bool)].min()))
            self._block_data[blocks] = out
        return out

    def _solve_highs(self, mask: np.ndarray, budget: float, blocks: tuple[bool, ...]) -> np.ndarray:
        K, inf = self.K, highspy.kHighsInf
        h = self._highs_model()
        h.clearSolver()  # a cold start: the answer must not depend on earlier solves
        used, cols_up, _ = self._blocks(blocks)
        # rows of an arm outside R or of an unused block are free; then the cost row and the sum
        rows_up = np.empty(3 * K + 2)
        rows_up[: 3 * K] = np.where(used & mask, 0.0, inf).ravel()
        rows_up[3 * K], rows_up[3 * K + 1] = budget, 1.0
        h.changeRowsBounds(3 * K + 2, self._rows[0], self._rows[1], rows_up)
        if self._cols_blocks != blocks:  # the column bounds depend on the blocks only
            h.changeColsBounds(3 * K + 1, self._cols[0], self._cols[1], cols_up)
            self._cols_blocks = blocks
        h.run()
        status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            # On badly scaled matrices (weights near 1e-38 in the binomial variants) the solve
            # without presolve can stop without a status; retry once, cold, with presolve (the
            # answer of a solve that succeeds at once is unchanged)
            h.clearSolver()
            h.setOptionValue("presolve", "on")
            h.run()
            h.setOptionValue("presolve", "off")
            status = h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise RuntimeError(
                f"the allocation LP ended with status {h.modelStatusToString(status)!r} "
                f"(R={np.flatnonzero(mask).tolist()}, B={budget})"
            )
        return np.asarray(h.getSolution().col_value)[: 3 * K].reshape(3, K)

    def _problem(self, blocks: tuple[bool, ...]):
        prob = self._problems.get(blocks)
        if prob is None:
            import cvxpy as cp  # only for a cvxpy solver: the default HiGHS path does without it

            K = self.K
            nu = cp.Variable((3, K), nonneg=True)
            t = cp.Variable()
            mask = cp.Parameter(K, nonneg=True)
            budget = cp.Parameter(nonneg=True)
            # Rows of arms outside R are relaxed by L, more than any attainable value of t.
            L = float(self.W.max()) + 1.0
            cons = [cp.sum(nu) == 1, cp.sum(cp.multiply(self.costs, nu)) <= budget]
            for b, active in enumerate(blocks):
                if active:
                    cons.append(t <= self.W[b] @ nu[b] + L * (1 - mask))
                else:
                    cons.append(nu[b] == 0)
            problem = cp.Problem(cp.Maximize(t), cons)
            prob = (problem, nu, t, mask, budget)
            self._problems[blocks] = prob
        return prob

    def solve(
        self, remaining: np.ndarray, budget: float, blocks: Sequence[bool] = ALL_BLOCKS
    ) -> tuple[np.ndarray, float]:
        """Optimal fractions ``ν*`` (shape ``(3, K)``) and the value ``v*(B, R)``.

        Parameters
        ----------
        remaining : bool ndarray, shape (K,)
            The set ``R`` over which the minimum is taken (the fractions range over all arms).
        budget : float
            The average-cost budget ``B``.
        blocks : three bools
            Which kinds of pull may be used (:data:`ALL_BLOCKS`, :data:`FAIRNESS_BLOCKS`,
            :data:`OUTCOME_BLOCK`).

        Raises
        ------
        ValueError
            If ``R`` is empty, or the budget admits no allocation (every usable pull costs more
            than ``B``).
        """
        frac = self.fractions(remaining, budget, blocks)
        key = (tuple(bool(b) for b in blocks), float(budget), np.asarray(remaining, dtype=bool).tobytes())
        value = self._values.get(key)
        if value is None:
            mask, blocks = np.asarray(remaining, dtype=bool), key[0]
            value = float(min(np.min(self.W[b][mask] @ frac[b]) for b in range(3) if blocks[b]))
            self._values[key] = value
        return frac, value

    def fractions(self, remaining: np.ndarray, budget: float, blocks: Sequence[bool] = ALL_BLOCKS) -> np.ndarray:
        """The optimal fractions ``ν*`` alone (``solve(...)[0]``, without computing the value):
        what the algorithms ask for, once per remaining set and phase."""
        mask = np.asarray(remaining, dtype=bool)
        blocks = tuple(bool(b) for b in blocks)
        key = (blocks, float(budget), mask.tobytes())
        hit = self._cache.get(key) if mask.shape == (self.K,) else None
        if hit is not None:  # only valid arguments are ever cached
            return hit
        if mask.shape != (self.K,) or not mask.any():
            raise ValueError(f"remaining must be a non-empty boolean mask of shape ({self.K},)")
        if len(blocks) != 3 or not any(blocks):
            raise ValueError(f"blocks={blocks!r} must be three booleans, at least one True")
        if not budget >= 0:
            raise ValueError(f"budget={budget!r} must be >= 0")
        used, cols_up, cheapest = self._blocks(blocks)
        if cheapest > budget:
            raise ValueError(
                f"budget B={budget:g} is below the cheapest usable pull cost {cheapest:g}; no allocation is feasible"
            )
        if self.solver == "highs":
            raw = self._solve_highs(mask, float(budget), blocks)
            self.solves += 1
        else:
            problem, nu, t, p_mask, p_budget = self._problem(blocks)
            p_mask.value = mask.astype(float)
            p_budget.value = float(budget)
            problem.solve(solver=self.solver)
            self.solves += 1
            if problem.status not in ("optimal", "optimal_inaccurate") or nu.value is None:
                raise RuntimeError(
                    f"the allocation LP ended with status {problem.status!r} "
                    f"(R={np.flatnonzero(mask).tolist()}, B={budget})"
                )
            raw = nu.value
        frac = np.clip(np.asarray(raw, dtype=float), 0.0, None)
        frac[~used[:, 0]] = 0.0
        frac /= frac.sum()
        frac.setflags(write=False)
        self._cache[key] = frac
        return frac


def linprog_allocation(
    matrices: np.ndarray, costs: np.ndarray, remaining: np.ndarray, budget: float, blocks: Sequence[bool] = ALL_BLOCKS
) -> tuple[np.ndarray, float]:
    """The allocation LP stated for ``scipy.optimize.linprog`` (HiGHS): the readable reference of
    :class:`AllocationLP` (which keeps one HiGHS model and only changes its bounds).

    Variables ``x = [ν_Y, ν_s, ν_{s'}, t]``; maximise ``t`` subject to ``t ≤ [W_b ν_b]_k`` for
    every ``k ∈ R`` and active block ``b``, the cost row and the sum-to-one row.
    """
    W = np.asarray(matrices, dtype=float)
    K = W.shape[1]
    mask = np.asarray(remaining, dtype=bool)
    n = 3 * K + 1
    c = np.zeros(n)
    c[-1] = -1.0
    active = [b for b in range(3) if blocks[b]]
    arms = np.flatnonzero(mask)
    # one row per (active block b, arm k in R): t - [W_b nu_b]_k <= 0; then the cost row
    rows = np.zeros((len(active) * len(arms) + 1, n))
    for i, b in enumerate(active):
        rows[i * len(arms) : (i + 1) * len(arms), b * K : (b + 1) * K] = -W[b, arms]
    rows[:-1, -1] = 1.0
    rows[-1, : 3 * K] = np.asarray(costs, dtype=float).ravel()
    b_ub = np.zeros(len(rows))
    b_ub[-1] = budget
    a_eq = np.zeros((1, n))
    a_eq[0, : 3 * K] = 1.0
    bounds = [(0, None if blocks[b] else 0) for b in range(3) for _ in range(K)] + [(None, None)]
    from scipy.optimize import linprog

    res = linprog(c, A_ub=rows, b_ub=b_ub, A_eq=a_eq, b_eq=[1.0], bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"linprog failed: {res.message}")
    return res.x[: 3 * K].reshape(3, K), float(-res.fun)
