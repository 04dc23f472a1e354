"""``python -m benchmarks.fairx_kernels [03,05,06]``: the FairX kernels against the numpy path.

For each algorithm of the linear notebook (fairx/03), of the linear regret experiments (fairx/05:
the grid-search simulation and the test simulation, yeast and the mediamill-like set) and of the
replay notebook (fairx/06, both modes), :func:`~causalbandits_lib.fairx.experiments.simulate_fairness`
(the notebooks' simulation, with its regret recorders) runs on ``backend="numpy"`` and on
``backend="compiled"`` at the ``paper`` profile's configuration (runs, configurations, arms,
dimensions), over a horizon long enough to time; the two backends are interleaved in one process
after a warm-up call (which compiles, or loads the kernels from numba's cache), and the best of two
repeats is kept. Rows: run-steps (runs x rounds) per second of each backend and their ratio.
"""

from __future__ import annotations

import itertools
import sys
import time

import numpy as np

from causalbandits_lib.fairx import algorithms as alg
from causalbandits_lib.fairx import data
from causalbandits_lib.fairx import experiments as ex
from causalbandits_lib.fairx.merit import ExpMerit
from causalbandits_lib.fairx.model import GaussianContextBandit
from causalbandits_lib.fairx.yahoo import ReplayEnvironment, YahooLikeSimulator

REPEATS = 2


def grid_policy(algo, grid, c_values, K, d):
    """Every grid point for every c, as :func:`~causalbandits_lib.fairx.experiments.grid_search` builds it."""
    names = tuple(grid)
    points = list(itertools.product(*(list(grid[n]) for n in names)))
    cc = np.repeat(np.asarray(c_values, dtype=float), len(points))
    arrays = {n: np.tile(np.array([p[i] for p in points], dtype=float), len(c_values)) for i, n in enumerate(names)}
    merit = ExpMerit(cc)
    return (lambda: algo.make(merit, K, d, **arrays)), merit


def fixed_policy(algo, grid, c_values, K, d):
    """One configuration per c (the test simulation after tuning)."""
    merit = ExpMerit(c_values)
    values = {k: np.full(len(c_values), v[0]) for k, v in grid.items()}
    return (lambda: algo.make(merit, K, d, **values)), merit


def bench(label, env, make, merit, R, T):
    ex.simulate_fairness(env, make(), merit, 5, 0, n_runs=R, checkpoints=[5], backend="compiled")  # warm-up
    best = {"numpy": np.inf, "compiled": np.inf}
    for _ in range(REPEATS):
        for backend in ("numpy", "compiled"):
            start = time.perf_counter()
            ex.simulate_fairness(env, make(), merit, T, 0, n_runs=R, checkpoints=[T], backend=backend)
            best[backend] = min(best[backend], time.perf_counter() - start)
    slow, fast = R * T / best["numpy"], R * T / best["compiled"]
    print(
        f"{label:52s} R={R:2d} T={T:5d}  numpy {slow:9.0f}  compiled {fast:10.0f} run-steps/s  x{fast / slow:5.1f}",
        flush=True,
    )


def main(which: str = "03,05,06") -> None:
    rng = np.random.default_rng
    if "03" in which:  # GaussianContextBandit, d = K = 10, c = 3, β = 1, σ_0 = d^(-1/2), 10 runs
        merit, sd0 = ExpMerit(3.0), 1 / np.sqrt(10)
        for name, make, T in (
            ("FairX-LinUCB", lambda: alg.FairXLinUCB(merit, 1.0, 1.0, 10, 10), 1000),
            ("FairX-LinTS", lambda: alg.FairXLinTS(merit, sd0, 1.0, 10, 10), 2000),
            ("FairX-LinEG", lambda: alg.FairXLinEG(merit, 0.0, 1.0, 10, 10), 2000),
            ("LinUCB", lambda: alg.LinUCB(1.0, 1.0, 10, 10), 2000),
            ("LinTS", lambda: alg.LinTS(sd0, 1.0, 10, 10), 2000),
        ):
            env = GaussianContextBandit(None, 10, 1.0, dim=10, prior_sd=sd0)
            bench(f"03 gaussian contexts {name}", env, make, merit, 10, T)
    if "05" in which:  # random Fourier contexts (d = 50), label rewards, c in {1, 3, 10}
        sets = (
            ("yeast", data.load_yeast(), 14, 150, 300),
            ("mediamill", data.mediamill_like(seed=1, n_examples=3000), 101, 40, 150),
        )
        for dname, d, K, T_tune, T_test in sets:
            val, test = ex.split_environments(d, rng(0), 0.2, "linear", rng(1), 50, 1.0)
            for name, algo in ex.LINEAR_ALGORITHMS.items():
                make, merit = grid_policy(algo, ex.LINEAR_GRIDS[name], [1.0, 3.0, 10.0], K, 50)
                bench(f"05 {dname} tune {name} (G={merit.c.size})", val, make, merit, 2, T_tune)
                make, merit = fixed_policy(algo, ex.LINEAR_GRIDS[name], [1.0, 3.0, 10.0], K, 50)
                bench(f"05 {dname} test {name} (G=3)", test, make, merit, 10, T_test)
    if "06" in which:  # 271 articles, pools of 20, d = 36, c = 10, the Yahoo! grids, 3,000 events a day
        log = YahooLikeSimulator(seed=3).log(3000, seed=4)
        modes = (
            ("mab", ex.MAB_ALGORITHMS, ex.YAHOO_MAB_GRIDS, 271, None, 3000),
            ("linear", ex.LINEAR_ALGORITHMS, ex.YAHOO_LINEAR_GRIDS, 20, 36, 1500),
        )
        for mode, algos, grids, K, d, T in modes:
            env = ReplayEnvironment(log, log.days(0, 0), mode)
            for name in grids:
                make, merit = grid_policy(algos[name], grids[name], [10.0], K, d)
                bench(f"06 replay {mode} tune {name} (G={merit.c.size})", env, make, merit, 2, T)
                make, merit = fixed_policy(algos[name], grids[name], [10.0], K, d)
                bench(f"06 replay {mode} test {name} (G=1)", env, make, merit, 5, T)


if __name__ == "__main__":
    main(*sys.argv[1:2])
