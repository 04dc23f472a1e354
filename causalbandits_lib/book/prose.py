"""Numbers in a notebook's prose, traced to where they come from.

A sentence of a notebook that states a number states one of four things: a number the paper prints,
a parameter of the run, a measurement of the paper-scale record, or arithmetic on the model. The
last three can be checked, and a measurement typed into prose goes stale the moment the record
changes. So a paragraph of prose that holds a number says where its numbers come from, in an HTML
comment the page does not show::

    F-UCB falls back in 4,999 of 4,999 rounds <!-- from: metric email.fallback_rounds.F-UCB.0.1 -->

with any of ``metric KEY`` (a metric of the notebook's paper-scale record), ``claim ID`` (a claim:
its measured and paper values), ``parameter NAME`` (the record's parameter), ``paper`` (numbers the
paper prints; checked against the paper values the record's claims keep where they do) and
``model`` (arithmetic on the model or a definition, said so in the sentence). :func:`untraced`
reports each paragraph with a number and no ``from`` comment, each pointer that does not resolve,
and each number of a paragraph that names only record sources (metrics, claims, parameters) and
matches none of their values at the precision it is written with. Numbers that name a thing rather
than measure it are not counted: references (Table 1, Eq. (7), Theorem 3, §4.2, notebook 3),
years, the integers 0 to 10, and anything inside math, code, links, citations and headings.
Numbers a code cell prints are the record's by construction and are not prose.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

__all__ = ["Paragraph", "paragraphs", "numbers_in", "untraced", "SOURCES"]

SOURCES = ("metric", "claim", "parameter", "paper", "model")

_FENCE = re.compile(r"^(`{3,}|~{3,})")
_FROM = re.compile(r"<!--\s*from:\s*(.*?)-->", re.S)
_STRIP = [
    re.compile(r"<!--.*?-->", re.S),  # comments (the from comment is read before)
    re.compile(r"\$\$.*?\$\$", re.S),  # display math
    re.compile(r"\$[^$\n]+\$"),  # inline math
    re.compile(r"`[^`]*`"),  # code, roles' targets ({cite}`x`, {eq}`y`)
    re.compile(r"\]\([^)]*\)"),  # link targets
    re.compile(r"<[^>]+>"),  # HTML tags
    re.compile(r"\{[a-z-]+\}"),  # role names
]
_REF_WORDS = (
    r"(?:Table|Tables|Figure|Figures|Fig\.|Figs\.|Eq\.|Eqs\.|Equation|Equations|Theorem|Theorems|Thm\.|Lemma|Lemmas|"
    r"Corollary|Cor\.|Proposition|Prop\.|Algorithm|Alg\.|Section|Sections|§|Appendix|Assumption|Definition|Remark|"
    r"notebook|Notebook|notebooks|chapter|Chapter|Step|step|line|Line|issue|Example|Condition|Rule|rule|Setting|"
    r"setting|panel|Panel|Part|part|case|Case|row|column|item|Claim|Eqn\.|Def\.)"
)
_NUMBER = re.compile(r"(?<![\w.\-/])(−|-)?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:[eE]([-+−]?\d+))?(%)?(?![\w])")
_REF_BEFORE = re.compile(
    _REF_WORDS + r"\s*\(?(?:[A-Z]?\d+[a-z]?(?:\)?\s*[.,–-]\s*\(?|\)?\s+(?:and|to)\s+\(?|\s*\)?\s*)){0,6}$"
)


@dataclass(frozen=True)
class Paragraph:
    """One paragraph of prose: where it starts, its text (comments kept) and its sources."""

    line: int
    text: str
    sources: tuple[tuple[str, str], ...]


def _sources(text: str) -> tuple[tuple[str, str], ...]:
    out = []
    for block in _FROM.findall(text):
        for item in re.split(r"[;,]\s*", block.strip()):
            if not item.strip():
                continue
            kind, _, target = item.strip().partition(" ")
            out.append((kind, target.strip()))
    return tuple(out)


def paragraphs(md: str) -> list[Paragraph]:
    """The prose paragraphs of a MyST notebook: outside front matter, fenced blocks (code cells,
    directives' bodies are kept when they are admonitions of text), display math and headings."""
    lines = md.splitlines()
    out: list[Paragraph] = []
    i, n = 0, len(lines)
    if lines and lines[0].strip() == "---":
        i = next((j for j in range(1, n) if lines[j].strip() == "---"), 0) + 1
    buf: list[str] = []
    start = i
    fence: str | None = None
    prose_fence = False

    def flush():
        if buf:
            text = "\n".join(buf)
            out.append(Paragraph(start + 1, text, _sources(text)))
            buf.clear()

    while i < n:
        line = lines[i]
        m = _FENCE.match(line.strip())
        if fence is None and m:
            flush()
            head = line.strip()
            fence = m.group(1)
            # admonitions hold prose; code cells, figures, math and other directives do not
            prose_fence = bool(
                re.match(r"^[`~]{3,}\{(note|warning|important|tip|admonition|caution|attention)\}", head)
            )
            i += 1
            start = i
            continue
        if fence is not None:
            if line.strip() == fence:
                flush()
                fence = None
                i += 1
                start = i
                continue
            if prose_fence and not line.strip().startswith(":"):
                if not line.strip():
                    flush()
                    start = i + 1
                else:
                    buf.append(line)
            i += 1
            continue
        if not line.strip() or line.lstrip().startswith("#") or re.match(r"^\(.*\)=\s*$", line.strip()):
            flush()
            start = i + 1
        else:
            if not buf:
                start = i
            buf.append(line)
        i += 1
    flush()
    return out


def numbers_in(text: str) -> list[tuple[str, float, int]]:
    """The numbers of a paragraph that measure something, as ``(as written, value, decimals)``:
    references, years and the integers 0 to 10 left out, and nothing inside math, code, links,
    tags or comments."""
    body = text
    for pattern in _STRIP:
        body = pattern.sub(" ", body)
    out = []
    for m in _NUMBER.finditer(body):
        sign, whole, frac, exp, pct = m.groups()
        if _REF_BEFORE.search(body[: m.start()]):
            continue
        value = float(whole.replace(",", "") + (frac or ""))
        if exp:
            value *= 10 ** int(exp.replace("−", "-"))
        if sign:
            value = -value
        if pct:
            value /= 100
        decimals = len(frac) - 1 if frac else 0
        year = 1900 <= value <= 2100 and "," not in whole
        if not frac and not exp and not pct and (0 <= value <= 10 or year):
            continue
        out.append((m.group(0), value, decimals + (2 if pct else 0)))
    return out


def _values(x: Any) -> Iterable[float]:
    if isinstance(x, bool) or x is None:
        return
    if isinstance(x, (int, float)):
        if math.isfinite(x):
            yield float(x)
    elif isinstance(x, str):
        for _, v, _ in numbers_in(x):
            yield v
    elif isinstance(x, Mapping):
        for v in x.values():
            yield from _values(v)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from _values(v)


def _matches(value: float, decimals: int, written: str, candidates: Iterable[float]) -> bool:
    """True when some candidate, written with the number's precision, is the number (a number of
    three or more significant digits may also be a rounding to those digits)."""
    digits = len(re.sub(r"[^0-9]", "", written.split("e")[0].split("E")[0]).lstrip("0")) or 1
    for c in candidates:
        for x in (c, c * 100):
            if round(x, decimals) == round(value, decimals) or (abs(x) > 0 and abs(x - value) <= 0.5 * 10**-decimals):
                return True
            if abs(x) > 0 and value != 0:
                scale = 10 ** (math.floor(math.log10(abs(x))) - digits + 1)
                if abs(round(x / scale) * scale - value) <= 1e-9 * max(abs(value), 1):
                    return True
    return False


def untraced(md: str, record: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What is wrong with the numbers of one notebook's prose against its paper-scale ``record``
    (``records``: every paper-scale record, for claims of other notebooks)."""
    claims = {c["id"]: c for r in records.values() for c in r.get("claims", [])}
    problems = []
    for p in paragraphs(md):
        nums = numbers_in(p.text)
        if not nums:
            continue
        head = f"line {p.line}: {' '.join(p.text.split())[:70]!r}"
        if not p.sources:
            problems.append(f"{head}: numbers {[w for w, _, _ in nums]} and no <!-- from: ... --> comment")
            continue
        candidates: list[float] = []
        unchecked = False
        for kind, target in p.sources:
            if kind not in SOURCES:
                problems.append(f"{head}: source {kind!r} is not one of {SOURCES}")
            elif kind in ("paper", "model"):
                unchecked = True
                if kind == "paper":
                    candidates += [v for c in record.get("claims", []) for v in _values(c.get("paper_value"))]
            elif kind == "metric":
                metrics = record.get("metrics", {})
                hit = {k: v for k, v in metrics.items() if k == target or k.startswith(target + ".")}
                if not hit:
                    problems.append(f"{head}: metric {target!r} is not in the record")
                candidates += list(_values(hit))
            elif kind == "claim":
                if target not in claims:
                    problems.append(f"{head}: claim {target!r} is in no paper-scale record")
                else:
                    c = claims[target]
                    candidates += list(_values([c.get("measured"), c.get("paper_value"), c.get("details")]))
            elif kind == "parameter":
                if target not in record.get("parameters", {}):
                    problems.append(f"{head}: parameter {target!r} is not in the record")
                candidates += list(_values(record.get("parameters", {}).get(target)))
        if unchecked:
            continue
        for written, value, decimals in nums:
            if not _matches(value, decimals, written, candidates):
                problems.append(f"{head}: {written} matches none of the values its sources name")
    return problems
