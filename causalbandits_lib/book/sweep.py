"""Parameter sweeps: a grid of notebook executions on joblib's process pool or a Dask cluster.

Two layers:

- :func:`~causalbandits_lib.core.parallel.map_tasks` (in the core, since chapters use it for
  their own grids) runs independent tasks serially, on joblib's process pool, or on a Dask
  ``distributed`` cluster, with bounded retries; results come back in task order.
- :func:`run_sweep` executes one notebook per grid point (papermill, as ``causalbandits run``) and
  writes each point's record atomically into ``OUT/<chapter>/<notebook>/<point id>/record.json``,
  where the point id is a hash of the point's resolved parameters. A point whose valid record exists
  is skipped, so re-running the same command after a crash completes exactly the missing points.

:func:`collect` gathers a sweep's records into one table (CSV and a pandas DataFrame), reporting
and skipping corrupt records; the table's SHA-256 is what a review cites.

Grid syntax (``-p name=...``): comma-separated values ``T=500,1000``; integer ranges ``seed=0:8``
(half-open, like Python's ``range``; ``0:20:5`` with a step); for list-valued parameters, values
separated by ``;`` (``taus=[0.1,0.2];[0.3]``). Every point is validated before anything runs.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import math
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from ..core.parallel import TaskOutcome, map_tasks
from .params import NotebookSpec, ParameterError, parse_cli_value
from .records import RecordError, atomic_write_text, canonical_json, load_record

__all__ = [
    "SweepError",
    "count_grid",
    "expand_grid",
    "point_id",
    "point_folder",
    "summarise",
    "SweepReport",
    "run_sweep",
    "stale_reason",
    "collect",
    "table_hash",
]


class SweepError(RuntimeError):
    """A sweep could not complete (some points failed after their retries)."""


# ---------------------------------------------------------------------------- grid
def _values(param, text: str) -> list[Any]:
    text = text.strip()
    if param.type.startswith("list["):
        return [parse_cli_value(param, p) for p in text.split(";") if p.strip()]
    out: list[Any] = []
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        if param.type == "int" and ":" in item:
            pieces = item.split(":")
            if len(pieces) not in (2, 3) or not all(p.strip().lstrip("-").isdigit() for p in pieces):
                raise ParameterError(
                    f"-p {param.name}={text}: a range is start:stop or start:stop:step with integers, got {item!r}"
                )
            start, stop = int(pieces[0]), int(pieces[1])
            step = int(pieces[2]) if len(pieces) == 3 else 1
            if step <= 0 or stop <= start:
                raise ParameterError(
                    f"-p {param.name}={text}: the range {item!r} is empty (need start < stop and a positive step)"
                )
            out.extend(param.validate(v) for v in range(start, stop, step))
        else:
            out.append(parse_cli_value(param, item))
    return out


def _count(param, text: str) -> int:
    """How many values ``-p name=text`` gives, without making them (ranges by arithmetic)."""
    text = text.strip()
    if param.type.startswith("list["):
        return sum(1 for p in text.split(";") if p.strip())
    n = 0
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        pieces = item.split(":")
        if param.type == "int" and len(pieces) in (2, 3) and all(p.strip().lstrip("-").isdigit() for p in pieces):
            step = int(pieces[2]) if len(pieces) == 3 else 1
            n += len(range(int(pieces[0]), int(pieces[1]), step)) if step > 0 else 1
        else:
            n += 1
    return n


def count_grid(spec: NotebookSpec, assignments: Sequence[str]) -> tuple[int, dict[str, int]]:
    """The number of points of a grid (before merging duplicates) and of values per parameter,
    counted without expanding anything."""
    declared = spec.all_parameters()
    counts: dict[str, int] = {}
    for a in assignments:
        name, sep, text = a.partition("=")
        name = name.strip()
        if sep and name in declared:
            counts[name] = _count(declared[name], text)
    return math.prod(counts.values()) if counts else 1, counts


def expand_grid(
    spec: NotebookSpec, assignments: Sequence[str], profile: str | None = None, max_points: int | None = None
) -> list[dict[str, Any]]:
    """Every combination of the given values, each validated against ``spec``.

    Returns the points as the parameters to inject (only those given, plus the profile), in a
    stable order (the product of the value lists in the order the parameters were given). Points
    that resolve to the same parameters (``seed=5,5``; ``T=2000`` at the profile whose T is 2000)
    are merged: the first one is kept.

    Raises
    ------
    ParameterError
        Naming the parameter and the value, for an unknown name or any invalid value, or when the
        grid has more than ``max_points`` points (default :data:`~causalbandits_lib.book.bounds.MAX_POINTS`;
        counted before anything is expanded); nothing runs.
    """
    from .bounds import MAX_POINTS

    cap = MAX_POINTS if max_points is None else max_points
    total, counts = count_grid(spec, assignments)
    if total > cap:
        sizes = " x ".join(f"{n} ({k})" for k, n in counts.items())
        raise ParameterError(
            f"the grid has {total} points ({sizes}); at most {cap} are allowed: split the sweep or raise --max-points"
        )
    declared = spec.all_parameters()
    axes: dict[str, list[Any]] = {}
    for a in assignments:
        name, sep, text = a.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ParameterError(f"-p {a!r}: expected name=value[,value...]")
        if name not in declared:
            raise ParameterError(
                f"unknown parameter {name!r} for notebook {spec.id}: allowed names are {', '.join(declared)}"
            )
        if name in axes:
            raise ParameterError(f"-p {name}=... is given twice")
        values = _values(declared[name], text)
        if not values:
            raise ParameterError(f"-p {name}={text!r} gives no value")
        axes[name] = values
    if profile is not None:
        if "profile" in axes:
            raise ParameterError("give the profile either with --profile or with -p profile=..., not both")
        axes["profile"] = [profile]
    names = list(axes)
    points, seen = [], set()
    for combo in itertools.product(*(axes[n] for n in names)):
        p = dict(zip(names, combo))
        pid = point_id(spec, p)  # full validation of every point before anything runs
        if pid not in seen:
            seen.add(pid)
            points.append(p)
    return points or [{}]


def point_id(spec: NotebookSpec, given: Mapping[str, Any]) -> str:
    """A stable id for a grid point: SHA-256 (first 16 hex digits) of its notebook and its resolved
    parameters, so that ``-p T=500`` and the profile's own 500 name the same point."""
    values, _ = spec.resolve(given)
    return hashlib.sha256(canonical_json({"notebook": spec.id, "parameters": values}).encode()).hexdigest()[:16]


