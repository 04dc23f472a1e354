"""The compiled kernels of the FairX chapter against their numpy reference.

Each kernel is compared with the numpy path on identical streams over a horizon that crosses a
block boundary, at the paper's configurations (the notebooks' environments, dimensions and
hyper-parameter grids): identical decisions (rewards, accepted events, counts) and per-round
values within the registry's 1e-9 relative (bit for bit where no BLAS product is involved), and the
same final state of the policy. The registry's conformance check repeats the comparison on every
registered pair, on short horizons (``tests/test_contracts.py``).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from causalbandits_lib.core.registry import close_arrays, same_arrays
from causalbandits_lib.core.runner import BLOCK, simulate
from causalbandits_lib.core.streams import RunStreams
from causalbandits_lib.fairx import algorithms as alg
from causalbandits_lib.fairx import data
from causalbandits_lib.fairx import experiments as ex
from causalbandits_lib.fairx.kernels import FairXKernel
from causalbandits_lib.fairx.linear_kernels import LinearKernel
from causalbandits_lib.fairx.merit import AffineMerit, ExpMerit
from causalbandits_lib.fairx.model import ContextTableBandit, GaussianContextBandit
from causalbandits_lib.fairx.yahoo import ReplayEnvironment, YahooLikeSimulator

T = BLOCK + 200
N_RUNS = 2
#: the algorithms whose numpy path multiplies by the square root S with BLAS (see linear_kernels):
#: their deployed policies are compared within the kernels' 1e-9 relative (bit for bit where numba's
#: BLAS is numpy's, as on the book's machine)
BLAS = ("FairX-LinUCB", "LinUCB")


def _both(make_env, make_policy, T=T, metrics=("policy", "reward", "arm_means")):
    out = []
    for backend in ("numpy", "compiled"):
        env, policy = make_env(), make_policy()
        res = simulate(env, policy, T, seed=7, n_runs=N_RUNS, metrics=metrics, backend=backend)
        assert res.info["backend"] == backend
        out.append((res, policy, env))
    return out


def _check_linear(name, slow, fast):
    (a, p, _), (b, q, _) = slow, fast
    exact = name not in BLAS
    for k in a.metrics:
        assert close_arrays(a[k], b[k]), k
        if exact or k in ("reward", "accepted", "arm_means"):  # decisions, hence rewards, are identical
            assert same_arrays(a[k], b[k]), k
    if name in ("LinUCB", "LinTS", "LinEG") or exact:
        # one-hot or bit-identical policies: the deployed policy is the same numbers
        assert close_arrays(a["policy"], b["policy"])
    # the final ridge state: the same decisions make the same updates, bit for bit
    for attr in ("mean", "root"):
        assert same_arrays(getattr(p.state, attr), getattr(q.state, attr)), attr
    assert close_arrays(p.policy, q.policy)


def _grid_policy(name, algorithms, grid, c_values, K, d, full=False):
    """The first, middle and last points of the paper's grid (``full``: every point), for every c,
    as a grid search builds them."""
    names = tuple(grid)
    if full:
        points = list(itertools.product(*(grid[n] for n in names)))
    else:
        points = [tuple(grid[n][i] for n in names) for i in (0, len(grid[names[0]]) // 2, -1)]
    cc = np.repeat(np.asarray(c_values, dtype=float), len(points))
    arrays = {n: np.tile(np.array([p[i] for p in points]), len(c_values)) for i, n in enumerate(names)}
    return algorithms[name].make(ExpMerit(cc), K, d, **arrays)


@pytest.fixture(scope="module")
def yeast_linear():
    """fairx/05's linear environments on the yeast stand-in: random Fourier contexts (d = 50),
    label rewards (misspecified) and θ·x + noise (well specified), validation split."""
    yeast = data.yeast_stand_in(seed=0)
    rng = np.random.default_rng
    lin = ex.split_environments(yeast, rng(0), 0.2, "linear", rng(1), 50, 1.0)[0]
    well = ex.split_environments(yeast, rng(0), 0.2, "well_specified", rng(1), 50, 1.0, 0.1)[0]
    return {"labels": lin, "noise": well}


@pytest.fixture(scope="module")
def yahoo_log():
    """fairx/06's simulator (271 articles, pools of 20), two days of 1,300 events."""
    return YahooLikeSimulator(seed=3).log(1300, seed=4)


