"""`causalbandits verify`: a cited record re-runs to the same results, and a changed notebook is
caught with the metric it changed named."""

from __future__ import annotations

import shutil

import pytest

from causalbandits_lib.book import paths
from causalbandits_lib.book.cli import main

RECORD = "results/paper/primer/01_bandits_and_regret.json"


def _copy_of_the_book(tmp_path, records=(RECORD,)):
    """The parts of the checkout a re-run reads (table of contents, notebooks, the cited records)."""
    root = paths.book_root()
    copy = tmp_path / "book"
    copy.mkdir()
    shutil.copy(root / "_toc.yml", copy / "_toc.yml")
    shutil.copytree(root / "notebooks", copy / "notebooks")
    for record in records:
        (copy / record).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / record, copy / record)
    return copy


@pytest.mark.notebooks
@pytest.mark.timeout(600)
def test_verify_accepts_the_committed_record_and_names_the_metric_an_edit_changes(tmp_path, monkeypatch, capsys):
    copy = _copy_of_the_book(tmp_path)
    monkeypatch.setenv(paths.ROOT_ENV, str(copy))
    assert main(["verify", str(copy / RECORD)]) == 0, capsys.readouterr()
    assert "results identical" in capsys.readouterr().out

    source = copy / "notebooks" / "primer" / "01_bandits_and_regret.md"
    text = source.read_text()
    edited = text.replace("t_min=T / 2)", "t_min=T / 4)")
    assert edited != text, "the line the test edits is gone from the notebook; pick another number"
    source.write_text(edited)
    assert main(["verify", str(copy / RECORD), "--max-lines", "50"]) == 1
    out = capsys.readouterr().out
    assert "DIFFERS" in out and "metrics.ucb1.loglog_slope_second_half:" in out
    assert "metrics.ucb1.final_regret:" not in out  # only what the edit changed is named


@pytest.mark.notebooks
def test_verify_smoke_checks_that_every_claim_is_still_judged(tmp_path, monkeypatch, capsys):
    copy = _copy_of_the_book(tmp_path)
    monkeypatch.setenv(paths.ROOT_ENV, str(copy))
    assert main(["verify", "--smoke", str(copy / RECORD)]) == 0
    assert "judges all its claims" in capsys.readouterr().out
    source = copy / "notebooks" / "primer" / "01_bandits_and_regret.md"
    text = source.read_text()
    assert text.count('nb.claim(\n    "primer.') >= 1
    source.write_text(text.replace('nb.claim(\n    "primer.', 'nb.claim(\n    "primer.renamed_', 1))
    assert main(["verify", "--smoke", str(copy / RECORD)]) == 1
    assert "not judged by the smoke re-run" in capsys.readouterr().out


@pytest.mark.notebooks
def test_verify_on_two_workers_reports_every_record(tmp_path, monkeypatch, capsys):
    second = "results/paper/primer/02_seeing_and_doing.json"
    copy = _copy_of_the_book(tmp_path, (RECORD, second))
    monkeypatch.setenv(paths.ROOT_ENV, str(copy))
    assert main(["verify", "--smoke", "--jobs", "2", str(copy / "results" / "paper")]) == 0
    out = capsys.readouterr().out
    assert "2 record(s) verified: 2 ok, 0 differ" in out and out.count("judges all its claims") == 2


def test_verify_refuses_what_is_not_a_record(tmp_path, capsys):
    assert main(["verify", str(tmp_path / "missing.json")]) == 2
    assert "no such record or folder" in capsys.readouterr().err
    assert main(["verify", str(tmp_path)]) == 2
    assert main(["verify", "--rtol", "-1", RECORD]) == 2
    assert "--rtol -1.0" in capsys.readouterr().err