def point_folder(spec: NotebookSpec, given: Mapping[str, Any]) -> str:
    """The folder name of a grid point: its given values, readable (``seed=3,T=500``, at most 80
    characters, only letters, digits and ``=,.-_[]``), then ``--`` and :func:`point_id`, which alone
    makes it unique and stable."""
    import re

    shown = ",".join(
        f"{k}={json.dumps(v, separators=(',', ':')) if isinstance(v, (list, dict)) else v}"
        for k, v in sorted(given.items())
        if k != "profile"
    )
    shown = re.sub(r"[^A-Za-z0-9=,.\-_\[\]]", "_", shown)[:80] or "defaults"
    return f"{shown}--{point_id(spec, given)}"


# ---------------------------------------------------------------------------- notebook sweeps
class PointBusyError(RuntimeError):
    """Another process holds the lock of a point's folder (the same point is being run)."""


@contextlib.contextmanager
def point_lock(folder: Path) -> Iterator[None]:
    """An exclusive, non-blocking lock on a point's folder (``folder/.lock``), held while the point
    runs, so that two sweeps (or two grid entries naming the same point) never run one point in
    one folder at once. The operating system releases it when the holder dies."""
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise PointBusyError(
                f"point {folder.name} is being run by another process (lock {folder / '.lock'})"
            ) from None
        yield
    finally:
        os.close(fd)


def _remove_staging(folder: Path) -> None:
    for stale in folder.glob(".work-*"):
        shutil.rmtree(stale, ignore_errors=True)


