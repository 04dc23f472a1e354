"""The primer's (environment, policy) pairs, for the conformance test and ``make bench``."""

from __future__ import annotations

from ..core.environments import BernoulliBandit, ContextualBernoulliBandit
from ..core.policies import UCB1
from ..core.registry import BanditEntry
from .model import contextual_model

MEANS = [0.7, 0.6, 0.5, 0.4]


def _contextual_env() -> ContextualBernoulliBandit:
    model = contextual_model()
    p_click = model.mechanisms["Y"].table[..., 1]
    return ContextualBernoulliBandit(model.mechanisms["C"].table, p_click)


ENTRIES = [
    BanditEntry(
        "primer.ucb1_bernoulli",
        lambda: BernoulliBandit(MEANS),
        lambda: UCB1(len(MEANS)),
        bench_T=2000,
        target_ratio=30.0,
    ),
    BanditEntry("primer.ucb1_context_blind", _contextual_env, lambda: UCB1(3)),
    BanditEntry("primer.ucb1_per_context", _contextual_env, lambda: UCB1(3, n_contexts=3)),
]
