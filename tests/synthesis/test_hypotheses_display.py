"""Notebook 1's display of the hypotheses: the registered text, shown as written."""

from __future__ import annotations

import markdown_it

from causalbandits_lib.core.tables import split_row
from causalbandits_lib.synthesis import hypotheses as show


def _text(md: str) -> str:
    """The text a reader sees: Markdown rendered, tags dropped."""
    import re

    return re.sub(r"<[^>]+>", "", markdown_it.MarkdownIt("commonmark").enable("table").render(md))


def test_literal_escapes_markup_and_joins_lines():
    assert show.literal("a *b*\n  [c](d) $x$ <e> |f|") == r"a \*b\* \[c\](d) \$x\$ \<e\> |f|"
    # rendered, the text reads as written
    assert _text(show.literal("R_T < 2*se, [1, 2]")).strip() == "R_T &lt; 2*se, [1, 2]"


def test_first_table_has_one_row_per_hypothesis_and_keeps_pipes_in_one_cell():
    hyps = {"h1_x": ("|Δ| below τ", "check_a, z = 2"), "h2_y": ("*not* emphasis", "check_b")}
    lines = show.first_table(hyps).splitlines()
    assert len(lines) == 4 and all(len(split_row(line)) == 3 for line in lines)
    assert "*not* emphasis" in _text(show.first_table(hyps))


def test_registered_list_shows_every_field_and_margin():
    registered = {
        "h6_k": {
            "number": 6,
            "title": "A title",
            "statement": "S with [brackets]",
            "criterion": "C",
            "refutation": "R",
            "margins": [{"name": "m", "value": 0.005, "unit": "clicks per round"}],
        }
    }
    md = show.registered_list(registered)
    assert md.startswith("**H6** `h6_k`: A title\n")
    for field in ("statement", "criterion", "refutation", "margin"):
        assert f": **{field}:**" in md
    assert "m = 0.005 (clicks per round)" in md and r"\[brackets\]" in md