def run_point(notebook: str, given: dict[str, Any], point_dir: str) -> dict[str, Any]:
    """Execute one grid point and move its notebook and record into ``point_dir``.

    Runs in a worker process or thread and changes nothing process-wide. The point's folder is
    locked while it runs; the execution writes into a fresh staging folder of the point, the record
    is checked against the point (notebook and resolved parameters) and only then moved to
    ``point_dir/record.json`` (atomically, after the notebook), so an interrupted or mixed-up point
    leaves no record.
    """
    import tempfile

    from .execution import check_record_matches, execute_notebook
    from .notebook import find_notebook_spec

    spec = find_notebook_spec(notebook)
    folder = Path(point_dir)
    if not folder.is_absolute():
        raise ValueError(f"point_dir must be an absolute path, got {point_dir!r}")
    with point_lock(folder):
        _remove_staging(folder)  # left by a worker that was killed; nobody else holds the lock
        work = Path(tempfile.mkdtemp(prefix=".work-", dir=folder))
        try:
            started = time.perf_counter()
            result = execute_notebook(spec, given, work, work, progress=False)
            check_record_matches(result.record, spec, given)
            os.replace(result.output, folder / "notebook.ipynb")
            os.replace(result.record, folder / "record.json")
            try:
                (folder / "error.txt").unlink()  # a failure of an earlier attempt no longer applies
            except FileNotFoundError:
                pass
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return {"seconds": time.perf_counter() - started, "pid": os.getpid()}


@dataclass
class SweepReport:
    total: int
    skipped: list[str] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    seconds: float = 0.0


class _Now:
    """What a recorded point is compared with on resume, computed once per sweep: the checkout's
    commit, the library's current source, and which real data sets are available."""

    def __init__(self):
        self._commit: str | None | bool = False
        self._data: dict[str, bool] = {}
        self._library: dict[tuple[str, ...], str] = {}

    def commit(self) -> str | None:
        if self._commit is False:
            from . import paths
            from .provenance import git_info

            self._commit = git_info(paths.book_root())["commit"]
        return self._commit  # type: ignore[return-value]

    def library(self, modules: Sequence[str]) -> str:
        from .provenance import library_fingerprint

        key = tuple(sorted(modules))
        if key not in self._library:
            self._library[key] = library_fingerprint(key)["source_hash"]
        return self._library[key]

    def data(self, name: str) -> bool:
        from .provenance import real_data_available

        if name not in self._data:
            self._data[name] = real_data_available(name)
        return self._data[name]


def stale_reason(path: Path, notebook: str, values: Mapping[str, Any], now: _Now | None = None) -> str | None:
    """Why the record at ``path`` does not count as the point's result (None: it does).

    A point's record counts when it is valid, of this notebook and these resolved parameters,
    produced by the library code and the commit there are now, and not on a stand-in for data that
    are available now.
    """
    from .provenance import replaceable_stand_ins

    now = now or _Now()
    try:
        rec = load_record(path)
    except RecordError as exc:
        return f"invalid record ({exc})"
    if rec["notebook"] != notebook:
        return f"the record is of notebook {rec['notebook']!r}"
    if rec["parameters"] != dict(values):
        wrong = sorted(k for k in set(rec["parameters"]) | set(values) if rec["parameters"].get(k) != values.get(k))
        return "recorded with other parameters: " + ", ".join(
            f"{k}={rec['parameters'].get(k)!r} (expected {values.get(k)!r})" for k in wrong
        )
    modules = rec["library"].get("modules")
    if not isinstance(modules, dict) or now.library(list(modules)) != rec["library"].get("source_hash"):
        return "the library code changed since it was recorded"
    commit = rec["git"].get("commit")
    if commit != now.commit():
        return f"recorded at commit {str(commit)[:10]}, the checkout is at {str(now.commit())[:10]}"
    for name in replaceable_stand_ins(rec["data"]):
        if now.data(name):
            return f"recorded on the synthetic stand-in for {name}; the real data are available now"
    return None


def _valid_record(path: Path, notebook: str, values: Mapping[str, Any]) -> bool:
    return stale_reason(path, notebook, values) is None


