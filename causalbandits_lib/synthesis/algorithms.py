"""The chapters' algorithms on the recommender of :mod:`.model`, through thin adapters.

Nothing here re-implements a chapter's algorithm: each policy is the chapter's own class, given the
recommender's cells, contexts or bounds.

- **D-UCB** and **F-UCB** (fucb): :class:`~causalbandits_lib.fucb.algorithms.DecomposedUCB` and
  :class:`~causalbandits_lib.fucb.algorithms.FairUCB` on the cells **W** = (context, item), with the
  discrepancy estimated by :class:`~causalbandits_lib.fucb.algorithms.IdentifiedDiscrepancy` on the
  counterfactual contexts (exact here: the model's ``U = NU + A`` makes the counterfactual user
  known, ours). With **W** = (context, item) D-UCB is UCB per context, the unconstrained baseline.
- **PCB-style bounds** (pcb): the same two learners with every index clipped into each run's sound
  bound ``[L_k(o), U_k(o)]`` (``max(min(UCB, U), L)``, the pcb chapter's UCB-PCB rule), the bound
  computed by :func:`~causalbandits_lib.pcb.estimators.conditioning_bounds` from the run's own log.
- **FairX-UCB** and **FairX-TS** (fairx): the chapter's multi-armed classes, which ignore the context
  (fairness of exposure to items), with one configuration; :class:`ContextFree` squeezes their
  ``(R, G)`` arms to ``(R,)``.

Every adapter exposes the distribution it deployed in the round as the diagnostic ``exposure``
(one-hot on the chosen item for the deterministic learners), from which the experiments compute the
FairX fairness regret of every policy.

Compiled paths: the adapters of D-UCB, F-UCB (with or without the bounds), F-UCB (true Δ) and the
FairX learners hand the simulation to the fucb and fairx chapters' own kernels, the recommender shown
to each in the form it knows (:mod:`.kernels`); the numpy path here stays the reference they equal.

- **CCLB** and **ε-CCLB** (cclb): the chapter's
  :class:`~causalbandits_lib.cclb.algorithms.CCLB` on one-hot features of the (context, item) cells,
  the logistic-link form of the same reward (:mod:`.logistic`, which says what is ours).

CSR (the bestfair chapter's fixed-budget identification) is not a per-round learner; its adapter
is :mod:`.intervention`.
"""

from __future__ import annotations

import numpy as np

from ..core.kernels import registered_kernel
from ..core.streams import RunStreams
from ..fairx.algorithms import FairXTS, FairXUCB
from ..fairx.merit import ExpMerit
from ..fucb.algorithms import DecomposedUCB, FairUCB, IdentifiedDiscrepancy, TrueDeltaFairUCB
from ..fucb.model import CellDecomposition
from ..pcb.estimators import conditioning_bounds
from . import model as M
from .logistic import CellCCLB, LogisticView, cclb_knobs

__all__ = [
    "cell_decomposition",
    "discrepancy_estimator",
    "sound_bounds",
    "CellUCB",
    "CellFairUCB",
    "CellTrueDeltaUCB",
    "ContextFree",
    "BoundedFairXUCB",
    "PCB_PAIRS",
    "CERT_KNOBS",
    "make_policy",
    "POLICIES",
]

#: the policies of the chapter, in the order of the tables
POLICIES = (
    "D-UCB",
    "F-UCB",
    "D-UCB-PCB",
    "F-UCB-PCB",
    "FairX-UCB",
    "FairX-UCB-PCB",
    "FairX-TS",
    "F-UCB (true Δ)",
    "CCLB",
    "ε-CCLB",
)
#: F-UCB-cert (ours, hypotheses H8-H10): F-UCB's rule with the discrepancy radius propagated exactly from
#: the two cells Δ̂ reads (``"diff"``) and each cell's radius Hoeffding's, ``sqrt(log(1/δ_n) / (2N))``
#: = ``α_c · sqrt(8 log(1/δ_n) / N)`` with ``α_c = 1/4`` (notebook 3, "The learners", states why it is
#: valid and when it is narrower than Eq. 12's printed radius)
CERT_KNOBS = {"fair_radius": "diff", "alpha_c": 0.25}
#: the learners the PCB-style bounds apply to (a per-item optimistic index), with their clipped version
PCB_PAIRS = {"D-UCB": "D-UCB-PCB", "F-UCB": "F-UCB-PCB", "FairX-UCB": "FairX-UCB-PCB"}


