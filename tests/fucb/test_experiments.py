"""The experiments' building blocks: policies by name, the offline estimation error of notebook 1,
the Adult-Video setup on given users, and the table helpers."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core import checks
from causalbandits_lib.fucb.algorithms import DecomposedUCB, FairUCB
from causalbandits_lib.fucb.experiments import (
    FALLBACK_RULES,
    FUCB_VARIANTS,
    adult_setup_from_users,
    by_fallback,
    email_setup,
    fallback_rules,
    make_policy,
    markdown_table,
    mean_se_text,
    offline_estimation_error,
    paired_comparisons,
    tau_key,
)
from causalbandits_lib.fucb.instances.adult_video import synthetic_adult_users


@pytest.fixture(scope="module")
def email():
    return email_setup()


def test_make_policy_by_name(email):
    dec, est = email.decompositions["D-UCB"], email.estimator
    assert set(FUCB_VARIANTS) == {"F-UCB", "F-UCB-diff", "F-UCB-diff-clip"}
    ucb = make_policy("UCB", email.decompositions["UCB"], tie_break="random")
    assert type(ucb) is DecomposedUCB and ucb.name == "UCB" and ucb.tie_break == "random"
    clip = make_policy("F-UCB-diff-clip", dec, est, 0.2, alpha_r=2.0, label="mine")
    assert isinstance(clip, FairUCB) and clip.name == "mine"
    assert (clip.fair_radius, clip.clip_radius, clip.tau, clip.alpha_r) == ("diff", True, 0.2, 2.0)
    assert make_policy("F-UCB", dec, est, 0.3, fair_radius="diff").fair_radius == "diff"  # keywords override
    with pytest.raises(ValueError, match="unknown algorithm"):
        make_policy("X-UCB", dec)
    with pytest.raises(ValueError, match="needs a discrepancy estimator and a threshold tau"):
        make_policy("F-UCB", dec, est)


def test_offline_estimation_error_shrinks_with_data(email):
    decs = {name: email.decompositions[name] for name in ("D-UCB", "UCB")}
    a = offline_estimation_error(email.env, decs, [50, 2000], 3, np.random.default_rng(0))
    b = offline_estimation_error(email.env, decs, [2000, 50], 3, np.random.default_rng(0))
    for name in decs:
        assert a[name]["rmse"].shape == a[name]["width"].shape == (2, 3)
        np.testing.assert_array_equal(a[name]["rmse"], b[name]["rmse"])  # checkpoints are sorted
        assert np.all(a[name]["width"][1] < a[name]["width"][0])
    assert np.all(a["D-UCB"]["rmse"][1] < a["D-UCB"]["rmse"][0])
    assert np.all(a["D-UCB"]["width"] < a["UCB"]["width"])  # 12 cells against 36
    with pytest.raises(ValueError, match="positive"):
        offline_estimation_error(email.env, decs, [0, 10], 2, np.random.default_rng(0))


def test_adult_setup_on_given_users_and_graph():
    users = synthetic_adult_users(600, np.random.default_rng(0))
    edges = [("sex", "age"), ("sex", "income"), ("age", "income")]
    s = adult_setup_from_users(users, {"stand_in": True}, np.random.default_rng(1), n_users=300, user_graph=edges)
    assert sorted(s.user_graph.edges()) == sorted(edges) and set(s.user_graph.nodes) == {"age", "sex", "race", "income"}
    assert len(s.offline) == len(s.online) == 150
    assert s.separator == ("age", "income", "ratings", "views") and s.descendants == ("age", "income")
    assert s.estimator().kind == "bounded" and s.estimator("identified").kind == "identified"
    with pytest.raises(ValueError, match="cf_estimator"):
        s.estimator("guess")
    with pytest.raises(ValueError, match="DAG on the user features"):
        adult_setup_from_users(users, {}, np.random.default_rng(1), 300, user_graph=[("age", "sex"), ("sex", "age")])


def test_table_helpers():
    assert tau_key(0.1) == "tau_0.1" and tau_key(0.5) == "tau_0.5"
    assert (
        markdown_table(["a", "b"], [[1.25, "x"], [1234.0, 2]]) == "| a | b |\n|---|---|\n| 1.2 | x |\n| 1,234.0 | 2 |"
    )


def test_paired_comparisons_judge_each_pair_on_its_differences():
    rng = np.random.default_rng(0)
    base = rng.normal(size=20)
    vals = {"a": base, "b": base + 1.0 + 0.01 * rng.normal(size=20), "c": base.copy(), "d": base - 1.0}
    ok = paired_comparisons(vals, [("a", "b"), ("d", "a")])
    assert ok.verdict == "reproduced" and "a < b" in ok.reason
    assert ok.details["parts"]["a < b"]["mean"] == pytest.approx(1.0, abs=0.01)
    # values equal in every run fail a strict ordering: contradicted, never counted as holding
    tie = paired_comparisons(vals, [("a", "c")])
    assert tie.verdict == "not reproduced" and not tie.indistinguishable
    noisy = {"a": base, "e": base + 0.05 * rng.normal(size=20)}
    assert paired_comparisons(noisy, [("a", "e")]).verdict == "not testable here"  # inconclusive: underpowered
    mixed = paired_comparisons(vals, [("a", "b"), ("b", "a")])
    assert mixed.verdict == "not reproduced"  # contradicted on one of two pairs: at least half
    assert paired_comparisons(vals, [("b", "a"), ("a", "d")]).verdict == "not reproduced"
    with pytest.raises(ValueError, match="at least one pair"):
        paired_comparisons(vals, [])


def test_fallback_rules_put_the_chosen_rule_first():
    assert fallback_rules("unconstrained") == ("unconstrained", "min_ucb_delta")
    assert fallback_rules("min_ucb_delta")[0] == "min_ucb_delta" and set(fallback_rules("min_ucb_delta")) == set(
        FALLBACK_RULES
    )
    with pytest.raises(ValueError, match="fallback"):
        fallback_rules("safe")


def test_by_fallback_keeps_the_chosen_verdict_and_names_the_dependence():
    yes, no = checks.check_at_most(0, 1), checks.check_at_most(2, 1)
    v = by_fallback({"min_ucb_delta": no, "unconstrained": yes}, "min_ucb_delta")
    assert v.verdict == "not reproduced" and "depends on our choice of fallback" in v.reason
    assert v.details["sensitive_to"]["fallback"] == {"min_ucb_delta": "not reproduced", "unconstrained": "reproduced"}
    same = by_fallback({"min_ucb_delta": yes, "unconstrained": yes}, "unconstrained")
    assert same.verdict == "reproduced" and "depends" not in same.reason
    with pytest.raises(ValueError, match="chosen fallback"):
        by_fallback({"unconstrained": yes}, "min_ucb_delta")


def test_mean_se_text_shows_the_standard_error():
    assert mean_se_text([1.0, 3.0]) == "2.0 ± 1.0"
    assert mean_se_text([10, 10, 13], 0) == "11 ± 1"


def test_eq1_a_stochastic_policys_value_is_the_mixture_of_arm_means(email):
    from causalbandits_lib.fucb.experiments import policy_value_two_ways, random_chain_policy

    env = email.env
    mixture, soft = policy_value_two_ways(env, random_chain_policy(env, np.random.default_rng(3)))
    np.testing.assert_allclose(mixture, soft, atol=1e-12)
    # a deterministic policy (always the arm of codes 0, 0, 0) gives that arm's mean in every context
    one_hot = {}
    for i, node in enumerate(env.arm_nodes):
        parents = (*env.context_nodes, *env.arm_nodes[:i])
        table = np.zeros(tuple(env.model.card(p) for p in parents) + (env.model.card(node),))
        table[..., 0] = 1.0
        one_hot[node] = (parents, table)
    mixture, soft = policy_value_two_ways(env, one_hot)
    np.testing.assert_allclose(mixture, env.means[:, 0], atol=1e-12)
    np.testing.assert_allclose(soft, env.means[:, 0], atol=1e-12)
    with pytest.raises(ValueError, match="parents"):
        policy_value_two_ways(env, {n: ((), t) for n, (_, t) in one_hot.items()})
