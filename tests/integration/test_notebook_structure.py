"""Every notebook follows the book's shape (checked on the MyST source, without executing)."""

from __future__ import annotations

import ast

import jupytext
import pytest

from .notebook_support import ROOT, all_notebooks

NOTEBOOKS = all_notebooks()


@pytest.mark.parametrize("spec", NOTEBOOKS, ids=[nb.id for nb in NOTEBOOKS])
def test_notebook_shape(spec):
    nb = jupytext.read(ROOT / "notebooks" / spec.chapter / f"{spec.name}.md", fmt="md:myst")
    code = [c for c in nb.cells if c.cell_type == "code"]
    first, second = code[0], code[1]
    assert "parameters" in first.metadata.get("tags", []), "the first code cell must be tagged 'parameters'"
    assigned = {}
    for node in ast.parse(first.source).body:
        assert isinstance(node, ast.Assign) and len(node.targets) == 1, "the parameters cell may only assign names"
        assigned[node.targets[0].id] = ast.literal_eval(node.value)
    declared = list(spec.all_parameters())
    assert list(assigned) == declared, f"parameters cell names {list(assigned)} differ from parameters.yml {declared}"
    assert assigned["profile"] == "book" and assigned["seed"] == 0
    assert all(v is None for k, v in assigned.items() if k not in ("profile", "seed")), (
        "knobs default to None (= profile value)"
    )
    assert f'setup_notebook("{spec.id}", globals())' in second.source
    # nbval's cell tag, not a "# NBVAL_CHECK_OUTPUT" comment that the page would show (issue 33)
    assert not any("NBVAL" in c.source for c in code), "mark nbval cells with the tag nbval-check-output"
    assert any("nbval-check-output" in c.metadata.get("tags", []) for c in code), (
        "at least one cell (tags: [nbval-check-output]) must print key numbers for nbval"
    )
    assert "nb.finish()" in code[-1].source, "the last code cell must write the record"
    # the record's path, printed for a `causalbandits run`, is not shown on the book's page
    assert "remove-stdout" in code[-1].metadata.get("tags", []), "tag the nb.finish() cell remove-stdout"
    headings = [
        line for c in nb.cells if c.cell_type == "markdown" for line in c.source.splitlines() if line.startswith("## ")
    ]
    assert "## Claims" in headings
    # the bookkeeping is folded on the page (a "show code" toggle): the setup cell and every cell
    # that judges claims or writes the record; the derivation's calls stay visible
    for c in code:
        if any(call in c.source for call in ("setup_notebook(", "nb.claim(", "nb.finish()")):
            assert "hide-input" in c.metadata.get("tags", []), f"fold this cell (tags: [hide-input]): {c.source[:60]!r}"
