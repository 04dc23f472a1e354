"""The multi-armed kernel's exact optimistic step and its merit functions other than ``exp(cμ)``.

FairX-UCB with ``solver="exact"`` (fairx/02's theorem algorithm) and FairX-UCB, FairX-TS and
FairX-EG with :class:`~causalbandits_lib.fairx.merit.AffineMerit` and
:class:`~causalbandits_lib.fairx.merit.RampMerit` (fairx/01's lower-bound instances) run compiled;
the kernel repeats the numpy path's arithmetic operation for operation, so every output, the
deployed policies and the policy's state after the run are compared bit for bit
(``np.array_equal``), not within the registry's 1e-9. The row helpers are also compared with the
numpy functions they repeat (:func:`~causalbandits_lib.fairx.optimism.optimistic_box_exact`,
:func:`~causalbandits_lib.fairx.optimism.optimistic_box_pgd`, ``merit.policy``) on boxes built to
hit their corner cases: tied thresholds, empty widths, merits that underflow, row sums longer
than 8 and 128 numbers.
"""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.runner import BLOCK, simulate
from causalbandits_lib.core.streams import RunStreams
from causalbandits_lib.fairx import algorithms as alg
from causalbandits_lib.fairx import data, kernels, optimism, theory
from causalbandits_lib.fairx.experiments import simulate_fairness
from causalbandits_lib.fairx.kernels import FairXKernel, kernel_for
from causalbandits_lib.fairx.merit import AffineMerit, ExpMerit, RampMerit
from causalbandits_lib.fairx.model import ArmsBandit, MultiLabelBandit
from causalbandits_lib.fairx.yahoo import ReplayEnvironment, YahooLikeSimulator

T = BLOCK + 200
N_RUNS = 3
YEAST_MEANS = data.YEAST_LABEL_COUNTS / data.YEAST_N
STATE = ("counts", "sums", "policy")
POSTERIOR = ("post_mean", "post_sd")


def _same_both_ways(make_env, make_policy, T=T, n_runs=N_RUNS, seed=7):
    """Simulate on both paths; every metric, and the policy's state after the run, bit for bit."""
    out = []
    for backend in ("numpy", "compiled"):
        policy = make_policy()
        res = simulate(
            make_env(), policy, T, seed, n_runs=n_runs, metrics=("policy", "reward", "arm_means"), backend=backend
        )
        assert res.info["backend"] == backend
        out.append((res, policy))
    (a, p), (b, q) = out
    for k in ("policy", "reward", "arm_means"):
        assert np.array_equal(a[k], b[k]), k
    for attr in STATE + (POSTERIOR if hasattr(p, "post_mean") else ()):
        assert np.array_equal(getattr(p, attr), getattr(q, attr)), attr
    return a


# ------------------------------------------------------------------------ fairx/02: the exact step


@pytest.mark.parametrize("w0", ["theory", 0.1])
def test_exact_step_kernel_paper_configuration(w0):
    """fairx/02: yeast's label frequencies as Bernoulli arms, c = 4, the theory's width (about 6,
    wide boxes: the solver's vertices move every round) and the experiments' 0.1."""
    width = float(theory.theory_width(100_000, 14, 0.05)) if w0 == "theory" else w0
    merit = ExpMerit(4.0)
    res = _same_both_ways(lambda: ArmsBandit(YEAST_MEANS), lambda: alg.FairXUCB(merit, width, 14, solver="exact"))
    # the exact step is not the gradient step: the runs differ from PGD's on the same streams
    pgd = simulate(ArmsBandit(YEAST_MEANS), alg.FairXUCB(merit, width, 14), T, 7, n_runs=N_RUNS, metrics=("policy",))
    assert not np.array_equal(res["policy"], pgd["policy"])


