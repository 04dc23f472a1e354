"""D-UCB, F-UCB and the UCB baselines of Huang, Zhang and Wu (AAAI 2022), vectorised over runs.

All of them are :class:`DecomposedUCB` on some set of nodes **W**: the learner keeps a running
mean ``μ̂_w`` and count ``N_w`` per joint value ``w`` of **W** (Eq. 7) and scores arm ``a`` for the
user ``x_t`` by

``UCB_a(t) = Σ_k P(W = k | x_t, do(a)) · (μ̂_k + α_r sqrt(2 log(1/δ_t) / max(1, N_k)))``  (Eq. 5–6)

with ``δ_t = t^{-p}`` (the paper's experiments: ``p = 2``, so the radius is 0 at ``t = 1``).

- **D-UCB** (Algorithm 1): **W** = the d-separator of smallest domain (Email: {A3, I1, I2}).
- **C-UCB** (Lu et al. 2020, as the paper runs it): **W** = Pa(R).
- **UCB** (context-free, Auer et al. 2002): **W** = the arm nodes, i.e. one cell per arm.
- **F-UCB** (:class:`FairUCB`, Algorithm 2): D-UCB restricted to the arms whose upper confidence
  bound on the counterfactual discrepancy is at most ``τ``.

Choices the paper leaves open are parameters: ``unseen_mean`` (μ̂ of a cell never visited; 0),
``tie_break`` ("first": lowest arm code; "random": uniform among ties from the policy's stream),
``clip_radius`` (cap every cell radius at 1, the width of the reward range of Assumption 2; off),
and for F-UCB the radius of Eq. 12 (``fair_radius``), the scales ``alpha_r`` and ``alpha_c``, and
the rule when no arm is certified fair (``fallback``).
"""

from __future__ import annotations

import numpy as np

from ..core.policies import CellStatistics, argmax_ties
from ..core.streams import RunStreams
from .environment import CellDecomposition

__all__ = [
    "log_inv_delta",
    "cell_radius",
    "IdentifiedDiscrepancy",
    "BoundedDiscrepancy",
    "DecomposedUCB",
    "FairUCB",
    "FairnessAuditor",
    "Audited",
    "FALLBACKS",
    "FAIR_RADII",
    "TIE_BREAKS",
]

FALLBACKS = ("min_ucb_delta", "safe_arm", "unconstrained")
FAIR_RADII = ("paper", "diff")
TIE_BREAKS = ("first", "random")


def log_inv_delta(t: int, delta_power: float = 2.0) -> float:
    """``log(1/δ_n)`` at round ``n = t + 1`` (``t`` is the runner's 0-based index) with
    ``δ_n = n^{-p}``: ``p · ln n``."""
    return float(delta_power) * float(np.log(t + 1))


def cell_radius(counts: np.ndarray, log_inv: float, factor: float, clip: bool = False) -> np.ndarray:
    """``sqrt(factor · log(1/δ) / max(1, N))``; ``factor`` is 2 for the reward (Eq. 6) and 8 for the
    discrepancy (Eq. 12). With ``clip``, capped at 1."""
    r = np.sqrt(factor * log_inv / np.maximum(counts, 1.0))
    return np.minimum(r, 1.0) if clip else r


def _means(stats: CellStatistics, unseen: float) -> np.ndarray:
    # CellStatistics.means without its np.errstate context (the division is already guarded);
    # the expression, hence every bit of the result, is the same.
    return np.where(stats.counts > 0, stats.sums / np.maximum(stats.counts, 1.0), unseen)


def _check_choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not allowed; use one of {allowed}")


