"""The learners on the random family (ours): hypotheses H8-H10 of ``notebooks/synthesis/hypotheses.yml``.

On each model with something to make fair, at the matched levels of :mod:`.study`:

==================  =====================================================================================
learner             how it runs (``τ_j``: the per-decision matched threshold, ``d_j``: the matched level)
==================  =====================================================================================
D-UCB               unconstrained, ``n_runs`` runs
D-UCB-PCB           D-UCB clipped into the sound bounds of the run's own log at the medium bias level
F-UCB               the fucb chapter's rule (Eq. 12 as printed) at ``τ_2``: its fallback share only
F-UCB-cert          ours (notebook 3, "The learners"), at ``τ_1, τ_2, τ_3``
F-UCB-cert-PCB      F-UCB-cert at ``τ_2`` clipped into the same bounds
FairX-UCB(-PCB)     at ``merit_c``, without and with the bounds
CCLB                at ``τ = d_1, d_2, d_3``, on the first ``cclb_runs`` runs
==================  =====================================================================================

Every learner of a model runs on the same seed, so run ``i`` of each faces the same users and
clicks (CCLB's runs are the first ``cclb_runs`` of them) and every comparison is paired. Per run
(:func:`run_scores`, all exact given the items deployed): the regret ``R_T`` against the
unconstrained optimum; the rate ``u`` of decisions with ``Δ > τ_2``; FairX's fairness regret per
round ``FR/T``; the deployed policy's mean discrepancy ``D``; the demographic parity and equal
opportunity gaps of the recommendations (hypotheses.yml, H10's definitions); the fallback share.
The learning cost of a fair learner (H9) is its regret beyond the exact optimum of its own notion
at its own threshold, ``LC = R_T - T · P_N(d_j)`` (:mod:`.notions`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core import checks
from ..core.checks import Verdict
from ..core.runner import simulate
from . import algorithms as A
from . import model as M
from . import notions as N

__all__ = [
    "METRICS",
    "run_scores",
    "allowed_misses",
    "ModelRuns",
    "run_model",
    "CERT_THRESHOLDS",
    "learner_metrics",
    "part_metrics",
    "cert_thresholds",
    "judge_h8",
    "judge_h9",
    "judge_h10",
    "learner_table",
    "part_counts",
    "fallback_parts",
    "fallback_table",
]

#: the per-round values every learner's simulation keeps
METRICS = ("regret", "delta", "exposure", "O")
_A_OF_CONTEXT = np.array([a for a, _ in M.CONTEXTS])


def run_scores(result, inst, tau: float, pi_fair: np.ndarray) -> dict[str, np.ndarray]:
    """Each run's scores (module docstring) from a simulation that kept :data:`METRICS`; ``tau``
    is the threshold of ``u`` and ``pi_fair`` FairX's fair exposure at the learners' merit."""
    exposure = np.asarray(result["exposure"], dtype=float)  # (R, T, K)
    ctx = np.asarray(result["O"], dtype=np.int64)  # (R, T)
    delta = np.asarray(result["delta"], dtype=float)
    T = exposure.shape[1]
    mu = inst.means[ctx]  # (R, T, K)
    group = _A_OF_CONTEXT[ctx]
    p, tpr = [], []
    for a in (0, 1):
        w = (group == a).astype(float)[..., None]  # (R, T, 1)
        n = np.maximum(w.sum(axis=1), 1.0)
        p.append((w * exposure).sum(axis=1) / n)
        tpr.append((w * mu * exposure).sum(axis=1) / np.maximum((w * mu).sum(axis=1), 1e-300))
    out = {
        "regret": result.final("regret"),
        "u": (delta > tau).mean(axis=1),
        "fr": np.abs(exposure - pi_fair).sum(axis=(1, 2)) / T,
        "D": (exposure * inst.discrepancy[ctx]).sum(axis=2).mean(axis=1),
        "dp": 0.5 * np.abs(p[1] - p[0]).sum(axis=1),
        "eo": np.abs(tpr[1] - tpr[0]).mean(axis=1),
    }
    if "fallback" in result.metrics:
        out["fallback"] = np.asarray(result["fallback"], dtype=float).mean(axis=1)
    if "own_ucb_delta" in result.metrics:  # rounds where the bound of the item played missed its true Δ
        out["missed"] = (np.asarray(result["own_ucb_delta"], dtype=float) < delta - 1e-12).sum(axis=1).astype(float)
    return out


def allowed_misses(T: int) -> float:
    """The expected number of rounds in which F-UCB-cert's bound may miss the true Δ of the item it
    plays, by notebook 3's union bound (at most ``4/n`` at round ``n``, from round 2 on): ``4 Σ_{n=2}^T 1/n``."""
    return float(4.0 * np.sum(1.0 / np.arange(2, T + 1)))


