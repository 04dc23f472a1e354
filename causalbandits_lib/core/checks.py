"""The statistical checks behind verdicts: measured numbers in, a :class:`Verdict` out.

A verdict is never typed in: it is the output of one of the check functions below, applied to
measured numbers, and the check's rule is stored beside it (``criterion``) so a reader can see
exactly what was compared with what. Every check also keeps **its own inputs** (``Verdict.check``
and ``Verdict.inputs``; :meth:`Verdict.evidence` gives them as JSON), so a record can be judged
again from what it stores alone (:func:`rejudge`), with these checks or with another rule.

The four verdicts:

- ``reproduced``: the measurement satisfies the paper's statement under the stated rule;
- ``partly``: some of the statement's parts (or instances) hold and others are contradicted, or
  hold on fewer than half;
- ``not reproduced``: the measurement contradicts the statement;
- ``not testable here``: the statement cannot be checked with what is available; the reason says
  why: *underpowered* (the runs cannot tell, with the runs a test of 80% power would need),
  *vacuous* (a bound not below half the trivial bound), a synthetic *stand-in* for a real data set,
  or a missing figure (:func:`not_testable`).

Every claim also has a **kind** (:data:`KINDS`): ``experiment`` and ``theorem`` are the results a
reader cites (:data:`RESULT_KINDS`); ``identity`` and ``construction`` check our implementation
and are counted apart. A result is judged by a check that reports a measured margin and its
uncertainty; :func:`check_all` over booleans is for identities and constructions only (the
notebook session refuses it for a result, :func:`uses_check`).

The standard of evidence (each rule is a constant of this module, so no notebook can move it):

- **three outcomes per test**: each elementary test says *holds*, *contradicted* or
  *inconclusive* (:func:`status`); inconclusive is never counted as support;
- **one aggregation rule** for the instances of a random claim (:func:`check_instances`), the parts
  of a composite claim (:func:`check_parts`) and the pairs of an ordering: reproduced when it holds
  on at least half and is contradicted on none (and no part is itself only partly reproduced); not
  reproduced when contradicted on at least half; not testable (underpowered) when inconclusive on
  all, with the runs 80% power would need; partly otherwise;
- **orderings** on paired differences over runs that share their random numbers, against
  :data:`Z` standard errors (:func:`check_paired_order`, :func:`check_paired_lower`);
- **equalities** by an equivalence test (two one-sided t-tests at level :data:`EQUIVALENCE_ALPHA`,
  TOST) against a :class:`Margin` stated with the claim (:func:`check_equivalent`,
  :func:`check_close_to_paper`; :func:`check_close` for exact numbers): more runs make an
  equivalence easier to show, never harder;
- **bounds** are tested only where informative, below :data:`INFORMATIVE_BELOW` of the trivial
  bound (:func:`check_bound`, :func:`check_bound_curve`);
- **rates** by one protocol (:func:`check_rate`): the growth exponent at the horizons
  :data:`RATE_HORIZONS` of the run, each with a jackknife t-interval over at least
  :data:`RATE_MIN_RUNS` runs, against one margin :data:`RATE_MARGIN`; "sublinear" means the
  interval's upper end is below 1 (:func:`check_sublinear`); an exponential rate is tested on the
  log of the error against the budget (:func:`check_exponential_decay`);
- a claim that rests on a choice the paper left open records how its verdict moves with that
  choice (:func:`with_sensitivity`).

Checks put the numbers behind a verdict in ``Verdict.details`` (means, standard errors, ratios,
per-instance verdicts), which records keep beside the claim.
"""

from __future__ import annotations

import base64
import functools
import inspect
import math
import zlib
from dataclasses import dataclass, field, replace
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import stats

__all__ = [
    "VERDICTS",
    "KINDS",
    "RESULT_KINDS",
    "share_interval",
    "STATUSES",
    "Z",
    "POWER",
    "EQUIVALENCE_ALPHA",
    "INFORMATIVE_BELOW",
    "RATE_MARGIN",
    "RATE_MIN_RUNS",
    "RATE_HORIZONS",
    "RATE_LEVEL",
    "Margin",
    "Verdict",
    "status",
    "mean_se",
    "check_bound",
    "check_bound_curve",
    "check_mean_below_bound",
    "informative_horizon",
    "check_equivalent",
    "check_close_to_paper",
    "rate_interval",
    "shape_exponent",
    "check_rate",
    "check_sublinear",
    "check_slope_below",
    "check_exponential_decay",
    "check_instances",
    "with_sensitivity",
    "check_parts",
    "check_some",
    "check_paired_lower",
    "check_falls",
    "check_mean_above",
    "negate",
    "check_bootstrap_increase",
    "STATISTICS",
    "check_all",
    "check_at_most",
    "check_at_least",
    "check_close",
    "check_order",
    "check_mean_below",
    "check_paired_order",
    "not_testable",
    "on_stand_in",
    "rejudge",
    "uses_check",
    "encode",
    "decode",
]

VERDICTS = ("reproduced", "partly", "not reproduced", "not testable here")
KINDS = ("experiment", "theorem", "identity", "construction")
#: The kinds whose verdicts are results of the reproduction (the others check our implementation).
RESULT_KINDS = ("experiment", "theorem")
#: What one test (an instance, a part, a pair) says: see :func:`status`.
STATUSES = ("holds", "contradicted", "inconclusive", "mixed")

#: Standard errors a paired difference or a mean must clear to decide an ordering or a limit.
Z = 2.0
#: The power the "runs needed" of an underpowered test aims at.
POWER = 0.8
#: Level of each one-sided test of an equivalence (TOST): a 90% interval inside the margin.
EQUIVALENCE_ALPHA = 0.05
#: A bound is informative (testable) where it is below this fraction of the trivial bound.
INFORMATIVE_BELOW = 0.5
#: The one margin of every rate claim ("grows like t^a" means an exponent within a ± this).
RATE_MARGIN = 0.1
#: The fewest runs a rate test judges on; with fewer it is inconclusive (underpowered).
RATE_MIN_RUNS = 20
#: The horizons (fractions of the run's last checkpoint) at which every rate is tested.
RATE_HORIZONS = (0.25, 0.5, 1.0)
#: The level of the rate's interval (jackknife over runs, Student t quantile).
RATE_LEVEL = 0.95
#: Each horizon h is fitted over the checkpoints in [RATE_FIT_FROM·h, h].
RATE_FIT_FROM = 0.1


@dataclass(frozen=True)
class Margin:
    """An equivalence margin stated with a claim: ``|difference| < value`` counts as "the same".

    ``basis`` says where the number comes from (the paper's figure resolution, its own tolerance,
    a stated fraction of the effect); ``claim`` names the claim it was stated for. Margins are
    committed with the claims, before any record (``notebooks/<chapter>/margins.yml``, read by the
    notebook session), never chosen after a result.
    """

    value: float
    basis: str
    claim: str = ""

    def __post_init__(self):
        v = float(self.value)
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"margin {self.claim or ''}: value must be a positive number, got {self.value!r}")
        if not str(self.basis).strip():
            raise ValueError(f"margin {self.claim or ''}: the basis of the margin must be stated")
        object.__setattr__(self, "value", v)

    def __str__(self) -> str:
        return f"±{_g(self.value)} ({self.basis})"


