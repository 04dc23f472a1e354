"""The compiled kernel of :mod:`causalbandits_lib.fucb.kernels` against its numpy reference.

Every policy the kernel knows (D-UCB, C-UCB, UCB, F-UCB with each estimator, radius and fallback,
Fair-LinUCB), alone and audited, on the Email Campaign bandit (contexts drawn i.i.d.), the small
Adult-Video bandit of the registry (a user sequence) and the toy (the bounded estimator's general
sums), over a horizon that crosses a block boundary: identical per-round values (bit for bit,
hence within the 1e-9 of the registry) and an identical final state of the policy and auditor.
The registry's conformance check repeats the comparison on every registered pair.
"""

from __future__ import annotations

import pytest

from causalbandits_lib.core.registry import close_arrays, same_arrays
from causalbandits_lib.core.runner import BLOCK, simulate
from causalbandits_lib.core.streams import RunStreams
from causalbandits_lib.fucb import registry as R
from causalbandits_lib.fucb.algorithms import (
    BoundedDiscrepancy,
    DecomposedUCB,
    FairLinUCB,
    FairUCB,
    IdentifiedDiscrepancy,
    linear_features,
)
from causalbandits_lib.fucb.auditing import Audited, FairnessAuditor
from causalbandits_lib.fucb.experiments import make_policy
from causalbandits_lib.fucb.kernels import CausalBanditKernel
from causalbandits_lib.fucb.model import CausalBanditEnv, IIDContexts

T = BLOCK + 120
N_RUNS = 2


def _email(name, audited=True, **kw):
    def make():
        s = R.email()
        fair = name.startswith("F-UCB")
        policy = make_policy(
            name, s.decompositions["D-UCB" if fair else name], s.estimator, 0.3 if fair else None, **kw
        )
        return Audited(policy, FairnessAuditor(s.estimator)) if audited else policy

    return lambda: R.email().env, make


def _email_linucb(audited, tie_break="first"):
    def make():
        env, s = R.email().env, R.email()
        policy = FairLinUCB(
            linear_features(env.context_codes, env.arm_codes), env.context_codes[:, 0], tie_break=tie_break
        )
        return Audited(policy, FairnessAuditor(s.estimator, unseen_mean=0.5, clip_radius=True)) if audited else policy

    return lambda: R.email().env, make


def _adult(make_inner, which="bounds"):
    def make():
        s = R.adult()
        return Audited(make_inner(s), FairnessAuditor(s.estimator(which)))

    return lambda: R.adult().env, make


def _toy(fair_linucb=False):
    def make():
        env, dec = R.toy()
        est = BoundedDiscrepancy(dec, env.varied_contexts("S", []))
        if fair_linucb:
            policy = FairLinUCB(linear_features(env.context_codes, env.arm_codes), env.context_codes[:, 0])
        else:
            policy = FairUCB(dec, est, tau=0.2, fair_radius="paper", tie_break="random", delta_power=1.5)
        return Audited(policy, FairnessAuditor(est, delta_power=3.0))

    return lambda: R.toy()[0], make


CASES = {
    "ucb": _email("UCB", audited=False, tie_break="random"),
    "d_ucb": _email("D-UCB", audited=False),
    "f_ucb": _email("F-UCB", audited=False),
    "audited_c_ucb": _email("C-UCB", unseen_mean=0.3),
    "audited_f_ucb": _email("F-UCB"),
    "audited_f_ucb_diff_clip": _email("F-UCB-diff-clip", delta_power=1.0),
    "audited_f_ucb_unconstrained_random_ties": _email("F-UCB", fallback="unconstrained", tie_break="random"),
    "audited_f_ucb_diff_safe_arm": _email("F-UCB-diff", fallback="safe_arm", safe_arm=2, alpha_r=2.0, alpha_c=0.5),
    "fair_linucb_random_ties": _email_linucb(False, "random"),
    "audited_fair_linucb": _email_linucb(True),
    "adult_d_ucb": _adult(lambda s: make_policy("D-UCB", s.decomposition)),
    "adult_fair_linucb": _adult(lambda s: FairLinUCB(s.features, s.groups, alpha=0.5, gamma=2.0), "identified"),
    "adult_f_ucb_bounds": _adult(lambda s: make_policy("F-UCB", s.decomposition, s.estimator("bounds"), 0.2)),
    "adult_f_ucb_identified_diff": _adult(
        lambda s: make_policy("F-UCB", s.decomposition, s.estimator("identified"), 0.2, fair_radius="diff")
    ),
    "toy_f_ucb_bounded_general": _toy(),
    "toy_fair_linucb": _toy(True),
}


