"""D-UCB, F-UCB, the UCB baselines and Fair-LinUCB of Huang, Zhang and Wu (AAAI 2022), vectorised
over runs.

All but Fair-LinUCB are :class:`DecomposedUCB` on some set of nodes **W**: the learner keeps a
running mean ``μ̂_w`` and count ``N_w`` per joint value ``w`` of **W** (Eq. 7) and scores arm ``a``
for the user ``x_t`` by

``UCB_a(t) = Σ_k P(W = k | x_t, do(a)) · (μ̂_k + α_r sqrt(2 log(1/δ_t) / max(1, N_k)))``  (Eq. 5–6)

with ``δ_t = t^{-p}`` (the paper's experiments: ``p = 2``, so the radius is 0 at ``t = 1``).

- **D-UCB** (Algorithm 1): **W** = the d-separator of smallest domain (Email: {A3, I1, I2}).
- **C-UCB** (Lu et al. 2020, as the paper runs it): **W** = Pa(R).
- **UCB** (context-free, Auer et al. 2002): **W** = the arm nodes, i.e. one cell per arm.
- **F-UCB** (:class:`FairUCB`, Algorithm 2): D-UCB restricted to the arms whose upper confidence
  bound on the counterfactual discrepancy is at most ``τ``; the discrepancy is estimated by
  :class:`IdentifiedDiscrepancy` (Eq. 9–10) or :class:`BoundedDiscrepancy` (Theorem 2).
- **Fair-LinUCB** (:class:`FairLinUCB`): **a reconstruction** (ours), see its docstring.

Choices the paper leaves open are parameters, gathered in the frozen configurations
:class:`DecomposedUCBConfig` and :class:`FairUCBConfig` (field names as in
``notebooks/fucb/parameters.yml``): ``unseen_mean`` (μ̂ of a cell never visited; 0),
``tie_break`` ("first": lowest arm code; "random": uniform among ties from the policy's stream),
``clip_radius`` (cap every cell radius at 1, the width of the reward range of Assumption 2; off),
and for F-UCB the radius of Eq. 12 (``fair_radius``), the scales ``alpha_r`` and ``alpha_c``, and
the rule when no arm is certified fair (``fallback``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..core.kernels import registered_kernel
from ..core.policies import CellStatistics, argmax_ties
from ..core.streams import RunStreams
from .model import CellDecomposition

__all__ = [
    "log_inv_delta",
    "cell_radius",
    "running_means",
    "IdentifiedDiscrepancy",
    "BoundedDiscrepancy",
    "DecomposedUCBConfig",
    "FairUCBConfig",
    "DecomposedUCB",
    "FairUCB",
    "TrueDeltaFairUCB",
    "WidthRecordingUCB",
    "FairLinUCB",
    "linear_features",
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
    discrepancy (Eq. 12). With ``clip``, capped at 1.

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'What an estimate can show' (equation
    ``fucb-eq12-discrepancy-radius``).
    """
    r = np.sqrt(factor * log_inv / np.maximum(counts, 1.0))
    return np.minimum(r, 1.0) if clip else r


def running_means(stats: CellStatistics, unseen: float) -> np.ndarray:
    """The cell means ``μ̂_k`` of ``stats`` (Eq. 7), ``unseen`` where a cell has no observation,
    shape ``(n_runs, n_cells)``.

    :meth:`CellStatistics.means <causalbandits_lib.core.policies.CellStatistics.means>` without its
    ``np.errstate`` context (the division is already guarded); the expression, hence every bit of
    the result, is the same.
    """
    return np.where(stats.counts > 0, stats.sums / np.maximum(stats.counts, 1.0), unseen)


def _check_choice(name: str, value, allowed) -> None:
    if value not in allowed:
        raise ValueError(f"{name}={value!r} is not allowed; use one of {allowed}")