@dataclass(frozen=True)
class Verdict:
    """The outcome of a check: the verdict, a one-line reason with the numbers, and the rule.

    ``details`` holds the numbers behind the verdict (plain JSON values: means, standard errors,
    ratios, per-instance verdicts); ``check`` and ``inputs`` name the check that gave it and the
    arguments it was given, so that :func:`rejudge` can compute it again. None of the three takes
    part in equality.
    """

    verdict: str
    reason: str
    criterion: str
    details: Mapping[str, Any] = field(default_factory=dict, compare=False)
    check: str | None = field(default=None, compare=False)
    inputs: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict {self.verdict!r} is not one of {VERDICTS}")

    @property
    def indistinguishable(self) -> bool:
        """True when the check could not tell (an inconclusive test)."""
        return bool(self.details.get("inconclusive", False) or self.details.get("indistinguishable", False))

    @property
    def status(self) -> str:
        return status(self)

    def evidence(self) -> dict[str, Any] | None:
        """The check and its inputs as plain JSON (None for a verdict no check produced)."""
        if self.check is None:
            return None
        return {"check": self.check, "inputs": self.inputs}


def status(v: Verdict) -> str:
    """What one test says of a claim: ``holds`` (reproduced), ``contradicted`` (not reproduced),
    ``mixed`` (partly: some of its own parts contradicted) or ``inconclusive`` (not testable here,
    whether underpowered, vacuous or on a stand-in)."""
    return {"reproduced": "holds", "not reproduced": "contradicted", "partly": "mixed"}.get(v.verdict, "inconclusive")


def _g(x: float) -> str:
    return f"{x:.4g}"


# -- evidence: every check keeps its inputs, so that a verdict can be computed again --------------

_CHECKS: dict[str, Any] = {}
#: Inline arrays up to this many elements; larger ones are stored compressed (zlib, base64).
_INLINE = 64


def encode(value: Any) -> Any:
    """A check's argument as plain JSON that :func:`decode` turns back into an equal value
    (arrays bit for bit; tuples, the order and types of mapping keys, non-finite floats, margins
    and verdicts kept)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, np.integer)) and not isinstance(value, np.bool_):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return v if math.isfinite(v) else {"__float__": repr(v)}
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.ndarray):
        a = np.ascontiguousarray(value)
        if a.dtype == object:
            return {"__list__": [encode(x) for x in a.tolist()]}
        meta = {"dtype": a.dtype.newbyteorder("<").str, "shape": list(a.shape)}
        if a.size <= _INLINE:
            return {"__array__": dict(meta, data=[encode(x) for x in a.ravel().tolist()])}
        raw = zlib.compress(a.astype(meta["dtype"], copy=False).tobytes(), 9)
        return {"__array__": dict(meta, zlib=base64.b64encode(raw).decode("ascii"))}
    if isinstance(value, Margin):
        return {"__margin__": {"value": value.value, "basis": value.basis, "claim": value.claim}}
    if isinstance(value, Verdict):
        if value.check is not None:
            return {"__verdict__": value.evidence()}
        return {"__fixed_verdict__": {"verdict": value.verdict, "reason": value.reason, "criterion": value.criterion}}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(x) for x in value]}
    if isinstance(value, list):
        return [encode(x) for x in value]
    if isinstance(value, Mapping):
        # as pairs, so that the order survives a record written with sorted keys (a check's reason
        # lists its parts in the order given)
        return {"__items__": [[encode(k), encode(v)] for k, v in value.items()]}
    raise TypeError(
        f"a check's input must be numbers, arrays, strings, margins or verdicts, not {type(value).__name__}: "
        "name it (e.g. a statistic of STATISTICS) so that the record can be judged again"
    )


def decode(value: Any) -> Any:
    """The inverse of :func:`encode`."""
    if isinstance(value, list):
        return [decode(x) for x in value]
    if not isinstance(value, dict):
        return value
    if len(value) == 1:
        ((key, body),) = value.items()
        if key == "__float__":
            return float(body)
        if key == "__list__":
            return np.array([decode(x) for x in body] + [None], dtype=object)[:-1]
        if key == "__array__":
            if "data" in body:
                return np.array([decode(x) for x in body["data"]], dtype=body["dtype"]).reshape(body["shape"])
            raw = zlib.decompress(base64.b64decode(body["zlib"]))
            return np.frombuffer(raw, dtype=body["dtype"]).reshape(body["shape"]).copy()
        if key == "__margin__":
            return Margin(body["value"], body["basis"], body.get("claim", ""))
        if key == "__verdict__":
            return rejudge(body)
        if key == "__fixed_verdict__":
            return Verdict(body["verdict"], body["reason"], body["criterion"])
        if key == "__tuple__":
            return tuple(decode(x) for x in body)
        if key == "__items__":
            return {decode(k): decode(v) for k, v in body}
    return {k: decode(v) for k, v in value.items()}


def _recorded(fn):
    """Register a check: its verdict keeps the check's name and its arguments (encoded)."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def check(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        v = fn(*args, **kwargs)
        return replace(v, check=fn.__name__, inputs={k: encode(a) for k, a in bound.arguments.items()})

    _CHECKS[fn.__name__] = fn
    return check


def rejudge(evidence: Mapping[str, Any]) -> Verdict:
    """The verdict of a recorded check computed again from its stored inputs (``{"check": name,
    "inputs": {...}}``, as :meth:`Verdict.evidence` gives it) with the checks of this module."""
    name = evidence.get("check")
    if name not in _CHECKS:
        raise ValueError(f"rejudge: unknown check {name!r}; known: {', '.join(sorted(_CHECKS))}")
    kwargs = {k: decode(v) for k, v in (evidence.get("inputs") or {}).items()}
    return globals()[name](**kwargs)


def uses_check(evidence: Mapping[str, Any] | None, name: str) -> bool:
    """Whether the recorded check ``evidence``, or any verdict among its inputs, is ``name``."""

    def walk(x) -> bool:
        if isinstance(x, dict):
            if "__verdict__" in x and len(x) == 1:
                return uses_check(x["__verdict__"], name)
            return any(walk(v) for v in x.values())
        if isinstance(x, list):
            return any(walk(v) for v in x)
        return False

    if not evidence:
        return False
    return evidence.get("check") == name or walk(evidence.get("inputs"))


# -- power: how many runs a test that could not tell would need --------------------------------


def _runs_for_power(sd: float, effect: float, z_alpha: float) -> int | None:
    """Runs for which a one-sided test at ``z_alpha`` detects ``effect`` with :data:`POWER`, for
    the per-run spread ``sd`` (normal approximation; None when the effect is 0)."""
    if not (math.isfinite(sd) and math.isfinite(effect)) or effect == 0:
        return None
    n = ((z_alpha + stats.norm.ppf(POWER)) * sd / abs(effect)) ** 2
    return int(math.ceil(max(n, 2.0)))


def _underpowered(reason: str, rule: str, details: Mapping[str, Any]) -> Verdict:
    need = details.get("runs_for_power")
    text = f"underpowered: {reason}"
    text += (
        f"; about {need:,} runs would give {POWER:.0%} power at the observed difference"
        if need
        else "; no difference observed, so no number of runs is implied"
    )
    return Verdict("not testable here", text, rule, dict(details, inconclusive=True))


# -- aggregation: one rule for instances, parts and pairs ------------------------------------------


