"""The notebooks' studies of tuned algorithms: the protocol's runs as objects that know their
records, and the small measurements the claims of ``fairx/05`` and ``fairx/06`` compare.

- :class:`TunedSet`: the tuned algorithms of one setting (a dict of name to
  :class:`~.experiments.Tuned`) with their final regrets per ``c``, the best and worst algorithm
  by mean, paired "below a fraction of" checks, and what a notebook records for them;
- :class:`RegretProtocol`: the validation/test split and the tuning of §5.1 (App. B.1) with the
  parameters every run of a notebook shares;
- :func:`replay_study`: tuning on some days of a click log and replaying others, multi-armed and
  linear (:class:`ReplayStudy`, Figures 4 and 9);
- :func:`over_splits`: a claim's check judged on every random split (instances);
- :func:`regret_table_text`, :func:`split_finals`: the printed tables and the per-split metrics;
- :func:`with_se`, :func:`relative_spread`: summaries of per-run values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..core import checks
from ..core.checks import Verdict
from .experiments import (
    LINEAR_ALGORITHMS,
    LINEAR_GRIDS,
    MAB_ALGORITHMS,
    MAB_GRIDS,
    YAHOO_LINEAR_GRIDS,
    YAHOO_MAB_GRIDS,
    regret_records,
    split_environments,
    tune_and_test,
    tuned_metrics,
)
from .yahoo import ReplayEnvironment

__all__ = [
    "MAB",
    "LIN",
    "CONVENTIONAL",
    "TunedSet",
    "RegretProtocol",
    "ReplayStudy",
    "REPLAY_MAB",
    "replay_study",
    "over_splits",
    "with_se",
    "relative_spread",
    "regret_table_text",
    "split_finals",
]

#: The multi-armed algorithms of Figures 2, 5 and 6 (three FairX, then the conventional ones).
MAB = ("FairX-UCB", "FairX-TS", "FairX-EG", "UCB", "TS", "EG")
#: The linear algorithms of Figures 3, 7, 8 and 10 (three FairX, then the conventional ones).
LIN = ("FairX-LinUCB", "FairX-LinTS", "FairX-LinEG", "LinUCB", "LinTS")
#: The paper's conventional baselines (our ε-greedy EG is not one of them).
CONVENTIONAL = ("UCB", "TS", "LinUCB", "LinTS")


def with_se(x) -> dict[str, float]:
    """``{"mean", "se"}`` of per-run values (:func:`~causalbandits_lib.core.checks.mean_se`)."""
    return dict(zip(("mean", "se"), checks.mean_se(x)))


def relative_spread(x: np.ndarray) -> np.ndarray:
    """Of stacked final regrets, shape (runs, algorithms): per run, (largest - smallest) / mean
    over the algorithms."""
    return (x.max(axis=1) - x.min(axis=1)) / x.mean(axis=1)


class TunedSet(dict):
    """Tuned algorithms of one setting, ``{name: Tuned}``, in running order; configuration ``g``
    of every test run is the merit steepness ``c_values[g]``."""

    def final(self, name: str, g: int = 0, which: str = "fairness") -> np.ndarray:
        """Per run: the final (at the horizon) fairness or reward regret of ``name`` at ``c`` index ``g``."""
        return self[name].test.final(which)[:, g]

    def finals(self, names: Sequence[str], g: int = 0, which: str = "fairness") -> dict[str, np.ndarray]:
        """:meth:`final` of each of ``names``."""
        return {n: self.final(n, g, which) for n in names}

    def best_and_worst(self, names: Sequence[str], g: int = 0, which: str = "fairness") -> tuple[str, str]:
        """The algorithms of ``names`` with the smallest and the largest mean final regret (the
        first one on ties)."""
        means = {n: self.final(n, g, which).mean() for n in names}
        return min(means, key=means.get), max(means, key=means.get)

    def best(self, names: Sequence[str], g: int = 0, which: str = "fairness") -> str:
        """The algorithm of ``names`` with the smallest mean final regret."""
        return self.best_and_worst(names, g, which)[0]

    def worst(self, names: Sequence[str], g: int = 0, which: str = "fairness") -> str:
        """The algorithm of ``names`` with the largest mean final regret."""
        return self.best_and_worst(names, g, which)[1]

    @property
    def fair(self) -> list[str]:
        """The FairX algorithms among the algorithms (names starting with ``FairX``)."""
        return [n for n in self if n.startswith("FairX")]

    @property
    def conventional(self) -> list[str]:
        """The paper's conventional baselines among the algorithms (:data:`CONVENTIONAL`)."""
        return [n for n in self if n in CONVENTIONAL]

    def below_fraction(self, a: str, b: str, factor: float, g: int = 0, which: str = "fairness") -> Verdict:
        """Paired over runs: ``a``'s final regret below ``factor`` times ``b``'s, run by run."""
        ref = f"{factor:g} x {b}"
        return checks.check_paired_order({a: self.final(a, g, which), ref: factor * self.final(b, g, which)}, [a, ref])

    def worst_below_best(
        self, names: Sequence[str], others: Sequence[str], factor: float, g: int = 0
    ) -> dict[str, Verdict]:
        """``{"<worst of names> < <factor> x <best of others>": verdict}``: the worst of ``names``
        (mean final fairness regret) below ``factor`` times the best of ``others``, paired
        (:meth:`below_fraction`)."""
        worst, best = self.worst(names, g), self.best(others, g)
        return {f"{worst} < {factor:g} x {best}": self.below_fraction(worst, best, factor, g)}

    def equivalent_best_worst(self, names: Sequence[str], margin, g: int = 0) -> dict[str, Verdict]:
        """``{"<worst> ≈ <best>": verdict}``: the best and the worst of ``names`` (mean final
        fairness regret) the same within ``margin`` on the log of the final fairness regret, paired
        over runs (an equivalence test, :func:`~causalbandits_lib.core.checks.check_equivalent`)."""
        best, worst = self.best_and_worst(names, g)
        verdict = checks.check_equivalent(
            np.log(self.final(best, g)), np.log(self.final(worst, g)), (f"ln FR_T {best}", f"ln FR_T {worst}"), margin
        )
        return {f"{worst} ≈ {best}": verdict}

    def accepted_rounds(self, name: str, g: int = 0) -> np.ndarray:
        """Per run, in replay: the accepted events up to the horizon (the rounds that count)."""
        return self[name].test.rounds[:, g, -1]

    def reward_regret_per_accepted_round(self, name: str, g: int = 0) -> np.ndarray:
        """Per run, in replay: ``|RR_T|`` per accepted round."""
        return np.abs(self.final(name, g, "reward")) / self.accepted_rounds(name, g)

    def uniform_rr(self, name: str, g: int = 0) -> np.ndarray:
        """Per run: the reward regret the uniform policy would have had on the same rounds (exact)."""
        return self[name].test.uniform[:, g, -1]

    def relative_spread(self, names: Sequence[str], g: int = 0) -> np.ndarray:
        """Per run: :func:`relative_spread` of the final fairness regrets of ``names``."""
        return relative_spread(np.stack([self.final(n, g) for n in names], axis=1))

    def opposite_pairs(self, names: Sequence[str], g: int = 0) -> list[tuple[str, str]]:
        """The pairs ``(a, b)`` of ``names`` with ``a`` below ``b`` on mean final fairness regret
        and above it on mean final reward regret."""
        fr, rr = self.finals(names, g), self.finals(names, g, "reward")
        return [
            (a, b)
            for a in names
            for b in names
            if a != b and fr[a].mean() < fr[b].mean() and rr[a].mean() > rr[b].mean()
        ]

    def record(self, nb: Any, prefix: str, c_index: int | None = None) -> dict[str, dict[str, float]]:
        """Record the metrics and curves of :func:`~.experiments.regret_records` with ``nb``
        (``nb.metric`` and ``nb.curves``); returns its table (``{"fr", "rr", "slope"}`` per algorithm)."""
        records = regret_records(self, prefix, c_index=c_index)
        for name, value in records.metrics.items():
            nb.metric(name, value)
        nb.curves.update(records.curves)
        return records.table

    def record_tuned(self, nb: Any, prefix: str) -> None:
        """Record the chosen hyper-parameters (:func:`~.experiments.tuned_metrics`) with ``nb.metric``."""
        for name, value in tuned_metrics(self, prefix).items():
            nb.metric(name, value)

    def chosen_text(self) -> str:
        """One line per algorithm: the hyper-parameters chosen for each ``c``."""
        return "\n".join(
            f"{name:9s} chosen per c: "
            + "; ".join(f"{k} = {', '.join(str(x) for x in v.tolist())}" for k, v in res.chosen.items())
            for name, res in self.items()
        )


