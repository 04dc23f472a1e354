"""Fairness of exposure in stochastic bandits (Wang, Bai, Sun and Joachims, ICML 2021).

Modules, named for what they do:

- :mod:`.model`: the bandit environments: fixed and prior-drawn arms, multi-label data as a
  bandit, per-example and fresh Gaussian contexts, random Fourier contexts;
- :mod:`.merit`: merit functions, the optimal fair policy, fairness and reward regret (and the
  per-round regret meter);
- :mod:`.optimism`: the optimistic step (exact box solver, brute force, Dinkelbach bisection, the
  paper's projected gradient ascent, the ellipsoid version);
- :mod:`.algorithms`: FairX-UCB, FairX-TS, FairX-EG and the conventional UCB, TS, ε-greedy;
  FairX-LinUCB, FairX-LinTS, FairX-LinEG and LinUCB, LinTS, linear ε-greedy;
- :mod:`.data`: yeast (real file or flagged stand-in), the mediamill-shaped generator, the split;
- :mod:`.yahoo`: the Yahoo!-shaped click-log simulator and the replay evaluator;
- :mod:`.experiments`: simulations keeping running regret sums at checkpoints (through the one
  simulation loop), the per-round path they equal, slopes, the validation grid search, the paper's
  grids and protocol, and the metrics and curves the notebooks record;
- :mod:`.theory`: the regret bounds and the lower-bound constructions;
- :mod:`.figures`: regret curves, exposure bars, paper-scale curves;
- :mod:`.registry`: every (environment, policy) pair the chapter simulates, for the conformance
  test and the benchmark.
"""