def _aggregate(verdicts: Mapping[Any, Verdict], unit: str, rule: str, show: int = 4) -> Verdict:
    """The book's one rule over several tests of one claim (instances, parts or pairs): reproduced
    when it holds on at least half and is contradicted on none (no test only partly reproduced);
    not reproduced when contradicted on at least half; not testable when inconclusive on all
    (underpowered, with the most runs any of them needs, when they were underpowered); partly
    otherwise."""
    if not verdicts:
        raise ValueError(f"the aggregation over {unit} needs at least one")
    st = {k: status(v) for k, v in verdicts.items()}
    n = len(st)
    count = {s: sum(x == s for x in st.values()) for s in STATUSES}
    needs = [v.details.get("runs_for_power") for v in verdicts.values() if status(v) == "inconclusive"]
    needs = [int(x) for x in needs if x]
    details = {
        unit: {
            str(k): {"verdict": v.verdict, "status": st[k], "reason": v.reason, **dict(v.details)}
            for k, v in verdicts.items()
        },
        **count,
        "n": n,
    }
    if needs:
        details["runs_for_power"] = max(needs)
    head = f"holds on {count['holds']} of {n} {unit}"
    extra = [f"{count[s]} {s}" for s in ("contradicted", "mixed", "inconclusive") if count[s]]
    reason = head + (f" ({', '.join(extra)})" if extra else "")
    if unit == "instances":
        lo, hi = share_interval(count["holds"], n)
        details["share_holds"] = {"share": count["holds"] / n, "low": lo, "high": hi, "level": SHARE_LEVEL}
        reason += f" [share {count['holds'] / n:.2g}, {SHARE_LEVEL:.0%} interval {lo:.2f} to {hi:.2f}]"
    listed = list(verdicts) if n <= show else [k for k in verdicts if st[k] != "holds"]
    if listed:
        reason += "; " + "; ".join(f"{k}: {verdicts[k].verdict} ({verdicts[k].reason})" for k in listed)
    if count["inconclusive"] == n:
        # an aggregate that was not testable for a reason other than power says so
        # (``underpowered: False``), so that the aggregate above it is not called underpowered
        if all(v.indistinguishable and v.details.get("underpowered", True) for v in verdicts.values()):
            return _underpowered(f"inconclusive on all {n} {unit}; " + reason, rule, details)
        return Verdict("not testable here", reason, rule, dict(details, inconclusive=True, underpowered=False))
    if 2 * count["holds"] >= n and count["contradicted"] == 0 and count["mixed"] == 0:
        return Verdict("reproduced", reason, rule, details)
    if 2 * count["contradicted"] >= n:
        return Verdict("not reproduced", reason, rule, details)
    return Verdict("partly", reason, rule, details)


_RULE = (
    "holds on at least half of the {u} and contradicted on none, wholly or in part: reproduced; contradicted on "
    "at least half: not reproduced; inconclusive on all: not testable (underpowered); partly otherwise"
)

#: Confidence of the interval on the share of instances where a claim holds.
SHARE_LEVEL = 0.95


