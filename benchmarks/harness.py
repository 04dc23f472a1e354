"""Time a vectorised simulation against a plain loop over runs, and check they agree exactly.

A benchmark case names an environment factory, a policy factory and a horizon. For each number of
runs ``n``, the harness times ``simulate(env, policy, T, seed, n_runs=n)`` (all runs at once) and
``simulate_loop(...)`` (one run at a time, the same code with a runs axis of length 1), asserts the
per-round metrics are identical bit for bit, and reports steps (rounds × runs) per second and the
speed ratio. Chapters add cases in ``benchmarks/bench_<chapter>.py`` as a list ``CASES``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from causalbandits_lib.core.runner import simulate, simulate_loop


@dataclass
class Case:
    """One benchmark: ``make_env()`` and ``make_policy()`` build fresh objects."""

    name: str
    make_env: Callable[[], object]
    make_policy: Callable[[], object]
    T: int
    runs: Sequence[int] = (1, 10, 100)
    metrics: Sequence[str] = ("regret", "reward")
    #: minimum speed ratio (vectorised / loop) required at the largest number of runs, if any
    target_ratio: float | None = None
    seed: int = 0
    notes: str = ""
    extra: dict = field(default_factory=dict)


def _time(fn, repeat: int):
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def run_case(case: Case, repeat: int = 3) -> list[dict]:
    """Time ``case``; a case object with its own ``run(repeat)`` method (a chapter whose algorithm
    is not a round-based bandit, e.g. fixed-budget identification) times itself and returns rows
    with the same keys."""
    custom = getattr(case, "run", None)
    if callable(custom):
        return custom(repeat)
    rows = []
    for n in case.runs:
        t_vec, vec = _time(
            lambda: simulate(case.make_env(), case.make_policy(), case.T, case.seed, n_runs=n, metrics=case.metrics),
            repeat,
        )
        t_loop, loop = _time(
            lambda: simulate_loop(case.make_env, case.make_policy, case.T, case.seed, n, metrics=case.metrics),
            1 if n > 10 else repeat,
        )
        for m in case.metrics:
            if not np.array_equal(vec[m], loop[m]):
                raise AssertionError(f"{case.name}: vectorised and looped runs differ in {m!r} at n_runs={n}")
        rows.append(timing_row(case.name, n, case.T, t_vec, t_loop))
    return rows


def timing_row(name: str, n_runs: int, T: int, t_vec: float, t_loop: float) -> dict:
    """One output row: timings of ``n_runs`` runs of ``T`` steps, vectorised against the loop, whose
    results the caller has already found identical."""
    steps = T * n_runs
    return {
        "case": name,
        "n_runs": n_runs,
        "T": T,
        "vectorised_seconds": t_vec,
        "loop_seconds": t_loop,
        "vectorised_steps_per_second": steps / t_vec,
        "loop_steps_per_second": steps / t_loop,
        "ratio": t_loop / t_vec,
        "identical": True,
    }
