"""The FairX (environment, policy) pairs, for the conformance test and ``make bench``.

Every pair the notebooks simulate, and every pair a compiled kernel (:mod:`.kernels`,
:mod:`.linear_kernels`) implements, is registered on a small instance, with two configurations per
policy where the policy takes per-configuration values (``G = 2``: the policies step their
configurations inside each run, actions ``(R, G)``), plus the benchmark cases (yeast's label
frequencies as Bernoulli arms, fresh Gaussian contexts). :data:`MERITS` gives the merit function
each entry's regrets are measured with (the test of the running regret sums uses it).
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..core.registry import BanditEntry
from . import algorithms as alg
from .data import YEAST_LABEL_COUNTS, YEAST_N
from .merit import AffineMerit, ExpMerit
from .model import ArmsBandit, ContextTableBandit, GaussianContextBandit, MultiLabelBandit, PriorArmsBandit
from .theory import lipschitz_lower_bound_pair, min_merit_lower_bound_pair
from .yahoo import ReplayEnvironment, YahooLikeSimulator

__all__ = ["ENTRIES", "MERITS", "MERIT", "K", "DIM", "replay_log"]

#: Arms and context dimension of the small instances.
K, DIM = 5, 4
MEANS = np.array([0.3, 0.4, 0.45, 0.7, 0.72])
LABELS = (np.random.default_rng(0).random((300, K)) < MEANS).astype(float)
THETA = np.array([0.5, -0.3, 0.2, 0.4])
CTX = np.random.default_rng(1).normal(size=(50, K, DIM))
CTX /= np.linalg.norm(CTX, axis=-1, keepdims=True)
#: The merit of the small instances: two configurations, c = 2 and c = 4.
MERIT = ExpMerit([2.0, 4.0])
#: Per-round values compared by the conformance test.
KEEP = ("policy", "arm_means", "reward")
YEAST_MEANS = YEAST_LABEL_COUNTS / YEAST_N


@cache
def replay_log():
    """A small uniformly logged click log (30 articles, pools of 5, two days of 2,000 events)."""
    sim = YahooLikeSimulator(seed=0, n_articles=30, pool_size=5, n_days=2)
    return sim.log(2000, seed=1)


def _replay(mode: str) -> ReplayEnvironment:
    log = replay_log()
    return ReplayEnvironment(log, log.days(1, 1), mode)


#: Multi-armed policies: factory of ``n_arms``.
MAB_POLICIES = {
    "fairx_ucb": lambda k: alg.FairXUCB(MERIT, [0.1, 0.05], k),
    "fairx_ucb_exact": lambda k: alg.FairXUCB(MERIT, [0.1, 0.05], k, solver="exact"),
    # wide boxes (fairx/02's theory width is about 6): the exact step's vertex changes from round to round
    "fairx_ucb_exact_wide": lambda k: alg.FairXUCB(MERIT, [6.0, 1.0], k, solver="exact"),
    "fairx_ts": lambda k: alg.FairXTS(MERIT, 1.0, [0.5, 1.0], k),
    "fairx_eg": lambda k: alg.FairXEG(MERIT, [0.0, 0.1], k),
    "ucb": lambda k: alg.UCB([0.1, 0.05], k),
    "ts": lambda k: alg.ThompsonSampling([1.0, 0.1], 0.5, k),
    "eg": lambda k: alg.EpsilonGreedy([0.0, 0.1], k),
}
#: Linear policies: factory of ``(dim, n_arms)``.
LINEAR_POLICIES = {
    "fairx_linucb": lambda d, k: alg.FairXLinUCB(MERIT, [1.0, 0.1], 1.0, d, k),
    "fairx_lints": lambda d, k: alg.FairXLinTS(MERIT, 1.0, [0.5, 1.0], d, k),
    "fairx_lineg": lambda d, k: alg.FairXLinEG(MERIT, [0.0, 0.1], 1.0, d, k),
    "linucb": lambda d, k: alg.LinUCB([1.0, 0.1], 1.0, d, k),
    "lints": lambda d, k: alg.LinTS(1.0, [0.5, 1.0], d, k),
    "lineg": lambda d, k: alg.LinEG([0.0, 0.1], 1.0, d, k),
}
FAIR_MAB = ("fairx_ucb", "fairx_ts", "fairx_eg")
TUNED_MAB = FAIR_MAB + ("ucb", "ts")
TUNED_LINEAR = ("fairx_linucb", "fairx_lints", "fairx_lineg", "linucb", "lints")
#: The linear policies with a compiled kernel: the tuned ones and the linear ε-greedy baseline.
ALL_LINEAR = TUNED_LINEAR + ("lineg",)

# (environment name, factory, n_arms, policies): the pairs of the notebooks.
_MAB_ENVIRONMENTS = [
    # fairx/02: yeast's label frequencies as Bernoulli arms
    (
        "yeast_means",
        lambda: ArmsBandit(YEAST_MEANS),
        14,
        ("fairx_ucb", "fairx_ucb_exact", "fairx_ucb_exact_wide", "fairx_ts", "fairx_eg", "ucb", "ts"),
    ),
    # fairx/02: the Bayesian check (arm means drawn per run)
    ("prior_arms", lambda: PriorArmsBandit(K), K, ("fairx_ts",)),
    # fairx/04 and fairx/05: a multi-label data set as a bandit
    ("multilabel", lambda: MultiLabelBandit(LABELS), K, TUNED_MAB + ("eg", "fairx_ucb_exact_wide")),
    # fairx/06: replay of a click log over changing pools
    ("replay", lambda: _replay("mab"), 30, TUNED_MAB + ("eg",)),
]
_LINEAR_ENVIRONMENTS = [
    # fairx/03: fresh contexts, a parameter drawn per run
    ("gaussian_contexts", lambda: GaussianContextBandit(None, K, 1.0, dim=DIM, prior_sd=0.5), DIM, K, ALL_LINEAR),
    # fresh contexts, a fixed parameter (the linear ε-greedy baseline)
    ("fixed_theta_contexts", lambda: GaussianContextBandit(THETA, K, 0.5), DIM, K, ("lineg",)),
    # fairx/05: per-example contexts with label rewards (misspecified) and with Gaussian noise
    (
        "context_table_labels",
        lambda: ContextTableBandit(CTX, CTX @ THETA, (CTX @ THETA > 0.2).astype(float)),
        DIM,
        K,
        ALL_LINEAR,
    ),
    ("context_table_noise", lambda: ContextTableBandit(CTX, CTX @ THETA, None, 0.1), DIM, K, ALL_LINEAR),
    # fairx/06: replay with outer-product contexts
    ("replay_linear", lambda: _replay("linear"), 36, 5, ALL_LINEAR),
]


def _entries():
    entries, merits = [], {}

    def add(entry, merit):
        entries.append(entry)
        merits[entry.name] = merit

    for env_name, make_env, k, names in _MAB_ENVIRONMENTS:
        metrics = KEEP + (("accepted",) if env_name == "replay" else ())
        for name in names:
            make = MAB_POLICIES[name]
            add(
                BanditEntry(f"fairx.{env_name}.{name}", make_env, lambda make=make, k=k: make(k), metrics=metrics),
                MERIT,
            )
    for env_name, make_env, d, k, names in _LINEAR_ENVIRONMENTS:
        metrics = KEEP + (("accepted",) if env_name == "replay_linear" else ())
        for name in names:
            make = LINEAR_POLICIES[name]
            add(
                BanditEntry(
                    f"fairx.{env_name}.{name}", make_env, lambda make=make, d=d, k=k: make(d, k), metrics=metrics
                ),
                MERIT,
            )
    # fairx/01: the lower-bound instances (two Gaussian arms), with their own merits, for T = 120
    lower = {"thm314": min_merit_lower_bound_pair(120), "thm315": lipschitz_lower_bound_pair(120)}
    learners = {
        "fairx_ts": lambda merit: alg.FairXTS(merit, 1.0, np.sqrt(0.5), 2),
        "fairx_eg": lambda merit: alg.FairXEG(merit, 0.0, 2),
        "fairx_ucb": lambda merit: alg.FairXUCB(merit, 1.0, 2),
    }
    for key, pair in lower.items():
        for i, means in enumerate(pair.means):
            for name, make in learners.items():
                add(
                    BanditEntry(
                        f"fairx.lower_bound_{key}_instance{i + 1}.{name}",
                        lambda means=means, sd=pair.sd: ArmsBandit(means, "gaussian", sd),
                        lambda make=make, merit=pair.merit: make(merit),
                        metrics=KEEP,
                    ),
                    pair.merit,
                )
    # the identity merit shifted by 1 without a floor (AffineMerit's other branch), on Bernoulli arms
    # (one configuration each, as the merit has one)
    affine = AffineMerit(1.0)
    affine_learners = {
        "fairx_ucb": lambda: alg.FairXUCB(affine, 0.3, K),
        "fairx_ts": lambda: alg.FairXTS(affine, 0.2, 0.5, K),
        "fairx_eg": lambda: alg.FairXEG(affine, 0.1, K),
    }
    for name, make in affine_learners.items():
        add(BanditEntry(f"fairx.affine_merit_arms.{name}", lambda: ArmsBandit(MEANS), make, metrics=KEEP), affine)
    # the benchmark cases (formerly benchmarks/bench_fairx.py), same horizons, runs, seed and targets
    bench_merit = ExpMerit(4.0)
    bench = [
        ("fairx.fairx_ts_yeast_means", lambda: alg.FairXTS(bench_merit, 1.0, 0.5, 14), 2000, 5.0),
        ("fairx.fairx_ucb_pgd_yeast_means", lambda: alg.FairXUCB(bench_merit, 0.1, 14), 1000, None),
        ("fairx.ucb_yeast_means", lambda: alg.UCB(0.1, 14), 2000, None),
    ]
    for name, make_policy, bench_T, target in bench:
        add(
            BanditEntry(
                name,
                lambda: ArmsBandit(YEAST_MEANS),
                make_policy,
                metrics=("reward", "policy"),
                bench_T=bench_T,
                target_ratio=target,
                seed=0,
            ),
            bench_merit,
        )
    theta10 = np.linspace(-0.5, 0.5, 10)
    add(
        BanditEntry(
            "fairx.fairx_lints_gaussian_contexts",
            lambda: GaussianContextBandit(theta10, 10, 1.0),
            lambda: alg.FairXLinTS(ExpMerit(3.0), 1.0, 1.0, 10, 10),
            metrics=("reward", "policy"),
            bench_T=500,
            seed=0,
        ),
        ExpMerit(3.0),
    )
    return entries, merits


ENTRIES, MERITS = _entries()
