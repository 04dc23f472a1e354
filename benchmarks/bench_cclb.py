"""CCLB chapter: the CCLB family and GLM-UCB, vectorised over runs against a loop over runs.

The per-round cost of the CCLB family is dominated by a fixed number of numpy calls (the fast
optimistic step), so stacking runs amortises it; GLM-UCB's cost grows with the data it refits.
"""

from causalbandits_lib.cclb.algorithms import CCLB, GLMUCB, OFULogPlus
from causalbandits_lib.cclb.model import FairLogisticBandit

from .harness import Case

T = 300
POLICIES = {
    "cclb.cclb": lambda: CCLB(T),
    "cclb.eps_cclb": lambda: CCLB(T, eps=0.14),
    "cclb.ofulog_plus": lambda: OFULogPlus(),
    "cclb.glm_ucb": lambda: GLMUCB(),
}

CASES = [
    Case(
        name=name,
        make_env=FairLogisticBandit,
        make_policy=make,
        T=T,
        runs=(1, 10, 40),
        metrics=("action", "regret", "violation"),
    )
    for name, make in POLICIES.items()
]
