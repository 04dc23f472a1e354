"""Bandits with causal bounds from confounded and selection-biased offline data.

Huang and Wu, *Robustly Improving Bandit Algorithms with Confounded and Selection Biased Offline
Data: A Causal Approach* (AAAI 2024). The chapter's modules, by what they do:

- :mod:`.model`: the synthetic causal model of the paper's Table 2 (context ``U1, U2``, arm
  ``X1, X2``, hidden confounder ``C1``, intermediate ``I1``, reward ``Y``, selection ``S``), its
  exact ground truth (conditional causal effects, selected distributions) and the paper's printed
  Table 1;
- :mod:`.offline`: the offline data generator (confounded logging plus selection) and the count
  tables of many independent offline data sets;
- :mod:`.identification`: the graph side of the paper's BCE (Algorithm 1): latent projection,
  c-components, Tian and Pearl's Identify, RC* (Algorithm 2), FindRSI (Algorithm 3) with the
  paper's exchange condition, and identifiability of interventional distributions;
- :mod:`.estimators`: the bounds and point estimates computed from offline count tables: BCE as the
  paper writes it, the sound conditioning bound, finite-sample margins, the naive baselines, and
  the priors the online algorithms take from each run's log;
- :mod:`.algorithms`: LinUCB (configured by ``LinUCBConfig``), warm-started LinUCB, LinUCB-PCB
  (Algorithm 4), UCB and UCB-PCB (Algorithm 6), vectorised over runs;
- :mod:`.theory`: the regret bounds of Theorems 5 and 8 and the quantities they depend on;
- :mod:`.experiments`: the online experiments of notebook 4 (Figure 4 on the causal model and in
  the world of the printed Table 1, UCB against UCB-PCB);
- :mod:`.figures`: the chapter's figures (the graph of Figure 2, intervals like Figure 3, regret
  curves like Figure 4, the regret bounds);
- :mod:`.registry`: the chapter's (environment, policy) pairs, for the conformance test and the
  benchmark.
"""
