"""Every policy scored under every notion, on several random instances; the hypotheses of the
chapter's notebook 1 judged with their stated criteria.

One simulation loop (:func:`~causalbandits_lib.core.runner.simulate`), one seed: in replication
``i`` every policy faces the same users and the same click noise (the environment's streams), so
comparisons are paired by run. Each run's offline log is drawn from its own stream, one per bias
level (:func:`~.model.offline_counts`).

Scores of a run (all exact from the model given the actions taken, :func:`scores`):

- ``regret``: ``R_T = Σ_t μ_{k*(o_t)}(o_t) - μ_{k_t}(o_t)`` against the unconstrained optimum;
- ``cf_rate``: ``u_T = (1/T) Σ_t 1{Δ_{k_t}(o_t) > τ}``, per-decision counterfactual unfairness;
- ``violation``: ``V_T = [Σ_t (Δ_{k_t}(o_t) - τ)]_+`` (CCLB's Eq. 7) and ``violation_pos``:
  ``V^+_T = Σ_t (Δ_{k_t}(o_t) - τ)_+``;
- ``fairness_regret``: ``FR_T = Σ_t Σ_k |π*(k) - π_t(k)|``, FairX's exposure fairness regret, with
  ``π_t`` the deployed distribution (one-hot for the deterministic learners).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..core import checks
from ..core.checks import Verdict
from ..core.runner import simulate
from . import algorithms as A
from . import model as M

__all__ = [
    "HYPOTHESES",
    "PER_ROUND",
    "SCORES",
    "scores",
    "rescore",
    "InstanceResult",
    "run_instance",
    "cross_notion_table",
    "judge_h1",
    "judge_h2",
    "judge_h3",
    "judge_h4",
    "judge_h5",
    "judge_hypotheses",
    "instance_counts",
    "fallback_table",
    "bounds_table",
    "tradeoff_points",
    "evidence_table",
    "exact_price_curves",
]

#: The chapter's hypotheses as notebook 1 states them (committed before any experiment ran):
#: ``{name: (statement, criterion)}``. Notebook 1 shows them; notebook 3 registers one claim each,
#: judged by :func:`judge_h1` ... :func:`judge_h5` with exactly these criteria.
HYPOTHESES: dict[str, tuple[str, str]] = {
    "h1_cf_implies_small_violation": (
        "F-UCB's cumulative per-round violation V+_T is below 5% of the unconstrained D-UCB's on the same runs",
        "check_paired_lower(V+(F-UCB), 0.05 * V+(D-UCB)), z = 2, on every instance (check_instances)",
    ),
    "h2_exposure_leaves_cf_unfairness": (
        "FairX-UCB and FairX-TS recommend counterfactually unfair items (Δ > τ) more often than "
        "F-UCB, by more than 5 points",
        "check_paired_lower(u(F-UCB) + 0.05, u(FairX-*)), z = 2, both FairX learners (check_parts), every instance",
    ),
    "h3_bounds_never_hurt": (
        "Sound offline causal bounds (PCB-style clipping) never increase the regret of a learner they apply to",
        "check_paired_lower(R(learner-PCB), R(learner)) per (instance, learner); refuted where higher by 2 se",
    ),
    "h4_bounds_help_most_at_small_bias": (
        "The regret the bounds save for UCB decreases as the log's confounding and selection bias grows",
        "check_paired_order(g: high < medium < low), z = 2, on every instance (check_instances)",
    ),
    "h5_price_orders_notions": (
        "At the same τ, regret orders CCLB < F-UCB < FairX-UCB: the cumulative constraint is "
        "cheapest, exposure dearest",
        "check_paired_order(R: CCLB < F-UCB < FairX-UCB), z = 2, on every instance; CCLB missing "
        "-> that part not testable",
    ),
}


PER_ROUND = ("regret", "delta", "exposure")
SCORES = ("regret", "cf_rate", "violation", "violation_pos", "fairness_regret")
BASE = ("D-UCB", "F-UCB", "FairX-UCB", "FairX-TS")


def rescore(delta: np.ndarray, tau: float) -> dict[str, np.ndarray]:
    """The threshold-dependent scores from the per-round discrepancies ``(n_runs, T)`` of the
    chosen items: ``cf_rate``, ``violation`` (Eq. 7) and ``violation_pos``."""
    over = delta - tau
    return {
        "cf_rate": (delta > tau).mean(axis=1),
        "violation": np.maximum(over.sum(axis=1), 0.0),
        "violation_pos": np.maximum(over, 0.0).sum(axis=1),
    }


def scores(result, tau: float, pi_star: np.ndarray) -> dict[str, np.ndarray]:
    """Every notion's score of every run of a simulation (see the module docstring)."""
    out = {"regret": result.final("regret")}
    out.update(rescore(result["delta"], tau))
    out["fairness_regret"] = np.abs(result["exposure"] - pi_star).sum(axis=(1, 2))
    return out


