"""The fucb chapter's (environment, policy) pairs, for the conformance test and ``make bench``.

- ``fucb.<algorithm>_email``: UCB, C-UCB, D-UCB, F-UCB (τ = 0.3), F-UCB with the auditor riding
  along, and the Fair-LinUCB reconstruction on the Email Campaign bandit, as notebook ``fucb/02``
  runs them (the six cases of the former ``benchmarks/bench_fucb.py``: ``bench_T = 1000``, seed 0);
- ``fucb.email_audited.*``: every algorithm of notebook ``fucb/04`` with the auditor (UCB, C-UCB,
  D-UCB, the three F-UCB variants) and two more F-UCB settings (the unconstrained fallback with
  random ties; the safe-arm fallback with other radius scales);
- ``fucb.adult_audited.*``: every algorithm of notebook ``fucb/05`` on a small Adult-Video bandit
  (D-UCB, Fair-LinUCB, F-UCB with the bounds of Theorem 2 and with Eq. 9, each with both radii),
  audited with the bounds. Its users are a synthetic stand-in drawn from
  :data:`~causalbandits_lib.fucb.instances.adult_video.STAND_IN_CELLS` and its user graph is the
  one PC learns on the real data (fixed here, so no structure search and no data files enter);
- ``fucb.toy_audited.*``: F-UCB with the bounded estimator and Fair-LinUCB with random ties on the
  toy of :mod:`~causalbandits_lib.fucb.instances.toy`.

Every entry's policy has a compiled kernel for its environment (:mod:`.kernels`), so the
conformance check also compares the kernel with the numpy path on every value an entry keeps.

The instances are built on first use, so importing the registry is cheap.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..core.registry import BanditEntry
from .algorithms import BoundedDiscrepancy, FairLinUCB, FairUCB, linear_features
from .auditing import Audited, FairnessAuditor
from .experiments import FUCB_VARIANTS, AdultSetup, EmailSetup, adult_setup_from_users, email_setup, make_policy
from .instances.adult_video import USER_NODES, VIDEO_NODES, synthetic_adult_users
from .instances.email_campaign import ARM_NODES, CONTEXT_NODES, INTERMEDIATE_NODES, SENSITIVE
from .instances.toy import fair_toy

__all__ = ["ENTRIES", "ADULT_USER_GRAPH", "audited_values", "email", "adult", "toy"]

#: The user graph PC learns on the real Adult rows (the book's and the paper-scale records).
ADULT_USER_GRAPH = (("age", "income"), ("race", "income"), ("sex", "age"), ("sex", "income"), ("sex", "race"))
#: Users of the small Adult-Video bandit (half offline, half online: 100 users, fewer than ``T``,
#: so the user order wraps around).
ADULT_USERS = 200
#: Per-round values of an audited entry: the environment's feedback (with the state code of every
#: node of the model), the audit, and F-UCB's own diagnostics. Every value is named, so the compiled
#: kernel (which records blocks of named values) is compared with the numpy path on all of them;
#: ``tests/fucb/test_registry.py`` checks that the list is every value a simulation produces.
FEEDBACK = ("reward", "regret", "discrepancy")
AUDIT = ("audit_delta_hat", "audit_radius_paper", "audit_radius_diff")
FAIR_DIAGNOSTICS = ("fallback", "fair_set_size", "own_ucb_delta")
EMAIL_NODES = (*CONTEXT_NODES, *ARM_NODES, *INTERMEDIATE_NODES)
ADULT_NODES = (*USER_NODES, *VIDEO_NODES)
TOY_NODES = ("S", "A", "Z")


def audited_values(nodes: tuple[str, ...], fair: bool) -> tuple[str, ...]:
    """Every per-round value of an audited simulation on a bandit with ``nodes``, F-UCB's
    diagnostics included when ``fair``."""
    return FEEDBACK + tuple(nodes) + AUDIT + (FAIR_DIAGNOSTICS if fair else ())


@cache
def email() -> EmailSetup:
    """The Email Campaign setup of the notebooks (defaults: binary ``I3``, σ = 0.1)."""
    return email_setup()


@cache
def adult() -> AdultSetup:
    """A small Adult-Video setup on stand-in users (see the module docstring)."""
    users = synthetic_adult_users(4 * ADULT_USERS, np.random.default_rng(0))
    return adult_setup_from_users(
        users, {"stand_in": True}, np.random.default_rng(1), n_users=ADULT_USERS, user_graph=ADULT_USER_GRAPH
    )


@cache
def toy():
    """The toy bandit and its decomposition over ``W = {Z}``."""
    return fair_toy()


def _email_env():
    return email().env


def _email_policy(name: str, audited: bool = False, tau: float = 0.3, **kw):
    def make():
        s = email()
        fair = name in FUCB_VARIANTS
        policy = make_policy(
            name, s.decompositions["D-UCB" if fair else name], s.estimator, tau if fair else None, **kw
        )
        return Audited(policy, FairnessAuditor(s.estimator)) if audited else policy

    return make


def _email_fair_linucb():
    env = email().env
    return FairLinUCB(
        linear_features(env.context_codes, env.arm_codes), env.context_codes[:, env.context_nodes.index(SENSITIVE)]
    )


def _adult_env():
    return adult().env


def _adult_audited(make):
    def wrapped():
        s = adult()
        return Audited(make(s), FairnessAuditor(s.estimator("bounds")))

    return wrapped


def _toy_env():
    return toy()[0]


def _toy_audited(fair_linucb: bool):
    def make():
        env, dec = toy()
        est = BoundedDiscrepancy(dec, env.varied_contexts("S", []))
        if fair_linucb:
            policy = FairLinUCB(
                linear_features(env.context_codes, env.arm_codes), env.context_codes[:, 0], tie_break="random"
            )
        else:
            policy = FairUCB(dec, est, tau=0.3, fair_radius="diff")
        return Audited(policy, FairnessAuditor(est))

    return make


def _key(name: str) -> str:
    return name.lower().replace("-", "_")


ENTRIES = [
    # the six cases of the former benchmarks/bench_fucb.py (same horizon, runs and seed)
    *(
        BanditEntry(f"fucb.{key}_email", _email_env, _email_policy(name), bench_T=1000, seed=0)
        for key, name in (("ucb", "UCB"), ("cucb", "C-UCB"), ("ducb", "D-UCB"), ("fucb", "F-UCB"))
    ),
    BanditEntry("fucb.fucb_audited_email", _email_env, _email_policy("F-UCB", audited=True), bench_T=1000, seed=0),
    BanditEntry("fucb.fair_linucb_email", _email_env, _email_fair_linucb, bench_T=1000, seed=0),
    # notebook 4: every algorithm with the auditor, every per-round value compared
    *(
        BanditEntry(
            f"fucb.email_audited.{_key(name)}",
            _email_env,
            _email_policy(name, audited=True),
            T=150,
            n_runs=3,
            metrics=audited_values(EMAIL_NODES, name in FUCB_VARIANTS),
            seed=7,
        )
        for name in ("UCB", "C-UCB", "D-UCB", *FUCB_VARIANTS)
    ),
    BanditEntry(
        "fucb.email_audited.f_ucb_unconstrained_random_ties",
        _email_env,
        _email_policy("F-UCB", audited=True, fallback="unconstrained", tie_break="random"),
        T=150,
        n_runs=3,
        metrics=audited_values(EMAIL_NODES, True),
        seed=3,
    ),
    BanditEntry(
        "fucb.email_audited.f_ucb_diff_safe_arm",
        _email_env,
        _email_policy("F-UCB-diff", audited=True, fallback="safe_arm", safe_arm=5, alpha_r=2.0, alpha_c=0.5),
        T=150,
        n_runs=3,
        metrics=audited_values(EMAIL_NODES, True),
        seed=3,
    ),
    # notebook 5 on a small stand-in
    BanditEntry(
        "fucb.adult_audited.d_ucb",
        _adult_env,
        _adult_audited(lambda s: make_policy("D-UCB", s.decomposition)),
        metrics=audited_values(ADULT_NODES, False),
    ),
    BanditEntry(
        "fucb.adult_audited.fair_linucb",
        _adult_env,
        _adult_audited(lambda s: FairLinUCB(s.features, s.groups)),
        metrics=audited_values(ADULT_NODES, False),
    ),
    *(
        BanditEntry(
            f"fucb.adult_audited.f_ucb_{which}_{radius}",
            _adult_env,
            _adult_audited(
                lambda s, which=which, radius=radius: make_policy(
                    "F-UCB", s.decomposition, s.estimator(which), 0.3, fair_radius=radius, label=f"F-UCB-{which}"
                )
            ),
            metrics=audited_values(ADULT_NODES, True),
        )
        for which in ("bounds", "identified")
        for radius in ("paper", "diff")
    ),
    # the toy: the bounded estimator (point masses not available: W = {Z}) and random ties
    BanditEntry(
        "fucb.toy_audited.f_ucb_bounded_diff",
        _toy_env,
        _toy_audited(False),
        T=200,
        metrics=audited_values(TOY_NODES, True),
        seed=5,
    ),
    BanditEntry(
        "fucb.toy_audited.fair_linucb_random_ties",
        _toy_env,
        _toy_audited(True),
        T=200,
        metrics=audited_values(TOY_NODES, False),
        seed=5,
    ),
]
