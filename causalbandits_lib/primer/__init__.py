"""The primer: stochastic bandits and regret, seeing versus doing, soft interventions.

- :mod:`.model`: the confounded-treatment and contextual models, policies as tables;
- :mod:`.algorithms`: naive and back-door adjusted estimates from observational samples;
- :mod:`.theory`: the value of a soft intervention as a mixture of hard ones;
- :mod:`.experiments`: many observational studies at once;
- :mod:`.figures`: regret with its bounds;
- :mod:`.registry`: UCB1 on a Bernoulli bandit and on a contextual one, for the conformance test
  and the benchmark.
"""
