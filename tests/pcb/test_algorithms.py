"""LinUCB (plain, warm-started, with prior bounds) and UCB-PCB.

That all runs at once equal one run at a time, for every pair the chapter simulates, is checked
by the conformance test on :data:`causalbandits_lib.pcb.registry.ENTRIES`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from causalbandits_lib.core.environments import BernoulliBandit
from causalbandits_lib.core.runner import simulate
from causalbandits_lib.core.streams import RunStreams
from causalbandits_lib.pcb import algorithms as A
from causalbandits_lib.pcb import model as M


def test_features_are_intercept_context_and_arm_bits():
    f = A.arm_context_features()
    assert f.shape == (4, 4, 5)
    np.testing.assert_array_equal(f[2, 1], [1, 1, 0, 0, 1])  # context u=10, arm x=01
    assert A.arm_context_features(intercept=False).shape == (4, 4, 4)
    assert not A.arm_context_features(intercept=False)[0, 0].any()  # why the intercept is there


def test_linucb_matches_a_direct_inverse():
    """Sherman-Morrison state equals (λI + Σ x xᵀ)⁻¹ and b = Σ r x computed directly."""
    f = A.arm_context_features()
    pol = A.LinUCB(f, lam=2.0, warm_weight=np.full((4, 4), 3.0), warm_reward=np.full((4, 4), 0.25))
    pol.reset(RunStreams(0, [0, 1]))
    rng = np.random.default_rng(0)
    Am = np.stack([2.0 * np.eye(5) + 3.0 * sum(np.outer(f[c, a], f[c, a]) for c in range(4)) for a in range(4)])
    b = np.stack([0.75 * f[:, a].sum(axis=0) for a in range(4)])
    Am, b = np.stack([Am, Am]), np.stack([b, b])
    for t in range(30):
        c = rng.integers(0, 4, 2)
        acts = pol.select(t, c)
        r = rng.integers(0, 2, 2).astype(float)
        pol.update(t, c, acts, {"reward": r})
        for i in range(2):
            x = f[c[i], acts[i]]
            Am[i, acts[i]] += np.outer(x, x)
            b[i, acts[i]] += r[i] * x
    np.testing.assert_allclose(pol.a_inv, np.linalg.inv(Am), atol=1e-10)
    np.testing.assert_allclose(pol.b, b, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_pcb_never_pulls_a_dominated_arm(seed):
    """With two-sided clipping, LinUCB-PCB never pulls an arm whose U is below another arm's L,
    whatever the bounds (random, possibly invalid and overlapping)."""
    rng = np.random.default_rng(seed)
    upper = rng.uniform(0, 1, (4, 4))
    lower = upper - rng.uniform(0, 0.6, (4, 4))
    pol = A.LinUCB(A.arm_context_features(), alpha=rng.uniform(0.1, 2), lower=lower, upper=upper, clip="both")
    pol.reset(RunStreams(seed % 1000, range(5)))
    for t in range(200):
        c = rng.integers(0, 4, 5)
        a = pol.select(t, c)
        dominated = upper[c, a] < lower[c].max(axis=1)
        assert not dominated.any()
        pol.update(t, c, a, {"reward": rng.integers(0, 2, 5).astype(float)})


def test_upper_only_clipping_can_pull_a_dominated_arm():
    """Algorithm 4 as printed (min(UCB, U)) does pull a dominated arm when the other arm's UCB has
    fallen below its own L: the property above is not automatic."""
    f = A.arm_context_features()
    upper = np.tile([0.50, 0.90, 0.95, 0.95], (4, 1))
    lower = np.tile([0.45, 0.00, 0.00, 0.60], (4, 1))  # arm 0's U (0.50) < arm 3's L (0.60)
    upper[:, 1:3], lower[:, 1:3] = 0.0, 0.0  # arms 1, 2 never attractive
    pol = A.LinUCB(f, alpha=0.01, lower=lower, upper=upper, clip="upper", tie_break="first")
    pol.reset(RunStreams(0, [0]))
    c = np.array([0])
    for t in range(20):  # teach arm 3 that it pays 0, arm 0 that it pays 1
        for arm, r in ((3, 0.0), (0, 1.0)):
            pol.select(t, c)
            pol.update(t, c, np.array([arm]), {"reward": np.array([r])})
    a = pol.select(99, c)
    assert a[0] == 0 and pol.diagnostics()["dominated"][0] == 1.0
    both = A.LinUCB(f, alpha=0.01, lower=lower, upper=upper, clip="both", tie_break="first")
    both.reset(RunStreams(0, [0]))
    both.a_inv_t, both.b_t = pol.a_inv_t.copy(), pol.b_t.copy()
    assert both.select(99, c)[0] == 3


def test_linucb_rejects_bad_arguments():
    f = A.arm_context_features()
    with pytest.raises(ValueError, match="clip='both' needs"):
        A.LinUCB(f, upper=np.ones((4, 4)), clip="both")
    with pytest.raises(ValueError, match="alpha=0"):
        A.LinUCB(f, alpha=0)
    pol = A.LinUCB(f, upper=np.ones((3, 4, 4)), clip="upper")
    with pytest.raises(ValueError, match="run 3 is simulated"):
        pol.reset(RunStreams(0, [3]))
    with pytest.raises(ValueError, match="give both warm_weight and warm_reward"):
        A.LinUCB(f, warm_weight=np.ones((4, 4)))
    with pytest.raises(ValueError, match="features has shape"):
        A.LinUCB(np.ones((4, 4)))


@pytest.mark.parametrize(
    "field, value, allowed",
    [
        ("alpha", 0, "positive"),
        ("alpha", -1.0, "positive"),
        ("alpha", "big", "positive"),
        ("lam", 0.0, "positive"),
        ("clip", "lower", "'none', 'upper', 'both'"),
        ("tie_break", "last", "'first', 'random'"),
    ],
)
def test_config_names_the_field_the_value_and_what_is_allowed(field, value, allowed):
    with pytest.raises(ValueError, match=f"{field}={value!r}") as err:
        A.LinUCBConfig(**{field: value})
    assert allowed in str(err.value)


def test_config_and_keywords_build_the_same_policy():
    f = A.arm_context_features()
    cfg = A.LinUCBConfig(alpha=0.5, lam=2, clip="upper", tie_break="first")
    assert cfg.lam == 2.0 and isinstance(cfg.lam, float)
    by_config = A.LinUCB(f, cfg, upper=np.ones((4, 4)))
    by_keywords = A.LinUCB(f, alpha=0.5, lam=2, clip="upper", tie_break="first", upper=np.ones((4, 4)))
    assert by_config.config == by_keywords.config == cfg
    assert (by_config.alpha, by_config.lam, by_config.clip, by_config.tie_break) == (0.5, 2.0, "upper", "first")
    # keywords override the config's fields
    assert A.LinUCB(f, cfg, alpha=3.0, upper=np.ones((4, 4))).config == A.LinUCBConfig(3.0, 2.0, "upper", "first")
    with pytest.raises(TypeError):
        A.LinUCB(f, random_ties=False)
    assert A.LinUCBConfig() == A.LinUCBConfig(1.0, 1.0, "none", "random")


def test_tie_break_first_goes_to_the_lowest_arm_and_random_spreads():
    """With the same features for every arm, all indices tie before any data: "first" always
    pulls arm 0, "random" draws among the four from the policy's stream."""
    f = np.repeat(A.arm_context_features()[:, :1, :], 4, axis=1)
    c = np.zeros(200, dtype=np.int64)
    first = A.LinUCB(f, tie_break="first")
    first.reset(RunStreams(0, range(200)))
    assert np.all(first.select(0, c) == 0)
    rnd = A.LinUCB(f)
    rnd.reset(RunStreams(0, range(200)))
    assert set(np.unique(rnd.select(0, c))) == {0, 1, 2, 3}
    ucb = A.ClippedUCB(4, 100, tie_break="first")
    ucb.reset(RunStreams(0, range(50)))
    assert np.all(ucb.select(0) == 0)
    with pytest.raises(ValueError, match="tie_break='never'"):
        A.ClippedUCB(4, 100, tie_break="never")


def test_ucb_pcb_skips_eliminated_arms(table2):
    means = M.interventional_arm_means(table2)
    lower, upper = np.array([0.23, 0.40, 0.22, 0.39]), np.array([0.44, 0.61, 0.43, 0.60])
    pcb = simulate(BernoulliBandit(means), A.ClippedUCB(4, 2000, lower=lower, upper=upper), 2000, seed=4, n_runs=4)
    pol = A.ClippedUCB(4, 2000, lower=lower, upper=upper)
    pol.reset(RunStreams(0, [0]))
    assert np.all(pol.index() == upper)  # unplayed: +inf clipped to U
    plain = simulate(BernoulliBandit(means), A.ClippedUCB(4, 2000), 2000, seed=4, n_runs=4)
    assert pcb.final().mean() < plain.final().mean()


def test_clipped_ucb_rejects_bad_arguments():
    with pytest.raises(ValueError, match="horizon=1"):
        A.ClippedUCB(4, 1)
    with pytest.raises(ValueError, match="n_arms=0"):
        A.ClippedUCB(0, 10)
    with pytest.raises(ValueError, match="give both lower and upper"):
        A.ClippedUCB(4, 10, lower=np.zeros(4))