class IdentifiedDiscrepancy:
    """Eq. 9–10: ``Δ̂_a = |Σ_k μ̂_k (P(k | s+, x∖s, a) − P(k | s−, x∖s, a))|`` with the two radii of
    Eq. 12.

    - ``"paper"`` (printed): ``Σ_k sqrt(8 log(1/δ)/max(1, N_k)) · P(k | x_t, a)``;
    - ``"diff"`` (ours): the same cell radii weighted by ``|P(k | s+, ·) − P(k | s−, ·)|``, the exact
      propagation of the cell errors into ``Δ̂`` (the error of Δ̂ is ``Σ_k (μ̂_k − μ_k) d_k``).

    Parameters
    ----------
    dec : CellDecomposition
    cf_contexts : int array, shape (n_contexts, n_s)
        Context ``c`` with the sensitive attribute set to ``s``.
    s_plus, s_minus : int
        Codes of ``s+`` and ``s−``.
    """

    kind = "identified"

    def __init__(self, dec: CellDecomposition, cf_contexts: np.ndarray, s_plus: int = 1, s_minus: int = 0):
        cf = np.asarray(cf_contexts, dtype=np.int64)
        if cf.shape[0] != dec.n_contexts:
            raise ValueError(f"cf_contexts has {cf.shape[0]} rows; the decomposition has {dec.n_contexts} contexts")
        self.dec = dec
        self.diff = dec.probs[cf[:, s_plus]] - dec.probs[cf[:, s_minus]]
        self.abs_diff = np.abs(self.diff)

    def estimate(
        self,
        means: np.ndarray,
        rad8: np.ndarray,
        context: np.ndarray,
        arms: np.ndarray | None = None,
        only: str | None = None,
    ):
        """``(Δ̂, radius_paper, radius_diff)``, each ``(n_runs, n_arms)``, or ``(n_runs,)`` for ``arms``.

        ``means`` and ``rad8`` (cell radii ``sqrt(8 log(1/δ)/max(1, N))``) have shape
        ``(n_runs, n_cells)``; ``context`` and ``arms`` shape ``(n_runs,)``. With ``only`` set to
        ``"paper"`` or ``"diff"`` the other radius is not computed (returned as None).
        """
        if arms is None:
            d, m, r = self.diff[context], means[:, None, :], rad8[:, None, :]
            p = self.dec.probs[context] if only != "diff" else None
            ad = self.abs_diff[context] if only != "paper" else None
        else:
            d, m, r = self.diff[context, arms], means, rad8
            p = self.dec.probs[context, arms] if only != "diff" else None
            ad = self.abs_diff[context, arms] if only != "paper" else None
        return (
            np.abs((d * m).sum(axis=-1)),
            None if p is None else (p * r).sum(axis=-1),
            None if ad is None else (ad * r).sum(axis=-1),
        )


