"""Execute the book's MyST notebooks headlessly with papermill.

The MyST source (``notebooks/<chapter>/<name>.md``) is converted to a notebook in memory with
jupytext, its parameters are validated against ``parameters.yml`` *before* a kernel starts, and
papermill executes it with the parameters injected after the ``parameters`` cell. The executed
``.ipynb`` and the notebook's results record are written under the output folder.
"""

from __future__ import annotations

import contextlib
import html
import logging
import os
import re
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import paths
from .notebook import RECORD_DIR_ENV, RECORD_SHOWN_AS_ENV
from .params import ChapterSpec, NotebookSpec, ParameterError, load_all, parse_cli_value
from .records import to_jsonable

__all__ = [
    "ExecutionError",
    "chapters",
    "resolve_target",
    "parse_assignments",
    "read_notebook",
    "execute_notebook",
    "check_record_matches",
    "remove_stale_kernel_folders",
    "Executed",
    "HTML_MATHJAX",
    "html_mathjax",
    "render_html",
]


class ExecutionError(RuntimeError):
    """A notebook failed while executing (the message names the notebook, cell and error)."""


def chapters() -> dict[str, ChapterSpec]:
    """Every chapter with a ``parameters.yml``, in the order of the table of contents (chapters
    not in it last, alphabetically)."""
    import yaml

    found = load_all(paths.notebooks_dir())
    order: list[str] = []
    toc = paths.book_root() / "_toc.yml"
    if toc.is_file():
        for part in (yaml.safe_load(toc.read_text(encoding="utf-8")) or {}).get("parts", []):
            for entry in part.get("chapters", []):
                bits = str(entry.get("file", "")).split("/")
                if len(bits) == 3 and bits[0] == "notebooks" and bits[1] in found and bits[1] not in order:
                    order.append(bits[1])
    order += [c for c in found if c not in order]
    return {c: found[c] for c in order}


def resolve_target(target: str, all_chapters: Mapping[str, ChapterSpec] | None = None) -> list[NotebookSpec]:
    """Notebooks named by ``CHAPTER`` or ``CHAPTER/NOTEBOOK`` (a unique prefix such as ``primer/01``
    is enough); ``all`` means every chapter."""
    all_chapters = chapters() if all_chapters is None else all_chapters
    if target == "all":
        return [nb for ch in all_chapters.values() for nb in ch.notebooks.values()]
    chapter, _, name = target.partition("/")
    if chapter not in all_chapters:
        raise ParameterError(f"unknown chapter {chapter!r}; chapters are {', '.join(all_chapters)} (or 'all')")
    notebooks = all_chapters[chapter].notebooks
    if not name:
        return list(notebooks.values())
    if name in notebooks:
        return [notebooks[name]]
    matches = [nb for n, nb in notebooks.items() if n.startswith(name)]
    if len(matches) != 1:
        what = "matches no" if not matches else "matches several"
        raise ParameterError(f"{target!r} {what} notebook of {chapter}; notebooks are {', '.join(notebooks)}")
    return matches


def parse_assignments(
    assignments: Sequence[str], notebooks: Sequence[NotebookSpec], profile: str | None = None
) -> dict[str, dict[str, Any]]:
    """Parse ``name=value`` strings for each notebook and validate them.

    A parameter given for a whole chapter is passed to every notebook that declares it; it is an
    error if none does. Every notebook's full parameter set is resolved here, so a bad value fails
    before anything executes.

    Returns
    -------
    dict of notebook id to the parameters to inject (only those given, plus ``profile``).
    """
    raw: dict[str, str] = {}
    for a in assignments:
        name, sep, text = a.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ParameterError(f"-p {a!r}: expected name=value")
        if name in raw:
            raise ParameterError(f"-p {name}=... is given twice")
        raw[name] = text
    if profile is not None:
        if "profile" in raw:
            raise ParameterError("give the profile either with --profile or with -p profile=..., not both")
        raw["profile"] = profile
    out: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    for nb in notebooks:
        declared = nb.all_parameters()
        given = {}
        for name, text in raw.items():
            if name in declared:
                given[name] = parse_cli_value(declared[name], text)
                used.add(name)
        nb.resolve(given)  # full validation, including profile defaults
        out[nb.id] = given
    unused = sorted(set(raw) - used)
    if unused:
        name = unused[0]
        lines = "; ".join(f"{nb.id}: {', '.join(nb.all_parameters())}" for nb in notebooks)
        raise ParameterError(
            f"unknown parameter {name!r} (value {raw[name]!r}): no selected notebook declares it. Parameters are "
            f"{lines}"
        )
    return out


def read_notebook(spec: NotebookSpec):
    """The notebook of ``spec`` as an nbformat node, converted from its MyST source in memory."""
    import jupytext

    path = paths.notebooks_dir() / spec.chapter / f"{spec.name}.md"
    nb = jupytext.read(path, fmt="md:myst")
    nb.metadata.setdefault("kernelspec", {"name": "python3", "display_name": "Python 3", "language": "python"})
    return nb