@dataclass
class InstanceResult:
    """The scores of one instance: ``runs[(policy, setting)]`` maps to :func:`scores`'s dict;
    ``fallback[(policy, setting)]`` is the share of rounds in which F-UCB certified no item as fair
    and fell back to the item of smallest ``UCB_Δ`` (a diagnostic, judged by no hypothesis).

    ``setting`` is ``"main"`` (our τ quantile, our merit steepness, the medium bias level) or names
    the alternative: ``"tau=0.3"``, ``"c=3"``, ``"bias=low"``.
    """

    instance: M.Instance
    tau: float
    taus: dict
    runs: dict = field(default_factory=dict)
    coverage: dict = field(default_factory=dict)
    covered: dict = field(default_factory=dict)
    width: dict = field(default_factory=dict)
    seconds: float = 0.0
    delta: dict = field(default_factory=dict)
    fallback: dict = field(default_factory=dict)

    def get(self, policy: str, setting: str = "main", score: str = "regret") -> np.ndarray:
        return self.runs[(policy, setting)][score]


def run_instance(
    inst: M.Instance,
    T: int,
    n_runs: int,
    seed: int,
    tau_quantile: float,
    tau_alternatives: Sequence[float],
    merit_c: float,
    c_alternatives: Sequence[float],
    bias_levels: dict,
    main_bias: str,
    n_draws: int,
    level: float = 0.95,
    w0: float = 0.1,
    cclb_runs: int = 0,
    eps_fraction: float = 0.5,
    eps_cclb: bool = True,
) -> InstanceResult:
    """Simulate every policy on one instance, at our choices and at each alternative.

    ``bias_levels`` maps a level name to ``(λ, s0)`` (confounding of the logging policy, selection
    ``P(S=1 | E=0)``). D-UCB-PCB runs at every level; F-UCB-PCB at ``main_bias``. F-UCB (and
    F-UCB-PCB) re-run at every alternative τ quantile, the FairX learners at every alternative
    ``c``; the others are re-scored at the alternative τ from their recorded discrepancies.
    CCLB and ε-CCLB run at our τ only, on the first ``cclb_runs`` runs (a round of theirs solves an
    MLE and four optimistic programs; the runs are the same users and clicks as the others' first
    runs, so comparisons stay paired); ``cclb_runs=0`` leaves them out, and ``eps_cclb=False`` leaves
    out ε-CCLB alone (no hypothesis judges it).
    """
    if not 0 <= cclb_runs <= n_runs:
        raise ValueError(f"cclb_runs={cclb_runs} is not allowed: it must lie in [0, n_runs={n_runs}]")
    taus = {q: inst.tau(q) for q in (tau_quantile, *tau_alternatives)}
    tau = taus[tau_quantile]
    res = InstanceResult(inst, tau, taus)
    runs = range(n_runs)
    truth = inst.means

    def run(policy, tau_eval, c_eval, extra=(), n=n_runs):
        env = M.RecommenderEnv(inst, tau_eval)
        r = simulate(env, policy, T, seed, n_runs=n, metrics=PER_ROUND + tuple(extra))
        res.seconds += r.seconds
        return r, scores(r, tau_eval, M.exposure_optimum(inst, c_eval))

    bounds = {}
    for name, (lam, s0) in bias_levels.items():
        counts = M.offline_counts(inst, lam, s0, n_draws, seed, runs, name=f"log.{name}")
        lo, hi = A.sound_bounds(counts, level)
        bounds[name] = (lo, hi)
        res.covered[name] = np.all((lo <= truth) & (truth <= hi), axis=(1, 2)).astype(float)
        res.coverage[name] = float(res.covered[name].mean())
        res.width[name] = float(np.mean(hi - lo))

    for q, t_q in taus.items():
        setting = "main" if q == tau_quantile else f"tau={q:g}"
        for name in ("F-UCB", "F-UCB-PCB"):
            lo, hi = bounds[main_bias] if name.endswith("PCB") else (None, None)
            pol = A.make_policy(name, inst, t_q, lower=lo, upper=hi)
            r, s = run(pol, t_q, merit_c, ("fallback",))
            res.runs[(name, setting)] = s
            res.fallback[(name, setting)] = float(r["fallback"].mean())
    for c in (merit_c, *c_alternatives):
        setting = "main" if c == merit_c else f"c={c:g}"
        for name in ("FairX-UCB", "FairX-TS"):
            r, s = run(A.make_policy(name, inst, tau, merit_c=c, w0=w0), tau, c)
            res.runs[(name, setting)] = s
            if setting == "main":
                res.delta[name] = r["delta"]
        lo, hi = bounds[main_bias]
        r, s = run(A.make_policy("FairX-UCB-PCB", inst, tau, merit_c=c, w0=w0, lower=lo, upper=hi), tau, c)
        res.runs[("FairX-UCB-PCB", setting)] = s
    for q, t_q in taus.items():
        r, s = run(A.make_policy("F-UCB (true Δ)", inst, t_q), t_q, merit_c)
        res.runs[("F-UCB (true Δ)", "main" if q == tau_quantile else f"tau={q:g}")] = s
    r, s = run(A.make_policy("D-UCB", inst, tau), tau, merit_c)
    res.runs[("D-UCB", "main")] = s
    res.delta["D-UCB"] = r["delta"]
    for name, (lo, hi) in bounds.items():
        r, s = run(A.make_policy("D-UCB-PCB", inst, tau, lower=lo, upper=hi), tau, merit_c)
        res.runs[("D-UCB-PCB", "main" if name == main_bias else f"bias={name}")] = s
    if cclb_runs:
        for name in ("CCLB", "ε-CCLB") if eps_cclb else ("CCLB",):
            pol = A.make_policy(name, inst, tau, horizon=T, eps_fraction=eps_fraction)
            res.runs[(name, "main")] = run(pol, tau, merit_c, n=cclb_runs)[1]
    # the τ-independent learners at the alternative thresholds: re-scored, not re-run
    for name, d in res.delta.items():
        for q, t_q in taus.items():
            if q != tau_quantile:
                res.runs[(name, f"tau={q:g}")] = {**res.runs[(name, "main")], **rescore(d, t_q)}
    return res


