"""The adapters' compiled paths (:mod:`causalbandits_lib.synthesis.kernels`) against the numpy path.

Every adapter that hands the simulation to the fucb or fairx kernel, on several instances and
seeds, with and without the PCB bounds (from offline logs, and bounds that bind hard and tie every
index), with random and first-index tie-breaking, over a horizon that crosses a block boundary:
every per-round value of the recommender and the adapters is identical bit for bit, and so is the
policy's state at the end. The registry's conformance check repeats the comparison on its entries.
"""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.environments import ContextualBernoulliBandit
from causalbandits_lib.core.registry import same_arrays
from causalbandits_lib.core.runner import BLOCK, simulate
from causalbandits_lib.core.streams import RunStreams
from causalbandits_lib.fucb import registry as FR
from causalbandits_lib.fucb.algorithms import TrueDeltaFairUCB
from causalbandits_lib.synthesis import algorithms as A
from causalbandits_lib.synthesis import experiments as X
from causalbandits_lib.synthesis import kernels as SK
from causalbandits_lib.synthesis import model as M

T = BLOCK + 150
N_RUNS = 3
INSTANCES = M.instances(np.random.SeedSequence(0), 3)
COMPILED = [p for p in A.POLICIES if "CCLB" not in p]
FEEDBACK = ("reward", "regret", "delta", "violation", "violation_pos", "cf_unfair", "O", "I", "exposure")
FUCB_DIAG = ("fallback", "fair_set_size", "own_ucb_delta")


def _metrics(policy) -> tuple[str, ...]:
    return FEEDBACK + (FUCB_DIAG if isinstance(policy, A.CellFairUCB) else ())


def _log_bounds(inst, n=N_RUNS, seed=3):
    return A.sound_bounds(M.offline_counts(inst, 1.0, 0.1, 5000, seed, range(n)))


def _state(policy) -> dict:
    if isinstance(policy, A.ContextFree):
        inner = policy.inner
        out = {"counts": inner.counts, "sums": inner.sums, "policy": inner.policy}
        for name in ("post_mean", "post_sd"):
            if hasattr(inner, name):
                out[name] = getattr(inner, name)
    else:
        out = {"counts": policy.stats.counts, "sums": policy.stats.sums}
    out.update({f"diag.{k}": v for k, v in policy.diagnostics().items()})
    return out


def _both(inst, make, seed, tau, T=T, runs=None):
    """Simulate ``make()`` on both paths; returns the two results and final states."""
    results, states = [], []
    for backend in ("numpy", "compiled"):
        policy = make()
        kw = dict(n_runs=N_RUNS) if runs is None else dict(runs=runs)
        res = simulate(M.RecommenderEnv(inst, tau), policy, T, seed, metrics=_metrics(policy), backend=backend, **kw)
        assert res.info["backend"] == backend
        results.append(res)
        states.append(_state(policy))
    return results, states


def _assert_same(results, states):
    slow, fast = results
    assert sorted(slow.metrics) == sorted(fast.metrics)
    for name in slow.metrics:
        assert same_arrays(slow[name], fast[name]), name
    assert states[0].keys() == states[1].keys()
    for key in states[0]:
        assert same_arrays(states[0][key], states[1][key]), key


@pytest.mark.parametrize("name", COMPILED)
@pytest.mark.parametrize("which", range(len(INSTANCES)))
def test_the_compiled_path_equals_the_numpy_path(name, which):
    inst = INSTANCES[which]
    tau = inst.tau(0.5)
    lo, hi = _log_bounds(inst)
    results, states = _both(inst, lambda: A.make_policy(name, inst, tau, lower=lo, upper=hi), 7 + which, tau)
    _assert_same(results, states)


@pytest.mark.parametrize("name", ["D-UCB-PCB", "F-UCB-PCB", "FairX-UCB-PCB"])
@pytest.mark.parametrize("kind", ["collapsed", "tight", "wide"])
def test_binding_bounds_and_ties(name, kind):
    """Bounds that fix every index at 1/2 (every item tied, every round: the random tie-breaking
    decides), bounds tight around the truth, and bounds with infinite ends."""
    inst = INSTANCES[1]
    tau = inst.tau(0.3)
    shape = (N_RUNS,) + inst.means.shape
    if kind == "collapsed":
        lo, hi = np.full(shape, 0.5), np.full(shape, 0.5)
    elif kind == "tight":
        lo, hi = np.broadcast_to(inst.means - 0.01, shape).copy(), np.broadcast_to(inst.means + 0.01, shape).copy()
    else:
        lo, hi = np.full(shape, -np.inf), np.full(shape, np.inf)
    results, states = _both(inst, lambda: A.make_policy(name, inst, tau, lower=lo, upper=hi), 2, tau)
    _assert_same(results, states)


@pytest.mark.parametrize("cls", ["CellUCB", "CellFairUCB"])
def test_first_index_tie_breaking(cls):
    inst = INSTANCES[2]
    tau = inst.tau(0.5)
    lo, hi = np.full((N_RUNS, 4, 4), 0.4), np.full((N_RUNS, 4, 4), 0.6)

    def make():
        dec = A.cell_decomposition(inst)
        if cls == "CellUCB":
            return A.CellUCB(dec, lo, hi, name="D-UCB-PCB", tie_break="first")
        return A.CellFairUCB(dec, lo, hi, name="F-UCB-PCB", tau=tau, tie_break="first", fair_radius="diff")

    results, states = _both(inst, make, 4, tau)
    _assert_same(results, states)


