"""Citations of a record (or of one claim of it) that identify the code by what it is, not by where
it lives, and the source archive that ships with the built book.

A citation names the commit that holds the cited record, with its Software Heritage identifiers
computed locally from git (``swh:1:rev:<commit>``, ``swh:1:dir:<tree of that commit>``; for a git
repository these are the commit and tree ids), the record's own id (``swh:1:cnt:<blob>``), the
commit the record was made at, the results hash a faithful re-run reproduces, the data, and for a
claim its id and verdict; then the reviewer's shell-quoted commands. A repository address is
optional configuration (:func:`repository_url`): with none, nothing prints or links one.

Three formats: BibTeX, plain text and CSL-JSON (for Zotero, pandoc and most reference managers);
:func:`citation_cff` pins ``CITATION.cff`` to a commit. ``make book`` calls
``python -m causalbandits_lib.book.citation source-archive _build/html`` (:func:`write_source_archive`)
to put the built commit's source into the site, and :func:`site_config` (run by the book's Sphinx
extension) adds the repository button when an address is configured and a banner when the tree is
dirty.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

from . import paths
from .claims import format_value, says_ours
from .provenance import blob_id, committed_blob, git_info, source_state, stand_ins, swhid, tree_of
from .records import results_hash

__all__ = [
    "REPOSITORY_ENV",
    "ARCHIVE_PREFIX",
    "configured_repository",
    "repository_url",
    "cli_value",
    "rerun_command",
    "Citation",
    "citation_cff",
    "archive_name",
    "SourceArchive",
    "write_source_archive",
    "cheapest_record",
    "site_config",
    "main",
]

#: Environment variable that sets the repository address (first in the order of :func:`repository_url`).
REPOSITORY_ENV = "CAUSALBANDITS_REPOSITORY"

#: The source archive in the site is ``<ARCHIVE_PREFIX>-<12 digits of the commit>.tar.gz``.
ARCHIVE_PREFIX = "causal-fair-bandits"

#: Built pages mark where the source archive is named with ``<span class="source-archive">``.
_SPAN = re.compile(r'(<span class="source-archive">)(.*?)(</span>)', re.DOTALL)


def configured_repository(root: Path | None = None) -> str:
    """``[tool.causalbandits] repository`` in ``pyproject.toml`` (empty by default)."""
    import tomllib

    root = Path(root) if root is not None else paths.book_root()
    try:
        with open(root / "pyproject.toml", "rb") as fh:
            value = tomllib.load(fh).get("tool", {}).get("causalbandits", {}).get("repository", "")
    except OSError:
        return ""
    return str(value or "").strip()


def _public_https(url: str) -> str | None:
    """``url`` without credentials when it is an ``https://`` address, else ``None``."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url.strip())
    if parts.scheme != "https" or not parts.hostname:
        return None
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit(("https", host, parts.path, "", "")).rstrip("/")


