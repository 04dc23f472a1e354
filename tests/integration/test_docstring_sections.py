"""Library docstrings that name where a formula is derived point at a heading and a label that exist.

A docstring line of the form ``Derived in notebooks/<chapter>/<notebook>.md, section 'H'
(equation ``label``)`` (or ``sections 'H1' and 'H2' (equations ``a``, ``b``)``) must name a
notebook that exists, headings that it has, and equation labels defined in it. Otherwise a reader
who follows the pointer from the code lands nowhere.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from .notebook_support import ROOT
from .test_equation_labels import equation_labels

POINTER = re.compile(r"Derived in (notebooks/\S+?\.md), sections? (.+?) \(equations? (.+?)\)\.")
QUOTED = re.compile(r"'([^']+)'")
LITERAL = re.compile(r"``([^`]+)``")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$", re.M)


def pointers(root: Path = ROOT) -> list[tuple[str, str, list[str], list[str]]]:
    """``(where, notebook, headings, labels)`` for every pointer in the library's docstrings."""
    found = []
    for path in sorted((root / "causalbandits_lib").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef, ast.Module)):
                continue
            doc = ast.get_docstring(node)
            if not doc:
                continue
            text = " ".join(doc.split())
            for m in POINTER.finditer(text):
                where = f"{path.relative_to(root)}:{getattr(node, 'name', '<module>')}"
                found.append((where, m.group(1), QUOTED.findall(m.group(2)), LITERAL.findall(m.group(3))))
    return found


def problems(found, root: Path = ROOT) -> list[str]:
    out = []
    for where, notebook, headings, labels in found:
        path = root / notebook
        if not path.is_file():
            out.append(f"{where}: {notebook} does not exist")
            continue
        text = path.read_text(encoding="utf-8")
        titles = set(HEADING.findall(text))
        defined = set(equation_labels(text))
        if not headings or not labels:
            out.append(f"{where}: pointer to {notebook} names no section or no equation")
        out += [f"{where}: {notebook} has no heading {h!r}" for h in headings if h not in titles]
        out += [f"{where}: {notebook} defines no equation {lab!r}" for lab in labels if lab not in defined]
    return out


def test_every_pointer_resolves():
    found = pointers()
    assert len(found) >= 30, f"expected the library's derivation pointers, found {len(found)}"
    assert problems(found) == []


def test_checker_reports_bad_pointers():
    bad = [
        ("x.py:f", "notebooks/fucb/no_such.md", ["Theorem 1"], ["fucb-eq15-theorem1-bound"]),
        ("x.py:g", "notebooks/fucb/02_regret_bounds.md", ["No such heading"], ["fucb-eq15-theorem1-bound"]),
        ("x.py:h", "notebooks/fucb/02_regret_bounds.md", ["Theorem 1"], ["fucb-made-up"]),
    ]
    reported = problems(bad)
    assert len(reported) == 3
    assert "does not exist" in reported[0] and "no heading" in reported[1] and "no equation" in reported[2]