@pytest.mark.parametrize("name", ["F-UCB-PCB", "FairX-UCB-PCB", "FairX-TS"])
def test_a_run_does_not_depend_on_its_neighbours_on_the_compiled_path(name):
    inst = INSTANCES[0]
    tau = inst.tau(0.5)
    lo, hi = _log_bounds(inst, n=5)

    def make():
        return A.make_policy(name, inst, tau, lower=lo, upper=hi)

    metrics = _metrics(make())
    full = simulate(M.RecommenderEnv(inst, tau), make(), T, 1, n_runs=5, metrics=metrics, backend="compiled")
    part = simulate(M.RecommenderEnv(inst, tau), make(), T, 1, runs=[4, 1], metrics=metrics, backend="compiled")
    for m in metrics:
        assert same_arrays(part[m], full[m][[4, 1]]), m


def _made(policy, env):
    streams = RunStreams(0, range(N_RUNS))
    env.reset(streams.child("env/"))
    policy.reset(streams.child("policy/"))
    return policy.compiled(env)


def test_every_adapter_but_cclb_has_a_kernel_and_subclasses_do_not():
    inst = INSTANCES[0]
    tau = inst.tau(0.5)
    lo, hi = _log_bounds(inst)
    for name in A.POLICIES:
        policy = A.make_policy(name, inst, tau, lower=lo, upper=hi, horizon=50)
        kernel = _made(policy, M.RecommenderEnv(inst, tau))
        if name in COMPILED:
            assert isinstance(kernel, SK.RecommenderKernel), name
            assert {"regret", "delta", "exposure", "violation_pos", "cf_unfair"} <= set(kernel.outputs)
            assert ("fallback" in kernel.outputs) == (name in ("F-UCB", "F-UCB-PCB"))

    class MyCellUCB(A.CellUCB):
        pass

    class MyEnv(M.RecommenderEnv):
        pass

    dec = A.cell_decomposition(inst)
    assert _made(MyCellUCB(dec), M.RecommenderEnv(inst, tau)) is None
    assert _made(A.make_policy("D-UCB", inst, tau), MyEnv(inst, tau)) is None
    assert _made(A.make_policy("FairX-UCB", inst, tau), MyEnv(inst, tau)) is None
    plain = ContextualBernoulliBandit(inst.context_probs, inst.means)
    assert _made(A.make_policy("D-UCB", inst, tau), plain) is None
    assert _made(A.make_policy("FairX-TS", inst, tau), plain) is None
    res = simulate(M.RecommenderEnv(inst, tau), MyCellUCB(dec), 20, 0, n_runs=2, metrics=("regret",))
    assert res.info["backend"] == "numpy"


def test_the_views_draw_the_recommenders_numbers():
    inst = INSTANCES[0]
    env = M.RecommenderEnv(inst, inst.tau(0.5))
    env.reset(RunStreams(5, range(N_RUNS)).child("env/"))
    view = SK.causal_view(env)
    bandit = SK.bandit_view(env)
    for t in (0, 3, BLOCK + 2):
        c = env.observe(t)
        assert np.array_equal(view.observe(t), c) and np.array_equal(bandit.observe(t), c)
        items = np.array([0, 2, 3])
        fb = env.pull(t, items)
        assert np.array_equal(view.pull(t, items)["reward"], fb["reward"])
        assert np.array_equal(bandit.pull(t, items)["reward"], fb["reward"])


def test_run_instance_is_unchanged_by_the_compiled_paths(monkeypatch):
    """The experiment of notebook 3 at a small size, every simulation on the numpy path and then
    on the compiled one: every score of every (policy, setting) is identical."""
    inst = INSTANCES[1]
    bias = {"low": (0.0, 0.8), "medium": (1.0, 0.1), "high": (2.5, 0.01)}
    args = (inst, 200, 4, 0, 0.5, [0.3], 10.0, [3.0], bias, "medium", 3000, 0.95, 0.1, 0, 0.5)
    backends = []

    def with_backend(backend):
        def run(*a, **k):
            r = simulate(*a, backend=backend, **k)
            backends.append(r.info["backend"])
            return r

        return run

    out = {}
    for backend in ("numpy", "compiled"):
        monkeypatch.setattr(X, "simulate", with_backend(backend))
        out[backend] = X.run_instance(*args)
    assert set(backends) == {"numpy", "compiled"}
    slow, fast = out["numpy"], out["compiled"]
    assert slow.runs.keys() == fast.runs.keys()
    for key, scores in slow.runs.items():
        for s, v in scores.items():
            assert same_arrays(v, fast.runs[key][s]), (key, s)
    assert slow.fallback == fast.fallback


def test_the_fucb_kernel_runs_the_true_delta_reference_of_its_own_chapter():
    """The fucb kernel's new policy kind, on the fucb chapter's Email Campaign bandit."""
    s = FR.email()
    dec = s.decompositions["D-UCB"]
    names = ("reward", "regret", "discrepancy")
    res = []
    for backend in ("numpy", "compiled"):
        policy = TrueDeltaFairUCB(dec, s.env.discrepancy, 0.3, tie_break="random")
        r = simulate(FR.email().env, policy, T, 3, n_runs=2, metrics=names, backend=backend)
        assert r.info["backend"] == backend
        res.append((r, policy.stats.counts.copy()))
    for n in names:
        assert same_arrays(res[0][0][n], res[1][0][n]), n
    assert same_arrays(res[0][1], res[1][1])