def share_interval(k: int, n: int, level: float = SHARE_LEVEL) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval on the share of instances where a claim holds, from
    ``k`` of ``n``: how far a few more instances could move a "k of n" verdict."""
    ci = stats.binomtest(int(k), int(n)).proportion_ci(confidence_level=level, method="exact")
    return float(ci.low), float(ci.high)


@_recorded
def check_instances(verdicts: Mapping[Any, Verdict], criterion: str = "") -> Verdict:
    """A claim about randomly generated instances, judged on each of several instances by the book's
    one rule (:func:`_aggregate`); ``details["instances"]`` keeps each instance's verdict, status and
    reason, and the counts of each status."""
    rule = (criterion + "; " if criterion else "each instance by its own check; ") + _RULE.format(u="instances")
    return _aggregate(verdicts, "instances", rule)


@_recorded
def check_parts(parts: Mapping[str, Verdict], criterion: str = "") -> Verdict:
    """One claim made of several parts, each judged by its own check, combined by the book's one
    rule (the same words as for instances). When every part is not testable for a reason other
    than power (vacuous, stand-in) the claim is not testable with those reasons."""
    rule = (criterion + "; " if criterion else "each part by its own check; ") + _RULE.format(u="parts")
    return _aggregate(parts, "parts", rule)


@_recorded
def check_some(parts: Mapping[str, Verdict], criterion: str, none_reason: str = "") -> Verdict:
    """A claim that *some* of several candidates has a property: reproduced when at least one
    holds; not reproduced when every one is contradicted (or there is none: ``none_reason``);
    not testable (underpowered) when none holds and none is decided; partly otherwise."""
    if not parts:
        return Verdict("not reproduced", none_reason or "no candidate", criterion, {"n": 0})
    st = {k: status(v) for k, v in parts.items()}
    details = {"parts": {k: {"verdict": v.verdict, "status": st[k], "reason": v.reason} for k, v in parts.items()}}
    reason = "; ".join(f"{k}: {v.verdict} ({v.reason})" for k, v in parts.items())
    if "holds" in st.values():
        return Verdict("reproduced", reason, criterion, details)
    if set(st.values()) == {"contradicted"}:
        return Verdict("not reproduced", reason, criterion, details)
    if set(st.values()) == {"inconclusive"}:
        needs = [v.details.get("runs_for_power") for v in parts.values()]
        needs = [int(x) for x in needs if x]
        return _underpowered(reason, criterion, dict(details, **({"runs_for_power": min(needs)} if needs else {})))
    return Verdict("partly", reason, criterion, details)


@_recorded
def check_all(checks: Mapping[str, bool], criterion: str = "") -> Verdict:
    """Several boolean parts of an *identity or construction* (a check of our code, not a result):
    all hold → reproduced, none → not reproduced, else partly. A result of the reproduction is
    judged by a check that reports a measured margin and its uncertainty instead."""
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


@_recorded
def check_at_most(measured: float, limit: float, what: str = "measured", limit_what: str | None = None) -> Verdict:
    """An exact (deterministic) number at or below a limit: reproduced iff ``measured <= limit``.
    The margin ``limit - measured`` is in the details, with uncertainty 0 (exact); a mean over runs
    goes through :func:`check_mean_below` instead. No allowance: a limit is what the claim states."""
    ok = float(measured) <= float(limit)
    details = {"measured": float(measured), "limit": float(limit), "margin": float(limit) - float(measured), "se": 0.0}
    return Verdict(
        "reproduced" if ok else "not reproduced",
        f"{what} = {_g(measured)} {'<=' if ok else '>'} {_named(limit_what, limit)}",
        f"{what} <= {_named(limit_what, limit)} (exact)",
        details,
    )


@_recorded
def check_at_least(measured: float, limit: float, what: str = "measured", limit_what: str | None = None) -> Verdict:
    """An exact number at or above a limit: reproduced iff ``measured >= limit`` (see
    :func:`check_at_most`)."""
    ok = float(measured) >= float(limit)
    details = {"measured": float(measured), "limit": float(limit), "margin": float(measured) - float(limit), "se": 0.0}
    return Verdict(
        "reproduced" if ok else "not reproduced",
        f"{what} = {_g(measured)} {'>=' if ok else '<'} {_named(limit_what, limit)}",
        f"{what} >= {_named(limit_what, limit)} (exact)",
        details,
    )


def _margin(margin: Any, where: str) -> Margin:
    if not isinstance(margin, Margin):
        raise TypeError(
            f"{where}: an equivalence needs a Margin stated with the claim (nb.margin(claim_id) reads it from "
            f"notebooks/<chapter>/margins.yml), not {type(margin).__name__}"
        )
    return margin


@_recorded
def check_close(measured: float, paper: float, margin: Margin, what: str = "measured") -> Verdict:
    """Two exact (deterministic) numbers are the same within the claim's margin: reproduced iff
    ``|measured - paper| < margin``, else not reproduced."""
    m = _margin(margin, "check_close")
    diff = abs(float(measured) - float(paper))
    rule = f"|{what} - paper| < margin {m} (exact numbers)"
    reason = f"{what} {_g(measured)} vs paper {_g(paper)}: difference {_g(diff)}, margin {_g(m.value)}"
    details = {"measured": float(measured), "paper": float(paper), "difference": diff, "margin": m.value, "se": 0.0}
    return Verdict("reproduced" if diff < m.value else "not reproduced", reason, rule, details)


@_recorded
def check_order(
    values: Mapping[str, float], expected: Sequence[str], descending: bool = True, margin: float = 0.0
) -> Verdict:
    """An ordering of exact numbers such as ``a > b > c`` (for identities: orderings of random
    runs go through :func:`check_paired_order`). All consecutive pairs hold → reproduced; none →
    not reproduced; else partly."""
    for name in expected:
        if name not in values:
            raise KeyError(f"check_order: no value for {name!r}; have {sorted(values)}")
    sign = ">" if descending else "<"
    parts = {}
    for a, b in zip(expected, expected[1:]):
        va, vb = float(values[a]), float(values[b])
        ok = (va - vb > margin) if descending else (vb - va > margin)
        parts[f"{a} ({_g(va)}) {sign} {b} ({_g(vb)})"] = ok
    rule = f" {sign} ".join(expected) + (f" with margin {margin:g}" if margin else "")
    v = _CHECKS["check_all"](parts, rule)
    if v.verdict == "reproduced":
        return Verdict("reproduced", "; ".join(parts), rule)
    return v


def _one_sided(samples: Sequence[float], limit: float, above: bool, what: str, unit: str) -> Verdict:
    mean, se = mean_se(samples)
    n = int(np.asarray(samples).size)
    sd = se * math.sqrt(n)
    sign, other = (">", "<") if above else ("<", ">")
    rule = (
        f"{what} {'-' if above else '+'} {Z:g}·se {sign} {_g(limit)} (reproduced) / "
        f"{what} {'+' if above else '-'} {Z:g}·se {other} limit (not reproduced)"
    )
    reason = f"{what} = {_g(mean)} ± {_g(se)} (se over {n} {unit}) vs {_g(limit)}"
    details = {"mean": mean, "se": se, "n": n, "limit": float(limit)}
    gap = (mean - limit) if above else (limit - mean)
    if gap - Z * se > 0:
        return Verdict("reproduced", reason, rule, details)
    if gap + Z * se < 0:
        return Verdict("not reproduced", reason, rule, details)
    details["runs_for_power"] = _runs_for_power(sd, gap, Z)
    return _underpowered(reason + " (within noise)", rule, details)


@_recorded
def check_mean_below(samples: Sequence[float], limit: float, what: str = "mean", unit: str = "runs") -> Verdict:
    """Reproduced iff the mean of ``samples`` is below ``limit`` by more than :data:`Z` standard
    errors; not reproduced iff above it by more than that; otherwise inconclusive (not testable
    here, underpowered, with the runs 80% power would need)."""
    return _one_sided(samples, limit, False, what, unit)


@_recorded
def check_mean_above(samples: Sequence[float], limit: float, what: str = "mean", unit: str = "runs") -> Verdict:
    """The mirror of :func:`check_mean_below`; ``unit`` names what the samples are (runs, rounds,
    data sets)."""
    return _one_sided(samples, limit, True, what, unit)


@_recorded
def not_testable(reason: str) -> Verdict:
    """The claim cannot be checked here; ``reason`` says why (missing data, missing figure, ...)."""
    if not reason.strip():
        raise ValueError("not_testable needs a reason")
    return Verdict("not testable here", reason, "not checked")


@_recorded
def on_stand_in(result: Verdict, datasets: Sequence[str]) -> Verdict:
    """A claim about a real data set measured on its synthetic stand-in: never reproduced or not
    reproduced; ``not testable here (stand-in)`` with the stand-in's verdict and measurement beside
    it (in the reason and ``details["on_stand_in"]``)."""
    names = ", ".join(datasets)
    return Verdict(
        "not testable here",
        f"stand-in: judged on the synthetic stand-in for {names}, not the real data set; "
        f"on the stand-in: {result.verdict} ({result.reason})",
        f"a claim about {names} is judged on the real data only",
        {"stand_in": list(datasets), "on_stand_in": {"verdict": result.verdict, **dict(result.details)}},
    )


def _pair(a: np.ndarray, b: np.ndarray, label: str) -> tuple[str, Verdict]:
    """One strict ordering ``a < b`` on paired differences ``b - a``: holds when the mean exceeds
    0 by more than Z se, contradicted when below 0 by more than that or equal in every run,
    inconclusive otherwise."""
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    mean, se = mean_se(diff)
    n = int(diff.size)
    details = {"mean": mean, "se": se, "n": n}
    text = f"mean difference {mean:.4g} ± {se:.2g} (se over {n} runs)"
    rule = f"{label}, by more than {Z:g} standard errors of the paired differences"
    if np.all(diff == 0):
        return text, Verdict("not reproduced", text + " (equal in every run)", rule, dict(details, tie=True))
    if mean - Z * se > 0:
        return text, Verdict("reproduced", text, rule, details)
    if mean + Z * se < 0:
        return text, Verdict("not reproduced", text, rule, details)
    details["runs_for_power"] = _runs_for_power(float(diff.std(ddof=1)) if n > 1 else math.nan, mean, Z)
    return text, _underpowered(text + " (within noise)", rule, details)


@_recorded
def check_paired_order(values: Mapping[str, np.ndarray], expected: Sequence[str]) -> Verdict:
    """An ordering ``expected[0] < expected[1] < ...`` of per-run values on common random numbers.

    Each consecutive pair is judged on the paired differences across runs (replication ``i`` of
    every algorithm faces the same contexts and noise): it holds when the mean difference is
    positive by more than :data:`Z` standard errors, is contradicted when negative by more than
    that (or zero in every run: a strict ordering fails), and is inconclusive otherwise. One pair:
    its outcome; several: the book's one rule over the pairs."""
    pairs, diffs = {}, {}
    for a, b in zip(expected, expected[1:]):
        _, v = _pair(values[a], values[b], f"{a} < {b}")
        pairs[f"{a} < {b}"] = v
        diffs[f"{b} - {a}"] = {k: v.details[k] for k in ("mean", "se", "n")}
    rule = " < ".join(expected) + f", each pair by more than {Z:g} standard errors of the paired differences"
    if len(pairs) == 1:
        ((label, v),) = pairs.items()
        return Verdict(v.verdict, f"{label}: {v.reason}", rule, dict(v.details, paired_differences=diffs))
    out = _aggregate(pairs, "pairs", rule + "; " + _RULE.format(u="pairs"))
    return Verdict(out.verdict, out.reason, out.criterion, dict(out.details, paired_differences=diffs))


@_recorded
def check_paired_lower(
    low: Sequence[float], high: Sequence[float], names: tuple[str, str], margin: float = 0.0
) -> Verdict:
    """``names[0]`` is lower than ``names[1]`` (by more than ``margin``, a number stated with the
    claim), on the per-run values paired by run (:func:`_pair` on ``low + margin`` and ``high``)."""
    a, b = names
    if margin:
        a = f"({a} + {margin:g})"
    lo = np.asarray(low, dtype=float) + float(margin)
    text, v = _pair(lo, np.asarray(high, dtype=float), f"{a} < {b}")
    rule = f"{a} < {b}, by more than {Z:g} standard errors of the paired differences"
    reason = v.reason.replace("mean difference", f"{b} - {a}: mean paired difference", 1)
    return Verdict(v.verdict, reason, rule, v.details)


