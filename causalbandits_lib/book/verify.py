"""Check a cited record: re-run its notebook with the record's parameters and compare the results.

A reviewer who receives a citation gets a copy of the source it names (a clone at its commit, the
source archive inside the built book, or any copy whose files have its tree) and runs
``causalbandits verify --swhid swh:1:dir:<tree> RECORD`` (or ``--claim ID``: :func:`find_claim_record`).
:func:`check_version` first checks that the copy is that version (its commit with unchanged files,
or the git tree id of its files as they are) and otherwise stops with one line naming both
identifiers, before anything runs. The notebook is executed again with every parameter the record holds (its profile and
seed included), into a temporary folder, and the new record is compared with the cited one: the
data it ran on (checksums, stand-ins), then the results hash (:func:`records.results_hash`), and
when the hashes differ, metric by metric, curve by curve and claim by claim
(:func:`records.compare_results`). ``smoke=True`` re-executes at the smoke profile instead, which
checks only that the notebook still runs and that it judges every claim the record holds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from .params import ParameterError
from .records import compare_results, find_records, load_record, results_hash, results_view

__all__ = [
    "Verification",
    "verify_record",
    "verify_by_path",
    "compare_data",
    "run_summary",
    "find_claim_record",
    "check_version",
]


@dataclass
class Verification:
    """The outcome of verifying one record."""

    record: Path
    notebook: str
    smoke: bool
    cited_hash: str
    rerun_hash: str | None = None
    rerun: Path | None = None
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences


def compare_data(cited: dict, rerun: dict) -> list[str]:
    """Differences in the data two records ran on: a data set missing on one side, other file
    checksums, or a stand-in on one side only."""
    a = {d["name"]: d for d in results_view(cited)["data"]}
    b = {d["name"]: d for d in results_view(rerun)["data"]}
    out = []
    for name in sorted(set(a) | set(b)):
        if name not in b:
            out.append(f"data.{name}: used by the cited record, not by the re-run")
        elif name not in a:
            out.append(f"data.{name}: used by the re-run, not by the cited record")
        else:
            if a[name]["stand_in"] != b[name]["stand_in"]:
                which = "the re-run" if b[name]["stand_in"] else "the cited record"
                out.append(f"data.{name}: {which} ran on the synthetic stand-in, the other on the real data")
            files_a, files_b = a[name]["files"] or {}, b[name]["files"] or {}
            for f in sorted(set(files_a) | set(files_b)):
                if files_a.get(f) != files_b.get(f):
                    out.append(f"data.{name}: {f} has checksum {files_b.get(f)} here, {files_a.get(f)} in the record")
    return out


def plan_verification(path: Path, smoke: bool = False):
    """What re-running the record at ``path`` means: ``(cited record, notebook spec, parameters)``.

    Raises
    ------
    RecordError
        If the record is malformed or its hashes do not match its content.
    ParameterError
        If the record's notebook or parameters are not valid at this checkout (named).
    """
    from .execution import resolve_target

    cited = load_record(path)
    (spec,) = resolve_target(cited["notebook"])
    if smoke:
        given = {"profile": "smoke", "seed": cited["parameters"].get("seed", 0)}
    else:
        given = dict(cited["parameters"])
    spec.resolve(given)  # a parameter this checkout no longer knows stops here, named
    return cited, spec, given


def judge_rerun(path: Path, cited: dict, rerun_path: Path, smoke: bool = False, rtol: float = 0.0) -> Verification:
    """Compare the re-run record at ``rerun_path`` with the record ``cited`` (read from ``path``)."""
    outcome = Verification(Path(path), cited["notebook"], smoke, cited.get("results_hash") or results_hash(cited))
    rerun = load_record(rerun_path)
    outcome.rerun, outcome.rerun_hash = Path(rerun_path), rerun["results_hash"]
    if smoke:
        judged = {c["id"] for c in rerun["claims"]}
        outcome.differences += [
            f"claims.{c['id']}: not judged by the smoke re-run" for c in cited["claims"] if c["id"] not in judged
        ]
        return outcome
    outcome.differences += compare_data(cited, rerun)
    if outcome.rerun_hash != outcome.cited_hash:
        outcome.differences += compare_results(cited, rerun, rtol=rtol)
        if not outcome.differences and rtol == 0:  # pragma: no cover - the hash covers only what is compared
            outcome.differences.append("results hash differs")
    return outcome


def failed_rerun(path: Path, cited: dict, smoke: bool, why: str) -> Verification:
    """The verification of a record whose re-run failed (``why``, one line)."""
    outcome = Verification(Path(path), cited["notebook"], smoke, cited.get("results_hash") or results_hash(cited))
    outcome.differences.append(f"the re-run failed: {why}")
    return outcome


def verify_record(
    path: Path,
    out_dir: Path,
    rtol: float = 0.0,
    smoke: bool = False,
    timeout: int | None = None,
    progress: bool = False,
) -> Verification:
    """Re-run the notebook of the record at ``path`` into ``out_dir`` and compare.

    Raises
    ------
    RecordError
        If the record is malformed or its hashes do not match its content.
    ParameterError
        If the record's notebook or parameters are not valid at this checkout (named).
    """
    from .execution import ExecutionError, execute_notebook

    cited, spec, given = plan_verification(path, smoke)
    try:
        executed = execute_notebook(spec, given, out_dir, out_dir, progress=progress, timeout=timeout)
    except ExecutionError as exc:
        return failed_rerun(path, cited, smoke, str(exc))
    return judge_rerun(path, cited, executed.record, smoke, rtol)


def verify_by_path(path: str, out_dir: str, rtol: float, smoke: bool, timeout: int | None) -> Verification:
    """:func:`verify_record` for a worker process of ``causalbandits verify --jobs``."""
    return verify_record(Path(path), Path(out_dir), rtol=rtol, smoke=smoke, timeout=timeout)


def find_claim_record(claim_id: str, results: Path | None = None) -> Path:
    """The committed paper-scale record (under ``results``, default ``results/paper``) that holds
    the claim ``claim_id``, as a citation names it (``fucb.fig2b.ucb_c_d_order``).

    Raises
    ------
    ParameterError
        If no record, or more than one, holds it (naming the claim and the folder).
    """
    import json

    from . import paths

    folder = Path(results) if results is not None else paths.paper_results_dir()
    chapter = claim_id.split(".", 1)[0]
    found = []
    for path in sorted(find_records(folder), key=lambda p: (p.parent.name != chapter, p.as_posix())):
        try:
            claims = json.loads(path.read_text(encoding="utf-8")).get("claims") or []
        except (OSError, ValueError, AttributeError):
            continue
        if any(isinstance(c, dict) and c.get("id") == claim_id for c in claims):
            found.append(path)
    if not found:
        raise ParameterError(
            f"--claim {claim_id!r}: no record under {folder} holds this claim; give the cited record's path instead"
        )
    if len(found) > 1:
        raise ParameterError(f"--claim {claim_id!r}: held by {len(found)} records ({', '.join(map(str, found))})")
    return found[0]


def _version_words(kind: str, object_id: str | None) -> str:
    from .provenance import swhid

    if object_id is None:
        return f"{'commit' if kind == 'rev' else 'tree'} unknown"
    try:
        return swhid(kind, object_id)
    except ValueError:
        return object_id


def check_version(
    root: Path, commit: str | None = None, tree: str | None = None, swhid: str | None = None
) -> list[str]:
    """Check, before anything runs, that the source at ``root`` is the version a citation names:
    its commit (``commit``, or ``swhid`` ``swh:1:rev:...``; the files must also be unchanged) or the
    tree of its files (``tree``, or ``swhid`` ``swh:1:dir:...``; any copy, an unpacked source
    archive included). Returns the lines that say what matched (none when nothing was asked).

    Raises
    ------
    ParameterError
        One line naming both identifiers when the source is another version, or saying why the
        check cannot be made (exit code 2: nothing runs).
    """
    from .provenance import parse_swhid, source_state, tree_of

    wanted: list[tuple[str, str, str]] = []  # (kind, id, option)
    for option, kind, value in (("--commit", "rev", commit), ("--tree", "dir", tree)):
        if value is not None:
            value = value.strip().lower()
            if not re.fullmatch(r"[0-9a-f]{7,40}", value):
                raise ParameterError(f"{option} {value!r}: expected 7 to 40 hexadecimal digits, as the citation prints")
            wanted.append((kind, value, option))
    if swhid is not None:
        try:
            kind, value = parse_swhid(swhid)
        except ValueError as exc:
            raise ParameterError(f"--swhid: {exc}")
        if kind not in ("rev", "dir"):
            raise ParameterError(
                f"--swhid {swhid}: a swh:1:{kind} names no version of the source; give swh:1:rev or swh:1:dir"
            )
        wanted.append((kind, value, "--swhid"))
    if not wanted:
        return []
    state = source_state(root)
    if state["tree"] is None:
        raise ParameterError(f"{root}: this copy's tree id cannot be computed (is git installed?); nothing was run")
    here_tree = _version_words("dir", state["tree"])
    lines = []
    for kind, value, option in wanted:
        if kind == "dir":
            if not state["tree"].startswith(value):
                raise ParameterError(
                    f"this copy is another version: its tree is {here_tree}, the citation's is "
                    f"{_version_words('dir', value)} ({option}); nothing was run"
                )
            lines.append(f"this copy's tree is {here_tree}: the version the citation names")
            continue
        if state["commit"] is None:
            raise ParameterError(
                f"{option} {value}: this copy is not a git checkout, so its commit is unknown; check its files with "
                f"--tree or --swhid swh:1:dir:... (the citation and the book's SOURCE.txt print it); nothing was run"
            )
        cited_tree = tree_of(value, root)
        if state["commit"].startswith(value) and not state["changes"]:
            lines.append(f"this checkout is at commit {state['commit']}: the version the citation names")
        elif cited_tree is not None and cited_tree == state["tree"]:
            lines.append(
                f"this checkout's files have the tree of commit {value} ({here_tree}): the version the citation names"
            )
        elif state["commit"].startswith(value):
            raise ParameterError(
                f"this checkout is at {_version_words('rev', state['commit'])} with uncommitted changes: its tree is "
                f"{here_tree}, the commit's is {_version_words('dir', cited_tree)} ({option}); nothing was run"
            )
        else:
            raise ParameterError(
                f"this checkout is another version: its commit is {_version_words('rev', state['commit'])}, "
                f"the citation's is {_version_words('rev', value)} ({option}); nothing was run"
            )
    return lines


def run_summary(record_path: Path) -> list[str]:
    """What ``causalbandits run`` prints after a notebook: the verdict counts, and either every
    claim whose verdict differs from the committed paper-scale record of the same notebook, or a
    line saying why no comparison is made (no such record, or other parameters)."""
    from ..core.checks import VERDICTS
    from . import paths

    rec = load_record(record_path)
    counts = {v: sum(c["verdict"] == v for c in rec["claims"]) for v in VERDICTS}
    lines = [f"claims ({rec['profile']} profile): " + (", ".join(f"{n} {v}" for v, n in counts.items() if n) or "none")]
    chapter, name = rec["notebook"].split("/")
    committed = paths.paper_results_dir() / chapter / f"{name}.json"
    if not committed.is_file():
        return lines + ["no committed paper-scale record of this notebook to compare with"]
    if committed.resolve() == Path(record_path).resolve():
        return lines + ["this run wrote the paper-scale record itself (compare with git diff or causalbandits diff)"]
    paper = load_record(committed)
    other = {k: v for k, v in rec["parameters"].items() if k != "profile" and paper["parameters"].get(k) != v}
    if other:
        shown = ", ".join(f"{k}={v!r} (record: {paper['parameters'].get(k)!r})" for k, v in sorted(other.items()))
        return lines + [f"parameters differ from the committed paper-scale record ({shown}): verdicts not compared"]
    by_id = {c["id"]: c["verdict"] for c in paper["claims"]}
    moved = [
        f"  {c['id']}: {c['verdict']} here, {by_id[c['id']]} in the paper-scale record"
        for c in rec["claims"]
        if c["id"] in by_id and by_id[c["id"]] != c["verdict"]
    ]
    new = [f"  {c['id']}: not in the paper-scale record" for c in rec["claims"] if c["id"] not in by_id]
    if not moved and not new:
        return lines + [f"every verdict as in the committed paper-scale record {committed.name}"]
    return (
        lines
        + [f"{len(moved)} verdict(s) differ from the committed paper-scale record {committed.name}:"]
        + moved
        + new
    )