def cross_notion_table(results: Sequence[InstanceResult], setting: str = "main"):
    """Rows: policies; columns: every notion's score (mean over runs and instances, per round for
    the rates); returns a pandas DataFrame."""
    import pandas as pd

    rows = {}
    for policy in A.POLICIES:
        vals = {s: [] for s in SCORES}
        for r in results:
            if (policy, setting) in r.runs:
                for s in SCORES:
                    vals[s].append(float(np.mean(r.runs[(policy, setting)][s])))
        if vals["regret"]:
            rows[policy] = {s: float(np.mean(v)) for s, v in vals.items()}
    table = pd.DataFrame(rows).T
    return table.rename(
        columns={
            "regret": "regret R_T",
            "cf_rate": "CF unfair rate u_T",
            "violation": "V_T (Eq. 7)",
            "violation_pos": "V+_T",
            "fairness_regret": "exposure FR_T",
        }
    )


# -- the hypotheses ------------------------------------------------------------------------------------


def _over_instances(results, judge, criterion: str) -> Verdict:
    return checks.check_instances({r.instance.name: judge(r) for r in results}, criterion)


def _sensitive(results, judge_at, criterion, parameter, chosen, alternatives) -> Verdict:
    main = _over_instances(results, lambda r: judge_at(r, "main"), criterion)
    alts = {a: _over_instances(results, lambda r, a=a: judge_at(r, key(parameter, a)), criterion) for a in alternatives}
    return checks.with_sensitivity(main, parameter, chosen, alts)


def key(parameter: str, value) -> str:
    return f"{'tau' if parameter == 'tau_quantile' else 'c'}={value:g}"


H1_CRITERION = "F-UCB's V+_T below 0.05 x D-UCB's V+_T by 2 se of the paired differences, on every instance"


def judge_h1(results, tau_quantile, tau_alternatives) -> Verdict:
    def at(r, s):
        return checks.check_paired_lower(
            r.get("F-UCB", s, "violation_pos"), 0.05 * r.get("D-UCB", s, "violation_pos"), ("F-UCB", "0.05 x D-UCB")
        )

    return _sensitive(results, at, H1_CRITERION, "tau_quantile", tau_quantile, tau_alternatives)


