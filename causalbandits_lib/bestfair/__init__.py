"""Identifying the best fair intervention (Gao and Feng, arXiv:2111.04272, 2021).

Fixed-budget best-arm identification among *soft interventions* on one node ``V`` of a known
discrete causal model, under a counterfactual fairness constraint on the outcome ``Y`` with respect
to a binary root ``S``. Modules, named for what they do:

- :mod:`.model`: the arms, the sample "cells" the algorithms observe and the exact ground truth
  (means, fairness gaps, the divergence matrices) of a problem;
- :mod:`.divergences`: the divergences ``M_ij`` and ``D_ij`` (log-sum-exp);
- :mod:`.observations`: a problem from a discrete causal model with the paper's roles, by exact
  inference;
- :mod:`.instances`: the synthetic instance generator of §5 and Appendix C
  (:mod:`.instances.synthetic`) and HEPAR-II of §6 (:mod:`.instances.hepar2`);
- :mod:`.estimators`: the clipped, divergence-weighted importance-sampling estimators (Eq. 3/4);
- :mod:`.allocation`: the phase schedule and the max-min budget allocation LP (Alg. 3/6);
- :mod:`.algorithms`: CSR-V1, CSR-V2 (Alg. 1/2) and the two-stage baselines (Alg. 4/5), configured
  by ``AlgorithmConfig``, vectorised over independent runs, with a loop-over-runs reference; an
  ``Identification`` is one of them as a core ``Identifier``;
- :mod:`.theory`: the error-probability bounds (Theorems 1 and 2) and the lemma checks;
- :mod:`.experiments`: the budget curves of Figures 3, 5 and 6 (one parallel task per algorithm and
  budget) and replicated samples for the Monte Carlo checks;
- :mod:`.figures`: the chapter's figures (they draw; they compute nothing a record keeps);
- :mod:`.registry`: the four algorithms as identifiers, for the conformance test and the benchmark.
"""
