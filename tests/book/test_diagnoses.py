"""Diagnoses of results that did not reproduce: the file's shape, the evidence each cause needs,
pointers that must resolve, and a paper-profile execution storing the diagnosis with its claim."""

from __future__ import annotations

import pytest

from causalbandits_lib.book import diagnoses as dg
from causalbandits_lib.book import notebook as nbmod
from causalbandits_lib.book.notebook import setup_notebook
from causalbandits_lib.core import checks


@pytest.fixture
def book(tmp_path, monkeypatch):
    """A notebooks folder with one chapter ``primer`` (one open choice ``alpha``)."""
    (tmp_path / "primer").mkdir()
    (tmp_path / "primer" / "parameters.yml").write_text(
        "notebooks:\n  x:\n    parameters:\n      alpha: {type: float, value: 1.0, ours: true, alternatives: [2.0]}\n"
    )
    monkeypatch.setattr(dg.paths, "notebooks_dir", lambda: tmp_path)
    return tmp_path / "primer" / "diagnoses.yml"


def _records(*claims):
    return {"primer/x": {"claims": [dict(c) for c in claims], "metrics": {"regret": 1.0}}}


NR = {"id": "primer.a.fails", "kind": "experiment", "verdict": "not reproduced", "reason": "3 > 2"}
CHECK = {"id": "primer.a.exact", "kind": "identity", "verdict": "reproduced", "reason": "0 = 0"}
OTHER = {"id": "primer.a.other", "kind": "experiment", "verdict": "reproduced", "reason": "1 < 2"}


def _entry(cause="contradicted", evidence="- claim: primer.a.exact", claims="[primer.a.fails]"):
    return f"- claims: {claims}\n  cause: {cause}\n  text: The sum is 3, above 2.\n  evidence:\n    {evidence}\n"