class BoundedDiscrepancy:
    """Δ̂ from bounds when user features **B** descend from ``S`` (Theorem 2, Eq. 11), in F-UCB.

    For each value ``s*`` the counterfactual mean is bounded by the smallest and largest
    ``Σ_k P(k | s*, b, x∖{s, B}, a) μ̂_k`` over the joint values ``b`` of **B**, and Δ̂ is the worst
    case ``max(|U+ − L−|, |U− − L+|)`` (our reading; the paper does not say which end points enter).
    When **W** has no intermediate node (empty **Z**, as on the Adult-Video graph) this is Eq. 11
    exactly. Otherwise it is our corrected form: the minimum is taken outside the sum over ``z`` and
    ``P(z | ·)`` is evaluated at the counterfactual user (Eq. 11 as printed keeps the factual
    ``P(z | x_{t,a})``, which ignores the effect of ``S`` on **Z**; see the chapter's notebook 3).

    Radii: ``"paper"`` is Eq. 12 as printed (factual cell weights); ``"diff"`` (ours) propagates the
    cell errors: each bound is off by at most the largest weighted ``sqrt(2 log(1/δ)/N)`` among the
    terms it compares, so Δ̂ by at most the largest weighted ``sqrt(8 log(1/δ)/N)``.

    Parameters
    ----------
    dec : CellDecomposition
    varied_contexts : int array, shape (n_contexts, n_s, n_b)
        Context ``c`` with ``S = s`` and **B** set to its ``b``-th joint value
        (:meth:`CausalBanditEnv.varied_contexts`).
    """

    kind = "bounded"

    def __init__(self, dec: CellDecomposition, varied_contexts: np.ndarray, s_plus: int = 1, s_minus: int = 0):
        vc = np.asarray(varied_contexts, dtype=np.int64)
        if vc.ndim != 3 or vc.shape[0] != dec.n_contexts:
            raise ValueError(f"varied_contexts must have shape (n_contexts={dec.n_contexts}, n_s, n_b), got {vc.shape}")
        self.dec = dec
        self.probs = dec.probs[vc[:, [s_plus, s_minus], :]]  # (n_ctx, 2, n_b, n_arms, n_cells)
        # With W inside the arm and user features every P(W | x, a) is a point mass: then the sums
        # over cells are single terms, and gathering them gives the same numbers much faster.
        self._cells = self.probs.argmax(axis=-1) if np.all((dec.probs == 0) | (dec.probs == 1)) else None
        self._own = dec.probs.argmax(axis=-1) if self._cells is not None else None

    def estimate(
        self,
        means: np.ndarray,
        rad8: np.ndarray,
        context: np.ndarray,
        arms: np.ndarray | None = None,
        only: str | None = None,
    ):
        """``(Δ̂, radius_paper, radius_diff)``, each ``(n_runs, n_arms)``, or ``(n_runs,)`` for ``arms``
        (shapes as :meth:`IdentifiedDiscrepancy.estimate`; both radii are always computed here)."""
        if self._cells is not None:
            return self._estimate_point_masses(means, rad8, context, arms)
        if arms is None:
            q = self.probs[context]  # (n_runs, 2, n_b, n_arms, n_cells)
            m, r = means[:, None, None, None, :], rad8[:, None, None, None, :]
            own = self.dec.probs[context]
            radius_paper = (own * rad8[:, None, :]).sum(axis=-1)
        else:
            q = self.probs[context, :, :, arms]  # (n_runs, 2, n_b, n_cells)
            m, r = means[:, None, None, :], rad8[:, None, None, :]
            radius_paper = (self.dec.probs[context, arms] * rad8).sum(axis=-1)
        mu = (q * m).sum(axis=-1)  # (n_runs, 2, n_b, ...)
        lower, upper = mu.min(axis=2), mu.max(axis=2)
        delta_hat = np.maximum(np.abs(upper[:, 0] - lower[:, 1]), np.abs(upper[:, 1] - lower[:, 0]))
        radius_diff = (q * r).sum(axis=-1).max(axis=(1, 2))
        return delta_hat, radius_paper, radius_diff

    def _estimate_point_masses(self, means, rad8, context, arms):
        rows = np.arange(len(context))
        if arms is None:
            cells = self._cells[context]  # (n_runs, 2, n_b, n_arms)
            idx = rows[:, None, None, None]
            radius_paper = rad8[rows[:, None], self._own[context]]
        else:
            cells = self._cells[context, :, :, arms]  # (n_runs, 2, n_b)
            idx = rows[:, None, None]
            radius_paper = rad8[rows, self._own[context, arms]]
        mu = means[idx, cells]
        lower, upper = mu.min(axis=2), mu.max(axis=2)
        delta_hat = np.maximum(np.abs(upper[:, 0] - lower[:, 1]), np.abs(upper[:, 1] - lower[:, 0]))
        return delta_hat, radius_paper, rad8[idx, cells].max(axis=(1, 2))


class DecomposedUCB:
    """UCB on the cells of a node set **W** (Algorithm 1 when **W** is a d-separator).

    Parameters
    ----------
    dec : CellDecomposition
        The cells and the known ``P(W = k | x, do(a))``.
    delta_power : float
        ``δ_t = t^{-delta_power}`` (the paper: 2).
    unseen_mean : float
        ``μ̂`` of a cell with no observation (ours: 0).
    tie_break : {"first", "random"}
    clip_radius : bool
        Cap every cell radius at 1 (ours; off in the paper).
    alpha_r : float
        Scale of the reward radius (1 in Algorithm 1).
    name : str
    """

    def __init__(
        self,
        dec: CellDecomposition,
        delta_power: float = 2.0,
        unseen_mean: float = 0.0,
        tie_break: str = "first",
        clip_radius: bool = False,
        alpha_r: float = 1.0,
        name: str = "D-UCB",
    ):
        _check_choice("tie_break", tie_break, TIE_BREAKS)
        if not delta_power > 0:
            raise ValueError(f"delta_power={delta_power} must be > 0 (δ_t = t^-delta_power)")
        if not alpha_r > 0:
            raise ValueError(f"alpha_r={alpha_r} must be > 0")
        self.dec = dec
        self.delta_power = float(delta_power)
        self.unseen_mean = float(unseen_mean)
        self.tie_break = tie_break
        self.clip_radius = bool(clip_radius)
        self.alpha_r = float(alpha_r)
        self.name = name

    def reset(self, streams: RunStreams) -> None:
        self.stats = CellStatistics(streams.n_runs, self.dec.n_cells)
        self._rows = np.arange(streams.n_runs)
        self._ties = streams.per_round("ties", (), "uniform") if self.tie_break == "random" else None

    def _tie_noise(self, t: int):
        return None if self._ties is None else self._ties.at(t)

    def cell_means(self) -> np.ndarray:
        """``μ̂_k``, shape ``(n_runs, n_cells)`` (``unseen_mean`` where ``N_k = 0``)."""
        return _means(self.stats, self.unseen_mean)

    def arm_ucb(self, t: int, context: np.ndarray, means: np.ndarray | None = None) -> np.ndarray:
        """``UCB_a(t)`` of Eq. 5 for every arm, shape ``(n_runs, n_arms)``."""
        rad = cell_radius(self.stats.counts, log_inv_delta(t, self.delta_power), 2.0, self.clip_radius)
        ucb_w = (self.cell_means() if means is None else means) + self.alpha_r * rad
        return (self.dec.probs[context] * ucb_w[:, None, :]).sum(axis=-1)

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        return argmax_ties(self.arm_ucb(t, context), self._tie_noise(t))

    def update(self, t: int, context, actions: np.ndarray, feedback: dict) -> None:
        self.stats.add(self.dec.realized_cells(feedback), feedback["reward"])


