"""The exact study of the random family (ours): hypotheses H6 and H7 of
``notebooks/synthesis/hypotheses.yml`` judged over many models, and the tables and figures that
show each notion's price, who pays it and what it does to the two group measures.

Every number here is exact on the model (:mod:`.notions`, whose quantities the tests cross-check
against pgmpy through :mod:`.model`); nothing is simulated, so a verdict is decided by the
registered margins alone and no test is underpowered. The learners' side (H8-H10, each learner's
regret split into its notion's price and its learning cost) reads :class:`ModelStudy` for the
matched thresholds.

The judges follow the registered criteria literally:

- **H6** (:func:`judge_h6`): at each matched level ``d_j`` the prices must order
  ``per-decision CF < fair intervention < exposure``, each step by more than the margin
  (:func:`~causalbandits_lib.core.checks.check_order`, both steps holding → the level holds, none →
  contradicted, one → mixed). A step between two notions that both cannot reach ``d_j`` is not
  testable, and the level is judged on its other step alone; a level where both steps are so is
  not testable. A step that one notion's unreachability decides (a finite price below ``+inf``)
  counts as holding and is counted apart (:attr:`H6Result.decided_by_reach`). The levels are
  combined by ``check_parts``, the models by ``check_instances``; a model with ``D(π⁰) = D_min``
  is not testable.
- **H7** (:func:`judge_h7`): for each user-side notion and level, the group the unconstrained
  optimum serves worse loses at most the margin more than the other group
  (``check_at_most(ℓ_{a⁻} - ℓ_{a⁺}, margin)``); a notion that cannot reach the level is not
  testable there; a model whose groups the unconstrained optimum serves within the margin of each
  other has no group served worse and is not testable.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..core import checks
from ..core.checks import Verdict
from . import family as F
from . import model as M
from . import notions as N

__all__ = [
    "H6_ORDER",
    "H7_NOTIONS",
    "ModelStudy",
    "study_model",
    "study",
    "price_table",
    "H6Result",
    "judge_h6",
    "judge_h7",
    "group_table",
    "average_cheapest",
    "matched_summary",
    "h7_tally",
    "pgmpy_gaps",
    "matched_metrics",
    "group_metrics",
    "h6_metrics",
    "h7_metrics",
]

#: the ordering H6 states, cheapest first
H6_ORDER = ("per-decision CF", "fair intervention", "exposure")
#: the user-side notions H7 judges (exposure is reported beside them, not judged)
H7_NOTIONS = ("per-decision CF", "average CF constraint", "fair intervention")


@dataclass(frozen=True)
class ModelStudy:
    """One model's exact comparison: its :class:`~.notions.Matched` prices and, for every notion and
    level it reaches, the :class:`~.notions.GroupOutcomes` of the matched optimum (``None`` where
    unreachable); ``pi0`` is the unconstrained optimum's."""

    name: str
    matched: N.Matched
    outcomes: dict
    pi0: N.GroupOutcomes
    extra: dict = field(default_factory=dict)

    @property
    def testable(self) -> bool:
        return self.matched.testable


def study_model(inst) -> ModelStudy:
    """Every notion's price, matched threshold and group outcomes at the three matched levels."""
    m = N.matched(inst)
    outcomes = {
        notion: tuple(None if p.policy is None else N.group_outcomes(inst, p.policy) for p in m.prices[notion])
        for notion in N.NOTIONS
    }
    return ModelStudy(inst.name, m, outcomes, N.group_outcomes(inst, m.pi0), dict(inst.extra))


def study(models) -> list[ModelStudy]:
    """:func:`study_model` of each model, in order."""
    return [study_model(inst) for inst in models]


def price_table(studies) -> pd.DataFrame:
    """One row per (model, level): the level, ``D_min``, ``D(π⁰)``, each notion's price (``inf``
    where it cannot reach the level) and matched threshold."""
    rows = []
    for s in studies:
        m = s.matched
        for j, (q, d) in enumerate(zip(m.quantiles, m.levels)):
            row = {"model": s.name, "q": q, "level": d, "D_min": m.d_min, "D(pi0)": m.d_pi0, "testable": m.testable}
            for notion in N.NOTIONS:
                p = m.prices[notion][j]
                row[f"price: {notion}"] = p.price
                row[f"threshold: {notion}"] = p.threshold
            rows.append(row)
    return pd.DataFrame(rows)


