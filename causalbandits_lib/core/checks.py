"""The statistical checks behind verdicts: measured numbers in, a :class:`Verdict` out.

A verdict is never typed in: it is the output of one of the check functions below, applied to
measured numbers, and the check's rule is stored beside it (``criterion``) so a reader can see
exactly what was compared with what. The four verdicts:

- ``reproduced``: the measurement satisfies the paper's statement under the stated rule;
- ``partly``: some of the statement's parts hold, others do not;
- ``not reproduced``: the measurement contradicts the statement;
- ``not testable here``: the statement cannot be checked with what is available (the reason says
  why); :func:`not_testable` is the only way to get it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

__all__ = [
    "VERDICTS",
    "Verdict",
    "check_all",
    "check_at_most",
    "check_at_least",
    "check_close",
    "check_order",
    "check_mean_below",
    "check_paired_order",
    "not_testable",
]

VERDICTS = ("reproduced", "partly", "not reproduced", "not testable here")


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: the verdict, a one-line reason with the numbers, and the rule."""

    verdict: str
    reason: str
    criterion: str

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")


def _g(x: float) -> str:
    return f"{x:.4g}"


def check_all(checks: Mapping[str, bool], criterion: str = "") -> Verdict:
    """Several parts of one claim: all hold → reproduced, none → not reproduced, else partly.

    ``checks`` maps a short description of each part (with its numbers) to whether it held.
    """
    if not checks:
        raise ValueError("check_all needs at least one check")
    held = [k for k, ok in checks.items() if bool(ok)]
    failed = [k for k, ok in checks.items() if not bool(ok)]
    rule = criterion or "every part must hold"
    if not failed:
        return Verdict("reproduced", f"all {len(held)} parts hold", rule)
    if not held:
        return Verdict("not reproduced", "fails: " + "; ".join(failed), rule)
    return Verdict("partly", f"{len(held)} of {len(checks)} parts hold; fails: " + "; ".join(failed), rule)


def _named(label: str | None, value: float) -> str:
    return _g(value) if label is None or label == _g(value) else f"{label} = {_g(value)}"


def check_at_most(measured: float, limit: float, what: str = "measured", limit_what: str | None = None) -> Verdict:
    """Reproduced iff ``measured <= limit`` (``limit_what`` names the limit, e.g. ``"bound"``)."""
    ok = float(measured) <= float(limit)
    return Verdict(
        "reproduced" if ok else "not reproduced",
        f"{what} = {_g(measured)} {'<=' if ok else '>'} {_named(limit_what, limit)}",
        f"{what} <= {_named(limit_what, limit)}",
    )


def check_at_least(measured: float, limit: float, what: str = "measured", limit_what: str | None = None) -> Verdict:
    """Reproduced iff ``measured >= limit``."""
    ok = float(measured) >= float(limit)
    return Verdict(
        "reproduced" if ok else "not reproduced",
        f"{what} = {_g(measured)} {'>=' if ok else '<'} {_named(limit_what, limit)}",
        f"{what} >= {_named(limit_what, limit)}",
    )


def check_close(
    measured: float,
    paper: float,
    rel_tol: float,
    abs_tol: float = 0.0,
    partly_factor: float | None = None,
) -> Verdict:
    """Compare a measured number with the paper's.

    Reproduced iff ``|measured − paper| <= max(abs_tol, rel_tol·|paper|)``. With ``partly_factor``
    ``f``, a difference within ``f`` times that tolerance is ``partly``. The tolerance is part of
    the stored criterion; choose it from the paper's own spread (e.g. its number of runs), never
    from our result.
    """
    tol = max(float(abs_tol), float(rel_tol) * abs(float(paper)))
    diff = abs(float(measured) - float(paper))
    rule = f"|measured - paper| <= max({abs_tol:g}, {rel_tol:g}·|paper|) = {_g(tol)}"
    if partly_factor:
        rule += f"; partly within {partly_factor:g}x that"
    reason = f"measured {_g(measured)} vs paper {_g(paper)} (difference {_g(diff)}, tolerance {_g(tol)})"
    if diff <= tol:
        return Verdict("reproduced", reason, rule)
    if partly_factor and diff <= partly_factor * tol:
        return Verdict("partly", reason, rule)
    return Verdict("not reproduced", reason, rule)


