"""The committed paper-scale records against the standard of evidence (issue 29): every verdict
can be computed again from the record alone and is the same; no result rests on booleans; every
rate claim had the protocol's runs; every equivalence used a margin committed in the chapter's
``margins.yml``; no claim about a real data set was judged on a stand-in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from causalbandits_lib.book import paths
from causalbandits_lib.book.notebook import load_margins
from causalbandits_lib.book.rejudge import rejudge_record
from causalbandits_lib.core import checks

RECORDS = sorted(paths.paper_results_dir().glob("*/*.json"))


def _id(p: Path) -> str:
    return f"{p.parent.name}/{p.stem}"


def _walk(evidence, name):
    """Every recorded check called ``name`` inside ``evidence`` (itself included), as evidence dicts."""
    if not isinstance(evidence, dict):
        return
    if evidence.get("check") == name:
        yield evidence

    def inner(x):
        if isinstance(x, dict):
            if set(x) == {"__verdict__"}:
                yield from _walk(x["__verdict__"], name)
            else:
                for v in x.values():
                    yield from inner(v)
        elif isinstance(x, list):
            for v in x:
                yield from inner(v)

    yield from inner(evidence.get("inputs"))


def _margins(evidence):
    if isinstance(evidence, dict):
        if set(evidence) == {"__margin__"}:
            yield evidence["__margin__"]
            return
        for v in evidence.values():
            yield from _margins(v)
    elif isinstance(evidence, list):
        for v in evidence:
            yield from _margins(v)


def test_there_are_records():
    assert len(RECORDS) >= 30


@pytest.mark.parametrize("path", RECORDS, ids=_id)
def test_rejudge_reproduces_every_committed_verdict(path):
    r = rejudge_record(path)
    assert not r.without_evidence, f"claims without stored evidence: {r.without_evidence}"
    assert not r.differences, r.differences


@pytest.mark.parametrize("path", RECORDS, ids=_id)
def test_results_rest_on_measured_margins_and_the_protocols(path):
    rec = json.loads(path.read_text(encoding="utf-8"))
    stated = load_margins(path.parent.name)
    bad = []
    for c in rec["claims"]:
        ev = c.get("evidence")
        if c.get("kind") in checks.RESULT_KINDS and checks.uses_check(ev, "check_all"):
            bad.append(f"{c['id']}: a result judged by check_all")
        for name in ("check_rate", "check_sublinear", "check_slope_below"):
            for e in _walk(ev, name):
                for key in ("curves", "curves_a", "curves_b"):
                    if key in e["inputs"]:
                        runs = checks.decode(e["inputs"][key]).shape[0]
                        if runs < checks.RATE_MIN_RUNS:
                            bad.append(f"{c['id']}: a rate judged on {runs} runs (< {checks.RATE_MIN_RUNS})")
        for m in _margins(ev):
            ref = stated.get(m.get("claim", ""))
            if ref is None or ref.value != m["value"] or ref.basis != m["basis"]:
                bad.append(f"{c['id']}: margin {m} is not the one committed in margins.yml")
        if c["verdict"] in ("reproduced", "not reproduced", "partly") and "stand-in" in c["reason"].lower()[:12]:
            bad.append(f"{c['id']}: judged on a stand-in yet {c['verdict']}")
    assert not bad, "\n".join(bad)


def test_every_stated_margin_is_used_by_a_record():
    used = {
        (path.parent.name, m.get("claim"))
        for path in RECORDS
        for c in json.loads(path.read_text(encoding="utf-8"))["claims"]
        for m in _margins(c.get("evidence"))
    }
    unused = [
        f"{ch}: {cid}"
        for ch in sorted({p.parent.name for p in RECORDS})
        for cid in load_margins(ch)
        if (ch, cid) not in used
    ]
    assert not unused, f"margins stated but used by no paper-scale record: {unused}"


def test_stand_in_records_list_their_data():
    missing = [
        _id(p)
        for p in RECORDS
        for c in json.loads(p.read_text(encoding="utf-8"))["claims"]
        if c["reason"].startswith("stand-in") and not json.loads(p.read_text(encoding="utf-8"))["data"]
    ]
    assert not missing, f"records with claims judged on a stand-in but no data listed: {sorted(set(missing))}"
