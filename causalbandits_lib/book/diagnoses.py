"""Why a result did not reproduce: the diagnosis stored with every "not reproduced" and "partly".

A failed replication is worth citing only when it makes the case that the failure is not its own.
Each chapter states its diagnoses in ``notebooks/<chapter>/diagnoses.yml``, written after reading
the paper-scale records, as a list of entries::

    - claims: [fucb.table1.fucb_regret.tau_*]     # claim ids of the chapter, or fnmatch patterns
      cause: contradicted                          # one of CAUSES
      text: >-
        One to three sentences in the book's words, with the numbers they rest on.
      evidence:                                    # the measurements the text rests on, at least one
        - claim: fucb.email.dseparation_identity   # a claim of any paper-scale record
        - metric: fucb/04_email_experiment:table1  # a metric of a paper-scale record (notebook:key)
        - choice: fucb/04_email_experiment:fallback  # an open choice with alternatives (notebook:parameter)

A paper-profile execution stores the entry that matches a result (kind ``experiment`` or
``theorem``) judged "not reproduced" or "partly" with the claim (``Claim.diagnosis``); the claims
tables show it and the reproducibility page groups them by cause. :func:`problems` says what is
wrong with a chapter's diagnoses against a folder of records (every pointer must resolve, and
each cause needs its own kind of evidence, :data:`CAUSE_NEEDS`); ``tests/integration/test_diagnoses.py``
runs it on the committed records and fails when a result lacks a diagnosis.

Check one chapter while writing its file: ``python -m causalbandits_lib.book.diagnoses CHAPTER``.
"""

from __future__ import annotations

import fnmatch
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from ..core.checks import RESULT_KINDS
from . import paths

__all__ = [
    "CAUSES",
    "CAUSE_NEEDS",
    "Diagnosis",
    "load_diagnoses",
    "diagnosis_for",
    "needs_diagnosis",
    "problems",
    "read_records",
]

#: The five causes, in the order the reproducibility page groups them, with their labels.
CAUSES = {
    "inconsistent": "(a) the paper is inconsistent with itself",
    "underspecified": "(b) the paper under-specifies; our reconstruction is one of several",
    "deviation": "(c) the result holds only under a stated deviation",
    "contradicted": "(d) contradicted: our implementation passes the chapter's exact checks",
    "underpowered": "(e) underpowered",
}

#: What each cause must point to, beyond any other evidence.
CAUSE_NEEDS = {
    "inconsistent": "a claim or metric that shows the computation",
    "underspecified": "an open choice with alternatives, or a claim of ours that measures an alternative",
    "deviation": "a claim of ours (the variant under the deviation), or an open choice",
    "contradicted": "an implementation check (identity or construction) of the chapter that reproduced",
    "underpowered": "a diagnosed claim whose verdict states the runs 80% power needs",
}

_POINTERS = ("claim", "metric", "choice")
_DIAGNOSED = ("not reproduced", "partly")


@dataclass(frozen=True)
class Diagnosis:
    """One entry of ``diagnoses.yml``: the claims it covers, its cause, text and evidence."""

    claims: tuple[str, ...]
    cause: str
    text: str
    evidence: tuple[Mapping[str, str], ...]

    def matches(self, claim_id: str) -> bool:
        return any(fnmatch.fnmatchcase(claim_id, p) for p in self.claims)

    def to_dict(self) -> dict[str, Any]:
        """As a record stores it with a claim."""
        return {
            "cause": self.cause,
            "label": CAUSES[self.cause],
            "text": self.text,
            "evidence": [dict(e) for e in self.evidence],
        }


def needs_diagnosis(claim: Mapping[str, Any]) -> bool:
    """A result (the paper's or ours) judged "not reproduced" or "partly"."""
    return claim.get("kind") in RESULT_KINDS and claim.get("verdict") in _DIAGNOSED


def _path(chapter: str) -> Path:
    return paths.notebooks_dir() / chapter / "diagnoses.yml"