@dataclass
class Executed:
    notebook: str
    output: Path
    record: Path
    seconds: float


_KERNEL_PREFIX = "causalbandits-kernel-"

#: Set by the command line when it is interrupted (Ctrl-C, SIGTERM): kernels are then killed at once
#: instead of being interrupted and asked to shut down, which made them log ZMQ errors about the
#: sockets this process had already closed.
INTERRUPTED = threading.Event()


def _quiet_while_interrupted(record) -> bool:
    """A logging filter: after an interrupt, what papermill and asyncio would report about the
    execution it stopped ("Kernel died while waiting for execute reply", a cell's task never
    retrieved) is dropped; the command's one line says what happened. Likewise on a Dask worker
    for a task that was cancelled (its kernel killed) because its sweep was interrupted."""
    from ..core.parallel import current_cancellation

    cancellation = current_cancellation()
    return not INTERRUPTED.is_set() and not (cancellation is not None and cancellation.cancelled)


for _name in ("papermill", "asyncio"):
    logging.getLogger(_name).addFilter(_quiet_while_interrupted)


def remove_stale_kernel_folders() -> list[Path]:
    """Remove the kernel socket folders (``causalbandits-kernel-<pid>-*`` in the temporary folder)
    whose owning process has exited without cleaning up (killed); returns those removed."""
    import shutil
    import tempfile

    removed = []
    for folder in Path(tempfile.gettempdir()).glob(f"{_KERNEL_PREFIX}*"):
        pid = folder.name[len(_KERNEL_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
            continue  # still running
        except ProcessLookupError:
            pass
        except PermissionError:  # another user's live process
            continue
        shutil.rmtree(folder, ignore_errors=True)
        removed.append(folder)
    return removed


#: numpy's dispatch targets above AVX2 (numpy 2.4): with them numpy evaluates some functions
#: (``log1p`` among them) by AVX-512 code whose last bit can differ from its AVX2 code.
NUMPY_ABOVE_AVX2 = "X86_V4 AVX512_ICL AVX512_SPR"


#: The thread counts of the BLAS and OpenMP libraries, pinned to one in every execution.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _cpu_flags() -> set[str]:
    try:
        with open("/proc/cpuinfo") as fh:
            return set(next((line.split(":", 1)[1].split() for line in fh if line.startswith("flags")), []))
    except OSError:
        return set()


def blas_environment() -> dict[str, str]:
    """The arithmetic every execution uses, as environment variables for its kernel.

    ``OPENBLAS_CORETYPE``: as the user set it, else ``Haswell`` on an x86-64 CPU with AVX2 and FMA
    (OpenBLAS otherwise picks its kernels by CPU, and they sum in other orders).
    ``NPY_DISABLE_CPU_FEATURES``: as the user set it, else, on a CPU with AVX-512, numpy's dispatch
    targets above AVX2 (:data:`NUMPY_ABOVE_AVX2`), so that numpy's elementwise functions give the
    same bits as on an AVX2 machine. :data:`BLAS_THREADS`: one thread unless the user set another.
    The Makefile exports the same for the tests and the book.
    """
    flags = _cpu_flags()
    env = {}
    if os.environ.get("OPENBLAS_CORETYPE"):
        env["OPENBLAS_CORETYPE"] = os.environ["OPENBLAS_CORETYPE"]
    elif {"avx2", "fma"} <= flags:
        env["OPENBLAS_CORETYPE"] = "Haswell"
    if os.environ.get("NPY_DISABLE_CPU_FEATURES"):
        env["NPY_DISABLE_CPU_FEATURES"] = os.environ["NPY_DISABLE_CPU_FEATURES"]
    elif "avx512f" in flags:
        env["NPY_DISABLE_CPU_FEATURES"] = NUMPY_ABOVE_AVX2
    # One BLAS thread: a product split over threads sums in another order. joblib's workers get one
    # thread each (cores // jobs), so without this a run beside others and a run alone differed in
    # the last bits (fairx's linear algorithms: `run --jobs 2` against `verify --jobs 1`).
    for name in BLAS_THREADS:
        env[name] = os.environ.get(name) or "1"
    return env


def _ipc_kernel_manager(cwd: str, env: Mapping[str, str], made: list[str] | None = None, cancellation=None):
    """A kernel manager for one execution: it starts its kernel in ``cwd`` with ``env`` added to
    this process's environment, and talks to it over local IPC sockets instead of loopback TCP
    (private to the user, and ipykernel does not warn about unencrypted TCP). The sockets live in a
    fresh temporary folder per kernel, so parallel executions cannot pick the same socket.

    Nothing process-wide changes (no ``chdir``, no ``os.environ`` update), so executions can run
    side by side in threads of one process (a Dask worker with several threads).

    The kernel's connection file is written into the same folder (not as ``/tmp/tmp*.json``), and
    each folder is appended to ``made`` so that the caller removes it even when the execution was
    interrupted before the kernel manager cleaned up.

    With a ``cancellation`` (:class:`~causalbandits_lib.core.parallel.Cancellation`: the execution
    is a task on a Dask worker), cancelling the task kills the kernel at once, so that a sweep
    interrupted on its client stops its kernels on the workers too."""
    import shutil
    import signal
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    extra = dict(env)

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            self._socket_dir = tempfile.mkdtemp(prefix=f"{_KERNEL_PREFIX}{os.getpid()}-")
            if made is not None:
                made.append(self._socket_dir)
            kwargs.setdefault("connection_file", os.path.join(self._socket_dir, "kernel.json"))
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", os.path.join(self._socket_dir, "k"))
            super().__init__(**kwargs)

        async def _async_pre_start_kernel(self, **kw):
            kw["cwd"] = cwd
            kw["env"] = {**(kw.get("env") or os.environ), **extra}
            return await super()._async_pre_start_kernel(**kw)

        async def _async_post_start_kernel(self, **kw) -> None:
            pid = getattr(self.provisioner, "pid", None)
            if cancellation is not None and pid:

                def kill(pid=pid) -> None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)

                self._forget_kill = cancellation.on_cancel(kill)
            await super()._async_post_start_kernel(**kw)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            forget = getattr(self, "_forget_kill", None)
            if forget is not None and not restart:  # the kernel has exited: its pid may be reused
                forget()
            await super()._async_cleanup_resources(restart=restart)
            if not restart:
                shutil.rmtree(self._socket_dir, ignore_errors=True)

        cleanup_resources = _async_cleanup_resources

        async def _async_shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
            if INTERRUPTED.is_set() and not restart:
                if self.has_kernel:
                    self.shutting_down = True
                    self.stop_restarter()
                    await self._async_kill_kernel()
                await self._async_cleanup_resources(restart=False)
                return
            await super()._async_shutdown_kernel(now=now, restart=restart)

        shutdown_kernel = _async_shutdown_kernel

    return IPCKernelManager


def _keep_failed_copy(staged: Path, output: Path) -> Path | None:
    """Move a failed execution's notebook to ``NAME.failed.ipynb`` beside the final output (never to
    the final output itself, where an older notebook may sit beside its record)."""
    if not staged.is_file():
        return None
    failed = output.with_name(output.stem + ".failed.ipynb")
    os.replace(staged, failed)
    return failed


def _running_cell(staged: Path) -> str:
    """Which cell was executing when the kernel died or a cell timed out, from the copy papermill
    saves after every cell ("cell N: first line of its source")."""
    import nbformat

    try:
        nb = nbformat.read(staged, as_version=4)
    except Exception:  # noqa: BLE001 - no copy, or a half-written one: say so
        return "an unknown cell"
    for i, cell in enumerate(nb.cells, 1):
        if cell.get("metadata", {}).get("papermill", {}).get("status") == "running":
            first = next((line for line in cell.source.splitlines() if line.strip()), "")
            return f"cell {i} ({first[:60]!r})"
    return "an unknown cell"


def check_record_matches(path: Path, spec: NotebookSpec, parameters: Mapping[str, Any]) -> dict[str, Any]:
    """Load the record at ``path`` and check that it is the record of ``spec`` run with
    ``parameters`` (resolved against the profile): a record filed under the wrong point must never
    count as that point's result.

    Raises
    ------
    ExecutionError
        Naming the record, what it holds and what was expected.
    """
    from .records import RecordError, load_record

    values, _ = spec.resolve(dict(parameters))
    try:
        rec = load_record(path)
    except RecordError as exc:
        raise ExecutionError(f"notebook {spec.id} wrote an invalid record: {exc}") from None
    if rec["notebook"] != spec.id:
        raise ExecutionError(f"{path}: the record is of notebook {rec['notebook']!r}, expected {spec.id!r}")
    if rec["parameters"] != to_jsonable(values):
        wrong = sorted(k for k in set(rec["parameters"]) | set(values) if rec["parameters"].get(k) != values.get(k))
        shown = ", ".join(f"{k}={rec['parameters'].get(k)!r} (expected {values.get(k)!r})" for k in wrong)
        raise ExecutionError(f"{path}: the record of {spec.id} holds other parameters than its point: {shown}")
    return rec


def _os_error_text(spec: NotebookSpec, exc: OSError, out_dir: Path) -> str:
    """One line for an operating-system error while executing (``No space left on device``)."""
    import errno

    where = exc.filename or out_dir
    hint = (
        "free some space there (or give another --out) and run again"
        if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))
        else "check the folder and run again"
    )
    return (
        f"notebook {spec.id} could not be written: {exc.strerror or exc} (errno {exc.errno}) at {where}; {hint}; "
        "nothing was left at the final paths"
    )