# -- H6 -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class H6Result:
    """H6's verdict, each model's verdict and the counts the registration asks to report beside it:
    ``decided_by_reach`` steps where one notion's unreachability decided the step,
    ``both_unreachable`` steps not testable because neither notion reaches the level; ``steps``
    tallies each step (``"a < b"``) over the testable models' levels: ``holds`` (by more than the
    margin, both reached), ``by reach`` (only ``a`` reaches), ``within margin`` (``|P_b - P_a| <=``
    the margin), ``reversed`` (``P_b < P_a`` by more than the margin, or only ``b`` reaches) and
    ``neither reaches``."""

    verdict: Verdict
    per_model: dict
    decided_by_reach: int
    both_unreachable: int
    n_steps: int
    steps: dict = field(default_factory=dict)


def _h6_level(prices: dict, margin: float) -> tuple[Verdict, int, int]:
    steps = list(zip(H6_ORDER, H6_ORDER[1:]))
    judged = [(a, b) for a, b in steps if np.isfinite(prices[a]) or np.isfinite(prices[b])]
    by_reach = sum(1 for a, b in judged if not (np.isfinite(prices[a]) and np.isfinite(prices[b])))
    skipped = len(steps) - len(judged)
    if not judged:
        return checks.not_testable("no notion of either step reaches this level"), 0, skipped
    if len(judged) == len(steps):
        return checks.check_order(prices, list(H6_ORDER), descending=False, margin=margin), by_reach, skipped
    ((a, b),) = judged
    v = checks.check_order({a: prices[a], b: prices[b]}, [a, b], descending=False, margin=margin)
    note = f"; the step {steps[0] if steps[0] != (a, b) else steps[1]} is not testable (both notions unreachable)"
    return Verdict(v.verdict, v.reason + note, v.criterion, v.details), by_reach, skipped


def _step_outcome(pa: float, pb: float, margin: float) -> str:
    if not (np.isfinite(pa) or np.isfinite(pb)):
        return "neither reaches"
    if not np.isfinite(pb):
        return "by reach"
    if not np.isfinite(pa):
        return "reversed"
    if pb - pa > margin:
        return "holds"
    return "within margin" if abs(pb - pa) <= margin else "reversed"


def judge_h6(studies, margin: float, criterion: str = "") -> H6Result:
    """H6 over the models (module docstring); ``margin`` is the registered price difference."""
    per_model, reach, both, n = {}, 0, 0, 0
    outcomes = ("holds", "by reach", "within margin", "reversed", "neither reaches")
    tally = {f"{a} < {b}": dict.fromkeys(outcomes, 0) for a, b in zip(H6_ORDER, H6_ORDER[1:])}
    for s in studies:
        if not s.testable:
            per_model[s.name] = checks.not_testable("D(π⁰) = D_min: the model has nothing to make fair")
            continue
        levels = {}
        for j, (q, d) in enumerate(zip(s.matched.quantiles, s.matched.levels)):
            prices = {notion: s.matched.prices[notion][j].price for notion in H6_ORDER}
            for a, b in zip(H6_ORDER, H6_ORDER[1:]):
                tally[f"{a} < {b}"][_step_outcome(prices[a], prices[b], margin)] += 1
            v, r, b = _h6_level(prices, margin)
            levels[f"q = {q:g} (d = {d:.4f})"] = v
            reach, both, n = reach + r, both + b, n + 2
        per_model[s.name] = checks.check_parts(levels, f"{' < '.join(H6_ORDER)} at each matched level")
    verdict = checks.check_instances(per_model, criterion)
    return H6Result(verdict, per_model, reach, both, n, tally)


