"""Results records: the citable unit of the book.

One JSON record per notebook execution pins what is needed to reproduce and judge it: notebook id,
profile and resolved parameters, seeds, git commit and whether the tree was dirty, package
versions, a fingerprint of the library code that ran, data checksums and whether a stand-in was
used, timings, named metrics (``{"email.final_regret.D-UCB": 286.4}``), downsampled curves, and the
claims with their verdicts. Records are written atomically (temporary file, fsync, rename), so an
interrupted run never leaves a half-written record.

The record's ``content_hash`` is the SHA-256 of its canonical JSON (sorted keys, no whitespace)
without the ``content_hash`` field itself; :func:`load_record` verifies it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
from importlib import metadata
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

#: Packages whose versions are pinned in every record.
PINNED_PACKAGES = (
    "causalbandits-lib",
    "numpy",
    "scipy",
    "networkx",
    "pgmpy",
    "cvxpy",
    "clarabel",
    "matplotlib",
    "pandas",
    "papermill",
    "jupytext",
    "ipykernel",
)


class RecordError(ValueError):
    """A record file is missing keys, malformed, or its content hash does not match."""


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


def write_record(record: Mapping[str, Any], path: Path) -> Path:
    """Fill in ``content_hash`` and write ``record`` atomically as indented JSON."""
    body = to_jsonable(dict(record))
    body["schema"] = SCHEMA
    body["content_hash"] = content_hash(body)
    missing = [k for k in REQUIRED_KEYS if k not in body]
    if missing:
        raise RecordError(f"record for {body.get('notebook', '?')} lacks key(s) {missing}")
    return atomic_write_text(path, json.dumps(body, indent=1, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n")


def load_record(path: Path, verify: bool = True) -> dict[str, Any]:
    """Read and check a record.

    Raises
    ------
    RecordError
        If the file is not JSON, lacks a required key, has another schema, or (with ``verify``)
        its content hash does not match its content.
    """
    path = Path(path)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RecordError(f"{path}: no such record") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordError(f"{path}: not a JSON record ({exc})") from None
    if not isinstance(record, dict):
        raise RecordError(f"{path}: a record must be a JSON object")
    missing = [k for k in REQUIRED_KEYS if k not in record]
    if missing:
        raise RecordError(f"{path}: record lacks key(s) {missing}")
    if record["schema"] != SCHEMA:
        raise RecordError(f"{path}: schema {record['schema']!r}; this library reads {SCHEMA!r}")
    if verify and content_hash(record) != record["content_hash"]:
        raise RecordError(f"{path}: content hash does not match the content (edited or truncated record)")
    return record


def find_records(folder: Path) -> list[Path]:
    """All ``*.json`` records below ``folder``, sorted."""
    folder = Path(folder)
    return sorted(p for p in folder.rglob("*.json") if p.is_file()) if folder.is_dir() else []


# ---------------------------------------------------------------------------- provenance
#: Paths whose uncommitted changes do not make a record "dirty": the records and the pages generated
#: from them are the output of the runs being recorded (``make reproduce`` rewrites them one notebook
#: at a time), not an input to them.
GENERATED_PATHS = ("results", "book/reproducibility.md", "book/_reproduction_summary.md")


def git_info(root: Path) -> dict[str, Any]:
    """Commit, dirty flag and commit date of the checkout at ``root`` (``None`` outside git).

    ``dirty`` is true when a tracked file other than :data:`GENERATED_PATHS` has uncommitted changes.
    """

    def git(*args: str) -> str | None:
        try:
            out = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, timeout=20)
        except (OSError, subprocess.SubprocessError):
            return None
        return out.stdout.strip() if out.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return {"commit": None, "dirty": None, "commit_date": None}
    status = git("status", "--porcelain", "--untracked-files=no", "--", ".", *(f":(exclude){p}" for p in GENERATED_PATHS))
    return {"commit": commit, "dirty": bool(status), "commit_date": git("show", "-s", "--format=%cI", "HEAD")}


def package_versions(packages: Iterable[str] = PINNED_PACKAGES) -> dict[str, str | None]:
    """Installed versions of ``packages`` and of Python itself."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def platform_info() -> dict[str, Any]:
    return {"system": platform.system(), "machine": platform.machine(), "cpus": os.cpu_count(), "python": sys.version.split()[0]}


#: Library modules that only run, store or display things; a change in them cannot change a
#: measurement, so they are left out of the fingerprint that flags results as stale.
INFRASTRUCTURE_MODULES = frozenset(
    f"causalbandits_lib.{m}" for m in ("cli", "execution", "notebook", "params", "paths", "plotting", "records", "report")
)


def library_fingerprint(module_names: Iterable[str] | None = None) -> dict[str, Any]:
    """SHA-256 of the source of the library modules that ran.

    Parameters
    ----------
    module_names : iterable of str, optional
        Dotted module names; default: every ``causalbandits_lib`` module imported so far, except
        :data:`INFRASTRUCTURE_MODULES`.

    Returns
    -------
    dict
        ``{"modules": {name: sha256}, "source_hash": sha256 over all of them}``.
    """
    if module_names is None:
        module_names = [
            m
            for m in sys.modules
            if (m == "causalbandits_lib" or m.startswith("causalbandits_lib.")) and m not in INFRASTRUCTURE_MODULES
        ]
    hashes = {}
    for name in sorted(set(module_names)):
        mod = sys.modules.get(name)
        path = getattr(mod, "__file__", None) if mod is not None else None
        if path is None:
            import importlib.util

            spec = importlib.util.find_spec(name)
            path = spec.origin if spec else None
        if path and Path(path).is_file():
            hashes[name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    total = hashlib.sha256(canonical_json(hashes).encode()).hexdigest()
    return {"modules": hashes, "source_hash": total}


# ---------------------------------------------------------------------------- curves
def curve_points(T: int, n_points: int = 200) -> np.ndarray:
    """About ``n_points`` distinct, log-spaced round numbers in ``1..T`` (always including ``T``)."""
    if T < 1:
        raise ValueError(f"T={T} must be at least 1")
    pts = np.unique(np.round(np.logspace(0, np.log10(T), num=max(2, n_points))).astype(np.int64))
    pts = pts[(pts >= 1) & (pts <= T)]
    if pts[-1] != T:
        pts = np.append(pts, T)
    return pts


def summarise_curve(values: np.ndarray, n_points: int = 200, cumulative: bool = True) -> dict[str, list]:
    """Downsample a ``(n_runs, T)`` per-round array for a record.

    Parameters
    ----------
    values : ndarray, shape (n_runs, T)
    n_points : int
        Number of log-spaced rounds kept.
    cumulative : bool
        Summarise the running sum (e.g. cumulative regret) rather than the per-round values.

    Returns
    -------
    dict with ``t`` (1-based rounds), and over runs ``mean``, ``sd``, ``q05``, ``q95`` and ``n_runs``.
    """
    values = np.asarray(values, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"curve values must have shape (n_runs, T), got {values.shape}")
    series = np.cumsum(values, axis=1) if cumulative else values
    t = curve_points(values.shape[1], n_points)
    sel = series[:, t - 1]
    sd = sel.std(axis=0, ddof=1) if values.shape[0] > 1 else np.zeros(len(t))
    return {
        "t": t.tolist(),
        "mean": sel.mean(axis=0).tolist(),
        "sd": sd.tolist(),
        "q05": np.quantile(sel, 0.05, axis=0).tolist(),
        "q95": np.quantile(sel, 0.95, axis=0).tolist(),
        "n_runs": int(values.shape[0]),
    }
