"""The CCLB chapter: Chen, Tian and Quinn, "Causal Logistic Bandits with Counterfactual Fairness
Constraints" (ICML 2025).

Modules, named for what they do:

- :mod:`.model`: the extended standard fairness model (graph, context SCM, the parameter ``theta*``);
- :mod:`.features`: the feature maps ``f`` and the logistic outcome model ``g(f(Z)^T theta)``;
- :mod:`.generator`: the round generator (rejection sampling of candidate sets) and its check that
  the constraint binds;
- :mod:`.oracle`: the evaluator's exact per-round benchmarks (best feasible decision, LP over
  mixtures);
- :mod:`.environment`: the constrained logistic bandit as a runner environment;
- :mod:`.confidence`: norm-constrained logistic MLE, the loss-based confidence set of Lee et al.
  (2024) and the exact optimistic step (cvxpy);
- :mod:`.history`: what a learner keeps of its past rounds (raw observations or a binned summary);
- :mod:`.optimism`: the fast optimistic step (support functions of quadratic models, sequential
  quadratic approximation, certified bounds);
- :mod:`.algorithms`: CCLB, epsilon-CCLB, OFULog+ (with their frozen configs) and GLM-UCB as
  vectorised policies;
- :mod:`.theory`: the problem constants of Definition 1 and the bounds of Theorems 1 and 2, Lemma 8
  and Propositions 3-4 as functions;
- :mod:`.experiments`: the comparisons of the paper's Figures 2, 4 and 5, the recorder of played
  rounds and the confidence-set measurements;
- :mod:`.figures`: the notebooks' figures;
- :mod:`.registry`: the (environment, policy) pairs for the conformance test and the benchmark;
- :mod:`.kernels` and :mod:`.glm_kernel`: the compiled fast paths; the second registers itself for
  GLM-UCB when :meth:`.algorithms.GLMUCB.compiled` first asks for it.

The package imports none of its modules: a worker process of the exact comparisons needs
:mod:`.confidence` (and cvxpy) only, not the causal-model and compiled-kernel stack.
"""
