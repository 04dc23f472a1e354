"""CCLB, epsilon-CCLB and the baselines OFULog+ and GLM-UCB as runner policies, vectorised over runs.

Every policy follows :class:`causalbandits_lib.core.protocols.Policy` and reads a
:class:`~causalbandits_lib.cclb.environment.FairContext` (factual and counterfactual features of the
round's candidates). Randomness: only the per-run stream ``ties`` (one uniform per round, used to
break exact ties), so two policies simulated with the same seed break ties with the same numbers.

- :class:`OFULogPlus` (Lee, Yun and Jun 2024): norm-constrained MLE, loss-based confidence set
  (Eq. 10), play ``argmax_d max_{theta in C_t} x_d^T theta``. Unconstrained.
- :class:`CCLB` (Algorithm 1; with ``eps > 0``, Algorithm 2): the same ``theta~_t`` (the optimistic
  parameter of the optimistic decision), then the greedy step
  ``d_t = argmax_d r~_t(d) - phi_t (|Delta~_t(d)| - tau)`` and one projected dual step
  ``phi_{t+1} = Proj_[0, rho](phi_t + (|Delta~_t(d_t)| - tau + eps) / eta)`` with ``eta = sqrt(T) / rho``.
  Lines 4-5 and Eq. (11) are **reconstructed** (the supplied text lost them).
- :class:`GLMUCB` (Filippi et al. 2010) with the constants of the Faury/Lee public code: ridge
  ``lambda = n``, bonus ``rho_t ||x||_{V_t^{-1}}``, lazy MLE updates.

The knobs of the CCLB family are frozen dataclasses validated on construction: :class:`OFULogConfig`
(the estimation and the optimistic step, shared by the family) and :class:`CCLBConfig` (adds the
horizon, the threshold and the dual step). A policy takes a config, or the config's fields as
keywords (``CCLB(2000, eps=0.14, alpha=0.05)``).

The optimistic step is computed exactly (``optimistic="exact"``: cvxpy, one convex program per
candidate and run, on the raw observations; slow, for short horizons), by sequential quadratic
approximation with certified bounds (``optimistic="sqp"``, the default for long runs, usually on
the binned loss of :class:`~causalbandits_lib.cclb.history.BinnedHistory`), or on the quadratic
model of the loss at the MLE (``optimistic="quadratic"``, shown to be a poor approximation).

Parameters ``tau``, ``rho``, ``eps`` and ``horizon`` of :class:`CCLB` may be lists, one value per
configuration: simulated with ``simulate(..., replications=n)`` the runs are laid out as
configurations x replications (:class:`~causalbandits_lib.core.streams.RunStreams`), which the
policies read from the streams they are reset with, so one simulation steps every configuration,
all of them facing the same random numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np
from scipy.special import expit

from ..core.policies import argmax_ties
from ..core.streams import RunStreams
from .confidence import analysis_ridge, beta_squared, constrained_mle, optimistic_exact, weighted_gram
from .environment import FairContext, FairLogisticBandit
from .features import FEATURE_MAPS
from .history import BinnedHistory, LogisticHistory
from .kernels import kernel_for
from .model import S_DEFAULT
from .optimism import ball_halfspace_support, model_support, support_points

__all__ = [
    "OPTIMISTIC_METHODS",
    "TIE_RULES",
    "fairer_tie",
    "OFULogConfig",
    "CCLBConfig",
    "dual_step",
    "OFULogPlus",
    "CCLB",
    "GLMUCB",
]

OPTIMISTIC_METHODS = ("sqp", "exact", "quadratic")
#: How a policy breaks a tie of its optimistic (reward) index: uniformly at random, or toward the
#: decision of smaller estimated ``|Delta~_t(d)|`` (then at random among equally fair ones).
TIE_RULES = ("random", "fairer")

#: A number, or one number per configuration.
PerConfig = Union[float, Sequence[float]]


def _require(ok: bool, field: str, value, allowed: str) -> None:
    if not ok:
        raise ValueError(f"{field}={value!r} is not allowed: {allowed}")


@dataclass(frozen=True)
class OFULogConfig:
    """The knobs of OFULog+ (Lee et al. 2024), shared by the CCLB family: estimation and optimistic step.

    Names follow ``notebooks/cclb/parameters.yml`` where it has the knob (``alpha``,
    ``beta_denominator``, ``loss_bins``). Every field is checked on construction; an error names the
    field, the value and what is allowed.

    Attributes
    ----------
    S : float > 0
        Known bound on ``||theta*||`` (Assumption 1).
    alpha : float in (0, 1]
        Failure level of the confidence set (the paper sets none for its experiments; 0.05 ours).
    beta_denominator : float > 0
        4 (supplied text) or 2 (Lee et al.'s code) in ``beta_t`` (Eq. 10).
    optimistic : {"sqp", "exact", "quadratic"}
        How ``max_{theta in C_t} x^T theta`` is computed (see the module docstring).
    loss_bins : int >= 0
        0: the loss uses the raw observations; otherwise the binned summary with this many bins of
        the decision per context (:class:`~causalbandits_lib.cclb.history.BinnedHistory`). The
        exact mode always uses the raw observations.
    sqp_iterations : int >= 1
        Linearisations of the loss per round in the ``"sqp"`` mode, the first at the last
        optimistic parameter of the same observed context and anchor.
    anchors : int >= 2; extra_solves : int >= 0
        Decisions solved in every round (spread over the round's range, extremes included) and
        the most further candidates solved when the certified bound cannot rule them out.
    feature_map : str
        The known feature map (a key of :data:`~causalbandits_lib.cclb.features.FEATURE_MAPS`).
    mle_warmup : int >= 0; mle_steps : int >= 1
        Newton steps per round: to convergence while ``t < mle_warmup``, then ``mle_steps``
        warm-started steps (the exact mode always iterates to convergence).
    tie_atol : float >= 0
        Optimistic values within this of the best are tied.
    tie_rule : {"random", "fairer"}
        How ties of the optimistic value are broken: ``"random"`` by the per-run uniform;
        ``"fairer"`` toward the tied decision of smallest estimated ``|Delta~_t(d)|`` (computed with
        the optimistic parameter of the decision the uniform picks), the uniform breaking what
        remains. With the ``unit_norm`` map every ``d > 0`` of the context ``a = w = m = 0`` has
        the same feature, so such ties are frequent there (issue 16).
    """

    S: float = S_DEFAULT
    alpha: float = 0.05
    beta_denominator: float = 4.0
    optimistic: str = "sqp"
    loss_bins: int = 16
    sqp_iterations: int = 2
    anchors: int = 3
    extra_solves: int = 1
    feature_map: str = "unit_norm"
    mle_warmup: int = 100
    mle_steps: int = 1
    tie_atol: float = 1e-9
    tie_rule: str = "random"

    def __post_init__(self):
        _require(self.S > 0, "S", self.S, "it must be positive")
        _require(0 < self.alpha <= 1, "alpha", self.alpha, "it must lie in (0, 1]")
        _require(self.beta_denominator > 0, "beta_denominator", self.beta_denominator, "it must be positive")
        allowed = f"use one of {OPTIMISTIC_METHODS}"
        _require(self.optimistic in OPTIMISTIC_METHODS, "optimistic", self.optimistic, allowed)
        for name, least in (("loss_bins", 0), ("sqp_iterations", 1), ("anchors", 2), ("extra_solves", 0)):
            value = getattr(self, name)
            _require(int(value) == value and value >= least, name, value, f"it must be an integer >= {least}")
        for name, least in (("mle_warmup", 0), ("mle_steps", 1)):
            value = getattr(self, name)
            _require(int(value) == value and value >= least, name, value, f"it must be an integer >= {least}")
        allowed = f"use one of {sorted(FEATURE_MAPS)}"
        _require(self.feature_map in FEATURE_MAPS, "feature_map", self.feature_map, allowed)
        _require(self.tie_atol >= 0, "tie_atol", self.tie_atol, "it must be non-negative")
        _require(self.tie_rule in TIE_RULES, "tie_rule", self.tie_rule, f"use one of {TIE_RULES}")
        for name in ("S", "alpha", "beta_denominator", "tie_atol"):
            object.__setattr__(self, name, float(getattr(self, name)))
        for name in ("loss_bins", "sqp_iterations", "anchors", "extra_solves", "mle_warmup", "mle_steps"):
            object.__setattr__(self, name, int(getattr(self, name)))


def _per_config(value) -> float | tuple[float, ...]:
    """A number, or a tuple of numbers for a list (so that a frozen config stays immutable)."""
    return tuple(value) if isinstance(value, (list, tuple, np.ndarray)) else value


@dataclass(frozen=True)
class CCLBConfig(OFULogConfig):
    """The knobs of CCLB (Algorithm 1) and epsilon-CCLB (Algorithm 2): :class:`OFULogConfig`'s and the dual step's.

    ``horizon``, ``tau``, ``rho`` and ``eps`` may each be a list, one value per configuration of
    the configurations x replications layout. Names follow ``notebooks/cclb/parameters.yml``
    (``tau``, ``rho``, ``eps``; the notebooks' ``T`` is the ``horizon``).

    Attributes
    ----------
    horizon : number >= 1 or list (required)
        ``T``: the dual step is ``1/eta = rho / sqrt(T)`` (Theorem 1's choice ``eta = sqrt(T)/rho``).
    tau : number >= 0 or list
        Fairness threshold of the constraint ``|Delta_t(d)| <= tau``.
    rho : number >= 0 or list
        Truncation of the dual domain; the theory asks ``rho >= 2 / delta``. ``rho = 0`` holds the
        dual variable at zero (then CCLB plays exactly what OFULog+ plays).
    eps : number >= 0 or list
        Tightness of Algorithm 2 (0 gives Algorithm 1).
    score_atol : float >= 0
        Among decisions whose Lagrangian score is within this of the best, the optimistic decision
        is preferred; with ``phi_t = 0`` it is taken outright (it maximises ``r~`` by construction,
        so neither rounding nor the approximate optimistic step can make CCLB leave it). Other ties
        go to the per-run uniform.
    """

    horizon: PerConfig | None = None
    tau: PerConfig = 0.2
    rho: PerConfig = 2 / 0.15
    eps: PerConfig = 0.0
    score_atol: float = 1e-12

    def __post_init__(self):
        super().__post_init__()
        _require(self.horizon is not None, "horizon", None, "CCLB needs its horizon T (a number >= 1 or a list)")
        for label in ("horizon", "tau", "rho", "eps"):
            value = getattr(self, label)
            arr = np.atleast_1d(np.asarray(value, dtype=float))
            finite = arr.ndim == 1 and bool(np.all(np.isfinite(arr)))
            _require(finite, label, value, "it must be a number or a list of numbers")
            if label == "horizon":
                _require(bool(np.all(arr >= 1)), label, value, "it must be at least 1")
            else:
                _require(bool(np.all(arr >= 0)), label, value, "it must be non-negative")
            object.__setattr__(self, label, _per_config(value))
        _require(self.score_atol >= 0, "score_atol", self.score_atol, "it must be non-negative")
        object.__setattr__(self, "score_atol", float(self.score_atol))


def _make_config(kind: type, config, knobs: dict):
    """``config`` itself, or ``kind(**knobs)``; not both."""
    if config is None:
        return kind(**knobs)
    if knobs:
        raise TypeError(f"give either a config or its fields as keywords, not both (got config and {sorted(knobs)})")
    if not isinstance(config, kind):
        raise TypeError(f"config must be a {kind.__name__}, got {type(config).__name__}")
    return config


def dual_step(phi: np.ndarray, gradient: np.ndarray, rho, step) -> np.ndarray:
    """Projected gradient step on the dual (Algorithm 1 line 5): ``clip(phi + step * gradient, 0, rho)``.

    Derived in notebooks/cclb/03_primal_dual.md, section 'The algorithm' (equation
    ``cclb-eq11-primal-dual-step``).

    Parameters
    ----------
    phi, gradient : (R,)
        Current dual variables and the estimated constraint values ``|Delta~_t(d_t)| - tau (+ eps)``.
    rho : float or (R,), >= 0
        Truncation of the dual domain ``[0, rho]``.
    step : float or (R,), >= 0
        ``1 / eta = rho / sqrt(T)``.
    """
    rho = np.asarray(rho, dtype=float)
    step = np.asarray(step, dtype=float)
    if np.any(rho < 0) or np.any(step < 0):
        raise ValueError(f"rho={rho} and step={step} must be non-negative")
    return np.clip(np.asarray(phi, dtype=float) + step * np.asarray(gradient, dtype=float), 0.0, rho)


def fairer_tie(index: np.ndarray, atol: float, delta: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Among the entries of ``index`` within ``atol`` of each row's best, the one of smallest
    ``|delta|``; equally small ones go to the per-run uniform ``u`` (as :func:`argmax_ties`).

    Parameters
    ----------
    index : (R, K) a policy's index (``-inf``: not a candidate); delta : (R, K); u : (R,)
    """
    tied = index >= index.max(axis=1, keepdims=True) - atol
    return argmax_ties(np.where(tied, -np.abs(delta), -np.inf), u)


def _model_rows(model, rows):
    """The quadratic models of the runs ``rows`` (a copy)."""
    out = object.__new__(type(model))
    for name in ("theta0", "grad", "eigval", "eigvec", "center_bar", "center"):
        setattr(out, name, getattr(model, name)[rows])
    return out


class OFULogPlus:
    """OFULog+ (Lee et al. 2024) on the round's factual features; ignores the constraint.

    Parameters
    ----------
    config : OFULogConfig, optional
        The knobs (see :class:`OFULogConfig`).
    **knobs
        Or the config's fields as keywords (not both).
    """

    name = "OFULog+"
    config_type = OFULogConfig

    def __init__(self, config: OFULogConfig | None = None, **knobs):
        c = self.config = _make_config(self.config_type, config, knobs)
        self.S, self.alpha, self.beta_denominator = c.S, c.alpha, c.beta_denominator
        self.optimistic = c.optimistic
        self.loss_bins = 0 if c.optimistic == "exact" else c.loss_bins
        self.sqp_iterations, self.anchors, self.extra_solves = c.sqp_iterations, c.anchors, c.extra_solves
        self.feature_map = c.feature_map
        self.mle_warmup, self.mle_steps = c.mle_warmup, c.mle_steps
        self.tie_atol, self.tie_rule = c.tie_atol, c.tie_rule
        self.ridge = analysis_ridge(self.S)

    # -- state ---------------------------------------------------------------------------------
    def reset(self, streams: RunStreams) -> None:
        self.n_runs = streams.n_runs
        self._ties = streams.per_round("ties", (), "uniform")
        self._rows = np.arange(self.n_runs)
        if self.loss_bins:
            self.history = BinnedHistory(self.n_runs, self.loss_bins, self.feature_map)
        else:
            self.history = LogisticHistory(self.n_runs, BinnedHistory.N_FEATURES)
        n = BinnedHistory.N_FEATURES
        self.theta_hat = np.zeros((self.n_runs, n))
        self._warm = np.full((self.n_runs, 8 * self.anchors, n), np.nan)  # (context, anchor) slots
        self._warm_s = np.full((self.n_runs, 8 * self.anchors), np.nan)
        self._diag: dict[str, np.ndarray] = {}

    # -- estimation ----------------------------------------------------------------------------
    def estimate(self, t: int) -> dict:
        """Update ``theta_hat_t`` on the data before round ``t`` and return the pieces of ``C_t``.

        Returns
        -------
        dict with ``data`` (LogisticData), ``model`` (QuadraticModel of the MLE step), ``beta_sq``
        (float), ``loss_hat`` and ``level = loss_hat + beta_t^2`` (R,) (exact in the exact mode, to
        second order in the last Newton step otherwise).
        """
        data = self.history.data()
        exact = self.optimistic == "exact"
        steps = 100 if (exact or t < self.mle_warmup) else self.mle_steps
        theta, model, _, loss = constrained_mle(
            data,
            self.S,
            theta0=self.theta_hat,
            ridge=self.ridge,
            max_steps=steps,
            tol=1e-13 if exact else 1e-10,
            full_step_below=0.0 if exact else 0.1,
        )
        self.theta_hat = theta
        if exact:
            loss = data.loss(theta)
        beta_sq = float(beta_squared(t + 1, data.n_features, self.S, self.alpha, self.beta_denominator))
        return {"data": data, "model": model, "beta_sq": beta_sq, "loss_hat": loss, "level": loss + beta_sq}

    def optimistic_values(self, t: int, ctx: FairContext):
        """``U_t(x_d) = max_{theta in C_t} x_d^T theta`` and the maximisers, shapes (R, K), (R, K, n).

        In the ``"sqp"`` mode only the candidates marked in ``self.solved`` carry solved values;
        the others carry certified upper bounds.
        """
        x = ctx.x
        est = self.estimate(t)
        self.solved = np.ones(x.shape[:2], dtype=bool)
        if self.optimistic == "exact":
            X, y = self.history.view()
            vals, thetas = np.empty(x.shape[:2]), np.empty(x.shape)
            for r in range(self.n_runs):
                vals[r], thetas[r] = optimistic_exact(
                    X[r], y[r], float(est["loss_hat"][r]), est["beta_sq"], self.S, x[r]
                )
            return vals, thetas
        model = est["model"]
        radius2 = est["beta_sq"] + model.half_dist2(model.to_eig(self.theta_hat))
        if self.optimistic == "quadratic" or self.history.t == 0:
            return model_support(model, radius2, self.S, x)
        return self._optimistic_tracked(ctx, est, (model, radius2))

    def _optimistic_tracked(self, ctx: FairContext, est: dict, fallback):
        """The ``"sqp"`` optimistic step: support points at ``anchors`` decisions spread over the
        round's range (the two extremes included), a certified bound for every other candidate, and
        extra solves for candidates the bound cannot rule out.

        The candidates' raw features ``v_d = (a, w, m, d)`` lie on a segment and the support
        function ``h(v) = max_{theta in C} v^T theta`` is convex, so between two anchors
        ``h(v_d) <= (1 - l) h(v_j) + l h(v_{j+1})``; both feature maps are ``f(v) = c(v) v`` with
        ``c(v) > 0``, so ``U(d) = c(v_d) h(v_d)`` obeys the same chord bound. The cuts returned by
        :func:`~causalbandits_lib.cclb.optimism.support_points` give a second bound
        (:func:`~causalbandits_lib.cclb.optimism.ball_halfspace_support`). Up to ``extra_solves``
        candidates whose bound exceeds the best solved value are then solved (best bound first).
        Ties between an unsolved and a solved candidate go to the solved one. The diagnostic
        ``uncertified`` flags the rounds where candidates remained open.
        """
        data, level = est["data"], est["level"]
        rows = self._rows
        x, raw = ctx.x, ctx.raw
        R, K, n = x.shape
        J = self.anchors
        d = raw[..., -1]
        lo, hi = np.argmin(d, axis=1), np.argmax(d, axis=1)
        frac = np.linspace(0.0, 1.0, J)
        anchor_raw = raw[rows, lo][:, None] + frac[None, :, None] * (raw[rows, hi] - raw[rows, lo])[:, None]
        anchor_x = FEATURE_MAPS[self.feature_map](anchor_raw)
        anchor_d = anchor_raw[..., -1]
        slots = J * ctx.code[:, None] + np.arange(J)[None, :]
        warm = self._warm[rows[:, None], slots]
        start = np.where(np.isfinite(warm), warm, self.theta_hat[:, None, :])
        hint = self._warm_s[rows[:, None], slots]
        val_a, th_a, nxt, (cut_a, cut_b), s_new = support_points(
            data,
            level,
            self.S,
            anchor_x,
            start,
            fallback,
            self.sqp_iterations,
            self.ridge,
            s_hint=hint,  # per column: a slot without a hint yet (NaN) starts the bracketed search
            inside_point=self.theta_hat,
        )
        self._warm[rows[:, None], slots] = nxt
        self._warm_s[rows[:, None], slots] = s_new
        vnorm = np.sqrt(np.sum(raw * raw, axis=-1))
        scale = np.divide(np.sqrt(np.sum(x * x, axis=-1)), vnorm, out=np.zeros_like(vnorm), where=vnorm > 0)  # c(v_d)
        an = np.sqrt(np.sum(anchor_raw * anchor_raw, axis=-1))
        ascale = np.divide(np.sqrt(np.sum(anchor_x * anchor_x, axis=-1)), an, out=np.zeros_like(an), where=an > 0)
        h_a = np.divide(val_a, ascale, out=np.zeros_like(val_a), where=ascale > 0)
        span = anchor_d[:, -1] - anchor_d[:, 0]
        pos = np.divide((d - anchor_d[:, :1]) * (J - 1), span[:, None], out=np.zeros_like(d), where=span[:, None] > 0)
        seg = np.clip(np.floor(pos).astype(np.int64), 0, J - 2)
        lam = np.clip(pos - seg, 0.0, 1.0)
        values = scale * (
            (1 - lam) * np.take_along_axis(h_a, seg, axis=1) + lam * np.take_along_axis(h_a, seg + 1, axis=1)
        )
        idx = np.stack([seg, seg + 1], axis=-1)  # the two cuts around each candidate
        A = np.take_along_axis(cut_a[:, None], idx[..., None], axis=2)  # (R, K, 2, n)
        B = np.take_along_axis(cut_b[:, None], idx, axis=2)
        values = np.minimum(
            values,
            ball_halfspace_support(x.reshape(-1, n), A.reshape(-1, 2, n), B.reshape(-1, 2), self.S).reshape(R, K),
        )
        thetas = np.zeros(x.shape)
        solved = np.zeros((R, K), dtype=bool)
        for j in range(J):  # candidates identical to an anchor share its solution
            same = np.all(np.abs(x - anchor_x[:, j : j + 1]) <= 1e-15, axis=-1)
            values = np.where(same, val_a[:, j : j + 1], values)
            thetas = np.where(same[..., None], th_a[:, j : j + 1], thetas)
            solved |= same
        fb_model, fb_radius2 = fallback
        for _ in range(self.extra_solves):
            top = np.where(solved, values, -np.inf).max(axis=1)
            open_ = ~solved & (values > top[:, None] + self.tie_atol)
            r = np.flatnonzero(open_.any(axis=1))  # only the runs that need it
            if len(r) == 0:
                break
            best = np.argmax(np.where(open_, values, -np.inf), axis=1)[r]
            near = np.where(lam[r, best] < 0.5, seg[r, best], seg[r, best] + 1)
            v1, t1, _, _, _ = support_points(
                data.rows(r),
                level[r],
                self.S,
                x[r, best][:, None],
                th_a[r, near][:, None],
                (_model_rows(fb_model, r), fb_radius2[r]),
                max(self.sqp_iterations, 3),
                self.ridge,
                s_hint=s_new[r, near][:, None],
                inside_point=self.theta_hat[r],
            )
            values[r, best] = v1[:, 0]
            thetas[r, best] = t1[:, 0]
            solved[r, best] = True
        top = np.where(solved, values, -np.inf).max(axis=1)
        self.uncertified = np.any(~solved & (values > top[:, None] + self.tie_atol), axis=1)
        self.solved = solved
        return values, thetas

    def _optimistic_choice(self, t: int, ctx: FairContext):
        values, thetas = self.optimistic_values(t, ctx)
        u = self._ties.at(t)
        masked = np.where(self.solved, values, -np.inf)
        d0 = argmax_ties(masked, u, atol=self.tie_atol)
        if self.tie_rule == "fairer":
            d0 = fairer_tie(masked, self.tie_atol, self.estimates(ctx.x, ctx.x_cf, thetas[self._rows, d0])[1], u)
        return d0, values, thetas[self._rows, d0], u

    def estimates(self, x: np.ndarray, x_cf: np.ndarray, theta_tilde: np.ndarray):
        """``r~_t(d) = g(x_d^T theta~)`` and ``Delta~_t(d) = g(x'_d^T theta~) - r~_t(d)``, shapes (R, K)."""
        r = expit(np.einsum("rkn,rn->rk", x, theta_tilde))
        r_cf = expit(np.einsum("rkn,rn->rk", x_cf, theta_tilde))
        return r, r_cf - r

    # -- protocol ------------------------------------------------------------------------------
    def select(self, t: int, ctx: FairContext) -> np.ndarray:
        d0, values, _, _ = self._optimistic_choice(t, ctx)
        self._diag = {"optimistic_value": values[self._rows, d0]}
        return d0

    def update(self, t: int, ctx: FairContext, actions: np.ndarray, feedback: dict) -> None:
        rows = self._rows
        self.history.add(ctx.x[rows, actions], feedback["reward"], code=ctx.code, d=ctx.raw[rows, actions, -1])

    def diagnostics(self) -> dict[str, np.ndarray]:
        return dict(self._diag)

    def compiled(self, env):
        """The compiled fast path against :class:`~.environment.FairLogisticBandit`
        (:class:`~.kernels.OFULogKernel`: the ``"sqp"`` and ``"quadratic"`` modes on the binned
        loss; CCLB inherits it), or None for another environment, mode or subclass."""
        if type(env) is not FairLogisticBandit or type(self) not in (OFULogPlus, CCLB):
            return None
        return kernel_for(self, env, cclb=type(self) is CCLB)


class CCLB(OFULogPlus):
    """CCLB (Algorithm 1) and, with ``eps > 0``, epsilon-CCLB (Algorithm 2).

    Derived in notebooks/cclb/03_primal_dual.md, section 'The algorithm' (equation
    ``cclb-eq11-primal-dual-step``).

    Parameters
    ----------
    horizon : int or list of int, optional
        ``T`` (see :class:`CCLBConfig`); required unless ``config`` is given.
    config : CCLBConfig, optional
        The knobs (see :class:`CCLBConfig` and :class:`OFULogConfig`).
    **knobs
        Or the config's fields as keywords (not both): ``tau``, ``rho``, ``eps``, ``alpha``, ...
    """

    name = "CCLB"
    config_type = CCLBConfig

    def __init__(self, horizon: PerConfig | None = None, config: CCLBConfig | None = None, **knobs):
        if horizon is not None:
            knobs["horizon"] = horizon
        super().__init__(config, **knobs)
        c = self.config
        self.horizon, self.tau, self.rho, self.eps = c.horizon, c.tau, c.rho, c.eps
        self.score_atol = c.score_atol
        if np.any(np.asarray(c.eps) > 0):
            self.name = "eps-CCLB"

    def reset(self, streams: RunStreams) -> None:
        super().reset(streams)
        self._tau = streams.per_config(self.tau, "tau")
        self._rho = streams.per_config(self.rho, "rho")
        self._eps = streams.per_config(self.eps, "eps")
        self._step = self._rho / np.sqrt(streams.per_config(self.horizon, "horizon"))  # 1 / eta
        self.phi = np.zeros(streams.n_runs)

    def select(self, t: int, ctx: FairContext) -> np.ndarray:
        d0, values, theta_tilde, u = self._optimistic_choice(t, ctx)
        r, delta = self.estimates(ctx.x, ctx.x_cf, theta_tilde)
        score = r - self.phi[:, None] * (np.abs(delta) - self._tau[:, None])
        best = score.max(axis=1)
        # with phi = 0 the score is r~ alone, which the optimistic decision maximises by construction
        keep = (self.phi == 0) | (score[self._rows, d0] >= best - self.score_atol)
        actions = np.where(keep, d0, argmax_ties(score, u))
        self._est_violation = np.abs(delta[self._rows, actions]) - self._tau
        self._diag = {
            "dual": self.phi.copy(),
            "estimated_violation": self._est_violation,
            "optimistic_value": values[self._rows, d0],
        }
        return actions

    def update(self, t: int, ctx: FairContext, actions: np.ndarray, feedback: dict) -> None:
        super().update(t, ctx, actions, feedback)
        self.phi = dual_step(self.phi, self._est_violation + self._eps, self._rho, self._step)


class GLMUCB:
    """GLM-UCB (Filippi et al. 2010) with the constants of the public code used by Lee et al. (2024).

    Index ``g(x^T theta_hat) + rho_t ||x||_{V_t^{-1}}`` with ``V_t = lambda I + sum x x^T``,
    ``rho_t = (kappa/4) sqrt(2 log(1/alpha) + log det V_t - n log lambda) + sqrt(lambda) S`` and
    ``kappa = 1/g'(S)``; ``theta_hat`` is the ridge-regularised MLE (``lambda/2 ||theta||^2``, our
    reading), updated by ``newton_steps`` Newton steps after every round while fewer than
    ``eager_rounds`` samples are seen, then every ``lazy_every`` rounds. No projection step.
    ``tie_rule="fairer"`` breaks index ties toward the smaller ``|Delta|`` estimated at the MLE.

    Parameters
    ----------
    S, alpha : float
    ridge : float or None
        ``lambda``; default ``n``.
    """

    name = "GLM-UCB"

    def __init__(
        self,
        S: float = S_DEFAULT,
        alpha: float = 0.05,
        ridge: float | None = None,
        newton_steps: int = 5,
        eager_rounds: int = 200,
        lazy_every: int = 5,
        tie_atol: float = 1e-9,
        tie_rule: str = "random",
    ):
        if not S > 0 or not 0 < alpha <= 1:
            raise ValueError(f"need S > 0 and alpha in (0, 1]; got S={S}, alpha={alpha}")
        if ridge is not None and not ridge > 0:
            raise ValueError(f"ridge={ridge} must be positive")
        if newton_steps < 1 or lazy_every < 1 or eager_rounds < 0:
            raise ValueError("newton_steps and lazy_every must be >= 1, eager_rounds >= 0")
        self.S, self.alpha, self.ridge_given = float(S), float(alpha), ridge
        self.newton_steps, self.eager_rounds, self.lazy_every = int(newton_steps), int(eager_rounds), int(lazy_every)
        self.tie_atol = float(tie_atol)
        _require(tie_rule in TIE_RULES, "tie_rule", tie_rule, f"use one of {TIE_RULES}")
        self.tie_rule = tie_rule
        g = expit(self.S)
        self.kappa = 1.0 / (g * (1.0 - g))

    def reset(self, streams: RunStreams) -> None:
        self.n_runs = streams.n_runs
        self._ties = streams.per_round("ties", (), "uniform")
        self._rows = np.arange(self.n_runs)
        n = BinnedHistory.N_FEATURES
        self.n = n
        self.lam = float(n) if self.ridge_given is None else float(self.ridge_given)
        self.history = LogisticHistory(self.n_runs, n)
        self.theta_hat = np.zeros((self.n_runs, n))
        self.V = np.broadcast_to(self.lam * np.eye(n), (self.n_runs, n, n)).copy()
        self.V_inv = np.broadcast_to(np.eye(n) / self.lam, (self.n_runs, n, n)).copy()
        self._diag = {}

    def bonus(self) -> np.ndarray:
        """``rho_t`` per run, shape (R,)."""
        _, logdet = np.linalg.slogdet(self.V)
        return (
            0.25 * self.kappa * np.sqrt(2 * math.log(1 / self.alpha) + logdet - self.n * math.log(self.lam))
            + math.sqrt(self.lam) * self.S
        )

    def select(self, t: int, ctx: FairContext) -> np.ndarray:
        x = ctx.x
        width = np.sqrt(np.einsum("rkn,rnm,rkm->rk", x, self.V_inv, x))
        index = expit(np.einsum("rkn,rn->rk", x, self.theta_hat)) + self.bonus()[:, None] * width
        u = self._ties.at(t)
        actions = argmax_ties(index, u, atol=self.tie_atol)
        if self.tie_rule == "fairer":  # the estimated effect at the MLE
            th = self.theta_hat
            delta = expit(np.einsum("rkn,rn->rk", ctx.x_cf, th)) - expit(np.einsum("rkn,rn->rk", x, th))
            actions = fairer_tie(index, self.tie_atol, delta, u)
        self._diag = {"ucb_index": index[self._rows, actions]}
        return actions

    def update(self, t: int, ctx: FairContext, actions: np.ndarray, feedback: dict) -> None:
        x = ctx.x[self._rows, actions]
        self.history.add(x, feedback["reward"])
        self.V = self.V + np.einsum("rn,rm->rnm", x, x)
        vx = np.einsum("rnm,rm->rn", self.V_inv, x)
        self.V_inv = self.V_inv - np.einsum("rn,rm->rnm", vx, vx) / (1.0 + np.einsum("rn,rn->r", x, vx))[:, None, None]
        if self.history.t < self.eager_rounds or (t % self.lazy_every == 0):
            X, y = self.history.view()
            eye = np.eye(self.n)
            for _ in range(self.newton_steps):
                p = expit(np.einsum("rk,rkt->rt", self.theta_hat, X))
                grad = np.einsum("rkt,rt->rk", X, p - y) + self.lam * self.theta_hat
                hess = weighted_gram(X, p * (1 - p)) + self.lam * eye
                self.theta_hat = self.theta_hat - np.linalg.solve(hess, grad[..., None])[..., 0]

    def diagnostics(self) -> dict[str, np.ndarray]:
        return dict(self._diag)

    def compiled(self, env):
        """The compiled fast path against :class:`~.environment.FairLogisticBandit`
        (:class:`~.glm_kernel.GLMUCBKernel`, every knob and tie rule), or None for another
        environment or a subclass (:func:`.glm_kernel.glm_kernel_for`, imported here on first use:
        the chapter's package does not import it, so that a worker process that needs one light
        module of the chapter does not load the compiled kernels; :mod:`.glm_kernel` does not import
        this module, so there is no import cycle)."""
        from .glm_kernel import glm_kernel_for

        return glm_kernel_for(self, env)