def _state(policy) -> dict:
    inner = policy.policy if isinstance(policy, Audited) else policy
    out = {}
    if isinstance(inner, FairLinUCB):
        out.update(a_inv=inner.a_inv, b=inner.b, g_counts=inner.group_stats.counts, g_sums=inner.group_stats.sums)
    else:
        out.update(counts=inner.stats.counts, sums=inner.stats.sums)
    if isinstance(inner, FairUCB):
        out.update({f"diag.{k}": v for k, v in inner.diagnostics().items()})
    if isinstance(policy, Audited):
        out.update(a_counts=policy.auditor.stats.counts, a_sums=policy.auditor.stats.sums)
        out.update({f"audit.{k}": v for k, v in policy.last_audit.items()})
    return out


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_kernel_equals_the_numpy_path(case):
    make_env, make_policy_ = CASES[case]
    every = simulate(make_env(), make_policy_(), 2, 0, n_runs=1, metrics=None, backend="numpy").metrics
    names = sorted(every)
    results, states = [], []
    for backend in ("numpy", "compiled"):
        policy = make_policy_()
        res = simulate(make_env(), policy, T, seed=6, n_runs=N_RUNS, metrics=names, backend=backend)
        assert res.info["backend"] == backend
        results.append(res)
        states.append(_state(policy))
    slow, fast = results
    for name in names:
        assert slow[name].dtype == fast[name].dtype, name
        assert close_arrays(slow[name], fast[name]) and same_arrays(slow[name], fast[name]), name
    assert states[0].keys() == states[1].keys()
    for key in states[0]:
        assert same_arrays(states[0][key], states[1][key]), key


def test_the_kernel_is_chosen_by_exact_type():
    s = R.email()
    env, dec, est = s.env, s.decompositions["D-UCB"], s.estimator

    def made(policy, environment=env):
        streams = RunStreams(0, [0, 1])
        environment.reset(streams.child("env/"))
        policy.reset(streams.child("policy/"))
        return policy.compiled(environment)

    class MyDUCB(DecomposedUCB):
        pass

    class MyFUCB(FairUCB):
        pass

    class MyAuditor(FairnessAuditor):
        pass

    class MyEstimator(IdentifiedDiscrepancy):
        pass

    class MyAudited(Audited):
        pass

    class MyEnv(CausalBanditEnv):
        pass

    class MyContexts(IIDContexts):
        pass

    assert isinstance(made(DecomposedUCB(dec)), CausalBanditKernel)
    assert isinstance(made(FairUCB(dec, est, tau=0.3)), CausalBanditKernel)
    assert isinstance(made(Audited(DecomposedUCB(dec), FairnessAuditor(est))), CausalBanditKernel)
    assert made(MyDUCB(dec)) is None
    assert made(MyFUCB(dec, est, tau=0.3)) is None
    assert made(FairUCB(dec, MyEstimator(dec, env.counterfactual_contexts("X1")), tau=0.3)) is None
    assert made(Audited(DecomposedUCB(dec), MyAuditor(est))) is None
    assert made(Audited(MyDUCB(dec), FairnessAuditor(est))) is None
    assert made(MyAudited(DecomposedUCB(dec), FairnessAuditor(est))) is None
    fields = dict(
        model=env.model,
        context_nodes=env.context_nodes,
        arm_nodes=env.arm_nodes,
        reward_weights=env.reward_weights,
        sigma=env.sigma,
        discrepancy=env.discrepancy,
    )
    other = MyEnv(contexts=IIDContexts(env.contexts.probs), **fields)
    assert made(DecomposedUCB(dec), other) is None
    unknown_source = CausalBanditEnv(contexts=MyContexts(env.contexts.probs), **fields)
    assert made(DecomposedUCB(dec), unknown_source) is None
    # and the loop runs the numpy path for them
    res = simulate(env, MyDUCB(dec), 5, 0, n_runs=2, metrics=("regret",))
    assert res.info["backend"] == "numpy"
