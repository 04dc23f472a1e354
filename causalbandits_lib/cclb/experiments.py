"""The comparisons behind the paper's Figures 2, 4 and 5, on a shared generator (common random numbers).

OFULog+, CCLB and epsilon-CCLB differ only in the dual step (OFULog+ is CCLB with the dual
variable held at zero; a test checks the two pick the same decisions), so every configuration of
Figures 2, 4 and 5 runs in **one** vectorised simulation: the runs axis is laid out as
configurations x replications (``simulate(..., replications=reps)``, see
:class:`~causalbandits_lib.core.streams.RunStreams`), and replication ``i`` of every configuration
sees the same contexts and reward noise. GLM-UCB runs separately on the same streams.

The confidence-set notebook needs the played features and outcomes themselves, and probes the
policy before the decision of chosen rounds: :class:`PlayedRounds` is the recorder that keeps them
for :func:`~causalbandits_lib.core.runner.simulate`, on the compiled kernel as on the numpy path.

Two violation metrics are reported (ambiguity A3 of the notes):

- ``[sum_t (|Delta_t(d_t)| - tau)]_+``: the positive part of the sum, Eq. (7), which the theory bounds
  (violations in different rounds cancel);
- ``sum_t [|Delta_t(d_t)| - tau]_+``: the sum of per-round positive parts (no cancellation), which
  the first author's later public code computes.

The paper's list of metrics names "cumulative constraint violations (7)", so Figure 2's claims
(:func:`figure2_checks`) read the violations as Eq. (7); the sum of per-round positive parts is
reported beside them (the notes had recommended the per-round reading for the figure).

Ties (issue 16): with the ``unit_norm`` feature map, about 18% of rounds tie several decisions for
the best reward. :func:`tied_rounds` counts them exactly from the model and :func:`split_by_ties`
splits a paired gap between two algorithms into the part from those rounds and the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np

from ..core import checks
from ..core.checks import Verdict
from ..core.recorders import RecorderBase
from ..core.runner import SimulationResult, simulate
from ..core.streams import RunStreams
from .algorithms import CCLB, GLMUCB, OFULogPlus
from .confidence import LogisticData, beta_squared, constrained_mle
from .environment import FairLogisticBandit
from .generator import RoundGenerator
from .oracle import unconstrained_optimum

__all__ = [
    "LABELS",
    "OTHER_RULE",
    "PER_ROUND_METRICS",
    "Config",
    "paper_configs",
    "run_configs",
    "run_glm_ucb",
    "tied_rounds",
    "split_by_ties",
    "positive_part_of_sum",
    "final_values",
    "Played",
    "PlayedRounds",
    "coverage_gaps",
    "loss_gap_slice",
    "confidence_set_slices",
    "second_half_slope",
    "compare_optimistic_steps",
    "PendingComparison",
    "finish_comparisons",
    "prefix_equals_independent",
    "rate_horizons",
    "rate_test",
    "check_levels_off",
    "independent_horizons",
    "configs_for_horizon",
    "run_per_horizon",
    "values_per_horizon",
    "rate_test_per_horizon",
    "with_se",
    "figure2_checks",
]

LABELS = {"glm_ucb": "GLM-UCB", "ofulog_plus": "OFULog+", "cclb": "CCLB", "eps_cclb": "ε-CCLB"}

#: The alternative of the open choice ``tie_rule`` (each rule's other).
OTHER_RULE = {"fairer": "random", "random": "fairer"}

#: Per-round values kept from the environment's feedback.
PER_ROUND_METRICS = (
    "action",
    "regret",
    "regret_plus",
    "penalized_regret",
    "violation",
    "violation_pos",
    "unconstrained_regret",
)


@dataclass(frozen=True)
class Config:
    """One CCLB-family configuration: ``rho = 0`` is OFULog+, ``eps = 0`` CCLB, ``eps > 0`` epsilon-CCLB."""

    key: str
    label: str
    rho: float
    eps: float
    tau: float
    horizon: int


def paper_configs(
    T: int, tau: float, rho: float, eps: float, eps_values: Sequence[float] = (), tau_values: Sequence[float] = ()
) -> list[Config]:
    """OFULog+, CCLB and epsilon-CCLB (Figure 2), epsilon-CCLB for ``eps_values`` (Figure 4) and CCLB
    for ``tau_values`` (Figure 5), without duplicates."""
    out = [
        Config("ofulog_plus", "OFULog+", 0.0, 0.0, tau, T),
        Config("cclb", "CCLB", rho, 0.0, tau, T),
        Config("eps_cclb", "ε-CCLB", rho, eps, tau, T),
    ]
    for e in eps_values:
        if not any(c.rho == rho and c.eps == e and c.tau == tau for c in out):
            out.append(Config(f"eps_cclb_eps{e:g}", f"ε-CCLB, ε = {e:g}", rho, float(e), tau, T))
    for tv in tau_values:
        if not any(c.rho == rho and c.eps == 0 and c.tau == tv for c in out):
            out.append(Config(f"cclb_tau{tv:g}", f"CCLB, τ = {tv:g}", rho, 0.0, float(tv), T))
    return out


def run_configs(
    generator: RoundGenerator,
    configs: Sequence[Config],
    T: int,
    seed: int,
    reps: int,
    backend: str = "auto",
    **policy_kw,
) -> dict[str, SimulationResult]:
    """Simulate every configuration for ``reps`` replications of ``T`` rounds in one batch
    (``backend`` of :func:`~causalbandits_lib.core.runner.simulate`: ``"auto"`` takes CCLB's
    compiled kernel).

    Returns
    -------
    dict of config key to :class:`SimulationResult` (``(reps, T)`` arrays: :data:`PER_ROUND_METRICS`,
    ``dual`` and ``estimated_violation``).
    """
    configs = list(configs)
    tau = [c.tau for c in configs]
    policy_kw.setdefault("feature_map", generator.feature_map)
    policy = CCLB(
        [c.horizon for c in configs],
        tau=tau,
        rho=[c.rho for c in configs],
        eps=[c.eps for c in configs],
        **policy_kw,
    )
    env = FairLogisticBandit(generator, tau=tau)
    res = simulate(
        env,
        policy,
        T,
        seed,
        n_runs=len(configs) * reps,
        metrics=PER_ROUND_METRICS + ("dual", "estimated_violation"),
        replications=reps,
        backend=backend,
    )
    return {c.key: res.select_runs(slice(i * reps, (i + 1) * reps)) for i, c in enumerate(configs)}


def run_glm_ucb(
    generator: RoundGenerator,
    T: int,
    seed: int,
    reps: int,
    tau: float,
    S: float = 5.0,
    alpha: float = 0.05,
    tie_rule: str = "random",
) -> SimulationResult:
    """GLM-UCB on the same streams as replication ``0..reps-1`` of :func:`run_configs`."""
    return simulate(
        FairLogisticBandit(generator, tau=tau),
        GLMUCB(S=S, alpha=alpha, tie_rule=tie_rule),
        T,
        seed,
        n_runs=reps,
        metrics=PER_ROUND_METRICS,
        replications=reps,
    )


def tied_rounds(generator: RoundGenerator, T: int, seed: int, reps: int) -> np.ndarray:
    """How many decisions tie for the best expected reward in each round, shape (reps, T).

    Exact from ``theta*`` (:func:`~.oracle.unconstrained_optimum`), on the contexts that replication
    ``0..reps-1`` of :func:`run_configs` and :func:`run_glm_ucb` see (the environment's own streams).
    """
    env = FairLogisticBandit(generator)
    env.reset(RunStreams(seed, range(reps), replications=reps).child("env/"))
    blk = env.block(0, T)
    return unconstrained_optimum(blk["reward"], blk["reward"])["n_tied"]


def split_by_ties(a: np.ndarray, b: np.ndarray, tied: np.ndarray) -> dict[str, np.ndarray]:
    """Per run, the total of ``b - a`` over the rounds (two algorithms' per-round values on common
    random numbers) and its parts from the ``tied`` rounds and from the others, shapes (reps,).

    Parameters
    ----------
    a, b : (reps, T) per-round values; tied : (reps, T) bool
    """
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    in_tied = np.where(tied, diff, 0.0).sum(axis=1)
    total = diff.sum(axis=1)
    return {"total": total, "tied": in_tied, "untied": total - in_tied}


def positive_part_of_sum(violation: np.ndarray) -> np.ndarray:
    """``[sum_{s <= t} v_s]_+`` for every prefix ``t``, shape (R, T) (Eq. 7 along the horizon)."""
    return np.maximum(np.cumsum(np.asarray(violation, dtype=float), axis=1), 0.0)


def final_values(result: SimulationResult, horizons: Sequence[int] | None = None) -> dict[str, np.ndarray]:
    """Cumulative totals per run at the end (or at each of ``horizons``, as prefixes).

    Returns
    -------
    dict with ``regret``, ``regret_plus``, ``penalized_regret``, ``violation_sum_of_positive_parts``
    (``sum_t [v_t]_+``) and ``violation_positive_part_of_sum`` (``[sum_t v_t]_+``), each of shape
    (R,) or (R, len(horizons)).
    """
    idx = np.array([result.T]) if horizons is None else np.asarray(list(horizons))
    if np.any(idx < 1) or np.any(idx > result.T):
        raise ValueError(f"horizons must lie in [1, {result.T}], got {idx.tolist()}")
    cum = {
        k: np.cumsum(result[k], axis=1)[:, idx - 1]
        for k in ("regret", "regret_plus", "penalized_regret", "violation_pos", "violation")
    }
    out = {
        "regret": cum["regret"],
        "regret_plus": cum["regret_plus"],
        "penalized_regret": cum["penalized_regret"],
        "violation_sum_of_positive_parts": cum["violation_pos"],
        "violation_positive_part_of_sum": np.maximum(cum["violation"], 0.0),
    }
    return {k: (v[:, 0] if horizons is None else v) for k, v in out.items()}


@dataclass
class Played:
    """What :class:`PlayedRounds` kept.

    Attributes
    ----------
    X : (R, n, T) played features; y : (R, T) outcomes; actions : (R, T) int
    probes : list
        The returns of the probe, one per probed round, in round order.
    """

    X: np.ndarray
    y: np.ndarray
    actions: np.ndarray
    probes: list


class PlayedRounds(RecorderBase):
    """Keep the raw played features ``x_t = f(Z_t(d_t))``, outcomes and actions, and probe the run.

    Before the decision of each round ``t`` in ``rounds`` (0-based), ``probe(t, ctx, X, y, policy)``
    is called with the data of ``C_t``: ``X (R, n, t)`` and ``y (R, t)``, the rounds before ``t``
    (views of the recorder's arrays: copy what must outlive the call). The probe must not change the
    policy (probe a copy).

    The recorder takes whole blocks of rounds from the compiled kernel (the played features
    ``played_x``, the outcome ``reward`` and the ``action`` of every round) and names the rounds it
    probes (``probe_rounds``), so the runner keeps the kernel and ends a block before each of them;
    the probe then sees the policy as the numpy path leaves it after round ``t - 1`` (its estimates
    within the kernel's 1e-9 of numpy's). Without a probe it probes nothing.

    Parameters
    ----------
    rounds : sequence of int
        The probed rounds (empty: keep the data only).
    probe : callable, optional
    name : str
        Key of the result in ``SimulationResult.recorded``.
    """

    block_inputs = ("action", "reward", "played_x")

    def __init__(self, rounds: Sequence[int] = (), probe: Callable | None = None, name: str = "played"):
        self.rounds = set(int(r) for r in rounds)
        self.probe = probe
        self.probe_rounds = tuple(sorted(self.rounds)) if probe is not None else ()
        self.name = name

    def start(self, T: int, runs: np.ndarray) -> None:
        super().start(T, runs)
        self.X = None
        self._rows = np.arange(len(self.runs))
        self.y = np.zeros((len(self.runs), self.T))
        self.actions = np.zeros((len(self.runs), self.T), dtype=np.int64)
        self.probes: list[Any] = []

    def _allocate(self, n: int) -> None:
        if self.X is None:
            self.X = np.zeros((len(self.runs), n, self.T))

    def before_decision(self, t: int, ctx, policy) -> None:
        self._allocate(ctx.x.shape[-1])
        if t in self.rounds and self.probe is not None:
            self.probes.append(self.probe(t, ctx, self.X[:, :, :t], self.y[:, :t], policy))

    def after_round(self, t: int, ctx, actions: np.ndarray, feedback, policy) -> None:
        self.X[:, :, t] = ctx.x[self._rows, actions]
        self.y[:, t] = feedback["reward"]
        self.actions[:, t] = actions

    def after_block(self, t0: int, t1: int, values) -> None:
        played = values["played_x"]  # (R, t1 - t0, n)
        self._allocate(played.shape[-1])
        self.X[:, :, t0:t1] = np.swapaxes(played, 1, 2)
        self.y[:, t0:t1] = values["reward"]
        self.actions[:, t0:t1] = values["action"]  # whole numbers stored as floats: exact

    def result(self) -> Played:
        return Played(self.X, self.y, self.actions, self.probes)


def coverage_gaps(
    X: np.ndarray,
    y: np.ndarray,
    theta_star,
    checkpoints: Sequence[int],
    S: float,
    alpha: float,
    beta_denominator: float = 4.0,
) -> np.ndarray:
    """``(L_t(theta*) - L_t(theta_hat_t)) / beta_t^2`` at each checkpoint and run (exact MLE on the
    raw data of the rounds before ``t``); ``theta*`` lies in ``C_t`` iff the value is at most 1.

    Returns
    -------
    (R, len(checkpoints))
    """
    theta_star = np.asarray(theta_star, dtype=float)
    R = X.shape[0]
    out = np.zeros((R, len(checkpoints)))
    for j, t in enumerate(checkpoints):
        data = LogisticData.from_observations(X[:, :, :t], y[:, :t])
        theta, _, _, _ = constrained_mle(data, S, max_steps=200, tol=1e-13)
        gap = data.loss(np.broadcast_to(theta_star, (R, len(theta_star)))) - data.loss(theta)
        out[:, j] = gap / beta_squared(t + 1, X.shape[1], S, alpha, beta_denominator)
    return out


def loss_gap_slice(
    X: np.ndarray,
    y: np.ndarray,
    S: float,
    center: np.ndarray,
    e1: np.ndarray,
    e2: np.ndarray,
    extent: float,
    n_grid: int,
    chunk: int = 512,
    compiled: bool = True,
):
    """``L_t(theta) - L_t(theta_hat_t)`` on the plane ``theta = center + u e1 + v e2`` for one run's
    raw data ``X (n, t)``, ``y (t,)`` (a picture of the confidence set ``{gap <= beta_t^2}``).

    The grid's losses are those of :func:`~.theory.losses_at_points` (compiled; equal to
    :meth:`~.confidence.LogisticData.loss` to rounding), or with ``compiled=False`` of the latter
    in chunks of ``chunk`` points (the readable reference).

    Returns
    -------
    u : (n_grid,) grid coordinates (the same for ``v``); gap : (n_grid, n_grid) indexed ``[v, u]``;
    points : (n_grid, n_grid, n); theta_hat : (n,)
    """
    data = LogisticData.from_observations(X[None], y[None])
    theta_hat, _, _, _ = constrained_mle(data, S, max_steps=200, tol=1e-13)
    u = np.linspace(-extent, extent, n_grid)
    pts = center[None, None, :] + u[None, :, None] * e1[None, None, :] + u[:, None, None] * e2[None, None, :]
    flat = pts.reshape(-1, pts.shape[-1])
    if compiled:
        from .theory import losses_at_points

        vals = losses_at_points(data, flat)
    else:
        vals = np.concatenate([data.loss(flat[i : i + chunk][None])[0] for i in range(0, len(flat), chunk)])
    return u, vals.reshape(n_grid, n_grid) - data.loss(theta_hat)[0], pts, theta_hat[0]


def confidence_set_slices(
    X: np.ndarray,
    y: np.ndarray,
    theta_star,
    rounds: Sequence[int],
    S: float,
    alpha: float,
    beta_denominator: float = 4.0,
    extent: float = 8.0,
    n_grid: int = 161,
) -> dict:
    """Slices of one run's confidence sets ``C_t`` at several rounds, in one plane (a picture of
    how the set shrinks; notebook ``cclb/02``).

    The plane passes through the MLE ``theta_hat_T`` of all the data, spanned by the direction
    towards ``theta*`` and the decision's coordinate (orthogonalised). Inside ``C_t`` means
    ``gap / beta_t^2 <= 1`` and ``||theta|| <= S``: the zero level of the larger of the two scaled
    excesses.

    Parameters
    ----------
    X : (n, T); y : (T,)
        One run's raw data.
    rounds : the rounds ``t`` (data of the first ``t`` rounds)

    Returns
    -------
    dict with ``u`` (n_grid,) the grid coordinates; ``levels`` {t: (n_grid, n_grid)} (``<= 0``
    inside ``C_t``, indexed ``[v, u]``); ``ball`` (n_grid, n_grid) ``||theta|| - S``; ``star`` (2,)
    the coordinates of ``theta*``.
    """
    n = X.shape[0]
    theta_star = np.asarray(theta_star, dtype=float)
    data = LogisticData.from_observations(X[None], y[None])
    center, _, _, _ = constrained_mle(data, S, max_steps=200, tol=1e-13)
    center = center[0]
    e1 = theta_star - center
    e1 = e1 / np.linalg.norm(e1) if np.linalg.norm(e1) > 1e-9 else np.eye(n)[0]
    e2 = np.eye(n)[n - 1] - (np.eye(n)[n - 1] @ e1) * e1
    e2 /= np.linalg.norm(e2)
    levels = {}
    for t in rounds:
        u, gap, pts, _ = loss_gap_slice(X[:, :t], y[:t], S, center, e1, e2, extent, n_grid)
        levels[t] = np.maximum(
            gap / beta_squared(t, n, S, alpha, beta_denominator) - 1, np.linalg.norm(pts, axis=-1) / S - 1
        )
    star = theta_star - center
    ball = np.linalg.norm(pts, axis=-1) - S
    return {"u": u, "levels": levels, "ball": ball, "star": np.array([star @ e1, star @ e2])}


def second_half_slope(curve: np.ndarray) -> float:
    """``log2(V(T) / V(T/2))`` of the mean over runs of a cumulative curve ``(n_runs, T)``: 1 for
    linear growth, 0.5 for ``sqrt(T)``, 0 when flat (and when the curve ends at zero); ``inf`` when
    it rises from zero in the second half."""
    mean = np.asarray(curve).mean(axis=0)
    T = len(mean)
    half, end = mean[T // 2 - 1], mean[-1]
    if end <= 1e-9:
        return 0.0
    return float(np.log2(end / half)) if half > 1e-9 else float("inf")


def compare_optimistic_steps(
    t: int,
    ctx,
    X: np.ndarray,
    y: np.ndarray,
    policy,
    runs: Sequence[int],
    jobs: int = 1,
    scheduler: str | None = None,
    defer: bool = False,
) -> "dict[str, np.ndarray] | PendingComparison":
    """At round ``t`` of a run of ``policy`` (an :class:`OFULogPlus` in a fast mode), compare its
    optimistic step with the exact conic programs on the raw data (use as the probe of
    :class:`PlayedRounds`; the policy is copied, so the run itself is unaffected).

    The exact programs of a run (one per candidate, :func:`~.confidence.optimistic_exact`) are one
    task of :func:`causalbandits_lib.core.parallel.map_tasks`: with ``jobs > 1`` the runs are solved
    on that many worker processes, with ``scheduler`` on a Dask cluster. A run is never split: its
    candidates are solved in order on one problem, whose solvers carry state from one candidate to
    the next (SCS warm-starts from the last optimal SCS solution, CLARABEL reuses the solver, and
    its scaling, set up for an earlier candidate). A task's arrays are contiguous, so a worker's
    copies have this process's memory layout: the candidates' features Fortran-ordered, as the
    generator lays them out (the value ``x^T theta`` is a strided dot product, which rounds
    differently from a contiguous one). So the values do not depend on ``jobs``. The solvers'
    warnings are passed on to this process.

    With ``defer=True`` the exact programs are not solved here: the probe returns a
    :class:`PendingComparison` (the tasks and the fast step's side, computed now), and
    :func:`finish_comparisons` solves the programs of every probed round in one batch after the
    simulation (the same tasks, so the same numbers; the workers are busy to the end).

    Returns
    -------
    dict over the ``runs`` compared: ``exact`` (r, K) exact optimistic values; ``exact_best`` (r,);
    ``exact_at_choice`` (r,) the exact value of the fast step's choice; ``fast_at_choice`` (r,) the
    fast step's value there; ``quadratic`` (r, K) the quadratic model at the MLE.
    """
    import copy

    from .optimism import optimistic_quadratic

    runs = np.asarray(list(runs))
    pol = copy.deepcopy(policy)
    data = LogisticData.from_observations(X, y)
    theta, model, _, _ = constrained_mle(data, pol.S, max_steps=200, tol=1e-13)
    loss = data.loss(theta)
    b = float(beta_squared(t + 1, X.shape[1], pol.S, pol.alpha, pol.beta_denominator))
    tasks = [
        dict(
            X=np.ascontiguousarray(X[r]),
            y=np.ascontiguousarray(y[r]),
            loss_hat=float(loss[r]),
            beta_sq=b,
            S=pol.S,
            x=np.asfortranarray(ctx.x[r]),  # the generator's layout: no copy there
        )
        for r in runs
    ]
    vals, _ = pol.optimistic_values(t, ctx)
    choice = np.argmax(np.where(pol.solved, vals, -np.inf), axis=1)[runs]
    quad, _ = optimistic_quadratic(model, theta, b, pol.S, ctx.x)
    pending = PendingComparison(t, tasks, choice, vals[runs, choice], quad[runs])
    if defer:
        return pending
    return pending.finish(_solve_exact_runs(tasks, jobs, scheduler))


@dataclass
class PendingComparison:
    """One probed round of :func:`compare_optimistic_steps` whose exact programs are still to be
    solved: the tasks (one per run) and the fast step's side."""

    t: int
    tasks: list
    choice: np.ndarray
    fast_at_choice: np.ndarray
    quadratic: np.ndarray

    def finish(self, exact_runs: Sequence[np.ndarray]) -> dict[str, np.ndarray]:
        exact = np.stack(exact_runs)
        k = np.arange(len(self.choice))
        return {
            "exact": exact,
            "exact_best": exact.max(axis=1),
            "exact_at_choice": exact[k, self.choice],
            "fast_at_choice": self.fast_at_choice,
            "quadratic": self.quadratic,
        }


def finish_comparisons(
    pending: Sequence[PendingComparison], jobs: int = 1, scheduler: str | None = None
) -> list[dict[str, np.ndarray]]:
    """Solve the exact programs of every deferred comparison in one call of
    :func:`~causalbandits_lib.core.parallel.map_tasks`, the latest rounds (the most data, the
    slowest) first; the comparisons in the order given."""
    order = sorted(range(len(pending)), key=lambda i: -pending[i].t)
    flat = [(i, task) for i in order for task in pending[i].tasks]
    solved = _solve_exact_runs([task for _, task in flat], jobs, scheduler)
    by_probe: dict[int, list] = {i: [] for i in range(len(pending))}
    for (i, _), values in zip(flat, solved):
        by_probe[i].append(values)
    return [p.finish(by_probe[i]) for i, p in enumerate(pending)]


def _solve_exact_runs(tasks: Sequence[dict], jobs: int, scheduler: str | None) -> list[np.ndarray]:
    """The exact optimistic values of each task of :func:`compare_optimistic_steps` (one run each),
    in task order: :func:`~.confidence.optimistic_exact_task` through
    :func:`~causalbandits_lib.core.parallel.map_tasks`. Re-issues the warnings the tasks caught and
    raises the first failed task's error."""
    import warnings

    from ..core.parallel import map_tasks
    from .confidence import optimistic_exact_task

    outcomes = map_tasks(optimistic_exact_task, tasks, jobs=jobs, scheduler=scheduler, retries=1)
    failed = [o for o in outcomes if not o.ok]
    if failed:
        raise RuntimeError(f"exact optimistic step of task {failed[0].index} failed: {failed[0].error}")
    values = []
    for o in outcomes:
        run_values, caught = o.result
        for message, category, filename, lineno in caught:
            warnings.warn_explicit(message, category, filename, lineno)
        values.append(run_values)
    return values


def prefix_equals_independent(generator: RoundGenerator, T_short: int, T_long: int, seed: int, reps: int) -> bool:
    """Whether OFULog+'s first ``T_short`` decisions in a run of ``T_long`` rounds equal those of an
    independent run of ``T_short`` rounds (true for every policy without a horizon parameter)."""
    short = simulate(FairLogisticBandit(generator), OFULogPlus(), T_short, seed, n_runs=reps, metrics=("action",))
    long = simulate(FairLogisticBandit(generator), OFULogPlus(), T_long, seed, n_runs=reps, metrics=("action",))
    return bool(np.array_equal(short["action"], long["action"][:, :T_short]))


# -- the claims' checks (the standard of evidence of core.checks applied to this chapter's runs) ----


def rate_horizons(T: int, n: int = 40) -> np.ndarray:
    """The log-spaced horizons of the rate test: ``n`` points from ``T/40`` to ``T`` (distinct
    integers), so that each horizon ``h`` of the protocol (``T/4``, ``T/2``, ``T``) has its window
    ``[h/10, h]`` (:data:`~causalbandits_lib.core.checks.RATE_HORIZONS`)."""
    return np.unique(np.geomspace(max(1, T // 40), T, n).astype(int))


def rate_test(cumulative: np.ndarray, check: Callable[..., Verdict] = checks.check_rate, **kw) -> Verdict:
    """The one rate test on per-run cumulative curves ``(n_runs, T)`` read at :func:`rate_horizons`:
    ``check`` is :func:`~causalbandits_lib.core.checks.check_rate` (with ``exponent`` and ``mode``)
    or :func:`~causalbandits_lib.core.checks.check_sublinear`."""
    y = np.asarray(cumulative, dtype=float)
    t = rate_horizons(y.shape[1])
    return check(t, y[:, t - 1], **kw)


def check_levels_off(cumulative: np.ndarray) -> Verdict:
    """Whether "V(t) stops growing", for per-run curves of ``V(t) = [sum_s v_s]_+`` ``(n_runs, T)``:
    the one rate test with exponent 0, ``mode="at_most"`` (a mean curve that does not grow holds)."""
    return rate_test(cumulative, checks.check_rate, exponent=0.0, mode="at_most")


# -- the rate of V(T) over horizons, each horizon its own runs ----------------------------------------


def independent_horizons(T: int) -> np.ndarray:
    """The horizons at which the violation ``V(T_k)`` is measured by runs *made for* ``T_k``.

    The one rate test (:func:`~causalbandits_lib.core.checks.check_rate`) measures the exponent at
    each horizon ``h`` of :data:`~causalbandits_lib.core.checks.RATE_HORIZONS` (``T/4``, ``T/2``,
    ``T``) from the checkpoints in ``[h·RATE_FIT_FROM, h]``, and needs at least 4 of them in each
    window (3 increments). The three horizons alone give it 1, 2 and 3 there, so the checkpoints
    are the protocol's horizons ``h = floor(f·T)`` and the starts of their windows
    ``ceil(RATE_FIT_FROM·h)``: for ``T = 10,000``, 250, 500, 1,000, 2,500, 5,000 and 10,000, exactly
    4 in each window (total work ``1.925 T`` per configuration). Raises ValueError when ``T`` is too
    small for them to be distinct.
    """
    ends = [int(math.floor(f * T + 1e-9)) for f in checks.RATE_HORIZONS]
    starts = []
    for h in ends:
        s = max(1, int(math.ceil(checks.RATE_FIT_FROM * h - 1e-9)))
        while s < checks.RATE_FIT_FROM * h:  # the window test of core.checks.rate_interval, in floats
            s += 1
        starts.append(s)
    out = np.unique(np.array(ends + starts, dtype=int))
    for h in ends:
        n_in = int(np.sum((out >= checks.RATE_FIT_FROM * h) & (out <= h)))
        if n_in < 4:
            raise ValueError(f"T = {T} is too small: {n_in} independent horizons in the window of h = {h}, need 4")
    return out


def configs_for_horizon(configs: Sequence[Config], h: int) -> list[Config]:
    """The configurations with every horizon-dependent parameter set for ``h``: the horizon that
    sets CCLB's dual step ``1/eta = rho/sqrt(h)`` (Theorem 1's ``eta = sqrt(T)/rho``); ``rho``,
    ``eps``, ``tau`` and the confidence level do not depend on ``T``."""
    return [replace(c, horizon=int(h)) for c in configs]


def run_per_horizon(
    generator: RoundGenerator,
    configs: Sequence[Config],
    horizons: Sequence[int],
    seed: int,
    reps: int,
    done: dict[int, dict[str, SimulationResult]] | None = None,
    backend: str = "auto",
    **policy_kw,
) -> dict[int, dict[str, SimulationResult]]:
    """Each horizon ``h`` its own runs: :func:`run_configs` of :func:`configs_for_horizon` for ``h``
    rounds, on the root seed ``seed`` (replication ``i`` of every horizon draws the same named
    streams, so the shorter runs see the same contexts and noise as the longer ones' first rounds).

    ``done`` maps a horizon to runs already made for it (``{key: result}`` with the same configs,
    seed and policy keywords, e.g. the notebook's main runs at ``T``); those are reused, not re-run.
    Returns ``{h: {config key: SimulationResult}}``.
    """
    done = done or {}
    out = {}
    for h in sorted(int(x) for x in horizons):
        if h in done and all(c.key in done[h] and done[h][c.key].T == h for c in configs):
            out[h] = {c.key: done[h][c.key] for c in configs}
            continue
        out[h] = run_configs(generator, configs_for_horizon(configs, h), h, seed, reps, backend=backend, **policy_kw)
    return out


def values_per_horizon(per_horizon: dict[int, dict[str, SimulationResult]], key: str) -> tuple[np.ndarray, np.ndarray]:
    """``(horizons, V)``: each run's violation ``V(h) = [sum_{t<=h} (|Delta_t(d_t)| - tau)]_+`` (Eq. 7)
    at the end of its own run of horizon ``h``, shape ``(reps, len(horizons))``."""
    hs = np.array(sorted(per_horizon), dtype=int)
    V = np.stack([np.maximum(per_horizon[h][key]["violation"].sum(axis=1), 0.0) for h in hs], axis=1)
    return hs, V


def rate_test_per_horizon(
    horizons: Sequence[int], values: np.ndarray, check: Callable[..., Verdict] = checks.check_rate, **kw
) -> Verdict:
    """The one rate test on per-run values at independent horizons (:func:`values_per_horizon`),
    unchanged: ``check`` is :func:`~causalbandits_lib.core.checks.check_rate` or
    :func:`~causalbandits_lib.core.checks.check_sublinear`, read at :func:`independent_horizons`."""
    return check(np.asarray(horizons, dtype=float), np.asarray(values, dtype=float), **kw)


def with_se(runs: np.ndarray) -> dict[str, float]:
    """``{"mean": ..., "se": ...}`` of per-run values (:func:`~causalbandits_lib.core.checks.mean_se`),
    as the claims' measured values keep them."""
    return dict(zip(("mean", "se"), checks.mean_se(runs)))


def figure2_checks(res: dict[str, SimulationResult], T: int) -> dict[str, tuple[Verdict, dict]]:
    """The checks of Figure 2's claims on one set of runs (``res`` has ``glm_ucb``, ``ofulog_plus``,
    ``cclb`` and ``eps_cclb``), so that they can be applied under each tie rule.

    Returns ``{claim id suffix: (verdict, measured)}`` for ``penalized_regret_gap``,
    ``ofulog_plus_violates_often``, ``ofulog_plus_beats_cclb_on_regret``, ``glm_ucb_worst_regret``,
    ``regret_ordering`` and ``eps_cclb_violations_small``. The violations are Eq. (7)'s
    ``[sum_t (|Delta_t(d_t)| - tau)]_+``, the metric the paper's §4 names; the sum of per-round
    positive parts is in the measured values only. The criteria are those written in the claims of
    ``notebooks/cclb/04_experiments.md``.
    """
    algs = ("glm_ucb", "ofulog_plus", "cclb", "eps_cclb")
    reps = res["cclb"]["regret"].shape[0]
    final = {a: final_values(res[a]) for a in algs}

    def lower(a, b, scale):  # a < scale x b, paired
        na, nb_ = a, f"{scale:g} x {b}"
        return lambda va, vb: checks.check_paired_order({na: va, nb_: scale * vb}, [na, nb_])

    out = {}
    pen = {a: np.cumsum(res[a]["penalized_regret"], axis=1) for a in algs}
    pen_T = {a: pen[a][:, -1] for a in algs}
    growth = {
        b: pen[b][:, -1] - pen["cclb"][:, -1] - (pen[b][:, T // 2 - 1] - pen["cclb"][:, T // 2 - 1])
        for b in ("ofulog_plus", "glm_ucb")
    }
    zero = np.zeros(reps)
    out["penalized_regret_gap"] = (
        checks.check_parts(
            {
                "CCLB < 0.8 x OFULog+": lower("cclb", "ofulog_plus", 0.8)(pen_T["cclb"], pen_T["ofulog_plus"]),
                "CCLB < 0.8 x GLM-UCB": lower("cclb", "glm_ucb", 0.8)(pen_T["cclb"], pen_T["glm_ucb"]),
                "gap to OFULog+ grows from T/2 to T": checks.check_paired_order(
                    {"0": zero, "growth of the gap": growth["ofulog_plus"]}, ["0", "growth of the gap"]
                ),
                "gap to GLM-UCB grows from T/2 to T": checks.check_paired_order(
                    {"0": zero, "growth of the gap": growth["glm_ucb"]}, ["0", "growth of the gap"]
                ),
                "OFULog+ nearly linear": rate_test(pen["ofulog_plus"], exponent=1.0, mode="equal"),
                "GLM-UCB nearly linear": rate_test(pen["glm_ucb"], exponent=1.0, mode="equal"),
            }
        ),
        {a: with_se(pen_T[a]) for a in algs},
    )
    viol = {a: final[a]["violation_sum_of_positive_parts"] for a in algs}
    viol7 = {a: final[a]["violation_positive_part_of_sum"] for a in algs}
    frac = {a: np.mean(res[a]["violation"] > 0, axis=1) for a in algs}
    out["ofulog_plus_violates_often"] = (
        checks.check_parts(
            {
                "violating rounds > 0.5": checks.check_mean_above(
                    frac["ofulog_plus"], 0.5, what="fraction of violating rounds"
                ),
                "violations (Eq. 7) > 2 x CCLB's": checks.check_paired_order(
                    {"2 x cclb": 2 * viol7["cclb"], "ofulog_plus": viol7["ofulog_plus"]}, ["2 x cclb", "ofulog_plus"]
                ),
            }
        ),
        {
            "violating_fraction": with_se(frac["ofulog_plus"]),
            "violations_eq7": with_se(viol7["ofulog_plus"]),
            "cclb_eq7": with_se(viol7["cclb"]),
            "violations_sum_of_positive_parts": with_se(viol["ofulog_plus"]),
            "cclb_sum_of_positive_parts": with_se(viol["cclb"]),
        },
    )
    reg = {a: final[a]["regret"] for a in algs}
    out["ofulog_plus_beats_cclb_on_regret"] = (
        checks.check_paired_order(reg, ["ofulog_plus", "cclb"]),
        {a: with_se(reg[a]) for a in ("ofulog_plus", "cclb")},
    )
    out["glm_ucb_worst_regret"] = (
        checks.check_parts(
            {f"{LABELS[a]} < GLM-UCB": checks.check_paired_order(reg, [a, "glm_ucb"]) for a in algs if a != "glm_ucb"}
        ),
        {a: with_se(reg[a]) for a in algs},
    )
    out["regret_ordering"] = (
        checks.check_paired_order(reg, ["ofulog_plus", "cclb", "eps_cclb", "glm_ucb"]),
        {a: with_se(reg[a]) for a in algs},
    )
    t5 = T // 5  # the paper's window is 2,000 -> 10,000
    pair = ("cclb", "eps_cclb")
    cum_pos = {a: np.cumsum(res[a]["violation_pos"], axis=1) for a in pair}
    cum_7 = {a: positive_part_of_sum(res[a]["violation"]) for a in pair}
    inc = {a: cum_pos[a][:, -1] - cum_pos[a][:, t5 - 1] for a in pair}
    inc7 = {a: cum_7[a][:, -1] - cum_7[a][:, t5 - 1] for a in pair}
    out["eps_cclb_violations_small"] = (
        checks.check_parts(
            {
                "eps-CCLB < 0.5 x CCLB": checks.check_paired_order(
                    {"eps_cclb": viol7["eps_cclb"], "0.5 x cclb": 0.5 * viol7["cclb"]}, ["eps_cclb", "0.5 x cclb"]
                ),
                "growth < 0.1 x CCLB's": checks.check_paired_order(
                    {"eps_cclb": inc7["eps_cclb"], "0.1 x cclb": 0.1 * inc7["cclb"]}, ["eps_cclb", "0.1 x cclb"]
                ),
            }
        ),
        {
            "violations_eq7": {a: with_se(viol7[a]) for a in pair},
            "growth_T/5_to_T_eq7": {a: with_se(inc7[a]) for a in pair},
            "violations_sum_of_positive_parts": {a: with_se(viol[a]) for a in pair},
            "growth_T/5_to_T_sum_of_positive_parts": {a: with_se(inc[a]) for a in pair},
        },
    )
    return out
