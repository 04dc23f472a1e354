"""Time the chapters' registered entries: all runs at once against one run at a time.

Every entry of a chapter's ``registry.ENTRIES`` that names a benchmark horizon (``bench_T``) is
timed here, for each number of runs in its ``bench_runs``: the vectorised simulation
(``entry.simulate``, or ``entry.identify`` for a fixed-budget identifier) against the readable
reference that simulates one run at a time (``entry.simulate_loop`` / ``entry.identify_loop``).
Both must agree bit for bit (the same check as the conformance test, at the benchmark's scale);
the rows report steps (rounds x runs) per second and the speed ratio. An entry whose policy has a
compiled kernel is also timed with it, in the same process, and must agree with the numpy path
within the kernels' tolerance: the row then carries the kernel's speed-up over the readable numpy
implementation at the same number of runs.
"""

from __future__ import annotations

import time

import numpy as np

from causalbandits_lib.core.registry import BanditEntry, IdentifierEntry, close_arrays, same_arrays


def best_time(fn, repeat: int):
    """The smallest wall time of ``repeat`` calls of ``fn`` and the last result."""
    best, out = np.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


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


def run_entry(entry, repeat: int = 3) -> list[dict]:
    """Time ``entry`` at each of its ``bench_runs``; a row says whether all runs at once equal one
    run at a time (``identical``); raises AssertionError if a compiled kernel disagrees with numpy.

    The vectorised and loop columns are both the readable numpy path (``backend="numpy"``), so
    their ratio measures the runs axis alone; a compiled kernel, where there is one, is timed in
    the same process and compared with the numpy path (``kernel_speedup``).
    """
    rows = []
    T = int(entry.bench_T)
    for n in entry.bench_runs:
        loop_repeat = 1 if n > 10 else repeat
        if isinstance(entry, BanditEntry):
            t_vec, vec = best_time(lambda: entry.simulate(T, n_runs=n, backend="numpy"), repeat)
            t_loop, loop = best_time(lambda: entry.simulate_loop(T, n, backend="numpy"), loop_repeat)
            same = all(same_arrays(vec[m], loop[m]) for m in vec.metrics)
        elif isinstance(entry, IdentifierEntry):
            t_vec, vec = best_time(lambda: entry.identify(T, range(n)), repeat)
            t_loop, loop = best_time(lambda: entry.identify_loop(T, n), loop_repeat)
            same = vec.equals(loop)
        else:
            raise TypeError(f"not a registry entry: {entry!r}")
        row = timing_row(entry.name, n, T, t_vec, t_loop)
        row["identical"] = bool(same)  # False is reported (and fails make bench), not hidden
        if isinstance(entry, BanditEntry) and entry.has_kernel():
            entry.simulate(min(T, 16), n_runs=1, backend="compiled")  # compile (or load the cache) first
            t_fast, fast = best_time(lambda: entry.simulate(T, n_runs=n, backend="compiled"), repeat)
            if not all(close_arrays(vec[m], fast[m]) for m in vec.metrics):
                raise AssertionError(f"{entry.name}: the compiled kernel and the numpy path differ at n_runs={n}")
            row.update(
                compiled_seconds=t_fast,
                compiled_steps_per_second=T * n / t_fast,
                kernel_speedup=t_vec / t_fast,
            )
        rows.append(row)
    return rows