def repository_url(root: Path | None = None) -> str | None:
    """The book's repository address, or ``None``: ``CAUSALBANDITS_REPOSITORY``, else
    ``[tool.causalbandits] repository`` in ``pyproject.toml``, else ``git remote get-url origin``
    when it is an ``https://`` address (credentials dropped). The book does not invent one."""
    root = Path(root) if root is not None else paths.book_root()
    explicit = os.environ.get(REPOSITORY_ENV, "").strip() or configured_repository(root)
    if explicit:
        return explicit
    try:
        out = subprocess.run(
            ["git", "remote", "get-url", "origin"], cwd=root, capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0 or not tree_of("HEAD", root):  # an origin of an enclosing repository is not ours
        return None
    return _public_https(out.stdout)


def cli_value(v: Any) -> str:
    """A parameter's value in the literal form ``causalbandits run -p NAME=VALUE`` reads
    (:func:`causalbandits_lib.book.params.parse_cli_value`): ``true``/``false``, a list as ``[a,b]``."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list):
        return "[" + ",".join(cli_value(x) for x in v) + "]"
    return str(v)


def rerun_command(notebook_id: str, profile: str, given: Mapping[str, Any]) -> str:
    """``causalbandits run NOTEBOOK --profile PROFILE -p NAME=VALUE ...``, each ``-p`` shell-quoted.
    An empty string is left out: ``-p`` cannot give one, so it is the notebook's own value."""
    words = [f"-p {shlex.quote(f'{k}={cli_value(v)}')}" for k, v in given.items() if k != "profile" and v != ""]
    return " ".join(["causalbandits run", notebook_id, "--profile", profile, *words])


def _bib_escape(s: str) -> str:
    return (
        s.replace("\\", "\\textbackslash{}")
        .replace("&", "\\&")
        .replace("_", "\\_")
        .replace("%", "\\%")
        .replace("#", "\\#")
        .replace("$", "\\$")
    )


def _short(value: Any) -> str:
    return format_value(value)


def _swhid_or_none(kind: str, object_id: str | None) -> str | None:
    try:
        return swhid(kind, object_id or "")
    except ValueError:
        return None


def archive_name(commit: str) -> str:
    """The source archive's name (without ``.tar.gz``) and top folder for ``commit``."""
    return f"{ARCHIVE_PREFIX}-{commit[:12]}"


class Citation:
    """What a citation of the record at ``path`` says (and of one claim of it, with ``claim_id``).

    ``commit`` is the version the citation names: the checkout's ``HEAD`` when it holds this exact
    record file, else the commit the record was made at when that one holds it, else (a record
    that no commit holds) the commit it was made at. ``tree`` is that commit's tree, ``None`` when
    the commit is not in this repository ("tree unknown").
    """

    def __init__(self, record: Mapping[str, Any], path: Path, claim_id: str | None = None):
        self.record, self.path = record, Path(path)
        self.root = paths.book_root()
        self.nb = record["notebook"]
        self.params = record["parameters"]
        self.profile = self.params.get("profile", record["profile"])
        git = record.get("git") or {}
        self.run_commit = git.get("commit")
        self.dirty = bool(git.get("dirty"))
        self.results_hash = record.get("results_hash") or results_hash(record)
        self.date = record["timings"]["started"][:10]
        self.repo = repository_url(self.root)
        self.stand_ins = stand_ins(record["data"])
        self.record_blob = blob_id(self.path.read_bytes())
        rel = self.record_in_checkout()
        self.holder = None
        if not Path(rel).is_absolute():
            head = git_info(self.root)["commit"]
            for candidate in dict.fromkeys(c for c in (head, self.run_commit) if c):
                if committed_blob(candidate, rel, self.root) == self.record_blob:
                    self.holder = candidate
                    break
        self.commit = self.holder or self.run_commit
        if self.holder is None and self.run_commit == self.commit and git.get("tree"):
            self.tree = git["tree"]
        else:
            self.tree = tree_of(self.commit, self.root)
        self.claim = None
        if claim_id is not None:
            by_id = {c["id"]: c for c in record["claims"]}
            if claim_id not in by_id:
                from .params import ParameterError

                known = ", ".join(sorted(by_id)) or "none"
                raise ParameterError(
                    f"--claim {claim_id!r}: the record {path} has no such claim; its claims are {known}"
                )
            self.claim = by_id[claim_id]

    def for_claim(self, claim_id: str) -> "Citation":
        """The citation of one claim of the same record, without asking git again (the same as
        ``Citation(record, path, claim_id)``)."""
        import copy

        by_id = {c["id"]: c for c in self.record["claims"]}
        if claim_id not in by_id:
            return Citation(self.record, self.path, claim_id)  # raises the ParameterError that names the claims
        other = copy.copy(self)
        other.claim = by_id[claim_id]
        return other

    # -- the identifiers ------------------------------------------------------------------
    @property
    def swhid_rev(self) -> str | None:
        return _swhid_or_none("rev", self.commit)

    @property
    def swhid_dir(self) -> str | None:
        return _swhid_or_none("dir", self.tree)

    @property
    def swhid_cnt(self) -> str:
        return swhid("cnt", self.record_blob)

    def identifiers(self) -> str:
        """The source, the record and where the record was made, by their intrinsic identifiers."""
        if not self.commit:
            return f"Source: commit unknown (not recorded); record {self.record_in_checkout()} ({self.swhid_cnt})"
        tree = self.swhid_dir or "tree unknown (the commit is not in this repository)"
        out = f"Source: commit {self.commit} ({self.swhid_rev}), tree {tree}"
        if self.repo:
            out += f", repository {self.repo}"
        where = "in that commit" if self.holder else "not in that commit"
        out += f"; record {self.record_in_checkout()} ({self.swhid_cnt}), {where}"
        if self.run_commit and self.run_commit != self.commit:
            out += f", made at commit {self.run_commit}"
        return out

    # -- the parts ------------------------------------------------------------------------
    def record_in_checkout(self) -> str:
        """The record's path relative to the checkout when it lies in it (a committed record)."""
        try:
            return self.path.resolve().relative_to(self.root.resolve()).as_posix()
        except ValueError:
            return str(self.path)

    def rerun_command(self) -> str:
        return rerun_command(self.nb, self.profile, self.params)

    def verify_command(self) -> str:
        """``causalbandits verify`` with the version check and the record (or the claim) cited."""
        words = [".venv/bin/causalbandits", "verify"]
        if self.swhid_dir:
            words += ["--swhid", self.swhid_dir]
        elif self.commit:
            words += ["--commit", self.commit]
        rel = self.record_in_checkout()
        if self.claim is not None and self.holder and rel.startswith("results/paper/"):
            words += ["--claim", shlex.quote(self.claim["id"])]
        else:
            words.append(shlex.quote(rel))
        return " ".join(words)

    def commands(self) -> list[str]:
        """The reviewer's path, each line a shell command (or a comment saying where to get the source)."""
        lines = []
        if self.commit and self.repo:
            lines += [
                f"git clone {shlex.quote(self.repo)} causal-fair-bandits && cd causal-fair-bandits",
                f"git checkout {self.commit}",
            ]
        if self.commit and self.swhid_dir:
            name = archive_name(self.commit)
            lines.append(
                f"# {'or ' if self.repo else ''}any copy whose tree is {self.swhid_dir}: e.g. {name}.tar.gz from "
                f"a book built at that commit (tar -xzf {name}.tar.gz && cd {name}), or a copy of the repository"
            )
        elif self.commit and not self.repo:
            lines.append(f"# a copy of the repository at commit {self.commit} (tree unknown here)")
        if not self.holder:
            lines.append(f"# the record itself ({self.swhid_cnt}) is in no commit: the reviewer needs the file")
        lines.append("make setup")
        real = [d["name"] for d in self.record["data"] if not d.get("stand_in")]
        if real:
            names = ", ".join(real)
            lines.append(f"# data ({names}) ships in data/; another copy: export CAUSALBANDITS_DATA_DIR=/path/to/data")
        lines.append(self.verify_command())
        return lines

    def caveats(self) -> list[str]:
        out = []
        if self.dirty:
            out.append("made from a working tree with uncommitted changes")
        if self.profile != "paper":
            out.append(f"{self.profile} profile, below the paper's scale")
        if self.stand_ins:
            out.append(f"data: synthetic stand-in for {', '.join(self.stand_ins)}, not the real data set")
        return out

    def verdicts(self) -> str:
        counts: dict[str, int] = {}
        for c in self.record["claims"]:
            counts[c["verdict"]] = counts.get(c["verdict"], 0) + 1
        return ", ".join(f"{n} {v}" for v, n in counts.items()) or "no claims"

    def title(self) -> str:
        base = f"{self.record.get('title', self.nb)}: reproduction record ({self.profile} profile)"
        if self.claim is not None:
            base = f"claim {self.claim['id']} of {base}"
        return base

    def what(self) -> str:
        """The cited content: the claim (statement, paper value, measured value, verdict, kind) or
        the record's verdict counts."""
        if self.claim is None:
            return f"Claims: {self.verdicts()}."
        c = self.claim
        kind = c.get("kind", "kind not declared") + (", ours" if c.get("ours") and not says_ours(c) else "")
        paper = "no value" if c.get("paper_value") is None else _short(c["paper_value"])
        paper += " (reconstructed)" if c.get("reconstructed") else ""
        # a claim judged on several instances records no value of its own: its reason states each
        measured = "per instance, in the reason" if c.get("measured") is None else _short(c["measured"])
        return (
            f"Claim {c['id']} ({kind}, {c.get('source') or 'source not given'}): {c['statement']}. "
            f"Paper: {paper}; measured: {measured}; verdict: {c['verdict']} ({c['reason']})."
        )

    def key(self) -> str:
        key = f"causalbandits:{self.nb.replace('/', ':')}:{self.results_hash[:8]}"
        if self.claim is not None:
            key += ":" + self.claim["id"].split(".", 1)[1]
        return key

    # -- the formats ----------------------------------------------------------------------
    def text(self) -> str:
        caveats = "".join(f" [{c}]" for c in self.caveats())
        return (
            f"Causal & Fair Bandits executable book, {self.title()}{caveats}. {self.identifiers()}. "
            f"Notebook {self.nb}, seed {self.params.get('seed')}, executed {self.date}; results hash "
            f"{self.results_hash}. {self.what()}\n"
            "Check it:\n"
            + "\n".join(f"  {line}" for line in self.commands())
            + f"\nRe-run by hand: {self.rerun_command()}"
        )

    def bibtex(self) -> str:
        caveats = "; ".join(self.caveats())
        note = (
            f"{self.identifiers()}. Notebook {self.nb}, seed {self.params.get('seed')}, results hash "
            f"{self.results_hash}. {self.what()} Check: {self.verify_command().removeprefix('.venv/bin/')}"
            + (f". Caveats: {caveats}" if caveats else "")
        )
        fields = [
            f"  title        = {{{{Causal \\& Fair Bandits executable book}}: {_bib_escape(self.title())}}},",
            "  author       = {{Causal \\& Fair Bandits book contributors}},",
            f"  year         = {{{self.date[:4]}}},",
            f"  version      = {{{self.commit or 'unknown'}}},",
        ]
        if self.swhid_rev:
            fields.append(f"  swhid        = {{{self.swhid_rev}}},")
        if self.repo:
            fields += [f"  url          = {{{self.repo}}},", f"  urldate      = {{{self.date}}},"]
        fields.append(f"  note         = {{{_bib_escape(note)}}}")
        return "\n".join([f"@misc{{{self.key()},", *fields, "}"])

    def csl(self) -> str:
        year, month, day = (int(x) for x in self.date.split("-"))
        item = {
            "id": self.key(),
            "type": "dataset",
            "title": f"Causal & Fair Bandits executable book: {self.title()}",
            "author": [{"literal": "Causal & Fair Bandits book contributors"}],
            "issued": {"date-parts": [[year, month, day]]},
            "version": self.commit or "unknown",
            "note": f"{self.identifiers()}. Results hash {self.results_hash}. {self.what()} "
            + f"Check: {self.verify_command().removeprefix('.venv/bin/')}"
            + "".join(f"; {c}" for c in self.caveats()),
        }
        if self.repo:
            item["URL"] = self.repo
        return json.dumps([item], indent=1, ensure_ascii=False)


# ---------------------------------------------------------------------------- CITATION.cff
def citation_cff(root: Path | None = None, commit: str | None = "HEAD") -> str:
    """``CITATION.cff`` of the checkout at ``root`` pinned to ``commit``: the committed file with
    ``commit``, its SWHIDs (``identifiers``, type ``swh``), the commit's date as ``date-released``,
    and ``repository-code`` only when an address is configured (:func:`repository_url`).
    ``commit=None`` gives the unpinned file."""
    import yaml

    root = Path(root) if root is not None else paths.book_root()
    cff = yaml.safe_load((root / "CITATION.cff").read_text(encoding="utf-8"))
    cff.pop("repository-code", None)
    repo = repository_url(root)
    if repo:
        cff["repository-code"] = repo
    head = "# How to cite the book itself; to cite one result, cite its record (causalbandits cite).\n"
    full = tree = None
    if commit:
        full = git_info(root)["commit"] if commit == "HEAD" else commit
        tree = tree_of(full, root)
    if full and tree:
        cff["commit"] = full
        cff["identifiers"] = [
            {"type": "swh", "value": swhid("rev", full), "description": "the commit (Software Heritage identifier)"},
            {"type": "swh", "value": swhid("dir", tree), "description": "the commit's tree: the source files"},
        ]
        out = subprocess.run(
            ["git", "show", "-s", "--format=%cs", full], cwd=root, capture_output=True, text=True, timeout=20
        )
        if out.returncode == 0 and out.stdout.strip():
            cff["date-released"] = out.stdout.strip()
        head = f"# Pinned to commit {full} (causalbandits cite --cff); the tree is {swhid('dir', tree)}.\n" + head
    return head + yaml.safe_dump(cff, sort_keys=False, allow_unicode=True, width=100)


# ---------------------------------------------------------------------------- the source archive
@dataclass
class SourceArchive:
    """What :func:`write_source_archive` put into a site: the archive (``None`` when the tree was
    dirty or is not a git checkout), its SHA-256, the commit and tree, and why no archive ships."""

    site: Path
    commit: str | None
    tree: str | None
    archive: Path | None = None
    sha256: str | None = None
    reason: str | None = None

    def page_html(self, rel: str) -> str:
        """What a built page shows in its ``source-archive`` span; ``rel`` leads from it to the site's root."""
        source = f'<a href="{rel}/SOURCE.txt">SOURCE.txt</a>'
        if self.archive is None:
            return f"none: {self.reason} ({source})"
        name = self.archive.name
        return (
            f'<a href="{rel}/{name}">{name}</a> (SHA-256 <code>{self.sha256}</code>; commit '
            f"<code>{self.commit[:12]}</code>, tree <code>{swhid('dir', self.tree)}</code>; "
            f"how to check and use it: {source})"
        )


def _dirty_reason(state: Mapping[str, Any]) -> str | None:
    if not state["git"] or not state["commit"]:
        return "this site was not built from a git checkout, so no commit holds what it shows"
    if state["changes"]:
        shown = ", ".join(state["changes"][:3]) + (", ..." if len(state["changes"]) > 3 else "")
        return (
            f"this site was built from a working tree with uncommitted changes at commit {state['commit'][:12]} "
            f"({len(state['changes'])} path(s): {shown}), so no commit holds what it shows"
        )
    return None


def _source_text(info: SourceArchive, root: Path) -> str:
    lines = ['Source of this build of "Causal & Fair Bandits: an executable book"', ""]
    if info.archive is None:
        return "\n".join(lines + [f"No source archive ships with this site: {info.reason}.", ""])
    name = info.archive.name
    folder = name.removesuffix(".tar.gz")
    example = cheapest_record(root)
    repo = repository_url(root)
    lines += [
        f"archive     {name}  (git archive of the commit below; top folder {folder}/)",
        f"SHA-256     {info.sha256}",
        f"size        {info.archive.stat().st_size} bytes",
        f"commit      {info.commit}  {swhid('rev', info.commit)}",
        f"tree        {info.tree}  {swhid('dir', info.tree)}",
    ]
    if repo:
        lines.append(f"repository  {repo}")
    lines += [
        "",
        "The records the pages cite are inside it (results/paper/, results/sensitivity/), and so is the",
        "data the chapters use (data/). With Python 3.11+ and the package registries, nothing else:",
        "",
        f"  sha256sum -c {name}.sha256",
        f"  tar -xzf {name} && cd {folder}",
        "  make setup",
        f"  .venv/bin/causalbandits verify --swhid {swhid('dir', info.tree)} {example}",
        "",
        "verify first checks that the copy's files have this tree (exit code 2 and nothing run when they",
        "have not), then re-runs the record's notebook and compares the results (--smoke: in seconds).",
    ]
    if (root / "CITATION.cff").is_file():
        lines.append("CITATION.cff, next to this file, cites the book at this commit.")
    return "\n".join(lines + [""])


def cheapest_record(root: Path) -> str:
    """The committed paper-scale record whose run took least time (its path under ``root``)."""
    best = (float("inf"), "results/paper/CHAPTER/NOTEBOOK.json")
    for path in sorted((Path(root) / "results" / "paper").rglob("*.json")):
        try:
            seconds = float(json.loads(path.read_text(encoding="utf-8"))["timings"]["wall_seconds"])
        except (OSError, ValueError, KeyError, TypeError):
            continue
        best = min(best, (seconds, path.relative_to(root).as_posix()))
    return best[1]


def _patch_pages(info: SourceArchive) -> list[Path]:
    """Fill every built page's ``source-archive`` span; a page is written only when it changes."""
    changed = []
    for page in sorted(info.site.rglob("*.html")):
        if "_static" in page.parts or "_downloads" in page.parts:
            continue
        text = page.read_text(encoding="utf-8")
        if 'class="source-archive"' not in text:
            continue
        rel = Path(os.path.relpath(info.site, page.parent)).as_posix()
        new = _SPAN.sub(lambda m: m.group(1) + info.page_html(rel) + m.group(3), text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


def _write_if_changed(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def write_source_archive(site: Path, root: Path | None = None) -> SourceArchive:
    """Put the source of the checkout at ``root`` into the built ``site``: ``git archive`` of
    ``HEAD`` as ``causal-fair-bandits-<12 digits>.tar.gz`` with its ``.sha256``, ``SOURCE.txt``
    (the archive, its SHA-256, commit, tree and SWHIDs, and how to check it) and a pinned
    ``CITATION.cff``; then fill the ``source-archive`` span of every built page. From a dirty tree
    (modified tracked files, or untracked ones that are not ignored) or outside git, no archive
    ships: earlier archives are removed and ``SOURCE.txt`` and the pages say why."""
    root = Path(root) if root is not None else paths.book_root()
    site = Path(site)
    if not site.is_dir():
        raise FileNotFoundError(f"{site}: no built site; run the book build first")
    state = source_state(root)
    info = SourceArchive(site, state["commit"], state["tree"] if not state["changes"] else None)
    info.reason = _dirty_reason(state)
    keep = f"{archive_name(info.commit)}.tar.gz" if info.reason is None else None
    for old in [*site.glob(f"{ARCHIVE_PREFIX}-*.tar.gz"), *site.glob(f"{ARCHIVE_PREFIX}-*.tar.gz.sha256")]:
        if keep is None or not old.name.startswith(keep):
            old.unlink()
    if info.reason is None:
        name = archive_name(info.commit)
        target = site / f"{name}.tar.gz"
        partial = site / f".{name}.tar.gz.partial"
        cmd = ["git", "archive", "--format=tar.gz", f"--prefix={name}/", "-o", str(partial.resolve()), info.commit]
        done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=600)
        if done.returncode != 0:
            partial.unlink(missing_ok=True)
            raise RuntimeError(f"git archive failed: {done.stderr.strip()}")
        os.replace(partial, target)
        info.archive = target
        info.sha256 = hashlib.sha256(target.read_bytes()).hexdigest()
        _write_if_changed(site / f"{target.name}.sha256", f"{info.sha256}  {target.name}\n")
    if info.archive is not None and (root / "CITATION.cff").is_file():
        _write_if_changed(site / "CITATION.cff", citation_cff(root, info.commit))
    else:
        (site / "CITATION.cff").unlink(missing_ok=True)
    _write_if_changed(site / "SOURCE.txt", _source_text(info, root))
    _patch_pages(info)
    return info


# ---------------------------------------------------------------------------- the site
def _button_url(repo: str | None) -> str | None:
    """The address as the theme's repository button takes it (``https://<host>/<owner>/<name>`` on
    a host it knows: GitHub, GitLab or Bitbucket), else ``None``: no button, the citations still
    name the address."""
    if not repo:
        return None
    url = _public_https(repo)
    if url is None:
        return None
    url = url.removesuffix(".git")
    host, _, path = url.removeprefix("https://").partition("/")
    known = any(name in host.lower() for name in ("github", "gitlab", "bitbucket"))
    return url if known and len([p for p in path.split("/") if p]) >= 2 else None


def site_config(app, config) -> None:
    """Sphinx ``config-inited``: the repository button only when an address is configured (on a
    host the theme knows, :func:`_button_url`), and a banner on every page when the tree is dirty
    (then no source archive ships)."""
    root = Path(app.srcdir)
    options = dict(config.html_theme_options or {})
    repo = _button_url(repository_url(root))
    if repo:
        options["repository_url"], options["use_repository_button"] = repo, True
    else:
        options.pop("repository_url", None)
        options["use_repository_button"] = False
    reason = _dirty_reason(source_state(root, tree=False))
    if reason is not None:
        options["announcement"] = f"No source archive ships with this build: {reason}."
    config.html_theme_options = options


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m causalbandits_lib.book.citation source-archive SITE``: what ``make book`` runs."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m causalbandits_lib.book.citation")
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("source-archive", help="put the built commit's source archive into a built site")
    p.add_argument("site", help="the built site (_build/html)")
    args = parser.parse_args(argv)
    try:
        info = write_source_archive(Path(args.site))
    except (FileNotFoundError, RuntimeError) as exc:
        print(f"source-archive: error: {exc}", file=sys.stderr)
        return 1
    if info.archive is None:
        bar = "!" * 100
        print(f"{bar}\nNOTICE: no source archive in the site: {info.reason}.\n{bar}")
    else:
        print(f"source archive {info.archive} (SHA-256 {info.sha256}; tree {swhid('dir', info.tree)})")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