def load_diagnoses(chapter: str) -> list[Diagnosis]:
    """The diagnoses of a chapter (none when it has no ``diagnoses.yml``), checked for shape."""
    path = _path(chapter)
    if not path.is_file():
        return []
    raw = yaml.safe_load(path.read_text()) or []
    if not isinstance(raw, list):
        raise ValueError(f"{path}: must be a list of entries with claims, cause, text and evidence")
    out = []
    for i, entry in enumerate(raw, 1):
        where = f"{path}: entry {i}"
        if not isinstance(entry, dict) or set(entry) != {"claims", "cause", "text", "evidence"}:
            got = sorted(entry) if isinstance(entry, dict) else type(entry).__name__
            raise ValueError(f"{where}: needs exactly claims, cause, text and evidence; has {got}")
        claims = entry["claims"]
        if isinstance(claims, str):
            claims = [claims]
        if not claims or not all(isinstance(c, str) and c.startswith(chapter + ".") for c in claims):
            raise ValueError(f"{where}: claims must be ids or patterns of chapter {chapter!r}, got {claims!r}")
        if entry["cause"] not in CAUSES:
            raise ValueError(f"{where}: cause {entry['cause']!r} is not one of {sorted(CAUSES)}")
        text = " ".join(str(entry["text"] or "").split())
        if not text:
            raise ValueError(f"{where}: text is empty")
        evidence = entry["evidence"]
        if not isinstance(evidence, list) or not evidence:
            raise ValueError(f"{where}: evidence must list at least one pointer ({', '.join(_POINTERS)})")
        for e in evidence:
            if not isinstance(e, dict) or len(e) != 1 or next(iter(e)) not in _POINTERS:
                raise ValueError(f"{where}: evidence item {e!r} must be one of {{{': ..., '.join(_POINTERS)}: ...}}")
        out.append(
            Diagnosis(tuple(claims), entry["cause"], text, tuple({k: str(v) for k, v in e.items()} for e in evidence))
        )
    return out


def diagnosis_for(claim_id: str, diagnoses: Iterable[Diagnosis]) -> Diagnosis | None:
    """The one entry that covers ``claim_id`` (None when none does; an error when two do)."""
    found = [d for d in diagnoses if d.matches(claim_id)]
    if len(found) > 1:
        raise ValueError(f"claim {claim_id}: covered by {len(found)} diagnoses ({[d.claims for d in found]}); one only")
    return found[0] if found else None


def read_records(folder: Path) -> dict[str, dict[str, Any]]:
    """Every record under ``folder`` by notebook id (``chapter/name``)."""
    return {f"{p.parent.name}/{p.stem}": json.loads(p.read_text()) for p in sorted(Path(folder).glob("*/*.json"))}


def _choices(notebook: str, sensitivity: Path | None) -> set[str]:
    """The open choices of a notebook: parameters with alternatives in its chapter's
    ``parameters.yml`` and the parameters its sensitivity record varied."""
    chapter = notebook.split("/")[0]
    spec = yaml.safe_load((paths.notebooks_dir() / chapter / "parameters.yml").read_text()) or {}
    names: set[str] = set()

    def walk(x):
        if isinstance(x, dict):
            for k, v in x.items():
                if isinstance(v, dict) and "alternatives" in v:
                    names.add(str(k))
                walk(v)
        elif isinstance(x, list):
            for v in x:
                walk(v)

    walk(spec)
    if sensitivity is not None:
        rec = sensitivity / f"{notebook}.json"
        if rec.is_file():
            names |= set(json.loads(rec.read_text()).get("alternatives", {}))
    return names


