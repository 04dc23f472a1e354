"""Soft interventions as arms, what one pull observes, and the exact ground truth.

The setting (Gao and Feng 2021, §3): a Markovian causal model with a binary root ``S`` (the
sensitive attribute), a node ``V`` whose mechanism ``P(V | pa(V))`` is replaced by arm ``k``'s
table ``P_k(V | pa(V))`` (a soft intervention), and an outcome ``Y`` with values in ``[0, 1]``.
A pull of arm ``k`` is one of three kinds (:data:`POOLS`): ``S`` drawn naturally, or ``S`` set to
``s`` or to ``s'``. It reveals the observed nodes ``pa(V)``, ``V``, the used children of ``S`` with
their other parents, and ``Y``.

Every estimator of the paper is a sum over samples of a function of these observed values only, so
a sample is summarised by its **cell**: the joint configuration of the observed nodes. A problem is
then fully described by

- ``cell_probs[pool, k, c]``: the exact probability of cell ``c`` for a pull of arm ``k`` of kind
  ``pool`` (computed from the model, never by simulation);
- ``arm_prob[k, c] = P_k(v_c | pa_c)``, hence the importance ratios ``P_k / P_j`` at each cell;
- ``rho[c] = P_s / P_{s'}``: the product over the used children ``X`` of ``S`` of
  ``P(x_c | pa(X)_c \\ S, S=s) / P(x_c | pa(X)_c \\ S, S=s')`` (the counterfactual ratio of Eq. 1);
- ``cell_y[c]``: the outcome value of the cell.

Ground truth (means ``μ_k = E_k[Y]`` and fairness gaps ``ζ_k``) and the divergences ``M_kj`` and
``D_kj`` (§4, :mod:`.divergences`) are exact sums over cells. A problem is built directly from its
cells (:mod:`.instances.synthetic`) or from a causal model by exact inference
(:mod:`.observations`).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Hashable, Sequence

import numpy as np

from .divergences import fairness_divergence, outcome_divergence

__all__ = [
    "POOLS",
    "NATURAL",
    "FORCED_S",
    "FORCED_S_PRIME",
    "ProblemError",
    "FairArmsProblem",
    "cheap_arm_costs",
]

#: The three kinds of pull, in the order used by every ``(3, K, ...)`` array: ``S`` drawn from its
#: natural distribution (for ``Ŷ``), ``S`` set to ``s`` (for ``ζ̂^{s',s}``), ``S`` set to ``s'``
#: (for ``ζ̂^{s,s'}``). The allocation fractions ``ν_Y, ν_s, ν_{s'}`` follow the same order.
POOLS = ("natural", "s", "s_prime")
NATURAL, FORCED_S, FORCED_S_PRIME = 0, 1, 2


class ProblemError(ValueError):
    """A problem's tables or roles violate the paper's assumptions."""


def cheap_arm_costs(n_arms: int, cheap_arm: int | None = 0) -> np.ndarray:
    """Per-sample costs ``(c, a, b)`` of shape ``(3, K)``: 0 for every kind of pull of the cheap
    (already deployed) arm, 1 otherwise (the paper's §5 setting; with the average-cost budget
    ``B = 1/√T`` at most about ``√T`` samples go to the other arms)."""
    costs = np.ones((3, int(n_arms)))
    if cheap_arm is not None:
        if not 0 <= cheap_arm < n_arms:
            raise ValueError(f"cheap_arm={cheap_arm} must be an arm index in 0..{n_arms - 1}")
        costs[:, cheap_arm] = 0.0
    return costs


class FairArmsProblem:
    """A best-fair-arm identification problem, summarised by its sample cells.

    Derived in notebooks/bestfair/01_the_problem.md, sections 'Arms, pulls and fairness' and 'The counterfactual gap
    is a difference of conditional means' (equations ``bestfair-def1-fairness-gap``, ``bestfair-gap-identity``).

    Parameters
    ----------
    cell_probs : ndarray, shape (3, K, C)
        ``cell_probs[pool, k, c]``: probability of cell ``c`` for a pull of arm ``k`` of kind
        ``POOLS[pool]``. Each ``(pool, k)`` row sums to 1.
    arm_prob : ndarray, shape (K, C)
        ``P_k(v_c | pa(V)_c)``, arm ``k``'s probability of the cell's ``V`` given its ``pa(V)``.
    rho : ndarray, shape (C,)
        ``P_s / P_{s'}`` at each cell (product over the used children of ``S``).
    cell_y : ndarray, shape (C,)
        Outcome value of each cell, in ``[0, 1]``.
    costs : ndarray, shape (3, K), optional
        Per-sample cost of each kind of pull of each arm (default: arm 0 free, others 1).
    name : str
    arm_names : sequence of str, optional
    sensitive_labels : (s, s')
        Labels of the two values of ``S``, for display.
    observed : sequence of str, optional
        Names of the observed nodes that make up a cell (for display).
    cell_codes : int ndarray, shape (C, len(observed)), optional
        State codes of the observed nodes in each cell.

    Raises
    ------
    ProblemError
        If shapes disagree, a row is not a distribution, ``Y`` leaves ``[0, 1]``, ``rho`` is not
        positive and finite where a cell can occur, or two arms do not share their support (the
        paper's absolute-continuity assumption, needed for finite importance ratios).
    """

    def __init__(
        self,
        cell_probs: np.ndarray,
        arm_prob: np.ndarray,
        rho: np.ndarray,
        cell_y: np.ndarray,
        costs: np.ndarray | None = None,
        name: str = "problem",
        arm_names: Sequence[str] | None = None,
        sensitive_labels: tuple[Hashable, Hashable] = ("s", "s'"),
        observed: Sequence[str] = (),
        cell_codes: np.ndarray | None = None,
    ):
        self.name = name
        cp = np.asarray(cell_probs, dtype=float)
        if cp.ndim != 3 or cp.shape[0] != 3:
            raise ProblemError(f"{name}: cell_probs has shape {cp.shape}; expected (3, K, C) for the pools {POOLS}")
        _, K, C = cp.shape
        if K < 2:
            raise ProblemError(f"{name}: {K} arm(s); identification needs at least 2")
        if np.any(cp < 0) or not np.allclose(cp.sum(-1), 1.0, atol=1e-9):
            raise ProblemError(f"{name}: every cell_probs[pool, k] must be a probability vector over the {C} cells")
        ap = np.asarray(arm_prob, dtype=float)
        if ap.shape != (K, C):
            raise ProblemError(f"{name}: arm_prob has shape {ap.shape}; expected (K, C) = {(K, C)}")
        reach = cp.sum((0, 1)) > 0  # cells some pull can produce
        bad = reach[None, :] & (ap <= 0)
        if bad.any():
            k, c = (int(i) for i in np.argwhere(bad)[0])
            raise ProblemError(
                f"{name}: arm {k} gives probability {ap[k, c]} to the V of cell {c}, which other arms reach; "
                "the arms must share their support (absolute continuity), or importance ratios are infinite"
            )
        r = np.asarray(rho, dtype=float)
        y = np.asarray(cell_y, dtype=float)
        if r.shape != (C,) or y.shape != (C,):
            raise ProblemError(f"{name}: rho and cell_y must have shape (C,) = ({C},); got {r.shape} and {y.shape}")
        if np.any(~np.isfinite(r[reach]) | (r[reach] <= 0)):
            raise ProblemError(
                f"{name}: P_s/P_s' must be positive and finite on every reachable cell "
                "(the children of S need a common support)"
            )
        if np.any((y < 0) | (y > 1)):
            raise ProblemError(
                f"{name}: outcome values must lie in [0, 1] (the paper's bounds assume it); "
                f"got range [{y.min()}, {y.max()}]"
            )
        costs = cheap_arm_costs(K, 0) if costs is None else np.asarray(costs, dtype=float)
        if costs.shape == (K,):
            costs = np.tile(costs, (3, 1))
        if costs.shape != (3, K) or np.any(costs < 0):
            raise ProblemError(
                f"{name}: costs must be non-negative with shape (3, K) = {(3, K)} or (K,); got {costs.shape}"
            )
        self.cell_probs = cp
        self.arm_prob = ap
        self.rho = np.where(reach, r, 1.0)
        self.cell_y = y
        self.costs = costs
        self.n_arms = K
        self.n_cells = C
        self.arm_names = tuple(arm_names) if arm_names is not None else tuple(f"arm {k}" for k in range(K))
        if len(self.arm_names) != K:
            raise ProblemError(f"{name}: {len(self.arm_names)} arm names for {K} arms")
        self.sensitive_labels = tuple(sensitive_labels)
        self.observed = tuple(observed)
        self.cell_codes = None if cell_codes is None else np.asarray(cell_codes, dtype=np.int64)
        for a in (self.cell_probs, self.arm_prob, self.rho, self.cell_y, self.costs):
            a.setflags(write=False)

    def __repr__(self) -> str:
        return f"FairArmsProblem({self.name!r}, K={self.n_arms}, cells={self.n_cells})"

    # ------------------------------------------------------------------ importance ratios
    @cached_property
    def ratios(self) -> np.ndarray:
        """``P_k / P_j`` at every cell, shape ``(K, K, C)`` (1 where neither arm reaches the cell)."""
        num, den = self.arm_prob[:, None, :], self.arm_prob[None, :, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)
        out.setflags(write=False)
        return out

    @cached_property
    def rho_reverse(self) -> np.ndarray:
        """``P_{s'} / P_s`` at every cell, shape ``(C,)``."""
        return 1.0 / self.rho

    # ------------------------------------------------------------------ ground truth
    @cached_property
    def mu(self) -> np.ndarray:
        """``μ_k = E_k[Y]`` with ``S`` natural, shape ``(K,)``."""
        return self.cell_probs[NATURAL] @ self.cell_y

    @cached_property
    def conditional_means(self) -> np.ndarray:
        """``E_k[Y | do(S=s)]`` and ``E_k[Y | do(S=s')]``, shape ``(2, K)``."""
        return self.cell_probs[1:] @ self.cell_y

    @cached_property
    def zeta(self) -> np.ndarray:
        """``ζ_k^{s,s'} = E[Y_{S←s} | S=s'] − E[Y | S=s']`` under arm ``k``, shape ``(K,)``.

        ``S`` is a root of a Markovian model, so the counterfactual mean equals ``E_k[Y | S=s]``
        and ``ζ^{s,s'} = E_k[Y | s] − E_k[Y | s']`` (notes §2.3, item 8).
        """
        es, esp = self.conditional_means
        return es - esp

    @cached_property
    def zeta_reverse(self) -> np.ndarray:
        """``ζ_k^{s',s} = E[Y_{S←s'} | S=s] − E[Y | S=s]``, shape ``(K,)`` (equal to ``−ζ^{s,s'}``)."""
        es, esp = self.conditional_means
        return esp - es

    def fair(self, tolerance: float) -> np.ndarray:
        """Which arms are ``tolerance``-fair (Def. 1: both ``|ζ| < 𝓔``), shape ``(K,)`` bool."""
        if not tolerance > 0:
            raise ValueError(f"tolerance={tolerance!r} must be positive")
        return (np.abs(self.zeta) < tolerance) & (np.abs(self.zeta_reverse) < tolerance)

    def best_fair_arm(self, tolerance: float) -> int:
        """Index of the fair arm with the largest ``μ`` (``-1`` if no arm is fair).

        Raises
        ------
        ProblemError
            If two fair arms tie for the best mean (the paper assumes a unique ``k*``).
        """
        fair = self.fair(tolerance)
        if not fair.any():
            return -1
        masked = np.where(fair, self.mu, -np.inf)
        best = int(np.argmax(masked))
        if np.sum(masked == masked[best]) > 1:
            raise ProblemError(f"{self.name}: several fair arms share the best mean {masked[best]}; k* must be unique")
        return best

    def gaps(self, tolerance: float) -> dict[str, float]:
        """The instance's difficulty: smallest outcome gap of a fair arm to ``k*`` and smallest
        distance ``||ζ_k| − 𝓔|`` over all arms (the paper's "minimum gaps", §5)."""
        k = self.best_fair_arm(tolerance)
        fair = self.fair(tolerance)
        others = fair.copy()
        if k >= 0:
            others[k] = False
        out = {
            "outcome_gap": float(self.mu[k] - self.mu[others].max()) if k >= 0 and others.any() else float("nan"),
            "fairness_gap": float(np.min(np.abs(np.abs(np.concatenate([self.zeta, self.zeta_reverse])) - tolerance))),
        }
        return out

    # ------------------------------------------------------------------ divergences
    @cached_property
    def M(self) -> np.ndarray:
        """Outcome divergences ``M_kj = log E_k[exp(P_k/P_j)]``, shape ``(K, K)``; ``M_kk = 1``."""
        return outcome_divergence(self.cell_probs[NATURAL][:, None, :], self.ratios)

    def _weights(self, rho: np.ndarray) -> np.ndarray:
        return self.ratios * (rho - 1.0)

    @cached_property
    def D(self) -> np.ndarray:
        """Fairness divergences ``D_kj^{s,s'}`` (for ``ζ̂^{s,s'}``, estimated from ``S=s'`` pulls),
        shape ``(K, K)``."""
        ps, psp = self.cell_probs[FORCED_S][:, None, :], self.cell_probs[FORCED_S_PRIME][:, None, :]
        return fairness_divergence(ps, psp, self._weights(self.rho))

    @cached_property
    def D_reverse(self) -> np.ndarray:
        """Fairness divergences ``D_kj^{s',s}`` (for ``ζ̂^{s',s}``, estimated from ``S=s`` pulls)."""
        ps, psp = self.cell_probs[FORCED_S][:, None, :], self.cell_probs[FORCED_S_PRIME][:, None, :]
        return fairness_divergence(psp, ps, self._weights(self.rho_reverse))

    @cached_property
    def allocation_matrices(self) -> np.ndarray:
        """The LP matrices of ALLOCATE, shape ``(3, K, K)``, one per kind of pull in :data:`POOLS`
        order: ``1/M`` (multiplies ``ν_Y``), ``1/D^{s',s}`` (``ν_s``, whose samples estimate
        ``ζ̂^{s',s}``) and ``1/D^{s,s'}`` (``ν_{s'}``). The reciprocal and this pairing follow from
        ``Z_k = Σ_j τ_j / M_kj`` and ``O_k^{s,s'} = Σ_j τ_{j,s'} / D_kj^{s,s'}`` (notes, A7)."""
        out = np.stack([1.0 / self.M, 1.0 / self.D_reverse, 1.0 / self.D])
        out.setflags(write=False)
        return out

    # ------------------------------------------------------------------ display helpers
    def summary(self, tolerance: float) -> dict[str, Any]:
        """Exact facts of the instance at fairness tolerance ``tolerance``."""
        k = self.best_fair_arm(tolerance)
        fair = self.fair(tolerance)
        off = ~np.eye(self.n_arms, dtype=bool)
        return {
            "n_arms": self.n_arms,
            "n_feasible": int(fair.sum()),
            "best_fair_arm": k,
            "best_mean": float(self.mu[k]) if k >= 0 else float("nan"),
            "best_unconstrained_arm": int(np.argmax(self.mu)),
            **self.gaps(tolerance),
            "M_range": [float(self.M[off].min()), float(self.M[off].max())],
            "D_range": [
                float(min(self.D[off].min(), self.D_reverse[off].min())),
                float(max(self.D[off].max(), self.D_reverse[off].max())),
            ],
        }
