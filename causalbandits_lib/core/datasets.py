"""Public data sets: find, verify, download where a network exists, or fall back to a stand-in.

The book never requires its data files. :func:`fetch` looks for each file of a data set

1. in the folder named by ``CAUSALBANDITS_DATA_DIR`` (CI points it at ``../shared/data``), then
2. in the checkout's own ``data/`` folder (where the two public data sets are committed, with
   ``data/README.md``, and where downloads go),

verifies its SHA-256 against :data:`REGISTRY`, and if a file is missing tries its public sources
(unless ``CAUSALBANDITS_OFFLINE=1``), writing the download atomically after verifying it. When the
data cannot be had, :func:`fetch` raises :class:`DataUnavailable`; chapter loaders catch it and
build a documented synthetic stand-in, flagged in the record (``stand_in: true``) and announced
loudly in the notebook. A file that is present but has the wrong checksum is an error, never
silently replaced. A record names where the files were by their ``location`` below the data folder
(``yeast``) and which folder that was (``$CAUSALBANDITS_DATA_DIR`` or the checkout's ``data``),
never by a folder of the machine that ran it: :func:`locate` finds them again by their checksums.

Every data source a computation reads is *declared* (:func:`declare`): :func:`fetch` declares the
real files it returns, :func:`stand_in_provenance` the stand-in it describes, and a loader of any
other source (a simulated replay, a permanent synthetic set) calls :func:`declare` itself. The
notebook session takes every declaration made since it started (:func:`declared_since`) into its
record, and judges a claim on what its execution read, not on the words of its statement.
"""

from __future__ import annotations

import copy
import hashlib
import os
import tempfile
import time
import urllib.error
import urllib.request
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import paths

__all__ = [
    "DATA_DIR_ENV",
    "OFFLINE_ENV",
    "DataFile",
    "DatasetSpec",
    "REGISTRY",
    "DataUnavailable",
    "ChecksumError",
    "StandInWarning",
    "DatasetFiles",
    "sha256_file",
    "data_dirs",
    "fetch",
    "locate",
    "stand_in_provenance",
    "declare",
    "declared_since",
    "same_source",
    "undeclared_in",
]

DATA_DIR_ENV = "CAUSALBANDITS_DATA_DIR"
OFFLINE_ENV = "CAUSALBANDITS_OFFLINE"


class DataUnavailable(RuntimeError):
    """The data set's files are neither present nor downloadable."""


class ChecksumError(RuntimeError):
    """A data file is present but its SHA-256 differs from the registered one."""


class StandInWarning(UserWarning):
    """A synthetic stand-in replaces a real data set."""


@dataclass(frozen=True)
class DataFile:
    """One file of a data set: path relative to the data folder, checksum, size, public sources."""

    relpath: str
    sha256: str
    size: int
    urls: tuple[str, ...] = ()


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    files: tuple[DataFile, ...]
    licence: str
    source: str


#: The data sets the book uses (see ``../shared/data/PROVENANCE.md``).
REGISTRY: dict[str, DatasetSpec] = {
    "adult": DatasetSpec(
        name="adult",
        files=(
            DataFile(
                "adult/adult.data",
                "5b00264637dbfec36bdeaab5676b0b309ff9eb788d63554ca0a249491c86603d",
                3974305,
                ("https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.data",),
            ),
            DataFile(
                "adult/adult.test",
                "a2a9044bc167a35b2361efbabec64e89d69ce82d9790d2980119aac5fd7e9c05",
                2003153,
                ("https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.test",),
            ),
            DataFile(
                "adult/adult.names",
                "c248284c0b5de30c9e1958d6cdd168a34a654758b620e68f46aefa83fc0a576a",
                5229,
                ("https://archive.ics.uci.edu/ml/machine-learning-databases/adult/adult.names",),
            ),
        ),
        licence="CC BY 4.0",
        source="UCI Machine Learning Repository, 'Adult' (Becker and Kohavi, 1996)",
    ),
    "yeast": DatasetSpec(
        name="yeast",
        # The registered file's header was reordered to match its data rows (PROVENANCE.md), so no
        # public download has these exact bytes: without the file, the chapter uses its stand-in.
        files=(
            DataFile("yeast/yeast.arff", "55c07a3b6ff885ae338fb6987a1d57f55572b29809922c2822c4885c61230dd7", 2416688),
        ),
        licence="free for research use (MULAN)",
        source="multi-label yeast (Elisseeff and Weston, 2001), MULAN distribution",
    ),
}


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def data_dirs() -> list[Path]:
    """Folders searched for data, in order."""
    dirs = []
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        dirs.append(Path(env).expanduser())
    try:
        dirs.append(paths.book_root() / "data")
    except FileNotFoundError:
        pass
    return dirs