@pytest.mark.parametrize(
    "text, message",
    [
        ("- claims: [primer.a.fails]\n  cause: contradicted\n  text: t\n", "needs exactly claims, cause, text"),
        (_entry(cause="bad luck"), "cause 'bad luck' is not one of"),
        (_entry(claims="[fucb.a.fails]"), "claims must be ids or patterns of chapter 'primer'"),
        (_entry(evidence="- figure: 3"), "must be one of"),
        ("- claims: [primer.a.fails]\n  cause: contradicted\n  text: ''\n  evidence: [{claim: x}]\n", "text is empty"),
        ("- claims: [primer.a.fails]\n  cause: contradicted\n  text: t\n  evidence: []\n", "at least one pointer"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_entry(book, text, message):
    book.write_text(text)
    with pytest.raises(ValueError, match=message) as info:
        dg.load_diagnoses("primer")
    assert "diagnoses.yml: entry 1" in str(info.value)


def test_a_result_that_did_not_reproduce_needs_a_diagnosis(book):
    assert dg.problems("primer", _records(NR, CHECK), stored=False) == [
        "primer: primer.a.fails (not reproduced, primer/x) has no diagnosis in notebooks/primer/diagnoses.yml"
    ]
    book.write_text(_entry())
    assert dg.problems("primer", _records(NR, CHECK), stored=False) == []
    # a check of the implementation or a reproduced result needs none
    assert not dg.needs_diagnosis(CHECK) and not dg.needs_diagnosis(OTHER)
    assert dg.needs_diagnosis({**OTHER, "verdict": "partly"})


@pytest.mark.parametrize(
    "cause, evidence, ok",
    [
        ("contradicted", "- claim: primer.a.exact", True),
        ("contradicted", "- claim: primer.a.other", False),  # a result is not an exact check
        ("contradicted", "- metric: primer/x:regret", False),
        ("inconsistent", "- metric: primer/x:regret", True),
        ("underspecified", "- choice: primer/x:alpha", True),
        ("underspecified", "- claim: primer.a.exact", False),
        ("deviation", "- claim: primer.a.mine", True),
        ("deviation", "- claim: primer.a.other", False),
        ("underpowered", "- claim: primer.a.exact", False),  # the verdict does not say it is underpowered
    ],
)
def test_each_cause_needs_its_own_evidence(book, cause, evidence, ok):
    mine = {"id": "primer.a.mine", "kind": "experiment", "verdict": "reproduced", "reason": "r", "ours": True}
    book.write_text(_entry(cause=cause, evidence=evidence))
    found = dg.problems("primer", _records(NR, CHECK, OTHER, mine), stored=False)
    assert (found == []) is ok, found
    if not ok:
        assert found == [f"primer: ['primer.a.fails']: cause {cause} needs {dg.CAUSE_NEEDS[cause]}"]


def test_underpowered_needs_a_verdict_that_says_so(book):
    weak = {**NR, "verdict": "partly", "reason": "inconclusive; underpowered: 80% power needs 120 runs"}
    book.write_text(_entry(cause="underpowered"))
    assert dg.problems("primer", _records(weak, CHECK), stored=False) == []


@pytest.mark.parametrize(
    "evidence, message",
    [
        ("- claim: primer.a.nowhere", "evidence claim 'primer.a.nowhere' is in no paper-scale record"),
        ("- metric: primer/x:nothing", "metric 'nothing' is not in the record of primer/x"),
        ("- metric: regret", "must be 'chapter/notebook:name'"),
        ("- choice: primer/x:beta", "'beta' is not an open choice of primer/x"),
    ],
)
def test_every_pointer_must_resolve(book, evidence, message):
    book.write_text(_entry(cause="inconsistent", evidence=evidence))
    found = dg.problems("primer", _records(NR, CHECK), stored=False)
    assert any(message in p for p in found), found


def test_an_entry_covers_some_claim_and_no_claim_has_two(book):
    book.write_text(_entry() + _entry(claims="[primer.a.f*]") + _entry(claims="[primer.zzz]"))
    found = dg.problems("primer", _records(NR, CHECK), stored=False)
    assert "primer: diagnosis for ['primer.zzz'] covers no claim of the records" in found
    assert any("primer.a.fails: covered by 2 diagnoses" in p for p in found)


def test_a_record_must_carry_the_files_current_text(book):
    book.write_text(_entry())
    (d,) = dg.load_diagnoses("primer")
    stale = {**NR, "diagnosis": {**d.to_dict(), "text": "an older reading"}}
    assert dg.problems("primer", _records(stale, CHECK)) == [
        "primer: primer.a.fails: the record's diagnosis is not the file's; re-run primer/x at the paper profile"
    ]
    assert dg.problems("primer", _records({**NR, "diagnosis": d.to_dict()}, CHECK)) == []


@pytest.mark.parametrize("profile", ["paper", "smoke"])
def test_a_paper_profile_execution_stores_the_diagnosis_with_the_claim(monkeypatch, record_dir, profile):
    entry = dg.Diagnosis(("primer.a.*",), "contradicted", "3 is above 2.", ({"claim": "primer.a.exact"},))
    monkeypatch.setattr(nbmod, "load_diagnoses", lambda chapter: [entry])
    nb = setup_notebook("primer/01_bandits_and_regret", profile=profile)
    failed = nb.claim("primer.a.fails", "s", checks.check_at_most(3, 2), kind="experiment")
    held = nb.claim("primer.a.holds", "s", checks.check_at_most(1, 2), kind="experiment")
    check = nb.claim("primer.a.check", "s", checks.check_at_most(3, 2), kind="identity")
    assert failed.to_dict().get("diagnosis") == (entry.to_dict() if profile == "paper" else None)
    assert "diagnosis" not in held.to_dict() and "diagnosis" not in check.to_dict()
    if profile == "paper":
        assert "**Diagnosis, (d) contradicted" in nb.claims_table() and "claim `primer.a.exact`" in nb.claims_table()