def cell_decomposition(inst: M.Instance) -> CellDecomposition:
    """**W** = (context, item): ``P(W | o, do(k))`` is a point mass on the cell ``4 o + k``."""
    n_c, n_k = M.N_CONTEXTS, M.N_ITEMS
    probs = np.zeros((n_c, n_k, n_c * n_k))
    for c in range(n_c):
        for k in range(n_k):
            probs[c, k, c * n_k + k] = 1.0
    return CellDecomposition(("O", "I"), (n_c, n_k), probs, inst.means.ravel().copy(), name="(O, I)")


def discrepancy_estimator(dec: CellDecomposition) -> IdentifiedDiscrepancy:
    """F-UCB's Eq. 9-10 estimator with the context of each user with ``A`` set to 0 and to 1."""
    cf = np.zeros((M.N_CONTEXTS, 2), dtype=np.int64)
    for c, (a, _) in enumerate(M.CONTEXTS):
        cf[c, a] = c
        cf[c, 1 - a] = M.CF_CONTEXT[c]
    return IdentifiedDiscrepancy(dec, cf)


def sound_bounds(counts: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Each run's sound bound on ``μ_k(o)`` from its offline log, shape (n_runs, n_contexts, n_items):
    the pcb chapter's ``[min_e, max_e] P̂(Y=1 | k, o, e, S=1)`` with Clopper-Pearson margins, the level
    simultaneous over the 16 (item, context) cells. Sound here for the same reason as there: the
    context blocks every back-door path from the item to the click except through ``H -> E``, which
    the bound's ``min``/``max`` over ``E`` absorbs, and the selection depends on ``E`` only."""
    lo, hi = conditioning_bounds(counts, margin="clopper_pearson", level=level, simultaneous_cells=16)
    return np.swapaxes(lo, -1, -2), np.swapaxes(hi, -1, -2)


def _one_hot(actions: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((len(actions), k))
    out[np.arange(len(actions)), actions] = 1.0
    return out


class _Clipped:
    """Mixin: clip the reward index into per-run bounds ``[L, U]`` (when given), report the
    deployed (one-hot) exposure beside the learner's own diagnostics, and compile to the fucb
    kernel of the adapted class on the recommender (:func:`~.kernels.cell_kernel`)."""

    def _setup_bounds(self, lower, upper):
        if (lower is None) != (upper is None):
            raise ValueError("give both lower and upper bounds, or neither")
        self._lower_in, self._upper_in = lower, upper

    def _reset_bounds(self, streams: RunStreams) -> None:
        if self._lower_in is None:
            self.lower = self.upper = None
            return
        runs = np.asarray(streams.runs)
        lo, hi = np.asarray(self._lower_in, dtype=float), np.asarray(self._upper_in, dtype=float)
        if lo.ndim != 3 or runs.max() >= lo.shape[0]:
            raise ValueError(f"bounds must have shape (n_total_runs, n_contexts, n_items) covering runs {runs.max()}")
        self.lower, self.upper = lo[runs], hi[runs]

    def arm_ucb(self, t: int, context: np.ndarray, means: np.ndarray | None = None) -> np.ndarray:
        ucb = super().arm_ucb(t, context, means)
        if self.lower is None:
            return ucb
        rows = np.arange(len(context))
        return np.maximum(np.minimum(ucb, self.upper[rows, context]), self.lower[rows, context])

    def reset(self, streams: RunStreams) -> None:
        super().reset(streams)
        self._reset_bounds(streams)

    def select(self, t: int, context: np.ndarray) -> np.ndarray:
        actions = super().select(t, context)
        own = getattr(self, "last_diagnostics", {})  # F-UCB's per-round diagnostics, if any
        self._diag = {**own, "exposure": _one_hot(actions, self.dec.n_arms)}
        return actions

    def diagnostics(self) -> dict[str, np.ndarray]:
        return self._diag

    def compiled(self, env):
        """The fucb chapter's kernel on the recommender, with the bounds (None for another
        environment or a subclass: the numpy path runs; registered by :mod:`.kernels`)."""
        return registered_kernel(self, env)


class CellUCB(_Clipped, DecomposedUCB):
    """D-UCB on the cells (context, item), optionally with PCB-style clipped indices."""

    def __init__(self, dec: CellDecomposition, lower=None, upper=None, *, name: str = "D-UCB", **knobs):
        super().__init__(dec, name=name, **knobs)
        self._setup_bounds(lower, upper)


class CellFairUCB(_Clipped, FairUCB):
    """F-UCB on the cells (context, item), optionally with PCB-style clipped reward indices (the
    discrepancy side is not clipped: the bounds are on the reward)."""

    def __init__(self, dec: CellDecomposition, lower=None, upper=None, *, name: str = "F-UCB", **knobs):
        super().__init__(dec, discrepancy_estimator(dec), name=name, **knobs)
        self._setup_bounds(lower, upper)


class CellTrueDeltaUCB(_Clipped, TrueDeltaFairUCB):
    """The fucb chapter's reference "F-UCB (true Δ)": D-UCB among the items whose exact discrepancy
    is at most τ (not a learner of the paper; it shows what the per-decision constraint itself
    costs, without estimating Δ)."""

    def __init__(self, dec: CellDecomposition, discrepancy: np.ndarray, tau: float, *, name: str, **knobs):
        super().__init__(dec, discrepancy, tau, name=name, **knobs)
        self._setup_bounds(None, None)


class BoundedFairXUCB(FairXUCB):
    """FairX-UCB with its confidence box on the context-free means ``μ̄_k`` clipped into each run's
    sound bound on ``μ̄_k = Σ_o P(o) μ_k(o)``, i.e. ``[Σ_o P(o) L_k(o), Σ_o P(o) U_k(o)]`` (the
    PCB-style clipping applied to FairX-UCB's optimistic step; the empirical mean is clipped too,
    as the projected-gradient step starts from it).

    Parameters
    ----------
    lower, upper : ndarray, shape (n_total_runs, n_items)
        The bounds on ``μ̄_k`` of every run index.
    """

    def __init__(self, merit, w0, n_arms: int, lower, upper):
        super().__init__(merit, w0, n_arms)
        self._lower_in, self._upper_in = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)

    def _reset_extra(self, streams: RunStreams) -> None:
        super()._reset_extra(streams)
        runs = np.asarray(streams.runs)
        self.lower, self.upper = self._lower_in[runs][:, None, :], self._upper_in[runs][:, None, :]

    def confidence_box(self, pool=None):
        if pool is not None:
            raise ValueError("BoundedFairXUCB has bounds for the full item set only")
        mean, lower, upper = super().confidence_box(pool)
        lo, hi = self.lower, self.upper
        return np.clip(mean, lo, hi), np.clip(lower, lo, hi), np.clip(upper, lo, hi)


class ContextFree:
    """A FairX multi-armed policy with one configuration, on the contextual recommender: it ignores
    the context; arms and deployed policy lose the configuration axis."""

    def __init__(self, inner, name: str):
        if inner.n_configs != 1:
            raise ValueError(f"{name}: one configuration expected, got {inner.n_configs}")
        self.inner = inner
        self.name = name

    def reset(self, streams: RunStreams) -> None:
        self.inner.reset(streams)

    def select(self, t: int, context) -> np.ndarray:
        return self.inner.select(t, None)[:, 0]

    def update(self, t: int, context, actions: np.ndarray, feedback: dict) -> None:
        self.inner.update(t, None, np.asarray(actions)[:, None], {"reward": np.asarray(feedback["reward"])[:, None]})

    def diagnostics(self) -> dict[str, np.ndarray]:
        return {"exposure": self.inner.policy[:, 0, :]}

    def compiled(self, env):
        """The fairx chapter's kernel of the inner policy on the recommender
        (:func:`~.kernels.context_free_kernel`, registered by :mod:`.kernels`), or None: the numpy
        path runs."""
        return registered_kernel(self, env)


def make_policy(
    name: str,
    inst: M.Instance,
    tau: float,
    merit_c: float = 10.0,
    w0: float = 0.1,
    prior_sd: float = 1.0,
    reward_sd: float = 0.5,
    lower=None,
    upper=None,
    horizon: int | None = None,
    eps_fraction: float = 0.5,
    alpha_c: float | None = None,
):
    """One policy of :data:`POLICIES` for an instance (the ``-PCB`` ones need ``lower``/``upper``,
    CCLB and ε-CCLB their ``horizon`` T; ``alpha_c`` replaces F-UCB-cert's weight of
    :data:`CERT_KNOBS`, an open choice judged over its alternatives).

    D-UCB and F-UCB take the fucb chapter's defaults (the printed radius of Eq. 12, the fallback
    to the smallest ``UCB_Δ``) except random tie-breaking (ours). CCLB and ε-CCLB take the cclb
    chapter's defaults with our ``S``, ``ρ`` and ``ε`` (:func:`~.logistic.cclb_knobs`).
    """
    if name in ("CCLB", "ε-CCLB"):
        if horizon is None:
            raise ValueError(f"{name} needs its horizon T (horizon=None given)")
        knobs = cclb_knobs(inst, tau, eps_fraction)
        eps = knobs["eps"] if name == "ε-CCLB" else 0.0
        return LogisticView(CellCCLB(horizon, tau=tau, S=knobs["S"], rho=knobs["rho"], eps=eps, loss_bins=0), name)
    dec = cell_decomposition(inst)
    knobs = {"tie_break": "random"}
    if name in ("D-UCB", "D-UCB-PCB"):
        b = (lower, upper) if name.endswith("PCB") else (None, None)
        return CellUCB(dec, *b, name=name, **knobs)
    if name in ("F-UCB", "F-UCB-PCB"):
        b = (lower, upper) if name.endswith("PCB") else (None, None)
        return CellFairUCB(dec, *b, name=name, tau=tau, **knobs)
    if name in ("F-UCB-cert", "F-UCB-cert-PCB"):
        b = (lower, upper) if name.endswith("PCB") else (None, None)
        cert = {**CERT_KNOBS, **({} if alpha_c is None else {"alpha_c": float(alpha_c)})}
        return CellFairUCB(dec, *b, name=name, tau=tau, **knobs, **cert)
    if name == "F-UCB (true Δ)":
        return CellTrueDeltaUCB(dec, inst.discrepancy, tau, name=name, **knobs)
    if name == "FairX-UCB":
        return ContextFree(FairXUCB(ExpMerit(merit_c), w0, M.N_ITEMS), name)
    if name == "FairX-UCB-PCB":
        p = inst.context_probs
        lo_bar, hi_bar = np.einsum("rck,c->rk", lower, p), np.einsum("rck,c->rk", upper, p)
        return ContextFree(BoundedFairXUCB(ExpMerit(merit_c), w0, M.N_ITEMS, lo_bar, hi_bar), name)
    if name == "FairX-TS":
        return ContextFree(FairXTS(ExpMerit(merit_c), prior_sd, reward_sd, M.N_ITEMS), name)
    raise ValueError(f"unknown policy {name!r}; known: {POLICIES + ('F-UCB-cert', 'F-UCB-cert-PCB')}")
