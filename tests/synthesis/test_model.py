"""The recommender's exact quantities against pgmpy's exact inference (not Monte Carlo)."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core.scm import SCMError
from causalbandits_lib.synthesis import model as M

INSTANCES = M.instances(np.random.SeedSequence(0), 3)


@pytest.mark.parametrize("inst", INSTANCES, ids=lambda i: i.name)
def test_means_and_discrepancies_match_pgmpy(inst):
    scm = M.build_scm(inst, lam=1.0, s0=0.1)
    assert np.allclose(M.pgmpy_means(scm), inst.means, rtol=0, atol=1e-12)
    cf = {a: M.pgmpy_counterfactual_means(scm, a) for a in (0, 1)}
    assert np.allclose(np.abs(cf[1] - cf[0]), inst.discrepancy, rtol=0, atol=1e-12)
    # the factual world of the counterfactual query is the interventional mean itself
    for c, (a, _) in enumerate(M.CONTEXTS):
        assert np.allclose(cf[a][c], inst.means[c], atol=1e-12)


@pytest.mark.parametrize("lam, s0", [(0.0, 0.8), (1.0, 0.1), (2.5, 0.01)])
def test_log_cell_probabilities_match_pgmpy(lam, s0):
    inst = INSTANCES[0]
    scm = M.build_scm(inst, lam=lam, s0=s0)
    q = scm.query(["I", "A", "U", "E", "Y", "S"])
    ref = np.zeros((M.N_ITEMS, M.N_CONTEXTS, 2, 2))
    for c, (a, u) in enumerate(M.CONTEXTS):
        ref[:, c] = q[:, a, u, :, :, 1]
    assert np.allclose(M.log_cell_probabilities(inst, lam, s0), ref, rtol=0, atol=1e-14)


def test_bias_does_not_change_the_online_problem():
    inst = INSTANCES[1]
    ref = M.pgmpy_means(M.build_scm(inst, lam=0.0, s0=0.8))
    assert np.allclose(M.pgmpy_means(M.build_scm(inst, lam=2.5, s0=0.01)), ref, atol=1e-12)


def test_the_log_is_biased_by_selection_and_confounding():
    """P(Y=1 | k, o, S=1) differs from μ_k(o) under bias: the log alone would mislead."""
    inst = INSTANCES[0]
    p = M.log_cell_probabilities(inst, 2.5, 0.01)
    naive = p[..., 1].sum(axis=-1) / p.sum(axis=(-1, -2))
    assert np.abs(naive.T - inst.means).max() > 0.02


def test_discrepancies_differ_by_item_and_threshold_binds_for_some():
    for inst in INSTANCES:
        tau = inst.tau(0.5)
        assert np.ptp(inst.discrepancy.max(axis=0)) > 0.05
        assert 0 < (inst.discrepancy > tau).mean() < 1


def test_fair_optima():
    inst = INSTANCES[0]
    tau = inst.tau(0.5)
    k = M.per_decision_optimum(inst, tau)
    assert np.all(inst.discrepancy[np.arange(4), k] <= tau) or not np.all((inst.discrepancy <= tau).any(axis=1))
    value, pi = M.average_constraint_optimum(inst, tau)
    assert np.allclose(pi.sum(axis=1), 1.0)
    assert inst.context_probs @ (pi * (inst.discrepancy - tau)).sum(axis=1) <= 1e-9
    v = M.optimum_values(inst, tau, 10.0)
    assert v["unconstrained"] >= max(x for k2, x in v.items() if k2 != "unconstrained" and np.isfinite(x)) - 1e-12
    assert np.isclose(M.exposure_optimum(inst, 10.0).sum(), 1.0)


def test_instances_are_reproducible_and_prefix_stable():
    a = M.instances(np.random.SeedSequence(5), 2)
    b = M.instances(np.random.SeedSequence(5), 4)
    assert np.array_equal(a[1].w_a, b[1].w_a)


def test_instance_validates_shapes():
    with pytest.raises(ValueError, match="w_a"):
        M.Instance(b=np.zeros(4), w_u=np.zeros(4), w_a=np.zeros(3), e=np.zeros(4), logging=np.zeros((4, 3)))
    with pytest.raises(SCMError):
        M.build_scm(INSTANCES[0], s0=1.5)


def test_offline_counts_per_run_streams():
    inst = INSTANCES[0]
    alone = M.offline_counts(inst, 1.0, 0.1, 2000, 3, [2])
    together = M.offline_counts(inst, 1.0, 0.1, 2000, 3, [0, 1, 2])
    assert np.array_equal(alone[0], together[2])
    assert together.shape == (3,) + (2,) * 6
    assert 0 < together.sum() / (3 * 2000) < 1


def test_environment_feedback_is_exact():
    from causalbandits_lib.core.streams import RunStreams

    inst = INSTANCES[2]
    env = M.RecommenderEnv(inst, inst.tau(0.5))
    env.reset(RunStreams(0, range(5)).child("env/"))
    c = env.observe(0)
    a = np.array([0, 1, 2, 3, 0])
    fb = env.pull(0, a)
    assert np.allclose(fb["regret"], inst.means[c].max(axis=1) - inst.means[c, a])
    assert np.allclose(fb["delta"], inst.discrepancy[c, a])
    assert np.array_equal(fb["cf_unfair"], (inst.discrepancy[c, a] > env.tau).astype(float))
