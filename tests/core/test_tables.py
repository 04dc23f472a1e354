"""The one Markdown table writer (issue 33): cells escaped, column counts checked, and a cell with
pipes in it read back by the book's Markdown parser as one cell."""

from __future__ import annotations

import pytest

from causalbandits_lib.core.tables import check_table, escape_cell, markdown_table, split_row


def _parse(markdown: str) -> list[list[str]]:
    """The table as the book's parser (markdown-it, which MyST uses) reads it: the text of each
    cell, row by row (header first)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark").enable("table").parse(markdown)
    rows, row, inside = [], None, False
    for tok in tokens:
        if tok.type == "tr_open":
            row = []
        elif tok.type in ("th_open", "td_open"):
            inside = True
        elif tok.type in ("th_close", "td_close"):
            inside = False
        elif tok.type == "inline" and inside:
            row.append("".join(child.content for child in tok.children))
        elif tok.type == "tr_close":
            rows.append(row)
    return rows


def test_escape_cell_escapes_pipes_and_joins_lines():
    assert escape_cell("|Δ| ≤ τ") == "\\|Δ\\| ≤ τ"
    assert escape_cell("first line\nsecond\r\n third") == "first line second third"
    assert escape_cell(0.5) == "0.5"


def test_a_table_with_pipes_in_cells():
    text = markdown_table(["τ", "arms with |Δ| ≤ τ"], [["0.1", "(0, 1)"], ["0.2", "|P(Y=1|X=1)|"]])
    assert text.splitlines() == [
        "| τ | arms with \\|Δ\\| ≤ τ |",
        "|---|---|",
        "| 0.1 | (0, 1) |",
        "| 0.2 | \\|P(Y=1\\|X=1)\\| |",
    ]


def test_a_cell_with_pipes_round_trips_as_one_cell():
    header = ["τ", "arms with |Δ| ≤ τ", "`a|b`", "D-UCB"]
    rows = [["0.1", "|P(Y=1|X=1) - P(Y=1|do(X=1))|", "x\ny", "12 | 3"]]
    parsed = _parse(markdown_table(header, rows))
    assert parsed == [
        ["τ", "arms with |Δ| ≤ τ", "a|b", "D-UCB"],
        ["0.1", "|P(Y=1|X=1) - P(Y=1|do(X=1))|", "x y", "12 | 3"],
    ]
    # and the unescaped text is not one table row: that is what the writer prevents
    assert _parse("| τ | arms with |Δ| ≤ τ |\n|---|---|\n") == []


def test_a_row_with_the_wrong_number_of_cells_raises_naming_the_table_and_the_row():
    with pytest.raises(ValueError, match=r"table 'verdicts'.*row 2 has 3 cell\(s\), the header 2"):
        markdown_table(["a", "b"], [["1", "2"], ["1", "2", "3"]], name="verdicts")
    with pytest.raises(ValueError, match="row 1 has 1 cell"):
        markdown_table(["a", "b"], [["only one"]])
    with pytest.raises(ValueError, match="no columns"):
        markdown_table([], [])


def test_check_table_catches_a_divider_or_row_of_another_width():
    """The defect of issue 33: a header of 8 cells over a divider of 7 is no table at all."""
    head = "| chapter | claims | results | ours | implementation checks | kind not declared | choice | over |"
    with pytest.raises(ValueError, match=r"table 'summary': the divider has 7 cell\(s\), the header 8"):
        check_table([head, "|" + "---|" * 7], name="summary")
    with pytest.raises(ValueError, match=r"row 1 has 2 cell\(s\), the header 3"):
        check_table(["| a | b | c |", "|---|---|---|", "| 1 | 2 |"], name="t")
    with pytest.raises(ValueError, match="not a divider"):
        check_table(["| a | b |", "| 1 | 2 |"], name="t")
    check_table(["| a | b \\| c |", "|:---|---:|", "| 1 | 2 |"], name="t")  # an escaped pipe is no border


def test_split_row_and_alignment():
    assert split_row("| a | b \\| c |  ") == ["a", "b \\| c"]
    text = markdown_table(["x", "y", "z"], [[1, 2, 3]], align=["left", "center", "right"])
    assert text.splitlines()[1] == "|:---|:---:|---:|"
    with pytest.raises(ValueError, match="2 alignments for 3 columns"):
        markdown_table(["x", "y", "z"], [], align=["left", None])