@dataclass(frozen=True)
class RegretProtocol:
    """The protocol of §5.1 and App. B.1 with the parameters all runs of a notebook share.

    Attributes
    ----------
    validation_fraction : float
        Share of the examples in the validation split (tuning); the rest is the test split.
    rff_dim, rff_bandwidth : int, float
        Random Fourier contexts of the linear settings.
    n_tune_runs, n_runs : int
        Runs per grid point on the validation split, and test runs.
    jobs, scheduler : int, str or None
        Where the algorithms run (:func:`~.experiments.tune_and_test`).
    """

    validation_fraction: float
    rff_dim: int
    rff_bandwidth: float
    n_tune_runs: int
    n_runs: int
    jobs: int = 1
    scheduler: str | None = None

    def environments(
        self, data, rng: Callable[[str], np.random.Generator], key: str, setting: str = "mab", noise_sd: float = 0.1
    ):
        """Validation and test environments of ``data`` (:func:`~.experiments.split_environments`),
        the split drawn from ``rng(f"split/{key}")`` and the random Fourier map from ``rng(f"rff/{key}")``."""
        if setting == "mab":
            return split_environments(data, rng(f"split/{key}"), self.validation_fraction)
        return split_environments(
            data,
            rng(f"split/{key}"),
            self.validation_fraction,
            setting,
            rng(f"rff/{key}"),
            self.rff_dim,
            self.rff_bandwidth,
            noise_sd,
        )

    def tune(
        self, setting: str, c_values: Sequence[float], envs, n_arms: int, T_tune: int, T: int, seed: int
    ) -> TunedSet:
        """Tune and test every algorithm of ``setting`` (``"mab"``: :data:`MAB`, otherwise
        :data:`LIN`) on ``envs = (validation, test)`` (:func:`~.experiments.tune_and_test`)."""
        if setting == "mab":
            names, algorithms, grids, dim = MAB, MAB_ALGORITHMS, MAB_GRIDS, None
        else:
            names, algorithms, grids, dim = LIN, LINEAR_ALGORITHMS, LINEAR_GRIDS, self.rff_dim
        return TunedSet(
            tune_and_test(
                list(names),
                algorithms,
                grids,
                c_values,
                *envs,
                n_arms,
                dim,
                T_tune,
                self.n_tune_runs,
                T,
                self.n_runs,
                seed,
                jobs=self.jobs,
                scheduler=self.scheduler,
            )
        )


