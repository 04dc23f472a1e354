"""Citations of a record (or of one claim of it) that a reviewer can follow back to a re-verified
result: the repository and commit, the shell-quoted commands to check out, set up and verify, the
results hash a faithful re-run reproduces, and the data the record ran on.

Three formats: BibTeX, plain text and CSL-JSON (for Zotero, pandoc and most reference managers).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any, Mapping

from . import paths
from .provenance import stand_ins
from .records import results_hash

__all__ = ["repository_url", "Citation"]


def repository_url() -> str:
    """The book's public repository, from ``[project.urls] Repository`` in ``pyproject.toml`` (the
    one place it is set; the book's repository button is checked against it by a test)."""
    import tomllib

    with open(paths.book_root() / "pyproject.toml", "rb") as fh:
        return tomllib.load(fh)["project"]["urls"]["Repository"]


def _cli_value(v: Any) -> str:
    if isinstance(v, list):
        return "[" + ",".join(_cli_value(x) for x in v) + "]"
    return str(v)


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
    from .claims import format_value

    return format_value(value)


class Citation:
    """What a citation of the record at ``path`` says (and of one claim of it, with ``claim_id``)."""

    def __init__(self, record: Mapping[str, Any], path: Path, claim_id: str | None = None):
        self.record, self.path = record, Path(path)
        self.nb = record["notebook"]
        self.params = record["parameters"]
        self.profile = self.params.get("profile", record["profile"])
        self.commit = record["git"].get("commit") or "unknown"
        self.dirty = bool(record["git"].get("dirty"))
        self.results_hash = record.get("results_hash") or results_hash(record)
        self.date = record["timings"]["started"][:10]
        self.repo = repository_url()
        self.stand_ins = stand_ins(record["data"])
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

    # -- the parts ------------------------------------------------------------------------
    def record_in_checkout(self) -> str:
        """The record's path relative to the checkout when it lies in it (a committed record)."""
        try:
            return self.path.resolve().relative_to(paths.book_root()).as_posix()
        except ValueError:
            return str(self.path)

    def rerun_command(self) -> str:
        given = [f"-p {shlex.quote(f'{k}={_cli_value(v)}')}" for k, v in self.params.items() if k != "profile"]
        return " ".join(["causalbandits run", self.nb, "--profile", self.profile, *given])

    def commands(self) -> list[str]:
        """The reviewer's path, each line a shell command."""
        rec = shlex.quote(self.record_in_checkout())
        lines = [
            f"git clone {shlex.quote(self.repo)} causal-fair-bandits && cd causal-fair-bandits",
            f"git checkout {self.commit}",
            "make setup",
        ]
        real = [d["name"] for d in self.record["data"] if not d.get("stand_in")]
        if real:
            names = ", ".join(real)
            lines.append(f"# data ({names}) ships in data/; another copy: export CAUSALBANDITS_DATA_DIR=/path/to/data")
        lines.append(f".venv/bin/causalbandits verify {rec}")
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
        kind = c.get("kind", "kind not declared") + (", ours" if c.get("ours") else "")
        paper = _short(c.get("paper_value")) + (" (reconstructed)" if c.get("reconstructed") else "")
        return (
            f"Claim {c['id']} ({kind}, {c.get('source') or 'source not given'}): {c['statement']}. "
            f"Paper: {paper}; measured: {_short(c.get('measured'))}; verdict: {c['verdict']} ({c['reason']})."
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
            f"Causal & Fair Bandits executable book, {self.title()}{caveats}. {self.repo}, commit {self.commit}, "
            f"notebook {self.nb}, seed {self.params.get('seed')}, executed {self.date}; results hash "
            f"{self.results_hash} (record {self.record_in_checkout()}). {self.what()}\n"
            "Check it:\n"
            + "\n".join(f"  {line}" for line in self.commands())
            + f"\nRe-run by hand: {self.rerun_command()}"
        )

    def bibtex(self) -> str:
        caveats = "; ".join(self.caveats())
        note = (
            f"Commit {self.commit}, notebook {self.nb}, seed {self.params.get('seed')}, results hash "
            f"{self.results_hash}. {self.what()} Check: causalbandits verify {self.record_in_checkout()}"
            + (f". Caveats: {caveats}" if caveats else "")
        )
        return "\n".join(
            [
                f"@misc{{{self.key()},",
                f"  title        = {{{{Causal \\& Fair Bandits executable book}}: {_bib_escape(self.title())}}},",
                "  author       = {{Causal \\& Fair Bandits book contributors}},",
                f"  year         = {{{self.date[:4]}}},",
                f"  url          = {{{self.repo}/tree/{self.commit}}},",
                f"  version      = {{{self.commit}}},",
                f"  note         = {{{_bib_escape(note)}}},",
                f"  urldate      = {{{self.date}}}",
                "}",
            ]
        )

    def csl(self) -> str:
        year, month, day = (int(x) for x in self.date.split("-"))
        item = {
            "id": self.key(),
            "type": "dataset",
            "title": f"Causal & Fair Bandits executable book: {self.title()}",
            "author": [{"literal": "Causal & Fair Bandits book contributors"}],
            "issued": {"date-parts": [[year, month, day]]},
            "URL": f"{self.repo}/tree/{self.commit}",
            "version": self.commit,
            "note": f"Results hash {self.results_hash}. {self.what()} "
            + f"Check: causalbandits verify {self.record_in_checkout()}"
            + "".join(f"; {c}" for c in self.caveats()),
        }
        return json.dumps([item], indent=1, ensure_ascii=False)
