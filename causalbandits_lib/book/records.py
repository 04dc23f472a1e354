"""Results records: the citable unit of the book.

One JSON record per notebook execution pins what is needed to reproduce and judge it: notebook id,
profile and resolved parameters, seeds, git commit and whether the tree was dirty, package
versions, a fingerprint of the library code that ran, data checksums and whether a stand-in was
used, timings, named metrics (``{"email.final_regret.D-UCB": 286.4}``), downsampled curves, and the
claims with their verdicts. Records are written atomically (temporary file, fsync, rename), so an
interrupted run never leaves a half-written record.

The record's ``content_hash`` is the SHA-256 of its canonical JSON (sorted keys, no whitespace)
without the ``content_hash`` field itself; :func:`load_record` verifies it. It changes with
everything, timings and git included, so it identifies one file. The ``results_hash`` covers only
what a faithful re-run must reproduce (:func:`results_view`: notebook, parameters, the data's
checksums and stand-in flags, metrics, curves, claims): two faithful runs at different commits and
times share it, and a citation prints it so that a reviewer's re-run can be checked against it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np

SCHEMA = "causalbandits.record/1"

#: Keys every record has.
REQUIRED_KEYS = (
    "schema",
    "notebook",
    "profile",
    "parameters",
    "seeds",
    "git",
    "library",
    "versions",
    "data",
    "timings",
    "metrics",
    "curves",
    "claims",
    "content_hash",
)


class RecordError(ValueError):
    """A record file is missing keys, malformed, or its content hash does not match."""


#: The JSON type each top-level key of a record must have.
_KEY_TYPES = {
    "schema": str,
    "notebook": str,
    "profile": str,
    "parameters": dict,
    "seeds": dict,
    "git": dict,
    "library": dict,
    "versions": dict,
    "data": list,
    "timings": dict,
    "metrics": dict,
    "curves": dict,
    "claims": list,
    "content_hash": str,
}
_TYPE_NAMES = {str: "a string", dict: "an object", list: "a list"}


def validate_record(record: Any, where: str = "record") -> None:
    """Check the structure every reader of a record relies on (``cite``, ``report``, ``collect``,
    a sweep's resume, ``diff``): the required keys with their types, a start time, and claims that
    each have an id, a statement, a reason and a known verdict. The one place records are judged.

    Raises
    ------
    RecordError
        Naming ``where`` (the file), the key and what is wrong.
    """
    from ..core.checks import KINDS, VERDICTS

    if not isinstance(record, dict):
        raise RecordError(f"{where}: a record must be a JSON object")
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        raise RecordError(f"{where}: record lacks key(s) {missing}")
    for key, kind in _KEY_TYPES.items():
        if not isinstance(record[key], kind):
            raise RecordError(
                f"{where}: {key!r} must be {_TYPE_NAMES[kind]}, got {type(record[key]).__name__} {record[key]!r:.60}"
            )
    if record["schema"] != SCHEMA:
        raise RecordError(f"{where}: schema {record['schema']!r}; this library reads {SCHEMA!r}")
    if not isinstance(record["timings"].get("started"), str):
        raise RecordError(f"{where}: timings.started (the start time, ISO 8601) is missing or not a string")
    for i, claim in enumerate(record["claims"]):
        if not isinstance(claim, dict):
            raise RecordError(f"{where}: claims[{i}] must be an object, got {claim!r:.60}")
        name = claim.get("id", f"claims[{i}]")
        for field in ("id", "statement", "verdict", "reason"):
            if not isinstance(claim.get(field), str):
                raise RecordError(f"{where}: claim {name} lacks {field!r} (a string)")
        if claim["verdict"] not in VERDICTS:
            raise RecordError(
                f"{where}: claim {name}: verdict {claim['verdict']!r} is not one of {', '.join(VERDICTS)}"
            )
        if claim.get("kind") is not None and claim["kind"] not in KINDS:
            raise RecordError(f"{where}: claim {name}: kind {claim['kind']!r} is not one of {', '.join(KINDS)}")
    for i, item in enumerate(record["data"]):
        if not isinstance(item, dict):
            raise RecordError(f"{where}: data[{i}] must be an object, got {item!r:.60}")


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (non-finite values are stored as strings)")


# ---------------------------------------------------------------------------- JSON helpers
def to_jsonable(value: Any) -> Any:
    """numpy scalars and arrays to Python numbers and lists; non-finite floats to strings."""
    if isinstance(value, np.ndarray):
        return to_jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, (np.integer, int)):
        return int(value)
    if isinstance(value, (np.floating, float)):
        v = float(value)
        return v if math.isfinite(v) else str(v)
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"cannot store a {type(value).__name__} in a record: {value!r}")


def canonical_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def content_hash(record: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of ``record`` without its ``content_hash`` field."""
    body = {k: v for k, v in record.items() if k != "content_hash"}
    return hashlib.sha256(canonical_json(body).encode("utf-8")).hexdigest()


def atomic_write_text(path: Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp creates 0600; a record is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return path


def results_view(record: Mapping[str, Any]) -> dict[str, Any]:
    """What a faithful re-run of a record must reproduce: the notebook, its parameters, the data
    it ran on (each data set's name, file checksums and whether a stand-in replaced it), the
    metrics, curves and claims. Not the commit, times, versions, platform or library fingerprint."""
    data = [
        {"name": d.get("name"), "files": d.get("files"), "stand_in": bool(d.get("stand_in"))}
        for d in record.get("data") or []
    ]
    view = {"notebook": record.get("notebook"), "parameters": record.get("parameters"), "data": data}
    return view | {k: record.get(k) for k in RESULT_KEYS}


def results_hash(record: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of :func:`results_view`."""
    return hashlib.sha256(canonical_json(to_jsonable(results_view(record))).encode("utf-8")).hexdigest()


def write_record(record: Mapping[str, Any], path: Path) -> Path:
    """Fill in ``results_hash`` and ``content_hash`` and write ``record`` atomically as indented JSON."""
    body = to_jsonable(dict(record))
    body["schema"] = SCHEMA
    body["results_hash"] = results_hash(body)
    body["content_hash"] = content_hash(body)
    validate_record(body, f"record for {body.get('notebook', '?')}")
    return atomic_write_text(
        path, json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n"
    )


def load_record(path: Path, verify: bool = True) -> dict[str, Any]:
    """Read and check a record.

    Raises
    ------
    RecordError
        If the file is not JSON (``NaN`` and ``Infinity`` included, which Python's reader would
        accept), fails :func:`validate_record`, or (with ``verify``) its content hash does not match
        its content.
    """
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"), parse_constant=_no_constant)
    except FileNotFoundError:
        raise RecordError(f"{path}: no such record") from None
    except IsADirectoryError:
        raise RecordError(f"{path}: is a folder, not a record") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: not a JSON record ({exc})") from None
    except ValueError as exc:  # NaN or Infinity
        raise RecordError(f"{path}: not a valid record: {exc}") from None
    validate_record(record, str(path))
    if verify and content_hash(record) != record["content_hash"]:
        raise RecordError(f"{path}: content hash does not match the content (edited or truncated record)")
    if verify and "results_hash" in record and results_hash(record) != record["results_hash"]:
        raise RecordError(f"{path}: results hash does not match the results (edited record)")
    return record


def find_records(folder: Path) -> list[Path]:
    """All ``*.json`` records below ``folder``, sorted."""
    folder = Path(folder)
    return sorted(p for p in folder.rglob("*.json") if p.is_file()) if folder.is_dir() else []


# ---------------------------------------------------------------------------- comparing results
#: The parts of a record that are its results; two runs reproduce each other when these are equal.
RESULT_KEYS = ("metrics", "curves", "claims")


def _numbers_close(a: Any, b: Any, rtol: float) -> bool:
    """``a == b``, numbers (at any depth of lists and dicts) within ``rtol`` relative tolerance."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or abs(a - b) <= rtol * max(abs(a), abs(b))
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_numbers_close(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_numbers_close(a[k], b[k], rtol) for k in a)
    return a == b


def _change(a: Any, b: Any) -> str:
    """``a → b``, with the absolute and relative change when both are numbers."""
    text = f"{a!r} → {b!r}"
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        rel = f", relative {(b - a) / abs(a):+.3g}" if a else ""
        text += f" (change {b - a:+.6g}{rel})"
    return text


#: Claim fields that are prose about the numbers: compared exactly only when ``rtol`` is 0.
_CLAIM_PROSE = ("reason",)


def compare_results(
    old: Mapping[str, Any], new: Mapping[str, Any], keys: Iterable[str] = RESULT_KEYS, rtol: float = 0.0
) -> list[str]:
    """The differences between the results of two records, one line each (empty if identical).

    Parameters that differ come first, then metrics and curves by name, then claims by id (a
    changed verdict as ``old → new``). Values are compared exactly by default (a re-run with the
    same code, parameters and seed must give the same bits); with ``rtol`` > 0 numbers may differ
    by that relative amount, verdicts must still be equal, and the claims' prose reasons (which
    print the numbers) are not compared.
    """
    out = []
    if old.get("notebook") != new.get("notebook"):
        out.append(f"notebook: {old.get('notebook')!r} != {new.get('notebook')!r}")
    pa, pb = old.get("parameters") or {}, new.get("parameters") or {}
    for name in sorted(set(pa) | set(pb)):
        if pa.get(name, "(not set)") != pb.get(name, "(not set)"):
            out.append(f"parameters.{name}: {pa.get(name, '(not set)')!r} → {pb.get(name, '(not set)')!r}")
    for key in keys:
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if key == "claims":
            a_map = {c["id"]: c for c in a or []}
            b_map = {c["id"]: c for c in b or []}
        else:
            a_map, b_map = dict(a or {}), dict(b or {})
        for name in sorted(set(a_map) | set(b_map)):
            if name not in b_map:
                out.append(f"{key}.{name}: only in the first record")
            elif name not in a_map:
                out.append(f"{key}.{name}: only in the second record")
            elif key == "claims":
                ca, cb = a_map[name], b_map[name]
                fields = [
                    f
                    for f in sorted(set(ca) | set(cb))
                    if not (rtol > 0 and f in _CLAIM_PROSE) and not _numbers_close(ca.get(f), cb.get(f), rtol)
                ]
                if "verdict" in fields:
                    out.append(f"claims.{name}: verdict {ca.get('verdict')} → {cb.get('verdict')}")
                    fields.remove("verdict")
                if fields:
                    out.append(f"claims.{name}: differs in {', '.join(fields)}")
            elif not _numbers_close(a_map[name], b_map[name], rtol):
                if key == "metrics":
                    out.append(f"metrics.{name}: {_change(a_map[name], b_map[name])}")
                else:
                    out.append(f"{key}.{name}: differs")
        if key == "claims" and [c["id"] for c in a or []] != [c["id"] for c in b or []] and set(a_map) == set(b_map):
            out.append("claims: same ids in a different order")
    return out


def compare_record_files(old: Path, new: Path, rtol: float = 0.0) -> dict[str, list[str]]:
    """Compare two records, or two folders of records matched by relative path.

    Returns a dict from relative path to its differences (records missing on either side included).

    Raises
    ------
    RecordError
        If a path is neither a record nor a folder, or a record is malformed.
    """
    old, new = Path(old), Path(new)
    if old.is_file() and new.is_file():
        return {new.name: compare_results(load_record(old), load_record(new), rtol=rtol)}
    if not (old.is_dir() and new.is_dir()):
        raise RecordError(f"compare two record files or two folders of records; got {old} and {new}")
    a = {p.relative_to(old).as_posix(): p for p in find_records(old)}
    b = {p.relative_to(new).as_posix(): p for p in find_records(new)}
    out: dict[str, list[str]] = {}
    for rel in sorted(set(a) | set(b)):
        if rel not in b:
            out[rel] = [f"no record in {new}"]
        elif rel not in a:
            out[rel] = [f"no record in {old}"]
        else:
            out[rel] = compare_results(load_record(a[rel]), load_record(b[rel]), rtol=rtol)
    return out
