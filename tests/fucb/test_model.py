"""The contextual bandit on a discrete SCM: exact decompositions, the fast sampler, context sources
and the index conventions."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.scm import DiscreteSCM
from causalbandits_lib.core.streams import RunStreams
from causalbandits_lib.fucb.instances.email_campaign import ARM_NODES, CONTEXT_NODES, email_campaign_env
from causalbandits_lib.fucb.model import CausalBanditEnv, IIDContexts, UserSequence, joint_codes


@pytest.fixture(scope="module")
def env():
    return email_campaign_env()


def test_decompositions_recover_the_means(env):
    for w in (("A3", "I1", "I2"), ("A3", "I1", "I2", "I3"), (*CONTEXT_NODES, *ARM_NODES)):
        dec = env.decomposition(w)
        np.testing.assert_allclose(dec.arm_means(), env.means, atol=1e-14)
        np.testing.assert_allclose(dec.probs.sum(axis=-1), 1.0, atol=1e-14)
    arms = env.decomposition(ARM_NODES)
    # W = A is not a separator: its cells are the context-averaged means (context-free UCB)
    np.testing.assert_allclose(arms.cell_means, env.context_probs @ env.means, atol=1e-14)
    np.testing.assert_array_equal(arms.probs[3], np.eye(36))
    with pytest.raises(ValueError, match="not a node"):
        env.decomposition(("A3", "Q"))


def test_fast_sampler_equals_the_core_sampler(env):
    rng = np.random.default_rng(1)
    n = 500
    c, a = rng.integers(0, 8, n), rng.integers(0, 36, n)
    u = rng.random((n, len(env.model.nodes)))
    fast = env.sample_nodes(u, c, a)
    do = {nm: env.context_codes[c, j] for j, nm in enumerate(CONTEXT_NODES)}
    do.update({nm: env.arm_codes[a, j] for j, nm in enumerate(ARM_NODES)})
    core = env.model.sample_from_uniforms(u, do_codes=do)
    for node in env.model.nodes:
        np.testing.assert_array_equal(fast[node], core[node], err_msg=node)


def test_sampled_cells_follow_the_known_probabilities(env):
    dec = env.decomposition(("A3", "I1", "I2"))
    rng = np.random.default_rng(2)
    n, c, a = 40000, 5, 17
    codes = env.sample_nodes(rng.random((n, len(env.model.nodes))), np.full(n, c), np.full(n, a))
    codes["reward"] = np.zeros(n)
    freq = np.bincount(dec.realized_cells(codes), minlength=dec.n_cells) / n
    p = dec.probs[c, a]
    assert np.all(np.abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-12)


def test_joint_codes_are_row_major():
    np.testing.assert_array_equal(joint_codes([2, 3])[4], [1, 1])
    assert joint_codes([]).shape == (1, 0)


def test_user_sequence_serves_each_user_once_per_pass():
    seq = UserSequence(np.arange(10))
    seq.reset(RunStreams(0, [0, 1, 2]))
    served = np.stack([seq.draw(t) for t in range(10)], axis=1)
    assert all(sorted(row) == list(range(10)) for row in served)
    assert not np.array_equal(served[0], served[1])


def test_iid_contexts_follow_their_probabilities():
    src = IIDContexts([0.2, 0.0, 0.8])
    src.reset(RunStreams(0, range(4000)))
    drawn = src.draw(0)
    assert not np.any(drawn == 1)
    assert abs(np.mean(drawn == 2) - 0.8) < 5 * np.sqrt(0.8 * 0.2 / 4000)
    with pytest.raises(ValueError, match="probability vector"):
        IIDContexts([0.5, 0.6])


def _small_model(context_parent_is_arm: bool = False):
    return DiscreteSCM(
        {"S": (0, 1), "A": (0, 1), "Z": (0, 1)},
        {
            "A": ((), [0.5, 0.5]),
            "S": (("A",), [[0.5, 0.5], [0.5, 0.5]]) if context_parent_is_arm else ((), [0.5, 0.5]),
            "Z": (("S", "A"), [[[0.5, 0.5], [0.4, 0.6]], [[0.3, 0.7], [0.2, 0.8]]]),
        },
    )


def test_the_environment_names_what_is_wrong():
    ok = dict(reward_weights={"Z": 1.0}, sigma=0.1, contexts=IIDContexts([0.5, 0.5]))
    CausalBanditEnv(_small_model(), ("S",), ("A",), **ok)
    with pytest.raises(ValueError, match="'Q', which is not a node"):
        CausalBanditEnv(_small_model(), ("Q",), ("A",), **ok)
    with pytest.raises(ValueError, match="context node 'S' has parent 'A'"):
        CausalBanditEnv(_small_model(True), ("S",), ("A",), **ok)
    with pytest.raises(ValueError, match="sigma=-1"):
        CausalBanditEnv(_small_model(), ("S",), ("A",), **{**ok, "sigma": -1.0})
    with pytest.raises(ValueError, match="discrepancy must have shape"):
        CausalBanditEnv(_small_model(), ("S",), ("A",), **ok, discrepancy=np.zeros(3))


def test_context_and_arm_codes_are_row_major(env):
    cf = env.counterfactual_contexts("X1")
    varied = env.varied_contexts("X1", ["X2"])
    for c, (x1, x2, x3) in enumerate(env.context_codes):
        assert c == 4 * x1 + 2 * x2 + x3
        assert cf[c].tolist() == [2 * x2 + x3, 4 + 2 * x2 + x3]
        assert varied[c].tolist() == [[x3, 2 + x3], [4 + x3, 6 + x3]]
    assert env.context_code({"X1": 1, "X2": 0, "X3": 1}) == 5
    assert env.arm_code({"A1": 0, "A2": 1, "A3": 2}) == 5
    with pytest.raises(ValueError, match="context node"):
        env.counterfactual_contexts("A1")
