"""UCB1 beside a peer library and beside the practical limit, measured in one run.

- **project (compiled)**: ``simulate(BernoulliBandit, UCB1)`` on the default backend (the numba
  kernel, consuming every run's named random streams);
- **project (numpy)**: the same on the readable numpy path (``backend="numpy"``);
- **MABWiser**: its ``UCB1`` learning policy driven the way its documentation shows (``predict``
  then ``partial_fit`` each round), one run at a time (optional: ``make bench`` installs it from
  ``requirements-bench.lock``; without it the row is skipped);
- **limit**: a minimal compiled UCB1 loop drawing one uniform per step from numba's own generator:
  no streams, no state outside the loop, nothing kept but the regret. Nothing useful can be much
  faster on this machine.

Run-steps per second (rounds x runs) of each, and the ratios project/MABWiser and limit/project.
Machines here are shared, so only ratios measured side by side mean something.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from causalbandits_lib.core.environments import BernoulliBandit
from causalbandits_lib.core.policies import UCB1
from causalbandits_lib.core.runner import simulate

from .timing import interleaved, ratio_spread, spread

#: (arms, horizon, runs of the project and the limit, runs of MABWiser): the first is the problem
#: of issue 17, the second ten times wider and longer.
PROBLEMS = ((10, 5000, 100, 5), (100, 50_000, 100, 1))
#: Targets on the first problem: the compiled path within 2x of the limit, and >= 100x MABWiser.
LIMIT_FACTOR = 2.0
PEER_FACTOR = 100.0


def problem_means(k: int) -> np.ndarray:
    """Evenly spaced Bernoulli means from 0.9 down to 0.1 (a unique best arm)."""
    return np.linspace(0.9, 0.1, k)


@njit(cache=True)
def limit_ucb1(means, T, n_runs, seed):
    """The practical limit: UCB1 for ``n_runs`` runs of ``T`` rounds, one uniform per step."""
    np.random.seed(seed)
    K = means.shape[0]
    best_mean = means.max()
    total = 0.0
    counts = np.zeros(K)
    sums = np.zeros(K)
    for _ in range(n_runs):
        counts[:] = 0.0
        sums[:] = 0.0
        for t in range(T):
            if t < K:
                a = t
            else:
                log_t = math.log(t)
                best, a = -1.0, 0
                for k in range(K):
                    v = sums[k] / counts[k] + math.sqrt(2.0 * log_t / counts[k])
                    if v > best:
                        best, a = v, k
            counts[a] += 1.0
            sums[a] += 1.0 if np.random.random() < means[a] else 0.0
            total += best_mean - means[a]
    return total / n_runs


def mabwiser_ucb1(means: np.ndarray, T: int, n_runs: int, seed: int) -> float | None:
    """MABWiser's UCB1, one run at a time; None if MABWiser is not installed."""
    try:
        from mabwiser.mab import MAB, LearningPolicy
    except ImportError:
        return None
    arms = list(range(len(means)))
    total = 0.0
    for run in range(n_runs):
        rng = np.random.default_rng([seed, run])
        mab = MAB(arms=arms, learning_policy=LearningPolicy.UCB1(alpha=1.0), seed=seed + run)
        mab.fit(decisions=arms, rewards=[float(rng.random() < m) for m in means])  # one pull of each arm
        for _ in range(T - len(arms)):
            a = mab.predict()
            mab.partial_fit([a], [float(rng.random() < means[a])])
            total += means.max() - means[a]
    return total / n_runs


def run_peers(repeat: int = 5, seed: int = 0) -> list[dict]:
    """One row per problem with run-steps/s of every implementation (medians of ``repeat``
    interleaved repetitions; the numpy path and MABWiser once) and the ratios, with the median and
    range of the paired ratios (``*_spread``)."""
    rows = []
    limit_ucb1(problem_means(3), 10, 1, 0)  # compile (or load from the cache) outside the timing
    simulate(BernoulliBandit(problem_means(3)), UCB1(3), 10, seed, n_runs=2)
    for k, T, runs, mab_runs in PROBLEMS:
        means = problem_means(k)
        steps = T * runs

        def project(backend: str):
            return simulate(BernoulliBandit(means), UCB1(k), T, seed, n_runs=runs, backend=backend)

        fns = {
            "project_compiled": lambda: project("auto"),
            "limit": lambda: limit_ucb1(means, T, runs, seed),
            "project_numpy": lambda: project("numpy"),
            "mabwiser": lambda: mabwiser_ucb1(means, T, mab_runs, seed),
        }
        seconds, out = interleaved(fns, repeat, once=("project_numpy", "mabwiser"))
        med = {name: spread(sec)["median"] for name, sec in seconds.items()}
        rate = {name: steps / med[name] for name in ("project_compiled", "limit", "project_numpy")}
        if out["mabwiser"] is not None:
            rate["mabwiser"] = T * mab_runs / med["mabwiser"]
        row = {"problem": f"UCB1, K={k} Bernoulli arms, T={T}", "runs": runs, "mabwiser_runs": mab_runs}
        row.update({f"{name}_steps_per_second": r for name, r in rate.items()})
        row["limit_over_project"] = rate["limit"] / rate["project_compiled"]
        row["limit_over_project_spread"] = ratio_spread(seconds["project_compiled"], seconds["limit"])
        row["project_over_numpy"] = rate["project_compiled"] / rate["project_numpy"]
        row["project_over_mabwiser"] = rate["project_compiled"] / rate["mabwiser"] if "mabwiser" in rate else None
        if "mabwiser" in rate:
            per_step = np.asarray(seconds["mabwiser"]) / (T * mab_runs)
            row["project_over_mabwiser_spread"] = ratio_spread(
                per_step, np.asarray(seconds["project_compiled"]) / steps
            )
        row["repetitions"] = repeat
        rows.append(row)
    return rows


def check_targets(rows: list[dict]) -> list[str]:
    """The issue-17 targets on the first problem; returns what was not met."""
    first, failed = rows[0], []
    if first["limit_over_project"] > LIMIT_FACTOR:
        behind = first["limit_over_project"]
        failed.append(f"UCB1 is {behind:.2f}x behind the compiled limit (target <= {LIMIT_FACTOR:g}x)")
    peer = first["project_over_mabwiser"]
    if peer is not None and peer < PEER_FACTOR:
        failed.append(f"UCB1 is only {peer:.0f}x MABWiser (target >= {PEER_FACTOR:g}x)")
    return failed