def check_order(
    values: Mapping[str, float], expected: Sequence[str], descending: bool = True, margin: float = 0.0
) -> Verdict:
    """Check an ordering such as ``UCB > C-UCB > D-UCB``.

    Each consecutive pair of ``expected`` must differ in the stated direction by more than
    ``margin``. All pairs hold → reproduced; none → not reproduced; else partly.
    """
    for name in expected:
        if name not in values:
            raise KeyError(f"check_order: no value for {name!r}; have {sorted(values)}")
    sign = ">" if descending else "<"
    checks = {}
    for a, b in zip(expected, expected[1:]):
        va, vb = float(values[a]), float(values[b])
        ok = (va - vb > margin) if descending else (vb - va > margin)
        checks[f"{a} ({_g(va)}) {sign} {b} ({_g(vb)})"] = ok
    rule = f" {sign} ".join(expected) + (f" with margin {margin:g}" if margin else "")
    v = check_all(checks, rule)
    if v.verdict == "reproduced":
        return Verdict("reproduced", "; ".join(checks), rule)
    return v


def check_mean_below(samples: Sequence[float], limit: float, z: float = 2.0, what: str = "mean") -> Verdict:
    """Reproduced iff the mean of ``samples`` is below ``limit`` by at least ``z`` standard errors;
    not reproduced iff it is above by at least ``z`` standard errors; partly in between (the runs
    cannot tell)."""
    x = np.asarray(samples, dtype=float)
    mean = float(x.mean())
    se = float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0
    rule = f"{what} + {z:g}·se < {_g(limit)} (reproduced) / {what} - {z:g}·se > limit (not reproduced)"
    reason = f"{what} = {_g(mean)} ± {_g(se)} (se over {len(x)} runs) vs {_g(limit)}"
    if mean + z * se < limit:
        return Verdict("reproduced", reason, rule)
    if mean - z * se > limit:
        return Verdict("not reproduced", reason, rule)
    return Verdict("partly", reason + " (within noise)", rule)


def not_testable(reason: str) -> Verdict:
    """The claim cannot be checked here; ``reason`` says why (missing data, missing figure, ...)."""
    if not reason.strip():
        raise ValueError("not_testable needs a reason")
    return Verdict("not testable here", reason, "not checked")


def check_paired_order(values: Mapping[str, np.ndarray], expected: Sequence[str], z: float = 2.0) -> Verdict:
    """Check an ordering ``expected[0] < expected[1] < ...`` of per-run values on common random numbers.

    Each consecutive pair is judged on the paired differences across runs (replication ``i`` of
    every algorithm faces the same contexts and noise): the pair holds when the mean difference is
    positive by more than ``z`` standard errors, fails when it is negative by more than ``z``
    standard errors, and is within noise otherwise (a difference the runs cannot resolve).

    Returns
    -------
    Verdict: reproduced if every pair holds; not reproduced if every pair fails; partly otherwise.
    """
    parts, noise = {}, 0
    for a, b in zip(expected, expected[1:]):
        diff = np.asarray(values[b], dtype=float) - np.asarray(values[a], dtype=float)
        mean = float(diff.mean())
        se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
        held = mean - z * se > 0
        within = not held and mean + z * se >= 0
        noise += within
        parts[f"{a} < {b}: mean difference {mean:.4g} ± {se:.2g} (se){' (within noise)' if within else ''}"] = held
    rule = " < ".join(expected) + f", each pair by more than {z:g} standard errors of the paired differences"
    verdict = check_all(parts, rule)
    if verdict.verdict == "not reproduced" and noise:
        return Verdict("partly", verdict.reason, rule)
    return verdict