def execute_notebook(
    spec: NotebookSpec,
    parameters: Mapping[str, Any],
    out_dir: Path,
    record_dir: Path | None = None,
    progress: bool | None = None,
    timeout: int | None = None,
    shown_as: str | None = None,
) -> Executed:
    """Execute one notebook with papermill.

    Parameters
    ----------
    spec : NotebookSpec
    parameters : mapping
        Values to inject (already validated by :func:`parse_assignments`).
    out_dir : Path
        The executed notebook goes to ``out_dir/<chapter>/<name>.ipynb``.
    record_dir : Path, optional
        Records go to ``record_dir/<chapter>/<name>.json`` (default ``out_dir``).
    progress : bool, optional
        Show papermill's progress bar (default: when stderr is a terminal).
    timeout : int, optional
        Seconds allowed per cell.
    shown_as : str, optional
        Where the run's output says its record is (default: where it is written); a notebook
        executed on a cluster's worker names the path its record gets where the command runs.

    Raises
    ------
    ExecutionError
        Naming the notebook, the failing cell and the error.
    """
    import shutil
    import tempfile

    import papermill
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    from ..core.parallel import current_cancellation

    cancellation = current_cancellation()  # a task of a Dask sweep: its kernel is killed when cancelled

    out_dir = Path(out_dir).resolve()
    record_dir = (Path(record_dir) if record_dir is not None else out_dir).resolve()
    output = out_dir / spec.chapter / f"{spec.name}.ipynb"
    record = record_dir / spec.chapter / f"{spec.name}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    record.parent.mkdir(parents=True, exist_ok=True)
    if progress is None:
        progress = sys.stderr.isatty()
    nb = read_notebook(spec)
    remove_stale_kernel_folders()
    INTERRUPTED.clear()  # (set by an earlier command of this process; an interrupt now stops this one at once)
    started = time.perf_counter()
    # Everything is written into staging folders beside the final paths first and moved into place
    # only after the record has been checked, so an interrupted or failed execution leaves nothing
    # at the final paths (an older notebook and record there stay a consistent pair).
    staging = Path(tempfile.mkdtemp(prefix=f".{spec.name}.", suffix=".staging", dir=output.parent))
    staged_records = Path(tempfile.mkdtemp(prefix=f".{spec.name}.", suffix=".records", dir=record.parent))
    staged_nb = staging / output.name
    staged_record = staged_records / spec.chapter / f"{spec.name}.json"
    # PYTHONHASHSEED: pgmpy's exact inference orders some contractions by set iteration, so its
    # results can differ in the last bits between interpreters with different hash seeds; the
    # kernel gets a fixed one so that re-executions give identical metrics.
    # OPENBLAS_CORETYPE: OpenBLAS picks its kernels by CPU, and sums in a different order on CPUs
    # with other vector units, so BLAS-heavy results (fairx's linear algorithms) differ in the
    # last digits between machines; one kernel set for every x86-64 CPU with AVX2 removes that.
    # NPY_DISABLE_CPU_FEATURES: likewise numpy's AVX-512 code for some elementwise functions.
    env = {
        RECORD_DIR_ENV: str(staged_records),
        RECORD_SHOWN_AS_ENV: shown_as or str(record),
        paths.ROOT_ENV: str(paths.book_root()),
        "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"),
        **blas_environment(),
    }
    kernel_folders: list[str] = []
    try:
        try:
            papermill.execute_notebook(
                nb,
                str(staged_nb),
                parameters=dict(parameters),
                kernel_name="python3",
                progress_bar=progress,
                execution_timeout=timeout,
                kernel_manager_class=_ipc_kernel_manager(
                    str(paths.notebooks_dir() / spec.chapter), env, kernel_folders, cancellation
                ),
            )
        except PapermillExecutionError as exc:
            failed = _keep_failed_copy(staged_nb, output)
            raise ExecutionError(
                f"notebook {spec.id} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue} "
                f"(executed copy: {failed})"
            ) from None
        except (DeadKernelError, CellTimeoutError) as exc:
            if cancellation is not None:
                cancellation.check()  # its kernel was killed because the task was cancelled
            cell = _running_cell(staged_nb)
            failed = _keep_failed_copy(staged_nb, output)
            if isinstance(exc, CellTimeoutError):
                what = f"timed out after {timeout} s (--timeout)"
            else:
                what = "stopped: its kernel died (killed, or out of memory?)"
            raise ExecutionError(f"notebook {spec.id} {what} in {cell} (executed copy: {failed})") from None
        except OSError as exc:  # a full disk, a folder that went away: one line, nothing half-written
            raise ExecutionError(_os_error_text(spec, exc, out_dir)) from None
        if not staged_record.is_file():
            raise ExecutionError(f"notebook {spec.id} ran but wrote no record; does its last cell call nb.finish()?")
        check_record_matches(staged_record, spec, parameters)
        if cancellation is not None:
            cancellation.check()  # nothing is moved into place once the task is cancelled
        try:
            os.replace(staged_nb, output)
            os.replace(staged_record, record)  # last: a record at its final path has its notebook beside it
        except OSError as exc:
            raise ExecutionError(_os_error_text(spec, exc, out_dir)) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(staged_records, ignore_errors=True)
        for folder in kernel_folders:  # sockets and connection file, also after an interrupt
            shutil.rmtree(folder, ignore_errors=True)
    return Executed(spec.id, output, record, time.perf_counter() - started)


