"""The exact study of the family (H6, H7): the judges on hand-made prices and losses whose verdicts
follow from the registered rules by hand, and the study's tables on family models against
independent computations."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from causalbandits_lib.synthesis import family as F
from causalbandits_lib.synthesis import notions as N
from causalbandits_lib.synthesis import study as S

INF = math.inf


def _matched(prices_by_level, d_min=0.0, d_pi0=1.0):
    """A :class:`~.notions.Matched` whose prices are given per level as ``{notion: price}``."""
    qs = N.QUANTILES[: len(prices_by_level)]

    def one(n, q, p):
        reached = p[n] != INF
        policy = np.zeros((4, 4)) if reached else None
        return N.Price(n, float(q), p[n], 0.1 if reached else float("nan"), policy, 0.0, 0.0)

    prices = {n: tuple(one(n, q, p) for q, p in zip(qs, prices_by_level)) for n in N.NOTIONS}
    return N.Matched(tuple(qs), np.array(qs, dtype=float), d_min, np.zeros((4, 4)), d_pi0, 1.0, prices)


def _study(name, prices_by_level, d_pi0=1.0, outcomes=None, pi0=None):
    m = _matched(prices_by_level, d_pi0=d_pi0)
    return S.ModelStudy(name, m, outcomes or {n: (None,) * len(prices_by_level) for n in N.NOTIONS}, pi0)


def _level(pd_, avg, fi, ex):
    return {"per-decision CF": pd_, "average CF constraint": avg, "fair intervention": fi, "exposure": ex}


# -- H6 ---------------------------------------------------------------------------------------------


def test_h6_a_level_holds_only_when_both_steps_exceed_the_margin():
    margin = 0.005
    strict = _level(0.01, 0.0, 0.02, 0.03)  # steps 0.01 and 0.01 > 0.005
    tie = _level(0.01, 0.0, 0.014, 0.03)  # first step 0.004 within the margin: fails
    reversed_ = _level(0.03, 0.0, 0.02, 0.01)
    res = S.judge_h6([_study("m", [strict, tie, reversed_])], margin)
    levels = res.per_model["m"].details["parts"]
    verdicts = [levels[k]["verdict"] for k in levels]
    assert verdicts == ["reproduced", "partly", "not reproduced"]
    # one level holds, one mixed, one contradicted: the model is partly by the book's rule
    assert res.per_model["m"].verdict == "partly"
    assert res.n_steps == 6 and res.decided_by_reach == 0 and res.both_unreachable == 0


def test_h6_unreachable_notions_decide_or_remove_a_step_and_are_counted():
    # exposure unreachable: its step is decided by reachability (a finite price is below +inf)
    decided = _level(0.01, 0.0, 0.02, INF)
    # intervention and exposure both unreachable: that step is not testable; the level is judged
    # on its other step (also decided by reachability)
    neither = _level(0.01, 0.0, INF, INF)
    res = S.judge_h6([_study("m", [decided, neither])], 0.005)
    levels = list(res.per_model["m"].details["parts"].values())
    assert [lv["verdict"] for lv in levels] == ["reproduced", "reproduced"]
    assert "not testable (both notions unreachable)" in levels[1]["reason"]
    assert res.decided_by_reach == 2 and res.both_unreachable == 1 and res.n_steps == 4


def test_h6_models_with_nothing_to_make_fair_are_not_testable_and_the_models_combine_by_the_rule():
    good = _level(0.01, 0.0, 0.02, 0.03)
    bad = _level(0.03, 0.0, 0.02, 0.01)
    studies = [
        _study("flat", [good], d_pi0=0.0),  # D(pi0) = D_min
        _study("a", [good]),
        _study("b", [good]),
        _study("c", [bad]),
    ]
    res = S.judge_h6(studies, 0.005)
    assert res.per_model["flat"].verdict == "not testable here"
    # two models hold, one is contradicted: "contradicted on none" fails, and one of three is not at least half
    assert res.verdict.verdict == "partly"
    res = S.judge_h6(studies[:3], 0.005)
    assert res.verdict.verdict == "reproduced"
    res = S.judge_h6([studies[0], studies[3], _study("d", [bad])], 0.005)
    assert res.verdict.verdict == "not reproduced"


# -- H7 ---------------------------------------------------------------------------------------------


def _outcome(v0, extra_loss, worse=0):
    return N.GroupOutcomes(
        value=np.array(v0, dtype=float),
        regret=np.zeros(2),
        discrepancy=np.zeros(2),
        exposure=np.array([0.5, 0.5]),
        exposure_by_user=np.full((2, 2), 0.5),
        dp=0.0,
        eo=0.0,
        worse_served=worse,
        extra_loss=extra_loss,
    )


def _h7_study(name, v0, losses):
    """``losses[notion]`` is one extra loss per level (``None``: the notion cannot reach it)."""
    pi0 = _outcome(v0, 0.0)
    outcomes = {n: tuple(None if x is None else _outcome(v0, x) for x in losses.get(n, (0.0,))) for n in N.NOTIONS}
    levels = [_level(0.01, 0.0, 0.02, 0.03)] * len(next(iter(losses.values())))
    return _study(name, levels, outcomes=outcomes, pi0=pi0)


def test_h7_each_part_is_the_extra_loss_against_the_margin():
    losses = {
        "per-decision CF": (0.0, 0.005),  # at the margin: holds (at most)
        "average CF constraint": (0.0051, -0.2),  # just above: contradicted
        "fair intervention": (None, 0.0),  # unreachable: not testable
    }
    verdict, per_model = S.judge_h7([_h7_study("m", [0.3, 0.5], losses)], 0.005)
    parts = per_model["m"].details["parts"]
    got = {k: p["verdict"] for k, p in parts.items()}
    assert got == {
        "per-decision CF, q = 0.25": "reproduced",
        "per-decision CF, q = 0.5": "reproduced",
        "average CF constraint, q = 0.25": "not reproduced",
        "average CF constraint, q = 0.5": "reproduced",
        "fair intervention, q = 0.25": "not testable here",
        "fair intervention, q = 0.5": "reproduced",
    }
    assert per_model["m"].verdict == "partly"


def test_h7_a_model_whose_groups_are_served_alike_is_not_testable():
    losses = {n: (1.0,) for n in S.H7_NOTIONS}
    verdict, per_model = S.judge_h7([_h7_study("m", [0.5, 0.504], losses)], 0.005)
    assert per_model["m"].verdict == "not testable here"
    assert "no group is served worse" in per_model["m"].reason
    verdict, per_model = S.judge_h7([_h7_study("m", [0.5, 0.506], losses)], 0.005)
    assert per_model["m"].verdict == "not reproduced"


# -- the study on family models ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def family_studies():
    models = F.family(11, 6)
    return models, S.study(models)


def test_group_outcomes_of_the_matched_optima_against_direct_sums(family_studies):
    models, studies = family_studies
    for inst, s in zip(models, studies):
        for notion in N.NOTIONS:
            for p, out in zip(s.matched.prices[notion], s.outcomes[notion]):
                if p.policy is None:
                    assert out is None
                    continue
                # per-group value by an explicit loop over contexts
                v = np.zeros(2)
                w = np.zeros(2)
                for o, (a, _u) in enumerate([(0, 0), (0, 1), (1, 1), (1, 2)]):
                    v[a] += inst.context_probs[o] * sum(p.policy[o, k] * inst.means[o, k] for k in range(4))
                    w[a] += inst.context_probs[o]
                np.testing.assert_allclose(out.value, v / w, atol=1e-12)


def test_average_constraint_is_cheapest_on_the_family(family_studies):
    _, studies = family_studies
    checks = S.average_cheapest(studies)
    assert checks and all(checks.values())


def test_price_table_and_summary_agree_with_the_matched_prices(family_studies):
    _, studies = family_studies
    table = S.price_table(studies)
    assert len(table) == 3 * len(studies)
    s = studies[0]
    row = table[(table["model"] == s.name) & (table["q"] == 0.5)].iloc[0]
    assert row["price: exposure"] == s.matched.prices["exposure"][1].price
    summary = S.matched_summary(table)
    t = table[table["testable"]]
    at = t[t["q"] == 0.25]["price: per-decision CF"].to_numpy()
    got = summary[(summary["q"] == 0.25) & (summary["notion"] == "per-decision CF")].iloc[0]
    assert got["models"] == len(at)
    assert got["median price"] == pytest.approx(float(np.median(at[np.isfinite(at)])))


def test_matched_summary_counts_reach_and_cheapest_on_a_hand_table():
    rows = []
    for model, prices in (("a", (0.1, 0.0, 0.2, INF)), ("b", (0.3, 0.0, 0.2, 0.2))):
        row = {"model": model, "q": 0.5, "testable": True}
        row.update({f"price: {n}": p for n, p in zip(N.NOTIONS, prices)})
        rows.append(row)
    s = S.matched_summary(pd.DataFrame(rows)).set_index("notion")
    assert s.loc["exposure", "reaches"] == 0.5
    assert s.loc["exposure", "median price"] == 0.2
    # model a: per-decision cheapest; model b: intervention and exposure tie for cheapest
    assert s.loc["per-decision CF", "cheapest of H6's three"] == 0.5
    assert s.loc["fair intervention", "cheapest of H6's three"] == 0.5
    assert s.loc["exposure", "cheapest of H6's three"] == 0.5


def test_pgmpy_gaps_are_at_machine_precision_on_family_models():
    for inst in F.family(5, 2):
        gaps = S.pgmpy_gaps(inst)
        assert set(gaps) == {"means", "discrepancies", "log cells"}
        assert max(gaps.values()) < 1e-12


def test_figures_draw(family_studies):
    import matplotlib

    matplotlib.use("Agg")
    from causalbandits_lib.synthesis import figures

    models, studies = family_studies
    i = next(i for i, s in enumerate(studies) if s.testable)
    fig = figures.frontiers(models[i], studies[i].matched)
    assert len(fig.axes[0].lines) >= len(N.NOTIONS)
    fig = figures.group_losses(S.group_table(studies))
    assert len(fig.axes) == len(N.NOTIONS)


def test_h6_step_tally_names_each_outcome():
    levels = [
        _level(0.01, 0.0, 0.02, INF),  # holds; by reach
        _level(0.01, 0.0, 0.012, 0.012),  # within margin twice
        _level(0.03, 0.0, INF, INF),  # reversed (only a reaches... b does not: by reach); neither
    ]
    res = S.judge_h6([_study("m", levels)], 0.005)
    first, second = res.steps.values()
    assert first == {"holds": 1, "by reach": 1, "within margin": 1, "reversed": 0, "neither reaches": 0}
    assert second == {"holds": 0, "by reach": 1, "within margin": 1, "reversed": 0, "neither reaches": 1}
    res = S.judge_h6([_study("m", [_level(INF, 0.0, 0.01, 0.0)])], 0.005)
    first, second = res.steps.values()
    assert first["reversed"] == 1 and second["reversed"] == 1


def test_h7_tally_counts_parts_per_notion():
    losses = {"per-decision CF": (0.0, 0.1), "average CF constraint": (0.0, 0.0), "fair intervention": (None, 0.1)}
    _, per_model = S.judge_h7([_h7_study("m", [0.3, 0.5], losses), _h7_study("n", [0.5, 0.5], losses)], 0.005)
    tally = S.h7_tally(per_model)
    assert tally["per-decision CF"] == {"reproduced": 1, "not reproduced": 1}
    assert tally["average CF constraint"] == {"reproduced": 2}
    assert tally["fair intervention"] == {"not testable here": 1, "not reproduced": 1}


def test_metric_names_of_the_notebook_by_hand():
    import pandas as pd

    summary = pd.DataFrame([{"q": 0.5, "notion": "per-decision CF", "reaches": 0.75, "median price": 0.1}])
    assert S.matched_metrics(summary) == {
        "matched.q0.5.per-decision_CF.reaches": 0.75,
        "matched.q0.5.per-decision_CF.median_price": 0.1,
    }
    by_notion = pd.DataFrame({"extra loss (worse served)": [0.01]}, index=["fair intervention"])
    assert S.group_metrics(by_notion) == {"groups.q0.5.fair_intervention.median.extra_loss_(worse_served)": 0.01}
    h6 = SimpleNamespace(
        n_steps=4, decided_by_reach=1, both_unreachable=0, steps={"a < b": {"holds": 3, "within margin": 1}}
    )
    assert S.h6_metrics(h6) == {
        "h6.steps": 4,
        "h6.decided_by_reach": 1,
        "h6.both_unreachable": 0,
        "h6.step.a_<_b.holds": 3,
        "h6.step.a_<_b.within_margin": 1,
    }
    assert S.h7_metrics({"average CF constraint": {"not reproduced": 2}}) == {
        "h7.parts.average_CF_constraint.not_reproduced": 2
    }