def over_splits(verdict_of: Callable[[TunedSet, int], Verdict], splits: Sequence[TunedSet]) -> Verdict:
    """A claim's check ``verdict_of(results, i)`` on each random split ``i`` (instances,
    :func:`~causalbandits_lib.core.checks.check_instances`), or on the one split there is."""
    if len(splits) == 1:
        return verdict_of(splits[0], 0)
    return checks.check_instances(
        {f"split {i}": verdict_of(r, i) for i, r in enumerate(splits)},
        "each random split of yeast judged by its own check",
    )


def regret_table_text(tables: Mapping[str, Mapping[str, Mapping[str, float]]]) -> str:
    """The tables of :meth:`TunedSet.record` as text: a title, then per algorithm FR_T, RR_T and
    the second-half slope."""
    lines = []
    for title, table in tables.items():
        lines.append(title)
        for name, r in table.items():
            lines.append(f"  {name:13s} FR_T {r['fr']:10.1f}  RR_T {r['rr']:9.2f}  slope {r['slope']:.3f}")
    return "\n".join(lines)


def split_finals(
    mab_splits: Sequence[TunedSet], lin_splits: Sequence[TunedSet], g_mab: int, g_lin: int
) -> tuple[dict[str, float], str]:
    """The mean final fairness regret of every algorithm on every split: the metrics
    ``splits.yeast_mab.final_fairness_regret.<alg>.split_<s>`` (and ``yeast_linear``) at ``c``
    index ``g_mab`` (``g_lin``), and one printed line per split."""
    metrics, lines = {}, []
    for s, (rm, rl) in enumerate(zip(mab_splits, lin_splits)):
        for n in rm:
            metrics[f"splits.yeast_mab.final_fairness_regret.{n}.split_{s}"] = float(
                rm[n].test.final()[:, g_mab].mean()
            )
        for n in rl:
            metrics[f"splits.yeast_linear.final_fairness_regret.{n}.split_{s}"] = float(
                rl[n].test.final()[:, g_lin].mean()
            )
        c_mab = next(iter(rm.values())).c_values[g_mab]
        c_lin = next(iter(rl.values())).c_values[g_lin]
        lines.append(
            f"split {s}: FR_T MAB (c={c_mab:g}) "
            + ", ".join(f"{n} {rm[n].test.final()[:, g_mab].mean():.0f}" for n in rm)
            + f" | linear (c={c_lin:g}) "
            + ", ".join(f"{n} {rl[n].test.final()[:, g_lin].mean():.0f}" for n in rl)
        )
    return metrics, "\n".join(lines)


