"""Execute the book's MyST notebooks headlessly with papermill.

The MyST source (``notebooks/<chapter>/<name>.md``) is converted to a notebook in memory with
jupytext, its parameters are validated against ``parameters.yml`` *before* a kernel starts, and
papermill executes it with the parameters injected after the ``parameters`` cell. The executed
``.ipynb`` and the notebook's results record are written under the output folder.
"""

from __future__ import annotations

import os
import sys
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


def _ipc_kernel_manager(cwd: str, env: Mapping[str, str]):
    """A kernel manager for one execution: it starts its kernel in ``cwd`` with ``env`` added to
    this process's environment, and talks to it over local IPC sockets instead of loopback TCP
    (private to the user, and ipykernel does not warn about unencrypted TCP). The sockets live in a
    fresh temporary folder per kernel, so parallel executions cannot pick the same socket.

    Nothing process-wide changes (no ``chdir``, no ``os.environ`` update), so executions can run
    side by side in threads of one process (a Dask worker with several threads)."""
    import shutil
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    extra = dict(env)

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            self._socket_dir = tempfile.mkdtemp(prefix=f"{_KERNEL_PREFIX}{os.getpid()}-")
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", os.path.join(self._socket_dir, "k"))
            super().__init__(**kwargs)

        async def _async_pre_start_kernel(self, **kw):
            kw["cwd"] = cwd
            kw["env"] = {**(kw.get("env") or os.environ), **extra}
            return await super()._async_pre_start_kernel(**kw)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart=restart)
            if not restart:
                shutil.rmtree(self._socket_dir, ignore_errors=True)

        cleanup_resources = _async_cleanup_resources

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


def execute_notebook(
    spec: NotebookSpec,
    parameters: Mapping[str, Any],
    out_dir: Path,
    record_dir: Path | None = None,
    progress: bool | None = None,
    timeout: int | None = None,
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
        RECORD_SHOWN_AS_ENV: str(record),
        paths.ROOT_ENV: str(paths.book_root()),
        "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"),
        **blas_environment(),
    }
    try:
        try:
            papermill.execute_notebook(
                nb,
                str(staged_nb),
                parameters=dict(parameters),
                kernel_name="python3",
                progress_bar=progress,
                execution_timeout=timeout,
                kernel_manager_class=_ipc_kernel_manager(str(paths.notebooks_dir() / spec.chapter), env),
            )
        except PapermillExecutionError as exc:
            failed = _keep_failed_copy(staged_nb, output)
            raise ExecutionError(
                f"notebook {spec.id} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue} "
                f"(executed copy: {failed})"
            ) from None
        except (DeadKernelError, CellTimeoutError) as exc:
            cell = _running_cell(staged_nb)
            failed = _keep_failed_copy(staged_nb, output)
            if isinstance(exc, CellTimeoutError):
                what = f"timed out after {timeout} s (--timeout)"
            else:
                what = "stopped: its kernel died (killed, or out of memory?)"
            raise ExecutionError(f"notebook {spec.id} {what} in {cell} (executed copy: {failed})") from None
        if not staged_record.is_file():
            raise ExecutionError(f"notebook {spec.id} ran but wrote no record; does its last cell call nb.finish()?")
        check_record_matches(staged_record, spec, parameters)
        os.replace(staged_nb, output)
        os.replace(staged_record, record)  # last: a record at its final path has its notebook beside it
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        shutil.rmtree(staged_records, ignore_errors=True)
    return Executed(spec.id, output, record, time.perf_counter() - started)


def execute_by_id(notebook: str, parameters: Mapping[str, Any], out_dir: str, record_dir: str, timeout: int | None):
    """:func:`execute_notebook` for the notebook ``chapter/name``, in a worker process of
    ``causalbandits run --jobs``. Returns ``(seconds, output, record)`` as strings."""
    spec = resolve_target(notebook)
    if len(spec) != 1:
        raise ValueError(f"notebook {notebook!r} names {len(spec)} notebooks")
    result = execute_notebook(spec[0], parameters, Path(out_dir), Path(record_dir), progress=False, timeout=timeout)
    return result.seconds, str(result.output), str(result.record)


def render_html(notebook: Path) -> Path:
    """Render an executed notebook to one self-contained HTML page beside it (figures embedded;
    formulas through the book's own MathJax copy when it has been fetched, so the page reads
    offline). Returns the page's path."""
    import nbformat
    from nbconvert import HTMLExporter

    from .records import atomic_write_text

    exporter = HTMLExporter(template_name="lab", embed_images=True)
    mathjax = paths.book_root() / "static" / "mathjax" / "tex-mml-chtml.js"
    if mathjax.is_file():
        exporter.mathjax_url = mathjax.resolve().as_uri()
    body, _ = exporter.from_notebook_node(nbformat.read(str(notebook), as_version=4))
    return atomic_write_text(Path(notebook).with_suffix(".html"), body)
