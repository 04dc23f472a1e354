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

from causalbandits_lib.core.registry import BanditEntry, IdentifierEntry, close_arrays, same_arrays

from .timing import interleaved, ratio_spread, spread


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


def run_entry(entry, repeat: int = 5) -> list[dict]:
    """Time ``entry`` at each of its ``bench_runs``; a row says whether all runs at once equal one
    run at a time (``identical``); raises AssertionError if a compiled kernel disagrees with numpy.

    The vectorised and loop columns are both the readable numpy path (``backend="numpy"``), so
    their ratio measures the runs axis alone; a compiled kernel, where there is one, is timed in
    the same process and compared with the numpy path (``kernel_speedup``). The repetitions are
    interleaved (:func:`~benchmarks.timing.interleaved`; the loop over more than 10 runs once);
    the rows keep the median of each and the median and range of the ratios (``*_spread``).
    """
    rows = []
    T = int(entry.bench_T)
    for n in entry.bench_runs:
        once = ("loop",) if n > 10 else ()
        if isinstance(entry, BanditEntry):
            fns = {
                "vec": lambda: entry.simulate(T, n_runs=n, backend="numpy"),
                "loop": lambda: entry.simulate_loop(T, n, backend="numpy"),
            }
            kernel = entry.has_kernel()
            if kernel:
                entry.simulate(min(T, 16), n_runs=1, backend="compiled")  # compile (or load the cache) first
                fns["fast"] = lambda: entry.simulate(T, n_runs=n, backend="compiled")
        elif isinstance(entry, IdentifierEntry):
            fns = {"vec": lambda: entry.identify(T, range(n)), "loop": lambda: entry.identify_loop(T, n)}
            kernel = entry.has_kernel()
            if kernel:
                entry.identify(min(T, 200), range(1), backend="compiled")  # compile (or load the cache) first
                fns["fast"] = lambda: entry.identify(T, range(n), backend="compiled")
        else:
            raise TypeError(f"not a registry entry: {entry!r}")
        seconds, out = interleaved(fns, repeat, once=once)
        vec, loop = out["vec"], out["loop"]
        if isinstance(entry, BanditEntry):
            same = all(same_arrays(vec[m], loop[m]) for m in vec.metrics)
        else:
            same = vec.equals(loop)
        t_vec, t_loop = spread(seconds["vec"])["median"], spread(seconds["loop"])["median"]
        row = timing_row(entry.name, n, T, t_vec, t_loop)
        row["identical"] = bool(same)  # False is reported (and fails make bench), not hidden
        row["ratio_spread"] = ratio_spread(seconds["loop"], seconds["vec"])
        row["repetitions"] = repeat
        if kernel:
            fast = out["fast"]
            if isinstance(entry, IdentifierEntry):
                if not fast.equals(vec):
                    raise AssertionError(f"{entry.name}: the compiled path and the numpy path differ at n_runs={n}")
            elif not all(close_arrays(vec[m], fast[m]) for m in vec.metrics):
                raise AssertionError(f"{entry.name}: the compiled kernel and the numpy path differ at n_runs={n}")
            t_fast = spread(seconds["fast"])["median"]
            row.update(
                compiled_seconds=t_fast,
                compiled_steps_per_second=T * n / t_fast,
                kernel_speedup=t_vec / t_fast,
                kernel_speedup_spread=ratio_spread(seconds["vec"], seconds["fast"]),
            )
        rows.append(row)
    return rows
