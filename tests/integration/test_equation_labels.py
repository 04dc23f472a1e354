"""Every {eq} reference in the book names an equation label that exists, and labels are unique.

A pure source check (no build): Sphinx would fail on a dangling {eq} with -W, but only after a
build of several minutes. Labels are defined by MyST dollarmath (``$$ ... $$ (label)``), by
``\\label{...}`` inside math, or by ``:label:`` of a ``{math}`` directive. A label written in a
chapter's notebooks starts with the chapter's name (``fucb-eq12-...``), so that labels stay
unique across the book.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

from .notebook_support import ROOT

SOURCES = ("notebooks", "book")
LABEL = r"[A-Za-z0-9_:.-]+"
#: a display block's closing ``$$``, optionally followed by its label
CLOSE = re.compile(rf"\$\$\s*(?:\(({LABEL})\))?\s*$")
#: a one-line display ``$$ ... $$ (label)``
ONE_LINE = re.compile(rf"^\s*\$\$(.+?)\$\$\s*(?:\(({LABEL})\))?\s*$")
TEX_LABEL = re.compile(r"\\label\{([^}]+)\}")
DIRECTIVE_LABEL = re.compile(rf"^\s*:label:\s*({LABEL})\s*$")
EQ_REF = re.compile(r"\{eq\}`([^`]+)`")


def source_files(root: Path = ROOT) -> list[Path]:
    """The MyST sources of the book: notebooks and book pages."""
    return sorted(p for d in SOURCES for p in (root / d).rglob("*.md") if "_build" not in p.parts)


def equation_labels(text: str) -> list[str]:
    """Labels defined in one MyST source, in order (duplicates kept)."""
    labels: list[str] = []
    in_math = False
    in_math_directive = False
    for line in text.splitlines():
        stripped = line.strip()
        if in_math_directive:
            if stripped.startswith("```"):
                in_math_directive = False
            elif m := DIRECTIVE_LABEL.match(line):
                labels.append(m.group(1))
            labels += TEX_LABEL.findall(line)
            continue
        if not in_math and stripped.startswith("```{math}"):
            in_math_directive = True
            continue
        if in_math:
            labels += TEX_LABEL.findall(line)
            if m := CLOSE.search(line):
                in_math = False
                if m.group(1):
                    labels.append(m.group(1))
            continue
        if stripped.startswith("$$"):
            if m := ONE_LINE.match(line):
                labels += TEX_LABEL.findall(m.group(1))
                if m.group(2):
                    labels.append(m.group(2))
            else:
                in_math = True
                labels += TEX_LABEL.findall(stripped[2:])
    return labels


def equation_references(text: str) -> list[str]:
    """Targets of the {eq} roles in one source (``{eq}`label``` or ``{eq}`text <label>```)."""
    refs = []
    for target in EQ_REF.findall(text):
        m = re.search(r"<([^>]+)>\s*$", target)
        refs.append((m.group(1) if m else target).strip())
    return refs


def problems(files: dict[str, str]) -> list[str]:
    """Dangling references, duplicate labels and labels without their chapter's prefix."""
    where: dict[str, list[str]] = defaultdict(list)
    for name, text in files.items():
        for label in equation_labels(text):
            where[label].append(name)
    found = []
    for label, names in sorted(where.items()):
        if len(names) > 1:
            found.append(f"label {label!r} defined {len(names)} times: {names}")
    for name, text in files.items():
        parts = Path(name).parts
        if len(parts) > 2 and parts[0] == "notebooks":
            chapter = parts[1]
            found += [
                f"{name}: label {label!r} does not start with {chapter + '-'!r}"
                for label in equation_labels(text)
                if not label.startswith(chapter + "-")
            ]
        found += [
            f"{name}: {{eq}} reference to undefined label {ref!r}"
            for ref in equation_references(text)
            if ref not in where
        ]
    return found


def book_sources() -> dict[str, str]:
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in source_files()}


def test_equation_references_resolve_and_labels_are_unique():
    sources = book_sources()
    assert any(equation_labels(t) for t in sources.values()), "no labelled equation found: is the parser broken?"
    assert problems(sources) == []


def test_the_check_catches_what_it_should():
    ok = "$$\na = b\n$$ (fucb-ab)\n\nSee {eq}`fucb-ab` and {eq}`the sum <fucb-ab>`.\n$$ c = d $$ (fucb-cd)\n"
    assert equation_labels(ok) == ["fucb-ab", "fucb-cd"]
    assert problems({"notebooks/fucb/x.md": ok}) == []
    # a made-up reference, a label defined twice, a label of another chapter
    assert any(
        "undefined label 'fucb-nowhere'" in p for p in problems({"notebooks/fucb/x.md": ok + "{eq}`fucb-nowhere`"})
    )
    assert any("defined 2 times" in p for p in problems({"notebooks/fucb/x.md": ok, "notebooks/fucb/y.md": ok}))
    assert any("does not start with 'pcb-'" in p for p in problems({"notebooks/pcb/x.md": ok}))
    # \label inside math and the {math} directive's :label: count as definitions
    tex = "$$\n\\begin{equation}x\\label{pcb-x}\\end{equation}\n$$\n```{math}\n:label: pcb-y\nz\n```\n"
    assert equation_labels(tex) == ["pcb-x", "pcb-y"]