class IdentifiedDiscrepancy:
    """Eq. 9–10: ``Δ̂_a = |Σ_k μ̂_k (P(k | s+, x∖s, a) − P(k | s−, x∖s, a))|`` with the two radii of
    Eq. 12.

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'What an estimate can show' (equation
    ``fucb-eq12-discrepancy-radius``).

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

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'Theorem 2' (equation
    ``fucb-eq11-theorem2-bounds``).

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
        self.cells = self.probs.argmax(axis=-1) if np.all((dec.probs == 0) | (dec.probs == 1)) else None
        self.own_cells = dec.probs.argmax(axis=-1) if self.cells is not None else None

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
        if self.cells is not None:
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
            cells = self.cells[context]  # (n_runs, 2, n_b, n_arms)
            idx = rows[:, None, None, None]
            radius_paper = rad8[rows[:, None], self.own_cells[context]]
        else:
            cells = self.cells[context, :, :, arms]  # (n_runs, 2, n_b)
            idx = rows[:, None, None]
            radius_paper = rad8[rows, self.own_cells[context, arms]]
        mu = means[idx, cells]
        lower, upper = mu.min(axis=2), mu.max(axis=2)
        delta_hat = np.maximum(np.abs(upper[:, 0] - lower[:, 1]), np.abs(upper[:, 1] - lower[:, 0]))
        return delta_hat, radius_paper, rad8[idx, cells].max(axis=(1, 2))


def _positive(name: str, value) -> float:
    try:
        ok = float(value) > 0
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"{name}={value!r} is not allowed; it must be a number > 0")
    return float(value)


@dataclass(frozen=True)
class DecomposedUCBConfig:
    """The knobs of :class:`DecomposedUCB` (D-UCB, C-UCB, UCB), named as in
    ``notebooks/fucb/parameters.yml``.

    Attributes
    ----------
    delta_power : float
        ``δ_t = t^{-delta_power}`` (the paper: 2), ``> 0``.
    unseen_mean : float
        ``μ̂`` of a cell with no observation (ours: 0).
    tie_break : {"first", "random"}
        Ties of the UCB argmax go to the lowest arm code, or uniformly at random (stream ``"ties"``).
    clip_radius : bool
        Cap every cell radius at 1 (ours; off in the paper).
    alpha_r : float
        Scale of the reward radius (1 in Algorithm 1), ``> 0``.

    Raises
    ------
    ValueError
        Naming the field, the value given and what is allowed.
    """

    delta_power: float = 2.0
    unseen_mean: float = 0.0
    tie_break: str = "first"
    clip_radius: bool = False
    alpha_r: float = 1.0

    def __post_init__(self) -> None:
        _check_choice("tie_break", self.tie_break, TIE_BREAKS)
        object.__setattr__(self, "delta_power", _positive("delta_power", self.delta_power))
        object.__setattr__(self, "alpha_r", _positive("alpha_r", self.alpha_r))
        try:
            unseen = float(self.unseen_mean)
        except (TypeError, ValueError):
            raise ValueError(f"unseen_mean={self.unseen_mean!r} is not allowed; it must be a number") from None
        object.__setattr__(self, "unseen_mean", unseen)
        if self.clip_radius not in (True, False):
            raise ValueError(f"clip_radius={self.clip_radius!r} is not allowed; use True or False")
        object.__setattr__(self, "clip_radius", bool(self.clip_radius))


@dataclass(frozen=True, kw_only=True)
class FairUCBConfig(DecomposedUCBConfig):
    """The knobs of :class:`FairUCB` (F-UCB): those of :class:`DecomposedUCBConfig` and

    Attributes
    ----------
    tau : float
        Fairness threshold, ``> 0`` (required).
    fair_radius : {"paper", "diff"}
        The radius of Eq. 12 as printed, or the propagated one (ours; see the estimators).
    alpha_c : float
        Scale of the discrepancy radius (Theorem 3: 1), ``> 0``. (``alpha_r`` scales the reward
        radius, Theorem 3: ``2/(τ − Δ_π0)``.)
    fallback : {"min_ucb_delta", "safe_arm", "unconstrained"}
        When no arm is certified (the paper is silent): the arm of smallest ``UCB_Δ``, ties to the
        larger ``UCB_a`` (ours, the default); a known safe arm ``safe_arm`` (Assumption 3's ``π0``);
        or D-UCB's unconstrained choice.
    safe_arm : int, optional
        The arm played by ``fallback="safe_arm"`` (required then).

    Raises
    ------
    ValueError
        Naming the field, the value given and what is allowed.
    """

    tau: float
    fair_radius: str = "paper"
    alpha_c: float = 1.0
    fallback: str = "min_ucb_delta"
    safe_arm: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _check_choice("fair_radius", self.fair_radius, FAIR_RADII)
        _check_choice("fallback", self.fallback, FALLBACKS)
        object.__setattr__(self, "tau", _positive("tau", self.tau))
        object.__setattr__(self, "alpha_c", _positive("alpha_c", self.alpha_c))
        if self.fallback == "safe_arm" and self.safe_arm is None:
            raise ValueError("safe_arm=None is not allowed with fallback='safe_arm'; give the index of the safe arm")
        if self.safe_arm is not None:
            object.__setattr__(self, "safe_arm", int(self.safe_arm))


def _configure(cls, config, knobs: dict):
    """``config`` (an instance of ``cls``, or ``cls()`` when None) with ``knobs`` replaced."""
    if config is None:
        return cls(**knobs)
    if not isinstance(config, cls):
        raise TypeError(f"config must be a {cls.__name__}, got {type(config).__name__}")
    return dataclasses.replace(config, **knobs) if knobs else config


class DecomposedUCB:
    """UCB on the cells of a node set **W** (Algorithm 1 when **W** is a d-separator).

    Derived in notebooks/fucb/01_dseparation_estimator.md, section 'The d-separation decomposition' (equation
    ``fucb-eq2-dsep-decomposition``).

    Parameters
    ----------
    dec : CellDecomposition
        The cells and the known ``P(W = k | x, do(a))``.
    config : DecomposedUCBConfig, optional
        ``delta_power``, ``unseen_mean``, ``tie_break``, ``clip_radius``, ``alpha_r`` (the defaults
        when omitted).
    name : str
    **knobs
        Fields of the configuration given by keyword (they replace those of ``config``), so
        ``DecomposedUCB(dec, tie_break="random")`` works too.
    """

    config_class = DecomposedUCBConfig

    def __init__(
        self, dec: CellDecomposition, config: DecomposedUCBConfig | None = None, *, name: str = "D-UCB", **knobs
    ):
        config = _configure(self.config_class, config, knobs)
        self.config = config
        self.dec = dec
        self.delta_power = config.delta_power
        self.unseen_mean = config.unseen_mean
        self.tie_break = config.tie_break
        self.clip_radius = config.clip_radius
        self.alpha_r = config.alpha_r
        self.name = name

    def reset(self, streams: RunStreams) -> None:
        self.stats = CellStatistics(streams.n_runs, self.dec.n_cells)
        self._rows = np.arange(streams.n_runs)
        self.ties = streams.per_round("ties", (), "uniform") if self.tie_break == "random" else None

    def _tie_noise(self, t: int):
        return None if self.ties is None else self.ties.at(t)

    def cell_means(self) -> np.ndarray:
        """``μ̂_k``, shape ``(n_runs, n_cells)`` (``unseen_mean`` where ``N_k = 0``)."""
        return running_means(self.stats, self.unseen_mean)

    def arm_ucb(self, t: int, context: np.ndarray, means: np.ndarray | None = None) -> np.ndarray:
        """``UCB_a(t)`` of Eq. 5 for every arm, shape ``(n_runs, n_arms)``."""
        rad = cell_radius(self.stats.counts, log_inv_delta(t, self.delta_power), 2.0, self.clip_radius)
        ucb_w = (self.cell_means() if means is None else means) + self.alpha_r * rad
        return (self.dec.probs[context] * ucb_w[:, None, :]).sum(axis=-1)

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        return argmax_ties(self.arm_ucb(t, context), self._tie_noise(t))

    def update(self, t: int, context, actions: np.ndarray, feedback: dict) -> None:
        self.stats.add(self.dec.realized_cells(feedback), feedback["reward"])

    def compiled(self, env):
        """The compiled fast path against :class:`~.model.CausalBanditEnv`
        (:func:`~.kernels.kernel_for`; F-UCB inherits it), or None for another environment, an
        estimator or a subclass the kernel does not know (registered by :mod:`.kernels`)."""
        return registered_kernel(self, env)


class FairUCB(DecomposedUCB):
    """F-UCB (Algorithm 2): D-UCB among the arms with ``UCB_Δ,a(t) = Δ̂_a + α_c · radius_a ≤ τ``.

    Derived in notebooks/fucb/03_counterfactual_fairness.md, section 'What an estimate can show' (equation
    ``fucb-eq12-discrepancy-radius``).

    Parameters
    ----------
    dec : CellDecomposition
    discrepancy : IdentifiedDiscrepancy or BoundedDiscrepancy
        How ``Δ̂`` is estimated (Eq. 10, or Theorem 2 when not identified).
    config : FairUCBConfig, optional
        ``tau`` and the other knobs (see :class:`FairUCBConfig`); without it ``tau`` must be given
        by keyword.
    name : str
    **knobs
        Fields of :class:`FairUCBConfig` given by keyword (they replace those of ``config``), e.g.
        ``FairUCB(dec, est, tau=0.3, fair_radius="diff")``.

    Per-round diagnostics: ``fallback`` (1 if no arm was certified), ``fair_set_size`` and
    ``own_ucb_delta`` (the chosen arm's ``UCB_Δ`` as this policy computed it).
    """

    config_class = FairUCBConfig

    def __init__(
        self,
        dec: CellDecomposition,
        discrepancy: IdentifiedDiscrepancy | BoundedDiscrepancy,
        config: FairUCBConfig | None = None,
        *,
        name: str = "F-UCB",
        **knobs,
    ):
        super().__init__(dec, config, name=name, **knobs)
        config = self.config
        if config.fallback == "safe_arm" and not 0 <= config.safe_arm < dec.n_arms:
            raise ValueError(f"safe_arm={config.safe_arm!r} is not allowed; use an arm in 0..{dec.n_arms - 1}")
        if discrepancy.dec is not dec:
            raise ValueError("the discrepancy estimator must be built on the same decomposition as the policy")
        self.tau = config.tau
        self.discrepancy = discrepancy
        self.fair_radius = config.fair_radius
        self.alpha_c = config.alpha_c
        self.fallback = config.fallback
        self.safe_arm = config.safe_arm

    def reset(self, streams: RunStreams) -> None:
        super().reset(streams)
        self.last_diagnostics = {}

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
        self.last_diagnostics = {
            "fallback": (~any_fair).astype(float),
            "fair_set_size": fair.sum(axis=1).astype(float),
            "own_ucb_delta": ucb_d[self._rows, chosen],
        }
        return chosen

    def diagnostics(self) -> dict[str, np.ndarray]:
        return self.last_diagnostics


class TrueDeltaFairUCB(DecomposedUCB):
    """F-UCB with the model's true discrepancy (ours, a reference, not the paper's algorithm):
    D-UCB among the arms with ``|Δ(x_t, a)| <= tau``, where ``discrepancy[x, a]`` is exact; when no
    arm qualifies, D-UCB among the arms of smallest ``|Δ(x_t, a)|``. It shows what the fairness
    constraint itself costs, with no estimation of Δ."""

    def __init__(
        self,
        dec: CellDecomposition,
        discrepancy: np.ndarray,
        tau: float,
        config: DecomposedUCBConfig | None = None,
        *,
        name: str = "F-UCB (true Δ)",
        **knobs,
    ):
        super().__init__(dec, config, name=name, **knobs)
        disc = np.abs(np.asarray(discrepancy, dtype=float))
        if disc.shape != dec.probs.shape[:2]:
            raise ValueError(
                f"discrepancy must have shape (n_contexts, n_arms) = {dec.probs.shape[:2]}, got {disc.shape}"
            )
        self.tau = _positive("tau", tau)
        fair = disc <= self.tau
        lowest = disc <= disc.min(axis=1, keepdims=True)
        #: the arms allowed in each context: the fair ones, else those of smallest |Δ|
        self.allowed = np.where(fair.any(axis=1, keepdims=True), fair, lowest)

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        ucb = self.arm_ucb(t, context)
        return argmax_ties(np.where(self.allowed[context], ucb, -np.inf), self._tie_noise(t))


class WidthRecordingUCB(DecomposedUCB):
    """D-UCB that also reports, every round, the width of its choice: the optimistic index of the
    arm it plays minus that arm's exact mean, ``UCB_{a_t}(t) − μ(x_t, a_t)`` (diagnostic ``width``).

    The summand of Proposition 2 (App. D) for a deterministic policy. Its choices are D-UCB's, so a
    run equals :class:`DecomposedUCB`'s run for run; being a subclass, it runs on the numpy path
    (the compiled kernel does not expose the index). ``true_means`` is the exact ``μ(x, a)``, shape
    ``(n_contexts, n_arms)`` (e.g. ``env.means``), never an estimate.
    """

    def __init__(
        self,
        dec: CellDecomposition,
        true_means,
        config: DecomposedUCBConfig | None = None,
        *,
        name: str = "D-UCB",
        **knobs,
    ):
        super().__init__(dec, config, name=name, **knobs)
        self.true_means = np.asarray(true_means, dtype=float)
        if self.true_means.shape != dec.probs.shape[:2]:
            raise ValueError(
                f"true_means has shape {self.true_means.shape}; the decomposition needs {dec.probs.shape[:2]}"
            )

    def reset(self, streams: RunStreams) -> None:
        super().reset(streams)
        self.last_diagnostics = {}

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        ucb = self.arm_ucb(t, context)
        chosen = argmax_ties(ucb, self._tie_noise(t))
        self.last_diagnostics = {"width": ucb[self._rows, chosen] - self.true_means[context, chosen]}
        return chosen

    def diagnostics(self) -> dict[str, np.ndarray]:
        return self.last_diagnostics


def linear_features(context_features: np.ndarray, arm_features: np.ndarray, bias: bool = True) -> np.ndarray:
    """``x_{t,a}`` for every context and arm: shape ``(n_contexts, n_arms, d_x + d_a [+ 1])``."""
    cx = np.asarray(context_features, dtype=float)
    ax = np.asarray(arm_features, dtype=float)
    if cx.ndim != 2 or ax.ndim != 2:
        raise ValueError(f"features must be 2-d tables, got shapes {cx.shape} and {ax.shape}")
    parts = [
        np.broadcast_to(cx[:, None, :], (len(cx), len(ax), cx.shape[1])),
        np.broadcast_to(ax[None, :, :], (len(cx), len(ax), ax.shape[1])),
    ]
    if bias:
        parts.append(np.ones((len(cx), len(ax), 1)))
    return np.concatenate(parts, axis=-1)


class FairLinUCB:
    """Fair-LinUCB, **a reconstruction** (ours), vectorised over runs.

    Huang, Zhang and Wu (AAAI 2022, §4.2) compare F-UCB with
    Fair-LinUCB of Huang, Labille, Wu, Lee and Heffernan (arXiv:2010.12102) but describe it only as a
    LinUCB heuristic for correlation-based, group-level user-side fairness under the same linear
    reward. Its rule is not given there and no code is public, so this class is our stand-in, built
    from that description:

    - one shared parameter vector over ``x_{t,a}`` = (user features, video features[, 1]);
    - ridge statistics ``A = λI + Σ x xᵀ``, ``b = Σ r x`` and ``θ̂ = A⁻¹ b`` (LinUCB, Li et al. 2010);
    - score ``θ̂ᵀx + α sqrt(xᵀ A⁻¹ x) − γ |r̄_{S=1}(a) − r̄_{S=0}(a)|``, where ``r̄_g(a)`` is the running
      mean reward that users of group ``g`` got when shown arm ``a`` (0 before the first such round):
      arms whose rewards differ between the groups are penalised.

    Defaults ``α = 1``, ``λ = 1``, ``γ = 1``. ``A⁻¹`` is kept by Sherman-Morrison updates with
    element-wise sums (no BLAS), so a vectorised run equals one-at-a-time runs bit for bit.

    Parameters
    ----------
    features : ndarray, shape (n_contexts, n_arms, d)
        ``x_{t,a}`` (:func:`linear_features`).
    groups : int array, shape (n_contexts,)
        The sensitive group (0 or 1) of every context.
    alpha, lam, gamma : float
        Exploration width, ridge parameter and weight of the group-gap penalty.
    tie_break : {"first", "random"}
    """

    def __init__(
        self,
        features: np.ndarray,
        groups: np.ndarray,
        alpha: float = 1.0,
        lam: float = 1.0,
        gamma: float = 1.0,
        tie_break: str = "first",
        name: str = "Fair-LinUCB",
    ):
        features = np.asarray(features, dtype=float)
        groups = np.asarray(groups, dtype=np.int64)
        if features.ndim != 3:
            raise ValueError(f"features must have shape (n_contexts, n_arms, d), got {features.shape}")
        if groups.shape != (features.shape[0],) or not np.all((groups == 0) | (groups == 1)):
            raise ValueError(f"groups must hold 0 or 1 for each of the {features.shape[0]} contexts")
        for label, v in (("alpha", alpha), ("gamma", gamma)):
            if not v >= 0:
                raise ValueError(f"{label}={v} must be >= 0")
        if not lam > 0:
            raise ValueError(f"lam={lam} must be > 0")
        _check_choice("tie_break", tie_break, TIE_BREAKS)
        self.features, self.groups = features, groups
        self.alpha, self.lam, self.gamma = float(alpha), float(lam), float(gamma)
        self.tie_break = tie_break
        self.name = name
        self.n_arms, self.d = features.shape[1], features.shape[2]

    def reset(self, streams: RunStreams) -> None:
        n = streams.n_runs
        self.a_inv = np.broadcast_to(np.eye(self.d) / self.lam, (n, self.d, self.d)).copy()
        self.b = np.zeros((n, self.d))
        self.group_stats = CellStatistics(n, 2 * self.n_arms)
        self._rows = np.arange(n)
        self.ties = streams.per_round("ties", (), "uniform") if self.tie_break == "random" else None

    def scores(self, t: int, context: np.ndarray) -> np.ndarray:
        """The penalised optimistic score of every arm, shape ``(n_runs, n_arms)``."""
        x = self.features[context]  # (n_runs, n_arms, d)
        theta = (self.a_inv * self.b[:, None, :]).sum(axis=-1)
        mean = (x * theta[:, None, :]).sum(axis=-1)
        ax = (self.a_inv[:, None, :, :] * x[:, :, None, :]).sum(axis=-1)
        width = np.sqrt(np.maximum((ax * x).sum(axis=-1), 0.0))
        counts, sums = self.group_stats.counts, self.group_stats.sums
        gm = np.where(counts > 0, sums / np.maximum(counts, 1.0), 0.0).reshape(-1, 2, self.n_arms)
        gap = np.abs(gm[:, 1] - gm[:, 0])
        return mean + self.alpha * width - self.gamma * gap

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        return argmax_ties(self.scores(t, context), None if self.ties is None else self.ties.at(t))

    def update(self, t: int, context, actions, feedback) -> None:
        x = self.features[context, actions]  # (n_runs, d)
        r = feedback["reward"]
        ax = (self.a_inv * x[:, None, :]).sum(axis=-1)
        denom = 1.0 + (x * ax).sum(axis=-1)
        self.a_inv -= ax[:, :, None] * ax[:, None, :] / denom[:, None, None]
        self.b += r[:, None] * x
        self.group_stats.add(self.groups[context] * self.n_arms + actions, r)

    def compiled(self, env):
        """The compiled fast path against :class:`~.model.CausalBanditEnv`
        (:func:`~.kernels.kernel_for`, registered by :mod:`.kernels`), or None."""
        return registered_kernel(self, env)
