"""Absolute paths in a record's strings (issue 33: a record names no folder of the machine that
wrote it), shared by the unit test of records and the test of the committed records."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

#: A POSIX path from the root with at least two parts (``/work/shared/data``), a home-relative
#: path (``~/data``) or a Windows drive path (``C:\\data``), at the start of a string or after a
#: space, quote, bracket or separator (so that ``1/δ`` or ``E[Y]/n`` are not taken for one).
ABSOLUTE = re.compile(r"""(?:^|[\s"'(\[=,;])(/[\w.+-]+/[\w.+/-]*|~/[\w.+/-]+|[A-Za-z]:\\[\w.\\ -]+)""")


def strings(value: Any, where: str = "") -> Iterator[tuple[str, str]]:
    """Every string in ``value`` (keys included), with where it is (``data[0].location``)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield f"{where}.{k} (key)", str(k)
            yield from strings(v, f"{where}.{k}")
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            yield from strings(v, f"{where}[{i}]")


def absolute_paths(record: Any, *folders: Path) -> list[str]:
    """``where: path`` for every absolute path in ``record``'s strings, and every string that holds
    one of ``folders`` (the checkout, a temporary folder) or the repository root."""
    needles = [str(f) for f in (ROOT, *folders)]
    found = []
    for where, text in strings(record):
        hits = [m.group(1) for m in ABSOLUTE.finditer(text)] + [n for n in needles if n in text]
        found += [f"{where.lstrip('.')}: {hit}" for hit in hits]
    return found