def execute_by_id(notebook: str, parameters: Mapping[str, Any], out_dir: str, record_dir: str, timeout: int | None):
    """:func:`execute_notebook` for the notebook ``chapter/name``, in a worker process of
    ``causalbandits run --jobs``. Returns ``(seconds, output, record)`` as strings."""
    (spec,) = _one_notebook(notebook)
    result = execute_notebook(spec, parameters, Path(out_dir), Path(record_dir), progress=False, timeout=timeout)
    return result.seconds, str(result.output), str(result.record)


@dataclass(frozen=True)
class Detached:
    """A notebook executed away from the command that asked for it (a task on a Dask cluster's
    worker): its executed notebook and its record as text, for :func:`write_detached` to check and
    write where the command runs. Nothing of it stays on the worker's disk."""

    notebook: str
    parameters: dict[str, Any]
    ipynb: str
    record: str
    seconds: float
    host: str


def execute_detached(
    notebook: str, parameters: Mapping[str, Any], timeout: int | None = None, shown_as: str | None = None
) -> Detached:
    """:func:`execute_notebook` for the notebook ``chapter/name`` into a temporary folder of this
    process's machine, removed before it returns: what a cluster's worker runs for ``run``,
    ``verify`` and ``reproduce`` with ``--scheduler``. ``shown_as`` is the record's final path
    where the command runs (what the run's output names)."""
    import shutil
    import socket
    import tempfile

    (spec,) = _one_notebook(notebook)
    work = Path(tempfile.mkdtemp(prefix="causalbandits-detached-"))
    try:
        done = execute_notebook(spec, parameters, work, work, progress=False, timeout=timeout, shown_as=shown_as)
        return Detached(
            spec.id,
            dict(parameters),
            done.output.read_text(encoding="utf-8"),
            done.record.read_text(encoding="utf-8"),
            done.seconds,
            socket.gethostname(),
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


def write_detached(done: Detached, out_dir: Path, record_dir: Path | None = None) -> Executed:
    """Write a :class:`Detached` execution where this command runs, at the paths
    :func:`execute_notebook` uses (``out_dir/<chapter>/<name>.ipynb``, ``record_dir/<chapter>/<name>.json``),
    through :func:`place_detached`.

    Raises
    ------
    ExecutionError
        As :func:`place_detached`.
    """
    (spec,) = _one_notebook(done.notebook)
    out_dir = Path(out_dir).resolve()
    record_dir = (Path(record_dir) if record_dir is not None else out_dir).resolve()
    output = out_dir / spec.chapter / f"{spec.name}.ipynb"
    record = record_dir / spec.chapter / f"{spec.name}.json"
    place_detached(done, output, record)
    return Executed(spec.id, output, record, done.seconds)


def place_detached(done: Detached, output: Path, record: Path) -> None:
    """Check a :class:`Detached` execution's record, then write its notebook at ``output`` and last
    its record at ``record``, each atomically (a record at its final path always has its notebook
    beside it; a failure leaves nothing at either path). The record must be valid, its hashes must
    match its content, it must be the record of this notebook with these parameters, and it must
    have been made by the same library code as this checkout's.

    Raises
    ------
    ExecutionError
        If the record is not the record of this notebook and these parameters, or was made by
        other code (named), or the files cannot be written.
    """
    import shutil
    import tempfile

    (spec,) = _one_notebook(done.notebook)
    output, record = Path(output), Path(record)
    staging: list[Path] = []  # one folder beside each final path (os.replace stays on its file system)
    try:
        for final in (record, output):
            final.parent.mkdir(parents=True, exist_ok=True)
            staging.append(Path(tempfile.mkdtemp(prefix=f".{spec.name}.", suffix=".staging", dir=final.parent)))
        staged_record, staged_nb = staging[0] / record.name, staging[1] / output.name
        staged_record.write_text(done.record, encoding="utf-8")
        _check_same_code(check_record_matches(staged_record, spec, done.parameters), done.host)
        staged_nb.write_text(done.ipynb, encoding="utf-8")
        os.replace(staged_nb, output)
        os.replace(staged_record, record)  # last: a record at its final path has its notebook beside it
    except OSError as exc:
        raise ExecutionError(_os_error_text(spec, exc, output.parent)) from None
    finally:
        for folder in staging:
            shutil.rmtree(folder, ignore_errors=True)


def _check_same_code(record: Mapping[str, Any], host: str) -> None:
    """A record made on another machine must come from the library this checkout has: the hashes of
    the modules it ran equal those of the same modules here (:func:`provenance.library_fingerprint`).

    Raises
    ------
    ExecutionError
        Naming the host and the modules that differ.
    """
    from .provenance import library_fingerprint

    ran = record.get("library", {}).get("modules", {})
    here = library_fingerprint(ran)["modules"]
    differ = sorted(m for m in ran if here.get(m) != ran[m])
    if differ:
        shown = ", ".join(differ[:3]) + (f" and {len(differ) - 3} more" if len(differ) > 3 else "")
        raise ExecutionError(
            f"the record of {record.get('notebook')} made on {host} ran other code than this checkout's ({shown}); "
            "give every worker the same checkout (same commit, no local changes)"
        )


def _one_notebook(notebook: str) -> list[NotebookSpec]:
    found = resolve_target(notebook)
    if len(found) != 1:
        raise ValueError(f"notebook {notebook!r} names {len(found)} notebooks")
    return found


#: The MathJax a page of ``run --html`` carries inside itself: the book's own copy (``make mathjax``
#: copies the npm package pinned in ``tools/mathjax`` to ``static/mathjax``, the folder the book's
#: ``mathjax_path`` points at), in its TeX-to-SVG build with every TeX extension: SVG needs no font
#: files and nothing is fetched later, so the page typesets offline, wherever it is copied.
HTML_MATHJAX = Path("static") / "mathjax" / "tex-svg-full.js"

# The book's MathJax settings for a notebook page ($...$ and $$...$$ as MyST's dollarmath reads them);
# code and outputs (<pre>, <code>) are skipped, as MathJax does by default.
_MATHJAX_CONFIG = """window.MathJax = {
  tex: {inlineMath: [['$', '$'], ['\\\\(', '\\\\)']], displayMath: [['$$', '$$'], ['\\\\[', '\\\\]']],
        processEscapes: true, processEnvironments: true},
  svg: {fontCache: 'global'},
  options: {ignoreHtmlClass: 'tex2jax_ignore|mathjax_ignore'}
};"""

# The lab template without anything it would load from a CDN: require.js (only widgets need it),
# MathJax 2.7.7 and mermaid; MathJax comes inline (``resources["book_mathjax"]``).
_PAGE_TEMPLATE = """{%- extends 'index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{{ resources.book_mathjax }}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
"""

_FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,}|:{3,})(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$", re.M | re.S)
_ROLE_OR_CODE = re.compile(r"\{(?P<name>[a-zA-Z][\w:+-]*)\}`(?P<text>[^`]+)`|(?P<code>`+)[^`].*?(?P=code)", re.S)


def html_mathjax() -> Path | None:
    """The book's MathJax file for ``run --html`` pages, or None when it has not been fetched (``make
    mathjax``): a caller can refuse ``--html`` before anything runs."""
    path = paths.book_root() / HTML_MATHJAX
    return path if path.is_file() else None


def _display_pairs(text: str) -> list[tuple[int, int]]:
    """Start and end offsets of each ``$$ ... $$`` display (the delimiters included), pairing the
    ``$$`` in order, as MyST's dollarmath does."""
    marks = [m.start() for m in re.finditer(r"(?<!\\)\$\$", text)]
    return [(marks[i], marks[i + 1] + 2) for i in range(0, len(marks) - 1, 2)]


_EQ_LABEL = re.compile(r"[ \t]*\((?P<label>[^()\s]+)\)[ \t]*(?=\n|$)")


def _equation_labels(markdown: Sequence[str]) -> list[str]:
    """Labels of the numbered displays (``$$ ... $$ (label)`` and ``{math}`` with ``:label:``) of a
    page's Markdown, in order: the book numbers them (1), (2), ... on each page."""
    labels: list[str] = []
    for text in markdown:
        found: list[tuple[int, str]] = []
        for m in _FENCE.finditer(text):
            if m.group("info").startswith("{math}"):
                lab = re.search(r"^:label:[ \t]*(\S+)", m.group("body"), re.M)
                if lab:
                    found.append((m.start(), lab.group(1)))
        prose = _FENCE.sub(lambda m: " " * len(m.group(0)), text)
        for _, end in _display_pairs(prose):
            lab = _EQ_LABEL.match(prose, end)
            if lab:
                found.append((end, lab.group("label")))
        labels += [label for _, label in sorted(found)]
    return labels


def _myst_markdown_of(source: str) -> list[str]:
    """The Markdown (not the code cells) of a MyST notebook's source."""
    return [re.sub(r"^```\{code-cell\}.*?^```[ \t]*$", "", source, flags=re.M | re.S)]


class _MystPage:
    """What the book's Sphinx build gives MyST roles and directives, for one notebook page exported
    alone: equation numbers (the page's own, and other notebooks'), citations in the book's
    author-year style with a list of references at the end, documents by their titles."""

    def __init__(self, chapter: str, name: str, markdown: Sequence[str]):
        self.chapter, self.name = chapter, name
        self.numbers = {label: i for i, label in enumerate(_equation_labels(markdown), 1)}
        self._elsewhere: dict[str, tuple[str, int]] | None = None
        self._bib: dict[str, tuple[str, str]] | None = None
        self.cited: list[str] = []

    # -- equations -------------------------------------------------------------------------
    def elsewhere(self, label: str) -> tuple[str, int] | None:
        if self._elsewhere is None:
            self._elsewhere = {}
            for source in sorted(paths.notebooks_dir().glob("*/*.md")):
                page = f"{source.parent.name}/{source.stem}"
                for i, lab in enumerate(_equation_labels(_myst_markdown_of(source.read_text(encoding="utf-8"))), 1):
                    self._elsewhere.setdefault(lab, (page, i))
        return self._elsewhere.get(label)

    def eq(self, label: str) -> str:
        if label in self.numbers:
            return f"[({self.numbers[label]})](#equation-{label})"
        found = self.elsewhere(label)
        if found:
            return f"({found[1]}) of {html.escape(found[0])}"
        return f"({html.escape(label)})"

    # -- citations -------------------------------------------------------------------------
    def bibliography(self) -> dict[str, tuple[str, str]]:
        """Key -> (label as the book shows it, the reference as text), from book/references.bib."""
        if self._bib is None:
            self._bib = {}
            bib_file = paths.book_root() / "book" / "references.bib"
            if bib_file.is_file():
                from pybtex.database import parse_file
                from pybtex.plugin import find_plugin

                data = parse_file(str(bib_file))
                formatted = find_plugin("pybtex.style.formatting", "plain")().format_bibliography(data)
                texts = {e.key: e.text.render_as("text") for e in formatted}
                for key, entry in data.entries.items():
                    people = entry.persons.get("author") or entry.persons.get("editor") or []
                    last = [" ".join(n.render_as("text") for n in p.rich_last_names) for p in people]
                    who = (
                        last[0]
                        if len(last) == 1
                        else f"{last[0]} and {last[1]}"
                        if len(last) == 2
                        else f"{last[0]} et al."
                        if last
                        else key
                    )
                    self._bib[key] = (f"{who}, {entry.fields.get('year', 'n.d.')}", texts.get(key, key))
        return self._bib

    def cite(self, keys: str) -> str:
        bib = self.bibliography()
        parts = []
        for key in sorted((k.strip() for k in keys.split(",") if k.strip()), key=lambda k: bib.get(k, (k,))[0]):
            if key in bib:
                if key not in self.cited:
                    self.cited.append(key)
                label, text = bib[key]
                title = text.replace("\\", "\\\\").replace('"', '\\"')
                parts.append(f'[{html.escape(label)}](#cite-{key} "{html.escape(title, quote=False)}")')
            else:
                parts.append(html.escape(key))
        return "[" + ", ".join(parts) + "]"

    def references(self) -> str:
        """The references the page cited, as Markdown (a last cell)."""
        bib = self.bibliography()
        items = "\n".join(
            f'<li id="cite-{html.escape(k)}">{html.escape(bib[k][1])}</li>'
            for k in sorted(self.cited, key=lambda k: bib[k][0])
        )
        return f"## References\n\n<ul>\n{items}\n</ul>\n"

    # -- documents and anything else -------------------------------------------------------
    def doc(self, text: str) -> str:
        shown = re.match(r"(?s)(.*?)\s*<([^<>]+)>$", text)
        if shown:
            return html.escape(shown.group(1))
        target = (paths.notebooks_dir() / self.chapter / f"{text}.md").resolve()
        heading = re.search(r"^# (.+)$", target.read_text(encoding="utf-8"), re.M) if target.is_file() else None
        return html.escape(heading.group(1).strip() if heading else text)

    def role(self, m: re.Match) -> str:
        name, text = m.group("name"), m.group("text")
        if name == "eq":
            return self.eq(text.strip())
        if name.startswith("cite"):
            return self.cite(text)
        if name == "doc":
            return self.doc(text.strip())
        if name == "math":
            return f"${text}$"
        # {ref}, {numref}, {term}, {abbr}, ...: the text shown, without a target in <...>
        shown = re.match(r"(?s)(.*?)\s*<([^<>]+)>$", text)
        return html.escape(shown.group(1) if shown else text)

    # -- one Markdown cell -----------------------------------------------------------------
    def markdown(self, text: str) -> str:
        """MyST Markdown as plain Markdown with HTML: roles rendered, numbered displays tagged and
        anchored, directives as quoted boxes, targets and comments removed; code left alone."""
        out, last = [], 0
        for m in _FENCE.finditer(text):
            out.append(self._prose(text[last : m.start()]))
            out.append(self._directive(m))
            last = m.end()
        out.append(self._prose(text[last:]))
        return "".join(out)

    def _directive(self, m: re.Match) -> str:
        info, body = m.group("info").strip(), m.group("body")
        d = re.match(r"\{(?P<name>[\w:+-]+)\}\s*(?P<arg>.*)", info)
        if d is None:  # a code block
            return m.group(0)
        name, arg = d.group("name"), d.group("arg").strip()
        options = dict(re.findall(r"^:([\w-]+):[ \t]*(.*)$", body, re.M))
        body = re.sub(r"^:[\w-]+:.*\n?", "", body, flags=re.M)
        if name == "math":
            tag = ""
            if options.get("label") in self.numbers:
                tag = rf" \tag{{{self.numbers[options['label']]}}}"
            anchor = f'<span id="equation-{html.escape(options["label"])}"></span>\n\n' if "label" in options else ""
            return f"{anchor}$$\n{body.strip()}{tag}\n$$"
        if name in ("code-cell", "code", "code-block", "sourcecode"):
            return f"```{arg}\n{body}```"
        title = arg or name.split(":")[-1].capitalize()
        inner = self.markdown(body).strip("\n")
        quoted = "\n".join(f"> {line}" if line else ">" for line in inner.split("\n"))
        return f"> **{self._prose(title).strip()}**\n>\n{quoted}"

    def _prose(self, text: str) -> str:
        text = re.sub(r"^\([\w:.-]+\)=[ \t]*$\n?", "", text, flags=re.M)  # targets
        text = re.sub(r"^%.*$\n?", "", text, flags=re.M)  # comments
        text = re.sub(r"^\+\+\+.*$\n?", "", text, flags=re.M)  # block breaks
        # numbered displays: $$ ... $$ (label) -> an anchor and $$ ... \tag{n} $$
        out, last = [], 0
        for start, end in _display_pairs(text):
            lab = _EQ_LABEL.match(text, end)
            if not lab:
                continue
            label = lab.group("label")
            out.append(self._roles(text[last:start]))
            tag = rf" \tag{{{self.numbers[label]}}}" if label in self.numbers else ""
            out.append(f'\n\n<span id="equation-{html.escape(label)}"></span>\n\n{text[start : end - 2]}{tag}$$')
            last = lab.end()
        out.append(self._roles(text[last:]))
        return "".join(out)

    def _roles(self, text: str) -> str:
        # a role, or inline code left as it is
        return _ROLE_OR_CODE.sub(lambda m: self.role(m) if m.group("name") else m.group(0), text)


def _as_plain_markdown(nb, chapter: str, name: str):
    """A copy of an executed notebook whose Markdown (cells and Markdown outputs) is what the book
    renders from its MyST: roles, numbered equations, directives (see :class:`_MystPage`)."""
    import copy

    import nbformat

    nb = copy.deepcopy(nb)
    cells = [c for c in nb.cells if c.cell_type == "markdown"]
    page = _MystPage(chapter, name, [c.source for c in cells])
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = page.markdown(cell.source)
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "text/markdown" in data:
                data["text/markdown"] = page.markdown(data["text/markdown"])
    if page.cited:
        nb.cells.append(nbformat.v4.new_markdown_cell(page.references()))
    return nb


def render_html(notebook: Path) -> Path:
    """Render an executed notebook to one self-contained HTML page beside it. Returns its path.

    Nothing is loaded from the network: figures are embedded, MathJax is the book's own copy
    (:data:`HTML_MATHJAX`) written into the page, and the MyST of its Markdown is rendered as the book
    renders it (citations in author-year style with the references at the end, equation numbers
    and links, documents by title, directives as quoted boxes; never a literal ``{cite}``). Without
    the book's MathJax (``make mathjax`` fetches it) the page says so at its top and shows the
    formulas as TeX.
    """
    import jinja2
    import nbformat
    from nbconvert import HTMLExporter

    from .records import atomic_write_text

    notebook = Path(notebook)
    nb = _as_plain_markdown(nbformat.read(str(notebook), as_version=4), notebook.parent.name, notebook.stem)
    mathjax = html_mathjax()
    if mathjax is not None:
        script = mathjax.read_text(encoding="utf-8").replace("</script", "<\\/script")
        head = f"<script>\n{_MATHJAX_CONFIG}\n</script>\n<script>\n{script}\n</script>"
    else:
        head = ""
        nb.cells.insert(
            0,
            nbformat.v4.new_markdown_cell(
                f"**Formulas are shown as TeX**: this page was written without the book's MathJax "
                f"(`{HTML_MATHJAX.as_posix()}`, fetched by `make mathjax`)."
            ),
        )
    exporter = HTMLExporter(
        template_name="lab",
        template_file="book_page.html.j2",
        extra_loaders=[jinja2.DictLoader({"book_page.html.j2": _PAGE_TEMPLATE})],
        embed_images=True,
    )
    body, _ = exporter.from_notebook_node(nb, resources={"book_mathjax": head})
    return atomic_write_text(notebook.with_suffix(".html"), body)