def test_exact_step_kernel_configurations_multilabel():
    """Per-configuration c and w0 (the solver's c per grid point), on a multi-label data set."""
    merit = ExpMerit([1.0, 4.0, 10.0])
    rng = np.random.default_rng(3)
    labels = (rng.random((400, 9)) < rng.random(9)).astype(float)
    _same_both_ways(lambda: MultiLabelBandit(labels), lambda: alg.FairXUCB(merit, [3.0, 0.5, 0.05], 9, "exact"))


def test_exact_step_kernel_running_regrets_equal_numpy():
    """fairx/02's summaries (simulate_fairness's running sums): bit for bit."""
    merit = ExpMerit(4.0)
    runs = [
        simulate_fairness(
            ArmsBandit(YEAST_MEANS), alg.FairXUCB(merit, 6.0, 14, solver="exact"), merit, T, 3, n_runs=4, backend=b
        )
        for b in ("numpy", "compiled")
    ]
    a, b = runs
    for k in ("fairness", "reward", "uniform"):
        assert np.array_equal(getattr(a, k), getattr(b, k)), k


def _random_boxes(rng, n, K):
    """Boxes as FairX-UCB builds them, with ties (discrete counts and sums), empty widths and a few
    rows whose lower merits all underflow (the solver's j = 0 vertex is then 0/0)."""
    counts = rng.integers(1, 6, size=(n, K)).astype(float)
    sums = np.floor(rng.random((n, K)) * (counts + 1))
    mean = sums / counts
    width = rng.choice([0.0, 0.01, 0.3, 3.0, 30.0], size=(n, 1)) / np.sqrt(counts)
    lower, upper = mean - width, mean + width
    lower[::7, 0] = upper[::7, 0]  # an empty interval
    lower[3::11] = -1e6  # exp(c(l − max u)) underflows for every arm
    return lower, upper


@pytest.mark.parametrize("K", [2, 3, 14, 40])
@pytest.mark.parametrize("c", [0.5, 4.0, 10.0])
def test_exact_row_equals_optimistic_box_exact(K, c):
    rng = np.random.default_rng(K * 100 + int(c * 10))
    lower, upper = _random_boxes(rng, 300, K)
    merit = ExpMerit(c)
    with np.errstate(invalid="ignore", over="ignore"):  # 0/0 rows; expm1 overflows on wide boxes (τ = u)
        mu = optimism.optimistic_box_exact(merit, lower, upper)[0]
    expected = merit.c_column * mu  # the scores _fair_sample hands to softmax_and_sample
    tau, order = np.empty(K), np.empty(K, dtype=np.int64)
    fl, fu, a, b, v = np.empty(K), np.empty(K), np.empty(K + 1), np.empty(K + 1), np.empty(K + 1)
    got = np.empty_like(lower)
    for i in range(len(lower)):
        kernels._exact_exp(c, lower[i], upper[i], got[i], tau, order, fl, fu, a, b, v)
    assert np.array_equal(got, expected)
    # the boxes reach every kind of vertex: all down (the 0/0 rows), all up and mixed
    up = mu == upper
    assert up.all(axis=-1).any() and (~up).all(axis=-1).any() and (up.any(axis=-1) & ~up.all(axis=-1)).any()


# ------------------------------------------------------------- fairx/01: the other merit functions


def _lower_bound_learners():
    return {
        "FairX-TS": lambda merit: alg.FairXTS(merit, 1.0, np.sqrt(0.5), 2),
        "FairX-EG": lambda merit: alg.FairXEG(merit, 0.0, 2),
        "FairX-UCB": lambda merit: alg.FairXUCB(merit, 1.0, 2),
    }


