"""pcb: LinUCB-PCB on the contextual bandit of Table 2's model, and UCB-PCB on its arm means.

Prior bounds are the population values of the sound conditioning bound (no offline sampling in
the timed loop); the cases time the vectorised policies against a loop over runs and check that
the per-round regrets and rewards are identical.
"""

import numpy as np

from causalbandits_lib.core.environments import BernoulliBandit, ContextualBernoulliBandit
from causalbandits_lib.pcb import bandits, estimators, model

from .harness import Case

_M = model.table2_model()
_TRUTH = model.conditional_causal_effects(_M)  # (arm, context)
_PC = model.context_probabilities(_M)
_LO, _HI = estimators.conditioning_bounds(model.selected_observed_distribution(_M) * 1e9)
_FEATURES = bandits.arm_context_features()
_ARM_MEANS = model.interventional_arm_means(_M)
_MLO, _MHI = estimators.marginal_bounds(_LO, _HI, _PC)

CASES = [
    Case(
        name="pcb.linucb_pcb_contextual",
        make_env=lambda: ContextualBernoulliBandit(_PC, _TRUTH.T),
        make_policy=lambda: bandits.LinUCB(_FEATURES, lower=_LO.T, upper=_HI.T, clip="both"),
        T=2000,
        notes="disjoint LinUCB, d=5, 4 arms, Sherman-Morrison with ordered sums",
    ),
    Case(
        name="pcb.ucb_pcb",
        make_env=lambda: BernoulliBandit(_ARM_MEANS),
        make_policy=lambda: bandits.ClippedUCB(4, 2000, lower=_MLO, upper=_MHI),
        T=2000,
    ),
]

assert np.all(_LO <= _TRUTH) and np.all(_TRUTH <= _HI)