H2_CRITERION = "u_T of FairX-UCB and of FairX-TS each above F-UCB's + 0.05 by 2 se (paired), on every instance"


def judge_h2(results, tau_quantile, tau_alternatives, merit_c, c_alternatives) -> Verdict:
    def at(r, s_tau, s_c):
        return checks.check_parts(
            {
                name: checks.check_paired_lower(
                    r.get("F-UCB", s_tau, "cf_rate"), r.get(name, s_c, "cf_rate"), ("F-UCB", name), margin=0.05
                )
                for name in ("FairX-UCB", "FairX-TS")
            },
            "both FairX learners",
        )

    main = _over_instances(results, lambda r: at(r, "main", "main"), H2_CRITERION)
    by_tau = {
        q: _over_instances(results, lambda r, q=q: at(r, key("tau_quantile", q), "main"), H2_CRITERION)
        for q in tau_alternatives
    }
    by_c = {
        c: _over_instances(results, lambda r, c=c: at(r, "main", key("merit_c", c)), H2_CRITERION)
        for c in c_alternatives
    }
    return checks.with_sensitivity(
        checks.with_sensitivity(main, "tau_quantile", tau_quantile, by_tau), "merit_c", merit_c, by_c
    )


H3_CRITERION = (
    "per (instance, learner): R_T of the learner with bounds below the plain learner's by 2 se or indistinguishable; "
    "refuted where above by 2 se"
)


def judge_h3(results, tau_quantile, tau_alternatives) -> Verdict:
    """Over every (instance, learner) pair of :data:`~.algorithms.PCB_PAIRS`; only F-UCB depends on
    τ, so the alternatives change its pairs only."""

    def at(s):
        parts = {}
        for r in results:
            for plain, clipped in A.PCB_PAIRS.items():
                setting = s if plain == "F-UCB" else "main"
                parts[f"{r.instance.name}, {plain}"] = checks.check_paired_lower(
                    r.get(clipped, setting), r.get(plain, setting), (clipped, plain)
                )
        return checks.check_instances(parts, H3_CRITERION)

    main = at("main")
    alts = {q: at(key("tau_quantile", q)) for q in tau_alternatives}
    return checks.with_sensitivity(main, "tau_quantile", tau_quantile, alts)


H4_CRITERION = (
    "g = R_T(D-UCB) - R_T(D-UCB-PCB) ordered high < medium < low bias, each pair by 2 se (paired), on every instance"
)


def judge_h4(results, main_bias: str) -> Verdict:
    def at(r):
        plain = r.get("D-UCB")
        g = {
            lvl: plain - r.get("D-UCB-PCB", "main" if lvl == main_bias else f"bias={lvl}")
            for lvl in ("low", "medium", "high")
        }
        return checks.check_paired_order(g, ["high", "medium", "low"])

    return _over_instances(results, at, H4_CRITERION)


H5_CRITERION = (
    "R_T ordered CCLB < F-UCB < FairX-UCB, each pair by 2 se (paired), on every instance; CCLB runs at our τ "
    "only (on the first cclb_runs runs), so the alternative τ are judged by the sensitivity sweep, which re-runs "
    "the notebook, CCLB included, at each; where CCLB was not run that part is not testable"
)


def judge_h5(results, tau_quantile, tau_alternatives, merit_c, c_alternatives) -> Verdict:
    cclb_ran = all(("CCLB", "main") in r.runs for r in results)

    def cclb_part(s_tau):
        if s_tau != "main" or not cclb_ran:
            return checks.not_testable(
                "CCLB runs at our τ only (its cost)" if s_tau != "main" else "CCLB was not run (cclb_runs = 0)"
            )

        def judge(r):
            cclb = r.get("CCLB")
            return checks.check_paired_lower(cclb, r.get("F-UCB")[: len(cclb)], ("CCLB", "F-UCB"))

        return _over_instances(results, judge, "CCLB < F-UCB by 2 se (paired, CCLB's runs), on every instance")

    def at(s_tau, s_c):
        order = _over_instances(
            results,
            lambda r: checks.check_paired_lower(r.get("F-UCB", s_tau), r.get("FairX-UCB", s_c), ("F-UCB", "FairX-UCB")),
            "F-UCB < FairX-UCB by 2 se (paired), on every instance",
        )
        return checks.check_parts({"CCLB < F-UCB": cclb_part(s_tau), "F-UCB < FairX-UCB": order}, H5_CRITERION)

    main = at("main", "main")
    # at an alternative τ without CCLB's runs the verdict would rest on one comparison and differ from
    # the main one for that reason alone: compare like with like, or leave τ to the sensitivity sweep
    if not cclb_ran:
        by_tau = {q: at(key("tau_quantile", q), "main") for q in tau_alternatives}
        main = checks.with_sensitivity(main, "tau_quantile", tau_quantile, by_tau)
    by_c = {c: at("main", key("merit_c", c)) for c in c_alternatives}
    return checks.with_sensitivity(main, "merit_c", merit_c, by_c)


