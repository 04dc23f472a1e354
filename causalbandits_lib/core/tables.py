"""The one writer of the book's Markdown tables.

Every pipe table the library or a notebook generates is written by :func:`markdown_table`: it
escapes each cell (a ``|`` in the text becomes ``\\|``, so that ``|Δ|`` stays one cell; a line
break becomes a space, since a table row is one line) and checks that the header, the divider and
every row have the same number of cells, raising :class:`ValueError` with the table's name and the
row otherwise. A table whose column count is wrong would otherwise not be a table at all: Markdown
shows it as a paragraph of pipe text.

It lives in ``core`` so that chapters (which may not import ``book``) can use it too; it computes
nothing a record keeps.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

__all__ = ["escape_cell", "split_row", "check_table", "markdown_table"]

#: A divider cell: dashes with an optional colon at either end (the column's alignment).
_DIVIDER_CELL = re.compile(r"^:?-{3,}:?$")
_ALIGN = {None: "---", "left": ":---", "center": ":---:", "right": "---:"}


def escape_cell(value: Any) -> str:
    """``value`` as the text of one table cell: ``|`` escaped, line breaks made spaces."""
    text = str(value)
    text = re.sub(r"\s*(\r\n|\r|\n)\s*", " ", text)
    return text.replace("|", "\\|")


def split_row(line: str) -> list[str]:
    """The cells of one table row as Markdown reads it: split at every pipe not escaped by a
    backslash, the outer pipes removed, each cell stripped."""
    text = line.strip()
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", text)]


def check_table(lines: Sequence[str], name: str = "table") -> None:
    """Check a Markdown table given as its lines (header, divider, rows): every line has the
    header's number of cells and the divider is one. Raises ValueError naming the table and the
    offending row."""
    if len(lines) < 2:
        raise ValueError(f"table {name!r}: a table needs a header and a divider, got {len(lines)} line(s)")
    width = len(split_row(lines[0]))
    divider = split_row(lines[1])
    if not all(_DIVIDER_CELL.match(c) for c in divider):
        raise ValueError(f"table {name!r}: the second line is not a divider: {lines[1]!r}")
    for i, line in enumerate(lines[1:], start=1):
        n = len(split_row(line))
        if n != width:
            what = "the divider" if i == 1 else f"row {i - 1}"
            raise ValueError(f"table {name!r}: {what} has {n} cell(s), the header {width}: {line[:120]!r}")


def _line(cells: Sequence[Any]) -> str:
    """One table row: each cell escaped, padded by one space (an empty cell is ``| |``)."""
    return "|" + "|".join(f" {text} " if text else " " for text in map(escape_cell, cells)) + "|"


def markdown_table(
    header: Sequence[Any],
    rows: Iterable[Sequence[Any]],
    name: str = "table",
    align: Sequence[str | None] | None = None,
) -> str:
    """A Markdown pipe table: ``header`` and each row of ``rows`` are sequences of cells, written
    with :func:`escape_cell` (``str`` of each value; format numbers before). ``align`` gives each
    column's alignment (None, "left", "center" or "right").

    Raises
    ------
    ValueError
        When a row has not as many cells as the header (the message names ``name`` and the row),
        or ``align`` has not as many entries.
    """
    header = list(header)
    width = len(header)
    if width == 0:
        raise ValueError(f"table {name!r}: no columns")
    align = [None] * width if align is None else list(align)
    if len(align) != width:
        raise ValueError(f"table {name!r}: {len(align)} alignments for {width} columns")
    lines = [_line(header), "|" + "|".join(_ALIGN[a] for a in align) + "|"]
    for i, row in enumerate(rows, start=1):
        row = list(row)
        if len(row) != width:
            shown = " | ".join(str(c) for c in row)[:120]
            raise ValueError(f"table {name!r}: row {i} has {len(row)} cell(s), the header {width}: {shown!r}")
        lines.append(_line(row))
    check_table(lines, name)
    return "\n".join(lines)
