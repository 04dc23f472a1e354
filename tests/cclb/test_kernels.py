"""The compiled kernel of :mod:`causalbandits_lib.cclb.kernels` against its numpy reference.

The kernel is compared with the numpy path on identical streams over horizons that cross a block
boundary (and the MLE's warm-up and the environment's chunks): identical decisions, hence an
identical history, and every other per-round value and the policy's final state within the
registry's 1e-9 relative (the kernel sums in its own order and has its own exp, log and
eigendecomposition, so the last bits differ). The registry's conformance check repeats the
comparison on every registered pair (``tests/test_contracts.py``) on short horizons.
"""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.cclb.algorithms import CCLB, GLMUCB, OFULogPlus
from causalbandits_lib.cclb.environment import FairLogisticBandit
from causalbandits_lib.cclb.experiments import PER_ROUND_METRICS, PlayedRounds, paper_configs, run_configs
from causalbandits_lib.cclb.generator import RoundGenerator
from causalbandits_lib.cclb.kernels import (
    DIAGNOSTICS,
    FEEDBACK,
    PLAYED,
    OFULogKernel,
    _jacobi4,
    fast_exp,
    fast_log,
    mixture_lp_values,
)
from causalbandits_lib.cclb.oracle import mixture_lp_value
from causalbandits_lib.cclb.registry import CCLB_METRICS, OFULOG_METRICS
from causalbandits_lib.core.recorders import RecorderBase
from causalbandits_lib.core.registry import close_arrays, same_arrays
from causalbandits_lib.core.runner import BLOCK, simulate, simulate_loop
from causalbandits_lib.core.streams import RunStreams

#: What :func:`~causalbandits_lib.cclb.experiments.run_configs` keeps.
RUN_CONFIGS_METRICS = PER_ROUND_METRICS + ("dual", "estimated_violation")
HISTORY = ("count", "s1", "s2", "d_min", "d_max", "X", "weights", "b")


def _close_state(a, b) -> bool:
    """Within 1e-9 of the array's largest entry (a coordinate of an estimate can be near zero, where
    a relative tolerance would ask for more than the rounding of its neighbours allows)."""
    a, b = np.asarray(a), np.asarray(b)
    scale = np.nanmax(np.abs(a)) if np.isfinite(a).any() else 0.0
    return a.shape == b.shape and bool(np.allclose(b, a, rtol=0.0, atol=1e-9 * scale, equal_nan=True))


def _assert_same_state(a, b):
    """The history is a function of the decisions: identical. The estimates: within 1e-9."""
    for name in ("theta_hat", "_warm", "_warm_s"):
        assert _close_state(getattr(a, name), getattr(b, name)), name
    assert same_arrays(a.solved, b.solved)
    if isinstance(a, CCLB):
        assert close_arrays(a.phi, b.phi)
        assert close_arrays(a._est_violation, b._est_violation)
    for name in HISTORY:
        assert same_arrays(getattr(a.history, name), getattr(b.history, name)), name
    assert a.history.t == b.history.t
    assert sorted(a.diagnostics()) == sorted(b.diagnostics())
    for k, v in a.diagnostics().items():
        assert close_arrays(v, b.diagnostics()[k]), k


def _assert_matches(ref, fast, metrics):
    """Identical decisions, hence identical feedback; the policy's diagnostics within 1e-9."""
    for k in metrics:
        assert (same_arrays if k in FEEDBACK else close_arrays)(ref[k], fast[k]), k


def _both(make_env, make_policy, T, n_runs, metrics, replications=None, seed=5):
    out = []
    for backend in ("numpy", "compiled"):
        policy = make_policy()
        res = simulate(
            make_env(), policy, T, seed, n_runs=n_runs, metrics=metrics, replications=replications, backend=backend
        )
        assert res.info["backend"] == backend
        out.append((res, policy))
    return out


