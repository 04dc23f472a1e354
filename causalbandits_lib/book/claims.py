"""Claims as the book shows and stores them: a claim of a paper with our measurement and the
verdict a check of :mod:`causalbandits_lib.core.checks` computed, and the Markdown table of claims.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any, Mapping

import numpy as np

from ..core.checks import KINDS, VERDICTS, Verdict
from ..core.tables import markdown_table

__all__ = [
    "Claim",
    "format_value",
    "kind_label",
    "paper_value_label",
    "short_cell",
    "verdict_badge",
    "claim_cell",
    "statement_cell",
    "why_cell",
    "diagnosis_text",
    "claims_markdown",
    "claims_div",
]

_ID = re.compile(r"^[a-z0-9_]+(\.[A-Za-z0-9_\-]+)+$")


@dataclass(frozen=True)
class Claim:
    """One claim of a paper with our measurement and its verdict.

    Parameters
    ----------
    id : str
        Stable dotted id, ``<chapter>.<where>.<what>`` (e.g. ``fucb.table1.fucb_zero_violations``).
    statement : str
        The paper's claim, in the book's own words.
    paper_value : Any
        What the paper reports (a number, a list, a short text), or None for a qualitative claim.
    measured : Any
        Our measurement (numbers, lists of numbers or a short text).
    verdict, reason, criterion : str
        From a :class:`Verdict`.
    source : str
        Where in the paper (``"Table 1"``, ``"§4.2"``, ``"Theorem 3"``).
    section : str
        Anchor of the notebook section that shows the measurement.
    kind : str, optional
        One of :data:`~causalbandits_lib.core.checks.KINDS`: ``experiment`` or ``theorem`` (a result
        of the reproduction), ``identity`` or ``construction`` (a check of our implementation).
    details : dict, optional
        The numbers behind the verdict (``Verdict.details``: means and standard errors, bound
        ratios, per-instance verdicts).
    sensitive_to : dict, optional
        ``{parameter: {value: verdict}}`` for the open choices that move the verdict.
    ours : bool, optional
        True for a claim the paper does not make: our question about its result, a variant or an
        extension of ours (labelled as ours on every page and counted apart from the paper's claims).
    reconstructed : bool, optional
        True when the paper value comes from a formula or number we reconstructed because the paper
        does not print it (the tables mark it "reconstructed").
    evidence : dict, optional
        The check that gave the verdict and the inputs it was given (per-run or per-instance
        numbers, compressed when large; :meth:`~causalbandits_lib.core.checks.Verdict.evidence`), so
        that ``causalbandits rejudge`` can compute the verdict again from the record alone.
    diagnosis : dict, optional
        Why a result did not reproduce (``not reproduced`` or ``partly``): its cause, text and the
        measurements it rests on, from the chapter's ``diagnoses.yml``
        (:mod:`causalbandits_lib.book.diagnoses`); stored by paper-profile executions.

    The optional fields are left out of :meth:`to_dict` when not set, so a record of a claim that
    declares none of them reads as before.
    """

    id: str
    statement: str
    paper_value: Any
    measured: Any
    verdict: str
    reason: str
    criterion: str
    source: str = ""
    section: str = "claims"
    kind: str | None = None
    details: Mapping[str, Any] | None = None
    sensitive_to: Mapping[str, Mapping[str, str]] | None = None
    ours: bool | None = None
    reconstructed: bool | None = None
    evidence: Mapping[str, Any] | None = None
    diagnosis: Mapping[str, Any] | None = None

    def __post_init__(self):
        if not _ID.match(self.id):
            raise ValueError(
                f"claim id {self.id!r} must be dotted lowercase words like 'fucb.table1.fucb_zero_violations'"
            )
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.id}: verdict {self.verdict!r} is not one of {VERDICTS}")
        if not self.statement.strip() or not self.reason.strip():
            raise ValueError(f"claim {self.id}: statement and reason must not be empty")
        if self.kind is not None and self.kind not in KINDS:
            raise ValueError(f"claim {self.id}: kind {self.kind!r} is not one of {KINDS}")
        for flag in ("ours", "reconstructed"):
            if getattr(self, flag) not in (None, True):
                raise ValueError(f"claim {self.id}: {flag} must be True or left out, not {getattr(self, flag)!r}")

    @classmethod
    def from_verdict(cls, id: str, statement: str, paper_value: Any, measured: Any, result: Verdict, **kw) -> "Claim":
        """The claim of a check's :class:`Verdict`; its details (and any ``sensitive_to`` among them)
        are kept when the claim declares its kind."""
        if kw.get("kind") is not None and result.details:
            details = dict(result.details)
            kw.setdefault("sensitive_to", details.pop("sensitive_to", None))
            kw.setdefault("details", _plain(details) or None)
        kw.setdefault("evidence", result.evidence())
        return cls(
            id, statement, _plain(paper_value), _plain(measured), result.verdict, result.reason, result.criterion, **kw
        )

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for optional in ("kind", "details", "sensitive_to", "ours", "reconstructed", "evidence", "diagnosis"):
            if d[optional] is None:
                del d[optional]
        return d


def _plain(value: Any) -> Any:
    """Numbers and arrays as JSON-friendly Python values."""
    if isinstance(value, np.ndarray):
        return _plain(value.tolist())
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else str(v)
    if isinstance(value, (np.integer,)):
        return int(value)
    if isinstance(value, (np.bool_,)):
        return bool(value)
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def format_value(value: Any) -> str:
    """A short human-readable rendering of a paper value or measurement."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        if len(value) > 6:
            return "[" + ", ".join(format_value(v) for v in value[:5]) + f", … ({len(value)} values)]"
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    return str(value)


def kind_label(c: Mapping[str, Any]) -> str:
    """A claim's kind as the tables show it, marked when the claim is ours (not the paper's) and
    when its verdict depends on an open choice. A source that already says "ours" is not repeated."""
    kind = c.get("kind") or "—"
    if c.get("ours") and not says_ours(c):
        kind += ", ours"
    if c.get("sensitive_to"):
        kind += " (choice-dependent)"
    elif c.get("sensitive_at_profile"):
        kind += f" (choice-dependent at the {c['sensitive_at_profile']['profile']} profile)"
    return kind


def says_ours(c: Mapping[str, Any]) -> bool:
    """Whether a claim's ``source`` itself begins by saying the claim is ours."""
    return str(c.get("source") or "").lower().startswith("ours")


def paper_value_label(c: Mapping[str, Any]) -> str:
    """A claim's paper value as the tables show it: empty when there is none, marked when we
    reconstructed it."""
    value = c.get("paper_value")
    text = "—" if value is None else format_value(value)
    if c.get("reconstructed"):
        text += " (reconstructed)"
    return text


#: What a table shows for a claim that records no measured value of its own: a claim judged on
#: several instances states its measurements in its reason (one per instance).
NO_MEASURED = "— (per instance: see why)"


def measured_label(c: Mapping[str, Any], limit: int | None = None, **kw: Any) -> str:
    """A claim's measured value as a table cell (cut by :func:`short_cell`; ``kw`` as there), or
    :data:`NO_MEASURED` when it records none."""
    if c.get("measured") is None:
        return NO_MEASURED
    text = format_value(c["measured"])
    return short_cell(text, **kw) if limit is None else short_cell(text, limit, **kw)


#: Longest measured value a table cell shows; the record keeps the whole value.
CELL_CHARS = 220
#: Where a cut value of the page's own run is kept (its record, not the page's downloadable one).
RUN = "this run's record"


def short_cell(text: str, limit: int = CELL_CHARS, link: str | None = None, record: str = "the record") -> str:
    """``text`` cut to ``limit`` characters, saying where the rest is: in ``record``, linked when
    ``link`` (the page-relative address of the downloadable record) is given."""
    if len(text) <= limit:
        return text
    where = f'<a href="{link}" download>{record}</a>' if link else record
    return text[: limit - 1].rstrip() + f"… (full value in {where})"


def verdict_badge(verdict: str) -> str:
    """A verdict as a coloured badge (styled by ``static/book.css``)."""
    return f'<span class="verdict verdict-{verdict.replace(" ", "-")}">{verdict}</span>'


def claim_cell(c: Mapping[str, Any], link: str | None = None) -> str:
    """The first cell of a claims table: the id (linked to its section when ``link`` is given) and,
    below it, the kind, where in the paper, and a "cite" link. The link's ``#cite-<id>`` is a
    placeholder: in the built book ``causalbandits_lib.book.sphinx_pages`` points it at the claim's
    citation page (``cite/<id>.html``); elsewhere (a notebook opened on its own) it goes nowhere."""
    import html

    ident = f"[`{c['id']}`]({link})" if link else f"`{c['id']}`"
    where = f", {c['source']}" if c.get("source") else ""
    quoted = html.escape(c["id"], quote=True)
    cite = f'<a class="claim-cite" href="#cite-{quoted}" title="cite claim {quoted}">cite</a>'
    return f"{ident}<br><small>{kind_label(c)}{where}</small> <small>{cite}</small>"


def statement_cell(c: Mapping[str, Any], record_link: str | None = None) -> str:
    """What the paper says, with the value it reports when there is one (a cut value links
    ``record_link``, the record that holds it, when given)."""
    value = paper_value_label(c)
    return c["statement"] + ("" if value == "—" else f"<br><small>paper: {short_cell(value, 120, record_link)}</small>")


def diagnosis_text(d: Mapping[str, Any]) -> str:
    """A stored diagnosis in one line: its cause, its text and what it rests on."""
    pointers = "; ".join(f"{k} `{v}`" for e in d.get("evidence", []) for k, v in e.items())
    return f"**Diagnosis, {d['label']}.** {d['text']} (evidence: {pointers})"


def why_cell(c: Mapping[str, Any]) -> str:
    """The verdict's reason, with the rule that decided it folded away, and below it the
    diagnosis of a result that did not reproduce."""
    rule = c.get("criterion")
    folded = f" <details><summary>rule</summary>{rule}</details>" if rule else ""
    diag = c.get("diagnosis")
    below = f"<br><small>{diagnosis_text(diag)}</small>" if diag else ""
    return f"{c['reason']}{folded}{below}"


def claims_markdown(
    claims: list[Mapping[str, Any]],
    page_run: list[Mapping[str, Any]] | None = None,
    page_label: str = "book profile",
    record_link: str | None = None,
) -> str:
    """A Markdown table of claims that fits the page's column: the claim (id, kind, source), what
    the paper says (with its value), our measurement, the verdict as a badge and its reason (the
    deciding rule folded away).

    ``claims`` are the claims whose verdict the table states. With ``page_run`` (the claims of a
    run below the paper's scale, such as the page's own book-profile execution) the verdict column
    stays that of ``claims`` (the paper-scale record) and one more column gives the page's run,
    labelled ``page_label`` (its profile and given parameters), with a difference marked; a claim
    present on one side only says so.

    ``record_link`` is the page-relative address of the downloadable record that holds ``claims``:
    a value cut short in their cells links it.
    """
    if page_run is None:
        head = ["claim", "the paper says", "we measured", "verdict", "why"]
        rows = []
        for c in claims:
            cells = [
                claim_cell(c),
                statement_cell(c, record_link),
                measured_label(c, link=record_link),
            ]
            rows.append(cells + [verdict_badge(c["verdict"]), why_cell(c)])
        return claims_div(markdown_table(head, rows, name="claims"))
    head = ["claim", "the paper says", "measured (paper scale)", "verdict (paper scale)", "why"]
    head.append(f"this page's run ({page_label})")
    rows = []
    here = {c["id"]: c for c in page_run}
    seen = set()
    for c in claims:
        seen.add(c["id"])
        mine = here.get(c["id"])
        if mine is None:
            page = "not run on this page"
        elif mine["verdict"] == c["verdict"]:
            page = f"{mine['verdict']} (same); measured {measured_label(mine, 120, record=RUN)}"
        else:
            measured = measured_label(mine, 120, record=RUN)
            page = f"**differs: {mine['verdict']}**; measured {measured}"
        cells = [
            claim_cell(c),
            statement_cell(c, record_link),
            measured_label(c, link=record_link),
        ]
        rows.append(cells + [verdict_badge(c["verdict"]), why_cell(c), page])
    for c in page_run:
        if c["id"] not in seen:
            cells = [claim_cell(c), statement_cell(c), "—", "no paper-scale verdict yet", ""]
            cells.append(f"{c['verdict']}; measured {measured_label(c, 120, record=RUN)}")
            rows.append(cells)
    return claims_div(markdown_table(head, rows, name="claims (paper scale and this page's run)"))


def claims_div(table: str) -> str:
    """A Markdown claims table wrapped in the ``claims-table`` block that ``static/book.css`` lays
    out (wrapping cells; cards on a narrow screen)."""
    return '<div class="claims-table">\n\n' + table + "\n\n</div>"