class FairUCB(DecomposedUCB):
    """F-UCB (Algorithm 2): D-UCB among the arms with ``UCB_Δ,a(t) = Δ̂_a + α_c · radius_a ≤ τ``.

    Parameters
    ----------
    dec : CellDecomposition
    tau : float
        Fairness threshold.
    discrepancy : IdentifiedDiscrepancy or BoundedDiscrepancy
        How ``Δ̂`` is estimated (Eq. 10, or Theorem 2 when not identified).
    fair_radius : {"paper", "diff"}
        The radius of Eq. 12 as printed, or the propagated one (see the estimators).
    alpha_c : float
        Scale of the discrepancy radius (Theorem 3: 1).
    fallback : {"min_ucb_delta", "safe_arm", "unconstrained"}
        When no arm is certified (the paper is silent): the arm of smallest ``UCB_Δ``, ties to the
        larger ``UCB_a`` (ours, the default); a known safe arm ``safe_arm`` (Assumption 3's ``π0``);
        or D-UCB's unconstrained choice.
    safe_arm : int, optional
        The arm played by ``fallback="safe_arm"``.
    **kw
        ``delta_power``, ``unseen_mean``, ``tie_break``, ``clip_radius``, ``alpha_r``, ``name`` as in
        :class:`DecomposedUCB` (``alpha_r`` scales the reward radius, Theorem 3: ``2/(τ − Δ_π0)``).

    Per-round diagnostics: ``fallback`` (1 if no arm was certified), ``fair_set_size`` and
    ``own_ucb_delta`` (the chosen arm's ``UCB_Δ`` as this policy computed it).
    """

    def __init__(
        self,
        dec: CellDecomposition,
        tau: float,
        discrepancy: IdentifiedDiscrepancy | BoundedDiscrepancy,
        fair_radius: str = "paper",
        alpha_c: float = 1.0,
        fallback: str = "min_ucb_delta",
        safe_arm: int | None = None,
        **kw,
    ):
        kw.setdefault("name", "F-UCB")
        super().__init__(dec, **kw)
        _check_choice("fair_radius", fair_radius, FAIR_RADII)
        _check_choice("fallback", fallback, FALLBACKS)
        if not tau > 0:
            raise ValueError(f"tau={tau} must be > 0")
        if not alpha_c > 0:
            raise ValueError(f"alpha_c={alpha_c} must be > 0")
        if fallback == "safe_arm" and (safe_arm is None or not 0 <= int(safe_arm) < dec.n_arms):
            raise ValueError(f"fallback='safe_arm' needs safe_arm in 0..{dec.n_arms - 1}, got {safe_arm!r}")
        if discrepancy.dec is not dec:
            raise ValueError("the discrepancy estimator must be built on the same decomposition as the policy")
        self.tau = float(tau)
        self.discrepancy = discrepancy
        self.fair_radius = fair_radius
        self.alpha_c = float(alpha_c)
        self.fallback = fallback
        self.safe_arm = None if safe_arm is None else int(safe_arm)

    def reset(self, streams: RunStreams) -> None:
        super().reset(streams)
        self._diag = {}

    def ucb_delta(self, t: int, context: np.ndarray, means: np.ndarray | None = None) -> np.ndarray:
        """``UCB_Δ,a(t)`` of Eq. 12 (with ``α_c``) for every arm, shape ``(n_runs, n_arms)``."""
        rad8 = cell_radius(self.stats.counts, log_inv_delta(t, self.delta_power), 8.0, self.clip_radius)
        means = self.cell_means() if means is None else means
        delta_hat, r_paper, r_diff = self.discrepancy.estimate(means, rad8, context, only=self.fair_radius)
        return delta_hat + self.alpha_c * (r_paper if self.fair_radius == "paper" else r_diff)

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        means = self.cell_means()
        ucb = self.arm_ucb(t, context, means)
        ucb_d = self.ucb_delta(t, context, means)
        fair = ucb_d <= self.tau
        any_fair = fair.any(axis=1)
        u = self._tie_noise(t)
        chosen = argmax_ties(np.where(fair, ucb, -np.inf), u)
        if not any_fair.all():
            if self.fallback == "min_ucb_delta":
                lowest = ucb_d <= ucb_d.min(axis=1, keepdims=True)
                backup = argmax_ties(np.where(lowest, ucb, -np.inf), u)
            elif self.fallback == "safe_arm":
                backup = np.full(len(chosen), self.safe_arm)
            else:
                backup = argmax_ties(ucb, u)
            chosen = np.where(any_fair, chosen, backup)
        self._diag = {
            "fallback": (~any_fair).astype(float),
            "fair_set_size": fair.sum(axis=1).astype(float),
            "own_ucb_delta": ucb_d[self._rows, chosen],
        }
        return chosen

    def diagnostics(self) -> dict[str, np.ndarray]:
        return self._diag


