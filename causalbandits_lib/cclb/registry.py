"""The chapter's (environment, policy) pairs, for the conformance test and ``make bench``.

Every pair runs on the default generator (:class:`~.generator.RoundGenerator`: ``theta*`` of the
notes, ``tau = 0.2``, 20 candidates). The four algorithms of the paper's Figure 2 are also the
benchmark cases (``T = 300``, 1, 10 and 40 runs; the per-round cost of the CCLB family is
dominated by a fixed number of numpy calls, so stacking runs amortises it, while GLM-UCB's cost
grows with the data it refits). Two entries use the configurations x replications layout of
:func:`~.experiments.run_configs`: the CCLB family (OFULog+ as CCLB with ``rho = 0``, CCLB,
epsilon-CCLB and CCLB with another ``tau``) in one simulation, and GLM-UCB on the same layout.
"""

from __future__ import annotations

from ..core.registry import BanditEntry
from .algorithms import CCLB, GLMUCB, OFULogPlus
from .environment import FairLogisticBandit

__all__ = ["ENTRIES", "BENCH_T"]

#: Horizon of the benchmark cases (and the horizon CCLB's dual step is tuned for).
BENCH_T = 300
BENCH_RUNS = (1, 10, 40)

#: Configurations of the replicated entry: (rho, eps, tau), as in ``experiments.paper_configs``.
FAMILY = ((0.0, 0.0, 0.2), (2 / 0.15, 0.0, 0.2), (2 / 0.15, 0.14, 0.2), (2 / 0.15, 0.0, 0.3))
FAMILY_T = 80
REPLICATIONS = 2


def _family_env() -> FairLogisticBandit:
    return FairLogisticBandit(tau=[tau for _, _, tau in FAMILY])


def _family_policy() -> CCLB:
    return CCLB(
        [FAMILY_T] * len(FAMILY),
        tau=[tau for _, _, tau in FAMILY],
        rho=[rho for rho, _, _ in FAMILY],
        eps=[eps for _, eps, _ in FAMILY],
    )


def _bench(name: str, make_policy) -> BanditEntry:
    return BanditEntry(
        name, FairLogisticBandit, make_policy, T=120, n_runs=3, metrics=None, bench_T=BENCH_T, bench_runs=BENCH_RUNS
    )


ENTRIES = [
    _bench("cclb.cclb", lambda: CCLB(BENCH_T)),
    _bench("cclb.eps_cclb", lambda: CCLB(BENCH_T, eps=0.14)),
    _bench("cclb.ofulog_plus", OFULogPlus),
    _bench("cclb.glm_ucb", GLMUCB),
    BanditEntry(
        "cclb.ofulog_plus_quadratic",
        FairLogisticBandit,
        lambda: OFULogPlus(optimistic="quadratic"),
        T=120,
        n_runs=3,
        metrics=None,
    ),
    BanditEntry(
        "cclb.family_configs_x_replications",
        _family_env,
        _family_policy,
        T=FAMILY_T,
        n_runs=len(FAMILY) * REPLICATIONS,
        metrics=None,
        replications=REPLICATIONS,
    ),
    BanditEntry("cclb.glm_ucb_replications", FairLogisticBandit, GLMUCB, T=80, n_runs=4, metrics=None, replications=2),
]