def judge_hypotheses(results, tau_quantile, tau_alternatives, merit_c, c_alternatives, main_bias) -> dict[str, Verdict]:
    """H1-H5, each by its judge with notebook 1's criterion, keyed as :data:`HYPOTHESES`."""
    return {
        "h1_cf_implies_small_violation": judge_h1(results, tau_quantile, tau_alternatives),
        "h2_exposure_leaves_cf_unfairness": judge_h2(results, tau_quantile, tau_alternatives, merit_c, c_alternatives),
        "h3_bounds_never_hurt": judge_h3(results, tau_quantile, tau_alternatives),
        "h4_bounds_help_most_at_small_bias": judge_h4(results, main_bias),
        "h5_price_orders_notions": judge_h5(results, tau_quantile, tau_alternatives, merit_c, c_alternatives),
    }


def instance_counts(verdict: Verdict, by_learner: bool = False) -> dict[str, dict[str, int]]:
    """How many instances hold, are contradicted, mixed or inconclusive under a verdict of
    :func:`~causalbandits_lib.core.checks.check_instances` (``{"all": counts}``), or under each part
    of a verdict of :func:`~causalbandits_lib.core.checks.check_parts` whose parts were judged over
    instances (H5: ``{part: counts}``; a part not judged over instances is left out). H3's units are
    (instance, learner) pairs: ``by_learner=True`` counts them per learner."""

    def counts(details):
        return {s: int(details[s]) for s in checks.STATUSES}

    if "instances" in verdict.details:
        if not by_learner:
            return {"all": counts(verdict.details)}
        out: dict[str, dict[str, int]] = {}
        for unit, entry in verdict.details["instances"].items():
            learner = unit.rsplit(", ", 1)[-1]
            out.setdefault(learner, dict.fromkeys(checks.STATUSES, 0))[entry["status"]] += 1
        return out
    return {name: counts(part) for name, part in verdict.details.get("parts", {}).items() if "instances" in part}


# -- tables of the runs ------------------------------------------------------------------------------


def fallback_table(results: Sequence[InstanceResult]):
    """F-UCB's fallback share per (policy, setting) and instance: rows ``"policy (setting)"``,
    columns the instances (a pandas DataFrame)."""
    import pandas as pd

    return pd.DataFrame({r.instance.name: {f"{p} ({s})": v for (p, s), v in r.fallback.items()} for r in results})


def bounds_table(results: Sequence[InstanceResult]):
    """Per instance (rows): the share of runs whose bounds cover all cells, and their mean width,
    per bias level."""
    import pandas as pd

    return pd.DataFrame(
        {
            r.instance.name: {
                **{f"covered ({k})": v for k, v in r.coverage.items()},
                **{f"width ({k})": v for k, v in r.width.items()},
            }
            for r in results
        }
    ).T


def tradeoff_points(results: Sequence[InstanceResult], tau_quantile, tau_alternatives, merit_c, c_alternatives):
    """Each learner's scores (means over runs, then instances) for the trade-off figure: F-UCB and
    the true-Δ reference at every τ quantile (ascending), FairX-UCB at every ``c`` (ascending), the
    other learners that ran at our choices."""

    def mean_point(policy, setting):
        return {s: float(np.mean([np.mean(r.get(policy, setting, s)) for r in results])) for s in SCORES}

    def setting(parameter, value, chosen):
        return "main" if value == chosen else key(parameter, value)

    qs, cs = sorted([tau_quantile, *tau_alternatives]), sorted([merit_c, *c_alternatives])
    points = {
        "F-UCB (τ varies)": [mean_point("F-UCB", setting("tau_quantile", q, tau_quantile)) for q in qs],
        "F-UCB, true Δ (τ varies)": [
            mean_point("F-UCB (true Δ)", setting("tau_quantile", q, tau_quantile)) for q in qs
        ],
        "FairX-UCB (c varies)": [mean_point("FairX-UCB", setting("merit_c", c, merit_c)) for c in cs],
    }
    others = ("D-UCB", "D-UCB-PCB", "F-UCB-PCB", "FairX-UCB-PCB", "FairX-TS", "CCLB", "ε-CCLB")
    points.update({p: [mean_point(p, "main")] for p in others if (p, "main") in results[0].runs})
    return points