@pytest.mark.parametrize("name", list(ex.LINEAR_ALGORITHMS) + ["LinEG"])
def test_linear_kernel_gaussian_contexts_paper_configuration(name):
    """fairx/03: d = K = 10, c = 3, β = 1, σ_0 = d^(-1/2), a parameter drawn per run."""
    dim = K = 10
    merit, sd0 = ExpMerit(3.0), 1 / np.sqrt(dim)
    make = {
        "FairX-LinUCB": lambda: alg.FairXLinUCB(merit, 1.0, 1.0, dim, K),
        "FairX-LinTS": lambda: alg.FairXLinTS(merit, sd0, 1.0, dim, K),
        "FairX-LinEG": lambda: alg.FairXLinEG(merit, 0.0, 1.0, dim, K),
        "LinUCB": lambda: alg.LinUCB(1.0, 1.0, dim, K),
        "LinTS": lambda: alg.LinTS(sd0, 1.0, dim, K),
        "LinEG": lambda: alg.LinEG(0.1, 1.0, dim, K),
    }[name]
    slow, fast = _both(lambda: GaussianContextBandit(None, K, 1.0, dim=dim, prior_sd=sd0), make)
    _check_linear(name, slow, fast)
    # the environment is left as observe() leaves it
    assert same_arrays(slow[2]._contexts, fast[2]._contexts) and same_arrays(slow[2]._means, fast[2]._means)


@pytest.mark.parametrize("setting", ["labels", "noise"])
@pytest.mark.parametrize("name", list(ex.LINEAR_ALGORITHMS))
def test_linear_kernel_context_table_paper_configuration(yeast_linear, setting, name):
    """fairx/05: yeast's random Fourier contexts, K = 14, d = 50, grid points of App. B.1 for
    c in {1, 3, 10} (nine configurations in one run)."""
    env = yeast_linear[setting]
    make = lambda: _grid_policy(name, ex.LINEAR_ALGORITHMS, ex.LINEAR_GRIDS[name], [1.0, 3.0, 10.0], 14, 50)  # noqa: E731
    slow, fast = _both(lambda: env, make)
    _check_linear(name, slow, fast)
    assert same_arrays(slow[2]._example, fast[2]._example)


@pytest.mark.parametrize("name", list(ex.LINEAR_ALGORITHMS))
def test_linear_kernel_replay_paper_configuration(yahoo_log, name):
    """fairx/06 (linear): outer-product contexts (d = 36) over pools of 20, every point of the Yahoo!
    grids (ridge down to 1e-6: the worst-conditioned configurations of the chapter), c = 10."""
    env = ReplayEnvironment(yahoo_log, yahoo_log.days(1, 1), "linear")
    grid = ex.YAHOO_LINEAR_GRIDS[name]
    make = lambda: _grid_policy(name, ex.LINEAR_ALGORITHMS, grid, [10.0], 20, 36, full=True)  # noqa: E731
    slow, fast = _both(lambda: env, make, T=env.n_rounds, metrics=("policy", "reward", "arm_means", "accepted"))
    _check_linear(name, slow, fast)
    assert slow[0]["accepted"].sum() > 100  # the runs learnt from many events


@pytest.mark.parametrize("name", ["FairX-UCB", "FairX-TS", "FairX-EG", "UCB", "TS", "EG"])
def test_mab_kernel_replay_paper_configuration(yahoo_log, name):
    """fairx/06 (multi-armed): 271 articles, pools of 20, the Yahoo! grids, c = 10: bit for bit."""
    env = ReplayEnvironment(yahoo_log, yahoo_log.days(1, 1), "mab")
    grid = ex.YAHOO_MAB_GRIDS.get(name, ex.MAB_GRIDS["EG"])
    make = lambda: _grid_policy(name, ex.MAB_ALGORITHMS, grid, [10.0], 271, None)  # noqa: E731
    metrics = ("policy", "reward", "arm_means", "accepted")
    (a, p, _), (b, q, _) = _both(lambda: env, make, T=env.n_rounds, metrics=metrics)
    for k in a.metrics:
        assert same_arrays(a[k], b[k]), k
    assert a["accepted"].sum() > 100
    for attr in ("counts", "sums", "policy") + (("post_mean", "post_sd") if name.endswith("TS") else ()):
        assert same_arrays(getattr(p, attr), getattr(q, attr)), attr


@pytest.mark.parametrize("mode", ["mab", "linear"])
def test_replay_regrets_compiled_equal_numpy(yahoo_log, mode):
    """The running regret sums of fairx/06 (with the accepted-event count) from the kernel."""
    env = ReplayEnvironment(yahoo_log, yahoo_log.days(1, 1), mode)
    merit = ExpMerit([10.0])
    runs = []
    for backend in ("numpy", "compiled"):
        policy = alg.FairXTS(merit, 0.1, 0.01, 271) if mode == "mab" else alg.FairXLinTS(merit, 1e-2, 1e-2, 36, 20)
        recorders = ex.fairness_recorders(merit, env.n_rounds, replay=True)
        res = simulate(env, policy, env.n_rounds, 3, n_runs=N_RUNS, metrics=(), recorders=recorders, backend=backend)
        runs.append(ex.FairnessRun.from_simulation(res))
    a, b = runs
    assert same_arrays(a.rounds, b.rounds) and a.rounds[..., -1].min() > 20
    assert same_arrays(a.fairness, b.fairness) and same_arrays(a.reward, b.reward)


