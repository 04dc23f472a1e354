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

Orderings stated in prose are traced the same way. A sentence that says one measured quantity is
below, above, cheaper, better or worse than another carries, inside the sentence (before its full
stop or right after it), an ``order`` comment::

    D-UCB's regret stays below C-UCB's <!-- order: claim fucb.fig2b.ucb_c_d_order -->.
    worse on every instance <!-- order: metric inst.*.regret.PCB > metric inst.*.regret.base -->.
    a ratio above 1 means the radius is too small <!-- order: not a measured ordering (a definition) -->.

``claim ID`` alone says the sentence states what that claim judges: the claim's paper-scale verdict
must be ``reproduced``. ``LEFT OP RIGHT`` (``OP`` one of ``<``, ``>``, ``<=``, ``>=``, with a space
either side; several joined by ``;``) says the ordering holds between two references, each
``metric KEY`` (a metric of the notebook's record, or ``metric chapter/notebook:KEY`` of another),
``parameter NAME`` (the record's parameter), ``claim ID`` (the claim's ``measured`` value), ``claim
ID:PATH`` (a dotted path into the claim: ``measured.UCB.mean``,
``details.paired_differences.C-UCB - D-UCB.mean``, ``paper_value``) or a plain number. Nested
mappings and lists are read by dotted paths, and a ``*`` in a key or path stands for any part of it
(also for a part holding a spaced operator, which a path cannot spell): such a reference is the set
of numbers it matches, the two sides are paired by what their ``*`` stand for (a single value pairs
with each), and the ordering must hold for every pair ("worse on all five instances"). ``not a
measured ordering (REASON)`` exempts a sentence whose comparison word states no ordering between
measurements (a definition, a property of the model, the paper's own report, how a check decides);
``unrecorded (REASON)`` marks a measured ordering whose values the paper-scale record does not keep
(a figure's per-cell values, a run time): no test sees it go stale, so :func:`unrecorded_orderings`
lists these sentences to keep them in view.

:func:`misordered` reports each ordering that does not hold in the paper-scale records (the line,
the sentence, both values and the operator) and each reference that does not resolve.
:func:`unannotated_orderings` is the scanner: it reports each sentence that looks like it states an
ordering between measured quantities and carries no ``order`` comment. Operationally, a sentence
with a comparison word (below, above, lower, higher, less/more than, fewer, smaller, larger,
greater, cheaper, dearer, exceed, beat, better, worse, faster, slower, outperform, dominate, their
inflections and the superlatives lowest, highest, smallest, largest, cheapest, best, worst; not
"lower bound", and not ``below``/``above`` pointing at a place on the page: "the cell below", a
word followed by punctuation) outside math, code and comments, and a measurement named in it: a
number :func:`numbers_in` counts, a ``from`` comment naming a metric or a claim, or a claim id
written in code. Rows of a table are left out. A sentence without a named measurement ("LinUCB-PCB
has the lowest regret") is not flagged; it may still carry an ``order`` comment, which is checked.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

__all__ = [
    "Paragraph",
    "paragraphs",
    "numbers_in",
    "untraced",
    "SOURCES",
    "Sentence",
    "sentences",
    "misordered",
    "unannotated_orderings",
    "evaluate_order",
    "unrecorded_orderings",
]

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


# --- orderings -------------------------------------------------------------------------------------

_ORDER = re.compile(r"<!--\s*order:\s*(.*?)-->", re.S)
_ORDER_WS = re.compile(r"\s*<!--\s*order:.*?-->", re.S)
_EXEMPT = re.compile(r"^(?:not a measured ordering|unrecorded)\s*\((.+)\)\s*$", re.S)
_OP = re.compile(r"^(.*?)\s+(<=|>=|<|>)\s+(.*)$", re.S)
_OPS = {"<": lambda a, b: a < b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}
_COMPARISON = re.compile(
    r"\b(?:below|above|lower(?![\s-]+(?:bound|confidence|tail|envelope))|lowest|higher|highest|"
    r"less\s+than|more\s+than|fewer|smaller|smallest|larger|largest|"
    r"greater|cheaper|cheapest|dearer|exceed(?:s|ed|ing)?|beat(?:s|ing)?|better|best|worse|worst|faster|slower|"
    r"outperform(?:s|ed|ing)?|dominat(?:e|es|ed|ing))\b",
    re.I,
)
# "below"/"above" pointing at a place on the page, not at a quantity
_PLACE = re.compile(
    r"(?:\b(?:see|shown|given|defined|described|listed|printed|plotted|drawn|as|cell|cells|table|figure|plot|code|"
    r"text|section|list|one|ones|those|that|panel|paragraph|notebook|chapter|here|built|computed|claim|claims|"
    r"check|checks|test|tests|run|runs|record|cell's|sentence|example|number|numbers|mean|means)\s+(?:below|above)\b"
    r"|\b(?:below|above)\s*(?:[.,;:)]|$))",
    re.I,
)
_CLAIM_ID = re.compile(r"`(?:primer|fucb|bestfair|cclb|pcb|fairx|synthesis)\.[\w.*-]+`")


@dataclass(frozen=True)
class Sentence:
    """One sentence of prose: its line in the notebook, its text (comments kept) and its ``order``
    comments."""

    line: int
    text: str
    orders: tuple[str, ...]


def _mask(text: str) -> str:
    """The text with comments, math and code blanked out, the same length: a comment becomes tildes
    ending in a full stop (so it closes the sentence it follows or sits inside), math and code
    become letters (no sentence ends inside them)."""

    def blank(m: re.Match, end: str = "") -> str:
        body = re.sub(r"\S", "x", m.group(0))
        return body[: len(body) - len(end)] + end

    out = re.sub(r"<!--.*?-->", lambda m: "~" * (len(m.group(0)) - 1) + ".", text, flags=re.S)
    for pattern in (r"\$\$.*?\$\$", r"\$[^$\n]+\$", r"`[^`]*`", r"\]\([^)]*\)"):
        out = re.sub(pattern, blank, out, flags=re.S)
    return out


_BOUNDARY = re.compile(r"[.!?][)\"'*_]*\s+(?=[\s.~]*[A-Z0-9*_\[`$(])")


def sentences(md: str) -> list[Sentence]:
    """The sentences of a notebook's prose paragraphs. A sentence ends at ``.``, ``!`` or ``?``
    followed by a space and a capital (or a number, markup); a comment right after the full stop
    belongs to the sentence it follows."""
    out = []
    for p in paragraphs(md):
        masked = _mask(p.text)
        if p.text.lstrip().startswith("|"):  # a table is one piece, not sentences
            masked = ""
        cuts = [0]
        for m in _BOUNDARY.finditer(masked):
            end = m.end()
            # comments (blanked to tildes and a stop) right after the stop stay with this sentence
            while True:
                c = re.match(r"\s*<!--.*?-->", p.text[end:], re.S)
                if not c:
                    break
                end += c.end()
            if end > cuts[-1] and end < len(p.text):
                cuts.append(end)
        cuts.append(len(p.text))
        for a, b in zip(cuts, cuts[1:]):
            text = p.text[a:b].strip()
            if text:
                line = p.line + p.text[: a + len(p.text[a:b]) - len(p.text[a:b].lstrip())].count("\n")
                out.append(Sentence(line, text, tuple(o.strip() for o in _ORDER.findall(text))))
    return out


def _flatten(x: Any, prefix: str = "") -> dict[str, Any]:
    out = {}
    if prefix:
        out[prefix] = x
    if isinstance(x, Mapping):
        for k, v in x.items():
            out.update(_flatten(v, f"{prefix}.{k}" if prefix else str(k)))
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            out.update(_flatten(v, f"{prefix}.{i}" if prefix else str(i)))
    return out


def _number(x: Any) -> float | None:
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    return float(x) if math.isfinite(x) else None


def _select(pool: Mapping[str, Any], key: str, what: str) -> dict[tuple[str, ...], float]:
    """The numbers of ``pool`` (flattened) that ``key`` names, keyed by what its ``*`` stand for."""
    if "*" not in key:
        if key not in pool:
            raise KeyError(f"{what} {key!r} does not resolve")
        v = _number(pool[key])
        if v is None:
            raise KeyError(f"{what} {key!r} is not a number ({str(pool[key])[:60]})")
        return {(): v}
    rx = re.compile("^" + "(.*?)".join(re.escape(part) for part in key.split("*")) + "$")
    hit = {}
    for k, v in pool.items():
        m = rx.match(k)
        if m and _number(v) is not None:
            hit[m.groups()] = _number(v)
    if not hit:
        raise KeyError(f"{what} {key!r} matches no number")
    return hit


def _resolve(ref: str, record: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]):
    ref = ref.strip()
    try:
        return {(): float(ref.replace("−", "-"))}
    except ValueError:
        pass
    kind, _, target = ref.partition(" ")
    target = target.strip()
    if kind == "metric":
        rec = record
        if ":" in target and "/" in target.split(":", 1)[0]:
            name, target = target.split(":", 1)
            if name not in records:
                raise KeyError(f"record {name!r} is not a paper-scale record")
            rec = records[name]
        return _select(_flatten(rec.get("metrics", {})), target, "metric")
    if kind == "claim":
        cid, _, path = target.partition(":")
        claims = {c["id"]: c for r in records.values() for c in r.get("claims", [])}
        claims.update({c["id"]: c for c in record.get("claims", [])})
        if cid not in claims:
            raise KeyError(f"claim {cid!r} is in no paper-scale record")
        return _select(_flatten(claims[cid]), path or "measured", f"claim {cid}:")
    if kind == "parameter":
        return _select(_flatten(record.get("parameters", {})), target, "parameter")
    raise KeyError(f"reference {ref!r} is not 'metric KEY', 'claim ID[:PATH]', 'parameter NAME' or a number")


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def evaluate_order(spec: str, record: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What is wrong with one ``order`` comment's text against the paper-scale records: ``[]`` when
    it is an exemption with a reason, a claim judged ``reproduced``, or orderings that hold."""
    spec = " ".join(spec.split())
    if spec.startswith(("not a measured ordering", "unrecorded")):
        return [] if _EXEMPT.match(spec) else [f"exemption {spec!r} gives no (reason)"]
    problems = []
    for part in (s.strip() for s in spec.split(";")):
        if not part:
            continue
        m = _OP.match(part)
        if not m:
            kind, _, cid = part.partition(" ")
            claims = {c["id"]: c for r in records.values() for c in r.get("claims", [])}
            claims.update({c["id"]: c for c in record.get("claims", [])})
            if kind != "claim" or not cid.strip() or " " in cid.strip():
                problems.append(f"{part!r} is not 'LEFT OP RIGHT', 'claim ID' or an exemption")
            elif cid.strip() not in claims:
                problems.append(f"claim {cid.strip()!r} is in no paper-scale record")
            elif claims[cid.strip()].get("verdict") != "reproduced":
                problems.append(
                    f"the sentence states what claim {cid.strip()} judges, and its verdict is "
                    f"{claims[cid.strip()].get('verdict')!r}, not 'reproduced'"
                )
            continue
        left, op, right = m.groups()
        try:
            a, b = _resolve(left, record, records), _resolve(right, record, records)
        except KeyError as e:
            problems.append(str(e.args[0]))
            continue
        if () in a and len(a) == 1:
            pairs = [(k, a[()], v) for k, v in b.items()]
        elif () in b and len(b) == 1:
            pairs = [(k, v, b[()]) for k, v in a.items()]
        elif set(a) == set(b):
            pairs = [(k, a[k], b[k]) for k in sorted(a)]
        else:
            problems.append(
                f"{left.strip()!r} and {right.strip()!r} match different '*' parts: {sorted(a)} vs {sorted(b)}"
            )
            continue
        for k, x, y in pairs:
            if not _OPS[op](x, y):
                where = f" at {'/'.join(k)}" if k else ""
                problems.append(f"{left.strip()} = {_fmt(x)} {op} {right.strip()} = {_fmt(y)} does not hold{where}")
    return problems


def misordered(md: str, record: Mapping[str, Any], records: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each ``order`` comment of one notebook's prose that does not hold in the paper-scale records
    (``record``: the notebook's; ``records``: every paper-scale record)."""
    problems = []
    for s in sentences(md):
        for spec in s.orders:
            for problem in evaluate_order(spec, record, records):
                problems.append(f"line {s.line}: {' '.join(_ORDER_WS.sub('', s.text).split())[:80]!r}: {problem}")
    return problems


def _states_ordering(text: str) -> bool:
    body = _ORDER.sub(" ", text)
    body = _FROM.sub(" ", body)
    body = re.sub(r"^\s*\|.*$", " ", body, flags=re.M)  # rows of a table name things, they state no ordering
    text = re.sub(r"^\s*\|.*$", " ", text, flags=re.M)
    plain = body
    for pattern in _STRIP:
        plain = pattern.sub(" ", plain)
    plain = _PLACE.sub(" ", plain)
    if not _COMPARISON.search(plain):
        return False
    measured = bool(numbers_in(text)) or bool(_CLAIM_ID.search(body))
    measured = measured or any(k in ("metric", "claim") for k, _ in _sources(text))
    return measured


def unannotated_orderings(md: str) -> list[str]:
    """Each sentence of one notebook's prose that looks like it states an ordering between measured
    quantities (see the module's docstring) and carries no ``order`` comment."""
    out = []
    for s in sentences(md):
        if not s.orders and _states_ordering(s.text):
            out.append(f"line {s.line}: {' '.join(s.text.split())[:160]!r}")
    return out


def unrecorded_orderings(md: str) -> list[str]:
    """Each sentence of one notebook's prose marked ``unrecorded``: an ordering of measurements the
    paper-scale record does not keep, so no test can see it go stale."""
    return [
        f"line {s.line}: {' '.join(_ORDER_WS.sub('', s.text).split())[:100]!r}"
        for s in sentences(md)
        if any(o.startswith("unrecorded") for o in s.orders)
    ]
