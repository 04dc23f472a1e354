"""The FairX experiments: simulations that keep running regret sums, the paper's protocol
(§5.1, App. B.1) and what the notebooks record.

Simulating (every simulation goes through :func:`causalbandits_lib.core.runner.simulate`):

- :func:`simulate_fairness`: the simulation of every notebook, for horizons up to 2,000,000 rounds
  (Figure 1). The recorders of :func:`fairness_recorders` keep running sums of the per-round
  fairness and reward regrets (:class:`~.merit.RegretMeter`) at checkpoints and of the deployed
  policy at chosen rounds (the average exposure), as a :class:`FairnessRun`;
- :func:`regrets_from_simulation`: the per-round path, ``simulate(..., metrics=("policy",
  "arm_means"))`` turned into per-round regrets (memory grows with ``T·K``: short horizons and the
  tests, which check that the running sums equal its cumulative sums bit for bit);
- :func:`second_half_slope`: the log-log slope of a cumulative regret over ``[T/2, T]``.

The protocol:

- :data:`MAB_GRIDS`, :data:`LINEAR_GRIDS`, :data:`YAHOO_MAB_GRIDS`, :data:`YAHOO_LINEAR_GRIDS`:
  the hyper-parameter grids of App. B.1 (the corrupted yeast/mediamill paragraph read as in the
  notes §8 A1);
- :data:`MAB_ALGORITHMS`, :data:`LINEAR_ALGORITHMS`: constructors by name;
- :func:`grid_search`: all grid points and all ``c`` in one vectorised simulation, scored by the
  validation fairness regret;
- :func:`split_environments`: the validation and test environments of a multi-label data set;
- :func:`tune_and_test`: for every algorithm, grid search on the validation environment, then the
  chosen hyper-parameters (one per ``c``) on the test environment for ``n_runs`` runs;
- :func:`regret_records`: the metrics and curves a notebook records for them (it returns them; the
  notebook records them).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..core import checks
from ..core.checks import Verdict
from ..core.curves import curve_points, loglog_slope, summarise_checkpoints
from ..core.recorders import RunningSums
from ..core.runner import SimulationResult, simulate
from . import algorithms
from .data import MultiLabelData
from .merit import ExpMerit, RegretMeter, fair_policy, optimal_fair_policy
from .model import ContextTableBandit, MultiLabelBandit, least_squares_parameter, random_fourier_contexts
from .optimism import optimistic_box_exact, optimistic_box_pgd
from .yahoo import ReplayEnvironment

__all__ = [
    "REGRETS",
    "EXPOSURE",
    "FairnessRun",
    "checkpoints_for",
    "regret_values",
    "deployed_policy",
    "fairness_recorders",
    "simulate_fairness",
    "regrets_from_simulation",
    "second_half_slope",
    "GridResult",
    "grid_search",
    "W0_GRID",
    "MAB_GRIDS",
    "LINEAR_GRIDS",
    "YAHOO_MAB_GRIDS",
    "YAHOO_LINEAR_GRIDS",
    "Algorithm",
    "MAB_ALGORITHMS",
    "LINEAR_ALGORITHMS",
    "Tuned",
    "split_environments",
    "tune_and_test",
    "tuned_metrics",
    "RegretRecords",
    "regret_records",
    "rate_points",
    "rate_test",
    "optimism_policy_error",
    "box_coverage",
    "check_slope_below",
]

#: Name of the recorder of the running regret sums.
REGRETS = "regrets"
#: Name of the recorder of the running sums of the deployed policy.
EXPOSURE = "exposure"


@dataclass
class FairnessRun:
    """Cumulative regrets at checkpoints, one row per run and configuration.

    Attributes
    ----------
    t : ndarray, shape (P,)
        Checkpoint rounds (1-based).
    fairness, reward : ndarray, shape (R, G, P)
        Cumulative fairness regret ``FR_t`` and reward regret ``RR_t`` at those rounds.
    exposure : dict of int to ndarray (R, G, K)
        Average exposure ``(1/t) Σ_{s<=t} π_s`` at the requested rounds.
    rounds : ndarray (R, G, P) or None
        For replay evaluation: accepted events (the rounds that count) up to each checkpoint; the
        checkpoints ``t`` then count logged events.
    uniform : ndarray (R, G, P) or None
        The reward regret the uniform policy over the round's arms would have had on the same
        rounds (``Σ_t π*_t·m_t − mean_a m_{t,a}``, exact from the means, not sampled; accepted
        rounds only in replay): the trivial scale of "low reward regret".
    """

    t: np.ndarray
    fairness: np.ndarray
    reward: np.ndarray
    exposure: dict[int, np.ndarray]
    runs: np.ndarray
    seed: int
    T: int
    seconds: float = 0.0
    info: dict[str, Any] = field(default_factory=dict)
    rounds: np.ndarray | None = None
    uniform: np.ndarray | None = None

    def final(self, which: str = "fairness") -> np.ndarray:
        """Regret at the horizon, shape (R, G)."""
        return getattr(self, which)[..., -1]

    def config(self, g: int) -> "FairnessRun":
        """The runs of configuration ``g`` only (G = 1)."""
        sl = slice(g, g + 1)
        rounds = None if self.rounds is None else self.rounds[:, sl]
        uniform = None if self.uniform is None else self.uniform[:, sl]
        return FairnessRun(
            self.t,
            self.fairness[:, sl],
            self.reward[:, sl],
            {k: v[:, sl] for k, v in self.exposure.items()},
            self.runs,
            self.seed,
            self.T,
            self.seconds,
            dict(self.info),
            rounds,
            uniform,
        )

    @classmethod
    def from_simulation(cls, result: SimulationResult) -> "FairnessRun":
        """Assemble the run from the recorders of :func:`fairness_recorders` (``regrets`` and,
        when exposures were asked for, ``exposure``)."""
        sums = result.recorded[REGRETS]
        exposure = {}
        if EXPOSURE in result.recorded:
            expo = result.recorded[EXPOSURE]
            exposure = {int(t): expo.sums["exposure"][..., j] / t for j, t in enumerate(expo.t)}
        return cls(
            sums.t,
            sums["fairness"],
            sums["reward"],
            exposure,
            result.runs,
            result.seed,
            result.T,
            result.seconds,
            rounds=sums.sums.get("rounds"),
            uniform=sums.sums.get("uniform"),
        )

    def slope(self, g: int = 0, which: str = "fairness") -> float:
        """Log-log slope of the mean (over runs) cumulative regret over the second half."""
        return second_half_slope(self.t, getattr(self, which)[:, g].mean(axis=0))


def checkpoints_for(T: int, n_points: int = 200, second_half: int = 25) -> np.ndarray:
    """Log-spaced rounds (``curve_points``) plus ``second_half`` evenly spaced rounds in
    ``[T/2, T]`` (where the slopes are fitted)."""
    pts = np.union1d(curve_points(T, n_points), np.linspace(T / 2, T, second_half).round().astype(np.int64))
    return pts[(pts >= 1) & (pts <= T)]


def regret_values(merit) -> Callable[..., dict[str, np.ndarray]]:
    """The per-round values of a :class:`~causalbandits_lib.core.recorders.RunningSums` that
    accumulates the regrets: ``fairness`` and ``reward`` (each (R, G)) of the policy the learner
    deployed (``policy.policy``) against the round's exact ``arm_means``
    (:class:`~.merit.RegretMeter`, one per simulation), and ``uniform``, the reward regret the
    uniform policy would have had in the round (the trivial scale). In replay (the feedback has ``accepted``)
    rejected events are not rounds: both regrets are multiplied by ``accepted``, and ``rounds``
    counts the accepted events."""
    meter = RegretMeter(merit)

    def values(t, context, actions, feedback, policy) -> dict[str, np.ndarray]:
        fr, rr = meter.step(policy.policy, feedback["arm_means"])
        uni = meter.uniform_regret(feedback["arm_means"])
        accepted = feedback.get("accepted")
        if accepted is None:
            return {"fairness": fr, "reward": rr, "uniform": uni}
        return {"fairness": fr * accepted, "reward": rr * accepted, "rounds": accepted, "uniform": uni * accepted}

    return values


def regret_block_values(merit) -> Callable[[Mapping[str, np.ndarray]], dict[str, np.ndarray]]:
    """:func:`regret_values` for a block of rounds from a compiled kernel (``policy`` of shape
    (R, B, G, K), ``arm_means`` (R, B, K)): the same element-wise arithmetic and row sums, so the
    same numbers. The optimal fair policy is computed once per block when the means do not change
    within it (the multi-armed environments), as :class:`~.merit.RegretMeter` does. When the block
    has ``accepted`` (R, B, G) (replay), the regrets are multiplied by it and ``rounds`` counts the
    accepted events, as in :func:`regret_values`."""

    def values(block: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        policy, means = block["policy"], block["arm_means"]
        if np.all(means == means[:, :1]):
            first = np.ascontiguousarray(means[:, 0])[:, None, :]  # (R, 1, K), as RegretMeter sees it
            optimal = optimal_fair_policy(merit, first)[:, None]  # (R, 1, G, K)
            means = first[:, None]
        else:
            means = means[:, :, None, :]
            optimal = optimal_fair_policy(merit, means)
        optimal_value = (optimal * means).sum(axis=-1)
        fr = np.abs(policy - optimal).sum(axis=-1)
        rr = optimal_value - (policy * means).sum(axis=-1)
        uni = np.broadcast_to(optimal_value - means.mean(axis=-1), rr.shape)
        accepted = block.get("accepted")
        if accepted is None:
            return {"fairness": fr, "reward": rr, "uniform": uni}
        return {"fairness": fr * accepted, "reward": rr * accepted, "rounds": accepted, "uniform": uni * accepted}

    return values


def deployed_policy(t, context, actions, feedback, policy) -> dict[str, np.ndarray]:
    """The per-round value whose running sum is the exposure: the deployed policy (R, G, K)."""
    return {"exposure": policy.policy}


def fairness_recorders(
    merit,
    T: int,
    checkpoints: Sequence[int] | None = None,
    exposure_at: Sequence[int] = (),
    replay: bool = False,
) -> list[RunningSums]:
    """The recorders of a FairX simulation: running regret sums at ``checkpoints`` (default
    :func:`checkpoints_for`) named ``regrets``, and, when ``exposure_at`` names rounds, running
    sums of the deployed policy at those rounds named ``exposure``. ``replay``: the environment
    reports ``accepted`` events (a compiled kernel must then write them too).

    Raises
    ------
    ValueError
        If ``exposure_at`` names a round outside ``1..T``.
    """
    pts = checkpoints_for(int(T)) if checkpoints is None else checkpoints
    recorders = [
        RunningSums(
            regret_values(merit),
            pts,
            name=REGRETS,
            block_values=regret_block_values(merit),
            block_inputs=("policy", "arm_means") + (("accepted",) if replay else ()),
        )
    ]
    expo_pts = sorted({int(e) for e in exposure_at})
    if expo_pts:
        if expo_pts[0] < 1 or expo_pts[-1] > T:
            raise ValueError(f"exposure_at={list(exposure_at)} must lie in 1..T={T}")
        recorders.append(
            RunningSums(
                deployed_policy,
                expo_pts,
                name=EXPOSURE,
                block_values=lambda block: {"exposure": block["policy"]},
                block_inputs=("policy",),
            )
        )
    return recorders


def simulate_fairness(
    env,
    policy,
    merit,
    T: int,
    seed: int,
    n_runs: int | None = None,
    runs: Sequence[int] | None = None,
    checkpoints: Sequence[int] | None = None,
    exposure_at: Sequence[int] = (),
    backend: str = "auto",
) -> FairnessRun:
    """Step ``policy`` against ``env`` for ``T`` rounds with
    :func:`~causalbandits_lib.core.runner.simulate`, keeping only the running sums of
    :func:`fairness_recorders` (memory does not grow with ``T``: Figure 1 runs 2,000,000 rounds).

    The cumulative regrets equal, bit for bit, the cumulative sums of the per-round regrets of the
    protocol path (:func:`regrets_from_simulation`; tested).

    Parameters
    ----------
    env, policy
        Protocol objects (reset by the runner). The environment's feedback must contain
        ``arm_means`` (R, K); the policy must expose ``policy`` (R, G, K) after ``select``.
    merit : merit function defining π* (one ``c`` per configuration).
    T, seed, n_runs, runs
        As in :func:`~causalbandits_lib.core.runner.simulate`.
    checkpoints : sequence of int, optional
        1-based rounds at which cumulative regrets are kept (default :func:`checkpoints_for`).
    exposure_at : sequence of int
        Rounds at which the average exposure per arm is kept (Figure 1).
    backend : {"auto", "numpy", "compiled"}
        As in :func:`~causalbandits_lib.core.runner.simulate` (``auto``: the compiled kernel of the
        pair when it has one).
    """
    T = int(T)
    if T < 1:
        raise ValueError(f"T={T} must be at least 1")
    recorders = fairness_recorders(merit, T, checkpoints, exposure_at, replay=isinstance(env, ReplayEnvironment))
    result = simulate(env, policy, T, seed, n_runs=n_runs, runs=runs, metrics=(), recorders=recorders, backend=backend)
    return FairnessRun.from_simulation(result)


def regrets_from_simulation(result: SimulationResult, merit) -> tuple[np.ndarray, np.ndarray]:
    """Per-round fairness and reward regret from a protocol-path simulation.

    Parameters
    ----------
    result : SimulationResult
        From ``simulate(env, policy, T, seed, ..., metrics=("policy", "arm_means"))``.
    merit : merit function

    Returns
    -------
    fr, rr : ndarray, shape (R, G, T)
    """
    for name in ("policy", "arm_means"):
        if name not in result.metrics:
            raise KeyError(f"the simulation did not keep {name!r}; pass metrics=('policy', 'arm_means') to simulate")
    pol, means = result["policy"], result["arm_means"]
    meter = RegretMeter(merit)
    R, T, G = pol.shape[:3]
    fr = np.empty((R, G, T))
    rr = np.empty((R, G, T))
    accepted = result.metrics.get("accepted")
    for t in range(T):
        f, r = meter.step(np.ascontiguousarray(pol[:, t]), np.ascontiguousarray(means[:, t]))
        if accepted is not None:
            f, r = f * accepted[:, t], r * accepted[:, t]
        fr[:, :, t], rr[:, :, t] = f, r
    return fr, rr


def second_half_slope(t: np.ndarray, cumulative_mean: np.ndarray) -> float:
    """Least-squares slope of ``log FR_t`` against ``log t`` over ``t ∈ [T/2, T]`` (0.5 for a
    ``√T`` rate, 1 for linear regret)."""
    t = np.asarray(t, dtype=float)
    return loglog_slope(t, cumulative_mean, t_min=t[-1] / 2)[0]


@dataclass
class GridResult:
    """Outcome of a grid search: validation fairness regret of every grid point for every ``c``.

    Attributes
    ----------
    names : tuple of str
        Hyper-parameter names.
    points : list of tuple
        Grid points (values in the order of ``names``).
    c : ndarray, shape (C,)
    fairness : ndarray, shape (C, P)
        Mean (over runs) validation fairness regret at the tuning horizon.
    best : list of dict
        For each ``c``, the grid point with the smallest validation fairness regret.
    """

    names: tuple[str, ...]
    points: list[tuple]
    c: np.ndarray
    fairness: np.ndarray
    best: list[dict[str, float]]
    seconds: float = 0.0

    def best_arrays(self) -> dict[str, np.ndarray]:
        """The chosen values as per-``c`` arrays, ready to build the test-split policy."""
        return {n: np.array([b[n] for b in self.best]) for n in self.names}


def grid_search(
    make_policy: Callable[..., Any],
    grid: Mapping[str, Sequence[float]],
    c_values: Sequence[float],
    make_merit: Callable[[np.ndarray], Any],
    env,
    T: int,
    n_runs: int,
    seed: int,
) -> GridResult:
    """Tune hyper-parameters by the validation fairness regret (§5.1: "grid search to minimise
    fairness regret on the validation set"), all grid points and all ``c`` in one simulation.

    Parameters
    ----------
    make_policy : callable
        ``make_policy(merit, **{name: array (G,)})`` builds a policy with one configuration per
        (``c``, grid point).
    grid : mapping of name to list of values
        The paper's grid (App. B.1); every combination is tried.
    c_values : sequence of float
        Merit steepnesses to tune for.
    make_merit : callable
        ``make_merit(c_array)`` → merit function.
    env
        The validation-split environment.
    T, n_runs, seed
        Tuning horizon, runs and seed (the paper states none of them; the notebooks state ours).
    """
    names = tuple(grid)
    if not names:
        raise ValueError("grid must name at least one hyper-parameter")
    points = list(itertools.product(*(list(grid[n]) for n in names)))
    c_values = np.asarray(c_values, dtype=float)
    cc = np.repeat(c_values, len(points))
    arrays = {n: np.tile(np.array([p[i] for p in points], dtype=float), len(c_values)) for i, n in enumerate(names)}
    merit = make_merit(cc)
    run = simulate_fairness(env, make_policy(merit, **arrays), merit, T, seed, n_runs=n_runs, checkpoints=[T])
    fairness = run.final("fairness").mean(axis=0).reshape(len(c_values), len(points))
    best = [dict(zip(names, points[int(np.argmin(row))])) for row in fairness]
    return GridResult(names, points, c_values, fairness, best, run.seconds)


W0_GRID = [1e-5, 2e-5, 5e-5, 1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2, 5e-2, 1e-1]
_SD6 = [1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1.0]
_SD6_LIN = [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1]

#: App. B.1, yeast and mediamill, multi-armed.
MAB_GRIDS = {
    "FairX-UCB": {"w0": W0_GRID},
    "FairX-TS": {"prior_sd": _SD6, "reward_sd": _SD6},
    "FairX-EG": {"epsilon": [0.0, 1e-4, 1e-3, 1e-2, 1e-1, 1.0]},
    "UCB": {"w0": W0_GRID},
    "TS": {"prior_sd": _SD6, "reward_sd": _SD6},
    "EG": {"epsilon": [0.0, 1e-4, 1e-3, 1e-2, 1e-1, 1.0]},  # not in the paper's plots: its grid reused
}
#: App. B.1, yeast and mediamill, linear (A1: LinTS with prior and reward sd; LinEG with ε and ridge).
LINEAR_GRIDS = {
    "FairX-LinUCB": {"beta": [0.01, 0.1, 1.0, 10.0], "ridge": [1.0, 1e1, 1e2, 1e3, 1e4, 1e5]},
    "FairX-LinTS": {"prior_sd": _SD6_LIN, "reward_sd": _SD6_LIN},
    "FairX-LinEG": {"epsilon": [0.0, 1e-4, 1e-3, 1e-2], "ridge": [1e1, 1e2, 1e3, 1e4, 1e5]},
    "LinUCB": {"beta": [0.01, 0.1, 1.0, 10.0], "ridge": [1.0, 1e1, 1e2, 1e3, 1e4, 1e5]},
    "LinTS": {"prior_sd": _SD6_LIN, "reward_sd": _SD6_LIN},
}
#: App. B.1, Yahoo!.
YAHOO_MAB_GRIDS = {
    "FairX-UCB": {"w0": [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]},
    "FairX-TS": {"prior_sd": [0.01, 0.1], "reward_sd": [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]},
    "FairX-EG": {"epsilon": [0.0, 1e-3, 1e-2]},
    "UCB": {"w0": [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]},
    "TS": {"prior_sd": [0.01, 0.1], "reward_sd": [1e-5, 1e-4, 1e-3, 1e-2, 1e-1]},
}
YAHOO_LINEAR_GRIDS = {
    "FairX-LinUCB": {"beta": [1.0, 10.0, 100.0], "ridge": [1e-6, 1e-4, 1e-2, 1.0]},
    "FairX-LinTS": {"prior_sd": [1e-4, 1e-3, 1e-2], "reward_sd": [1e-4, 1e-3, 1e-2]},
    "FairX-LinEG": {"epsilon": [0.0, 1e-4, 1e-3, 1e-2], "ridge": [1e-6, 1e-4, 1e-2, 1.0]},
    "LinUCB": {"beta": [1.0, 10.0, 100.0], "ridge": [1e-6, 1e-4, 1e-2, 1.0]},
    "LinTS": {"prior_sd": [1e-4, 1e-3, 1e-2], "reward_sd": [1e-4, 1e-3, 1e-2]},
}


@dataclass(frozen=True)
class Algorithm:
    """A named algorithm: ``make(merit, n_arms, dim, **hyper)`` and whether it is a FairX one."""

    name: str
    make: Callable[..., object]
    fair: bool


MAB_ALGORITHMS = {
    "FairX-UCB": Algorithm("FairX-UCB", lambda merit, K, d, w0: algorithms.FairXUCB(merit, w0, K), True),
    "FairX-TS": Algorithm(
        "FairX-TS", lambda merit, K, d, prior_sd, reward_sd: algorithms.FairXTS(merit, prior_sd, reward_sd, K), True
    ),
    "FairX-EG": Algorithm("FairX-EG", lambda merit, K, d, epsilon: algorithms.FairXEG(merit, epsilon, K), True),
    "UCB": Algorithm("UCB", lambda merit, K, d, w0: algorithms.UCB(w0, K), False),
    "TS": Algorithm(
        "TS", lambda merit, K, d, prior_sd, reward_sd: algorithms.ThompsonSampling(prior_sd, reward_sd, K), False
    ),
    "EG": Algorithm("EG", lambda merit, K, d, epsilon: algorithms.EpsilonGreedy(epsilon, K), False),
}
LINEAR_ALGORITHMS = {
    "FairX-LinUCB": Algorithm(
        "FairX-LinUCB", lambda merit, K, d, beta, ridge: algorithms.FairXLinUCB(merit, beta, ridge, d, K), True
    ),
    "FairX-LinTS": Algorithm(
        "FairX-LinTS",
        lambda merit, K, d, prior_sd, reward_sd: algorithms.FairXLinTS(merit, prior_sd, reward_sd, d, K),
        True,
    ),
    "FairX-LinEG": Algorithm(
        "FairX-LinEG", lambda merit, K, d, epsilon, ridge: algorithms.FairXLinEG(merit, epsilon, ridge, d, K), True
    ),
    "LinUCB": Algorithm("LinUCB", lambda merit, K, d, beta, ridge: algorithms.LinUCB(beta, ridge, d, K), False),
    "LinTS": Algorithm(
        "LinTS", lambda merit, K, d, prior_sd, reward_sd: algorithms.LinTS(prior_sd, reward_sd, d, K), False
    ),
}


def split_environments(
    data: MultiLabelData,
    split_rng: np.random.Generator,
    validation_fraction: float,
    setting: str = "mab",
    rff_rng: np.random.Generator | None = None,
    rff_dim: int = 50,
    rff_bandwidth: float = 1.0,
    noise_sd: float = 0.1,
):
    """Validation and test environments of a multi-label data set (§5.1).

    ``setting``:

    - ``"mab"``: :class:`MultiLabelBandit` on each split's labels;
    - ``"linear"``: random Fourier contexts (one map for both splits), rewards the labels, ground
      truth ``θ·x`` with ``θ`` the least-squares fit of each split's labels (Figs. 3, 7, 8);
    - ``"well_specified"``: the same contexts, ``θ`` fitted on the test split's labels, rewards
      ``θ·x + N(0, noise_sd²)`` on both splits (Fig. 10).

    Returns
    -------
    validation_env, test_env
    """
    perm = split_rng.permutation(len(data.labels))
    n_val = int(round(validation_fraction * len(perm)))
    val_rows, test_rows = np.sort(perm[:n_val]), np.sort(perm[n_val:])
    if setting == "mab":
        return MultiLabelBandit(data.labels[val_rows]), MultiLabelBandit(data.labels[test_rows])
    if setting not in ("linear", "well_specified"):
        raise ValueError(f"setting={setting!r}; allowed are 'mab', 'linear' and 'well_specified'")
    K = data.labels.shape[1]
    ctx = random_fourier_contexts(data.features, K, rff_dim, rff_bandwidth, rff_rng)
    labels = data.labels.astype(float)
    if setting == "linear":
        envs = []
        for rows in (val_rows, test_rows):
            theta = least_squares_parameter(ctx[rows], labels[rows])
            envs.append(ContextTableBandit(ctx[rows], ctx[rows] @ theta, labels[rows]))
        return tuple(envs)
    theta = least_squares_parameter(ctx[test_rows], labels[test_rows])
    return tuple(ContextTableBandit(ctx[rows], ctx[rows] @ theta, None, noise_sd) for rows in (val_rows, test_rows))


@dataclass
class Tuned:
    """Grid-search outcome on the validation environment and the test run with the chosen values
    (configuration ``g`` of ``test`` is ``c_values[g]``)."""

    algorithm: str
    c_values: np.ndarray
    grid: GridResult | None
    chosen: dict[str, np.ndarray]
    test: FairnessRun


def tune_and_test(
    names: Sequence[str],
    algorithms: Mapping[str, Algorithm],
    grids: Mapping[str, Mapping[str, Sequence[float]]],
    c_values: Sequence[float],
    validation_env,
    test_env,
    n_arms: int,
    dim: int | None,
    T_tune: int,
    n_tune_runs: int,
    T: int,
    n_runs: int,
    seed: int,
    exposure_at: Sequence[int] = (),
    fixed: Mapping[str, Mapping[str, float]] | None = None,
    jobs: int = 1,
    scheduler: str | None = None,
) -> dict[str, Tuned]:
    """Tune every algorithm on the validation environment (smallest mean fairness regret at
    ``T_tune``), then run the chosen hyper-parameters on the test environment.

    ``fixed`` gives hyper-parameters for algorithms that are not tuned (no grid search); the
    validation and test runs use different seeds (``seed`` and ``seed + 1``).

    Each algorithm is one task of :func:`causalbandits_lib.core.parallel.map_tasks`: with ``jobs > 1`` the
    algorithms run on that many worker processes, with ``scheduler`` on a Dask cluster. A task's
    numbers depend only on its seeds, so the results are the same however it is run.
    """
    from ..core.parallel import map_tasks

    tasks = [
        dict(
            name=name,
            algorithm=algorithms[name],
            grid=None if (fixed and name in fixed) else grids[name],
            fixed_values=(fixed or {}).get(name),
            c_values=np.asarray(c_values, dtype=float),
            validation_env=validation_env,
            test_env=test_env,
            n_arms=n_arms,
            dim=dim,
            T_tune=T_tune,
            n_tune_runs=n_tune_runs,
            T=T,
            n_runs=n_runs,
            seed=seed,
            exposure_at=tuple(exposure_at),
        )
        for name in names
    ]
    outcomes = map_tasks(_tune_and_test_one, tasks, jobs=jobs, scheduler=scheduler, retries=1)
    failed = [(t["name"], o.error) for t, o in zip(tasks, outcomes) if not o.ok]
    if failed:
        raise RuntimeError(f"tuning {failed[0][0]} failed: {failed[0][1]}")
    return {t["name"]: o.result for t, o in zip(tasks, outcomes)}


def _tune_and_test_one(
    name,
    algorithm,
    grid,
    fixed_values,
    c_values,
    validation_env,
    test_env,
    n_arms,
    dim,
    T_tune,
    n_tune_runs,
    T,
    n_runs,
    seed,
    exposure_at,
) -> Tuned:
    """One algorithm of :func:`tune_and_test` (a module-level function, so workers can run it)."""

    def make(merit, **hp):
        return algorithm.make(merit, n_arms, dim, **hp)

    if grid is None:
        result = None
        chosen = {k: np.full(len(c_values), float(v)) for k, v in fixed_values.items()}
    else:
        result = grid_search(make, grid, c_values, ExpMerit, validation_env, T_tune, n_tune_runs, seed)
        chosen = result.best_arrays()
    merit = ExpMerit(c_values)
    test = simulate_fairness(
        test_env, make(merit, **chosen), merit, T, seed + 1, n_runs=n_runs, exposure_at=exposure_at
    )
    return Tuned(name, c_values, result, chosen, test)


@dataclass
class RegretRecords:
    """What a notebook records for a set of tuned algorithms (see :func:`regret_records`).

    Attributes
    ----------
    metrics : dict of name to float
        In recording order.
    curves : dict of name to record curve
        :func:`~causalbandits_lib.core.curves.summarise_checkpoints` of the cumulative regrets.
    table : dict of algorithm to ``{"fr", "rr", "slope"}``
        The numbers of configuration ``c_index`` (or of the last one) for printing and claims.
    """

    metrics: dict[str, float]
    curves: dict[str, dict[str, Any]]
    table: dict[str, dict[str, float]]


def regret_records(
    results: Mapping[str, Tuned], prefix: str, c_index: int | None = None, slopes: bool = True
) -> RegretRecords:
    """The metrics ``<prefix>final_fairness_regret.<alg>``, ``<prefix>final_reward_regret.<alg>``
    and ``<prefix>fairness_regret_slope.<alg>`` (mean over runs; slope over the second half) and
    the two curves, for configuration ``c_index`` (or for every ``c`` with a ``.c_<c>`` suffix).
    The notebook records them."""
    metrics: dict[str, float] = {}
    curves: dict[str, dict[str, Any]] = {}
    table = {}
    for name, res in results.items():
        gs = range(len(res.c_values)) if c_index is None else [c_index]
        for g in gs:
            suffix = "" if c_index is not None else f".c_{res.c_values[g]:g}"
            run = res.test.config(g)
            fr, rr = float(run.final().mean()), float(run.final("reward").mean())
            slope = run.slope() if slopes else float("nan")
            metrics[f"{prefix}final_fairness_regret.{name}{suffix}"] = fr
            metrics[f"{prefix}final_reward_regret.{name}{suffix}"] = rr
            if slopes:
                metrics[f"{prefix}fairness_regret_slope.{name}{suffix}"] = slope
            curves[f"{prefix}fairness_regret.{name}{suffix}"] = summarise_checkpoints(run.t, run.fairness[:, 0])
            curves[f"{prefix}reward_regret.{name}{suffix}"] = summarise_checkpoints(run.t, run.reward[:, 0])
            table[name] = {"fr": fr, "rr": rr, "slope": slope}
    return RegretRecords(metrics, curves, table)


def tuned_metrics(results: Mapping[str, "Tuned"], prefix: str = "tuned.") -> dict[str, float]:
    """The hyper-parameters the grid search chose, as metrics for the record:
    ``{prefix}{algorithm}.{parameter}.c={c}`` for every algorithm, tuned parameter and merit
    steepness ``c`` (one chosen value per ``c``)."""
    out = {}
    for name, res in results.items():
        for param, values in res.chosen.items():
            values = np.broadcast_to(np.asarray(values, dtype=float), np.shape(res.c_values))
            for c, v in zip(np.asarray(res.c_values, dtype=float), values):
                out[f"{prefix}{name}.{param}.c={c:g}"] = float(v)
    return out


# -- the claims' checks (the standard of evidence of core.checks applied to this chapter's runs) ----


def rate_points(t: np.ndarray, n: int = 40) -> np.ndarray:
    """Indices of the checkpoints ``t`` nearest to ``n`` log-spaced horizons in ``[T/40, T]`` (distinct),
    so that each horizon ``h`` of the rate protocol (``T/4``, ``T/2``, ``T``) has its window ``[h/10, h]``.

    The runs keep their cumulative regrets at checkpoints only (:func:`checkpoints_for`); the rate
    test reads them there rather than at exactly log-spaced rounds.
    """
    t = np.asarray(t, dtype=float)
    targets = np.geomspace(t[-1] / 40, t[-1], n)
    idx = np.unique(np.abs(np.log(t)[None, :] - np.log(targets)[:, None]).argmin(axis=1))
    return idx


def rate_test(
    run: "FairnessRun", g: int = 0, which: str = "fairness", check: Callable[..., Verdict] = checks.check_rate, **kw
) -> Verdict:
    """The one rate test (:func:`~causalbandits_lib.core.checks.check_rate` or ``check_sublinear``,
    at the protocol's horizons ``T/4``, ``T/2`` and ``T``) on the per-run cumulative regrets of
    configuration ``g`` of ``run``, read at :func:`rate_points`."""
    idx = rate_points(run.t)
    t = np.asarray(run.t, dtype=float)[idx]
    curves = np.asarray(getattr(run, which)[:, g], dtype=float)[:, idx]
    return check(t, curves, **kw)


def optimism_policy_error(
    merit,
    means: np.ndarray,
    w0: float,
    T: int,
    rng: np.random.Generator,
    n_boxes: int,
    lr: float = 0.01,
    steps: int = 10,
) -> dict[str, np.ndarray]:
    """How far the fair policy of FairX-UCB's optimistic parameter is from ``π*`` late in a run.

    The boxes are those of round ``T`` of a run that has played ``π*``: counts ``N_a = T·π*(a)``
    (at least 1), centres ``μ̂_a ~ N(μ_a, μ_a(1-μ_a)/N_a)`` clipped to ``[0, 1]`` (Bernoulli
    arms), widths ``w0/√N_a``. Returns the per-round fairness regret ``‖π − π*‖₁`` (Eq. 9) of the
    fair policies of the exact optimistic parameter (``"exact"``), of the paper's gradient steps
    from ``μ̂`` (``"pgd"``) and of ``μ̂`` itself (``"plug-in"``, FairX-EG with ε = 0), one value
    per box.
    """
    means = np.asarray(means, dtype=float)
    opt = optimal_fair_policy(merit, means)
    counts = np.maximum(T * opt, 1.0)
    sd = np.sqrt(means * (1 - means) / counts)
    centres = np.clip(means + rng.normal(0.0, 1.0, size=(int(n_boxes), means.size)) * sd, 0.0, 1.0)
    width = w0 / np.sqrt(counts)
    lower, upper = centres - width, centres + width
    params = {
        "exact": optimistic_box_exact(merit, lower, upper)[0],
        "pgd": optimistic_box_pgd(merit, lower, upper, start=centres, lr=lr, steps=steps),
        "plug-in": centres,
    }
    return {k: np.abs(fair_policy(merit, mu) - opt).sum(axis=-1) for k, mu in params.items()}


def box_coverage(means: np.ndarray, w0: float, T: int, n_runs: int, rng: np.random.Generator) -> np.ndarray:
    """Does FairX-UCB's box ``[μ̂_a ± w0/√N_a]`` contain ``μ*`` at every round, whatever the policy?

    Each arm's rewards are drawn in advance as a stream of ``T`` Bernoulli(``μ_a``) values (the
    ``n``-th pull of arm ``a`` reveals the ``n``-th value of its stream, so any policy sees
    prefixes of these streams). The box of every round of every policy is covered when for all arms
    and all ``n <= T`` the mean of the first ``n`` values lies within ``w0/√n`` of ``μ_a``: the
    event Lemma A.4.1 bounds by Hoeffding's inequality and a union bound. Returns, per run, whether
    that event holds (shape ``(n_runs,)``).
    """
    means = np.asarray(means, dtype=float)
    n = np.arange(1, int(T) + 1, dtype=float)[:, None]
    out = np.empty(int(n_runs), dtype=bool)
    for r in range(int(n_runs)):
        draws = rng.random((int(T), means.size)) < means
        running = np.cumsum(draws, axis=0) / n
        out[r] = bool(np.all(np.abs(running - means) <= w0 / np.sqrt(n)))
    return out


def check_slope_below(
    run_a: "FairnessRun", run_b: "FairnessRun", g_a: int = 0, g_b: int = 0, names=("a", "b")
) -> Verdict:
    """The growth exponent of ``run_a``'s fairness regret is smaller than ``run_b``'s
    (:func:`~causalbandits_lib.core.checks.check_slope_below`, the rate protocol's estimator)."""
    ia, ib = rate_points(run_a.t), rate_points(run_b.t)
    return checks.check_slope_below(
        np.asarray(run_a.t, dtype=float)[ia],
        run_a.fairness[:, g_a][:, ia],
        np.asarray(run_b.t, dtype=float)[ib],
        run_b.fairness[:, g_b][:, ib],
        tuple(names),
    )