def test_simulate_fairness_takes_the_kernels(yeast_linear, yahoo_log):
    merit = ExpMerit([3.0])
    run = ex.simulate_fairness(yeast_linear["labels"], alg.FairXLinEG(merit, 0.0, 1.0, 50, 14), merit, 50, 0, n_runs=2)
    assert run.fairness.shape == (2, 1, len(run.t))
    for mode, policy in (("mab", alg.UCB(0.01, 271)), ("linear", alg.LinTS(0.01, 0.01, 36, 20))):
        env = ReplayEnvironment(yahoo_log, yahoo_log.days(1, 1), mode)
        recorders = ex.fairness_recorders(merit, 100, replay=True)
        res = simulate(env, policy, 100, 0, n_runs=2, metrics=(), recorders=recorders)
        assert res.info["backend"] == "compiled"


def _kernel(env, policy):
    streams = RunStreams(0, [0, 1])
    env.reset(streams.child("env/"))
    policy.reset(streams.child("policy/"))
    return policy.compiled(env)


def test_the_kernels_are_chosen_by_exact_type(yahoo_log):
    class MyTable(ContextTableBandit):
        pass

    class MyLinTS(alg.LinTS):
        pass

    rng = np.random.default_rng(0)
    ctx, means = rng.normal(size=(20, 4, 3)), rng.random((20, 4))
    merit = ExpMerit(2.0)
    assert isinstance(_kernel(ContextTableBandit(ctx, means), alg.LinTS(1.0, 1.0, 3, 4)), LinearKernel)
    assert _kernel(MyTable(ctx, means), alg.LinTS(1.0, 1.0, 3, 4)) is None
    assert _kernel(ContextTableBandit(ctx, means), MyLinTS(1.0, 1.0, 3, 4)) is None
    assert _kernel(ContextTableBandit(ctx, means), alg.FairXLinUCB(AffineMerit(1.0), 1.0, 1.0, 3, 4)) is None
    assert _kernel(ContextTableBandit(ctx, means), alg.FairXLinUCB(merit, 1.0, 1.0, 3, 4)) is not None
    day = yahoo_log.days(0, 0)
    assert isinstance(_kernel(ReplayEnvironment(yahoo_log, day, "mab"), alg.UCB(0.1, 271)), FairXKernel)
    # a multi-armed policy against the linear replay, and a linear one against the multi-armed replay
    assert _kernel(ReplayEnvironment(yahoo_log, day, "linear"), alg.UCB(0.1, 271)) is None
    assert _kernel(ReplayEnvironment(yahoo_log, day, "mab"), alg.LinTS(1.0, 1.0, 36, 20)) is None
    # the exact box solver has no kernel over a replay's pools (it has one elsewhere)
    assert _kernel(ReplayEnvironment(yahoo_log, day, "mab"), alg.FairXUCB(merit, 0.1, 271, "exact")) is None


@pytest.mark.parametrize(
    "make_env, make_policy, why",
    [
        (
            lambda: ContextTableBandit(np.ones((5, 3, 2)), np.zeros((5, 3))),
            lambda: alg.FairXLinEG(AffineMerit(1.0), 0.1, 1.0, 2, 3),
            "FairXLinEG has no compiled kernel for ContextTableBandit",
        ),
        (
            lambda: GaussianContextBandit([0.1, 0.2], 3),
            lambda: alg.FairXLinTS(AffineMerit(0.0, floor=0.1), 1.0, 1.0, 2, 3),
            "FairXLinTS has no compiled kernel for GaussianContextBandit",
        ),
        (
            lambda: ReplayEnvironment(YahooLikeSimulator(0, 30, 5, 1).log(300, 1), slice(0, 300), "mab"),
            lambda: alg.FairXUCB(ExpMerit(2.0), 0.1, 30, solver="exact"),
            "FairXUCB has no compiled kernel for ReplayEnvironment",
        ),
    ],
)
def test_compiled_backend_refuses_what_it_does_not_implement(make_env, make_policy, why):
    with pytest.raises(ValueError, match=f"backend='compiled' is not available: {why}"):
        simulate(make_env(), make_policy(), 20, 0, n_runs=2, metrics=("reward",), backend="compiled")
    # the numpy path still runs them
    assert simulate(make_env(), make_policy(), 20, 0, n_runs=2, metrics=("reward",)).info["backend"] == "numpy"
