"""Thin notebooks (issue 33, item 6): a notebook reads derivation -> one call -> figure -> claims, with
at most 120 lines of code besides its claim registrations. Bookkeeping (tables, metric loops) lives
in the library, with a test.

Not every notebook is thin yet: :data:`NOT_YET_THIN` lists those that are not, with their count
today, and works as a ratchet: a listed notebook may not grow, one that reaches the limit must leave
the list, and no other notebook may pass the limit."""

from __future__ import annotations

import ast

import jupytext
import pytest

from .notebook_support import ROOT, all_notebooks, is_claim_call

LIMIT = 120

#: notebooks above the limit, with their code lines on 2026-11-28 (issue 33, item 6: to be thinned)
NOT_YET_THIN = {
    "cclb/02_confidence_sets": 151,
    "cclb/03_primal_dual": 184,
    "cclb/04_experiments": 157,
    "fairx/02_fairx_ucb_and_ts": 169,
    "fairx/05_regret_experiments": 233,
    "fairx/06_yahoo_replay": 135,
}


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
    listed = NOT_YET_THIN.get(spec.id)
    if listed is None:
        assert n <= LIMIT, (
            f"{spec.id} has {n} code lines besides its claims (at most {LIMIT}): move bookkeeping to the library"
        )
    else:
        assert n <= listed, f"{spec.id} grew from {listed} to {n} code lines: it is not thin yet and may not grow"
        assert n > LIMIT, f"{spec.id} has {n} code lines, within the limit: remove it from NOT_YET_THIN"
