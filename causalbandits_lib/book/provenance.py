"""Provenance of a record: the commit and whether the tree was dirty, package versions, the
platform, and the fingerprint of the library code that ran (which flags results as stale).
"""

from __future__ import annotations

import hashlib
import os
import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any, Iterable

from .records import canonical_json

__all__ = [
    "PINNED_PACKAGES",
    "GENERATED_PATHS",
    "git_info",
    "package_versions",
    "platform_info",
    "fingerprinted",
    "library_fingerprint",
    "stand_ins",
    "replaceable_stand_ins",
    "real_data_available",
    "SWHID_PATTERN",
    "swhid",
    "parse_swhid",
    "blob_id",
    "tree_of",
    "committed_blob",
    "source_state",
]

#: Packages whose versions are pinned in every record.
PINNED_PACKAGES = (
    "causalbandits-lib",
    "numpy",
    "scipy",
    "networkx",
    "pgmpy",
    "cvxpy",
    "clarabel",
    "numba",
    "llvmlite",
    "matplotlib",
    "pandas",
    "papermill",
    "jupytext",
    "ipykernel",
)


#: Paths whose uncommitted changes do not make a record "dirty": the records and the pages generated
#: from them are the output of the runs being recorded (``make reproduce`` rewrites them one notebook
#: at a time), not an input to them.
GENERATED_PATHS = ("results", "book/reproducibility.md", "book/_reproduction_summary.md", "book/chapters")


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
    status = git(
        "status", "--porcelain", "--untracked-files=no", "--", ".", *(f":(exclude){p}" for p in GENERATED_PATHS)
    )
    return {"commit": commit, "dirty": bool(status), "commit_date": git("show", "-s", "--format=%cI", "HEAD")}


# ------------------------------------------------------------------ intrinsic identifiers (SWHIDs)
#: The core Software Heritage identifier: ``swh:1:<kind>:<40 hex>``
#: (https://docs.softwareheritage.org/devel/swh-model/persistent-identifiers.html). For a git
#: repository, ``rev`` is the commit id, ``dir`` the id of a tree and ``cnt`` the id of a blob.
SWHID_PATTERN = re.compile(r"swh:1:(cnt|dir|rev|rel|snp):([0-9a-f]{40})")


def swhid(kind: str, object_id: str) -> str:
    """The SWHID of a git object: ``kind`` is ``rev`` (a commit), ``dir`` (a tree) or ``cnt`` (a blob)."""
    if kind not in ("cnt", "dir", "rev", "rel", "snp") or not re.fullmatch(r"[0-9a-f]{40}", object_id or ""):
        raise ValueError(f"no SWHID for {kind!r} {object_id!r}: a kind and a 40-digit hexadecimal id are needed")
    return f"swh:1:{kind}:{object_id}"


def parse_swhid(text: str) -> tuple[str, str]:
    """``(kind, id)`` of a core SWHID; qualifiers after ``;`` are dropped.

    Raises
    ------
    ValueError
        If ``text`` is not a SWHID (naming it and the syntax).
    """
    core = text.strip().split(";", 1)[0]
    match = SWHID_PATTERN.fullmatch(core)
    if match is None:
        raise ValueError(f"{text!r} is not a SWHID: expected swh:1:<cnt|dir|rev|rel|snp>:<40 hexadecimal digits>")
    return match.group(1), match.group(2)


def blob_id(data: bytes) -> str:
    """The git blob id (``swh:1:cnt``) of a file's bytes: SHA-1 of ``blob <size>\\0`` and the bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _git(root: Path, *args: str, env: dict[str, str] | None = None, strip: bool = True) -> str | None:
    try:
        out = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=120, env=None if env is None else env
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() if strip else out.stdout


def _is_work_tree_root(root: Path) -> bool:
    top = _git(root, "rev-parse", "--show-toplevel")
    return top is not None and Path(top).resolve() == Path(root).resolve()


def tree_of(commit: str | None, root: Path) -> str | None:
    """The tree id of ``commit`` in the repository at ``root``, or ``None`` when it is not there."""
    if not commit or not _is_work_tree_root(root):
        return None
    return _git(root, "rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}")


def committed_blob(commit: str | None, path: str, root: Path) -> str | None:
    """The blob id of ``path`` (relative to ``root``) in ``commit``, or ``None``."""
    if not commit or not _is_work_tree_root(root):
        return None
    return _git(root, "rev-parse", "--verify", "--quiet", f"{commit}:{path}")


def source_state(root: Path, tree: bool = True) -> dict[str, Any]:
    """What the source at ``root`` is, by its intrinsic identifiers.

    ``git``: whether ``root`` is the top of a git work tree; ``commit``: its ``HEAD`` (``None``
    outside git); ``changes``: the paths that differ from ``HEAD`` (modified tracked files and
    untracked files that are not ignored; empty when clean); ``tree``: the git tree id of the files
    as they are (``HEAD``'s tree when clean; in a copy without git, e.g. an unpacked source archive,
    the tree of every file its ``.gitignore`` files do not ignore), ``None`` when git is missing or
    ``tree`` is false.
    """
    root = Path(root)
    if _is_work_tree_root(root):
        commit = _git(root, "rev-parse", "HEAD")
        status = _git(root, "status", "--porcelain", "--untracked-files=normal", strip=False)
        changes = [line[3:] for line in (status or "").splitlines() if line.strip()]
        if status is None or not tree:
            tree_id = None
        elif not changes:
            tree_id = tree_of(commit, root)
        else:
            tree_id = _temporary_index_tree(root, seed_index=True)
        return {"git": True, "commit": commit, "tree": tree_id, "changes": changes}
    tree_id = _temporary_index_tree(root, seed_index=False) if tree else None
    return {"git": False, "commit": None, "tree": tree_id, "changes": []}


def _temporary_index_tree(root: Path, seed_index: bool) -> str | None:
    """The tree id of the files at ``root`` as they are, written through a temporary index (the
    repository's own index and history are left alone). In a repository, tracked and untracked
    files that are not ignored count; in a plain folder, every file its ``.gitignore`` files keep."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix="causalbandits-tree-") as tmp:
        env = dict(os.environ)
        env["GIT_INDEX_FILE"] = str(Path(tmp) / "index")
        config = ["-c", "core.excludesFile=/dev/null", "-c", "core.autocrlf=false", "-c", "core.fileMode=true"]
        if seed_index:
            index = _git(root, "rev-parse", "--git-path", "index")
            if index is not None and (Path(root) / index).is_file():
                shutil.copyfile(Path(root) / index, env["GIT_INDEX_FILE"])
        else:
            git_dir = str(Path(tmp) / "git")
            if _git(Path(tmp), "init", "--quiet", "--bare", git_dir) is None:
                return None
            env["GIT_DIR"], env["GIT_WORK_TREE"] = git_dir, str(Path(root).resolve())
            config += ["-c", "core.bare=false"]
        if _git(root, *config, "add", "--all", "--", ".", env=env) is None:
            return None
        return _git(root, *config, "write-tree", env=env)


def package_versions(packages: Iterable[str] = PINNED_PACKAGES) -> dict[str, str | None]:
    """Installed versions of ``packages`` and of Python itself."""
    out: dict[str, str | None] = {"python": platform.python_version()}
    for name in packages:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def cpu_model() -> str | None:
    """The CPU's model name (Linux), or None."""
    try:
        with open("/proc/cpuinfo") as fh:
            return next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), None)
    except OSError:
        return None