@dataclass
class ModelRuns:
    """One model's learner runs: ``scores[(learner, j)]`` (``j`` the level index, or ``None`` for
    the learners that run once) maps to :func:`run_scores`'s dict; ``taus`` the per-decision matched
    thresholds, ``levels`` the matched levels, ``prices[notion]`` the exact prices per level,
    ``u_pi0`` the unconstrained optimum's exact rate of decisions with ``Δ > τ_2``, ``dp_pi0`` its
    exact DP gap."""

    name: str
    T: int
    taus: np.ndarray
    levels: np.ndarray
    prices: dict
    u_pi0: float
    dp_pi0: float
    scores: dict = field(default_factory=dict)
    seconds: float = 0.0

    def get(self, learner: str, j: int | None = None, score: str = "regret") -> np.ndarray:
        return self.scores[(learner, j)][score]

    def learning_cost(self, learner: str, j: int) -> np.ndarray:
        """``R_T - T · P_N(d_j)`` with ``N`` the learner's notion (F-UCB-cert: per-decision; CCLB:
        the average constraint)."""
        notion = {"F-UCB-cert": "per-decision CF", "CCLB": "average CF constraint"}[learner]
        return self.get(learner, j) - self.T * self.prices[notion][j]


def run_model(
    inst,
    model_study,
    T: int,
    n_runs: int,
    cclb_runs: int,
    seed: int,
    merit_c: float,
    w0: float,
    bias: tuple[float, float],
    n_draws: int,
    level: float,
    alpha_c: float | None = None,
    cert_threshold: str = "left",
) -> ModelRuns:
    """Every learner of the module docstring on one model (``model_study`` is its
    :class:`~.study.ModelStudy`; the model must have something to make fair).

    Two open choices of F-UCB-cert (ours, judged over their alternatives by the sensitivity sweep):
    ``alpha_c`` its radius weight (None: :data:`~.algorithms.CERT_KNOBS`'), and ``cert_threshold``,
    where in the interval of per-decision thresholds with the matched optimum it runs: ``"left"``,
    the matched threshold itself, or ``"middle"``, halfway to the interval's right end
    (:func:`cert_thresholds`)."""
    if not model_study.testable:
        raise ValueError(f"{inst.name} has nothing to make fair (D(π⁰) = D_min): no learner runs on it")
    if not 1 <= cclb_runs <= n_runs:
        raise ValueError(f"cclb_runs={cclb_runs} is not allowed: it must lie in [1, n_runs={n_runs}]")
    m = model_study.matched
    taus = np.array([p.threshold for p in m.prices["per-decision CF"]])
    cert_taus = cert_thresholds(inst, m.prices["per-decision CF"], cert_threshold)
    tau2 = float(taus[1])
    pi0 = m.pi0
    u_pi0 = float(inst.context_probs @ (pi0 * (inst.discrepancy > tau2)).sum(axis=1))
    out = ModelRuns(
        inst.name,
        T,
        taus,
        np.asarray(m.levels),
        {n: np.array([p.price for p in m.prices[n]]) for n in N.NOTIONS},
        u_pi0,
        N.demographic_parity(inst, pi0),
    )
    pi_fair = M.exposure_optimum(inst, merit_c)
    counts = M.offline_counts(inst, bias[0], bias[1], n_draws, seed, range(n_runs), name="log.medium")
    lo, hi = A.sound_bounds(counts, level)

    def run(key, name, tau, n=n_runs, **kw):
        pol = A.make_policy(name, inst, tau, merit_c=merit_c, w0=w0, **kw)
        extra = ("fallback", "own_ucb_delta") if name.startswith("F-UCB") else ()
        r = simulate(M.RecommenderEnv(inst, tau), pol, T, seed, n_runs=n, metrics=METRICS + extra)
        out.seconds += r.seconds
        out.scores[key] = run_scores(r, inst, tau2, pi_fair)

    run(("D-UCB", None), "D-UCB", tau2)
    run(("D-UCB-PCB", None), "D-UCB-PCB", tau2, lower=lo, upper=hi)
    run(("F-UCB", None), "F-UCB", tau2)
    for j, tau in enumerate(cert_taus):
        same = [i for i in range(j) if cert_taus[i] == tau]
        if same:  # the same threshold: the same runs
            out.scores[("F-UCB-cert", j)] = out.scores[("F-UCB-cert", same[0])]
        else:
            run(("F-UCB-cert", j), "F-UCB-cert", float(tau), alpha_c=alpha_c)
    run(("F-UCB-cert-PCB", None), "F-UCB-cert-PCB", float(cert_taus[1]), lower=lo, upper=hi, alpha_c=alpha_c)
    run(("FairX-UCB", None), "FairX-UCB", tau2)
    run(("FairX-UCB-PCB", None), "FairX-UCB-PCB", tau2, lower=lo, upper=hi)
    for j, d in enumerate(out.levels):
        run(("CCLB", j), "CCLB", float(d), n=cclb_runs, horizon=T)
    return out


