"""A run shows its results: verdict counts and the claims whose verdict differs from the committed
paper-scale record, or why they are not compared; a page run with other choices says so."""

from __future__ import annotations

import pytest

from causalbandits_lib.book import paths, records
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import setup_notebook
from causalbandits_lib.book.verify import run_summary
from causalbandits_lib.core import checks

NB = "primer/01_bandits_and_regret"


def _paper():
    return records.load_record(paths.paper_results_dir() / "primer" / "01_bandits_and_regret.json")


def _judged(verdict: str) -> checks.Verdict:
    """A verdict with the given value, produced by a check (the session accepts no hand-built verdict)."""
    holds, fails = checks.check_at_most(1, 2), checks.check_at_most(3, 2)
    made = {
        "reproduced": holds,
        "not reproduced": fails,
        "partly": checks.check_parts({"a": holds, "b": holds, "c": holds, "d": fails}),
        "not testable here": checks.not_testable("r"),
    }
    return made[verdict]


def _rerun_of_paper(record_dir, flip: str | None = None):
    """A record with the committed paper record's parameters and claims, one verdict flipped."""
    paper = _paper()
    nb = setup_notebook(NB, **paper["parameters"])
    for c in paper["claims"]:
        verdict = c["verdict"] if c["id"] != flip else next(v for v in checks.VERDICTS if v != c["verdict"])
        nb.claim(c["id"], c["statement"], _judged(verdict), kind=c.get("kind"))
    return nb.finish(show=False), paper


def test_a_faithful_run_says_every_verdict_matches(record_dir):
    path, paper = _rerun_of_paper(record_dir)
    lines = run_summary(path)
    assert lines[0].startswith("claims (paper profile): ")
    assert lines[1].startswith("every verdict as in the committed paper-scale record")


def test_a_run_names_each_claim_whose_verdict_differs(record_dir):
    paper = _paper()
    flip = paper["claims"][0]["id"]
    path, _ = _rerun_of_paper(record_dir, flip=flip)
    lines = run_summary(path)
    assert lines[1].startswith("1 verdict(s) differ from the committed paper-scale record")
    assert lines[2].strip().startswith(f"{flip}: ") and len(lines) == 3


def test_a_run_with_other_parameters_is_not_compared(record_dir):
    nb = setup_notebook(NB, profile="smoke", arm_means=[0.9, 0.8, 0.5])
    nb.claim("primer.x.y", "s", checks.check_at_most(1, 2), kind="experiment")
    lines = run_summary(nb.finish(show=False))
    assert lines[0] == "claims (smoke profile): 1 reproduced"
    assert (
        "parameters differ from the committed paper-scale record" in lines[1]
        and "arm_means=[0.9, 0.8, 0.5]" in lines[1]
    )


def test_the_page_names_the_choices_that_differ_from_the_record(record_dir):
    paper = _paper()
    same = setup_notebook(NB, profile="book")
    assert same.choices_unlike(paper) == {}  # the profile's own T and runs are not counted
    other = setup_notebook(NB, profile="book", arm_means=[0.9, 0.8, 0.5])
    assert other.choices_unlike(paper) == {"arm_means": ([0.9, 0.8, 0.5], paper["parameters"]["arm_means"])}


@pytest.mark.notebooks
def test_run_prints_verdicts_and_renders_a_self_contained_page(tmp_path, capsys, monkeypatch):
    from causalbandits_lib.book import execution

    if execution.html_mathjax() is None:  # `run --html` refuses without the book's MathJax (make mathjax)
        fake = tmp_path / "mathjax.js"
        fake.write_text("window.fakeMathJax = true;\n")
        monkeypatch.setattr(execution, "html_mathjax", lambda: fake)
    assert main(["run", "primer/01", "--profile", "smoke", "--out", str(tmp_path), "--html", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "claims (smoke profile): " in out and "verdicts not compared" in out
    page = tmp_path / "primer" / "01_bandits_and_regret.html"
    assert f"page -> {page}" in out
    html = page.read_text()
    assert html.count("data:image/png;base64,") >= 1  # figures embedded, no side files
    assert "primer.ucb1.below_upper_bound" in html  # the claims table is on the page


def test_a_run_that_writes_the_paper_record_does_not_compare_it_with_itself(record_dir, tmp_path, monkeypatch):
    nb = setup_notebook(NB, profile="paper")
    nb.claim("primer.x.y", "s", checks.check_at_most(1, 2), kind="experiment")
    path = nb.finish(show=False)
    monkeypatch.setattr(paths, "paper_results_dir", lambda: path.parent.parent)
    assert run_summary(path)[1].startswith("this run wrote the paper-scale record itself")
