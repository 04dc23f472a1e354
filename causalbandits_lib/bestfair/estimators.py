"""The clipped, divergence-weighted importance-sampling estimators (Eq. 3 and Eq. 4).

Samples from every arm ``j`` inform every arm ``k``: a sample of arm ``j`` with cell ``c`` is
reweighted by ``r = P_k(v_c | pa_c) / P_j(v_c | pa_c)`` (the arms differ only in ``V``'s mechanism),
and, for the counterfactual gap, by ``ρ − 1`` with ``ρ = P_s/P_{s'}`` (Eq. 1). In phase ``l`` with
``ε = 2^{-(l-1)}`` the paper's aggregated estimators are

- ``Ŷ_k = (1/Z_k) Σ_j Σ_{m ∈ T_j} (1/M_kj) Y r 1{r ≤ 2 log(2/ε) M_kj}``, ``Z_k = Σ_j τ_j / M_kj`` (Eq. 3);
- ``ζ̂_k^{s,s'} = (1/O_k) Σ_j Σ_{m ∈ T_{j,s'}} (1/D_kj^{s,s'}) Y r (ρ − 1) 1{|r (ρ − 1)| ≤ 2 log(2/ε) D_kj^{s,s'}}``,
  ``O_k = Σ_j τ_{j,s'} / D_kj^{s,s'}`` (Eq. 4); ``ζ̂^{s',s}`` swaps ``s`` and ``s'`` and uses the
  ``S = s`` pulls.

Both are sums over samples of a function of the sample's cell, so they are computed here from
**cell counts** ``N[pool, j, c]`` (how many pulls of kind ``pool`` of arm ``j`` fell in cell
``c``): exactly the same numbers as summing sample by sample.
"""

from __future__ import annotations

import math

import numpy as np

from .model import FORCED_S, FORCED_S_PRIME, NATURAL, FairArmsProblem

__all__ = ["clip_multiplier", "WeightedEstimator", "ESTIMATES"]

#: Names of the three estimates, in the order returned by :meth:`WeightedEstimator.estimate`.
ESTIMATES = ("outcome", "fairness", "fairness_reverse")


def clip_multiplier(phase: int | None, log_base: float = 2.0) -> float:
    """``2 log(2/ε)`` with ``ε = 2^{-(phase-1)}``: the clip level is this times ``M_kj`` or ``D_kj``.

    Derived in notebooks/bestfair/01_the_problem.md, sections 'Importance sampling: every pull informs every arm' and
    'Clipping and spread' (equations ``bestfair-eq1-importance-sampling``, ``bestfair-eq3-clipped-estimator``).

    With ``log_base = 2`` (our default, notes A5) it is ``2 · phase``; with natural logarithms it is
    ``2 · phase · ln 2``. ``phase=None`` means no clipping (``+inf``).
    """
    if phase is None:
        return math.inf
    if int(phase) != phase or phase < 1:
        raise ValueError(f"phase={phase!r} must be an integer >= 1")
    if not log_base > 1:
        raise ValueError(f"log_base={log_base!r} must be > 1")
    return 2.0 * phase * math.log(2.0) / math.log(log_base)