#: where F-UCB-cert runs in the interval of per-decision thresholds that have the matched optimum
CERT_THRESHOLDS = ("left", "middle")


def cert_thresholds(inst, prices, where: str = "left") -> np.ndarray:
    """F-UCB-cert's threshold at each matched level from the per-decision notion's matched prices
    (:class:`~.notions.Price`): ``"left"`` the matched threshold, the smallest with the matched
    optimum; ``"middle"`` halfway between it and the interval's right end, ``Price.same_until``, or
    the model's largest discrepancy where the optimum never changes again (every threshold from
    there on certifies every item)."""
    if where not in CERT_THRESHOLDS:
        raise ValueError(f"cert_threshold={where!r} is not allowed: it must be one of {', '.join(CERT_THRESHOLDS)}")
    left = np.array([p.threshold for p in prices], dtype=float)
    if where == "left":
        return left
    right = np.array([min(p.same_until, float(inst.discrepancy.max())) for p in prices], dtype=float)
    return np.where(right > left, (left + right) / 2, left)


# -- the judges -----------------------------------------------------------------------------------------


def judge_h8(runs, margin_rate: float, margin_fr: float, criterion: str = "") -> tuple[Verdict, dict]:
    """H8: per model, F-UCB-cert's rate and FairX-UCB's fairness regret per round not higher with
    the bounds by more than their margins, and D-UCB's rate with the bounds closer to its optimum's."""
    per_model = {}
    for r in runs:
        cert, cert_b = r.get("F-UCB-cert", 1, "u"), r.get("F-UCB-cert-PCB", None, "u")
        fx, fx_b = r.get("FairX-UCB", None, "fr"), r.get("FairX-UCB-PCB", None, "fr")
        du, du_b = r.get("D-UCB", None, "u"), r.get("D-UCB-PCB", None, "u")
        parts = {
            "F-UCB-cert": checks.check_paired_lower(
                cert_b, cert + margin_rate, ("u(F-UCB-cert-PCB)", f"u(F-UCB-cert) + {margin_rate:g}")
            ),
            "FairX-UCB": checks.check_paired_lower(
                fx_b, fx + margin_fr, ("FR/T(FairX-UCB-PCB)", f"FR/T(FairX-UCB) + {margin_fr:g}")
            ),
            "D-UCB": checks.check_paired_lower(
                np.abs(du_b - r.u_pi0), np.abs(du - r.u_pi0), ("|u(D-UCB-PCB) - u(π⁰)|", "|u(D-UCB) - u(π⁰)|")
            ),
        }
        per_model[r.name] = checks.check_parts(parts, "each learner's unfairness with and without the bounds")
    return checks.check_instances(per_model, criterion), per_model


