"""Execute the book's MyST notebooks headlessly with papermill.

The MyST source (``notebooks/<chapter>/<name>.md``) is converted to a notebook in memory with
jupytext, its parameters are validated against ``parameters.yml`` *before* a kernel starts, and
papermill executes it with the parameters injected after the ``parameters`` cell. The executed
``.ipynb`` and the notebook's results record are written under the output folder.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from . import paths
from .notebook import RECORD_DIR_ENV
from .params import ChapterSpec, NotebookSpec, ParameterError, load_all, parse_cli_value

__all__ = [
    "ExecutionError",
    "chapters",
    "resolve_target",
    "parse_assignments",
    "read_notebook",
    "execute_notebook",
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


@contextlib.contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    old = {k: os.environ.get(k) for k in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


@dataclass
class Executed:
    notebook: str
    output: Path
    record: Path
    seconds: float


def _ipc_kernel_manager():
    """A kernel manager that talks to the kernel over local IPC sockets instead of loopback TCP
    (private to the user, and ipykernel does not warn about unencrypted TCP). The sockets live in
    a fresh temporary folder per kernel, so parallel executions cannot pick the same socket."""
    import shutil
    import tempfile

    from jupyter_client.manager import AsyncKernelManager

    class IPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs):
            self._socket_dir = tempfile.mkdtemp(prefix="causalbandits-kernel-")
            kwargs.setdefault("transport", "ipc")
            kwargs.setdefault("ip", os.path.join(self._socket_dir, "k"))
            super().__init__(**kwargs)

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart=restart)
            if not restart:
                shutil.rmtree(self._socket_dir, ignore_errors=True)

        cleanup_resources = _async_cleanup_resources

    return IPCKernelManager


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
    import papermill
    from papermill.exceptions import PapermillExecutionError

    out_dir = Path(out_dir).resolve()
    record_dir = (Path(record_dir) if record_dir is not None else out_dir).resolve()
    output = out_dir / spec.chapter / f"{spec.name}.ipynb"
    output.parent.mkdir(parents=True, exist_ok=True)
    record = record_dir / spec.chapter / f"{spec.name}.json"
    if progress is None:
        progress = sys.stderr.isatty()
    nb = read_notebook(spec)
    started = time.perf_counter()
    started_wall = time.time()
    # PYTHONHASHSEED: pgmpy's exact inference orders some contractions by set iteration, so its
    # results can differ in the last bits between interpreters with different hash seeds; the
    # kernel gets a fixed one so that re-executions give identical metrics.
    env = {
        RECORD_DIR_ENV: str(record_dir),
        paths.ROOT_ENV: str(paths.book_root()),
        "PYTHONHASHSEED": os.environ.get("PYTHONHASHSEED", "0"),
    }
    try:
        with _environment(env):
            papermill.execute_notebook(
                nb,
                str(output),
                parameters=dict(parameters),
                kernel_name="python3",
                progress_bar=progress,
                cwd=str(paths.notebooks_dir() / spec.chapter),
                execution_timeout=timeout,
                kernel_manager_class=_ipc_kernel_manager(),
            )
    except PapermillExecutionError as exc:
        raise ExecutionError(
            f"notebook {spec.id} failed in cell {exc.exec_count}: {exc.ename}: {exc.evalue} (executed copy: {output})"
        ) from None
    if not record.is_file() or record.stat().st_mtime < started_wall - 1:
        raise ExecutionError(
            f"notebook {spec.id} ran but wrote no record at {record}; does its last cell call nb.finish()?"
        )
    return Executed(spec.id, output, record, time.perf_counter() - started)


def execute_by_id(notebook: str, parameters: Mapping[str, Any], out_dir: str, record_dir: str, timeout: int | None):
    """:func:`execute_notebook` for the notebook ``chapter/name``, in a worker process of
    ``causalbandits run --jobs`` (papermill changes the working directory of its process, so each
    notebook runs in a process of its own). Returns ``(seconds, output, record)`` as strings."""
    spec = resolve_target(notebook)
    if len(spec) != 1:
        raise ValueError(f"notebook {notebook!r} names {len(spec)} notebooks")
    result = execute_notebook(spec[0], parameters, Path(out_dir), Path(record_dir), progress=False, timeout=timeout)
    return result.seconds, str(result.output), str(result.record)
