"""The chapter's hypotheses as notebook 1 shows them: H1-H5 (:data:`.experiments.HYPOTHESES`) as a
Markdown table, H6-H10 (``notebooks/synthesis/hypotheses.yml``) as a definition list, each text
shown exactly as registered (Markdown's markup characters escaped, so that nothing in a statement
is read as emphasis, a link or a formula)."""

from __future__ import annotations

import re
from typing import Mapping

from ..core.tables import markdown_table

__all__ = ["literal", "first_table", "registered_list"]

_MARKUP = re.compile(r"([\\`*_\[\]<>${}])")


def literal(text) -> str:
    """Text shown as written: Markdown's markup characters escaped, runs of white space (line
    breaks included) made one space."""
    return _MARKUP.sub(r"\\\1", " ".join(str(text).split()))


def first_table(hypotheses: Mapping[str, tuple[str, str]]) -> str:
    """H1-H5 as a Markdown table: name, statement, criterion."""
    rows = [
        [f"`{name}`", literal(statement), literal(criterion)] for name, (statement, criterion) in hypotheses.items()
    ]
    return markdown_table(["hypothesis", "statement", "criterion"], rows, name="hypotheses H1-H5")


def registered_list(registered: Mapping[str, Mapping]) -> str:
    """The hypotheses of ``hypotheses.yml`` as a Markdown definition list: each hypothesis's number,
    key and title, then its statement, criterion, refutation and margins."""
    entries = []
    for key, h in registered.items():
        fields = [f": **{field}:** {literal(h[field])}" for field in ("statement", "criterion", "refutation")]
        fields += [f": **margin:** {literal(m['name'])} = {m['value']:g} ({literal(m['unit'])})" for m in h["margins"]]
        entries.append(f"**H{h['number']}** `{key}`: {literal(h['title'])}\n" + "\n".join(fields))
    return "\n\n".join(entries)