def test_the_kernels_exp_and_log_are_within_two_ulp_of_the_c_library():
    z = np.random.default_rng(0).normal(size=1_000_000) * 8
    z = np.concatenate([z, [0.0, -708.0, 709.0, 1e-300, -1e-300, 30.0, -30.0]])
    ex = np.array([fast_exp(v) for v in z[:2000]] + [fast_exp(v) for v in z[-7:]])
    ref = np.exp(np.concatenate([z[:2000], z[-7:]]))
    assert np.all(np.abs(ex - ref) <= 1 * np.spacing(ref))
    q = 1.0 / (1.0 + np.exp(-z[:2000]))
    q = np.concatenate([q, [1.0, 0.5, 2.0**-1022, np.nextafter(1.0, 0), 1e-300]])
    lg = np.array([fast_log(v) for v in q])
    ref = np.log(q)
    assert np.all(np.abs(lg - ref) <= 2 * np.spacing(np.abs(ref)))
    assert fast_log(1.0) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_jacobi_eigendecomposition_matches_lapack(seed):
    """Eigenvalues (ascending) and the eigenvectors' projector within 1e-12 of ``np.linalg.eigh``,
    on Gram matrices of our shape and condition, a repeated eigenvalue and a diagonal matrix."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(4, 200))
    X[3] *= 1e-3  # a condition number near 1e6, as a Hessian with a weak direction
    cases = [X @ (X * rng.random(200)).T + 1e-6 * np.eye(4), np.diag([3.0, 1.0, 1.0, 2.0]), np.eye(4)]
    Q = np.linalg.qr(rng.normal(size=(4, 4)))[0]
    cases.append(Q @ np.diag([1.0, 1.0, 5.0, 5.0]) @ Q.T)
    for A in cases:
        A = 0.5 * (A + A.T)
        ev, V = np.empty(4), np.empty((4, 4))
        assert _jacobi4(A.copy(), ev, V)
        ref_ev, ref_V = np.linalg.eigh(A)
        scale = np.abs(ref_ev).max()
        assert np.all(np.diff(ev) >= 0)
        assert np.allclose(ev, ref_ev, rtol=0, atol=1e-12 * scale)
        assert np.allclose(V.T @ V, np.eye(4), atol=1e-12)
        assert np.allclose(V @ np.diag(ev) @ V.T, A, rtol=0, atol=1e-12 * scale)


def test_compiled_lp_benchmark_is_the_oracles_bit_for_bit():
    """The environment's per-round LP value (Eq. 8), compiled, against the readable oracle: rounded
    values make ties and infeasible rounds common."""
    rng = np.random.default_rng(3)
    for _ in range(10):
        r = np.round(rng.random((4, 60, 12)), 1)
        e = np.round(rng.normal(size=(4, 60, 12)) * 0.3, 1)
        tau = rng.uniform(0.0, 0.4, 4)
        ref = mixture_lp_value(r, e, tau[:, None, None])
        assert same_arrays(ref, mixture_lp_values(r, e, tau))
    assert np.isinf(ref).any() and np.isfinite(ref).any()


def test_kernel_covers_the_family_and_says_what_it_writes():
    streams = RunStreams(0, [0])
    for policy, names in (
        (OFULogPlus(), FEEDBACK + ("optimistic_value",)),
        (CCLB(100), FEEDBACK + DIAGNOSTICS),
        (CCLB(100, eps=0.1, feature_map="half_scaled"), FEEDBACK + DIAGNOSTICS),
        (OFULogPlus(optimistic="quadratic"), FEEDBACK + ("optimistic_value",)),
    ):
        env = FairLogisticBandit()
        env.reset(streams.child("env/"))
        policy.reset(streams.child("policy/"))
        kernel = policy.compiled(env)
        assert isinstance(kernel, OFULogKernel)
        assert tuple(kernel.outputs) == names + PLAYED
        assert kernel.outputs["played_x"] == (np.float64, (4,))
    assert set(CCLB_METRICS) == set(FEEDBACK + DIAGNOSTICS) and set(OFULOG_METRICS) < set(CCLB_METRICS)


@pytest.mark.parametrize(
    "make_policy",
    [
        lambda: OFULogPlus(optimistic="exact"),
        lambda: OFULogPlus(loss_bins=0),
        lambda: CCLB(50, loss_bins=0),
        lambda: type("MyCCLB", (CCLB,), {})(50),
        lambda: type("MyGLMUCB", (GLMUCB,), {})(),
    ],
    ids=["exact", "raw_loss_ofulog", "raw_loss_cclb", "subclass", "glm_ucb_subclass"],
)
def test_compiled_backend_refuses_what_the_kernel_does_not_cover(make_policy):
    with pytest.raises(ValueError, match="backend='compiled' is not available.*no compiled kernel"):
        simulate(FairLogisticBandit(), make_policy(), 5, 0, n_runs=1, metrics=("regret",), backend="compiled")


class _EveryRound(RecorderBase):
    """Probes before every decision (it names no rounds)."""

    name = "every_round"
    block_inputs = ()

    def after_block(self, t0, t1, values):
        pass

    def before_decision(self, t, ctx, policy):
        pass


def test_a_recorder_probing_every_round_keeps_the_numpy_path():
    with pytest.raises(ValueError, match="probes before each decision"):
        simulate(
            FairLogisticBandit(), CCLB(20), 5, 0, n_runs=1, metrics=(), recorders=[_EveryRound()], backend="compiled"
        )
    auto = simulate(FairLogisticBandit(), CCLB(20), 5, 0, n_runs=1, metrics=(), recorders=[_EveryRound()])
    assert auto.info["backend"] == "numpy"


def _snapshot(t, ctx, X, y, policy):
    """What a probe of :class:`PlayedRounds` sees: its data, the policy's state and the optimistic
    step a copy of the policy would take (:func:`~.experiments.compare_optimistic_steps` without the
    conic programs)."""
    import copy

    pol = copy.deepcopy(policy)
    values, thetas = pol.optimistic_values(t, ctx)
    return {
        "t": t,
        "X": X.copy(),
        "y": y.copy(),
        "x": np.ascontiguousarray(ctx.x),
        "history": {name: getattr(policy.history, name).copy() for name in HISTORY},
        "history_t": policy.history.t,
        "theta_hat": policy.theta_hat.copy(),
        "_warm": policy._warm.copy(),
        "_warm_s": policy._warm_s.copy(),
        "phi": np.array(getattr(policy, "phi", [])),
        "values": values,
        "thetas": thetas,
        "solved": pol.solved.copy(),
    }


@pytest.mark.parametrize(
    "make_policy",
    [lambda: OFULogPlus(mle_warmup=30), lambda: CCLB(BLOCK + 80, eps=0.14, mle_warmup=30)],
    ids=["ofulog_plus", "eps_cclb"],
)
def test_played_rounds_probe_the_kernel_as_the_numpy_path(make_policy):
    """:class:`PlayedRounds` takes blocks and names its probed rounds, so the runner keeps the kernel
    and ends a block before each probe, at multiples of the block length and between them: the
    played features, outcomes and actions are the numpy path's bit for bit, and at every probe the
    policy's history is identical and its estimates, warm starts and optimistic values are within
    1e-9 (the kernel's own arithmetic)."""
    T, rounds = BLOCK + 80, [0, 1, 517, BLOCK, BLOCK + 33, 5 * BLOCK]
    kept = {}
    for backend in ("numpy", "compiled"):
        recorder = PlayedRounds(rounds, _snapshot)
        res = simulate(
            FairLogisticBandit(), make_policy(), T, 7, n_runs=2, metrics=(), recorders=[recorder], backend=backend
        )
        assert res.info["backend"] == backend
        kept[backend] = res.recorded["played"]
    ref, fast = kept["numpy"], kept["compiled"]
    for name in ("X", "y", "actions"):
        assert same_arrays(getattr(ref, name), getattr(fast, name)), name
    assert [p["t"] for p in fast.probes] == [p["t"] for p in ref.probes] == [0, 1, 517, BLOCK, BLOCK + 33]
    for a, b in zip(ref.probes, fast.probes):
        for name in ("X", "y", "x"):
            assert same_arrays(a[name], b[name]), (a["t"], name)
        for name in HISTORY:
            assert same_arrays(a["history"][name], b["history"][name]), (a["t"], name)
        assert a["history_t"] == b["history_t"] == a["t"]
        for name in ("theta_hat", "_warm", "_warm_s", "thetas"):
            assert _close_state(a[name], b[name]), (a["t"], name)
        assert close_arrays(a["phi"], b["phi"]), a["t"]
        assert close_arrays(a["values"], b["values"]) and same_arrays(a["solved"], b["solved"]), a["t"]
    # without a probe, or with one, the default backend is now the kernel
    for recorder in (PlayedRounds(), PlayedRounds([3], lambda *args: None)):
        auto = simulate(FairLogisticBandit(), OFULogPlus(), 5, 0, n_runs=1, metrics=(), recorders=[recorder])
        assert auto.info["backend"] == "compiled"


def test_environment_block_is_what_observe_shows():
    streams = RunStreams(2, range(3))
    a, b = FairLogisticBandit(chunk=64), FairLogisticBandit(chunk=64)
    a.reset(streams)
    b.reset(streams)
    blk = a.block(0, 150)
    for t in range(150):
        ctx = b.observe(t)
        for name in ("x", "x_cf", "code", "raw"):
            assert same_arrays(np.ascontiguousarray(getattr(ctx, name)), np.ascontiguousarray(blk[name][:, t]))
    assert a.observe(150).code.shape == (3,)


@pytest.mark.parametrize(
    "make_env, make_policy",
    [
        (FairLogisticBandit, lambda: OFULogPlus(mle_warmup=30)),
        (
            lambda: FairLogisticBandit(RoundGenerator(feature_map="half_scaled")),
            lambda: CCLB(BLOCK + 60, eps=0.14, feature_map="half_scaled", mle_warmup=30),
        ),
    ],
    ids=["ofulog_plus", "eps_cclb_half_scaled"],
)
def test_kernel_equals_numpy_across_a_block_boundary(make_env, make_policy):
    metrics = CCLB_METRICS if "CCLB" in type(make_policy()).__name__ else OFULOG_METRICS
    (ref, p_ref), (fast, p_fast) = _both(make_env, make_policy, BLOCK + 60, 2, metrics)
    _assert_matches(ref, fast, metrics)
    _assert_same_state(p_ref, p_fast)


@pytest.mark.slow
def test_paper_configuration_matches_on_a_long_horizon():
    """The configurations of Figures 2, 4 and 5 (notebook 04's paper values) as
    :func:`~causalbandits_lib.cclb.experiments.run_configs` lays them out, past a block boundary."""
    T = BLOCK + 300
    configs = paper_configs(T, 0.2, 2 / 0.15, 0.14, (0.05, 0.1), (0.1, 0.3))
    reps = 2

    def make_env():
        return FairLogisticBandit(tau=[c.tau for c in configs])

    def make_policy():
        return CCLB(
            [c.horizon for c in configs],
            tau=[c.tau for c in configs],
            rho=[c.rho for c in configs],
            eps=[c.eps for c in configs],
        )

    metrics = PER_ROUND_METRICS + ("dual", "estimated_violation", "optimistic_value")
    (ref, p_ref), (fast, p_fast) = _both(make_env, make_policy, T, len(configs) * reps, metrics, replications=reps)
    _assert_matches(ref, fast, metrics)
    _assert_same_state(p_ref, p_fast)
    # what run_configs keeps can be recorded in blocks, so the default backend is the kernel
    auto = simulate(make_env(), make_policy(), 30, 1, n_runs=len(configs), metrics=RUN_CONFIGS_METRICS, replications=1)
    assert auto.info["backend"] == "compiled"
    assert run_configs(RoundGenerator(), configs[:2], 30, 1, 1)["cclb"]["dual"].shape == (1, 30)


@pytest.mark.parametrize("backend", ["numpy", "compiled"])
@pytest.mark.parametrize(
    "make_policy, metrics",
    [(lambda: CCLB(300), CCLB_METRICS), (OFULogPlus, OFULOG_METRICS)],
    ids=["cclb", "ofulog_plus"],
)
def test_a_run_is_the_same_alone_and_beside_others(make_policy, metrics, backend):
    """R runs at once equal each run alone, bit for bit (issue 16: the numpy path used the warm
    hints of a round only if every run had them, and summed a lone extra solve's change of basis
    in another order; both made a run depend on its neighbours in the last bits)."""
    T, R = 160, 8
    together = simulate(FairLogisticBandit(), make_policy(), T, 3, n_runs=R, metrics=metrics, backend=backend)
    alone = simulate_loop(FairLogisticBandit, make_policy, T, 3, R, metrics=metrics, backend=backend)
    for k in metrics:
        assert same_arrays(together[k], alone[k]), k


@pytest.mark.parametrize(
    "make_policy, metrics",
    [
        (lambda: OFULogPlus(tie_rule="fairer", mle_warmup=30), OFULOG_METRICS),
        (lambda: CCLB(300, tie_rule="fairer", mle_warmup=30), CCLB_METRICS),
    ],
    ids=["ofulog_plus", "cclb"],
)
def test_kernel_equals_numpy_with_ties_toward_the_fairer_decision(make_policy, metrics):
    (ref, p_ref), (fast, p_fast) = _both(FairLogisticBandit, make_policy, 200, 3, metrics)
    _assert_matches(ref, fast, metrics)
    _assert_same_state(p_ref, p_fast)