@dataclass
class DatasetFiles:
    """The located files of a data set and the provenance to pin in a record."""

    name: str
    paths: dict[str, Path]
    provenance: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, relpath: str) -> Path:
        return self.paths[relpath]


def _download(file: DataFile, dest: Path, timeout: float, urls: tuple[str, ...]) -> tuple[Path | None, list[str]]:
    errors = []
    for url in urls:
        try:
            with urllib.request.urlopen(url, timeout=timeout) as resp:  # noqa: S310 (public https sources)
                dest.parent.mkdir(parents=True, exist_ok=True)
                fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
                h = hashlib.sha256()
                with os.fdopen(fd, "wb") as fh:
                    for block in iter(lambda: resp.read(1 << 20), b""):
                        h.update(block)
                        fh.write(block)
            if h.hexdigest() != file.sha256:
                os.unlink(tmp)
                errors.append(f"{url}: checksum {h.hexdigest()[:12]}… differs from the registered {file.sha256[:12]}…")
                continue
            os.replace(tmp, dest)
            return dest, errors
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            errors.append(f"{url}: {exc}")
    return None, errors


def fetch(
    spec: DatasetSpec | str,
    allow_download: bool | None = None,
    timeout: float = 20.0,
    search: list[Path] | None = None,
) -> DatasetFiles:
    """Locate (or download) and verify every file of a data set.

    Parameters
    ----------
    spec : DatasetSpec or str
        A registered name (``"adult"``, ``"yeast"``) or a spec.
    allow_download : bool, optional
        Try the public sources for missing files. Default: yes unless ``CAUSALBANDITS_OFFLINE=1``.
    timeout : float
        Seconds per download attempt.
    search : list of Path, optional
        Folders to search instead of :func:`data_dirs`; downloads go to the first writable one.

    Raises
    ------
    ChecksumError
        A present file has the wrong checksum.
    DataUnavailable
        A file is missing and could not be downloaded; the message lists where it looked.
    """
    if isinstance(spec, str):
        if spec not in REGISTRY:
            raise KeyError(f"unknown data set {spec!r}; registered: {sorted(REGISTRY)}")
        spec = REGISTRY[spec]
    dirs = data_dirs() if search is None else list(search)
    if allow_download is None:
        allow_download = os.environ.get(OFFLINE_ENV, "") not in ("1", "true", "yes")
    found: dict[str, Path] = {}
    found_in: dict[str, Path] = {}  # the data folder each file was found in (or downloaded into)
    where: dict[str, str] = {}
    problems: list[str] = []
    for file in spec.files:
        for d in dirs:
            candidate = d / file.relpath
            if candidate.is_file():
                actual = sha256_file(candidate)
                if actual != file.sha256:
                    raise ChecksumError(
                        f"{candidate}: SHA-256 {actual} differs from the registered {file.sha256} for "
                        f"{file.relpath} of data set {spec.name!r}; "
                        "replace the file with the published one (see PROVENANCE.md) or remove it"
                    )
                found[file.relpath] = candidate
                found_in[file.relpath] = d
                where[file.relpath] = "found"
                break
        else:
            if allow_download and file.urls:
                dest_dir = next((d for d in dirs if _writable(d)), None)
                if dest_dir is None:
                    problems.append(f"{file.relpath}: no writable data folder to download into")
                    continue
                got, errors = _download(file, dest_dir / file.relpath, timeout, file.urls)
                if got is not None:
                    found[file.relpath] = got
                    found_in[file.relpath] = dest_dir
                    where[file.relpath] = "downloaded"
                    continue
                problems.append(f"{file.relpath}: download failed ({'; '.join(errors)})")
            else:
                reason = "downloads disabled" if file.urls else "no public source has these exact bytes"
                problems.append(f"{file.relpath}: not found ({reason})")
    if problems:
        looked = ", ".join(str(d) for d in dirs) or "(no folder: set CAUSALBANDITS_DATA_DIR)"
        raise DataUnavailable(f"data set {spec.name!r} unavailable; looked in {looked}: " + " | ".join(problems))
    provenance = declare(
        {
            "name": spec.name,
            "stand_in": False,
            "files": {f.relpath: f.sha256 for f in spec.files},
            # relative to the data folder, never a folder of this machine: the files are found
            # again by their paths and checksums under any data folder (see :func:`locate`)
            "location": Path(spec.files[0].relpath).parent.as_posix(),
            "data_folder": _folder_label(found_in[spec.files[0].relpath]),
            "how": where,
            "licence": spec.licence,
            "source": spec.source,
        }
    )
    return DatasetFiles(spec.name, found, provenance)