def _certifies(r, j: int, most: float) -> tuple[bool, float]:
    share = float(np.mean(r.get("F-UCB-cert", j, "fallback")))
    return share <= most, share


def judge_h9(runs, fallback_most: float, criterion: str = "") -> tuple[Verdict, dict]:
    """H9: per level, F-UCB-cert's learning cost below CCLB's (paired over CCLB's runs); a level where
    F-UCB-cert falls back in more than ``fallback_most`` of the rounds is not testable."""
    per_model = {}
    for r in runs:
        parts = {}
        for j, d in enumerate(r.levels):
            label = f"q = {N.QUANTILES[j]:g}"
            ok, share = _certifies(r, j, fallback_most)
            if not ok:
                parts[label] = checks.not_testable(
                    f"F-UCB-cert falls back in {share:.1%} of the rounds (more than {fallback_most:.0%}): "
                    "it does not enforce the notion"
                )
                continue
            n = len(r.get("CCLB", j))
            parts[label] = checks.check_paired_lower(
                r.learning_cost("F-UCB-cert", j)[:n], r.learning_cost("CCLB", j), ("LC(F-UCB-cert)", "LC(CCLB)")
            )
        per_model[r.name] = checks.check_parts(parts, "F-UCB-cert's learning cost below CCLB's at each level")
    return checks.check_instances(per_model, criterion), per_model


def judge_h10(runs, dp_least: float, fallback_most: float, criterion: str = "") -> tuple[Verdict, dict]:
    """H10: at the middle level, F-UCB-cert's and CCLB's DP and EO gaps below D-UCB's (paired); a
    model whose unconstrained optimum's DP gap is below ``dp_least`` is not testable, as is
    F-UCB-cert where it falls back in more than ``fallback_most`` of the rounds."""
    per_model = {}
    for r in runs:
        if r.dp_pi0 < dp_least:
            per_model[r.name] = checks.not_testable(
                f"the unconstrained optimum's DP gap {r.dp_pi0:.3f} is below {dp_least:g}: no disparity to narrow"
            )
            continue
        parts = {}
        ok, share = _certifies(r, 1, fallback_most)
        for learner, j in (("F-UCB-cert", 1), ("CCLB", 1)):
            n = len(r.get(learner, j))
            for gap in ("dp", "eo"):
                label = f"{learner}: {gap.upper()}"
                if learner == "F-UCB-cert" and not ok:
                    parts[label] = checks.not_testable(f"F-UCB-cert falls back in {share:.1%} of the rounds")
                    continue
                parts[label] = checks.check_paired_lower(
                    r.get(learner, j, gap),
                    r.get("D-UCB", None, gap)[:n],
                    (f"{gap.upper()}({learner})", f"{gap.upper()}(D-UCB)"),
                )
        per_model[r.name] = checks.check_parts(parts, "each fair learner's DP and EO gaps below D-UCB's")
    return checks.check_instances(per_model, criterion), per_model


def fallback_parts(runs, most: float) -> int:
    """The (model, level) parts at which F-UCB-cert falls back in more than ``most`` of the rounds
    (those H9 does not judge for that reason)."""
    return sum(not _certifies(r, j, most)[0] for r in runs for j in range(len(r.levels)))