#: the paired differences behind each hypothesis, for :func:`evidence_table`: ``label: (a, b)``,
#: each ``(policy, setting, score, factor)``; the difference is ``a - b`` run by run
EVIDENCE = {
    "H1: V+(F-UCB) - 0.05 V+(D-UCB)": (
        ("F-UCB", "main", "violation_pos", 1.0),
        ("D-UCB", "main", "violation_pos", 0.05),
    ),
    "H2: u(FairX-UCB) - u(F-UCB)": (("FairX-UCB", "main", "cf_rate", 1.0), ("F-UCB", "main", "cf_rate", 1.0)),
    "H2: u(FairX-TS) - u(F-UCB)": (("FairX-TS", "main", "cf_rate", 1.0), ("F-UCB", "main", "cf_rate", 1.0)),
    "H3: R(D-UCB-PCB) - R(D-UCB)": (("D-UCB-PCB", "main", "regret", 1.0), ("D-UCB", "main", "regret", 1.0)),
    "H3: R(F-UCB-PCB) - R(F-UCB)": (("F-UCB-PCB", "main", "regret", 1.0), ("F-UCB", "main", "regret", 1.0)),
    "H3: R(FairX-UCB-PCB) - R(FairX-UCB)": (
        ("FairX-UCB-PCB", "main", "regret", 1.0),
        ("FairX-UCB", "main", "regret", 1.0),
    ),
    "H4: g(low) - g(high)": (("D-UCB-PCB", "bias=high", "regret", 1.0), ("D-UCB-PCB", "bias=low", "regret", 1.0)),
    "H5: R(FairX-UCB) - R(F-UCB)": (("FairX-UCB", "main", "regret", 1.0), ("F-UCB", "main", "regret", 1.0)),
    "H5: R(F-UCB) - R(CCLB) (CCLB's runs)": (("F-UCB", "main", "regret", 1.0), ("CCLB", "main", "regret", 1.0)),
}


def evidence_table(results: Sequence[InstanceResult]):
    """The paired differences of :data:`EVIDENCE` pooled over instances: rows the differences,
    columns the mean and its standard error over all runs (a glance; the verdicts judge each
    instance). A difference with CCLB uses CCLB's runs, the first of the others'; it is left out when
    CCLB did not run."""
    import pandas as pd

    def values(r, policy, setting, score, factor):
        return factor * r.get(policy, setting, score)

    rows = {}
    for label, (a, b) in EVIDENCE.items():
        if any((p, s) not in results[0].runs for p, s, _, _ in (a, b)):
            continue
        d = []
        for r in results:
            x, y = values(r, *a), values(r, *b)
            n = min(len(x), len(y))
            d.append(x[:n] - y[:n])
        d = np.concatenate(d)
        rows[label] = (d.mean(), d.std(ddof=1) / np.sqrt(len(d)))
    return pd.DataFrame(rows, index=["mean (pooled over instances)", "se"]).T


# -- exact trade-off curves -------------------------------------------------------------------------------


def exact_price_curves(inst: M.Instance, quantiles: Sequence[float], cs: Sequence[float]) -> dict:
    """The exact price of fairness per round (unconstrained optimum minus the notion's fair optimum)
    as its threshold varies: τ at each quantile for the per-decision, average-constraint and
    fair-intervention notions, ``c`` for exposure."""
    p, m = inst.context_probs, inst.means
    best = float(p @ m.max(axis=1))
    taus = [inst.tau(q) for q in quantiles]
    out = {"tau": np.array(taus), "c": np.array(cs, dtype=float)}
    out["per-decision CF"] = np.array([best - M.optimum_values(inst, t, 1.0)["per-decision CF"] for t in taus])
    out["average CF constraint"] = np.array([best - M.average_constraint_optimum(inst, t)[0] for t in taus])
    out["fair intervention"] = np.array([best - M.optimum_values(inst, t, 1.0)["fair intervention"] for t in taus])
    out["exposure"] = np.array([best - float(M.exposure_optimum(inst, c) @ inst.merit_means) for c in cs])
    return out