class FairnessAuditor:
    """Counts "unfair decisions" of any algorithm the way the book defines them (the paper does not).

    It watches an algorithm's own trajectory, keeps the cell statistics F-UCB would keep on that
    history, and before each update reports for the chosen arm ``Δ̂`` and both radii of Eq. 12.
    A decision is unfair at level ``τ`` when ``Δ̂ + radius > τ`` (radius ``"paper"`` or ``"diff"``).
    For F-UCB with the same settings the auditor's numbers equal the policy's own.

    Parameters
    ----------
    estimator : IdentifiedDiscrepancy or BoundedDiscrepancy
    delta_power, unseen_mean, clip_radius
        As the audited F-UCB would use them.
    """

    def __init__(self, estimator, delta_power: float = 2.0, unseen_mean: float = 0.0, clip_radius: bool = False):
        self.estimator = estimator
        self.dec = estimator.dec
        self.delta_power = float(delta_power)
        self.unseen_mean = float(unseen_mean)
        self.clip_radius = bool(clip_radius)

    def reset(self, n_runs: int) -> None:
        self.stats = CellStatistics(n_runs, self.dec.n_cells)

    def measure(self, t: int, context: np.ndarray, actions: np.ndarray) -> dict[str, np.ndarray]:
        rad8 = cell_radius(self.stats.counts, log_inv_delta(t, self.delta_power), 8.0, self.clip_radius)
        delta_hat, r_paper, r_diff = self.estimator.estimate(
            _means(self.stats, self.unseen_mean), rad8, context, np.asarray(actions)
        )
        return {"audit_delta_hat": delta_hat, "audit_radius_paper": r_paper, "audit_radius_diff": r_diff}

    def observe(self, feedback: dict) -> None:
        self.stats.add(self.dec.realized_cells(feedback), feedback["reward"])


class Audited:
    """A policy with a :class:`FairnessAuditor` riding along (its diagnostics carry the audit)."""

    def __init__(self, policy, auditor: FairnessAuditor):
        self.policy = policy
        self.auditor = auditor
        self.name = getattr(policy, "name", type(policy).__name__)

    def reset(self, streams: RunStreams) -> None:
        self.policy.reset(streams)
        self.auditor.reset(streams.n_runs)
        self._audit: dict[str, np.ndarray] = {}

    def select(self, t: int, context) -> np.ndarray:
        actions = self.policy.select(t, context)
        self._audit = self.auditor.measure(t, context, actions)
        return actions

    def update(self, t: int, context, actions, feedback) -> None:
        self.policy.update(t, context, actions, feedback)
        self.auditor.observe(feedback)

    def diagnostics(self) -> dict[str, np.ndarray]:
        own = getattr(self.policy, "diagnostics", None)
        return {**(own() if own is not None else {}), **self._audit}