def run_sweep(
    spec: NotebookSpec,
    points: Sequence[Mapping[str, Any]],
    out: Path,
    jobs: int = 1,
    scheduler: str | None = None,
    retries: int = 2,
    log: Callable[[str], None] = print,
) -> SweepReport:
    """Execute every point that has no valid record yet; see the module docstring."""
    out = Path(out).resolve()  # workers may run in other folders (or other threads of a process)
    base = out / spec.chapter / spec.name
    base.mkdir(parents=True, exist_ok=True)
    todo, ids = [], []
    report = SweepReport(total=len(points))
    now = _Now()
    for given in points:
        pid = point_folder(spec, given)
        folder = base / pid
        values, _ = spec.resolve(given)
        if (folder / "record.json").exists():
            why = stale_reason(folder / "record.json", spec.id, values, now)
            if why is None:
                report.skipped.append(pid)
                continue
            log(f"  {pid}: running again: {why}")
        folder.mkdir(exist_ok=True)
        atomic_write_text(
            folder / "point.json",
            json.dumps({"notebook": spec.id, "given": given, "parameters": values}, indent=1) + "\n",
        )
        todo.append({"notebook": spec.id, "given": dict(given), "point_dir": str(folder)})
        ids.append(pid)
    where = f"Dask scheduler {scheduler}" if scheduler else ("serially" if jobs == 1 else f"{jobs} joblib processes")
    log(f"sweep {spec.id}: {len(points)} point(s), {len(report.skipped)} already done, {len(todo)} to run {where}")
    started = time.perf_counter()

    def done(o: TaskOutcome) -> None:
        pid = ids[o.index]
        if o.ok:
            report.done.append(pid)
            log(
                f"  [{len(report.done) + len(report.failed)}/{len(todo)}] {pid} done in {o.result['seconds']:.1f} s "
                f"({o.where})"
            )
        else:
            report.failed[pid] = o.error or "unknown error"
            first = (o.error or "").strip().splitlines()[0] if o.error else ""
            log(
                f"  [{len(report.done) + len(report.failed)}/{len(todo)}] {pid} FAILED after {o.attempts} "
                f"attempt(s): {first}"
            )
            atomic_write_text(Path(todo[o.index]["point_dir"]) / "error.txt", o.error or "")

    try:
        map_tasks(run_point, todo, jobs=jobs, scheduler=scheduler, retries=retries, on_done=done)
    except KeyboardInterrupt:
        for task in todo:  # the workers are stopped: remove what they staged, where no one holds the lock
            with contextlib.suppress(PointBusyError, OSError):
                with point_lock(Path(task["point_dir"])):
                    _remove_staging(Path(task["point_dir"]))
        log(
            f"sweep {spec.id} interrupted: {len(report.done)} point(s) finished in this run, "
            f"{len(report.skipped)} were already recorded, {len(todo) - len(report.done) - len(report.failed)} "
            "not finished (no partial record); re-run the same command to finish them"
        )
        raise
    report.seconds = time.perf_counter() - started
    return report


# ---------------------------------------------------------------------------- collect
def collect(folder: Path, metrics: Sequence[str] | None = None):
    """Gather the records of a sweep into a DataFrame (one row per point).

    Columns: ``notebook``, ``point``, ``stand_in`` (the synthetic stand-ins the point ran on, comma
    separated; empty for none), every parameter, then the chosen metrics (default: every
    scalar metric). Rows are sorted by notebook and parameters.

    Returns
    -------
    table : pandas.DataFrame
    problems : list of str
        One line per record that could not be read (it is left out of the table).
    """
    import pandas as pd

    from .provenance import stand_ins

    folder = Path(folder)
    rows, problems = [], []
    for path in sorted(folder.rglob("record.json")):
        try:
            rec = load_record(path)
        except RecordError as exc:
            problems.append(str(exc))
            continue
        row: dict[str, Any] = {"notebook": rec["notebook"], "point": path.parent.name}
        row["commit"] = (rec["git"].get("commit") or "")[:12] + ("+dirty" if rec["git"].get("dirty") else "")
        row["library"] = (rec["library"].get("source_hash") or "")[:12]
        row["data"] = ",".join(
            f"{d.get('name')}:{hashlib.sha256(canonical_json(d.get('files') or {}).encode()).hexdigest()[:12]}"
            for d in rec["data"]
        )
        row["stand_in"] = ",".join(stand_ins(rec["data"]))  # synthetic data sets used in place of real ones
        row["results_hash"] = (rec.get("results_hash") or "")[:16]
        for k, v in rec["parameters"].items():
            row[k] = json.dumps(v) if isinstance(v, (list, dict)) else v
        for k, v in rec["metrics"].items():
            if (metrics is None and isinstance(v, (int, float, bool))) or (metrics is not None and k in metrics):
                row[k] = v
        for c in rec["claims"]:
            row[f"{VERDICT_PREFIX}{c['id']}"] = c["verdict"]
        rows.append(row)
    table = pd.DataFrame(rows)
    if len(table):
        params = parameter_columns(table)
        table = table.sort_values(["notebook", *params], kind="stable").reset_index(drop=True)
    return table, problems


