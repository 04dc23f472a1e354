"""Every ordering the prose states between measured quantities is traced by an ``order`` comment and
holds in the paper-scale records (:mod:`causalbandits_lib.book.prose`)."""

from __future__ import annotations

import pytest

from causalbandits_lib.book import paths
from causalbandits_lib.book.diagnoses import read_records
from causalbandits_lib.book.prose import evaluate_order, misordered, sentences, unannotated_orderings

RECORDS = read_records(paths.paper_results_dir())
NOTEBOOKS = sorted(
    p.relative_to(paths.notebooks_dir()).with_suffix("").as_posix() for p in paths.notebooks_dir().glob("*/*.md")
)
# chapters whose prose has been read sentence by sentence and annotated
ANNOTATED_CHAPTERS = ("primer", "cclb", "pcb", "bestfair", "fucb", "fairx", "synthesis")


def _md(notebook: str) -> str:
    return (paths.notebooks_dir() / f"{notebook}.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("notebook", NOTEBOOKS)
def test_every_stated_ordering_holds_in_the_records(notebook):
    found = misordered(_md(notebook), RECORDS.get(notebook, {}), RECORDS)
    assert found == [], f"notebooks/{notebook}.md:\n" + "\n".join(found)


@pytest.mark.parametrize("notebook", [n for n in NOTEBOOKS if n.split("/")[0] in ANNOTATED_CHAPTERS])
def test_every_measured_ordering_is_annotated(notebook):
    found = unannotated_orderings(_md(notebook))
    assert found == [], (
        f"notebooks/{notebook}.md: sentences that look like a measured ordering and carry no "
        "<!-- order: ... --> comment:\n" + "\n".join(found)
    )


# --- the evaluator on a record made up for the test -------------------------------------------------

OTHER = {
    "metrics": {"speed.fast": 1.0, "speed.slow": 3.0},
    "claims": [
        {"id": "toy.order_holds", "verdict": "reproduced", "measured": 0.2},
        {"id": "toy.order_fails", "verdict": "not reproduced", "measured": {"A": {"mean": 5.0}, "B": {"mean": 4.0}}},
    ],
}
RECORD = {
    "metrics": {
        "regret.A": 10.0,
        "regret.B": 20.0,
        "inst.0.regret.base": 1.0,
        "inst.0.regret.variant": 2.0,
        "inst.1.regret.base": 3.0,
        "inst.1.regret.variant": 2.5,
        "nested": {"x": 0.5, "y": [1.0, 2.0]},
    },
    "parameters": {"level": 0.9},
    "claims": [],
}
RECORDS_TOY = {"toy/01_here": RECORD, "toy/02_other": OTHER}


def _check(spec):
    return evaluate_order(spec, RECORD, RECORDS_TOY)


def test_an_ordering_that_holds_passes_and_its_reverse_fails_naming_values_and_operator():
    assert _check("metric regret.A < metric regret.B") == []
    assert _check("metric regret.A <= metric regret.B") == []
    found = _check("metric regret.A > metric regret.B")
    assert len(found) == 1
    assert "metric regret.A = 10 > metric regret.B = 20 does not hold" in found[0]
    assert _check("metric regret.B >= 20") == []
    assert _check("metric regret.B > 20") != []


def test_wildcards_pair_by_what_they_stand_for_and_every_pair_must_hold():
    # instance 0: variant worse; instance 1: variant better -> "worse on all instances" fails at 1 only
    found = _check("metric inst.*.regret.variant > metric inst.*.regret.base")
    assert len(found) == 1 and "at 1" in found[0] and "2.5" in found[0] and "3" in found[0]
    assert _check("metric inst.0.regret.variant > metric inst.0.regret.base") == []
    assert _check("metric inst.*.regret.variant < 3") == []  # a single value pairs with each
    assert _check("metric inst.*.regret.variant < 2.5") != []


def test_references_read_nested_values_parameters_other_records_and_claims():
    assert _check("metric nested.x < parameter level") == []
    assert _check("metric nested.y.1 > metric nested.y.0") == []
    assert _check("metric toy/02_other:speed.fast < metric toy/02_other:speed.slow") == []
    assert _check("claim toy.order_holds < 0.5") == []
    assert _check("claim toy.order_fails:measured.B.mean < claim toy.order_fails:measured.A.mean") == []
    assert _check("claim toy.order_fails:measured.A.mean < claim toy.order_fails:measured.B.mean") != []


def test_a_claim_reference_requires_the_claim_reproduced():
    assert _check("claim toy.order_holds") == []
    found = _check("claim toy.order_fails")
    assert len(found) == 1 and "'not reproduced'" in found[0]


def test_unresolved_references_and_malformed_comments_are_problems():
    assert "does not resolve" in _check("metric regret.C < metric regret.B")[0]
    assert "in no paper-scale record" in _check("claim toy.nowhere")[0]
    assert "match different" in _check("metric inst.*.regret.base < metric nested.*")[0]
    assert _check("regret.A is small") != []
    assert _check("not a measured ordering") != []  # an exemption must say why
    assert _check("not a measured ordering (where a cell is)") == []
    assert _check("unrecorded (the figure's per-cell values)") == []


def test_several_orderings_in_one_comment_are_each_checked():
    assert _check("metric regret.A < metric regret.B; metric regret.B > 15") == []
    assert len(_check("metric regret.A > metric regret.B; metric regret.B < 15")) == 2


def test_misordered_names_the_line_and_the_sentence():
    md = (
        "---\nkernelspec: {}\n---\n\n# Title\n\n"
        "A beats B on regret (10 against 20) <!-- order: metric regret.A > metric regret.B -->. Then more.\n"
    )
    found = misordered(md, RECORD, RECORDS_TOY)
    assert len(found) == 1
    assert found[0].startswith("line 7: 'A beats B on regret (10 against 20).'")
    assert "10 > metric regret.B = 20" in found[0]


# --- the sentences and the scanner --------------------------------------------------------------------


def test_a_comment_after_the_full_stop_belongs_to_the_sentence_before():
    md = "First sentence is 12 below 20. <!-- order: metric regret.A < metric regret.B -->\nSecond one.\n"
    got = sentences(md)
    assert [s.orders for s in got] == [("metric regret.A < metric regret.B",), ()]
    assert got[1].line == 2


def test_the_scanner_flags_measured_orderings_and_nothing_else():
    flagged = "The variant's regret, 320, is below the baseline's.\n"
    assert len(unannotated_orderings(flagged)) == 1
    annotated = (
        "The variant's regret, 320, is below the baseline's <!-- order: metric regret.A < metric regret.B -->.\n"
    )
    assert unannotated_orderings(annotated) == []
    claimed = "D-UCB beats C-UCB (claim `fucb.fig2b.ucb_c_d_order`).\n"
    assert len(unannotated_orderings(claimed)) == 1
    traced = "D-UCB beats C-UCB. <!-- from: metric regret -->\n"
    assert len(unannotated_orderings(traced)) == 1
    # no measurement named: not flagged; a place on the page: not flagged; a table row: not flagged
    assert unannotated_orderings("D-UCB beats C-UCB in the paper.\n") == []
    assert unannotated_orderings("The cell below prints 288 values.\n") == []
    assert unannotated_orderings("| arm | 12 | smaller is better |\n|---|---|---|\n") == []
    assert unannotated_orderings("The lower bound holds in 95% of runs.\n") == []