def part_counts(per_model: dict, by_label: bool = True) -> dict:
    """The parts of every model's verdict counted by verdict: ``{label: {verdict: count}}`` with
    the part labels of the judges (learner, level or gap), or ``{"all": {...}}``."""
    out: dict = {}
    for v in per_model.values():
        for label, part in v.details.get("parts", {}).items():
            key = label if by_label else "all"
            out.setdefault(key, {})
            out[key][part["verdict"]] = out[key].get(part["verdict"], 0) + 1
    return out


# -- tables ---------------------------------------------------------------------------------------------


def learner_table(runs) -> pd.DataFrame:
    """Price and learning cost: one row per (learner, level) with the mean over models of the mean
    over runs of ``R_T``, of the notion's exact price ``T · P_N(d_j)`` and of the learning cost, and
    the other scores (``u`` at ``τ_2``, ``D``, DP, EO, fallback share)."""
    rows = []
    keys = sorted({k for r in runs for k in r.scores}, key=lambda k: (k[0], -1 if k[1] is None else k[1]))
    for learner, j in keys:
        vals = {}
        for r in runs:
            s = r.scores[(learner, j)]
            vals.setdefault("R_T", []).append(float(np.mean(s["regret"])))
            if learner in ("F-UCB-cert", "CCLB") and j is not None:
                price = r.T * r.prices["per-decision CF" if learner == "F-UCB-cert" else "average CF constraint"][j]
                vals.setdefault("T x price", []).append(price)
                vals.setdefault("learning cost", []).append(float(np.mean(r.learning_cost(learner, j))))
            for key in ("u", "D", "dp", "eo", "fallback"):
                if key in s:
                    vals.setdefault(key, []).append(float(np.mean(s[key])))
        row = {"learner": learner, "level": "" if j is None else f"q = {N.QUANTILES[j]:g}"}
        row.update({k: float(np.mean(v)) for k, v in vals.items()})
        rows.append(row)
    return pd.DataFrame(rows)


def fallback_table(runs) -> pd.DataFrame:
    """The share of rounds in which F-UCB (at ``τ_2``) and F-UCB-cert (at each level) certified no
    item, per model."""
    rows = {}
    for r in runs:
        row = {"F-UCB (Eq. 12), q = 0.5": float(np.mean(r.get("F-UCB", None, "fallback")))}
        for j in range(len(r.levels)):
            row[f"F-UCB-cert, q = {N.QUANTILES[j]:g}"] = float(np.mean(r.get("F-UCB-cert", j, "fallback")))
        rows[r.name] = row
    return pd.DataFrame(rows).T


# -- the notebook's metrics ------------------------------------------------------------------------------

#: the columns of :func:`learner_table` recorded as metrics
LEARNER_METRICS = ("R_T", "T x price", "learning cost", "fallback", "u", "dp", "eo")


def learner_metrics(learners: pd.DataFrame, fallback: pd.DataFrame) -> dict[str, float]:
    """``learners.{learner}[.{level}].{column}`` of :func:`learner_table` (columns of
    :data:`LEARNER_METRICS` with a value) and ``fallback.median.{column}`` of :func:`fallback_table`."""
    out = {}
    for _, row in learners.iterrows():
        name = f"learners.{row['learner']}" + (f".{row['level'].replace(' ', '')}" if row["level"] else "")
        for col in LEARNER_METRICS:
            if col in row and pd.notna(row[col]):
                out[f"{name}.{col.replace(' ', '_')}"] = row[col]
    for col, v in fallback.median().items():
        out[f"fallback.median.{col.replace(' ', '_').replace(',', '')}"] = v
    return out


def part_metrics(name: str, per_model: dict, by_label: bool = True) -> dict[str, int]:
    """``{name}.parts.{label}.{verdict}`` from :func:`part_counts`."""
    return {
        f"{name}.parts.{label.replace(' ', '_').replace(':', '')}.{verdict.replace(' ', '_')}": count
        for label, counts in part_counts(per_model, by_label).items()
        for verdict, count in counts.items()
    }
