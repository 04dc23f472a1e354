"""The statistical checks behind verdicts: measured numbers in, a :class:`Verdict` out.

A verdict is never typed in: it is the output of one of the check functions below, applied to
measured numbers, and the check's rule is stored beside it (``criterion``) so a reader can see
exactly what was compared with what. The four verdicts:

- ``reproduced``: the measurement satisfies the paper's statement under the stated rule;
- ``partly``: some of the statement's parts hold, others do not;
- ``not reproduced``: the measurement contradicts the statement;
- ``not testable here``: the statement cannot be checked with what is available (the reason says
  why, e.g. a bound that is vacuous at the scale tested); :func:`not_testable` and
  :func:`check_bound` give it.

Every claim also has a **kind** (:data:`KINDS`): ``experiment`` (a number, ordering or trend the
paper reports from its experiments) and ``theorem`` (a bound, rate or condition of its theory,
checked against a measurement) are the results a reader cites (:data:`RESULT_KINDS`); ``identity``
(an equality our code must satisfy, which fails only through a bug) and ``construction`` (true by
how our setup is built) are checks of the implementation and are counted apart.

The standard of evidence (what makes a check able to fail):

- a bound is tested only where it is informative (:func:`check_bound`, :func:`check_bound_curve`):
  at or above the trivial bound the verdict is ``not testable here`` with the ratio;
- orderings and comparisons are judged on paired differences over runs that share their random
  numbers, against their standard error (:func:`check_paired_order`, :func:`check_paired_close`,
  :func:`check_close_to_paper`); a difference the runs cannot resolve is *indistinguishable*;
- every growth-rate claim goes through one test, :func:`check_rate` (a bootstrap interval for the
  log-log slope);
- a claim about randomly generated instances is judged on several (:func:`check_instances`), and a
  claim that rests on a choice the paper left open records how its verdict moves with that choice
  (:func:`with_sensitivity`).

Checks put the numbers behind a verdict in ``Verdict.details`` (means, standard errors, ratios,
per-instance verdicts), which records keep beside the claim.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = [
    "VERDICTS",
    "KINDS",
    "RESULT_KINDS",
    "Verdict",
    "mean_se",
    "check_bound",
    "check_bound_curve",
    "informative_horizon",
    "check_paired_close",
    "check_close_to_paper",
    "rate_interval",
    "check_rate",
    "check_sublinear",
    "check_instances",
    "with_sensitivity",
    "check_parts",
    "check_paired_lower",
    "check_mean_above",
    "negate",
    "check_bootstrap_increase",
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
KINDS = ("experiment", "theorem", "identity", "construction")
#: The kinds whose verdicts are results of the reproduction (the others check our implementation).
RESULT_KINDS = ("experiment", "theorem")


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: the verdict, a one-line reason with the numbers, and the rule.

    ``details`` holds the numbers behind the verdict (plain JSON values: means, standard errors,
    ratios, per-instance verdicts); it does not take part in equality.
    """

    verdict: str
    reason: str
    criterion: str
    details: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")

    @property
    def indistinguishable(self) -> bool:
        """True when the check compared values the runs could not tell apart."""
        return bool(self.details.get("indistinguishable", False))


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
    standard errors, and is within noise otherwise (a difference the runs cannot resolve). Two
    values equal in every run fail a strict ordering (they are not noise); they still count as
    indistinguishable for :func:`check_instances`.

    Returns
    -------
    Verdict: reproduced if every pair holds; not reproduced if every pair fails; partly otherwise.
    """
    parts, noise, ties, pairs = {}, 0, 0, {}
    for a, b in zip(expected, expected[1:]):
        diff = np.asarray(values[b], dtype=float) - np.asarray(values[a], dtype=float)
        mean = float(diff.mean())
        se = float(diff.std(ddof=1) / np.sqrt(len(diff))) if len(diff) > 1 else 0.0
        held = mean - z * se > 0
        tie = bool(np.all(diff == 0))  # equal in every run: a strict ordering fails, not noise
        within = not held and not tie and mean + z * se >= 0
        noise += within
        ties += tie
        pairs[f"{b} - {a}"] = {"mean": mean, "se": se, "n": int(diff.size)}
        note = " (equal in every run)" if tie else " (within noise)" if within else ""
        parts[f"{a} < {b}: mean difference {mean:.4g} ± {se:.2g} (se){note}"] = held
    rule = " < ".join(expected) + f", each pair by more than {z:g} standard errors of the paired differences"
    verdict = check_all(parts, rule)
    details = {"paired_differences": pairs, "z": z, "indistinguishable": noise + ties == len(pairs)}
    if verdict.verdict == "not reproduced" and noise:
        return Verdict("partly", verdict.reason, rule, details)
    return Verdict(verdict.verdict, verdict.reason, verdict.criterion, details)


# -- the standard of evidence -------------------------------------------------------------------


def mean_se(samples: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (0 for a single sample)."""
    x = np.asarray(samples, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("mean_se needs at least one sample")
    se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else 0.0
    return float(x.mean()), se


_UNKNOWN = "unknown"


def _vacuous(ratio: float, informative_from: float | None | str) -> str:
    """The reason of a vacuous bound, with the horizon where it would bite when that is known."""
    text = f"vacuous at this scale (bound / trivial = {_g(ratio)})"
    if informative_from is None:
        return text + "; no horizon within the search limit makes it informative"
    if informative_from == _UNKNOWN:
        return text
    return text + f"; it would become informative from T = {float(informative_from):.4g}"


def check_bound(
    measured: float,
    bound: float,
    trivial: float,
    what: str = "measured",
    informative_from: float | None | str = _UNKNOWN,
) -> Verdict:
    """A bound of the paper's theory against a measurement, tested only where it could fail.

    ``trivial`` is what holds without the theorem (``t·Δmax`` for a cumulative regret, ``T`` for a
    count, 1 for a probability). When ``bound >= trivial`` the measurement cannot exceed the bound,
    so the verdict is ``not testable here`` ("vacuous at this scale") with the ratio, and with the
    smallest horizon at which it would become informative when the caller knows it
    (``informative_from``: a number, None for "never", or ``"unknown"``). Otherwise reproduced iff
    ``measured <= bound``.
    """
    measured, bound, trivial = float(measured), float(bound), float(trivial)
    if not trivial > 0:
        raise ValueError(f"check_bound: the trivial bound must be positive, got {trivial}")
    ratio = bound / trivial
    details = {"bound": bound, "trivial": trivial, "bound_over_trivial": ratio, "measured": measured}
    rule = f"{what} <= bound, tested only where bound < trivial ({_g(trivial)})"
    if ratio >= 1:
        return Verdict("not testable here", _vacuous(ratio, informative_from), rule, details)
    ok = measured <= bound
    reason = f"{what} = {_g(measured)} {'<=' if ok else '>'} bound = {_g(bound)} (bound / trivial = {_g(ratio)})"
    return Verdict("reproduced" if ok else "not reproduced", reason, rule, details)


def check_bound_curve(
    t: Sequence[float],
    measured: Sequence[float],
    bound: Sequence[float],
    trivial: Sequence[float],
    what: str = "measured",
    informative_from: float | None | str = _UNKNOWN,
    points: str = "horizons",
    x: str = "t",
) -> Verdict:
    """:func:`check_bound` along a curve: the bound is tested at the horizons where it is below the
    trivial bound. None such → ``not testable here`` (vacuous, with the smallest ratio); otherwise
    reproduced iff the measurement stays at or below the bound at every informative horizon.
    ``points`` and ``x`` name the points and their coordinate in the reason ("cases", "case")
    when they are not horizons ``t``."""
    t, m, b, tr = (np.asarray(x, dtype=float) for x in (t, measured, bound, trivial))
    if not (t.shape == m.shape == b.shape == tr.shape) or t.ndim != 1 or t.size == 0:
        raise ValueError("check_bound_curve: t, measured, bound and trivial must be 1-d arrays of one length")
    if np.any(tr <= 0):
        raise ValueError("check_bound_curve: the trivial bound must be positive")
    ratio = b / tr
    informative = ratio < 1
    details = {
        "t": t.tolist(),
        "bound_over_trivial": ratio.tolist(),
        "informative_horizons": int(informative.sum()),
    }
    rule = f"{what} <= bound at every point of {points} where bound < trivial"
    if not informative.any():
        reason = _vacuous(float(ratio.min()), informative_from).replace(
            "vacuous at this scale", f"vacuous at this scale, at all {t.size} {points}", 1
        )
        return Verdict("not testable here", reason, rule, details)
    over = informative & (m > b)
    span = f"bound / trivial {_g(ratio[informative].min())} to {_g(ratio[informative].max())}"
    if over.any():
        first = int(np.flatnonzero(over)[0])
        reason = (
            f"{what} exceeds the bound at {int(over.sum())} of {int(informative.sum())} informative {points} "
            f"(first {x} = {_g(t[first])}: {_g(m[first])} > {_g(b[first])}; {span})"
        )
        return Verdict("not reproduced", reason, rule, details)
    reason = f"{what} <= bound at all {int(informative.sum())} informative {points} ({span})"
    if not informative.all():
        reason += f"; vacuous at the other {int((~informative).sum())}"
    return Verdict("reproduced", reason, rule, details)


def informative_horizon(
    bound: Callable[[int], float], trivial: Callable[[int], float], t_start: int = 1, t_max: int = 10**12
) -> int | None:
    """The smallest horizon ``T >= t_start`` with ``bound(T) < trivial(T)`` (None up to ``t_max``).

    Searches by doubling and then bisection, so it assumes that once the bound is informative it
    stays so (true of the ``o(T)`` regret bounds this book checks).
    """
    if bound(t_start) < trivial(t_start):
        return t_start
    lo, hi = t_start, t_start
    while not bound(hi) < trivial(hi):
        lo, hi = hi, hi * 2
        if hi > t_max:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bound(mid) < trivial(mid):
            hi = mid
        else:
            lo = mid
    return hi


def check_paired_close(a: Sequence[float], b: Sequence[float], names: tuple[str, str] = ("a", "b"), z: float = 2.0):
    """A claim of *equality* ("the two give the same regret") of two settings run on common random
    numbers: reproduced when the paired differences ``b - a`` over runs cannot be told from zero
    (``|mean| <= z·se``: indistinguishable), not reproduced when they can."""
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    mean, se = mean_se(diff)
    same = abs(mean) <= z * se
    na, nb = names
    reason = f"{nb} - {na}: mean paired difference {mean:.4g} ± {se:.2g} (se over {diff.size} runs)"
    rule = f"|mean paired difference| <= {z:g} standard errors"
    details = {"mean": mean, "se": se, "n": int(diff.size), "indistinguishable": bool(same)}
    return Verdict("reproduced" if same else "not reproduced", reason, rule, details)


def check_close_to_paper(
    samples: Sequence[float],
    paper: float,
    precision: float,
    z: float = 2.0,
    rel_tol: float = 0.0,
    what: str = "mean",
) -> Verdict:
    """Our mean over runs against a number the paper prints.

    The tolerance is ``z·se + precision/2 + rel_tol·|paper|``: our standard error, half a unit of
    the paper's printed precision (``precision`` = 1 for "566", 0.01 for "0.61"), and an optional
    stated relative allowance for what the paper did not specify. Reproduced within it; ``partly``
    within twice it; not reproduced beyond. Both the mean and its standard error are in the reason.
    """
    mean, se = mean_se(samples)
    n = np.asarray(samples).size
    tol = z * se + float(precision) / 2 + float(rel_tol) * abs(float(paper))
    diff = abs(mean - float(paper))
    rule = (
        f"|{what} - paper| <= {z:g}·se + precision/2 ({_g(precision)}/2)"
        + (f" + {rel_tol:g}·|paper|" if rel_tol else "")
        + "; partly within twice that"
    )
    reason = (
        f"{what} {_g(mean)} ± {_g(se)} (se over {n} runs) vs paper {_g(paper)}: "
        f"difference {_g(diff)}, tolerance {_g(tol)}"
    )
    details = {"mean": mean, "se": se, "n": int(n), "paper": float(paper), "tolerance": tol}
    if diff <= tol:
        return Verdict("reproduced", reason, rule, details)
    if diff <= 2 * tol:
        return Verdict("partly", reason, rule, details)
    return Verdict("not reproduced", reason, rule, details)


def _slope(logt: np.ndarray, logy: np.ndarray) -> np.ndarray:
    """Least-squares slopes of each row of ``logy`` against ``logt``."""
    tc = logt - logt.mean()
    return ((logy - logy.mean(axis=-1, keepdims=True)) @ tc) / float(tc @ tc)


def _growth_exponent(t: np.ndarray, m: np.ndarray) -> float:
    """The growth exponent of one cumulative curve ``m`` at horizons ``t``: one plus the log-log
    slope of its rate ``ΔR/Δt`` against the intervals' geometric midpoints. Intervals over which
    the curve does not increase (noise) are merged with the next until it does; NaN when fewer
    than three increasing intervals remain."""
    starts, ends = [], []
    s = 0
    for j in range(1, t.size):
        if m[j] > m[s]:
            starts.append(s)
            ends.append(j)
            s = j
    if len(starts) < 3:
        return float("nan")
    a, b = np.array(starts), np.array(ends)
    rate = (m[b] - m[a]) / (t[b] - t[a])
    return float(1.0 + _slope(np.log(np.sqrt(t[a] * t[b])), np.log(rate)))


def rate_interval(
    t: Sequence[float],
    curves: np.ndarray,
    fit_from: float = 0.1,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> dict[str, Any]:
    """The growth exponent of a cumulative curve, with a bootstrap interval over runs.

    A cumulative quantity ``R(t) ≈ c + C·t^a`` grows at the rate ``dR/dt ∝ t^(a-1)``, so ``a`` is
    one plus the log-log slope of the increments ``ΔR/Δt`` between consecutive horizons (against
    their geometric midpoints). Unlike the slope of ``log R`` itself, this does not depend on the
    offset ``c`` that a burn-in leaves at any finite horizon: ``a·log t + b`` gives ``a = 0`` and
    ``C·√t + c`` gives ``1/2`` whatever ``b`` and ``c`` are; a log factor ``t^a·log t`` adds
    ``1/log t`` (about 0.1 at ``t = 10^4``). The fit uses the mean curve over runs at the horizons
    ``t_j >= fit_from · max(t)`` (the last part of the run, where a rate shows). The interval
    resamples runs with replacement (``n_boot`` times, from ``SeedSequence(seed)``, so the same
    curves always give the same interval) and takes the central ``level`` quantiles. Intervals over
    which a mean curve does not increase (noise) are merged with the next; a resample left with
    fewer than three increasing intervals has no exponent and is counted in ``not_increasing``.

    Returns a dict with ``slope`` (the exponent of the mean curve), ``low``, ``high``, ``n_runs``,
    ``horizons`` (the fitted ``t``), ``level_slope`` (the plain slope of ``log R``, for reference)
    and ``not_increasing``.

    Raises
    ------
    ValueError
        Fewer than 4 horizons in the window; a mean curve that does not grow over the window ("does
        not grow"); or one that grows over fewer than three intervals ("too irregular").
    """
    t = np.asarray(t, dtype=float)
    y = np.asarray(curves, dtype=float)
    if y.ndim == 1:
        y = y[None, :]
    if y.ndim != 2 or y.shape[1] != t.size:
        raise ValueError(f"curves must have shape (n_runs, {t.size}), got {np.shape(curves)}")
    if np.any(np.diff(t) <= 0) or np.any(t <= 0):
        raise ValueError("the rate test needs positive, strictly increasing horizons")
    sel = t >= fit_from * t.max()
    if sel.sum() < 4:
        raise ValueError(
            f"the rate test needs at least 4 horizons in the last part of the run (t >= {fit_from:g}·max t), "
            f"have {int(sel.sum())}"
        )
    t, y = t[sel], y[:, sel]
    mean = y.mean(axis=0)
    slope = _growth_exponent(t, mean)
    if not math.isfinite(slope):
        if mean[-1] <= mean[0]:
            raise ValueError(
                f"the mean curve does not grow over t = {t[0]:g} .. {t[-1]:g} ({mean[0]:.4g} -> {mean[-1]:.4g})"
            )
        raise ValueError(
            f"the mean curve grows over fewer than 3 intervals of t = {t[0]:g} .. {t[-1]:g}: too irregular for a rate"
        )
    level_slope = float(_slope(np.log(t), np.log(mean))) if np.all(mean > 0) else float("nan")
    n = y.shape[0]
    out = {"slope": slope, "n_runs": int(n), "horizons": t.tolist(), "level_slope": level_slope}
    if n < 2:
        return dict(out, low=float("nan"), high=float("nan"), not_increasing=0)
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    idx = rng.integers(0, n, size=(n_boot, n))
    exps = np.array([_growth_exponent(t, m) for m in y[idx].mean(axis=1)])
    finite = exps[np.isfinite(exps)]
    a = (1 - level) / 2
    low, high = np.quantile(finite, [a, 1 - a]) if finite.size else (float("nan"), float("nan"))
    return dict(out, low=float(low), high=float(high), not_increasing=int(n_boot - finite.size))


def check_rate(
    t: Sequence[float],
    curves: np.ndarray,
    exponent: float,
    mode: str = "equal",
    margin: float = 0.1,
    fit_from: float = 0.1,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
    what: str = "growth exponent (1 + log-log slope of the increments)",
) -> Verdict:
    """The one rate test: does a cumulative quantity grow like ``t^exponent`` (up to log factors)?

    "Logarithmic" is ``exponent = 0``, "like √T" 0.5, "linear" 1; the exponent is measured from the
    curve's increments (:func:`rate_interval`), so a burn-in offset does not bias it.

    The claimed region of slopes is ``[exponent - margin, exponent + margin]`` (``mode="equal"``:
    "grows like T^a") or ``(-inf, exponent + margin]`` (``mode="at_most"``: "grows at most like
    T^a"); ``margin`` is the stated allowance for log factors and finite horizons. With the
    bootstrap interval of :func:`rate_interval`: inside the region → reproduced; disjoint from it →
    not reproduced; overlapping its edge → ``partly`` with the reason "inconclusive" (the runs are
    too few or too noisy to tell).
    """
    if mode not in ("equal", "at_most"):
        raise ValueError(f"mode={mode!r} is not one of ('equal', 'at_most')")
    hi_c = exponent + margin
    lo_c = exponent - margin if mode == "equal" else -math.inf
    region = f"[{_g(lo_c)}, {_g(hi_c)}]" if mode == "equal" else f"at most {_g(hi_c)}"
    rule = (
        f"{level:.0%} bootstrap interval (over runs) of the {what}, fitted for t >= {fit_from:g}·T, "
        f"inside {region} (exponent {_g(exponent)}, margin {_g(margin)} for log factors)"
    )
    base = {"exponent": exponent, "mode": mode, "margin": margin}
    try:
        r = rate_interval(t, curves, fit_from=fit_from, level=level, n_boot=n_boot, seed=seed)
    except ValueError as exc:
        text = str(exc)
        if "does not grow" in text:
            # no growth at all over the last part of the run: at most any t^a with a >= 0
            if mode == "at_most" and hi_c >= 0:
                return Verdict("reproduced", f"{text}: no growth, so at most t^{_g(hi_c)}", rule, base)
            if lo_c > 0:
                return Verdict("not reproduced", f"{text}: no growth, not t^{_g(exponent)}", rule, base)
        if "does not grow" in text or "too irregular" in text:
            return Verdict("partly", f"inconclusive: {text}", rule, base)
        raise
    details = dict(r, exponent=exponent, mode=mode, margin=margin)
    if r["n_runs"] < 2 or not math.isfinite(r["low"]):
        return Verdict("partly", f"inconclusive: exponent {_g(r['slope'])} from one run, no interval", rule, details)
    iv = f"growth exponent {_g(r['slope'])}, interval [{_g(r['low'])}, {_g(r['high'])}] over {r['n_runs']} runs"
    if lo_c <= r["low"] and r["high"] <= hi_c:
        return Verdict("reproduced", f"{iv}, inside {region}", rule, details)
    if r["low"] > hi_c or r["high"] < lo_c:
        return Verdict("not reproduced", f"{iv}, outside {region}", rule, details)
    return Verdict("partly", f"inconclusive: {iv} overlaps the edge of {region}", rule, details)


def check_sublinear(t: Sequence[float], curves: np.ndarray, max_slope: float = 0.9, **kw) -> Verdict:
    """ "Sublinear" as a rate claim: :func:`check_rate` with ``mode="at_most"`` and the stated largest
    slope still called sublinear at this horizon (``max_slope``)."""
    return check_rate(t, curves, exponent=max_slope, mode="at_most", margin=0.0, **kw)


def check_instances(verdicts: Mapping[str, Verdict], criterion: str = "") -> Verdict:
    """A claim about randomly generated instances, judged on each of several instances.

    Reproduced when it holds on every instance, or on every one but those where the compared
    values are indistinguishable (and on at least one); not reproduced when it holds on none;
    ``partly`` otherwise. The reason says "k of n instances"; ``details["instances"]`` keeps each
    instance's verdict and reason.
    """
    if not verdicts:
        raise ValueError("check_instances needs at least one instance")
    held = [k for k, v in verdicts.items() if v.verdict == "reproduced"]
    tied = [k for k, v in verdicts.items() if v.verdict != "reproduced" and v.indistinguishable]
    n = len(verdicts)
    rule = criterion or "holds on every instance (or indistinguishable there), each judged by its own check"
    details = {
        "instances": {k: {"verdict": v.verdict, "reason": v.reason} for k, v in verdicts.items()},
        "held": len(held),
        "n": n,
    }
    reason = f"{len(held)} of {n} instances" + (f" ({len(tied)} more indistinguishable)" if tied else "")
    failed = [k for k in verdicts if k not in held and k not in tied]
    if failed:
        reason += "; fails on " + ", ".join(f"{k} ({verdicts[k].reason})" for k in failed)
    if held and not failed:
        return Verdict("reproduced", reason, rule, details)
    if not held and not tied:
        return Verdict("not reproduced", reason, rule, details)
    return Verdict("partly", reason, rule, details)


def with_sensitivity(main: Verdict, parameter: str, chosen: Any, alternatives: Mapping[Any, Verdict]) -> Verdict:
    """The verdict at our choice of an open ``parameter``, with how it moves over the alternatives.

    When any alternative gives another verdict, ``details["sensitive_to"]`` maps the parameter to
    ``{value: verdict}`` (our choice included) and the reason says "depends on our choice of ...".
    The verdict itself stays the one at our stated choice.
    """
    by_value = {str(chosen): main.verdict} | {str(k): v.verdict for k, v in alternatives.items()}
    details = dict(main.details)
    if len(set(by_value.values())) == 1:
        details.setdefault("robust_to", {})[parameter] = sorted(by_value)
        return Verdict(main.verdict, main.reason, main.criterion, details)
    sens = dict(details.get("sensitive_to", {}))
    sens[parameter] = by_value
    details["sensitive_to"] = sens
    moves = ", ".join(f"{k}: {v}" for k, v in by_value.items())
    reason = f"{main.reason}; depends on our choice of {parameter} ({moves})"
    return Verdict(main.verdict, reason, main.criterion, details)


def check_parts(parts: Mapping[str, Verdict], criterion: str = "", ties_hold: bool = False) -> Verdict:
    """One claim made of several parts, each judged by its own check.

    Reproduced when every part is; not reproduced when every part that could be tested fails (the
    parts not testable here do not rescue it); ``not testable here`` when every part is; ``partly``
    otherwise. With ``ties_hold`` (a claim that allows equality, "at or below"), a part whose
    compared values are indistinguishable counts as holding, provided at least one part holds
    outright (all tied: ``partly``, the runs cannot tell). The reason names every part (only the
    failing ones when there are more than four); ``details["parts"]`` keeps each part's verdict,
    reason and numbers.
    """
    if not parts:
        raise ValueError("check_parts needs at least one part")
    held = [k for k, v in parts.items() if v.verdict == "reproduced"]
    tied = [k for k, v in parts.items() if k not in held and ties_hold and v.indistinguishable]
    failed = [k for k in parts if k not in held and k not in tied]
    n = len(parts)
    details = {
        "parts": {k: {"verdict": v.verdict, "reason": v.reason, **dict(v.details)} for k, v in parts.items()},
        "indistinguishable": all(v.indistinguishable for v in parts.values()),
    }
    shown = list(parts) if n <= 4 else failed
    reason = f"{len(held)} of {n} parts hold" + (f" ({len(tied)} more indistinguishable)" if tied else "")
    if shown:
        reason += "; " + "; ".join(f"{k}: {parts[k].verdict} ({parts[k].reason})" for k in shown)
    rule = criterion or "every part must hold, each by its own check"
    verdicts = {v.verdict for v in parts.values()}
    if verdicts == {"not testable here"}:
        return Verdict("not testable here", reason, rule, details)
    if not failed and held:
        return Verdict("reproduced", reason, rule, details)
    if not failed:  # every part tied: the runs cannot tell
        return Verdict("partly", reason, rule, details)
    if verdicts - {"not testable here"} == {"not reproduced"}:
        return Verdict("not reproduced", reason, rule, details)
    return Verdict("partly", reason, rule, details)


def check_paired_lower(
    low: Sequence[float], high: Sequence[float], names: tuple[str, str], margin: float = 0.0, z: float = 2.0
) -> Verdict:
    """``names[0]`` is lower than ``names[1]`` (by more than ``margin``), on the per-run values
    paired by run: :func:`check_paired_order` on ``low + margin`` and ``high``, with the mean and
    standard error of the difference in the reason."""
    a, b = names
    if margin:
        a = f"({a} + {margin:g})"
    lo = np.asarray(low, dtype=float) + float(margin)
    v = check_paired_order({a: lo, b: np.asarray(high, dtype=float)}, [a, b], z=z)
    d = v.details["paired_differences"][f"{b} - {a}"]
    reason = f"{b} - {a}: mean paired difference {d['mean']:.4g} ± {d['se']:.2g} (se over {d['n']} runs)"
    if np.all(lo == np.asarray(high, dtype=float)):
        reason += " (equal in every run)"
    elif v.indistinguishable:
        reason += " (within noise)"
    return Verdict(v.verdict, reason, v.criterion, v.details)


def check_mean_above(
    samples: Sequence[float], limit: float, z: float = 2.0, what: str = "mean", unit: str = "runs"
) -> Verdict:
    """Reproduced iff the mean of ``samples`` is above ``limit`` by more than ``z`` standard errors;
    not reproduced iff below it by more than ``z`` standard errors; ``partly`` (within noise,
    indistinguishable) otherwise. The mirror of :func:`check_mean_below`; ``unit`` names what the
    samples are (runs, rounds, data sets)."""
    mean, se = mean_se(samples)
    n = np.asarray(samples).size
    rule = f"{what} - {z:g}·se > {_g(limit)} (reproduced) / {what} + {z:g}·se < limit (not reproduced)"
    reason = f"{what} = {_g(mean)} ± {_g(se)} (se over {n} {unit}) vs {_g(limit)}"
    details = {"mean": mean, "se": se, "n": int(n), "limit": float(limit)}
    if mean - z * se > limit:
        return Verdict("reproduced", reason, rule, details)
    if mean + z * se < limit:
        return Verdict("not reproduced", reason, rule, details)
    return Verdict("partly", reason + " (within noise)", rule, dict(details, indistinguishable=True))


def negate(verdict: Verdict, statement: str) -> Verdict:
    """The verdict of the negation of a checked statement ("does *not* grow at most like √T"):
    reproduced and not reproduced swap; ``partly`` and ``not testable here`` stay."""
    swap = {"reproduced": "not reproduced", "not reproduced": "reproduced"}
    return Verdict(
        swap.get(verdict.verdict, verdict.verdict),
        f"{statement}: the test of its negation says {verdict.verdict} ({verdict.reason})",
        f"the negation of: {verdict.criterion}",
        verdict.details,
    )


def check_bootstrap_increase(
    statistic: Callable[[np.ndarray], float],
    low: np.ndarray,
    high: np.ndarray,
    what: str = "statistic",
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Verdict:
    """Does a statistic of the runs (a standard deviation, a ratio of means) increase from setting
    ``low`` to setting ``high``? Rows are runs, paired (replication ``i`` of both shares its random
    numbers); runs are resampled jointly ``n_boot`` times (from ``SeedSequence(seed)``) and the
    central ``level`` interval of ``statistic(high) - statistic(low)`` decides: above 0
    reproduced, below 0 not reproduced, containing 0 ``partly`` (indistinguishable)."""
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if low.shape[0] != high.shape[0] or low.shape[0] < 2:
        raise ValueError("check_bootstrap_increase needs at least 2 paired runs in both settings")
    n = low.shape[0]
    diff = float(statistic(high) - statistic(low))
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    idx = rng.integers(0, n, size=(n_boot, n))
    boots = np.array([statistic(high[i]) - statistic(low[i]) for i in idx])
    a = (1 - level) / 2
    lo, hi = (float(x) for x in np.quantile(boots, [a, 1 - a]))
    rule = f"{level:.0%} bootstrap interval (runs resampled jointly) of the increase of the {what} above 0"
    reason = f"increase of the {what} {_g(diff)}, interval [{_g(lo)}, {_g(hi)}] over {n} paired runs"
    details = {"increase": diff, "low": lo, "high": hi, "n": int(n), "indistinguishable": bool(lo <= 0 <= hi)}
    if lo > 0:
        return Verdict("reproduced", reason, rule, details)
    if hi < 0:
        return Verdict("not reproduced", reason, rule, details)
    return Verdict("partly", reason + " (indistinguishable)", rule, details)