def average_cheapest(studies, tol: float = 1e-7) -> dict:
    """The identity H6 leaves out: the average constraint's price is at most every other notion's
    at every level of every testable model (each ``name: bool``). Every other notion's matched
    optimum meets the average constraint at the level, so the linear program's optimum can only be
    cheaper; ``tol`` is the linear program's solver tolerance."""
    out = {}
    for s in studies:
        if not s.testable:
            continue
        for j, q in enumerate(s.matched.quantiles):
            avg = s.matched.prices["average CF constraint"][j].price
            others = [s.matched.prices[n][j].price for n in H6_ORDER]
            out[f"{s.name}, q = {q:g}"] = bool(avg <= min(others) + tol)
    return out


# -- H7 -------------------------------------------------------------------------------------------------


def judge_h7(studies, margin: float, criterion: str = "") -> tuple[Verdict, dict]:
    """H7 over the models (module docstring); ``margin`` is the registered extra loss. Returns the
    verdict and each model's."""
    per_model = {}
    for s in studies:
        gap = abs(float(s.pi0.value[1] - s.pi0.value[0]))
        if not s.testable:
            per_model[s.name] = checks.not_testable("D(π⁰) = D_min: the model has nothing to make fair")
            continue
        if gap < margin:
            per_model[s.name] = checks.not_testable(
                f"|v_1(π⁰) - v_0(π⁰)| = {gap:.4f} < {margin:g}: no group is served worse"
            )
            continue
        parts = {}
        for notion in H7_NOTIONS:
            for q, out in zip(s.matched.quantiles, s.outcomes[notion]):
                label = f"{notion}, q = {q:g}"
                if out is None:
                    parts[label] = checks.not_testable(f"{notion} cannot reach the level")
                else:
                    parts[label] = checks.check_at_most(
                        out.extra_loss, margin, f"extra loss of the group served worse (A = {out.worse_served})"
                    )
        per_model[s.name] = checks.check_parts(parts, "ℓ_{a⁻} - ℓ_{a⁺} at most the margin, per (notion, level)")
    return checks.check_instances(per_model, criterion), per_model


def h7_tally(per_model: dict) -> dict:
    """H7's parts counted per notion over the models judged: ``{notion: {verdict: count}}``."""
    out = {n: {} for n in H7_NOTIONS}
    for v in per_model.values():
        for label, part in v.details.get("parts", {}).items():
            notion = label.split(", q = ")[0]
            out[notion][part["verdict"]] = out[notion].get(part["verdict"], 0) + 1
    return out


def group_table(studies, q: float = 0.5) -> pd.DataFrame:
    """Who pays and who is protected at the matched level ``q``: one row per (model, notion) with
    each user group's loss ``ℓ_a`` and mean discrepancy, the extra loss of the group served worse,
    the DP and EO gaps and the exposure of item group 1; the unconstrained optimum's row is
    ``notion = "unconstrained"``. Testable models only; unreachable notions are left out."""
    rows = []
    for s in studies:
        if not s.testable:
            continue
        j = list(s.matched.quantiles).index(q)
        cases = [("unconstrained", s.pi0)] + [(n, s.outcomes[n][j]) for n in N.NOTIONS]
        for notion, out in cases:
            if out is None:
                continue
            rows.append(
                {
                    "model": s.name,
                    "notion": notion,
                    "worse served": s.pi0.worse_served,
                    "loss A=0": out.regret[0],
                    "loss A=1": out.regret[1],
                    "extra loss (worse served)": out.extra_loss,
                    "D A=0": out.discrepancy[0],
                    "D A=1": out.discrepancy[1],
                    "DP": out.dp,
                    "EO": out.eo,
                    "exposure of item group 1": out.exposure[1],
                }
            )
    return pd.DataFrame(rows)


