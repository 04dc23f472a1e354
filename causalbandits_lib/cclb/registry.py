"""The chapter's (environment, policy) pairs, for the conformance test and ``make bench``.

Every pair runs on the default generator (:class:`~.generator.RoundGenerator`: ``theta*`` of the
notes, ``tau = 0.2``, 20 candidates). The four algorithms of the paper's Figure 2 are also the
benchmark cases (``T = 300``, 1, 10 and 40 runs; the per-round cost of the CCLB family is
dominated by a fixed number of numpy calls, so stacking runs amortises it, while GLM-UCB's cost
grows with the data it refits). Two entries use the configurations x replications layout of
:func:`~.experiments.run_configs`: the CCLB family (OFULog+ as CCLB with ``rho = 0``, CCLB,
epsilon-CCLB and CCLB with another ``tau``) in one simulation, and GLM-UCB on the same layout.

The CCLB family has a compiled kernel (:mod:`.kernels`) in the ``"sqp"`` and ``"quadratic"``
modes with either feature map, so those entries name the per-round values the kernel writes (the
environment's feedback and the policy's diagnostics) and the conformance check compares it with
the numpy path. Further entries cover the kernel's other branches: the linear feature map, the
replicated layout past the MLE's warm-up, and other anchors, iterations and extra solves.

GLM-UCB has its own kernel (:mod:`.glm_kernel`), so its entries name what that kernel writes
(:data:`GLM_METRICS`) and are compared the same way; one more runs the ``"fairer"`` tie rule on the
linear feature map, past the eager rounds of its MLE.
"""

from __future__ import annotations

from ..core.registry import BanditEntry
from .algorithms import CCLB, GLMUCB, OFULogPlus
from .environment import FairLogisticBandit
from .generator import RoundGenerator
from .glm_kernel import OUTPUTS as GLM_OUTPUTS
from .kernels import DIAGNOSTICS, FEEDBACK

__all__ = ["ENTRIES", "BENCH_T", "CCLB_METRICS", "OFULOG_METRICS", "GLM_METRICS"]

#: The per-round values compared for the CCLB family (all the numpy path produces, all the kernel writes).
CCLB_METRICS = FEEDBACK + DIAGNOSTICS
OFULOG_METRICS = FEEDBACK + ("optimistic_value",)
#: GLM-UCB's: the environment's feedback and the policy's ``ucb_index``.
GLM_METRICS = GLM_OUTPUTS

#: Horizon of the benchmark cases (and the horizon CCLB's dual step is tuned for).
BENCH_T = 300
BENCH_RUNS = (1, 10, 40)

#: Configurations of the replicated entry: (rho, eps, tau), as in ``experiments.paper_configs``.
FAMILY = ((0.0, 0.0, 0.2), (2 / 0.15, 0.0, 0.2), (2 / 0.15, 0.14, 0.2), (2 / 0.15, 0.0, 0.3))
FAMILY_T = 80
REPLICATIONS = 2


def _family_env() -> FairLogisticBandit:
    return FairLogisticBandit(tau=[tau for _, _, tau in FAMILY])


def _family_policy(**knobs) -> CCLB:
    return CCLB(
        [FAMILY_T] * len(FAMILY),
        tau=[tau for _, _, tau in FAMILY],
        rho=[rho for rho, _, _ in FAMILY],
        eps=[eps for _, eps, _ in FAMILY],
        **knobs,
    )


def _half_scaled_env() -> FairLogisticBandit:
    return FairLogisticBandit(RoundGenerator(feature_map="half_scaled"))


def _bench(name: str, make_policy, metrics) -> BanditEntry:
    return BanditEntry(
        name, FairLogisticBandit, make_policy, T=120, n_runs=3, metrics=metrics, bench_T=BENCH_T, bench_runs=BENCH_RUNS
    )


ENTRIES = [
    _bench("cclb.cclb", lambda: CCLB(BENCH_T), CCLB_METRICS),
    _bench("cclb.eps_cclb", lambda: CCLB(BENCH_T, eps=0.14), CCLB_METRICS),
    _bench("cclb.ofulog_plus", OFULogPlus, OFULOG_METRICS),
    _bench("cclb.glm_ucb", GLMUCB, GLM_METRICS),
    BanditEntry(
        "cclb.ofulog_plus_quadratic",
        FairLogisticBandit,
        lambda: OFULogPlus(optimistic="quadratic"),
        T=120,
        n_runs=3,
        metrics=OFULOG_METRICS,
    ),
    BanditEntry(
        "cclb.family_configs_x_replications",
        _family_env,
        _family_policy,
        T=FAMILY_T,
        n_runs=len(FAMILY) * REPLICATIONS,
        metrics=CCLB_METRICS,
        replications=REPLICATIONS,
    ),
    BanditEntry(
        "cclb.family_after_warmup",
        _family_env,
        lambda: _family_policy(mle_warmup=10, anchors=4, sqp_iterations=1, extra_solves=2, loss_bins=8),
        T=FAMILY_T,
        n_runs=len(FAMILY) * REPLICATIONS,
        metrics=CCLB_METRICS,
        replications=REPLICATIONS,
    ),
    # one run: with several, the numpy path's own runs differ in the last bits from one run at a
    # time on this pair (its support points couple the runs, see the module docstring of .kernels);
    # tests/cclb/test_kernels.py compares the kernel with numpy on several runs of it
    BanditEntry(
        "cclb.eps_cclb_half_scaled",
        _half_scaled_env,
        lambda: CCLB(BENCH_T, eps=0.14, feature_map="half_scaled", mle_warmup=40),
        T=120,
        n_runs=1,
        metrics=CCLB_METRICS,
    ),
    BanditEntry(
        "cclb.ofulog_plus_quadratic_half_scaled",
        _half_scaled_env,
        lambda: OFULogPlus(optimistic="quadratic", feature_map="half_scaled", mle_warmup=40),
        T=120,
        n_runs=3,
        metrics=OFULOG_METRICS,
    ),
    BanditEntry(
        "cclb.glm_ucb_replications", FairLogisticBandit, GLMUCB, T=80, n_runs=4, metrics=GLM_METRICS, replications=2
    ),
    BanditEntry(
        "cclb.glm_ucb_fairer_half_scaled",
        _half_scaled_env,
        lambda: GLMUCB(tie_rule="fairer", eager_rounds=30, lazy_every=3, newton_steps=2),
        T=120,
        n_runs=3,
        metrics=GLM_METRICS,
    ),
]
