"""The cclb chapter's CCLB and ε-CCLB on the recommender, through the logistic-link form of its reward.

The recommender's click means are ``μ_k(o) = σ(θ*_{o,k})`` with ``θ* = logit(μ)``
(:meth:`~.model.Instance.logistic_parameters`): with one-hot features ``x_k(o) = e_{(o, k)}`` of the
16 (context, item) cells the model is the logistic bandit of the cclb chapter, exactly (saturated,
so well specified), and ``||x|| = 1`` as its Assumption 2 asks. The counterfactual feature of a
candidate is the cell of the counterfactual context, ``x'_k(o) = e_{(o', k)}`` (the model's
``U = NU + A`` makes ``o'`` known, as for F-UCB), so CCLB's estimated effect
``Δ~_t(k) = σ(θ~_{o',k}) - σ(θ~_{o,k})`` is an estimate of the model's ``Δ_k(o)``.

What is the cclb chapter's and what is ours:

- the learner is :class:`~causalbandits_lib.cclb.algorithms.CCLB` itself (its MLE, the confidence
  set of Eq. 10 with its radius, the "sqp" optimistic step, the Lagrangian choice and the dual step);
- ours: the history. The played features take 16 values only, so the log-loss
  ``Σ_s log(1 + exp(θ_{c_s})) - y_s θ_{c_s}`` is exactly ``Σ_c n_c log(1 + exp(θ_c)) - s_c θ_c`` with the
  cell counts ``n_c`` and click counts ``s_c`` (:class:`CellData`): the raw observations are not
  needed and a round costs the same at ``t = 10`` and ``t = 10^4``. The loss's Hessian is diagonal;
  :class:`CellData` computes it as such (the tests check it against the chapter's
  :class:`~causalbandits_lib.cclb.confidence.LogisticData` on the raw observations);
- ours: the optimistic step solves all four candidates every round (the chapter's chord bound
  between anchors relies on candidates lying on a segment; four one-hot candidates do not), each
  from the previous round's solution of the same (context, item) slot;
- ours: ``S`` (the known bound on ``||θ*||``), ``ρ = 2/δ`` and ``ε`` from the instance's Slater
  margin ``δ`` (:func:`cclb_knobs`);
- ours: the compiled kernel (:mod:`.cell_kernels`, :meth:`LogisticView.compiled`), which takes the
  same steps in the cells' own coordinates (the diagonal Hessian needs no eigendecomposition); the
  classes here stay the readable reference.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..cclb.algorithms import CCLB
from ..cclb.confidence import LogisticData
from ..cclb.environment import FairContext
from ..cclb.optimism import support_points
from ..core.kernels import registered_kernel
from ..core.streams import RunStreams
from . import model as M

__all__ = ["N_CELLS", "CellData", "CellHistory", "CellCCLB", "LogisticView", "slater_margin", "cclb_knobs"]

#: features: one per (context, item) cell, cell ``c = 4 o + k``
N_CELLS = M.N_CONTEXTS * M.N_ITEMS
_EYE = np.eye(N_CELLS)
_CF = np.asarray(M.CF_CONTEXT, dtype=np.int64)


class CellData(LogisticData):
    """The log-loss of one-hot data, ``L(θ) = Σ_c n_c log(1 + exp(θ_c)) - b^T θ``, per run.

    Parameters
    ----------
    counts : (R, n) the cell counts ``n_c``; b : (R, n) the click counts ``s_c``
    """

    def __init__(self, counts: np.ndarray, b: np.ndarray):
        counts = np.asarray(counts, dtype=float)
        super().__init__(np.broadcast_to(np.eye(counts.shape[1]), counts.shape + counts.shape[1:]), counts, b)

    def evaluate(self, theta: np.ndarray, with_loss: bool = True):
        theta = np.asarray(theta, dtype=float)
        single = theta.ndim == 2
        th = theta[:, None, :] if single else theta
        w = self.weights[:, None, :]
        p = expit(th)
        grad = w * p - self.b[:, None, :]
        hess = (w * p * (1.0 - p))[..., None] * np.eye(th.shape[-1])
        loss = self._loss(th) if with_loss else None
        if single:
            return (None if loss is None else loss[:, 0]), grad[:, 0], hess[:, 0]
        return loss, grad, hess

    def _loss(self, th: np.ndarray) -> np.ndarray:
        """``L`` at ``th (R, M, n)``, shape (R, M)."""
        softplus = np.sum(self.weights[:, None, :] * np.logaddexp(0.0, th), axis=-1)
        return softplus - np.sum(th * self.b[:, None, :], axis=-1)

    def loss(self, theta: np.ndarray) -> np.ndarray:
        theta = np.asarray(theta, dtype=float)
        single = theta.ndim == 2
        out = self._loss(theta[:, None, :] if single else theta)
        return out[:, 0] if single else out


class CellHistory:
    """Per run, the plays and clicks of each cell (the exact sufficient statistics of the loss)."""

    def __init__(self, n_runs: int, n_cells: int = N_CELLS):
        self.count = np.zeros((n_runs, n_cells))
        self.clicks = np.zeros((n_runs, n_cells))
        self.t = 0
        self._rows = np.arange(n_runs)

    def add(self, x: np.ndarray, y: np.ndarray, **_) -> None:
        """One observation per run: its one-hot feature ``x (R, n)`` and click ``y (R,)``."""
        cell = np.argmax(x, axis=1)
        self.count[self._rows, cell] += 1.0
        self.clicks[self._rows, cell] += np.asarray(y, dtype=float)
        self.t += 1

    def data(self) -> CellData:
        return CellData(self.count, self.clicks)


class CellCCLB(CCLB):
    """The cclb chapter's :class:`~causalbandits_lib.cclb.algorithms.CCLB` on one-hot cell features:
    the history is :class:`CellHistory` and the optimistic step solves every candidate (see the
    module docstring). Takes :class:`~causalbandits_lib.cclb.algorithms.CCLB`'s arguments."""

    def reset(self, streams: RunStreams) -> None:
        super().reset(streams)
        self.history = CellHistory(self.n_runs)
        self.theta_hat = np.zeros((self.n_runs, N_CELLS))
        self._warm = np.full((self.n_runs, N_CELLS, N_CELLS), np.nan)  # one slot per (context, item)
        self._warm_s = np.full((self.n_runs, N_CELLS), np.nan)

    def _optimistic_tracked(self, ctx: FairContext, est: dict, fallback):
        rows = self._rows
        x = ctx.x
        slots = M.N_ITEMS * ctx.code[:, None] + np.arange(x.shape[1])[None, :]
        warm = self._warm[rows[:, None], slots]
        start = np.where(np.isfinite(warm), warm, self.theta_hat[:, None, :])
        values, thetas, nxt, _, s_new = support_points(
            est["data"],
            est["level"],
            self.S,
            x,
            start,
            fallback,
            self.sqp_iterations,
            self.ridge,
            s_hint=self._warm_s[rows[:, None], slots],
            inside_point=self.theta_hat,
        )
        self._warm[rows[:, None], slots] = nxt
        self._warm_s[rows[:, None], slots] = s_new
        self.solved = np.ones(x.shape[:2], dtype=bool)
        self.uncertified = np.zeros(x.shape[0], dtype=bool)
        return values, thetas


