"""Identifying the best fair intervention (Gao and Feng, arXiv:2111.04272, 2021).

Fixed-budget best-arm identification among *soft interventions* on one node ``V`` of a known
discrete causal model, under a counterfactual fairness constraint on the outcome ``Y`` with respect
to a binary root ``S``. The chapter's library is split by what each part does:

- :mod:`.problem`: the arms, the sample "cells" the algorithms observe, exact ground truth
  (means, fairness gaps) and the divergences ``M_ij`` and ``D_ij`` (log-sum-exp);
- :mod:`.estimators`: the clipped, divergence-weighted importance-sampling estimators (Eq. 3/4);
- :mod:`.allocation`: the phase schedule and the max-min budget allocation LP (Alg. 3/6);
- :mod:`.algorithms`: CSR-V1, CSR-V2 (Alg. 1/2) and the two-stage baselines (Alg. 4/5),
  vectorised over independent runs, with a loop-over-runs reference;
- :mod:`.theory`: the error-probability bounds (Theorems 1 and 2) and the lemma checks;
- :mod:`.instances`: the synthetic instance generator (§5) and HEPAR-II (§6).
"""

from .algorithms import ALGORITHMS, AlgorithmConfig, IdentificationResult, identify, identify_loop
from .allocation import AllocationLP, linprog_allocation, n_phases, phase_budgets, round_allocation
from .estimators import WeightedEstimator, clip_multiplier
from .problem import POOLS, FairArmsProblem, fairness_divergence, outcome_divergence, problem_from_scm

__all__ = [
    "ALGORITHMS",
    "AlgorithmConfig",
    "IdentificationResult",
    "identify",
    "identify_loop",
    "AllocationLP",
    "linprog_allocation",
    "n_phases",
    "phase_budgets",
    "round_allocation",
    "WeightedEstimator",
    "clip_multiplier",
    "POOLS",
    "FairArmsProblem",
    "fairness_divergence",
    "outcome_divergence",
    "problem_from_scm",
]