@pytest.mark.parametrize("name", list(_lower_bound_learners()))
@pytest.mark.parametrize("theorem", ["3.1.4", "3.1.5"])
def test_lower_bound_instances_kernel(theorem, name):
    """fairx/01: the two instances of each lower-bound pair (Gaussian arms, variance 1/2) with the
    pair's merit (identity floored at 1/√T; the ramp 1 + √T·max(μ, 0)) and the notebook's
    learners: decisions, policies, state and the running regrets bit for bit."""
    lb_T = 10_000
    pair = theory.min_merit_lower_bound_pair(lb_T) if theorem == "3.1.4" else theory.lipschitz_lower_bound_pair(lb_T)
    make = _lower_bound_learners()[name]
    for i, means in enumerate(pair.means):
        env = lambda means=means: ArmsBandit(means, "gaussian", pair.sd)  # noqa: E731
        _same_both_ways(env, lambda: make(pair.merit))
        runs = [
            simulate_fairness(env(), make(pair.merit), pair.merit, T, i, n_runs=4, checkpoints=[T], backend=b)
            for b in ("numpy", "compiled")
        ]
        assert np.array_equal(runs[0].fairness, runs[1].fairness) and np.array_equal(runs[0].reward, runs[1].reward)


@pytest.mark.parametrize(
    "merit",
    [AffineMerit(10.0), AffineMerit(0.0, floor=0.2), AffineMerit(-0.3, floor=0.05), RampMerit(3.0)],
    ids=["affine", "affine_floor", "affine_floor_shifted", "ramp"],
)
@pytest.mark.parametrize("name", ["FairX-UCB", "FairX-TS", "FairX-EG"])
def test_merit_kernels_many_arms_and_configurations(merit, name):
    """Nine Bernoulli arms (row sums of more than eight numbers: numpy's pairwise order) and two
    configurations per policy, against Bernoulli arms and a multi-label data set."""
    K = 9
    make = {
        "FairX-UCB": lambda: alg.FairXUCB(merit, [0.5, 0.05], K, lr=0.3, steps=7),
        "FairX-TS": lambda: alg.FairXTS(merit, 1.0, [0.5, 1.0], K),
        "FairX-EG": lambda: alg.FairXEG(merit, [0.0, 0.2], K),
    }[name]
    rng = np.random.default_rng(5)
    means = rng.random(K)
    _same_both_ways(lambda: ArmsBandit(means), make)
    labels = (rng.random((300, K)) < means).astype(float)
    _same_both_ways(lambda: MultiLabelBandit(labels), make)


@pytest.mark.parametrize("K", [2, 9, 130])
@pytest.mark.parametrize(
    "merit",
    [AffineMerit(3.0), AffineMerit(0.0, floor=0.1), RampMerit(5.0)],
    ids=["affine", "affine_floor", "ramp"],
)
def test_merit_rows_equal_numpy(merit, K):
    """The row helpers against ``merit.policy`` and :func:`optimistic_box_pgd` (rows of 130
    numbers: numpy's pairwise sum splits above 128)."""
    rng = np.random.default_rng(K)
    mean = rng.normal(size=(50, K)) * 0.4
    mean[:, 0] = 0.0
    width = rng.random((50, K)) * 0.5
    lower, upper = mean - width, mean + width
    args = kernels._merit_args(merit)
    f, pi, prod, grad, mu = (np.empty(K) for _ in range(5))
    mu_fast, pi_fast = np.empty_like(mean), np.empty_like(mean)
    for i in range(len(mean)):
        assert kernels._pgd_merit(args, lower[i], upper[i], mean[i], 0.05, 10, mu_fast[i], f, pi, prod, grad) == -1
        assert kernels._merit_policy(args, mu_fast[i], f, pi_fast[i]) == -1
    mu_slow = optimism.optimistic_box_pgd(merit, lower, upper, start=mean, lr=0.05, steps=10)
    assert np.array_equal(mu_fast, mu_slow)
    assert np.array_equal(pi_fast, merit.policy(mu_slow))
    assert not np.array_equal(mu_slow, mean)  # the steps moved


