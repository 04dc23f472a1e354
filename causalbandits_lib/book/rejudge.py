"""Judging a record's claims again from what the record stores (``causalbandits rejudge``).

Every claim keeps the check that gave its verdict and the inputs it was given (``evidence``: the
per-run or per-instance numbers, compressed when large). :func:`rejudge_record` computes every
verdict again from those inputs with the checks of :mod:`causalbandits_lib.core.checks` as they
are in this checkout, and reports where the verdict, its reason, its rule or its numbers differ
from what the record states. With the checks unchanged it reproduces every verdict; after a change
of the checks it shows, claim by claim, what the new rule would say of the same measurements,
without running anything.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..core.checks import rejudge
from .claims import Claim
from .records import find_records, load_record

__all__ = ["Rejudged", "rejudge_claim", "rejudge_record", "rejudge_paths"]

#: The fields of a claim a re-judgement must reproduce.
JUDGED_FIELDS = ("verdict", "reason", "criterion", "details", "sensitive_to")


@dataclass
class Rejudged:
    """What re-judging one record gave: the claims judged again, and per claim what differs."""

    path: Path
    n_claims: int = 0
    differences: dict[str, list[str]] = field(default_factory=dict)
    without_evidence: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences and not self.without_evidence


def rejudge_claim(claim: Mapping[str, Any]) -> dict[str, Any]:
    """The claim as the current checks judge its stored evidence (a claim dict, as records hold it)."""
    evidence = claim.get("evidence")
    if not evidence:
        raise ValueError(f"claim {claim.get('id')}: no evidence stored; it cannot be judged again")
    verdict = rejudge(evidence)
    again = Claim.from_verdict(
        claim["id"],
        claim["statement"],
        claim.get("paper_value"),
        claim.get("measured"),
        verdict,
        source=claim.get("source", ""),
        section=claim.get("section", "claims"),
        kind=claim.get("kind"),
        ours=claim.get("ours"),
        reconstructed=claim.get("reconstructed"),
    )
    return again.to_dict()


def rejudge_record(path: Path) -> Rejudged:
    """Every claim of the record at ``path`` judged again; see :class:`Rejudged`."""
    import json

    record = load_record(Path(path))
    out = Rejudged(Path(path), n_claims=len(record["claims"]))
    for c in record["claims"]:
        if not c.get("evidence"):
            out.without_evidence.append(c["id"])
            continue
        again = json.loads(json.dumps(rejudge_claim(c)))
        lines = []
        if again.get("verdict") != c.get("verdict"):
            lines.append(f"verdict {c.get('verdict')} → {again.get('verdict')}")
        for key in JUDGED_FIELDS[1:]:
            if again.get(key) != c.get(key):
                lines.append(f"{key} differs")
        if lines:
            out.differences[c["id"]] = lines
    return out


def rejudge_paths(paths: list[Path]) -> list[Rejudged]:
    """:func:`rejudge_record` over records and folders of records (a missing path raises
    FileNotFoundError)."""
    files: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            files += find_records(p)
        elif p.is_file():
            files.append(p)
        else:
            raise FileNotFoundError(f"rejudge: {p}: no such record or folder")
    return [rejudge_record(f) for f in files]
