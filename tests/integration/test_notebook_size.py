"""Thin notebooks (issue 33, item 6): a notebook reads derivation -> one call -> figure -> claims, with
at most 120 lines of code besides its claim registrations. Bookkeeping (tables, metric loops) lives
in the library, with a test."""

from __future__ import annotations

import ast

import jupytext
import pytest

from .notebook_support import ROOT, all_notebooks, is_claim_call

LIMIT = 120


def code_lines(source: str) -> int:
    """Lines of code of one cell: not blank, not a comment, not inside an ``nb.claim(...)`` call."""
    lines = source.splitlines()
    claim_lines: set[int] = set()
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics: count every line
        tree = None
    if tree is not None:
        for node in ast.walk(tree):
            if is_claim_call(node):
                claim_lines.update(range(node.lineno, node.end_lineno + 1))
    return sum(
        1
        for i, line in enumerate(lines, start=1)
        if line.strip() and not line.strip().startswith("#") and i not in claim_lines
    )


def notebook_code_lines(spec) -> int:
    nb = jupytext.read(ROOT / "notebooks" / spec.chapter / f"{spec.name}.md", fmt="md:myst")
    return sum(code_lines(c.source) for c in nb.cells if c.cell_type == "code")


def test_code_lines_count_code_but_not_claims_comments_or_blank_lines():
    cell = "x = 1\n\n# a comment\nnb.claim(\n    'a.b',\n    'text',\n)\ny = [\n    1,\n]\n"
    assert code_lines(cell) == 4


@pytest.mark.parametrize("spec", all_notebooks(), ids=lambda s: s.id)
def test_notebook_stays_within_its_code_budget(spec):
    n = notebook_code_lines(spec)
    assert n <= LIMIT, f"{spec.id} has {n} code lines besides its claims (at most {LIMIT}): move bookkeeping out"
