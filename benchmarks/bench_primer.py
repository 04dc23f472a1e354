"""Primer: UCB1 on a 4-armed Bernoulli bandit (the foundation's target: >= 30x at 100 runs)."""

from causalbandits_lib.core.environments import BernoulliBandit
from causalbandits_lib.core.policies import UCB1

from .harness import Case

MEANS = [0.7, 0.6, 0.5, 0.4]

CASES = [
    Case(
        name="primer.ucb1_bernoulli",
        make_env=lambda: BernoulliBandit(MEANS),
        make_policy=lambda: UCB1(len(MEANS)),
        T=2000,
        target_ratio=30.0,
    )
]
