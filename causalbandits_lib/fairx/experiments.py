"""The paper's experimental protocol (§5.1, App. B.1) as reusable pieces for the notebooks.

- :data:`MAB_GRIDS`, :data:`LINEAR_GRIDS`, :data:`YAHOO_MAB_GRIDS`, :data:`YAHOO_LINEAR_GRIDS`:
  the hyper-parameter grids of App. B.1 (the corrupted yeast/mediamill paragraph read as in the
  notes §8 A1);
- :data:`MAB_ALGORITHMS`, :data:`LINEAR_ALGORITHMS`: constructors by name;
- :func:`tune_and_test`: for every algorithm, grid search on the validation environment (all
  grid points and all ``c`` in one vectorised simulation), then the chosen hyper-parameters (one
  per ``c``) on the test environment for ``n_runs`` runs;
- :func:`record_results` and :func:`plot_regrets`: metrics, curves and figures in the book's form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

import numpy as np

from . import linear, mab
from .data import MultiLabelData
from .environments import ContextTableBandit, MultiLabelBandit, least_squares_parameter, random_fourier_contexts
from .evaluation import FairnessRun, GridResult, curve_summary, grid_search, run_fairness
from .merit import ExpMerit

__all__ = [
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
    "record_results",
    "plot_regrets",
]

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
    "FairX-UCB": Algorithm("FairX-UCB", lambda merit, K, d, w0: mab.FairXUCB(merit, w0, K), True),
    "FairX-TS": Algorithm(
        "FairX-TS", lambda merit, K, d, prior_sd, reward_sd: mab.FairXTS(merit, prior_sd, reward_sd, K), True
    ),
    "FairX-EG": Algorithm("FairX-EG", lambda merit, K, d, epsilon: mab.FairXEG(merit, epsilon, K), True),
    "UCB": Algorithm("UCB", lambda merit, K, d, w0: mab.UCB(w0, K), False),
    "TS": Algorithm("TS", lambda merit, K, d, prior_sd, reward_sd: mab.ThompsonSampling(prior_sd, reward_sd, K), False),
    "EG": Algorithm("EG", lambda merit, K, d, epsilon: mab.EpsilonGreedy(epsilon, K), False),
}
LINEAR_ALGORITHMS = {
    "FairX-LinUCB": Algorithm(
        "FairX-LinUCB", lambda merit, K, d, beta, ridge: linear.FairXLinUCB(merit, beta, ridge, d, K), True
    ),
    "FairX-LinTS": Algorithm(
        "FairX-LinTS",
        lambda merit, K, d, prior_sd, reward_sd: linear.FairXLinTS(merit, prior_sd, reward_sd, d, K),
        True,
    ),
    "FairX-LinEG": Algorithm(
        "FairX-LinEG", lambda merit, K, d, epsilon, ridge: linear.FairXLinEG(merit, epsilon, ridge, d, K), True
    ),
    "LinUCB": Algorithm("LinUCB", lambda merit, K, d, beta, ridge: linear.LinUCB(beta, ridge, d, K), False),
    "LinTS": Algorithm(
        "LinTS", lambda merit, K, d, prior_sd, reward_sd: linear.LinTS(prior_sd, reward_sd, d, K), False
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
    test = run_fairness(test_env, make(merit, **chosen), merit, T, seed + 1, n_runs=n_runs, exposure_at=exposure_at)
    return Tuned(name, c_values, result, chosen, test)


def record_results(
    nb, results: Mapping[str, Tuned], prefix: str, c_index: int | None = None, slopes: bool = True
) -> dict[str, dict[str, float]]:
    """Record ``<prefix>final_fairness_regret.<alg>``, ``<prefix>final_reward_regret.<alg>`` and
    ``<prefix>fairness_regret_slope.<alg>`` (mean over runs; slope over the second half) and the
    two curves, for configuration ``c_index`` (or for every ``c`` with a ``.c_<c>`` suffix).

    Returns the same numbers as a dict ``{alg: {"fr": ..., "rr": ..., "slope": ...}}`` (for the
    configuration ``c_index``, or the last one).
    """
    table = {}
    for name, res in results.items():
        gs = range(len(res.c_values)) if c_index is None else [c_index]
        for g in gs:
            suffix = "" if c_index is not None else f".c_{res.c_values[g]:g}"
            run = res.test.config(g)
            fr, rr = float(run.final().mean()), float(run.final("reward").mean())
            slope = run.slope() if slopes else float("nan")
            nb.metric(f"{prefix}final_fairness_regret.{name}{suffix}", fr)
            nb.metric(f"{prefix}final_reward_regret.{name}{suffix}", rr)
            if slopes:
                nb.metric(f"{prefix}fairness_regret_slope.{name}{suffix}", slope)
            nb.curves[f"{prefix}fairness_regret.{name}{suffix}"] = curve_summary(run.t, run.fairness[:, 0])
            nb.curves[f"{prefix}reward_regret.{name}{suffix}"] = curve_summary(run.t, run.reward[:, 0])
            table[name] = {"fr": fr, "rr": rr, "slope": slope}
    return table


def plot_regrets(axes, results: Mapping[str, Tuned], g: int = 0, x: str = "rounds", reward_for: str = "fair"):
    """Fairness regret (left, log-log) and reward regret (right) against rounds: mean over runs
    with a 5-95% band, for configuration ``g``. Reward regret is drawn for the FairX algorithms
    (``reward_for="fair"``, as in the paper's figures) or for all."""
    ax_fr, ax_rr = axes
    for name, res in results.items():
        run = res.test.config(g)
        t = run.t if x == "rounds" else run.rounds[:, 0].mean(axis=0)
        fr, rr = run.fairness[:, 0], run.reward[:, 0]
        style = "-" if res.test.info.get("fair", name.startswith("FairX")) else "--"
        (line,) = ax_fr.plot(t, fr.mean(axis=0), style, label=name)
        if fr.shape[0] > 1:
            ax_fr.fill_between(
                t, *np.quantile(fr, [0.05, 0.95], axis=0), color=line.get_color(), alpha=0.2, linewidth=0
            )
        if reward_for == "all" or name.startswith("FairX"):
            ax_rr.plot(t, rr.mean(axis=0), style, color=line.get_color(), label=name)
            if rr.shape[0] > 1:
                ax_rr.fill_between(
                    t, *np.quantile(rr, [0.05, 0.95], axis=0), color=line.get_color(), alpha=0.2, linewidth=0
                )
    ax_fr.set_xscale("log")
    ax_fr.set_yscale("log")
    ax_fr.set_xlabel("round t" if x == "rounds" else "accepted rounds t")
    ax_fr.set_ylabel("cumulative fairness regret FR_t")
    ax_rr.set_xscale("log")
    ax_rr.set_xlabel(ax_fr.get_xlabel())
    ax_rr.set_ylabel("cumulative reward regret RR_t")
    ax_rr.axhline(0.0, color="k", lw=0.5)
    ax_fr.legend(fontsize=7)
    ax_rr.legend(fontsize=7)
