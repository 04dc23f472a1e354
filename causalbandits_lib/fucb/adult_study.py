"""The bookkeeping of notebook ``fucb/05`` (Adult-Video, the paper's Table 2), kept out of the
notebook so that it reads derivation, one call, figure, claims.

- :data:`TABLE2`: the paper's Table 2;
- :func:`youtube_stand_in`: the declared stand-in for the YouTube video statistics (the arms are
  the 16 combinations of the binarised video features);
- :func:`true_discrepancy`: the true discrepancy under the monotone coupling beside Theorem 2's
  bounds (:class:`TrueDiscrepancy`);
- :func:`run_table2`: D-UCB, the Fair-LinUCB reconstruction and four F-UCB variants at every τ
  under every fallback rule, with the auditor riding along (:class:`Table2Study`);
- :func:`paper_scale_summary`: the paragraph that states the paper-scale record's numbers;
- :func:`adult_user_counts`, :func:`adult_kinds`: App. E.2's counts on the real data (None on
  the stand-in).

Every ``record(nb)`` registers the metrics and curves under the names the notebook's record has
always used; ``nb`` is any object with ``metric`` and ``curve`` methods (the notebook session).
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from ..core import datasets
from ..core.runner import SimulationResult
from .algorithms import FairLinUCB
from .auditing import unfair_counts
from .counterfactual import counterfactual_bounds, monotone_counterfactual_means
from .experiments import (
    AdultSetup,
    audited_run,
    fallback_rules,
    make_policy,
    markdown_table,
    mean_se_text,
    tau_key,
)
from .instances.adult_video import SENSITIVE, adult_column_kinds, load_adult_users
from .theory import arm_cell_range

__all__ = [
    "TABLE2",
    "UNFAIR_DEFINITIONS",
    "youtube_stand_in",
    "adult_user_counts",
    "adult_kinds",
    "TrueDiscrepancy",
    "true_discrepancy",
    "Table2Study",
    "run_table2",
    "paper_scale_summary",
]

#: The paper's Table 2 per τ: (F-UCB's regret, F-UCB's unfair decisions, Fair-LinUCB's unfair decisions).
TABLE2: dict[float, tuple[float, int, int]] = {
    0.1: (361.43, 0, 2053),
    0.2: (332.10, 0, 1221),
    0.3: (323.12, 0, 602),
    0.4: (303.32, 0, 82),
    0.5: (296.19, 0, 6),
}

#: How an unfair decision is counted (:func:`~causalbandits_lib.fucb.auditing.unfair_counts`): the
#: auditor with the printed radius, with the propagated radius, and the true Δ.
UNFAIR_DEFINITIONS: tuple[str, ...] = ("auditor_paper", "auditor_diff", "true")


def youtube_stand_in() -> dict:
    """The provenance of the video side, declared so that the record lists it: the paper's YouTube
    statistics are not available offline, and the arms are the 16 combinations of the binarised
    video features (what the paper's arms are)."""
    return datasets.stand_in_provenance(
        "YouTube video statistics",
        "the paper's YouTube video statistics (1,580 videos) are not available offline",
        "the 16 combinations of the binarised video features (length, ratings, views, comments) used directly as "
        "the arms, as the paper's arms are exactly these combinations",
    )


def adult_user_counts(provenance: Mapping[str, Any], age_threshold: float) -> dict[str, int] | None:
    """App. E.2's counts on the whole Adult file: ``{"rows", "males", "females"}``, or None when
    ``provenance`` says the users are a stand-in."""
    if provenance["stand_in"]:
        return None
    users, _ = load_adult_users(age_threshold=age_threshold)
    males = int(users[:, 1].sum())
    return {"rows": len(users), "males": males, "females": int(len(users) - users[:, 1].sum())}


def adult_kinds(provenance: Mapping[str, Any]) -> dict[str, list[str]] | None:
    """The Adult columns by kind (:func:`~causalbandits_lib.fucb.instances.adult_video.adult_column_kinds`),
    or None when ``provenance`` says the users are a stand-in."""
    return None if provenance["stand_in"] else adult_column_kinds()


class TrueDiscrepancy:
    """The true counterfactual means of Adult-Video under the monotone coupling of the fitted
    tables, beside Theorem 2's bounds and the trivial range of the cell means.

    Attributes
    ----------
    mu_true, lower, upper : ndarray
        ``(user type, video, s*)``: the counterfactual means and Theorem 2's bounds.
    trivial_lower, trivial_upper : ndarray
        ``(1, video, 1)``: the smallest and largest cell mean each video reaches.
    delta_user : ndarray
        Δ per user type (the same for every video).
    online_delta : ndarray
        ``|Δ|`` of every online user.
    """

    def __init__(self, setup: AdultSetup):
        self.env = env = setup.env
        self.mu_true = monotone_counterfactual_means(env, SENSITIVE)
        varied = [n for n in setup.descendants if n in setup.separator]
        self.lower, self.upper = counterfactual_bounds(setup.decomposition, env.varied_contexts(SENSITIVE, varied))
        dec = setup.decomposition
        self.trivial_lower, self.trivial_upper = (x[None, :, None] for x in arm_cell_range(dec.probs, dec.cell_means))
        self.delta_user = env.discrepancy[:, 0]
        self.online_delta = np.abs(self.delta_user[env.contexts.user_contexts])

    def outside(self) -> int:
        """How many true counterfactual means lie outside Theorem 2's bounds (beyond 1e-12)."""
        return int(((self.mu_true < self.lower - 1e-12) | (self.mu_true > self.upper + 1e-12)).sum())

    def width_over_trivial(self) -> float:
        """The mean width of Theorem 2's bounds over the trivial range of the cell means."""
        return float(np.mean((self.upper - self.lower) / (self.trivial_upper - self.trivial_lower)))

    def share_unfair(self, taus: Sequence[float]) -> dict[float, float]:
        """The share of online users with ``|Δ| > τ``, per τ."""
        return {tau: float((self.online_delta > tau).mean()) for tau in taus}

    def max_abs(self) -> float:
        """The largest ``|Δ|`` over user types."""
        return float(np.abs(self.delta_user).max())

    def spread_across_arms(self) -> float:
        """The largest spread of Δ across the videos for one user type (0 when Δ depends on the
        user only)."""
        d = self.env.discrepancy
        return float(np.max(d.max(axis=1) - d.min(axis=1)))

    def table(self) -> str:
        """A Markdown table, one row per user type present: its codes, share, Δ and Theorem 2's
        range of Δ (at the first video)."""
        env, lo, up = self.env, self.lower, self.upper
        rows = [
            [
                str(tuple(int(v) for v in env.context_codes[c])),
                f"{env.context_probs[c]:.3f}",
                f"{self.delta_user[c]:+.3f}",
                f"[{lo[c, 0, 1] - up[c, 0, 0]:+.2f}, {up[c, 0, 1] - lo[c, 0, 0]:+.2f}]",
            ]
            for c in range(env.n_contexts)
            if env.context_probs[c] > 0
        ]
        headers = ["user (age, sex, race, income)", "share", "Δ (monotone coupling)", "Theorem 2 range of Δ"]
        return markdown_table(headers, rows)

    def record(self, nb: Any, taus: Sequence[float]) -> None:
        """Register ``adult_video.theorem2_mean_width_over_trivial``, ``adult_video.max_abs_discrepancy``,
        ``adult_video.share_users_truly_unfair`` (per τ) and ``adult_video.delta_spread_across_arms``."""
        nb.metric("adult_video.theorem2_mean_width_over_trivial", self.width_over_trivial())
        nb.metric("adult_video.max_abs_discrepancy", self.max_abs())
        nb.metric("adult_video.share_users_truly_unfair", {tau_key(t): v for t, v in self.share_unfair(taus).items()})
        nb.metric("adult_video.delta_spread_across_arms", self.spread_across_arms())


def true_discrepancy(setup: AdultSetup) -> TrueDiscrepancy:
    """The true discrepancy of ``setup``'s bandit beside Theorem 2's bounds (:class:`TrueDiscrepancy`).

    Returns
    -------
    TrueDiscrepancy
    """
    return TrueDiscrepancy(setup)


class Table2Study:
    """The runs behind Table 2 and what they measure.

    Attributes
    ----------
    primary : object
        The discrepancy estimate of ``cf_estimator``; the auditor uses it for every run.
    variants : dict
        F-UCB variant name to ``(estimator, radius)``: ``F-UCB``, ``F-UCB-diff`` and the two with
        the other estimate (``-eq9`` or ``-bounds``).
    taus : list of float
    rules : tuple of str
        The fallback rules run, the chosen one (whose verdicts are recorded) first.
    results_by : dict
        Rule to ``{"D-UCB": result, "Fair-LinUCB": result, (variant, τ): result}`` (the two
        baselines are the same runs under every rule).
    n_runs : int
    """

    def __init__(
        self,
        primary,
        variants: Mapping[str, tuple[Any, str]],
        taus: Sequence[float],
        rules: Sequence[str],
        results_by: Mapping[str, Mapping[Any, SimulationResult]],
        n_runs: int,
    ):
        self.primary = primary
        self.variants = dict(variants)
        self.taus = list(taus)
        self.rules = tuple(rules)
        self.results_by = {rule: dict(res) for rule, res in results_by.items()}
        self.n_runs = n_runs
        self._final_runs = {rule: {key: r.final() for key, r in res.items()} for rule, res in self.results_by.items()}
        self._unfair = {}
        for rule, res in self.results_by.items():
            for d in UNFAIR_DEFINITIONS:
                self._unfair[rule, d, "Fair-LinUCB"] = unfair_counts(res["Fair-LinUCB"], self.taus, d)
                self._unfair[rule, d, "D-UCB"] = unfair_counts(res["D-UCB"], self.taus, d)
                for name in self.variants:
                    self._unfair[rule, d, name] = np.stack(
                        [unfair_counts(res[name, tau], [tau], d)[0] for tau in self.taus]
                    )

    @property
    def fallback(self) -> str:
        """The chosen fallback rule (its verdicts are recorded)."""
        return self.rules[0]

    def final_runs(self, rule: str | None = None) -> dict[Any, np.ndarray]:
        """Per algorithm key (``"D-UCB"``, ``"Fair-LinUCB"``, ``(variant, τ)``) the final regret of
        every run, under ``rule`` (default: the chosen one)."""
        return self._final_runs[rule or self.fallback]

    def final(self, rule: str | None = None) -> dict[Any, float]:
        """Per algorithm key the mean final regret over runs, under ``rule`` (default: the chosen one)."""
        return {key: float(v.mean()) for key, v in self.final_runs(rule).items()}

    def unfair(self, definition: str, name: str, rule: str | None = None) -> np.ndarray:
        """Unfair decisions of ``name`` per τ and run, ``(len(taus), n_runs)``, counted by
        ``definition`` (one of :data:`UNFAIR_DEFINITIONS`), under ``rule`` (default: the chosen one)."""
        return self._unfair[rule or self.fallback, definition, name]

    def fairlinucb_over_worst_fucb(self, rule: str | None = None) -> float:
        """Fair-LinUCB's mean final regret over F-UCB's largest mean final regret over τ (``inf``
        when that is not positive)."""
        fin = self.final_runs(rule)
        worst = max(float(fin["F-UCB", t].mean()) for t in self.taus)
        return float(fin["Fair-LinUCB"].mean()) / worst if worst > 0 else float("inf")

    def record(self, nb: Any, auditor_radius: str) -> None:
        """Register the ``adult_video.*`` metrics and curves of the chosen rule: final regret and
        regret curves of D-UCB and Fair-LinUCB; per variant and τ the final regret, the rounds
        without a certified video and the final regret under every other rule; unfair decisions
        per definition (``adult_video.unfair_decisions`` for the auditor with ``auditor_radius``,
        ``adult_video.unfair_decisions_<definition>`` for the others)."""
        results, final = self.results_by[self.fallback], self.final()
        nb.metric("adult_video.final_regret.D-UCB", final["D-UCB"])
        nb.metric("adult_video.final_regret.Fair-LinUCB", final["Fair-LinUCB"])
        nb.curve("adult_video.regret.Fair-LinUCB", results["Fair-LinUCB"]["regret"])
        nb.curve("adult_video.regret.D-UCB", results["D-UCB"]["regret"])
        for name in self.variants:
            for tau in self.taus:
                nb.metric(f"adult_video.final_regret.{name}.{tau_key(tau)}", final[name, tau])
                rounds = float(results[name, tau]["fallback"].sum(axis=1).mean())
                nb.metric(f"adult_video.fallback_rounds.{name}.{tau_key(tau)}", rounds)
                for rule in self.rules[1:]:
                    other = float(self.final_runs(rule)[name, tau].mean())
                    nb.metric(f"adult_video.final_regret_fallback_{rule}.{name}.{tau_key(tau)}", other)
        for d in UNFAIR_DEFINITIONS:
            key = (
                "adult_video.unfair_decisions"
                if d == f"auditor_{auditor_radius}"
                else f"adult_video.unfair_decisions_{d}"
            )
            for name in ("Fair-LinUCB", "D-UCB", *self.variants):
                counts = self.unfair(d, name).mean(axis=1)
                for i, tau in enumerate(self.taus):
                    nb.metric(f"{key}.{name}.{tau_key(tau)}", float(counts[i]))

    def baseline_text(self) -> str:
        """One sentence: D-UCB's and Fair-LinUCB's final regret (mean ± se)."""
        fin = self.final_runs()
        return (
            f"D-UCB's regret {mean_se_text(fin['D-UCB'])}, Fair-LinUCB's {mean_se_text(fin['Fair-LinUCB'])} "
            f"(mean ± se over {self.n_runs} runs)"
        )

    def regret_table(self, rule: str) -> str:
        """F-UCB's final regret per τ and variant under ``rule`` beside Table 2's, in Markdown with
        a bold caption."""
        fin = self.final_runs(rule)
        rows = [
            [f"{tau:g}", TABLE2.get(tau, ("–",))[0]] + [mean_se_text(fin[v, tau]) for v in self.variants]
            for tau in self.taus
        ]
        return (
            f"**fallback = {rule}: F-UCB's regret after T rounds (mean ± se over {self.n_runs} runs)**\n\n"
            + markdown_table(["τ", "paper F-UCB", *self.variants], rows)
        )

    def unfair_table(self) -> str:
        """Unfair decisions per τ of F-UCB (under every rule) and Fair-LinUCB beside Table 2's, by
        every definition, in Markdown with a bold caption."""
        rows = []
        for i, tau in enumerate(self.taus):
            p = TABLE2.get(tau, ("–", "–", "–"))
            for name, rule, paper in [("F-UCB", rule, p[1]) for rule in self.rules] + [
                ("Fair-LinUCB", self.rules[0], p[2])
            ]:
                label = f"{name} (fallback = {rule})" if name == "F-UCB" else name
                counts = [mean_se_text(self.unfair(d, name, rule)[i], 0) for d in UNFAIR_DEFINITIONS]
                rows.append([f"{tau:g}", label, paper] + counts)
        headers = ["τ", "algorithm", "paper", "auditor, printed radius", "auditor, propagated radius", "true Δ"]
        return f"**Unfair decisions out of T (mean ± se over {self.n_runs} runs)**\n\n" + markdown_table(headers, rows)


def run_table2(
    setup: AdultSetup,
    cf_estimator: str,
    taus: Sequence[float],
    fallback: str,
    T: int,
    seed: int,
    n_runs: int,
    linucb_alpha: float,
    linucb_gamma: float,
) -> Table2Study:
    """Run Table 2's algorithms on ``setup``'s bandit, in this order and each on ``seed``: D-UCB,
    the Fair-LinUCB reconstruction (``linucb_alpha``, ``linucb_gamma``), then under every fallback
    rule (``fallback`` first) the four F-UCB variants at every τ. The auditor uses the estimate
    of ``cf_estimator`` throughout (:func:`~causalbandits_lib.fucb.experiments.audited_run`).

    Returns
    -------
    Table2Study
    """
    primary = setup.estimator(cf_estimator)
    other_name = "identified" if primary.kind == "bounded" else "bounds"
    other = "eq9" if other_name == "identified" else "bounds"
    variants = {
        "F-UCB": (primary, "paper"),
        "F-UCB-diff": (primary, "diff"),
        f"F-UCB-{other}": (setup.estimators[other_name], "paper"),
        f"F-UCB-{other}-diff": (setup.estimators[other_name], "diff"),
    }
    rules = fallback_rules(fallback)  # the parameter's rule first: its verdicts are recorded
    env, base = setup.env, {}
    base["D-UCB"] = audited_run(env, make_policy("D-UCB", setup.decomposition), primary, T, seed, n_runs)
    fair_lin = FairLinUCB(setup.features, setup.groups, alpha=linucb_alpha, gamma=linucb_gamma)
    base["Fair-LinUCB"] = audited_run(env, fair_lin, primary, T, seed, n_runs)
    results_by = {}
    for rule in rules:
        results_by[rule] = dict(base)
        for name, (est, radius) in variants.items():
            for tau in taus:
                policy = make_policy(
                    "F-UCB", setup.decomposition, est, tau, fair_radius=radius, fallback=rule, label=name
                )
                results_by[rule][name, tau] = audited_run(env, policy, primary, T, seed, n_runs)
    return Table2Study(primary, variants, taus, rules, results_by, n_runs)


def paper_scale_summary(metrics: Mapping[str, Any], params: Mapping[str, Any], variants: Sequence[str]) -> str:
    """The Markdown paragraph that states the paper-scale record's numbers: its τ, D-UCB's and
    Fair-LinUCB's final regret, then per variant the rounds without a certified video and the
    final regret under the record's fallback and under ``unconstrained``. ``metrics`` is the
    record's metrics (a missing one is None); ``params`` its parameters."""
    taus = params["taus"]

    def row(prefix, v):
        return [metrics.get(f"{prefix}.{v}.{tau_key(t)}") for t in taus]

    def fmt(xs, digits):
        return ", ".join(f"{x:,.{digits}f}" for x in xs)

    lines = [
        f"In the paper-scale record (metrics `adult_video.*`, τ = {', '.join(f'{t:g}' for t in taus)}; "
        f"D-UCB {metrics.get('adult_video.final_regret.D-UCB'):.1f}, "
        f"Fair-LinUCB {metrics.get('adult_video.final_regret.Fair-LinUCB'):.1f}), rounds without a certified video "
        f"and final regret under our fallback (`{params['fallback']}`) and under `unconstrained`:"
    ]
    for v in variants:
        lines.append(
            f"- {v}: {fmt(row('adult_video.fallback_rounds', v), 0)} empty rounds; "
            f"regret {fmt(row('adult_video.final_regret', v), 1)}; "
            f"unconstrained {fmt(row('adult_video.final_regret_fallback_unconstrained', v), 1)}."
        )
    return "\n".join(lines)