class WeightedEstimator:
    """Eq. 3 and Eq. 4 for a :class:`FairArmsProblem`, evaluated on cell counts.

    Derived in notebooks/bestfair/01_the_problem.md, sections 'Importance sampling: every pull informs every arm' and
    'Clipping and spread' (equations ``bestfair-eq1-importance-sampling``, ``bestfair-eq3-clipped-estimator``).

    Parameters
    ----------
    problem : FairArmsProblem
    log_base : float
        Base of the logarithm in the clip level ``2 log(2/ε)`` (2 by default; ``math.e`` for the
        natural-log reading).
    """

    def __init__(self, problem: FairArmsProblem, log_base: float = 2.0):
        self.problem = problem
        self.log_base = float(log_base)
        clip_multiplier(1, self.log_base)
        #: cells with a non-zero outcome: the only ones that contribute to the sums
        self.reward_cells = np.flatnonzero(problem.cell_y != 0)
        p = problem
        idx = self.reward_cells
        y = p.cell_y[idx]
        r = p.ratios[:, :, idx]  # (K, K, C')
        self._raw = {
            "outcome": (y * r, r, p.M),
            "fairness": (y * r * (p.rho[idx] - 1.0), r * np.abs(p.rho[idx] - 1.0), p.D),
            "fairness_reverse": (y * r * (p.rho_reverse[idx] - 1.0), r * np.abs(p.rho_reverse[idx] - 1.0), p.D_reverse),
        }
        self._cache: dict[tuple[str, float], np.ndarray] = {}
        self._tables: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def clip_level(self, phase: int | None) -> float:
        """``2 log(2/ε)`` of the phase in this estimator's log base (:func:`clip_multiplier`)."""
        return clip_multiplier(phase, self.log_base)

    def source_tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The three estimates' weights before clipping, laid out for the compiled path
        (:mod:`.kernels`): ``value / div`` and the clip size ``size`` with axes ``(estimate, j, c,
        k)`` (source arm, reward cell, target arm) and ``div`` with axes ``(estimate, j, k)``, in
        :data:`ESTIMATES` order. :meth:`weights` is ``value / div`` where ``size <= mult · div``
        and 0 elsewhere: the same numbers."""
        if self._tables is None:
            ratio, size, div = [], [], []
            for which in ESTIMATES:
                value, s, d = self._raw[which]
                ratio.append((value / d[:, :, None]).transpose(1, 2, 0))
                size.append(s.transpose(1, 2, 0))
                div.append(d.T)
            self._tables = tuple(np.ascontiguousarray(np.stack(a)) for a in (ratio, size, div))  # type: ignore[assignment]
            for a in self._tables:
                a.setflags(write=False)
        return self._tables

    def weights(self, which: str, phase: int | None) -> np.ndarray:
        """Per-sample contribution ``G[k, j, c]`` of a sample of arm ``j`` in reward cell ``c`` to
        the numerator of arm ``k``'s estimate, with the phase's clipping; shape ``(K, K, C')``."""
        if which not in self._raw:
            raise ValueError(f"which={which!r}; allowed are {ESTIMATES}")
        mult = clip_multiplier(phase, self.log_base)
        key = (which, mult)
        out = self._cache.get(key)
        if out is None:
            value, size, div = self._raw[which]
            keep = size <= mult * div[:, :, None]
            out = np.where(keep, value / div[:, :, None], 0.0)
            out.setflags(write=False)
            self._cache[key] = out
        return out

    @staticmethod
    def _pool_of(which: str) -> int:
        return {"outcome": NATURAL, "fairness": FORCED_S_PRIME, "fairness_reverse": FORCED_S}[which]

    def _divergence(self, which: str) -> np.ndarray:
        return self._raw[which][2]

    def estimate(self, counts: np.ndarray, phase: int | None, which: str) -> np.ndarray:
        """One estimate for every run and arm from cell counts.

        Parameters
        ----------
        counts : int ndarray, shape (n_runs, 3, K, C)
            Cell counts of the sample pool (one phase for V1, everything so far for V2).
        phase : int or None
            Sets ``ε = 2^{-(phase-1)}``; None disables clipping.
        which : {"outcome", "fairness", "fairness_reverse"}
            ``Ŷ`` (natural pulls), ``ζ̂^{s,s'}`` (``S=s'`` pulls) or ``ζ̂^{s',s}`` (``S=s`` pulls).

        Returns
        -------
        ndarray, shape (n_runs, K)
            NaN for a run whose pool has no sample of the needed kind (no decision can use it).

        Notes
        -----
        The sum over source arms runs in a fixed order and adds exact zeros for arms a run did not
        sample, so a run's estimate is bit-for-bit the same whatever other runs share the batch.
        """
        counts = np.asarray(counts)
        if counts.ndim != 4 or counts.shape[1:3] != (3, self.problem.n_arms) or counts.shape[3] != self.problem.n_cells:
            raise ValueError(
                f"counts has shape {counts.shape}; expected (n_runs, 3, {self.problem.n_arms}, {self.problem.n_cells})"
            )
        pool = counts[:, self._pool_of(which)]  # (R, J, C)
        tau = pool.sum(-1)  # (R, J)
        G = self.weights(which, phase)
        inv_div = 1.0 / self._divergence(which)  # (K, J)
        n_runs, K = counts.shape[0], self.problem.n_arms
        num = np.zeros((n_runs, K))
        norm = np.zeros((n_runs, K))
        reward = pool[:, :, self.reward_cells].astype(float)
        for j in np.flatnonzero(tau.any(0)):
            # one dot product over cells per (run, arm): einsum without BLAS, so a run's value does
            # not depend on the other rows of the batch (4x faster than a broadcast product and sum).
            # Indexing the cell axis with ``reward_cells`` (here and in ``_raw``) leaves it outermost
            # in memory, so einsum adds the cells one after the other in ascending order; the
            # compiled path (:mod:`.kernels`) repeats that order. Contiguous operands would make
            # einsum sum in SIMD lanes instead, and the two paths would differ in the last bits.
            num += np.einsum("rc,kc->rk", reward[:, j, :], G[:, j, :])
            norm += tau[:, j, None] * inv_div[None, :, j]
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(norm > 0, num / np.where(norm > 0, norm, 1.0), np.nan)

    def estimate_all(self, counts: np.ndarray, phase: int | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(Ŷ, ζ̂^{s,s'}, ζ̂^{s',s})``, each of shape ``(n_runs, K)``."""
        return tuple(self.estimate(counts, phase, w) for w in ESTIMATES)  # type: ignore[return-value]

    def expected(self, allocation: np.ndarray, phase: int | None, which: str) -> np.ndarray:
        """Exact expectation of an estimate for a fixed allocation ``τ`` of shape ``(3, K)``.

        The normaliser depends only on ``τ``, so the expectation is the estimate evaluated at the
        expected counts ``τ_j · P_j(c)``. With ``phase=None`` (no clipping) it equals the truth
        (unbiasedness); with clipping, Lemma 6 bounds the bias by ``ε/2``.
        """
        alloc = np.asarray(allocation, dtype=float)
        if alloc.shape != (3, self.problem.n_arms) or np.any(alloc < 0):
            raise ValueError(
                f"allocation must be non-negative with shape (3, {self.problem.n_arms}); got {alloc.shape}"
            )
        pool = self._pool_of(which)
        expected_counts = np.zeros((1, 3, self.problem.n_arms, self.problem.n_cells))
        expected_counts[0, pool] = alloc[pool][:, None] * self.problem.cell_probs[pool]
        return self.estimate(expected_counts, phase, which)[0]