def matched_summary(table: pd.DataFrame) -> pd.DataFrame:
    """The matched comparison in one table (testable models only): per notion and matched level,
    the share of models where the notion reaches the level, the median and the largest price where
    it does, and the share of models where it is the cheapest of H6's three notions (ties within
    :data:`~.notions.PRICE_TIE` count for each tied notion)."""
    t = table[table["testable"]]
    rows = []
    for q, at in t.groupby("q", sort=True):
        h6 = at[[f"price: {n}" for n in H6_ORDER]].to_numpy()
        cheapest = h6 <= h6.min(axis=1, keepdims=True) + N.PRICE_TIE
        for notion in N.NOTIONS:
            p = at[f"price: {notion}"].to_numpy()
            ok = np.isfinite(p)
            row = {
                "q": q,
                "notion": notion,
                "models": len(p),
                "reaches": ok.mean() if len(p) else np.nan,
                "median price": float(np.median(p[ok])) if ok.any() else np.inf,
                "largest price": float(p[ok].max()) if ok.any() else np.inf,
            }
            row["cheapest of H6's three"] = (
                float(cheapest[:, H6_ORDER.index(notion)].mean()) if notion in H6_ORDER and len(p) else np.nan
            )
            rows.append(row)
    return pd.DataFrame(rows)


def pgmpy_gaps(inst) -> dict[str, float]:
    """The largest differences between our numpy tables and pgmpy's exact inference on one model:
    the means ``μ_k(o)``, the counterfactual discrepancies ``Δ_k(o)`` (abduction, action and
    prediction, :func:`~.model.pgmpy_counterfactual_means`) and the offline log's cell
    probabilities at the model's own bias ``(λ, s0, s1)`` (:func:`~.family.log_bias`)."""
    lam, s0, s1 = F.log_bias(inst)
    scm = M.build_scm(inst, lam=lam, s0=s0, s1=s1)
    cf = {a: M.pgmpy_counterfactual_means(scm, a) for a in (0, 1)}
    q = scm.query(["I", "A", "U", "E", "Y", "S"])
    ref = np.stack([q[:, a, u, :, :, 1] for a, u in M.CONTEXTS], axis=1)
    return {
        "means": float(np.abs(M.pgmpy_means(scm) - inst.means).max()),
        "discrepancies": float(np.abs(np.abs(cf[1] - cf[0]) - inst.discrepancy).max()),
        "log cells": float(np.abs(M.log_cell_probabilities(inst, lam, s0, s1) - ref).max()),
    }


# -- the notebook's metrics ------------------------------------------------------------------------------


def _word(text: str) -> str:
    return str(text).replace(" ", "_")


def matched_metrics(summary: pd.DataFrame) -> dict[str, float]:
    """``matched.q{q}.{notion}.reaches`` and ``.median_price`` from :func:`matched_summary`."""
    out = {}
    for _, row in summary.iterrows():
        name = f"matched.q{row['q']:g}.{_word(row['notion'])}"
        out[f"{name}.reaches"] = row["reaches"]
        out[f"{name}.median_price"] = row["median price"]
    return out


def group_metrics(by_notion: pd.DataFrame, q: float = 0.5) -> dict[str, float]:
    """``groups.q{q}.{notion}.median.{column}`` from the medians per notion of :func:`group_table`."""
    return {
        f"groups.q{q:g}.{_word(notion)}.median.{_word(k)}": v
        for notion, row in by_notion.iterrows()
        for k, v in row.items()
    }


def h6_metrics(h6: "H6Result") -> dict[str, int]:
    """H6's step counts: ``h6.steps``, ``h6.decided_by_reach``, ``h6.both_unreachable`` and
    ``h6.step.{step}.{outcome}``."""
    out = {
        "h6.steps": h6.n_steps,
        "h6.decided_by_reach": h6.decided_by_reach,
        "h6.both_unreachable": h6.both_unreachable,
    }
    for step, counts in h6.steps.items():
        out.update({f"h6.step.{_word(step)}.{_word(outcome)}": n for outcome, n in counts.items()})
    return out


def h7_metrics(parts: dict) -> dict[str, int]:
    """``h7.parts.{notion}.{verdict}`` from :func:`h7_tally`."""
    return {f"h7.parts.{_word(notion)}.{_word(v)}": n for notion, counts in parts.items() for v, n in counts.items()}