@pytest.mark.parametrize("name", ["FairX-UCB", "FairX-TS", "FairX-EG"])
def test_a_merit_that_is_not_positive_raises_on_both_paths(name):
    """AffineMerit without a floor is an error where it is not positive: the kernel stops there too."""
    merit = AffineMerit(-0.5)
    make = {
        "FairX-UCB": lambda: alg.FairXUCB(merit, 0.1, 3),
        "FairX-TS": lambda: alg.FairXTS(merit, 1.0, 1.0, 3),
        "FairX-EG": lambda: alg.FairXEG(merit, 0.1, 3),
    }[name]
    for backend in ("numpy", "compiled"):
        with pytest.raises(ValueError, match="is not positive"):
            simulate(ArmsBandit([0.1, 0.2, 0.3]), make(), 50, 0, n_runs=2, metrics=("reward",), backend=backend)


# ---------------------------------------------------------------------------- what takes the kernel


def _kernel(env, policy):
    streams = RunStreams(0, [0, 1])
    env.reset(streams.child("env/"))
    policy.reset(streams.child("policy/"))
    return policy.compiled(env)


def test_which_merits_and_solvers_take_the_kernel():
    arms = lambda: ArmsBandit([0.2, 0.5, 0.6])  # noqa: E731
    for merit in (ExpMerit(2.0), AffineMerit(1.0), AffineMerit(0.0, floor=0.1), RampMerit(2.0)):
        for policy in (alg.FairXUCB(merit, 0.1, 3), alg.FairXTS(merit, 1.0, 1.0, 3), alg.FairXEG(merit, 0.1, 3)):
            assert isinstance(_kernel(arms(), policy), FairXKernel)
    assert isinstance(_kernel(arms(), alg.FairXUCB(ExpMerit(2.0), 0.1, 3, solver="exact")), FairXKernel)
    # the exact solver refuses merits without the threshold (the numpy path raises): no kernel
    assert _kernel(arms(), alg.FairXUCB(AffineMerit(1.0), 0.1, 3, solver="exact")) is None

    class MyMerit(RampMerit):
        pass

    assert _kernel(arms(), alg.FairXTS(MyMerit(2.0), 1.0, 1.0, 3)) is None
    # over a replay's pools only the exponential merit and the gradient steps
    log = YahooLikeSimulator(0, 30, 5, 1).log(300, 1)
    replay = lambda: ReplayEnvironment(log, slice(0, 300), "mab")  # noqa: E731
    assert isinstance(_kernel(replay(), alg.FairXUCB(ExpMerit(2.0), 0.1, 30)), FairXKernel)
    assert _kernel(replay(), alg.FairXUCB(ExpMerit(2.0), 0.1, 30, solver="exact")) is None
    assert _kernel(replay(), alg.FairXEG(RampMerit(2.0), 0.1, 30)) is None


class _ClippedExactUCB(alg.FairXUCB):
    """FairX-UCB whose box is clipped into fixed bounds (as synthesis's BoundedFairXUCB does), with
    the exact step; its kernel is FairX-UCB's with ``box_bounds``."""

    def __init__(self, merit, w0, n_arms, lower, upper, solver):
        super().__init__(merit, w0, n_arms, solver=solver)
        self.lo, self.hi = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)

    def confidence_box(self, pool=None):
        mean, lower, upper = super().confidence_box(pool)
        return np.clip(mean, self.lo, self.hi), np.clip(lower, self.lo, self.hi), np.clip(upper, self.lo, self.hi)

    def compiled(self, env):
        return kernel_for(self, env, kernels.FAIRX_UCB, box_bounds=(self.lo, self.hi))


@pytest.mark.parametrize(
    "merit, solver",
    [(ExpMerit([2.0, 6.0]), "exact"), (ExpMerit([2.0, 6.0]), "pgd"), (RampMerit(4.0), "pgd")],
    ids=["exp-exact", "exp-pgd", "ramp-pgd"],
)
def test_clipped_box_with_every_step(merit, solver):
    lo, hi = np.array([0.0, 0.1, 0.2, 0.3]), np.array([0.5, 0.6, 0.9, 1.0])
    _same_both_ways(
        lambda: ArmsBandit([0.2, 0.4, 0.5, 0.8]), lambda: _ClippedExactUCB(merit, [2.0, 0.2], 4, lo, hi, solver)
    )
