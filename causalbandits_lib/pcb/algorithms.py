"""LinUCB with prior causal bounds and its baselines; UCB with prior causal bounds (vectorised).

- :class:`LinUCB` (configured by a :class:`LinUCBConfig`): plain LinUCB, LinUCB-PCB (Algorithm 4,
  with the clipping of Algorithm 6 as an option) and the warm-started baselines LinUCB_Biased and
  LinUCB_CP;
- :class:`ClippedUCB`: UCB and UCB-PCB (Algorithm 6) on the non-contextual bandit;
- :func:`arm_context_features`: the feature vectors ``x_{c,a}`` of the contextual bandit.

All policies follow :class:`causalbandits_lib.core.protocols.Policy` with state arrays of shape
``(n_runs, ...)``. Prior information (bounds, warm-start estimates) may differ between runs (each
run drawing its own offline data set): give it with a leading axis over *global* run indices, of
length at least ``max(run) + 1``, or without that axis to share it; :meth:`reset` picks the rows of
the runs being simulated, so a run gets the same prior whether simulated alone or with others.

Bit-for-bit equality of vectorised and looped runs
--------------------------------------------------
LinUCB keeps ``A_a^{-1}`` and updates it by Sherman-Morrison; every matrix-vector product is
written as an ordered sum of elementwise products over the ``d`` coordinates (no BLAS, whose
batched kernels may round differently with the batch size), so run ``i`` computes exactly the same
floating-point numbers whatever the number of runs beside it. Internally LinUCB stores the runs
on the last axis (every elementwise operation then loops over runs innermost, about three times
faster than with inner loops of length ``d``); its ``a_inv`` and ``b`` properties give the usual
leading-runs views.

Compiled fast paths
-------------------
:meth:`LinUCB.compiled` and :meth:`ClippedUCB.compiled` return the numba kernels of
:mod:`.kernels` for the core's contextual and non-contextual Bernoulli bandits; they repeat the
arithmetic below operation for operation (the same ordered sums), so both paths agree bit for bit.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from ..core.policies import CellStatistics, argmax_ties
from ..core.streams import RunStreams
from .model import N_ARMS, N_CONTEXTS, arm_bits, context_bits

__all__ = ["CLIPS", "TIE_BREAKS", "arm_context_features", "LinUCBConfig", "LinUCB", "ClippedUCB"]

#: How the optimistic index is clipped by the prior bounds ``[L, U]``.
CLIPS = ("none", "upper", "both")
#: How exact ties of the index are broken: towards the lowest arm, or uniformly at random (stream
#: ``"ties"`` of the policy).
TIE_BREAKS = ("first", "random")


def _check_tie_break(tie_break: str) -> None:
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"tie_break={tie_break!r} is not allowed; use one of {TIE_BREAKS}")


def arm_context_features(intercept: bool = True) -> np.ndarray:
    """Feature vectors ``x_{c,a} = [1, u1, u2, x1, x2]`` (``[c, x_a]`` of Algorithm 4, with an
    intercept of our choosing: without it the vector of arm 00 in context 00 is zero).

    Returns
    -------
    ndarray, shape (4, 4, d)
        Indexed ``[context, arm, :]``; ``d = 5`` (4 without the intercept).
    """
    rows = []
    for c in range(N_CONTEXTS):
        u1, u2 = context_bits(c)
        row = []
        for a in range(N_ARMS):
            x1, x2 = arm_bits(a)
            row.append(([1.0] if intercept else []) + [u1, u2, x1, x2])
        rows.append(row)
    return np.array(rows, dtype=float)


def _ordered_sum_axis1(p: np.ndarray) -> np.ndarray:
    """``Σ_j p[:, j, ...]`` added in index order (elementwise, so bit-stable whatever the number
    of runs; no BLAS)."""
    acc = p[:, 0]
    for j in range(1, p.shape[1]):
        acc = acc + p[:, j]
    return acc


def _ordered_sum_axis2(p: np.ndarray) -> np.ndarray:
    """``Σ_j p[:, :, j, ...]`` added in index order."""
    acc = p[:, :, 0]
    for j in range(1, p.shape[2]):
        acc = acc + p[:, :, j]
    return acc


def _per_run(name: str, value, runs: np.ndarray, tail: tuple[int, ...]) -> np.ndarray | None:
    """The rows of ``value`` for ``runs``: ``value`` has shape ``tail`` (shared) or
    ``(n_total, *tail)`` (per global run index)."""
    if value is None:
        return None
    arr = np.asarray(value, dtype=float)
    if arr.shape == tail:
        return np.broadcast_to(arr, (len(runs),) + tail).copy()
    if arr.ndim == len(tail) + 1 and arr.shape[1:] == tail:
        if runs.max() >= arr.shape[0]:
            raise ValueError(f"{name} has {arr.shape[0]} rows (one per run) but run {int(runs.max())} is simulated")
        return arr[runs].copy()
    raise ValueError(f"{name} has shape {arr.shape}; it must be {tail} or (n_runs, *{tail})")


@dataclass(frozen=True)
class LinUCBConfig:
    """The knobs of :class:`LinUCB` (names as in ``notebooks/pcb/parameters.yml``).

    Attributes
    ----------
    alpha : float
        Exploration weight ``α > 0`` (not given in the paper).
    lam : float
        Ridge penalty ``λ > 0``; Algorithm 4 uses ``A_a = I`` (λ = 1).
    clip : {"none", "upper", "both"}
        How the index is clipped by the prior bounds (see :class:`LinUCB`).
    tie_break : {"first", "random"}
        Exact ties of the index go to the lowest arm, or uniformly at random (stream ``"ties"``).

    Raises
    ------
    ValueError
        Naming the field, the value given and what is allowed.
    """

    alpha: float = 1.0
    lam: float = 1.0
    clip: str = "none"
    tie_break: str = "random"

    def __post_init__(self) -> None:
        for name in ("alpha", "lam"):
            value = getattr(self, name)
            try:
                ok = float(value) > 0
            except (TypeError, ValueError):
                ok = False
            if not ok:
                raise ValueError(f"{name}={value!r} is not allowed; it must be a positive number")
            object.__setattr__(self, name, float(value))
        if self.clip not in CLIPS:
            raise ValueError(f"clip={self.clip!r} is not allowed; use one of {CLIPS}")
        _check_tie_break(self.tie_break)


class LinUCB:
    """Disjoint LinUCB (Li et al. 2010, Chu et al. 2011) with optional prior causal bounds and
    warm start, for ``K`` arms with per-arm ridge models.

    - plain LinUCB: ``upper = lower = None``, no warm start;
    - LinUCB-PCB (Algorithm 4): the index ``UCB_a = θ̂_aᵀx + α·sqrt(xᵀA_a⁻¹x)`` is clipped by the
      prior bounds of the round's context. ``clip="upper"`` is Algorithm 4 as printed,
      ``min(UCB, U)``; ``clip="both"`` is ``max(min(UCB, U), L)`` (the clipping of UCB-PCB,
      Algorithm 6). With ``"both"`` an arm whose ``U`` lies below another arm's ``L`` is never
      pulled; with ``"upper"`` it can be, when the other arm's UCB falls below its own ``L``.
    - LinUCB_Biased / LinUCB_CP: warm start with pseudo-observations, ``A_a += n₀ x xᵀ`` and
      ``b_a += n₀ r̂ x`` for every context (the paper initialises LinUCB "with the estimated
      reward"; the mechanism and weight ``n₀`` are our choice).

    Parameters
    ----------
    features : ndarray, shape (n_contexts, n_arms, d)
        ``x_{c,a}``, e.g. :func:`arm_context_features`.
    config : LinUCBConfig, optional
        ``alpha``, ``lam``, ``clip``, ``tie_break``; the defaults when omitted.
    lower, upper : ndarray, shape (n_contexts, n_arms) or (n_total_runs, n_contexts, n_arms), optional
        Prior bounds ``[L_{a,c}, U_{a,c}]`` indexed ``[context, arm]``.
    warm_weight, warm_reward : ndarray, shapes as ``upper``, optional
        ``n₀`` and ``r̂`` of the warm start (cells with ``n₀ = 0`` or a NaN estimate are skipped).
    **knobs
        Fields of :class:`LinUCBConfig` given by keyword (they replace those of ``config``), so
        ``LinUCB(features, alpha=0.5, clip="both", ...)`` works too.
    """

    def __init__(
        self,
        features: np.ndarray,
        config: LinUCBConfig | None = None,
        *,
        lower=None,
        upper=None,
        warm_weight=None,
        warm_reward=None,
        **knobs,
    ):
        config = LinUCBConfig() if config is None else config
        if knobs:
            config = dataclasses.replace(config, **knobs)
        self.features = np.asarray(features, dtype=float)
        if self.features.ndim != 3:
            raise ValueError(f"features has shape {self.features.shape}; it must be (n_contexts, n_arms, d)")
        self.n_contexts, self.n_arms, self.d = self.features.shape
        clip = config.clip
        if clip == "upper" and upper is None or clip == "both" and (upper is None or lower is None):
            raise ValueError(
                f"clip={clip!r} needs the bounds it clips with (upper{' and lower' if clip == 'both' else ''})"
            )
        if (warm_weight is None) != (warm_reward is None):
            raise ValueError("give both warm_weight and warm_reward, or neither")
        self.config = config
        self.alpha, self.lam, self.clip, self.tie_break = config.alpha, config.lam, clip, config.tie_break
        self._lower_in, self._upper_in = lower, upper
        self._w_in, self._r_in = warm_weight, warm_reward

    def reset(self, streams: RunStreams) -> None:
        runs = streams.runs
        n, k, d = streams.n_runs, self.n_arms, self.d
        tail = (self.n_contexts, self.n_arms)
        self.lower = _per_run("lower", self._lower_in, runs, tail)
        self.upper = _per_run("upper", self._upper_in, runs, tail)
        # State layout: runs on the LAST axis (``features_t``, ``a_inv_t``, ``b_t``), so that every
        # elementwise operation below runs over the runs in its inner loop (with a leading runs
        # axis the inner loops would have length d = 5 and the step would be ~3x slower).
        # :attr:`a_inv` and :attr:`b` give the usual leading-runs views. The compiled kernel
        # (:mod:`.kernels`) updates these arrays in place.
        self.features_t = np.ascontiguousarray(np.moveaxis(self.features, 0, -1))  # (k, d, n_contexts)
        self.a_inv_t = np.broadcast_to((np.eye(d) / self.lam)[None, :, :, None], (k, d, d, n)).copy()
        self.b_t = np.zeros((k, d, n))
        self._rows = np.arange(n)
        weight = _per_run("warm_weight", self._w_in, runs, tail)
        reward = _per_run("warm_reward", self._r_in, runs, tail)
        if weight is not None:
            if np.any(weight < 0):
                raise ValueError("warm_weight must be non-negative")
            usable = (weight > 0) & np.isfinite(reward)
            weight = np.where(usable, weight, 0.0)
            reward = np.where(usable, reward, 0.0)
            for c in range(self.n_contexts):
                x = self.features_t[:, :, np.full(n, c)]  # (k, d, n)
                w = weight[:, c, :].T  # (k, n)
                v = _ordered_sum_axis2(self.a_inv_t * x[:, None, :, :])
                denom = 1.0 + w * _ordered_sum_axis1(v * x)
                self.a_inv_t = self.a_inv_t - (w / denom)[:, None, None, :] * (v[:, :, None, :] * v[:, None, :, :])
                self.b_t = self.b_t + (w * reward[:, c, :].T)[:, None, :] * x
        self.ties = streams.per_round("ties") if self.tie_break == "random" else None
        self.last_x = self.last_v = self.last_vx = None
        self.dominated = np.zeros(n, dtype=bool)

    @property
    def a_inv(self) -> np.ndarray:
        """``A_a⁻¹`` of every run and arm, shape ``(n_runs, n_arms, d, d)`` (a view)."""
        return np.moveaxis(self.a_inv_t, -1, 0)

    @property
    def b(self) -> np.ndarray:
        """``b_a`` of every run and arm, shape ``(n_runs, n_arms, d)`` (a view)."""
        return np.moveaxis(self.b_t, -1, 0)

    def index(self, context: np.ndarray) -> np.ndarray:
        """The (clipped) optimistic index of every arm, shape ``(n_runs, n_arms)``; caches
        ``A_a⁻¹x`` and ``xᵀA_a⁻¹x`` for the update."""
        c = np.asarray(context, dtype=np.int64)
        x = self.features_t[:, :, c]  # (k, d, n)
        v = _ordered_sum_axis2(self.a_inv_t * x[:, None, :, :])  # A⁻¹x, (k, d, n)
        mean = _ordered_sum_axis1(v * self.b_t)
        vx = _ordered_sum_axis1(v * x)
        ucb = (mean + self.alpha * np.sqrt(np.maximum(vx, 0.0))).T  # (n, k)
        if self.clip != "none":
            ucb = np.minimum(ucb, self.upper[self._rows, c])
        if self.clip == "both":
            ucb = np.maximum(ucb, self.lower[self._rows, c])
        self.last_x, self.last_v, self.last_vx = x, v, vx
        return ucb

    def select(self, t: int, context) -> np.ndarray:
        values = self.index(context)
        u = self.ties.at(t) if self.ties is not None else None
        actions = argmax_ties(values, u)
        if self.upper is not None and self.lower is not None:
            c = np.asarray(context, dtype=np.int64)
            best_lower = self.lower[self._rows, c].max(axis=1)
            self.dominated = self.upper[self._rows, c, actions] < best_lower
        return actions

    def update(self, t: int, context, actions: np.ndarray, feedback: dict) -> None:
        # Sherman-Morrison on every arm with weight 1 for the pulled arm and 0 for the others:
        # subtracting an exact zero leaves the other arms' state unchanged and avoids fancy-indexed
        # writes. ``v v^T`` is exactly symmetric, so A⁻¹ stays exactly symmetric.
        x, v = self.last_x, self.last_v
        pulled = (np.arange(self.n_arms)[:, None] == np.asarray(actions)[None, :]).astype(float)  # (k, n)
        coef = pulled / (1.0 + self.last_vx)
        self.a_inv_t = self.a_inv_t - coef[:, None, None, :] * (v[:, :, None, :] * v[:, None, :, :])
        self.b_t = self.b_t + (pulled * np.asarray(feedback["reward"], dtype=float)[None, :])[:, None, :] * x

    def diagnostics(self) -> dict[str, np.ndarray]:
        """``dominated``: whether the arm just pulled had ``U`` below another arm's ``L`` (needs
        both bounds; always False otherwise)."""
        return {"dominated": self.dominated.astype(float)}

    def compiled(self, env):
        """The compiled fast path against the core's
        :class:`~causalbandits_lib.core.environments.ContextualBernoulliBandit`
        (:class:`~.kernels.LinUCBKernel`), or None for any other environment or a subclass of
        either (whose behaviour the kernel does not know)."""
        from ..core.environments import ContextualBernoulliBandit

        if type(self) is not LinUCB or type(env) is not ContextualBernoulliBandit:
            return None
        if env.means.shape != (self.n_contexts, self.n_arms):
            return None
        from .kernels import LinUCBKernel

        return LinUCBKernel(self, env)


class ClippedUCB:
    """UCB with prior causal bounds, UCB-PCB (Algorithm 6), for a non-contextual bandit.

    Derived in notebooks/pcb/04_online_learning.md, section 'UCB-PCB and Theorem 8'
    (equation ``pcb-theorem8-bound``).

    Index ``UCB_a = μ̂_a + sqrt(2 log(1/δ) / N_a)`` with ``δ = 1/T²`` (Theorem 8), ``+∞`` for an
    unplayed arm; with bounds it is clipped to ``max(min(UCB_a, U_a), L_a)`` (line 6). Without
    bounds it is the plain UCB of Theorem 8's comparison.

    Parameters
    ----------
    n_arms : int
    horizon : int
        ``T``, which sets ``δ = 1/T²``.
    lower, upper : ndarray, shape (n_arms,) or (n_total_runs, n_arms), optional
    tie_break : {"first", "random"}
        Exact ties go to the lowest arm, or uniformly at random (stream ``"ties"``).
    """

    def __init__(self, n_arms: int, horizon: int, lower=None, upper=None, tie_break: str = "random"):
        if int(n_arms) < 1:
            raise ValueError(f"n_arms={n_arms} must be at least 1")
        if int(horizon) < 2:
            raise ValueError(f"horizon={horizon} must be at least 2 (δ = 1/T²)")
        if (lower is None) != (upper is None):
            raise ValueError("give both lower and upper bounds, or neither")
        _check_tie_break(tie_break)
        self.n_arms, self.horizon = int(n_arms), int(horizon)
        self.log_inv_delta = 2.0 * np.log(self.horizon)
        self._lower_in, self._upper_in = lower, upper
        self.tie_break = tie_break

    def reset(self, streams: RunStreams) -> None:
        tail = (self.n_arms,)
        self.lower = _per_run("lower", self._lower_in, streams.runs, tail)
        self.upper = _per_run("upper", self._upper_in, streams.runs, tail)
        self.stats = CellStatistics(streams.n_runs, self.n_arms)
        self.ties = streams.per_round("ties") if self.tie_break == "random" else None

    def index(self) -> np.ndarray:
        counts = self.stats.counts
        with np.errstate(divide="ignore"):
            bonus = np.sqrt(2.0 * self.log_inv_delta / counts)
        ucb = np.where(counts > 0, self.stats.means() + bonus, np.inf)
        if self.upper is not None:
            ucb = np.maximum(np.minimum(ucb, self.upper), self.lower)
        return ucb

    def select(self, t: int, context=None) -> np.ndarray:
        u = self.ties.at(t) if self.ties is not None else None
        return argmax_ties(self.index(), u)

    def update(self, t: int, context, actions: np.ndarray, feedback: dict) -> None:
        self.stats.add(actions, feedback["reward"])

    def compiled(self, env):
        """The compiled fast path against the core's
        :class:`~causalbandits_lib.core.environments.BernoulliBandit`
        (:class:`~.kernels.ClippedUCBKernel`), or None for any other environment or a subclass of
        either."""
        from ..core.environments import BernoulliBandit

        if type(self) is not ClippedUCB or type(env) is not BernoulliBandit or env.n_arms != self.n_arms:
            return None
        from .kernels import ClippedUCBKernel

        return ClippedUCBKernel(self, env)
