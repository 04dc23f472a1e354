"""Parameter sweeps: a grid of notebook executions on joblib's process pool or a Dask cluster.

Two layers:

- :func:`~causalbandits_lib.core.parallel.map_tasks` (in the core, since chapters use it for
  their own grids) runs independent tasks serially, on joblib's process pool, or on a Dask
  ``distributed`` cluster, with bounded retries; results come back in task order.
- :func:`run_sweep` executes one notebook per grid point (papermill, as ``causalbandits run``) and
  writes each point's record atomically into ``OUT/<chapter>/<notebook>/<point id>/record.json``,
  where the point id is a hash of the point's resolved parameters. A point whose valid record exists
  is skipped, so re-running the same command after a crash completes exactly the missing points.
  On a Dask cluster (``scheduler``) a worker executes the point in a temporary folder of its own and
  sends the executed notebook and record back; :func:`place_point` checks and writes them here, so
  the workers need the same checkout but no shared file system.

:func:`collect` gathers a sweep's records into one table (CSV and a pandas DataFrame), each record
checked against its point (``point.json`` and the point id in the folder's name); every point of the
grid without a valid record (missing, corrupt, another point's) is reported, and ``causalbandits
collect`` writes no table then unless ``--allow-missing``. The table's SHA-256 is what a review cites.

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
import re
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
_RANGE = re.compile(r"(-?[0-9]+):(-?[0-9]+)(?::(-?[0-9]+))?")


def _range_size(start: int, stop: int, step: int) -> int:
    """len(range(start, stop, step)) by arithmetic (``len`` overflows above sys.maxsize)."""
    return max(0, (stop - start + step - 1) // step) if step > 0 else 0


def _check_text(param, text: str) -> None:
    if text != text.strip() or any(ord(ch) < 32 or ord(ch) == 127 for ch in text):
        raise ParameterError(
            f"-p {param.name}={text!r}: spaces around the value or control characters (a newline?) are not "
            f"allowed; give values separated by ',' (ranges start:stop[:step]), each {param.allowed()}"
        )


def _values(param, text: str) -> list[Any]:
    _check_text(param, text)
    if param.type.startswith("list["):
        return [parse_cli_value(param, p.strip()) for p in text.split(";") if p.strip()]
    out: list[Any] = []
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        if param.type == "int" and ":" in item:
            m = _RANGE.fullmatch(item)
            if not m:
                raise ParameterError(
                    f"-p {param.name}={text!r}: a range is start:stop or start:stop:step with integers in decimal "
                    f"digits, got {item!r}"
                )
            start, stop = int(m[1]), int(m[2])
            step = int(m[3]) if m[3] is not None else 1
            if step <= 0 or stop <= start:
                raise ParameterError(
                    f"-p {param.name}={text!r}: the range {item!r} is empty (need start < stop and a positive step)"
                )
            last = start + (_range_size(start, stop, step) - 1) * step
            for end in (start, last):  # every value lies between the two ends
                try:
                    param.validate(end)
                except ParameterError as exc:
                    raise ParameterError(
                        f"-p {param.name}={text!r}: the range {item!r} leaves what is allowed ({exc})"
                    ) from None
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
        m = _RANGE.fullmatch(item) if param.type == "int" else None
        if m:
            step = int(m[3]) if m[3] is not None else 1
            n += _range_size(int(m[1]), int(m[2]), step) if step > 0 else 1
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
def point_lock(folder: Path, wait: bool = False) -> Iterator[None]:
    """An exclusive lock on a point's folder (``folder/.lock``), held while the point runs, so that
    two sweeps (or two grid entries naming the same point) never run one point in one folder at
    once. The operating system releases it when the holder dies.

    With ``wait`` the caller waits (polling, so that Ctrl-C still interrupts it) until the holder
    releases the lock; without, :class:`PointBusyError` is raised at once.
    """
    import fcntl

    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o666)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if not wait:
                    raise PointBusyError(
                        f"point {folder.name} is being run by another process (lock {folder / '.lock'})"
                    ) from None
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)


def _remove_staging(folder: Path) -> None:
    for stale in folder.glob(".work-*"):
        shutil.rmtree(stale, ignore_errors=True)


#: how long an interrupted sweep waits for its stopping workers to release their points' locks
STOP_GRACE_SECONDS = 10.0


def _remove_staged_after_interrupt(folders: Sequence[Path], grace: float = STOP_GRACE_SECONDS) -> None:
    """Remove what the interrupted workers staged, point by point, once no one holds the point's lock.
    A worker being stopped may hold its lock for a moment after the pool reports the interrupt (on a
    loaded machine), so a busy point is tried again for up to ``grace`` seconds; a lock still held
    then belongs to another live process, whose staging is left alone."""
    pending = list(folders)
    deadline = time.monotonic() + grace
    while pending:
        busy = []
        for folder in pending:
            try:
                with point_lock(folder):
                    _remove_staging(folder)
            except PointBusyError:
                busy.append(folder)
            except OSError:
                pass
        if not busy or time.monotonic() > deadline:
            return
        pending = busy
        time.sleep(0.2)


def run_point(notebook: str, given: dict[str, Any], point_dir: str, wait: bool = True) -> dict[str, Any]:
    """Execute one grid point and move its notebook and record into ``point_dir``.

    Runs in a worker process or thread and changes nothing process-wide. The point's folder is
    locked while it runs; a point that another process (a second sweep into the same ``--out``) is
    running is waited for (the default, as in :func:`run_sweep`: a busy point is never a failure);
    ``wait=False`` raises :class:`PointBusyError` at once instead. Once the lock is held, a valid
    record of the point (one that :func:`stale_reason` accepts: written meanwhile by that other
    process) is kept and nothing runs: the result then has ``"skipped"``, the reason. Otherwise the
    execution writes into a fresh staging folder of the point, the record is checked against the
    point (notebook and resolved parameters) and only then moved to ``point_dir/record.json``
    (atomically, after the notebook), so an interrupted or mixed-up point leaves no record; on a
    Dask worker, neither does a point whose sweep was interrupted on its client (its kernel is
    killed: see :class:`~causalbandits_lib.core.parallel.Cancellation`).
    """
    import tempfile

    from ..core.parallel import current_cancellation
    from .execution import check_record_matches, execute_notebook
    from .notebook import find_notebook_spec

    cancellation = current_cancellation()  # on a Dask worker: set when the sweep is interrupted
    spec = find_notebook_spec(notebook)
    folder = Path(point_dir)
    if not folder.is_absolute():
        raise ValueError(f"point_dir must be an absolute path, got {point_dir!r}")
    started = time.perf_counter()
    with point_lock(folder, wait=wait):
        recorded = folder / "record.json"
        if recorded.exists() and stale_reason(recorded, spec.id, spec.resolve(given)[0]) is None:
            return {
                "seconds": time.perf_counter() - started,
                "pid": os.getpid(),
                "skipped": "recorded meanwhile by another process",
            }
        _remove_staging(folder)  # left by a worker that was killed; nobody else holds the lock
        work = Path(tempfile.mkdtemp(prefix=".work-", dir=folder))
        try:
            started = time.perf_counter()
            result = execute_notebook(spec, given, work, work, progress=False)
            check_record_matches(result.record, spec, given)
            if cancellation is not None:
                cancellation.check()  # an interrupted sweep's point leaves no record, even one it finished
            os.replace(result.output, folder / "notebook.ipynb")
            os.replace(result.record, folder / "record.json")
            try:
                (folder / "error.txt").unlink()  # a failure of an earlier attempt no longer applies
            except FileNotFoundError:
                pass
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return {"seconds": time.perf_counter() - started, "pid": os.getpid()}


def place_point(done: Any, point_dir: Path) -> dict[str, Any]:
    """Write a point executed on a Dask worker (a
    :class:`~causalbandits_lib.book.execution.Detached`) into its folder here: under the point's
    lock, a valid record written meanwhile by another process is kept (the result then has
    ``"skipped"``), else the notebook and then the record are placed, checked first
    (:func:`~causalbandits_lib.book.execution.place_detached`). Returns what :func:`run_point` does.

    Raises
    ------
    ExecutionError
        If the record is not the point's, or was made by other code than this checkout's.
    """
    from .execution import place_detached
    from .notebook import find_notebook_spec

    spec = find_notebook_spec(done.notebook)
    folder = Path(point_dir)
    with point_lock(folder, wait=True):
        recorded = folder / "record.json"
        if recorded.exists() and stale_reason(recorded, spec.id, spec.resolve(done.parameters)[0]) is None:
            return {"seconds": done.seconds, "skipped": "recorded meanwhile by another process"}
        place_detached(done, folder / "notebook.ipynb", recorded)
        with contextlib.suppress(FileNotFoundError):
            (folder / "error.txt").unlink()  # a failure of an earlier attempt no longer applies
    return {"seconds": done.seconds, "host": done.host}


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


@contextlib.contextmanager
def signals_to_this_process_only(active: bool = True) -> Iterator[None]:
    """While worker processes are started and run, Ctrl-C and SIGTERM reach this process only.

    A terminal's Ctrl-C goes to every process of the foreground group, so workers still importing
    printed a KeyboardInterrupt traceback each. Here SIGINT and SIGTERM are blocked in the calling
    (main) thread, so the workers (and their kernels) start with them blocked (a signal mask is
    inherited across fork and exec), while a helper thread started before the block still takes
    them for this process: Python then raises them in the main thread as usual, which stops the
    workers (they are killed with SIGKILL, and their kernels with them)."""
    import signal
    import threading

    if (
        not active
        or threading.current_thread() is not threading.main_thread()
        or not hasattr(signal, "pthread_sigmask")
    ):
        yield
        return
    # multiprocessing's resource tracker (Python 3.11) unblocks both signals after it has started
    # its process: started here first, it leaves the block below in place
    with contextlib.suppress(Exception):
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
    with contextlib.suppress(Exception):
        from joblib.externals.loky.backend import resource_tracker as loky_tracker

        loky_tracker.ensure_running()
    stop = threading.Event()
    catcher = threading.Thread(target=stop.wait, name="causalbandits-signals", daemon=True)
    catcher.start()
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        stop.set()


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
    from .execution import ExecutionError, execute_detached

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
        todo.append({"notebook": spec.id, "given": dict(given), "point_dir": str(folder), "wait": True})
        ids.append(pid)
    where = f"Dask scheduler {scheduler}" if scheduler else ("serially" if jobs == 1 else f"{jobs} joblib processes")
    log(f"sweep {spec.id}: {len(points)} point(s), {len(report.skipped)} already done, {len(todo)} to run {where}")
    started = time.perf_counter()
    skipped_before = len(report.skipped)

    def done(o: TaskOutcome) -> None:
        pid = ids[o.index]
        if o.ok and scheduler:  # the worker sent the point back: it is checked and written here
            try:
                o.result = place_point(o.result, Path(todo[o.index]["point_dir"]))
            except ExecutionError as exc:
                o.ok, o.error = False, str(exc)
        n = len(report.done) + len(report.failed) + len(report.skipped) - skipped_before + 1
        if o.ok and o.result.get("skipped"):
            report.skipped.append(pid)
            log(f"  [{n}/{len(todo)}] {pid} skipped: {o.result['skipped']}")
        elif o.ok:
            report.done.append(pid)
            log(f"  [{n}/{len(todo)}] {pid} done in {o.result['seconds']:.1f} s ({o.where})")
        else:
            report.failed[pid] = o.error or "unknown error"
            first = (o.error or "").strip().splitlines()[0] if o.error else ""
            log(f"  [{n}/{len(todo)}] {pid} FAILED after {o.attempts} attempt(s): {first}")
            atomic_write_text(Path(todo[o.index]["point_dir"]) / "error.txt", o.error or "")

    try:
        with signals_to_this_process_only(jobs > 1 or bool(scheduler)):
            if scheduler:  # a worker executes into its own temporary folder and sends the point back
                detached = [
                    dict(
                        notebook=t["notebook"],
                        parameters=t["given"],
                        shown_as=str(Path(t["point_dir"]) / "record.json"),
                    )
                    for t in todo
                ]
                map_tasks(execute_detached, detached, jobs=jobs, scheduler=scheduler, retries=retries, on_done=done)
            else:
                map_tasks(run_point, todo, jobs=jobs, scheduler=None, retries=retries, on_done=done)
    except KeyboardInterrupt:
        _remove_staged_after_interrupt([Path(task["point_dir"]) for task in todo])
        # A process pool reports its points in batches, so points may have finished without being
        # reported yet: what counts is the valid record each point has now.
        for pid, task in zip(ids, todo):
            if pid not in report.done and pid not in report.failed and pid not in report.skipped:
                with contextlib.suppress(OSError, ParameterError):
                    values, _ = spec.resolve(task["given"])
                    if stale_reason(Path(task["point_dir"]) / "record.json", spec.id, values, now) is None:
                        report.done.append(pid)
        log(
            f"sweep {spec.id} interrupted: {len(report.done)} point(s) finished in this run, "
            f"{len(report.skipped)} were already recorded, "
            f"{len(todo) - len(report.done) - len(report.failed) - (len(report.skipped) - skipped_before)} "
            "not finished (no partial record); re-run the same command to finish them"
        )
        raise
    report.seconds = time.perf_counter() - started
    return report


# ---------------------------------------------------------------------------- collect
_POINT_NAME = re.compile(r"--([0-9a-f]{16})$")


def _record_point_id(notebook: Any, parameters: Any) -> str:
    """:func:`point_id` from a notebook id and resolved parameters as a record or ``point.json`` holds them."""
    return hashlib.sha256(canonical_json({"notebook": notebook, "parameters": parameters}).encode()).hexdigest()[:16]


def _wrong_parameters(found: Mapping[str, Any], expected: Mapping[str, Any]) -> str:
    wrong = sorted(k for k in set(found) | set(expected) if found.get(k) != expected.get(k))
    return ", ".join(f"{k}={found.get(k)!r} (the point has {expected.get(k)!r})" for k in wrong)


@dataclass
class Collection:
    """What :func:`collect_points` found under a folder.

    ``table`` has one row per point with a valid record of its own (see :func:`collect`);
    ``points`` counts every point of the grid found, each once (a folder with ``point.json``, which
    a sweep writes before it runs the point, or with ``record.json``); ``missing`` maps the folder
    of every point without a record to why, ``left_out`` every folder whose record was left out
    (invalid, not the record of its point, or one of two records of a point with other results);
    ``absent`` holds every point without a row as ``{"notebook", "parameters"}`` (as ``point.json``
    gives them; None when unknown), so that a summary counts them in its denominators.
    """

    table: Any
    points: int
    missing: dict[str, str] = field(default_factory=dict)
    left_out: dict[str, str] = field(default_factory=dict)
    absent: list[dict[str, Any] | None] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def without_row(self) -> int:
        """Points of the grid without a row in the table."""
        return len(self.absent)

    @property
    def problems(self) -> list[str]:
        """One line per folder whose point has no row or whose record was left out."""
        return [f"{k}: {v}" for k, v in {**self.left_out, **self.missing}.items()]


def _read_point(folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    """The ``point.json`` of a point folder as ``{"notebook", "parameters"}`` (None when there is
    none), or why it cannot be used."""
    path = folder / "point.json"
    if not path.is_file():
        return None, None
    try:
        body = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return None, f"its point.json is not readable ({exc})"
    if not (isinstance(body, dict) and isinstance(body.get("parameters"), dict) and "notebook" in body):
        return None, "its point.json does not describe a point (it needs notebook and parameters)"
    return {"notebook": body["notebook"], "parameters": body["parameters"]}, None


def _examine(point: Path) -> tuple[str | None, dict[str, Any] | None, dict[str, Any] | None, str | None]:
    """One point folder: (its point id when known, its point ``{"notebook", "parameters"}`` when
    known, its record when it counts, why it does not count)."""
    described, bad = _read_point(point)
    match = _POINT_NAME.search(point.name)
    named = match.group(1) if match else None
    params = described["parameters"] if described else None
    if bad:
        return named, None, None, bad
    described_id = _record_point_id(described["notebook"], params) if described else None
    if named and described_id and named != described_id:
        return named, None, None, f"its point.json describes point {described_id}, its name point {named}"
    key = named or described_id
    if not (point / "record.json").is_file():
        return key, described, None, None
    try:
        rec = load_record(point / "record.json")
    except RecordError as exc:
        return key, described, None, f"invalid record: {exc}"
    own = _record_point_id(rec["notebook"], rec["parameters"])
    why = None
    if described and rec["notebook"] != described["notebook"]:
        why = f"it is of notebook {rec['notebook']!r}, the point of {described['notebook']!r}"
    elif described and rec["parameters"] != params:
        why = "recorded with other parameters: " + _wrong_parameters(rec["parameters"], params)
    elif named and own != named:
        why = f"its notebook and parameters are those of point {own}, the folder is named for point {named}"
    if why:
        return key, described, None, f"not this point's record: {why}"
    return own, {"notebook": rec["notebook"], "parameters": rec["parameters"]}, rec, None


def _row(rec: Mapping[str, Any], point: str, metrics: Sequence[str] | None) -> dict[str, Any]:
    from .provenance import stand_ins

    row: dict[str, Any] = {"notebook": rec["notebook"], "point": point}
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
    return row


def collect_points(folder: Path, metrics: Sequence[str] | None = None) -> Collection:
    """Gather the records of a sweep, each checked against its point; see :func:`collect`.

    A point folder is one holding ``point.json`` or ``record.json`` (staging folders ``.work-*``
    excluded). Its record counts only when it is valid and is the record of that point: its
    notebook and parameters equal those of the folder's ``point.json`` (as resume checks) and give
    the point id that ends the folder's name (``...--<id>``), where the folder has them. Two folders
    of one point (two sweeps that named it differently) count as one point; their records count once
    when their results are the same, and not at all when they differ.
    """
    import pandas as pd

    folder = Path(folder)
    found = {p.parent for name in ("record.json", "point.json") for p in folder.rglob(name)}
    found = {f for f in found if not any(part.startswith(".work-") for part in f.relative_to(folder).parts)}
    col = Collection(table=None, points=0)
    by_point: dict[str, list[tuple[str, dict[str, Any] | None, dict[str, Any] | None, str | None]]] = {}
    for point in sorted(found):
        shown = point.relative_to(folder).as_posix() if point != folder else point.name
        key, params, rec, why = _examine(point)
        by_point.setdefault(key or f"folder {shown}", []).append((shown, params, rec, why))
    rows = []
    for entries in by_point.values():
        params = next((e[1] for e in entries if e[1] is not None), None)
        for shown, _, rec, why in entries:
            if why:
                col.left_out[shown] = why
        recorded = [(shown, rec) for shown, _, rec, _ in entries if rec is not None]
        hashes = {rec.get("results_hash") for _, rec in recorded}
        if len(hashes) > 1:
            names = ", ".join(shown for shown, _ in recorded)
            for shown, _ in recorded:
                col.left_out[shown] = f"records of one point with different results ({names})"
        elif recorded:
            rows.append(_row(recorded[0][1], Path(recorded[0][0]).name, metrics))
            first = recorded[0][0]
            col.notes += [
                f"{shown}: the same point as {first}, same results: counted once" for shown, _ in recorded[1:]
            ]
            continue
        elif not any(why for _, _, _, why in entries):
            col.missing[entries[0][0]] = "no record (the point was not run, failed or was interrupted)"
        col.absent.append(params)
    col.points = len(by_point)
    table = pd.DataFrame(rows)
    if len(table):
        params = parameter_columns(table)
        table = table.sort_values(["notebook", *params], kind="stable").reset_index(drop=True)
    col.table = table
    return col


def collect(folder: Path, metrics: Sequence[str] | None = None):
    """Gather the records of a sweep into a DataFrame (one row per point).

    Columns: ``notebook``, ``point``, ``stand_in`` (the synthetic stand-ins the point ran on, comma
    separated; empty for none), every parameter, then the chosen metrics (default: every
    scalar metric). Rows are sorted by notebook and parameters. Each record is checked against
    its point (:func:`collect_points`); a point's folder without a record is reported too.

    Returns
    -------
    table : pandas.DataFrame
    problems : list of str
        One line per point of the grid without a row in the table: its record is missing, could
        not be read, is not the record of its point, or disagrees with another record of the point.
    """
    col = collect_points(folder, metrics)
    return col.table, col.problems


#: Prefix of the claim columns of a collected table (``verdict:<claim id>``).
VERDICT_PREFIX = "verdict:"
_INFO = ("notebook", "point", "commit", "library", "data", "stand_in", "results_hash")


def parameter_columns(table) -> list[str]:
    """The parameter columns of a collected table (neither provenance, metric nor verdict)."""
    return [c for c in table.columns if c not in _INFO and "." not in c and not c.startswith(VERDICT_PREFIX)]


#: The count columns of a summary's claim rows: each verdict, then points whose record does not
#: judge the claim, then points of the grid without a valid record.
NOT_JUDGED, NO_RECORD = "not judged", "no record"


def summarise(table, over: str = "seed", absent: Sequence[Mapping[str, Any] | None] = ()):
    """Robustness over the swept ``over`` parameter (seeds): for every notebook and combination of
    the other parameters, each claim's verdict counts and share of points where it is
    *reproduced*, and each scalar metric's mean with a 95% confidence interval (Student t over the
    points that have it; none for a single point).

    ``absent`` gives the parameters of the grid's points that have no row (no valid record;
    :attr:`Collection.absent`, ``{"notebook", "parameters"}`` or None when unknown): they count in
    every claim's denominator, as ``no record``. A
    claim's share is reproduced points over every point of the group; it is NaN (not 0) when the
    claim is not testable at any point that judged it, so that no table reads "reproduced at 0%"
    for a claim that could not be tested.

    Returns a DataFrame with columns: ``notebook``, the other parameters, ``what`` (``claim`` or
    ``metric``), ``name``, ``points`` (the group's points of the grid), ``measured`` (points whose
    record has the metric or judges the claim), ``value`` (share or mean), ``low``, ``high``, and for
    claims one count column per verdict, ``not judged`` and ``no record``.
    """
    import numpy as np
    import pandas as pd
    from scipy import stats

    from ..core.checks import VERDICTS

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
    keys = ["notebook", *params]
    placed = [
        {"notebook": a["notebook"]}
        | {k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in a["parameters"].items()}
        for a in absent
        if a is not None
    ]
    both = pd.concat(
        [table.assign(_recorded=True), pd.DataFrame(placed, columns=list(table.columns)).assign(_recorded=False)]
        if placed
        else [table.assign(_recorded=True)],
        ignore_index=True,
    )
    judged_by = {nb: [c for c in claims if rows[c].notna().any()] for nb, rows in table.groupby("notebook")}
    measured_by = {nb: [m for m in metrics if rows[m].notna().any()] for nb, rows in table.groupby("notebook")}
    rows = []
    for key, group in both.groupby(keys, dropna=False, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        base = dict(zip(keys, key))
        recorded = group[group["_recorded"].astype(bool)]
        points, no_record = len(group), len(group) - len(recorded)
        for c in judged_by.get(base["notebook"], []):
            verdicts = recorded[c]
            counts = {v: int((verdicts == v).sum()) for v in VERDICTS}
            counts[NOT_JUDGED] = int(verdicts.isna().sum())
            counts[NO_RECORD] = no_record
            judged = int(verdicts.notna().sum())
            testable = judged - counts["not testable here"]
            share = counts["reproduced"] / points if testable else float("nan")
            name = c[len(VERDICT_PREFIX) :]
            rows.append(
                base
                | dict(what="claim", name=name, points=points, measured=judged, value=share, low=None, high=None)
                | counts
            )
        for m in measured_by.get(base["notebook"], []):
            x = recorded[m].dropna().to_numpy(dtype=float)
            mean = float(x.mean()) if len(x) else float("nan")
            low = high = None
            if len(x) >= 2:
                half = float(stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / np.sqrt(len(x)))
                low, high = mean - half, mean + half
            rows.append(
                base | dict(what="metric", name=m, points=points, measured=len(x), value=mean, low=low, high=high)
            )
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
