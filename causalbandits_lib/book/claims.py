"""Claims as the book shows and stores them: a claim of a paper with our measurement and the
verdict a check of :mod:`causalbandits_lib.core.checks` computed, and the Markdown table of claims.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass
from typing import Any, Mapping

import numpy as np

from ..core.checks import VERDICTS, Verdict

__all__ = ["Claim", "format_value", "claims_markdown"]

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

    def __post_init__(self):
        if not _ID.match(self.id):
            raise ValueError(
                f"claim id {self.id!r} must be dotted lowercase words like 'fucb.table1.fucb_zero_violations'"
            )
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.id}: verdict {self.verdict!r} is not one of {VERDICTS}")
        if not self.statement.strip() or not self.reason.strip():
            raise ValueError(f"claim {self.id}: statement and reason must not be empty")

    @classmethod
    def from_verdict(cls, id: str, statement: str, paper_value: Any, measured: Any, result: Verdict, **kw) -> "Claim":
        return cls(
            id, statement, _plain(paper_value), _plain(measured), result.verdict, result.reason, result.criterion, **kw
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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


def claims_markdown(claims: list[Mapping[str, Any]]) -> str:
    """A Markdown table of claims: id, the paper's statement and value, our measurement, verdict."""
    rows = ["| claim | paper says | paper value | we measured | verdict | why |", "|---|---|---|---|---|---|"]
    for c in claims:
        cells = [
            f"`{c['id']}`",
            c["statement"],
            format_value(c["paper_value"]),
            format_value(c["measured"]),
            f"**{c['verdict']}**",
            c["reason"],
        ]
        rows.append("| " + " | ".join(str(x).replace("|", "\\|").replace("\n", " ") for x in cells) + " |")
    return "\n".join(rows)