def cell_context(codes: np.ndarray) -> FairContext:
    """The :class:`~causalbandits_lib.cclb.environment.FairContext` of the users ``codes (R,)``:
    factual and counterfactual one-hot features of the four items."""
    codes = np.asarray(codes, dtype=np.int64)
    items = np.arange(M.N_ITEMS)
    x = _EYE[M.N_ITEMS * codes[:, None] + items]
    return FairContext(x, _EYE[M.N_ITEMS * _CF[codes][:, None] + items], codes, x)


class LogisticView:
    """A cclb policy on the recommender: the round's context codes become a
    :class:`~causalbandits_lib.cclb.environment.FairContext` (:func:`cell_context`); the deployed
    distribution is one-hot on the chosen item (diagnostic ``exposure``), beside the policy's own
    diagnostics (the dual variable, the estimated violation)."""

    def __init__(self, inner, name: str):
        self.inner = inner
        self.name = name

    def reset(self, streams: RunStreams) -> None:
        self.inner.reset(streams)
        self._ctx = None
        self._actions = None

    def select(self, t: int, context) -> np.ndarray:
        self._ctx = cell_context(context)
        # the chapter's ball search divides by zero on the way to an infinite multiplier (a cell never
        # played leaves a direction of the loss flat); the result is finite and numpy's warning is noise
        with np.errstate(divide="ignore", invalid="ignore"):
            self._actions = np.asarray(self.inner.select(t, self._ctx), dtype=np.int64)
        return self._actions

    def update(self, t: int, context, actions: np.ndarray, feedback: dict) -> None:
        self.inner.update(t, self._ctx, actions, feedback)

    def diagnostics(self) -> dict[str, np.ndarray]:
        out = dict(self.inner.diagnostics())
        out["exposure"] = np.eye(M.N_ITEMS)[self._actions]
        return out

    def compiled(self, env):
        """The compiled fast path of a :class:`CellCCLB` against :class:`~.model.RecommenderEnv`
        (:class:`~.cell_kernels.CellCCLBKernel`, registered by :mod:`.cell_kernels`), or None for
        another pair; this class stays the readable reference."""
        return registered_kernel(self, env)


def slater_margin(inst: M.Instance, tau: float) -> float:
    """``δ = τ - E_o[min_k Δ_k(o)]``: the slack of the average constraint under the fairest policy
    (every user gets the item of smallest discrepancy). CCLB's theory asks ``δ > 0``."""
    return float(tau - inst.context_probs @ inst.discrepancy.min(axis=1))


def cclb_knobs(inst: M.Instance, tau: float, eps_fraction: float) -> dict:
    """Our settings of CCLB on an instance: ``S = ⌈||θ*||⌉`` (the known bound, the smallest integer
    that holds), ``ρ = 2/δ`` (the theory's choice, as the cclb chapter's ``2/0.15``) and ε-CCLB's
    ``ε = eps_fraction · δ`` (ε must stay below ``δ``)."""
    if not 0 < eps_fraction < 1:
        raise ValueError(f"eps_fraction={eps_fraction} is not allowed: it must lie in (0, 1)")
    delta = slater_margin(inst, tau)
    if not delta > 0:
        raise ValueError(
            f"{inst.name}: no Slater margin at tau={tau:.4g} (delta={delta:.4g}): even the fairest policy "
            "meets the average constraint with no slack; raise tau_quantile"
        )
    S = float(np.ceil(np.linalg.norm(inst.logistic_parameters())))
    return {"S": S, "rho": 2.0 / delta, "eps": eps_fraction * delta}