@_recorded
def check_falls(first: Sequence[float], last: Sequence[float], names: tuple[str, str] = ("last", "first")) -> Verdict:
    """A per-run quantity falls from ``first`` to ``last`` (paired by run, :func:`check_paired_lower`);
    zero in every run at both ends leaves nothing to fall and holds (stated with the claims)."""
    first, last = np.asarray(first, dtype=float), np.asarray(last, dtype=float)
    if not first.any() and not last.any():
        rule = f"{names[0]} < {names[1]} by more than {Z:g} standard errors of the paired differences, or 0 at both"
        return Verdict("reproduced", f"0 in all {first.size} runs at both ends: nothing to fall", rule)
    return _CHECKS["check_paired_lower"](last, first, names)


# -- equalities: two one-sided tests against a stated margin ---------------------------------------


def _tost(diff: np.ndarray, m: Margin, label: str, unit: str) -> Verdict:
    """TOST on the differences ``diff`` (paired, or samples minus the paper's number) against
    ``m``: the (1 - 2α) t-interval of the mean inside ``(-m, m)`` → holds (equivalent); entirely
    outside it → contradicted (different by more than the margin); otherwise inconclusive."""
    diff = np.asarray(diff, dtype=float).ravel()
    mean, se = mean_se(diff)
    n = int(diff.size)
    q = float(stats.t.ppf(1 - EQUIVALENCE_ALPHA, n - 1)) if n > 1 else math.inf
    lo, hi = (mean, mean) if se == 0 else (mean - q * se, mean + q * se)
    level = f"{1 - 2 * EQUIVALENCE_ALPHA:.0%}"
    rule = (
        f"equivalence (two one-sided t-tests at {EQUIVALENCE_ALPHA:g}): the {level} interval of the mean "
        f"{label} inside (-m, m) for the margin m = {m}; entirely outside it: different"
    )
    details = {"mean": mean, "se": se, "n": n, "low": lo, "high": hi, "margin": m.value, "margin_basis": m.basis}
    reason = (
        f"{label} {_g(mean)} ± {_g(se)} (se over {n} {unit}), {level} interval [{_g(lo)}, {_g(hi)}], "
        f"margin ±{_g(m.value)}"
    )
    if n < 2 and se == 0 and not np.all(diff == diff[0]):
        return _underpowered(reason + " (one run)", rule, details)
    if -m.value < lo and hi < m.value:
        return Verdict("reproduced", reason + ": inside", rule, details)
    if lo >= m.value or hi <= -m.value:
        return Verdict("not reproduced", reason + ": outside", rule, details)
    sd = se * math.sqrt(n)
    gap = m.value - abs(mean)
    z = float(stats.norm.ppf(1 - EQUIVALENCE_ALPHA))
    details["runs_for_power"] = _runs_for_power(sd, gap, z)
    return _underpowered(reason + ": overlaps the margin's edge", rule, details)


@_recorded
def check_equivalent(a: Sequence[float], b: Sequence[float], names: tuple[str, str], margin: Margin) -> Verdict:
    """A claim of *equality* ("CSR-V1 performs about like TS-V1") of two settings run on common
    random numbers, by an equivalence test on the paired differences ``b - a`` against the margin
    stated with the claim: equivalent → reproduced; different by more than the margin → not
    reproduced; otherwise not testable (underpowered). More runs make either outcome easier to
    reach, never the equality harder."""
    m = _margin(margin, "check_equivalent")
    diff = np.asarray(b, dtype=float) - np.asarray(a, dtype=float)
    return _tost(diff, m, f"{names[1]} - {names[0]}: paired difference", "runs")


@_recorded
def check_close_to_paper(samples: Sequence[float], paper: float, margin: Margin, what: str = "mean") -> Verdict:
    """Our mean over runs against a number the paper prints, by an equivalence test of ``mean -
    paper`` against the margin stated with the claim (which includes half a unit of the paper's
    printed precision and any stated allowance): inside → reproduced; outside → not reproduced;
    otherwise not testable (underpowered)."""
    m = _margin(margin, "check_close_to_paper")
    x = np.asarray(samples, dtype=float).ravel()
    v = _tost(x - float(paper), m, f"{what} - paper ({_g(paper)})", "runs")
    mean, _ = mean_se(x)
    return Verdict(
        v.verdict,
        f"{what} {_g(mean)} vs paper {_g(paper)}: " + v.reason,
        v.criterion,
        dict(v.details, paper=float(paper)),
    )


# -- bounds: tested only where informative ----------------------------------------------------------

_UNKNOWN = "unknown"


