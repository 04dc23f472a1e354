"""The compiled GLM-UCB kernel (:mod:`causalbandits_lib.cclb.glm_kernel`) against its numpy reference.

The kernel and the numpy path of :class:`~causalbandits_lib.cclb.algorithms.GLMUCB` run on
identical streams over horizons that cross the runner's blocks of 1024 rounds, the history's
doublings (512, 1024, 2048), the MLE's eager rounds and many of OpenBLAS's blocks of the Hessian's
sum, under both tie rules: identical decisions and history, every other per-round value and the
policy's final state within the registry's 1e-9 relative. The registry's conformance check repeats
the comparison on short horizons (``tests/test_contracts.py``).

On the book's pinned environment the two agree bit for bit; the last tests check the pieces that
make it so (numpy's ``einsum`` and OpenBLAS's orders of summation, glibc's exp written out) against
numpy, scipy and the C library themselves.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import expit

from causalbandits_lib.cclb import experiments as E
from causalbandits_lib.cclb.algorithms import GLMUCB, TIE_RULES
from causalbandits_lib.cclb.confidence import weighted_gram
from causalbandits_lib.cclb.environment import FairLogisticBandit
from causalbandits_lib.cclb.generator import RoundGenerator
from causalbandits_lib.cclb.glm_kernel import (
    OUTPUTS,
    GLMUCBKernel,
    _einsum_dot4,
    _expit_pass,
    _weighted_gram,
    exp_repeats_libm,
    glm_kernel_for,
)
from causalbandits_lib.cclb.registry import ENTRIES, GLM_METRICS
from causalbandits_lib.core.environments import BernoulliBandit
from causalbandits_lib.core.registry import close_arrays, same_arrays
from causalbandits_lib.core.runner import BLOCK, simulate
from causalbandits_lib.core.streams import RunStreams

#: Past two block ends and the history's third doubling (2048).
T_LONG = 3000
REPS = 3


def _simulate(backend: str, seed: int, T: int, reps: int, make_env=FairLogisticBandit, **knobs):
    """GLM-UCB laid out as :func:`~causalbandits_lib.cclb.experiments.run_glm_ucb` lays it out;
    returns the result and the policy (its state after round ``T - 1``)."""
    policy = GLMUCB(**knobs)
    res = simulate(make_env(), policy, T, seed, n_runs=reps, metrics=OUTPUTS, replications=reps, backend=backend)
    assert res.info["backend"] == backend
    return res, policy


def _assert_same_state(a: GLMUCB, b: GLMUCB) -> None:
    """The history is a function of the decisions: identical. The estimates: within 1e-9."""
    assert a.history.t == b.history.t
    assert same_arrays(a.history.X, b.history.X) and same_arrays(a.history.y, b.history.y)
    for name in ("theta_hat", "V", "V_inv"):
        assert close_arrays(getattr(a, name), getattr(b, name)), name
    assert sorted(a.diagnostics()) == sorted(b.diagnostics()) == ["ucb_index"]
    assert close_arrays(a.diagnostics()["ucb_index"], b.diagnostics()["ucb_index"])


def _assert_same_results(ref, fast) -> None:
    assert sorted(ref.metrics) == sorted(fast.metrics) == sorted(OUTPUTS)
    assert np.array_equal(ref["action"], fast["action"]), "the kernel decided otherwise"
    assert np.array_equal(ref["reward"], fast["reward"])
    for name in OUTPUTS:
        assert close_arrays(ref[name], fast[name]), name


@pytest.mark.parametrize("tie_rule", TIE_RULES)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_kernel_decides_as_numpy_over_long_horizons(seed, tie_rule):
    ref, p_ref = _simulate("numpy", seed, T_LONG, REPS, tie_rule=tie_rule)
    fast, p_fast = _simulate("compiled", seed, T_LONG, REPS, tie_rule=tie_rule)
    _assert_same_results(ref, fast)
    _assert_same_state(p_ref, p_fast)


def test_other_knobs_and_the_linear_feature_map():
    def half_scaled():
        return FairLogisticBandit(RoundGenerator(feature_map="half_scaled"))

    knobs = dict(tie_rule="fairer", S=7.0, alpha=0.1, ridge=2.0, newton_steps=2, eager_rounds=50, lazy_every=3)
    ref, p_ref = _simulate("numpy", 4, 600, 2, make_env=half_scaled, **knobs)
    fast, p_fast = _simulate("compiled", 4, 600, 2, make_env=half_scaled, **knobs)
    _assert_same_results(ref, fast)
    _assert_same_state(p_ref, p_fast)


def _reset(seed: int, reps: int, tie_rule: str):
    env, policy = FairLogisticBandit(), GLMUCB(tie_rule=tie_rule)
    streams = RunStreams(seed, range(reps), replications=reps)
    env.reset(streams.child("env/"))
    policy.reset(streams.child("policy/"))
    return env, policy


@pytest.mark.parametrize("tie_rule", TIE_RULES)
def test_blocks_may_end_at_any_round(tie_rule):
    """The kernel run over blocks that end anywhere (one round, the eager rounds' end, inside a
    lazy period, a history doubling, the runner's block) leaves the policy as the numpy path leaves
    it after the same round, and writes what one simulation writes."""
    seed, reps = 5, 2
    ends = [1, 2, 37, 199, 200, 203, 512, 513, BLOCK, BLOCK + 1, 1500]
    env, policy = _reset(seed, reps, tie_rule)
    ref_env, ref = _reset(seed, reps, tie_rule)
    kernel = policy.compiled(env)
    parts, t0 = [], 0
    for t1 in ends:
        out = {name: np.empty((reps, t1 - t0)) for name in OUTPUTS}
        kernel.run(t0, t1, out)
        parts.append(out)
        for t in range(t0, t1):
            ctx = ref_env.observe(t)
            actions = ref.select(t, ctx)
            feedback = ref_env.pull(t, actions)
            ref.update(t, ctx, actions, feedback)
            assert np.array_equal(actions, out["action"][:, t - t0]), f"round {t}"
        _assert_same_state(ref, policy)
        t0 = t1
    whole, _ = _simulate("compiled", seed, ends[-1], reps, tie_rule=tie_rule)
    for name in OUTPUTS:
        assert same_arrays(np.concatenate([p[name] for p in parts], axis=1), whole[name]), name


def test_the_compiled_path_is_the_default():
    res = simulate(FairLogisticBandit(), GLMUCB(), 40, 0, n_runs=2, metrics=E.PER_ROUND_METRICS)
    assert res.info["backend"] == "compiled"
    assert E.run_glm_ucb(RoundGenerator(), 40, 0, 2, 0.2).info["backend"] == "compiled"
    # a recorder that keeps the played rounds takes them from the kernel too
    kept = {}
    for backend in ("numpy", "compiled"):
        rec = E.PlayedRounds()
        res = simulate(FairLogisticBandit(), GLMUCB(), 40, 3, n_runs=2, metrics=(), recorders=[rec], backend=backend)
        kept[backend] = res.recorded["played"]
    for name in ("X", "y", "actions"):
        assert same_arrays(getattr(kept["numpy"], name), getattr(kept["compiled"], name)), name


def test_the_kernel_covers_exactly_glm_ucb_against_the_fair_logistic_bandit():
    env, policy = _reset(0, 1, "random")
    kernel = policy.compiled(env)
    assert isinstance(kernel, GLMUCBKernel)
    assert tuple(n for n in kernel.outputs if n != "played_x") == OUTPUTS == GLM_METRICS
    assert glm_kernel_for(type("MyGLMUCB", (GLMUCB,), {})(), env) is None
    assert glm_kernel_for(policy, type("MyBandit", (FairLogisticBandit,), {})()) is None
    assert policy.compiled(BernoulliBandit([0.2, 0.5])) is None
    with pytest.raises(ValueError, match="backend='compiled' is not available"):
        simulate(FairLogisticBandit(), GLMUCB(), 5, 0, n_runs=1, metrics=None, backend="compiled")


def test_the_registry_compares_glm_ucb_with_its_kernel():
    glm = [e for e in ENTRIES if e.make_policy().__class__ is GLMUCB]
    assert {e.name for e in glm} >= {"cclb.glm_ucb", "cclb.glm_ucb_replications"}
    assert all(e.metrics == GLM_METRICS and e.has_kernel() for e in glm)
    assert {e.make_policy().tie_rule for e in glm} == set(TIE_RULES)


#: Lengths of a pass over the history: short ones, OpenBLAS's block (256) and the lengths where it
#: splits the rest in halves (257 .. 511) or takes whole blocks, and lengths that are not a
#: multiple of the einsum's eight.
LENGTHS = [1, 2, 7, 8, 13, 255, 256, 257, 300, 511, 512, 513, 777, 1000, 2049, 4093]


@pytest.mark.parametrize("m", LENGTHS)
def test_the_passes_sum_in_numpys_and_openblass_order(m):
    rng = np.random.default_rng(m)
    capacity = 4096 if m <= 4096 else 2 * m
    X = np.zeros((4, capacity))
    X[:, :m] = rng.random((4, m)) - 0.3
    e = rng.standard_normal(capacity)
    w = rng.random(capacity) * 0.25
    grad, H = np.empty(4), np.empty((4, 4))
    _einsum_dot4(X, e, m, grad)
    _weighted_gram(X, w, m, H)
    Xr = X[None, :, :m]  # the history's view, as GLMUCB.update takes it
    assert same_arrays(grad, np.einsum("rkt,rt->rk", Xr, e[None, :m])[0])
    assert same_arrays(H, weighted_gram(Xr, w[None, :m])[0])


def test_the_inlined_exp_gives_the_c_librarys_bits():
    """The first pass of a Newton step with glibc's exp written out gives scipy's ``expit`` (hence
    the C library's exp) bit for bit, on other arguments than the check's own sample."""
    if not exp_repeats_libm():
        pytest.skip("the C library's exp is not glibc's here: the kernel calls it instead")
    rng = np.random.default_rng(7)
    z = np.concatenate([rng.standard_normal(200_000) * 6.0, rng.uniform(-600.0, 600.0, 5_000), [0.0, 1e-310]])
    m = z.shape[0]
    X = np.zeros((4, m))
    X[:2] = [z / 2.0, z / 2.0]  # x^T theta = z / 2 + z / 2 = z with theta = (1, 1, 0, 0)
    y = (rng.random(m) < 0.5).astype(float)
    e, w, ks, rs = np.empty(m), np.empty(m), np.empty(m, dtype=np.int64), np.empty(m)
    _expit_pass(X, y, m, np.array([1.0, 1.0, 0.0, 0.0]), e, w, ks, rs, True)
    p = expit(np.einsum("k,kt->t", np.array([1.0, 1.0, 0.0, 0.0]), X))
    assert same_arrays(e, p - y) and same_arrays(w, p * (1 - p))


def test_a_fresh_process_finds_the_kernel_without_the_package_importing_it():
    """The chapter's package imports none of its modules (a worker of the exact comparisons loads
    :mod:`.confidence` alone); :meth:`GLMUCB.compiled` imports the kernel module on first use."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import causalbandits_lib.cclb.confidence\n"
        "heavy = ('causalbandits_lib.cclb.glm_kernel', 'causalbandits_lib.cclb.algorithms', 'pgmpy', 'numba')\n"
        "heavy = [m for m in heavy if m in sys.modules]\n"
        "assert not heavy, heavy\n"
        "from causalbandits_lib.cclb.algorithms import GLMUCB\n"
        "from causalbandits_lib.cclb.environment import FairLogisticBandit\n"
        "assert 'causalbandits_lib.cclb.glm_kernel' not in sys.modules\n"
        "kernel = GLMUCB().compiled(FairLogisticBandit())\n"
        "assert type(kernel).__name__ == 'GLMUCBKernel', kernel\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
