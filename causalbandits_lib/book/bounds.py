"""Bounds checked before any work starts: grid size, worker count and memory.

- A sweep's grid is *counted* (ranges by arithmetic) before it is expanded, and refused above
  :data:`MAX_POINTS` points unless ``--max-points`` raises the cap.
- ``--jobs`` may not exceed the cores this process may use unless ``--force``.
- A pre-flight memory estimate: a notebook that simulates ``n_runs`` replications over a horizon
  ``T`` (or ``horizon``) keeps per-round arrays of shape ``(n_runs, T)``; :func:`estimate_bytes`
  counts :data:`ARRAYS_PER_ROUND` float64 arrays of that shape (rewards, actions, regret and one
  metric: a lower bound for most notebooks). A run (or the points a sweep runs at once) needing
  more than the machine's available memory is refused with a message naming the parameters,
  unless ``--force``.

Every refusal is a :class:`~causalbandits_lib.book.params.ParameterError` (exit code 2).
"""

from __future__ import annotations

import os
from typing import Any, Mapping

from ..core.recorders import available_memory
from .params import ParameterError

__all__ = [
    "MAX_POINTS",
    "ARRAYS_PER_ROUND",
    "cores",
    "available_memory",
    "check_jobs",
    "estimate_bytes",
    "check_memory",
]

#: Largest grid a sweep expands without ``--max-points``.
MAX_POINTS = 10_000
#: Per-round float64 arrays of shape (n_runs, T) a simulating notebook is assumed to hold at once.
ARRAYS_PER_ROUND = 4
_HORIZONS = ("T", "horizon")


def cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def check_jobs(jobs: int, force: bool = False) -> None:
    """Refuse ``jobs`` < 1, and more worker processes than cores unless ``force``."""
    if jobs < 1:
        raise ParameterError(f"--jobs {jobs}: give a positive number of worker processes")
    n = cores()
    if jobs > n and not force:
        raise ParameterError(
            f"--jobs {jobs}: this machine lets the process use {n} core(s); more workers only compete for them "
            "(give --jobs at most that, or --force)"
        )


def estimate_bytes(values: Mapping[str, Any]) -> int:
    """Lower-bound estimate of the memory one execution with resolved ``values`` needs (0 for
    notebooks without a horizon and a number of runs)."""
    horizon = next((values[h] for h in _HORIZONS if isinstance(values.get(h), int)), None)
    runs = values.get("n_runs")
    if horizon is None or not isinstance(runs, int):
        return 0
    return 8 * ARRAYS_PER_ROUND * int(horizon) * int(runs)


def _gb(n: float) -> str:
    return f"{n / 2**30:.1f} GB"


def check_memory(notebook: str, values: Mapping[str, Any], at_once: int = 1, force: bool = False) -> None:
    """Refuse an execution (``at_once`` of them side by side) whose estimate exceeds the available
    memory, naming the parameters, unless ``force``."""
    need = estimate_bytes(values) * max(1, at_once)
    free = available_memory()
    if force or free is None or need <= free:
        return
    horizon = next(h for h in _HORIZONS if isinstance(values.get(h), int))
    together = f" x {at_once} points at once" if at_once > 1 else ""
    raise ParameterError(
        f"{notebook} with {horizon}={values[horizon]} n_runs={values['n_runs']}{together} needs about {_gb(need)} "
        f"({ARRAYS_PER_ROUND} per-round arrays of {horizon} x n_runs float64), more than the {_gb(free)} available; "
        "lower them (or --jobs), or pass --force"
    )