def _folder_label(d: Path) -> str:
    """A data folder as a record names it, without the machine's path: the environment variable
    that named it, or the checkout's ``data`` folder."""
    env = os.environ.get(DATA_DIR_ENV)
    if env and Path(env).expanduser() == d:
        return f"${DATA_DIR_ENV}"
    try:
        if d == paths.book_root() / "data":
            return "data"
    except FileNotFoundError:
        pass
    return "a folder given to fetch(search=...)"


def locate(provenance: dict[str, Any], search: list[Path] | None = None) -> Path | None:
    """The data folder on this machine that holds a record's data set (``provenance``, an entry of
    its ``data``): the first of ``search`` (default :func:`data_dirs`) in which every file the
    record lists is present with the recorded SHA-256; None if no folder holds them all. Its
    ``location`` below that folder is where the data set's files are."""
    files = provenance.get("files") or {}
    if not files:
        return None
    for d in data_dirs() if search is None else search:
        if all((d / rel).is_file() and sha256_file(d / rel) == sha for rel, sha in files.items()):
            return d
    return None


def _writable(d: Path) -> bool:
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(d, os.W_OK)


def stand_in_provenance(name: str, reason: str, description: str, generator_seed: int | None = None) -> dict[str, Any]:
    """Provenance of a synthetic stand-in, and a loud warning that it is one."""
    msg = f"STAND-IN DATA: the real {name!r} data set is not available ({reason}); using {description}"
    warnings.warn(msg, StandInWarning, stacklevel=2)
    return declare(
        {
            "name": name,
            "stand_in": True,
            "reason": reason,
            "description": description,
            "generator_seed": generator_seed,
            "files": {},
        }
    )


# Every declaration of this process: (time.perf_counter() when declared, a copy of the provenance).
# A notebook executes in a kernel of its own, so its session reads the declarations since it started.
_DECLARED: list[tuple[float, dict[str, Any]]] = []


def declare(provenance: dict[str, Any]) -> dict[str, Any]:
    """Declare that a data source was read: its provenance (``name``, ``stand_in``, ``files`` with
    their checksums, and what else describes it) goes into the record of the notebook session that
    is running. Returns ``provenance`` unchanged. :func:`fetch` and :func:`stand_in_provenance`
    call it; a loader of another source (a simulated replay, a permanent synthetic set) calls it.

    Raises
    ------
    ValueError
        ``provenance`` has no ``name`` (a string) or no ``stand_in`` flag (a bool).
    """
    if not isinstance(provenance.get("name"), str) or not isinstance(provenance.get("stand_in"), bool):
        raise ValueError(
            f"a declared data source needs a 'name' (a string) and a 'stand_in' flag (true or false), "
            f"got name={provenance.get('name')!r}, stand_in={provenance.get('stand_in')!r}"
        )
    _DECLARED.append((time.perf_counter(), copy.deepcopy(dict(provenance))))
    return provenance


def declared_since(started: float) -> list[dict[str, Any]]:
    """Copies of the provenances declared in this process at or after ``started`` (a
    ``time.perf_counter()`` value, such as the start of a notebook session), in order."""
    return [copy.deepcopy(p) for t, p in _DECLARED if t >= started]


def same_source(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two provenances describe one data source: the same name, stand-in flag and files."""
    return (a.get("name"), bool(a.get("stand_in")), a.get("files") or {}) == (
        b.get("name"),
        bool(b.get("stand_in")),
        b.get("files") or {},
    )


def undeclared_in(data: list[dict[str, Any]], started: float) -> list[dict[str, Any]]:
    """The sources declared since ``started`` that ``data`` (a record's list) does not hold yet,
    each once, in the order they were first declared."""
    new: list[dict[str, Any]] = []
    for provenance in declared_since(started):
        if not any(same_source(d, provenance) for d in [*data, *new]):
            new.append(provenance)
    return new
