"""Issue 33, item 5: a notebook page shows tables, not printed dicts; the record line of a run is
printed for `causalbandits run` only; a value cut short in a claims table links the page's record."""

from __future__ import annotations

import numpy as np

from causalbandits_lib.book import claims as C
from causalbandits_lib.book.notebook import RECORD_SHOWN_AS_ENV, setup_notebook, show_table, value_table
from causalbandits_lib.core import checks

NB = "primer/01_bandits_and_regret"
LINK = "../../_downloads/records/primer/01_bandits_and_regret.json"


def test_a_cut_value_links_the_record_when_told_where_it_is():
    long = "x" * 300
    assert C.short_cell(long).endswith("… (full value in the record)")
    linked = C.short_cell(long, link=LINK)
    assert linked.endswith(f'… (full value in <a href="{LINK}" download>the record</a>)')
    assert C.short_cell("short", link=LINK) == "short"


def test_the_claims_table_links_the_paper_scale_record_from_its_cut_cells():
    measured = {f"key{i}": i / 7 for i in range(40)}
    paper = [{"id": "a.b", "statement": "s", "paper_value": "p" * 200, "measured": measured, "verdict": "reproduced"}]
    paper[0]["reason"] = "r"
    mine = [dict(paper[0], verdict="reproduced")]
    table = C.claims_markdown(paper, page_run=mine, page_label="smoke profile", record_link=LINK)
    # the measured (paper scale) cell and the paper's value, both from the record the link names
    assert table.count(f'<a href="{LINK}" download>the record</a>') == 2
    # the page's own run is not in that record: its cut value names its own record, without a link
    assert "full value in this run's record)" in table


def test_a_notebook_page_links_its_record_in_the_site(record_dir):
    nb = setup_notebook(NB, profile="smoke")
    assert nb.record_link() == LINK


def _finish(nb, capsys):
    nb.claim("primer.x.y", "a statement", checks.check_at_most(1, 2))
    nb.finish()
    return capsys.readouterr().out


def test_the_record_line_is_printed_under_a_run_and_not_in_the_book(record_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(RECORD_SHOWN_AS_ENV, raising=False)
    book = _finish(setup_notebook(NB, profile="smoke"), capsys)
    assert "record written to" not in book
    monkeypatch.setenv(RECORD_SHOWN_AS_ENV, str(tmp_path / "out" / "primer" / "01_bandits_and_regret.json"))
    run = _finish(setup_notebook(NB, profile="smoke"), capsys)
    assert f"record written to {tmp_path}/out/primer/01_bandits_and_regret.json" in run


def test_a_mapping_becomes_a_table_with_its_values_unchanged(capsys):
    network = {"nodes": 70, "arcs": 123, "average_degree": 2 * 123 / 70}
    frame = value_table(network, value="HEPAR II")
    assert list(frame.index) == list(network) and frame["HEPAR II"]["average_degree"] == 2 * 123 / 70
    per_phase = {"outcome": np.array([0.0, 0.5]), "fairness": np.array([0.0039, 0.0])}
    frame = value_table(per_phase, index="pull", columns=["phase 1", "phase 2"])
    assert frame.loc["fairness", "phase 1"] == 0.0039 and frame.index.name == "pull"
    frame = value_table({"UCB": {"w0": 1e-05}, "TS": {"w0": 0.1}})
    assert frame.loc["TS", "w0"] == 0.1
    show_table(network, "The network:")  # outside a kernel: printed as text, not as a dict
    out = capsys.readouterr().out
    assert out.startswith("The network:\n") and "{'" not in out and "average_degree" in out


def _claim(**kw):
    base = {"id": "a.b", "statement": "s", "paper_value": None, "measured": None, "verdict": "not reproduced"}
    return {**base, "reason": "holds on 0 of 2 instances; instance 0: mean paired difference -3 ± 1", **kw}


def test_a_claim_without_a_measured_value_points_to_its_reason_not_to_none():
    table = C.claims_markdown([_claim()])
    assert C.NO_MEASURED in table and "| None |" not in table
    with_run = C.claims_markdown([_claim()], page_run=[_claim()], page_label="smoke profile")
    assert with_run.count(C.NO_MEASURED) == 2 and "None" not in with_run
    # a value of 0 or an empty list is a measurement, shown as such
    assert C.measured_label(_claim(measured=0)) == "0" and C.measured_label(_claim(measured=[])) == "[]"


def test_a_claim_whose_source_says_ours_is_not_labelled_ours_twice():
    assert C.kind_label(_claim(kind="experiment", ours=True, source="ours: stated before running")) == "experiment"
    assert C.kind_label(_claim(kind="experiment", ours=True, source="Table 2")) == "experiment, ours"
    assert C.kind_label(_claim(kind="experiment", ours=True)) == "experiment, ours"
    cell = C.claim_cell(_claim(kind="construction", ours=True, source="ours (the pcb bound)"))
    assert "ours, ours" not in cell and "construction, ours (the pcb bound)" in cell