class ReplayStudy(dict):
    """Replay runs of one figure: ``{"mab": TunedSet, "linear": TunedSet}`` (one ``c``)."""

    def record(self, nb: Any, prefix: str) -> None:
        """Record, per mode, the chosen hyper-parameters ``tuned.<prefix>.<mode>.*`` and per
        algorithm ``<prefix>.<mode>.final_fairness_regret.<alg>``, ``final_reward_regret`` and
        ``accepted_rounds`` (means over runs) with ``nb.metric``."""
        for mode, res in self.items():
            res.record_tuned(nb, f"tuned.{prefix}.{mode}.")
            for name, r in res.items():
                run = r.test.config(0)
                rounds = float(run.rounds[:, 0, -1].mean())
                nb.metric(f"{prefix}.{mode}.final_fairness_regret.{name}", float(run.final().mean()))
                nb.metric(f"{prefix}.{mode}.final_reward_regret.{name}", float(run.final("reward").mean()))
                nb.metric(f"{prefix}.{mode}.accepted_rounds.{name}", rounds)

    def text(self) -> str:
        """One printed line per mode and algorithm: final FR, final RR and accepted rounds (means)."""
        return "\n".join(
            f"{mode:6s} {name:13s} FR {float(res.final(name).mean()):8.1f}  "
            f"RR {float(res.final(name, 0, 'reward').mean()):7.3f}  "
            f"accepted rounds {res.accepted_rounds(name).mean():7.1f}"
            for mode, res in self.items()
            for name in res
        )

    def accepted_rounds_fairx(self) -> float:
        """Accepted replay rounds: the mean over the FairX algorithms of both modes (and runs)."""
        return float(np.mean([res.accepted_rounds(n).mean() for res in self.values() for n in res.fair]))


#: The multi-armed algorithms of the replay figures (no ε-greedy baseline there).
REPLAY_MAB = MAB[:5]


def replay_study(
    log,
    tune_days: tuple[int, int],
    test_days: tuple[int, int],
    c: float,
    n_articles: int,
    pool_size: int,
    n_tune_runs: int,
    n_runs: int,
    seed: int,
    jobs: int = 1,
    scheduler: str | None = None,
) -> ReplayStudy:
    """Tune every algorithm on the replay of ``log`` over ``tune_days`` (first and last day,
    0-based), test it on ``test_days``: multi-armed over the ``n_articles`` articles, then linear
    over the ``pool_size`` articles of the pool with 36-dimensional contexts. One algorithm at a
    time (each replay has its own horizon, the accepted events of its days)."""
    out = ReplayStudy()
    for mode, names, algorithms, grids, K, d in (
        ("mab", REPLAY_MAB, MAB_ALGORITHMS, YAHOO_MAB_GRIDS, n_articles, None),
        ("linear", LIN, LINEAR_ALGORITHMS, YAHOO_LINEAR_GRIDS, pool_size, 36),
    ):
        val = ReplayEnvironment(log, log.days(*tune_days), mode)
        test = ReplayEnvironment(log, log.days(*test_days), mode)
        res = TunedSet()
        for name in names:
            res.update(
                tune_and_test(
                    [name],
                    algorithms,
                    grids,
                    [c],
                    val,
                    test,
                    K,
                    d,
                    val.n_rounds,
                    n_tune_runs,
                    test.n_rounds,
                    n_runs,
                    seed,
                    jobs=jobs,
                    scheduler=scheduler,
                )
            )
        out[mode] = res
    return out