def blas_info() -> list[dict[str, Any]]:
    """The BLAS libraries loaded in this process, with the kernel set OpenBLAS chose for the CPU
    (results that go through BLAS can differ in their last digits between kernel sets)."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keep = ("internal_api", "version", "architecture", "threading_layer")
    return [{k: lib.get(k) for k in keep} for lib in threadpool_info() if lib.get("user_api") == "blas"]


def platform_info() -> dict[str, Any]:
    return {
        "system": platform.system(),
        "machine": platform.machine(),
        "cpu": cpu_model(),
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        # pgmpy's inference is bit-reproducible only under a fixed hash seed (see scm.DiscreteSCM.query)
        "python_hash_seed": os.environ.get("PYTHONHASHSEED"),
        "blas": blas_info(),
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "numpy_disabled_cpu_features": os.environ.get("NPY_DISABLE_CPU_FEATURES"),
    }


#: The package whose code a record fingerprints.
PACKAGE = "causalbandits_lib"


def fingerprinted(module_name: str) -> bool:
    """Whether a change in ``module_name`` can change a measurement, and so marks a record stale.

    The rule, not a list: every module of the library **except** the book machinery
    (``causalbandits_lib.book`` and below: parameters, sessions, records, execution, sweeps,
    reports, plotting, the command line) and the chapters' ``figures`` modules (which only draw).
    The layering test makes sure nothing outside ``book`` imports ``book``, so no number can be
    computed there.
    """
    if module_name != PACKAGE and not module_name.startswith(PACKAGE + "."):
        return False
    parts = module_name.split(".")
    if len(parts) > 1 and parts[1] == "book":
        return False
    return parts[-1] != "figures"


def library_fingerprint(module_names: Iterable[str] | None = None) -> dict[str, Any]:
    """SHA-256 of the source of the library modules that ran.

    Parameters
    ----------
    module_names : iterable of str, optional
        Dotted module names; default: every :func:`fingerprinted` module imported so far.

    Returns
    -------
    dict
        ``{"modules": {name: sha256}, "source_hash": sha256 over all of them}``.
    """
    if module_names is None:
        module_names = [m for m in list(sys.modules) if fingerprinted(m)]
    hashes = {}
    for name in sorted(set(module_names)):
        mod = sys.modules.get(name)
        path = getattr(mod, "__file__", None) if mod is not None else None
        if path is None:
            import importlib.util

            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):  # a module that no longer exists (moved or deleted)
                spec = None
            path = spec.origin if spec else None
        if path and Path(path).is_file():
            hashes[name] = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    total = hashlib.sha256(canonical_json(hashes).encode()).hexdigest()
    return {"modules": hashes, "source_hash": total}


# ---------------------------------------------------------------------------- data provenance
def stand_ins(data: Iterable[Any]) -> list[str]:
    """Names of the synthetic data sets a record's ``data`` entries flag as stand-ins (any)."""
    return [str(d.get("name")) for d in data if isinstance(d, dict) and d.get("stand_in")]


def replaceable_stand_ins(data: Iterable[Any]) -> list[str]:
    """Names of the stand-ins that replaced a *real* data set the book knows how to get (a name of
    :data:`~causalbandits_lib.core.datasets.REGISTRY`): results on them are not results about the
    real data. A permanent synthetic set (such as fairx's ``mediamill-like``) is not one."""
    from ..core.datasets import REGISTRY

    return [n for n in stand_ins(data) if n in REGISTRY]


def real_data_available(name: str) -> bool:
    """Whether the real files of a registered data set are present and verified now (no download)."""
    from ..core import datasets

    try:
        datasets.fetch(name, allow_download=False)
    except (datasets.DataUnavailable, datasets.ChecksumError, KeyError):
        return False
    return True
