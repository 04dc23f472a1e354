"""Timing side by side: repetitions interleaved, reported as median and range.

On a shared machine the speed of one implementation drifts with what else runs; timing ``A`` five
times and then ``B`` five times lets the drift into the ratio. :func:`interleaved` times one call
of each in turn, ``repeat`` times over, so every repetition of a ratio compares calls made side by
side; :func:`spread` reports the median and the range of any list of numbers.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

import numpy as np

__all__ = ["interleaved", "spread", "ratio_spread"]


def interleaved(fns: Mapping[str, Callable[[], Any]], repeat: int, once: tuple[str, ...] = ()) -> tuple[dict, dict]:
    """Call every function of ``fns`` once per repetition, in turn, ``repeat`` times (those named in
    ``once`` in the first repetition only). Returns the wall seconds of each call by name and the
    last result of each."""
    if repeat < 1:
        raise ValueError(f"repeat={repeat} must be at least 1")
    seconds: dict[str, list[float]] = {name: [] for name in fns}
    results: dict[str, Any] = {}
    for r in range(repeat):
        for name, fn in fns.items():
            if r and name in once:
                continue
            start = time.perf_counter()
            results[name] = fn()
            seconds[name].append(time.perf_counter() - start)
    return seconds, results


def spread(values) -> dict[str, float]:
    """Median, smallest and largest of ``values``, and how many there are."""
    v = np.asarray(list(values), dtype=float)
    return {"median": float(np.median(v)), "min": float(v.min()), "max": float(v.max()), "n": int(v.size)}


def ratio_spread(numerator, denominator) -> dict[str, float]:
    """:func:`spread` of the ratios of paired repetitions (``numerator[i] / denominator[i]``); a
    list of one (a call made once) pairs with every repetition of the other."""
    a, b = np.asarray(numerator, dtype=float), np.asarray(denominator, dtype=float)
    return spread(a / b)
