"""Fairness of exposure in stochastic bandits (Wang, Bai, Sun and Joachims, ICML 2021).

Modules, named for what they do:

- :mod:`.merit`: merit functions, the optimal fair policy, fairness and reward regret;
- :mod:`.optimism`: the optimistic step (exact box solver, brute force, Dinkelbach bisection, the
  paper's projected gradient ascent, the ellipsoid version);
- :mod:`.mab`: FairX-UCB, FairX-TS, FairX-EG and the conventional UCB, TS, ε-greedy;
- :mod:`.linear`: FairX-LinUCB, FairX-LinTS, FairX-LinEG and LinUCB, LinTS, linear ε-greedy;
- :mod:`.environments`: multi-label data as bandits, random Fourier contexts, synthetic instances;
- :mod:`.data`: yeast (real file or flagged stand-in), the mediamill-shaped generator, the split;
- :mod:`.yahoo`: the Yahoo!-shaped click-log simulator and the replay evaluator;
- :mod:`.evaluation`: the long-horizon fast path, regrets, slopes, validation grid search;
- :mod:`.theory`: the regret bounds and the lower-bound constructions.
"""
