"""The CCLB chapter: Chen, Tian and Quinn, "Causal Logistic Bandits with Counterfactual Fairness
Constraints" (ICML 2025).

Modules, named for what they do:

- :mod:`.model`: the extended standard fairness model as a generator of rounds, the environment and
  the evaluator's exact benchmarks (best feasible decision, LP over mixtures);
- :mod:`.confidence`: norm-constrained logistic MLE, the loss-based confidence set of Lee et al.
  (2024) and the optimistic step (exact with cvxpy; quadratic-model approximation for long runs);
- :mod:`.algorithms`: CCLB, epsilon-CCLB, OFULog+ and GLM-UCB as vectorised policies;
- :mod:`.theory`: the bounds of Theorems 1 and 2, Lemma 8 and Propositions 3-4 as functions;
- :mod:`.experiments`: the comparisons of the paper's Figures 2, 4 and 5.
"""
