"""fucb chapter: D-UCB, F-UCB, C-UCB, UCB and Fair-LinUCB on the Email Campaign model, the
vectorised runner against a loop over runs (identical results asserted by the harness)."""

from functools import lru_cache

from causalbandits_lib.fucb.email_campaign import SENSITIVE
from causalbandits_lib.fucb.experiments import email_setup, make_policy
from causalbandits_lib.fucb.fair_linucb import FairLinUCB, linear_features
from causalbandits_lib.fucb.policies import Audited, FairnessAuditor

from .harness import Case


@lru_cache(maxsize=1)
def _setup():
    return email_setup()


def _env():
    return _setup().env


def _policy(name, **kw):
    s = _setup()
    dec = s.decompositions["D-UCB" if name.startswith("F-UCB") else name]
    return lambda: make_policy(name, dec, s.estimator, 0.3 if name.startswith("F-UCB") else None, **kw)


def _audited_fucb():
    s = _setup()
    return Audited(make_policy("F-UCB", s.decompositions["D-UCB"], s.estimator, 0.3), FairnessAuditor(s.estimator))


def _fair_linucb():
    env = _env()
    return FairLinUCB(
        linear_features(env.context_codes, env.arm_codes), env.context_codes[:, env.context_nodes.index(SENSITIVE)]
    )


CASES = [
    Case(name="fucb.ucb_email", make_env=_env, make_policy=_policy("UCB"), T=1000),
    Case(name="fucb.cucb_email", make_env=_env, make_policy=_policy("C-UCB"), T=1000),
    Case(name="fucb.ducb_email", make_env=_env, make_policy=_policy("D-UCB"), T=1000),
    Case(name="fucb.fucb_email", make_env=_env, make_policy=_policy("F-UCB"), T=1000),
    Case(name="fucb.fucb_audited_email", make_env=_env, make_policy=_audited_fucb, T=1000),
    Case(name="fucb.fair_linucb_email", make_env=_env, make_policy=_fair_linucb, T=1000),
]
