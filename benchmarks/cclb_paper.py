"""CCLB's kernel at the paper's configuration: notebook ``cclb/04``'s main batch, numpy against compiled.

The batch is the one :func:`~causalbandits_lib.cclb.experiments.run_configs` simulates for Figures
2, 4 and 5 at the ``paper`` profile: OFULog+, CCLB, epsilon-CCLB and the further epsilon and tau
values of ``notebooks/cclb/parameters.yml`` as configurations, ``reps`` replications each, ``T``
rounds. Both backends run it once in this process (numpy first, after a short warm-up of the
kernel), on the same streams; their decisions must agree over the whole horizon or the row says
so. Issue 17's target is a kernel at least 5 times the numpy path's run-steps per second.
"""

from __future__ import annotations

import time

import numpy as np

from causalbandits_lib.book.params import load_chapter
from causalbandits_lib.book.paths import notebooks_dir
from causalbandits_lib.cclb import experiments as E
from causalbandits_lib.cclb.algorithms import CCLB
from causalbandits_lib.cclb.environment import FairLogisticBandit
from causalbandits_lib.cclb.generator import RoundGenerator
from causalbandits_lib.core.runner import simulate

#: Issue 17: the kernel's run-steps per second over the numpy path's, at least.
TARGET = 5.0


def paper_values() -> dict:
    """The ``paper`` profile's values of notebook ``cclb/04``."""
    spec = load_chapter(notebooks_dir() / "cclb").notebooks["04_experiments"]
    values, _ = spec.resolve({"profile": "paper"})
    return values


def run_cclb_paper(T: int | None = None) -> dict:
    """Time the batch on both backends; ``T`` defaults to the paper's horizon."""
    v = paper_values()
    T = int(v["T"] if T is None else T)
    configs = E.paper_configs(T, v["tau"], v["rho"], v["eps"], v["eps_values"], v["tau_values"])
    reps = int(v["reps"])
    gen = RoundGenerator(tau=v["tau"])

    def once(backend: str, horizon: int):
        policy = CCLB(
            [c.horizon for c in configs],
            tau=[c.tau for c in configs],
            rho=[c.rho for c in configs],
            eps=[c.eps for c in configs],
            feature_map=gen.feature_map,
            alpha=v["alpha"],
            tie_rule=v["tie_rule"],
        )
        env = FairLogisticBandit(gen, tau=[c.tau for c in configs])
        start = time.perf_counter()
        res = simulate(
            env,
            policy,
            horizon,
            v["seed"],
            n_runs=len(configs) * reps,
            metrics=("action", "regret"),
            replications=reps,
            backend=backend,
        )
        return time.perf_counter() - start, res

    once("compiled", 16)  # compile, or load numba's cache
    t_numpy, slow = once("numpy", T)
    t_fast, fast = once("compiled", T)
    runs = len(configs) * reps
    same = np.array_equal(slow["action"], fast["action"])
    first = np.argwhere(np.asarray(slow["action"]) != np.asarray(fast["action"]))
    return {
        "case": "cclb/04 paper batch",
        "configurations": len(configs),
        "replications": reps,
        "n_runs": runs,
        "T": T,
        "numpy_seconds": t_numpy,
        "compiled_seconds": t_fast,
        "numpy_steps_per_second": runs * T / t_numpy,
        "compiled_steps_per_second": runs * T / t_fast,
        "kernel_speedup": t_numpy / t_fast,
        "same_decisions": bool(same),
        "first_different_round": None if same else int(first[:, 1].min()),
        "runs_with_different_decisions": 0 if same else int(np.unique(first[:, 0]).size),
    }
