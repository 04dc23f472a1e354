"""The compiled kernels of :mod:`causalbandits_lib.pcb.kernels` against their numpy reference.

Each kernel is compared with the numpy path on identical streams over a horizon that crosses a
block boundary: identical per-round values (bit for bit, hence within the 1e-9 of the registry) and
an identical final state of the policy. The registry's conformance check repeats the comparison on
every registered pair (``tests/test_contracts.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.environments import BernoulliBandit, ContextualBernoulliBandit, GaussianBandit
from causalbandits_lib.core.registry import close_arrays, same_arrays
from causalbandits_lib.core.runner import BLOCK, simulate
from causalbandits_lib.pcb.algorithms import ClippedUCB, LinUCB, LinUCBConfig, arm_context_features
from causalbandits_lib.pcb.kernels import ClippedUCBKernel, LinUCBKernel

T = BLOCK + 150
N_RUNS = 3


def _contextual_env():
    rng = np.random.default_rng(3)
    return ContextualBernoulliBandit([0.1, 0.2, 0.3, 0.4], rng.uniform(0.2, 0.8, (4, 4)))


def _priors(seed=5):
    rng = np.random.default_rng(seed)
    upper = rng.uniform(0.4, 0.9, (N_RUNS, 4, 4))
    lower = upper - rng.uniform(0.1, 0.4, (N_RUNS, 4, 4))
    weight = rng.integers(0, 30, (N_RUNS, 4, 4)).astype(float)
    reward = rng.random((N_RUNS, 4, 4))
    reward[0, 1, 2] = np.nan
    return lower, upper, weight, reward


def _linucb(kind):
    lower, upper, weight, reward = _priors()
    f = arm_context_features()
    if kind == "plain":
        return LinUCB(f)
    if kind == "first_tie":
        return LinUCB(f, tie_break="first", alpha=0.3)
    if kind == "warm":
        return LinUCB(f, LinUCBConfig(alpha=0.5, lam=2.0), warm_weight=weight, warm_reward=reward)
    return LinUCB(f, lower=lower, upper=upper, clip=kind)


def _both(make_env, make_policy, metrics):
    out = []
    for backend in ("numpy", "compiled"):
        env, policy = make_env(), make_policy()
        res = simulate(env, policy, T, seed=4, n_runs=N_RUNS, metrics=metrics, backend=backend)
        assert res.info["backend"] == backend
        out.append((res, policy))
    return out


@pytest.mark.parametrize("kind", ["plain", "first_tie", "warm", "upper", "both"])
def test_linucb_kernel_equals_the_numpy_path(kind):
    (slow, p), (fast, q) = _both(_contextual_env, lambda: _linucb(kind), ("reward", "regret", "dominated"))
    for name in ("reward", "regret", "dominated"):
        assert close_arrays(slow[name], fast[name]) and same_arrays(slow[name], fast[name]), name
    # the policy ends in the state the numpy path leaves it in
    for attr in ("a_inv_t", "b_t", "dominated", "last_x", "last_v", "last_vx"):
        assert same_arrays(getattr(p, attr), getattr(q, attr)), attr


@pytest.mark.parametrize("bounded", [False, True])
@pytest.mark.parametrize("tie_break", ["random", "first"])
def test_clipped_ucb_kernel_equals_the_numpy_path(bounded, tie_break):
    means = [0.5, 0.45, 0.3, 0.5]
    lower = np.array([[0.4, 0.0, 0.0, 0.45], [0.0, 0.3, 0.0, 0.0], [0.45, 0.45, 0.45, 0.45]])
    upper = np.array([[0.6, 0.44, 0.35, 0.6], [1.0, 1.0, 0.2, 1.0], [0.45, 0.45, 0.45, 0.45]])
    bounds = (lower, upper) if bounded else (None, None)
    (slow, p), (fast, q) = _both(
        lambda: BernoulliBandit(means), lambda: ClippedUCB(4, T, *bounds, tie_break=tie_break), ("reward", "regret")
    )
    for name in ("reward", "regret"):
        assert same_arrays(slow[name], fast[name]), name
    assert same_arrays(p.stats.counts, q.stats.counts) and same_arrays(p.stats.sums, q.stats.sums)


def test_the_kernels_are_chosen_by_exact_type():
    class MyLinUCB(LinUCB):
        pass

    class MyContextual(ContextualBernoulliBandit):
        pass

    class MyClipped(ClippedUCB):
        pass

    class MyBernoulli(BernoulliBandit):
        pass

    from causalbandits_lib.core.streams import RunStreams

    def made(env, policy):
        streams = RunStreams(0, [0, 1])
        env.reset(streams.child("env/"))
        policy.reset(streams.child("policy/"))
        return policy.compiled(env)

    env = _contextual_env()
    assert isinstance(made(env, _linucb("plain")), LinUCBKernel)
    assert made(MyContextual(env.context_probs, env.means), _linucb("plain")) is None
    assert made(_contextual_env(), MyLinUCB(arm_context_features())) is None
    assert made(BernoulliBandit([0.2, 0.3, 0.4, 0.5]), _linucb("plain")) is None
    assert isinstance(made(BernoulliBandit([0.2, 0.3]), ClippedUCB(2, 10)), ClippedUCBKernel)
    assert made(MyBernoulli([0.2, 0.3]), ClippedUCB(2, 10)) is None
    assert made(BernoulliBandit([0.2, 0.3]), MyClipped(2, 10)) is None
    assert made(GaussianBandit([0.2, 0.3]), ClippedUCB(2, 10)) is None
    assert made(BernoulliBandit([0.2, 0.3, 0.4]), ClippedUCB(2, 10)) is None
    # the loop falls back to numpy for them
    res = simulate(BernoulliBandit([0.2, 0.3]), MyClipped(2, 10), 10, 0, n_runs=2)
    assert res.info["backend"] == "numpy"


@pytest.mark.parametrize("scale", [1e160, np.inf])
def test_linucb_kernel_follows_the_numpy_path_through_overflow(scale):
    """Huge or infinite features make the skipped zero updates produce NaN on the numpy path; the
    kernel then repeats them."""
    f = arm_context_features()
    f[1, 2, 3] = scale
    with np.errstate(all="ignore"):
        (slow, p), (fast, q) = _both(_contextual_env, lambda: LinUCB(f), ("reward", "regret", "dominated"))
    for name in ("reward", "regret"):
        assert same_arrays(slow[name], fast[name]), name
    assert same_arrays(p.a_inv_t, q.a_inv_t) and same_arrays(p.b_t, q.b_t)
    assert np.isnan(p.a_inv_t).any()
