"""Reading a sensitivity record beside a paper-scale record: where it is, what it holds, and the
paper-scale record's claims with the verdict moves it found (one merge for the reproducibility
page and the notebook pages). Running the alternatives is :mod:`.sensitivity`'s."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

from . import paths
from .params import load_chapter
from .records import RecordError, to_jsonable

__all__ = ["sensitivity_beside", "load_sensitivity", "merge_sensitivity"]


def sensitivity_beside(paper_record: Path) -> Path:
    """The sensitivity record of the notebook whose paper-scale record is ``paper_record``
    (``results/paper/<chapter>/<notebook>.json`` -> ``results/sensitivity/<chapter>/<notebook>.json``)."""
    paper_record = Path(paper_record)
    return paper_record.parent.parent.parent / "sensitivity" / paper_record.parent.name / paper_record.name


def _same_scale(record: Mapping[str, Any], profile: str) -> bool:
    """True when ``profile``'s values of the notebook's parameters are the record's own (a
    sensitivity record at a profile as large as the paper's is paper-scale evidence, whatever its
    name)."""
    try:
        chapter, name = str(record["notebook"]).split("/")
        declared = load_chapter(paths.notebooks_dir() / chapter).notebooks[name].all_parameters()
    except (KeyError, ValueError, OSError):
        return False
    given = record.get("parameters", {})
    return all(to_jsonable(p.default(profile)) == given.get(name) for name, p in declared.items() if name in given)


def merge_sensitivity(record: dict[str, Any], path: Path) -> dict[str, Any]:
    """The paper-scale record at ``path`` with the verdict moves of its sensitivity record, when
    there is one (``results/sensitivity/<chapter>/<notebook>.json`` beside ``results/paper``).

    A sensitivity record run at the record's scale (its profile's parameter values are the
    record's) is paper-scale evidence: its moves join the claim's ``sensitive_to``. One at a
    smaller scale is not evidence about a paper-scale verdict: its moves are kept apart
    (``sensitive_at_profile``) and said as what they are, the choice's verdicts against our
    choice's verdict at that profile, both from runs of that size. The reproducibility page and
    each notebook page's claims table read the record through this one function."""
    sens_path = sensitivity_beside(path)
    if not sens_path.is_file():
        return record
    sens = load_sensitivity(sens_path)
    profile = sens["profile"]
    same = profile == record.get("profile") or _same_scale(record, profile)
    claims = []
    for c in record["claims"]:
        moves = sens["sensitive_to"].get(c["id"])
        if moves:
            c = dict(c)
            text = "; ".join(
                f"{knob}: " + ", ".join(f"{v} → {verdict}" for v, verdict in by_value.items())
                for knob, by_value in moves.items()
            )
            if same:
                c["sensitive_to"] = {**(c.get("sensitive_to") or {}), **moves}
                c["reason"] = f"{c['reason']}; depends on our choice of {text}"
            else:
                c["sensitive_at_profile"] = {"profile": profile, "moves": moves}
                c["reason"] = (
                    f"{c['reason']}; an open choice moves this claim at the {profile} profile, both verdicts from "
                    f"runs of that size ({text}); not measured at the paper's scale"
                )
        claims.append(c)
    return {**record, "claims": claims}


def load_sensitivity(path: Path) -> dict[str, Any]:
    """Read a sensitivity record, naming the file and the missing key when it is malformed."""
    try:
        body = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise RecordError(f"{path}: not a readable sensitivity record ({exc})") from None
    for key in ("notebook", "profile", "baseline", "alternatives", "sensitive_to"):
        if key not in body:
            raise RecordError(f"{path}: sensitivity record lacks key {key!r}")
    return body
