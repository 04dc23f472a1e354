"""Open choices: declared in parameters.yml, judged again under each alternative, shown on the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from causalbandits_lib.book import records
from causalbandits_lib.book.notebook import setup_notebook
from causalbandits_lib.book.params import SpecError, load_chapter
from causalbandits_lib.book.report import render_reproducibility
from causalbandits_lib.book.sensitivity import sensitivity_points, summarise
from causalbandits_lib.core import checks

PRIMER = Path(__file__).parents[2] / "notebooks" / "primer"


def _chapter(tmp_path, param: dict):
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "01_a.md").write_text("# a\n")
    spec = {"title": "Toy", "notebooks": {"01_a": {"title": "A", "parameters": {"alpha": param}}}}
    (folder / "parameters.yml").write_text(yaml.safe_dump(spec))
    return load_chapter(folder)


def test_open_choices_are_declared_and_validated(tmp_path):
    base = {"type": "float", "min": 0, "max": 10, "help": "h", "value": 1.0}
    ch = _chapter(tmp_path, {**base, "ours": True, "alternatives": [0.3, 3]})
    nb = ch.notebooks["01_a"]
    assert nb.open_choices()["alpha"].alternatives == (0.3, 3.0)
    assert [(k, v) for k, v, _ in sensitivity_points(nb, "book")] == [(None, None), ("alpha", 0.3), ("alpha", 3.0)]
    for bad, match in (
        ({"alternatives": [0.3]}, "not marked 'ours: true'"),
        ({"ours": True, "alternatives": [30]}, "alternative 0 of 'alpha' is invalid"),
        ({"ours": True, "alternatives": [1.0]}, "repeats a profile value"),
        ({"ours": "yes"}, "allowed are true and false"),
    ):
        (tmp_path / "toy" / "parameters.yml").unlink()
        (tmp_path / "toy" / "01_a.md").unlink()
        (tmp_path / "toy").rmdir()
        with pytest.raises(SpecError, match=match):
            _chapter(tmp_path, {**base, **bad})


def test_summary_lists_only_the_verdicts_that_move():
    nb = load_chapter(PRIMER).notebooks["01_bandits_and_regret"]
    baseline = {
        "parameters": {"arm_means": [0.7, 0.6, 0.5, 0.4]},
        "claims": [{"id": "primer.a.x", "verdict": "reproduced"}, {"id": "primer.a.y", "verdict": "reproduced"}],
        "git": {"commit": "abc"},
    }
    runs = {"arm_means": {"[0.9, 0.8]": {"primer.a.x": "reproduced", "primer.a.y": "not reproduced"}}}
    body = summarise(nb, "book", baseline, runs)
    assert body["sensitive_to"] == {
        "primer.a.y": {"arm_means": {"[0.7, 0.6, 0.5, 0.4]": "reproduced", "[0.9, 0.8]": "not reproduced"}}
    }


@pytest.mark.parametrize("profile", ["paper", "book"])
def test_page_marks_and_counts_choice_dependent_verdicts(record_dir, tmp_path, profile):
    """A sensitivity record at the paper profile qualifies the paper-scale verdict; one at the book
    profile is said as a move between two book-profile verdicts and counted apart."""
    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke")
    nb.claim("primer.a.x", "s", checks.check_at_most(1, 2), kind="experiment")
    nb.claim("primer.a.y", "s", checks.check_at_most(1, 2), kind="experiment")
    rec = nb.record()
    rec["profile"] = "paper"
    paper = tmp_path / "results" / "paper"
    records.write_record(rec, paper / "primer" / "01_bandits_and_regret.json")
    sens = tmp_path / "results" / "sensitivity" / "primer" / "01_bandits_and_regret.json"
    sens.parent.mkdir(parents=True)
    moves = {"primer.a.y": {"arm_means": {"[0.7]": "reproduced", "[0.9]": "not reproduced"}}}
    sens.write_text(
        json.dumps({"notebook": "x", "profile": profile, "baseline": {}, "alternatives": {}, "sensitive_to": moves})
    )
    chapters = {"primer": load_chapter(PRIMER)}
    page = render_reproducibility(chapters, paper, tmp_path)
    row = next(line for line in page.splitlines() if "`primer.a.y`" in line)
    summary_row = next(line for line in page.splitlines() if line.startswith(f"| {chapters['primer'].title} |"))
    if profile == "paper":
        assert "experiment (choice-dependent)" in row
        assert "depends on our choice of arm_means: [0.7] → reproduced" in row
        assert summary_row.split("|")[7].strip() == "1 / 0"  # one choice-dependent verdict at the paper's scale
    else:
        assert "experiment (choice-dependent at the book profile)" in row
        assert "moves this claim at the book profile, both verdicts from runs of that size" in row
        assert "not measured at the paper's scale" in row and "depends on our choice" not in row
        assert summary_row.split("|")[7].strip() == "0 / 1"
    sens.write_text("{}")
    with pytest.raises(records.RecordError, match="lacks key 'notebook'"):
        render_reproducibility(chapters, paper, tmp_path)


def test_a_sensitivity_record_as_large_as_the_paper_record_is_paper_scale_evidence(record_dir, tmp_path):
    """Named "book" but run with the record's own parameter values (a notebook whose book profile
    is its paper profile): its moves qualify the paper-scale verdict."""
    from causalbandits_lib.book.notebook import find_notebook_spec

    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke")
    nb.claim("primer.a.y", "s", checks.check_at_most(1, 2), kind="experiment")
    rec = nb.record()
    rec["profile"] = "paper"
    spec = find_notebook_spec("primer/01_bandits_and_regret")
    rec["parameters"] = {k: records.to_jsonable(p.default("book")) for k, p in spec.all_parameters().items()}
    paper = tmp_path / "results" / "paper"
    records.write_record(rec, paper / "primer" / "01_bandits_and_regret.json")
    sens = tmp_path / "results" / "sensitivity" / "primer" / "01_bandits_and_regret.json"
    sens.parent.mkdir(parents=True)
    moves = {"primer.a.y": {"arm_means": {"[0.7]": "reproduced", "[0.9]": "not reproduced"}}}
    body = {"notebook": "x", "profile": "book", "baseline": {}, "alternatives": {}, "sensitive_to": moves}
    sens.write_text(json.dumps(body))
    page = render_reproducibility({"primer": load_chapter(PRIMER)}, paper, tmp_path)
    row = next(line for line in page.splitlines() if "`primer.a.y`" in line)
    assert "experiment (choice-dependent)" in row and "depends on our choice of arm_means" in row
