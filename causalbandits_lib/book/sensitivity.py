"""How the verdicts of a notebook move with the choices the paper left open.

A knob marked ``ours: true`` in ``parameters.yml`` with ``alternatives: [...]`` is a choice of ours
where the paper was silent. :func:`run_sensitivity` executes the notebook once at our choices (the
baseline) and once per alternative value, one knob at a time and everything else at the profile's
values, through the sweep machinery (so a crashed run resumes where it stopped and the points run
on joblib or Dask). It then compares every claim's verdict with the baseline's at the same
profile and writes ``results/sensitivity/<chapter>/<notebook>.json``:

- ``profile``, ``git`` and ``baseline`` (the knobs' chosen values and the baseline verdicts);
- ``alternatives``: ``{knob: {value: {claim id: verdict}}}``;
- ``sensitive_to``: ``{claim id: {knob: {value: verdict}}}`` for every claim whose verdict differs
  under some alternative (the chosen value included, so the row reads on its own).

The reproducibility page marks those claims *choice-dependent* and counts them. Values are keyed by
their JSON text (``0.5``, ``[0.7, 0.6]``, ``"unconstrained"``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Mapping

from . import paths
from .choices import load_sensitivity, merge_sensitivity, sensitivity_beside
from .params import NotebookSpec
from .provenance import git_info
from .records import RecordError, atomic_write_text, load_record

__all__ = [
    "sensitivity_points",
    "run_sensitivity",
    "summarise",
    "sensitivity_path",
    "sensitivity_beside",
    "load_sensitivity",
    "merge_sensitivity",
]


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def sensitivity_points(spec: NotebookSpec, profile: str) -> list[tuple[str | None, Any, dict[str, Any]]]:
    """``(knob, value, parameters to inject)`` for the baseline (knob None) and each alternative."""
    points: list[tuple[str | None, Any, dict[str, Any]]] = [(None, None, {"profile": profile})]
    for name, param in spec.open_choices().items():
        for value in param.alternatives:
            points.append((name, value, {"profile": profile, name: value}))
    return points


def summarise(
    spec: NotebookSpec, profile: str, baseline: Mapping[str, Any], runs: Mapping[str, Mapping[str, Mapping[str, str]]]
) -> dict[str, Any]:
    """The sensitivity record's body from the baseline record and ``{knob: {value key: verdicts}}``."""
    base = {c["id"]: c["verdict"] for c in baseline["claims"]}
    chosen = {k: baseline["parameters"][k] for k in spec.open_choices()}
    sensitive: dict[str, dict[str, dict[str, str]]] = {}
    for knob, by_value in runs.items():
        for cid, verdict in base.items():
            moves = {v: verdicts.get(cid, "not run") for v, verdicts in by_value.items()}
            if any(m != verdict for m in moves.values()):
                sensitive.setdefault(cid, {})[knob] = {_key(chosen[knob]): verdict, **moves}
    return {
        "notebook": spec.id,
        "profile": profile,
        "baseline": {"parameters": chosen, "verdicts": base, "record_commit": baseline["git"].get("commit")},
        "alternatives": {k: dict(v) for k, v in runs.items()},
        "sensitive_to": sensitive,
    }


def sensitivity_path(spec: NotebookSpec, root: Path | None = None) -> Path:
    root = paths.book_root() / "results" / "sensitivity" if root is None else Path(root)
    return root / spec.chapter / f"{spec.name}.json"


def run_sensitivity(
    spec: NotebookSpec,
    profile: str,
    out: Path,
    jobs: int = 1,
    scheduler: str | None = None,
    result_root: Path | None = None,
    log: Callable[[str], None] = print,
) -> Path | None:
    """Run the baseline and every alternative of ``spec`` at ``profile`` and write the sensitivity
    record (see the module docstring). Returns its path, or None when the notebook has no open
    choice with alternatives.

    Raises
    ------
    SweepError
        When a point failed after its retries (re-running resumes with the missing points only).
    """
    from .sweep import SweepError, point_folder, run_sweep

    points = sensitivity_points(spec, profile)
    if len(points) == 1:
        return None
    report = run_sweep(spec, [g for _, _, g in points], Path(out), jobs=jobs, scheduler=scheduler, log=log)
    if report.failed:
        raise SweepError(f"sensitivity of {spec.id}: {len(report.failed)} point(s) failed; re-run to retry only those")
    folder = Path(out) / spec.chapter / spec.name
    records = {}
    for knob, value, given in points:
        try:
            records[(knob, _key(value))] = load_record(folder / point_folder(spec, given) / "record.json")
        except RecordError as exc:
            raise SweepError(f"sensitivity of {spec.id}: {exc}") from None
    baseline = records[(None, _key(None))]
    runs: dict[str, dict[str, dict[str, str]]] = {}
    for knob, value, _ in points[1:]:
        rec = records[(knob, _key(value))]
        runs.setdefault(knob, {})[_key(value)] = {c["id"]: c["verdict"] for c in rec["claims"]}
    body = summarise(spec, profile, baseline, runs)
    body["git"] = git_info(paths.book_root())
    path = sensitivity_path(spec, result_root)
    atomic_write_text(path, json.dumps(body, indent=1, sort_keys=True) + "\n")
    moved, total = len(body["sensitive_to"]), len(body["baseline"]["verdicts"])
    log(f"sensitivity {spec.id}: {moved} of {total} verdicts move with an open choice -> {path}")
    return path