def mean_se(samples: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error of the mean (0 for a single sample)."""
    x = np.asarray(samples, dtype=float).ravel()
    if x.size == 0:
        raise ValueError("mean_se needs at least one sample")
    se = float(x.std(ddof=1) / math.sqrt(x.size)) if x.size > 1 else 0.0
    return float(x.mean()), se


def _vacuous(ratio: float, informative_from: float | None | str) -> str:
    """The reason of an uninformative bound, with the horizon where it would bite when known."""
    text = f"vacuous at this scale (bound / trivial = {_g(ratio)}, informative below {INFORMATIVE_BELOW:g})"
    if informative_from is None:
        return text + "; no horizon within the search limit makes it informative"
    if informative_from == _UNKNOWN:
        return text
    return text + f"; it would become informative from T = {float(informative_from):.4g}"


@_recorded
def check_bound(
    measured: float,
    bound: float,
    trivial: float,
    what: str = "measured",
    informative_from: float | None | str = _UNKNOWN,
) -> Verdict:
    """A bound of the paper's theory against an exact measurement, tested only where it could
    fail by a margin: informative when ``bound < INFORMATIVE_BELOW · trivial`` (``trivial`` is what
    holds without the theorem: ``t·Δmax`` for a cumulative regret, ``T`` for a count, 1 for a
    probability). Otherwise ``not testable here`` (vacuous at this scale) with the ratio and, when
    the caller knows it, the smallest horizon where it would become informative. Where informative,
    reproduced iff ``measured <= bound``."""
    measured, bound, trivial = float(measured), float(bound), float(trivial)
    if not trivial > 0:
        raise ValueError(f"check_bound: the trivial bound must be positive, got {trivial}")
    ratio = bound / trivial
    details = {"bound": bound, "trivial": trivial, "bound_over_trivial": ratio, "measured": measured}
    rule = f"{what} <= bound, tested only where bound < {INFORMATIVE_BELOW:g} x trivial ({_g(trivial)})"
    if ratio >= INFORMATIVE_BELOW:
        return Verdict("not testable here", _vacuous(ratio, informative_from), rule, details)
    ok = measured <= bound
    reason = f"{what} = {_g(measured)} {'<=' if ok else '>'} bound = {_g(bound)} (bound / trivial = {_g(ratio)})"
    return Verdict("reproduced" if ok else "not reproduced", reason, rule, dict(details, margin=bound - measured))


@_recorded
def check_mean_below_bound(samples: Sequence[float], bound: float, trivial: float, what: str = "mean") -> Verdict:
    """A mean over runs against a bound, tested only where the bound is informative (as
    :func:`check_bound`); there, :func:`check_mean_below` (the mean plus Z standard errors below the
    bound)."""
    mean, se = mean_se(samples)
    vac = _CHECKS["check_bound"](mean, bound, trivial, what)
    if vac.verdict == "not testable here":
        return vac
    v = _CHECKS["check_mean_below"](samples, bound, what)
    return Verdict(
        v.verdict, v.reason + f" (bound / trivial = {bound / trivial:.4g})", v.criterion, dict(vac.details, **v.details)
    )


#: Largest number of points whose per-point ratios a bound curve's details list (counts beyond).
_LIST_POINTS = 200


@_recorded
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
    """:func:`check_bound` along a curve: the bound is tested at the points where it is below
    :data:`INFORMATIVE_BELOW` of the trivial bound. None such → ``not testable here`` (vacuous, with
    the smallest ratio); otherwise reproduced iff the measurement stays at or below the bound at
    every informative point. ``points`` and ``x`` name the points and their coordinate in the
    reason ("cases", "case") when they are not horizons ``t``."""
    t, m, b, tr = (np.asarray(v, dtype=float) for v in (t, measured, bound, trivial))
    if not (t.shape == m.shape == b.shape == tr.shape) or t.ndim != 1 or t.size == 0:
        raise ValueError("check_bound_curve: t, measured, bound and trivial must be 1-d arrays of one length")
    if np.any(tr <= 0):
        raise ValueError("check_bound_curve: the trivial bound must be positive")
    ratio = b / tr
    informative = ratio < INFORMATIVE_BELOW
    details = {"points": int(t.size), "informative_points": int(informative.sum())}
    if t.size <= _LIST_POINTS:
        details.update(t=t.tolist(), bound_over_trivial=ratio.tolist())
    details["informative_horizons"] = int(informative.sum())
    rule = f"{what} <= bound at every point of {points} where bound < {INFORMATIVE_BELOW:g} x trivial"
    if not informative.any():
        reason = _vacuous(float(ratio.min()), informative_from).replace(
            "vacuous at this scale", f"vacuous at this scale, at all {t.size} {points}", 1
        )
        return Verdict("not testable here", reason, rule, details)
    over = informative & (m > b)
    span = f"bound / trivial {_g(ratio[informative].min())} to {_g(ratio[informative].max())}"
    details["min_margin"] = float((b - m)[informative].min())
    if over.any():
        first = int(np.flatnonzero(over)[0])
        reason = (
            f"{what} exceeds the bound at {int(over.sum())} of {int(informative.sum())} informative {points} "
            f"(first {x} = {_g(t[first])}: {_g(m[first])} > {_g(b[first])}; {span})"
        )
        return Verdict("not reproduced", reason, rule, details)
    reason = f"{what} <= bound at all {int(informative.sum())} informative {points} ({span})"
    if not informative.all():
        reason += f"; not informative at the other {int((~informative).sum())}"
    return Verdict("reproduced", reason, rule, details)


def informative_horizon(bound: Any, trivial: Any, t_start: int = 1, t_max: int = 10**12) -> int | None:
    """The smallest horizon ``T >= t_start`` with ``bound(T) < INFORMATIVE_BELOW · trivial(T)``
    (None up to ``t_max``).

    Searches by doubling and then bisection, so it assumes that once the bound is informative it
    stays so (true of the ``o(T)`` regret bounds this book checks).
    """

    def ok(T):
        return bound(T) < INFORMATIVE_BELOW * trivial(T)

    if ok(t_start):
        return t_start
    lo, hi = t_start, t_start
    while not ok(hi):
        lo, hi = hi, hi * 2
        if hi > t_max:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


# -- rates: one protocol -----------------------------------------------------------------------------


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


def rate_interval(t: Sequence[float], curves: np.ndarray, fit_from: float = RATE_FIT_FROM) -> dict[str, Any]:
    """The growth exponent of a cumulative curve, with a jackknife t-interval over runs.

    A cumulative quantity ``R(t) ≈ c + C·t^a`` grows at the rate ``dR/dt ∝ t^(a-1)``, so ``a`` is
    one plus the log-log slope of the increments ``ΔR/Δt`` between consecutive horizons (against
    their geometric midpoints): an offset ``c`` left by a burn-in does not bias it, and a log
    factor ``t^a·log t`` adds ``1/log t`` (about 0.1 at ``t = 10^4``). The fit uses the mean curve
    over runs at the horizons ``t_j >= fit_from · max(t)``.

    The interval is the exponent ± the Student t quantile (``n - 1`` degrees of freedom, level
    :data:`RATE_LEVEL`) times the jackknife standard error over runs (the exponent of the mean
    curve with each run left out in turn). It needs no random numbers, and its coverage is checked
    by simulation on curves of known exponent (``tests/core/test_checks.py``): the percentile
    bootstrap it replaces covered a nominal 95% interval 90-93% of the time at 20 runs.

    Returns a dict with ``slope``, ``low``, ``high``, ``n_runs``, ``horizons`` (the fitted ``t``)
    and ``level_slope`` (the plain slope of ``log R``, for reference). Raises ValueError when
    fewer than 4 horizons are in the window, or when the mean curve does not grow there ("does
    not grow") or grows over fewer than three intervals ("too irregular").
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
            f"the rate test needs at least 4 horizons in t >= {fit_from:g}·{t.max():g}, have {int(sel.sum())}"
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
        return dict(out, low=float("nan"), high=float("nan"), se=float("nan"))
    loo = np.array([_growth_exponent(t, (mean * n - y[i]) / (n - 1)) for i in range(n)])
    if not np.all(np.isfinite(loo)):
        return dict(
            out, low=float("nan"), high=float("nan"), se=float("nan"), loo_undefined=int((~np.isfinite(loo)).sum())
        )
    se = float(math.sqrt((n - 1) / n * float(np.sum((loo - loo.mean()) ** 2))))
    q = float(stats.t.ppf(0.5 + RATE_LEVEL / 2, n - 1))
    return dict(out, low=slope - q * se, high=slope + q * se, se=se)


def shape_exponent(t: Sequence[float], exponent: float, log_power: float) -> float:
    """The claimed centre of a rate whose printed bound has the shape ``t^exponent · (ln t)^log_power``:
    the growth exponent that the rate protocol's own estimator (:func:`rate_interval`, window
    ``[h/10, h]`` with ``h`` the last of ``t``) measures on that noise-free curve at the checkpoints
    ``t``. With ``log_power = 0`` it is ``exponent`` itself (no estimate). The local exponent of
    ``t^a (ln t)^p`` is ``a + p/ln t``, so for ``p > 0`` the centre lies above ``a`` and falls slowly
    with the horizon."""
    if log_power == 0:
        return float(exponent)
    t = np.asarray(t, dtype=float)
    w = t[t >= RATE_FIT_FROM * t.max()]
    if w.size and w.min() <= 1.0:
        raise ValueError(f"the shape t^a (ln t)^p needs checkpoints above t = 1 in the window, got t = {w.min():g}")
    return float(rate_interval(w, w**exponent * np.log(w) ** log_power)["slope"])


def _rate_at(t: np.ndarray, curves: np.ndarray, exponent: float, mode: str, log_power: float = 0.0) -> Verdict:
    """The rate test at one horizon (the window ``[h/10, h]`` of ``t``): holds, contradicted or
    inconclusive (see :func:`check_rate`). The region is centred on ``exponent``, or, with a
    ``log_power``, on :func:`shape_exponent` at these checkpoints."""
    centre = shape_exponent(t, exponent, log_power)
    hi_c = centre + RATE_MARGIN
    lo_c = centre - RATE_MARGIN
    region = {
        "equal": f"[{_g(lo_c)}, {_g(hi_c)}]",
        "at_most": f"at most {_g(hi_c)}",
        "below": f"below {_g(centre)}",
    }[mode]
    rule = f"interval inside {region}"
    base = {"exponent": exponent, "mode": mode, "margin": RATE_MARGIN}
    if log_power != 0:
        shape = f"t^{_g(exponent)}·(ln t)^{_g(log_power)}"
        rule += f" (centre {_g(centre)}: the growth exponent the estimator measures on {shape})"
        base.update(centre=centre, log_power=float(log_power))
    try:
        r = rate_interval(t, curves)
    except ValueError as exc:
        text = str(exc)
        if "does not grow" in text and mode in ("at_most", "below") and hi_c >= 0:
            return Verdict("reproduced", f"{text}: no growth", rule, base)
        if "does not grow" in text and mode == "equal" and lo_c > 0:
            return Verdict("not reproduced", f"{text}: no growth, not t^{_g(exponent)}", rule, base)
        return Verdict("not testable here", f"inconclusive: {text}", rule, dict(base, inconclusive=True))
    details = dict(r, **base)
    iv = f"exponent {_g(r['slope'])}, interval [{_g(r['low'])}, {_g(r['high'])}] over {r['n_runs']} runs"
    if not math.isfinite(r["low"]):
        return Verdict("not testable here", f"inconclusive: {iv} (no interval)", rule, dict(details, inconclusive=True))
    if mode == "below":
        holds, contra = r["high"] < centre, r["low"] > centre - RATE_MARGIN
    else:
        holds = r["high"] <= hi_c and (mode == "at_most" or lo_c <= r["low"])
        contra = r["low"] > hi_c or (mode == "equal" and r["high"] < lo_c)
    if r["n_runs"] < RATE_MIN_RUNS:
        w = r["high"] - r["low"]
        details["runs_for_power"] = RATE_MIN_RUNS
        return _underpowered(
            f"{iv}; the protocol needs at least {RATE_MIN_RUNS} runs (interval width {_g(w)})", rule, details
        )
    if holds:
        return Verdict("reproduced", f"{iv}, inside {region}", rule, details)
    if contra:
        return Verdict("not reproduced", f"{iv}, outside {region}", rule, details)
    width = r["high"] - r["low"]
    # runs for an interval half as wide as the distance to the nearer edge of the region (sd ~ se·sqrt(n))
    edge = min(abs(r["slope"] - e) for e in (lo_c, hi_c, centre) if math.isfinite(e)) or width / 4
    details["runs_for_power"] = _runs_for_power(r["se"] * math.sqrt(r["n_runs"]), edge, float(stats.norm.ppf(0.975)))
    return _underpowered(f"{iv} overlaps the edge of {region}", rule, details)


@_recorded
def check_rate(
    t: Sequence[float],
    curves: np.ndarray,
    exponent: float,
    mode: str = "equal",
    what: str = "growth exponent (1 + log-log slope of the increments)",
    log_power: float = 0.0,
    shape_from: str = "",
) -> Verdict:
    """The one rate test: does a cumulative quantity grow like ``t^exponent`` (up to log factors)?

    "Logarithmic" is ``exponent = 0``, "like √T" 0.5, "linear" 1. The claimed region is
    ``[exponent - m, exponent + m]`` (``mode="equal"``: "grows like T^a"), ``(-inf, exponent + m]``
    (``"at_most"``: "grows at most like T^a") or ``(-inf, exponent)`` (``"below"``, as in
    "sublinear"), with the one margin ``m =`` :data:`RATE_MARGIN` for log factors and finite
    horizons. The protocol, the same for every rate claim of the book:

    - the exponent is measured at each horizon ``h`` of :data:`RATE_HORIZONS` (fractions of the last
      checkpoint), fitted over the checkpoints in ``[h/10, h]`` (:func:`rate_interval`);
    - at each, the jackknife t-interval over runs decides: inside the region → holds; disjoint from
      it (for "below": its lower end above ``exponent - m``) → contradicted; otherwise, or with
      fewer than :data:`RATE_MIN_RUNS` runs, inconclusive;
    - the horizons are combined by the book's one rule (:func:`check_parts`), so a rate that holds
      only at one horizon, or drifts across the line as the horizon grows, is not reproduced
      outright.

    **Printed log factors.** When the paper prints the bound behind an Õ rate with its log factors,
    ``t^exponent·(ln t)^log_power``, that shape is the claim: at each horizon the region is centred
    on the exponent the same estimator measures on the noise-free curve ``t^exponent (ln t)^p`` at
    the same checkpoints and window (:func:`shape_exponent`; about ``exponent + p/ln t``), with the
    same margin. ``shape_from`` must then say where the paper prints it (theorem, equation, page).
    ``log_power = 0`` (the default: the paper prints only "Õ(...)") is the plain test above. Not for
    ``mode="below"`` ("sublinear" has no printed shape).
    """
    if mode not in ("equal", "at_most", "below"):
        raise ValueError(f"mode={mode!r} is not one of ('equal', 'at_most', 'below')")
    log_power = float(log_power)
    if log_power != 0 and mode == "below":
        raise ValueError("a log_power applies to 'equal' and 'at_most' rates, not to 'below'")
    if log_power != 0 and not str(shape_from).strip():
        raise ValueError("a rate with printed log factors must say where the paper prints them (shape_from)")
    t = np.asarray(t, dtype=float)
    y = np.asarray(curves, dtype=float)
    if y.ndim == 1:
        y = y[None, :]
    parts, exponents, centres = {}, {}, {}
    for f in RATE_HORIZONS:
        keep = t <= f * t[-1] * (1 + 1e-12)
        h = t[keep][-1] if keep.any() else t[0]
        label = f"T = {h:,.0f}"
        if keep.sum() < 2:
            parts[label] = Verdict(
                "not testable here", "inconclusive: no checkpoint at this horizon", "", {"inconclusive": True}
            )
            continue
        v = _rate_at(t[keep], y[:, keep], float(exponent), mode, log_power)
        parts[label] = v
        exponents[f"{h:.0f}"] = {k: v.details.get(k) for k in ("slope", "low", "high", "n_runs")}
        if log_power != 0:
            centres[f"{h:.0f}"] = shape_exponent(t[keep], float(exponent), log_power)
            exponents[f"{h:.0f}"]["centre"] = centres[f"{h:.0f}"]
    region = {"equal": "within ±{m} of {a}", "at_most": "at most {a} + {m}", "below": "below {a}"}[mode]
    if log_power != 0:
        shape = f"t^{_g(exponent)}·(ln t)^{_g(log_power)}"
        region_text = (
            region.format(a="c(h)", m=_g(RATE_MARGIN))
            + f", where c(h) is the growth exponent the same estimator measures on the noise-free curve {shape} at "
            f"the same checkpoints and window (the shape of {shape_from}; "
            + ", ".join(f"c = {_g(c)} at T = {float(h):,.0f}" for h, c in centres.items())
            + ")"
        )
    else:
        region_text = region.format(a=_g(exponent), m=_g(RATE_MARGIN))
    rule = (
        f"the one rate test: the {what}, with a {RATE_LEVEL:.0%} jackknife t-interval over at least {RATE_MIN_RUNS} "
        f"runs, {region_text}, at the horizons "
        + ", ".join(f"{f:g}·T" for f in RATE_HORIZONS)
        + " (each fitted over [h/10, h]); "
        + _RULE.format(u="horizons")
    )
    out = _aggregate(parts, "horizons", rule)
    extra = {"log_power": log_power, "centres": centres, "shape_from": shape_from} if log_power != 0 else {}
    return Verdict(
        out.verdict,
        out.reason,
        out.criterion,
        dict(out.details, exponents=exponents, exponent=float(exponent), mode=mode, **extra),
    )


@_recorded
def check_sublinear(t: Sequence[float], curves: np.ndarray, what: str = "growth exponent") -> Verdict:
    """ "Sublinear": :func:`check_rate` with ``mode="below"`` and exponent 1 (the interval's upper
    end below 1 at each horizon; contradicted where its lower end is above ``1 - RATE_MARGIN``)."""
    return _CHECKS["check_rate"](t, curves, 1.0, "below", what)


@_recorded
def check_slope_below(
    t_a: Sequence[float], curves_a: np.ndarray, t_b: Sequence[float], curves_b: np.ndarray, names: tuple[str, str]
) -> Verdict:
    """The growth exponent of ``a`` is smaller than ``b``'s: the intervals of :func:`rate_interval`
    (the rate protocol's estimator, at the last horizon) are compared; disjoint with ``a`` below →
    reproduced, disjoint with ``a`` above → not reproduced, overlapping → not testable
    (underpowered)."""
    a = rate_interval(t_a, curves_a)
    b = rate_interval(t_b, curves_b)
    reason = (
        f"exponent {names[0]} {a['slope']:.3g} [{a['low']:.3g}, {a['high']:.3g}] vs "
        f"{names[1]} {b['slope']:.3g} [{b['low']:.3g}, {b['high']:.3g}]"
    )
    rule = (
        f"{RATE_LEVEL:.0%} jackknife t-intervals of the growth exponents (t >= T/10): "
        f"{names[0]}'s entirely below {names[1]}'s"
    )
    details = {
        names[0]: {k: a[k] for k in ("slope", "low", "high", "n_runs")},
        names[1]: {k: b[k] for k in ("slope", "low", "high", "n_runs")},
    }
    if a["high"] < b["low"]:
        return Verdict("reproduced", reason, rule, details)
    if a["low"] > b["high"]:
        return Verdict("not reproduced", reason, rule, details)
    return _underpowered(reason + " (overlapping)", rule, details)


@_recorded
def check_exponential_decay(
    budgets: Sequence[float], errors: np.ndarray, what: str = "error", min_rate: float = 0.0
) -> Verdict:
    """An exponential rate ("the error falls like exp(-c·T)"), tested as such: the slope of the log
    of the mean error against the budget, with a jackknife t-interval over runs; reproduced when the
    interval lies below ``-min_rate`` (a decay faster than the stated rate; 0: any exponential
    decay), not reproduced when it lies above it, not testable (underpowered) otherwise. Budgets at
    which the mean error is 0 end the fit (the log is undefined there)."""
    T = np.asarray(budgets, dtype=float)
    e = np.asarray(errors, dtype=float)
    if e.ndim == 1:
        e = e[None, :]
    mean = e.mean(axis=0)
    keep = np.flatnonzero(mean > 0)
    keep = keep[: np.argmax(np.diff(np.concatenate([keep, [keep[-1] + 2]])) > 1) + 1] if keep.size else keep
    rule = (
        f"slope of log(mean {what}) against the budget, {RATE_LEVEL:.0%} jackknife t-interval over runs, "
        f"below -{_g(min_rate)}"
    )
    if keep.size < 3:
        return Verdict(
            "not testable here",
            f"inconclusive: the mean {what} is positive at {keep.size} budgets (3 needed for a slope)",
            rule,
            {"inconclusive": True},
        )
    Tk, ek = T[keep], e[:, keep]
    n = ek.shape[0]

    def slope_of(m):
        return float(_slope(Tk, np.log(m))) if np.all(m > 0) else float("nan")

    s = slope_of(ek.mean(axis=0))
    details = {"slope": s, "n_runs": int(n), "budgets": Tk.tolist()}
    if n < 2:
        return _underpowered(f"slope {s:.4g} from one run, no interval", rule, details)
    loo = np.array([slope_of((ek.sum(axis=0) - ek[i]) / (n - 1)) for i in range(n)])
    if not np.all(np.isfinite(loo)):
        return _underpowered(f"slope {s:.4g}; a leave-one-out mean is 0 at a fitted budget", rule, details)
    se = math.sqrt((n - 1) / n * float(np.sum((loo - loo.mean()) ** 2)))
    q = float(stats.t.ppf(0.5 + RATE_LEVEL / 2, n - 1))
    lo, hi = s - q * se, s + q * se
    details.update(low=lo, high=hi, se=se)
    reason = f"slope of log {what} per unit of budget {s:.4g}, interval [{lo:.4g}, {hi:.4g}] over {n} runs"
    if hi < -min_rate:
        return Verdict("reproduced", reason, rule, details)
    if lo > -min_rate:
        return Verdict("not reproduced", reason, rule, details)
    details["runs_for_power"] = _runs_for_power(se * math.sqrt(n), s + min_rate, float(stats.norm.ppf(0.975)))
    return _underpowered(reason, rule, details)


# -- open choices, negations, statistics of runs ----------------------------------------------------


@_recorded
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


@_recorded
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


def _coefficient_of_variation(x: np.ndarray) -> float:
    x = np.asarray(x, dtype=float)
    return float(x.std(ddof=1) / x.mean())


#: The statistics of runs :func:`check_bootstrap_increase` takes, by name (a record names them).
STATISTICS = {
    "mean": lambda x: float(np.mean(x)),
    "standard deviation": lambda x: float(np.std(x, ddof=1)),
    "coefficient of variation": _coefficient_of_variation,
}


@_recorded
def check_bootstrap_increase(
    statistic: str,
    low: np.ndarray,
    high: np.ndarray,
    what: str = "",
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
) -> Verdict:
    """Does a statistic of the runs (one of :data:`STATISTICS`, by name) increase from setting
    ``low`` to setting ``high``? Rows are runs, paired (replication ``i`` of both shares its random
    numbers); runs are resampled jointly ``n_boot`` times (from ``SeedSequence(seed)``) and the
    central ``level`` interval of ``statistic(high) - statistic(low)`` decides: above 0
    reproduced, below 0 not reproduced, containing 0 not testable (underpowered)."""
    if statistic not in STATISTICS:
        raise ValueError(f"check_bootstrap_increase: statistic {statistic!r} is not one of {sorted(STATISTICS)}")
    fn = STATISTICS[statistic]
    what = what or statistic
    low, high = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
    if low.shape[0] != high.shape[0] or low.shape[0] < 2:
        raise ValueError("check_bootstrap_increase needs at least 2 paired runs in both settings")
    n = low.shape[0]
    diff = float(fn(high) - fn(low))
    rng = np.random.default_rng(np.random.SeedSequence(seed))
    idx = rng.integers(0, n, size=(n_boot, n))
    boots = np.array([fn(high[i]) - fn(low[i]) for i in idx])
    a = (1 - level) / 2
    lo, hi = (float(x) for x in np.quantile(boots, [a, 1 - a]))
    rule = f"{level:.0%} bootstrap interval (runs resampled jointly) of the increase of the {what} above 0"
    reason = f"increase of the {what} {_g(diff)}, interval [{_g(lo)}, {_g(hi)}] over {n} paired runs"
    details = {"increase": diff, "low": lo, "high": hi, "n": int(n)}
    if lo > 0:
        return Verdict("reproduced", reason, rule, details)
    if hi < 0:
        return Verdict("not reproduced", reason, rule, details)
    sd = float(np.std(boots, ddof=1)) * math.sqrt(n)
    details["runs_for_power"] = _runs_for_power(sd, diff, float(stats.norm.ppf(1 - a)))
    return _underpowered(reason + " (contains 0)", rule, details)