#: Prefix of the claim columns of a collected table (``verdict:<claim id>``).
VERDICT_PREFIX = "verdict:"
_INFO = ("notebook", "point", "commit", "library", "data", "stand_in", "results_hash")


def parameter_columns(table) -> list[str]:
    """The parameter columns of a collected table (neither provenance, metric nor verdict)."""
    return [c for c in table.columns if c not in _INFO and "." not in c and not c.startswith(VERDICT_PREFIX)]


def summarise(table, over: str = "seed"):
    """Robustness over the swept ``over`` parameter (seeds): for every combination of the other
    parameters, each claim's share of points where it is *reproduced*, and each scalar metric's
    mean with a 95% confidence interval (Student t over the points; none for a single point).

    Returns a DataFrame with columns: the other parameters, ``what`` (``claim`` or ``metric``),
    ``name``, ``points``, ``value`` (share or mean), ``low``, ``high``.
    """
    import numpy as np
    import pandas as pd
    from scipy import stats

    params = [c for c in parameter_columns(table) if c != over]
    claims = [c for c in table.columns if c.startswith(VERDICT_PREFIX)]
    metrics = [
        c
        for c in table.columns
        if c not in _INFO
        and c not in params
        and c != over
        and c not in claims
        and pd.api.types.is_numeric_dtype(table[c])
        and "." in c
    ]
    rows = []
    groups = table.groupby(params, dropna=False, sort=True) if params else [((), table)]
    for key, group in groups:
        key = key if isinstance(key, tuple) else (key,)
        base = dict(zip(params, key))
        for c in claims:
            verdicts = group[c].dropna()
            share = float((verdicts == "reproduced").mean()) if len(verdicts) else float("nan")
            name = c[len(VERDICT_PREFIX) :]
            rows.append(base | dict(what="claim", name=name, points=len(verdicts), value=share, low=None, high=None))
        for m in metrics:
            x = group[m].dropna().to_numpy(dtype=float)
            mean = float(x.mean()) if len(x) else float("nan")
            low = high = None
            if len(x) >= 2:
                half = float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
                low, high = mean - half, mean + half
            rows.append(base | dict(what="metric", name=m, points=len(x), value=mean, low=low, high=high))
    return pd.DataFrame(rows)


def table_hash(csv_text: str) -> str:
    """SHA-256 of a collected table's CSV text (what a review cites)."""
    return hashlib.sha256(csv_text.encode("utf-8")).hexdigest()


def plot_metric(table, metric: str, by: str, path: Path) -> Path:
    """Mean of ``metric`` against the swept parameter ``by``, with its 95% confidence interval over
    the points that share a value of ``by`` (typically seeds; Student t). Where a value has one
    point only, no interval is drawn and the legend says so. Writes a PNG."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import numpy as np
    from scipy import stats

    if metric not in table.columns or by not in table.columns:
        raise KeyError(f"the table has no column {metric!r} or {by!r}; columns are {list(table.columns)}")
    groups = table.groupby(by)[metric]
    xs = np.array(sorted(groups.groups))
    mean = groups.mean().reindex(xs).to_numpy(dtype=float)
    n = groups.count().reindex(xs).to_numpy()
    se = (groups.std(ddof=1).reindex(xs).to_numpy(dtype=float)) / np.sqrt(np.maximum(n, 1))
    half = np.where(n >= 2, stats.t.ppf(0.975, np.maximum(n - 1, 1)) * se, np.nan)
    fig, ax = plt.subplots(figsize=(6.4, 4), layout="constrained")
    ax.plot(xs, mean, marker="o", label=f"mean of {metric}" + (f" over {int(n.max())} points" if n.max() > 1 else ""))
    if np.any(n >= 2):
        ax.fill_between(xs, mean - half, mean + half, alpha=0.2, label="95% confidence interval of the mean")
    else:
        ax.plot([], [], " ", label=f"one point per {by}: no interval")
    ax.set_xlabel(by)
    ax.set_ylabel(metric)
    ax.legend()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return Path(path)