def problems(
    chapter: str,
    records: Mapping[str, Mapping[str, Any]],
    sensitivity: Path | None = None,
    stored: bool = True,
) -> list[str]:
    """What is wrong with a chapter's diagnoses against ``records`` (all paper-scale records by
    notebook id): a result that needs one and has none, an entry that covers no claim, a pointer
    that does not resolve, a cause without the evidence it needs (:data:`CAUSE_NEEDS`). With
    ``stored``, a record must also carry the entry as the file states it now (re-run the notebook
    after editing the file)."""
    diagnoses = load_diagnoses(chapter)
    out: list[str] = []
    claims = {c["id"]: (nb, c) for nb, r in records.items() for c in r.get("claims", [])}
    mine = {cid: v for cid, v in claims.items() if cid.startswith(chapter + ".")}
    for d in diagnoses:
        covered = [cid for cid in mine if d.matches(cid)]
        if not covered:
            out.append(f"{chapter}: diagnosis for {list(d.claims)} covers no claim of the records")
        has = {"claim_ok": False, "metric": False, "check": False, "ours": False, "choice": False}
        for e in d.evidence:
            ((kind, target),) = e.items()
            if kind == "claim":
                if target not in claims:
                    out.append(f"{chapter}: {list(d.claims)}: evidence claim {target!r} is in no paper-scale record")
                    continue
                c = claims[target][1]
                has["claim_ok"] = True
                if c.get("kind") in ("identity", "construction") and c["verdict"] == "reproduced":
                    has["check"] = True
                if c.get("ours"):
                    has["ours"] = True
            else:
                nb, _, key = target.partition(":")
                if nb not in records or not key:
                    where = f"{chapter}: {list(d.claims)}"
                    out.append(f"{where}: evidence {kind} {target!r} must be 'chapter/notebook:name'")
                    continue
                if kind == "metric":
                    metrics = records[nb].get("metrics", {})
                    if key not in metrics and key.split(".")[0] not in metrics:
                        out.append(f"{chapter}: {list(d.claims)}: metric {key!r} is not in the record of {nb}")
                        continue
                    has["metric"] = True
                else:
                    if key not in _choices(nb, sensitivity):
                        out.append(f"{chapter}: {list(d.claims)}: {key!r} is not an open choice of {nb}")
                        continue
                    has["choice"] = True
        need = {
            "inconsistent": has["claim_ok"] or has["metric"],
            "underspecified": has["choice"] or has["ours"],
            "deviation": has["ours"] or has["choice"],
            "contradicted": has["check"],
            "underpowered": all(
                "80% power" in mine[cid][1].get("reason", "") or "underpowered" in mine[cid][1].get("reason", "")
                for cid in covered
            ),
        }[d.cause]
        if not need:
            out.append(f"{chapter}: {list(d.claims)}: cause {d.cause} needs {CAUSE_NEEDS[d.cause]}")
    for cid, (nb, c) in sorted(mine.items()):
        if not needs_diagnosis(c):
            continue
        try:
            d = diagnosis_for(cid, diagnoses)
        except ValueError as exc:
            out.append(f"{chapter}: {exc}")
            continue
        if d is None:
            out.append(f"{chapter}: {cid} ({c['verdict']}, {nb}) has no diagnosis in notebooks/{chapter}/diagnoses.yml")
        elif stored and c.get("diagnosis") != d.to_dict():
            out.append(f"{chapter}: {cid}: the record's diagnosis is not the file's; re-run {nb} at the paper profile")
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m causalbandits_lib.book.diagnoses CHAPTER [--stored] [--records DIR]``: the
    chapter's problems against the committed paper-scale records, with the records of ``DIR`` (a
    ``--record-dir`` of trial executions) in place of the committed ones of the same notebooks; by
    default without asking that the records carry the file's current text."""
    args = list(sys.argv[1:] if argv is None else argv)
    stored = "--stored" in args
    args = [a for a in args if a != "--stored"]
    overlay = None
    if "--records" in args:
        i = args.index("--records")
        overlay = Path(args[i + 1]) if i + 1 < len(args) else None
        del args[i : i + 2]
    if len(args) != 1 or ("--records" in (argv or sys.argv) and overlay is None):
        print("usage: python -m causalbandits_lib.book.diagnoses CHAPTER [--stored] [--records DIR]", file=sys.stderr)
        return 2
    records = read_records(paths.paper_results_dir())
    if overlay is not None:
        records.update(read_records(overlay))
    found = problems(args[0], records, paths.book_root() / "results" / "sensitivity", stored=stored)
    for p in found:
        print(p)
    print(f"{len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
