"""`causalbandits verify`: a cited record re-runs to the same results, and a changed notebook is
caught with the metric it changed named."""

from __future__ import annotations

import shutil
import subprocess

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


# ---------------------------------------------------------------------------- the version a citation names
def git(cwd, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A clean clone of the checkout (committed files only)."""
    where = tmp_path_factory.mktemp("clone") / "book"
    git(paths.book_root(), "clone", "--quiet", str(paths.book_root()), str(where))
    return where


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


def test_verify_with_a_mismatching_swhid_exits_2_naming_both_identifiers(clone, monkeypatch, capsys):
    monkeypatch.setenv(paths.ROOT_ENV, str(clone))
    here = git(clone, "rev-parse", "HEAD^{tree}")
    other = git(clone, "rev-parse", "HEAD~1^{tree}")
    assert here != other
    assert main(["verify", "--swhid", f"swh:1:dir:{other}", str(clone / RECORD)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"swh:1:dir:{here}" in line and f"swh:1:dir:{other}" in line and "nothing was run" in line
    head, previous = git(clone, "rev-parse", "HEAD"), git(clone, "rev-parse", "HEAD~1")
    assert main(["verify", "--swhid", f"swh:1:rev:{previous}", str(clone / RECORD)]) == 2
    line = _one_line(capsys.readouterr().err)
    assert f"swh:1:rev:{head}" in line and f"swh:1:rev:{previous}" in line
    assert main(["verify", "--commit", previous[:12], "--claim", "fucb.fig2b.ucb_c_d_order"]) == 2
    assert previous[:12] in _one_line(capsys.readouterr().err)
    assert main(["verify", "--tree", other, str(clone / RECORD)]) == 2
    assert other in _one_line(capsys.readouterr().err)


def test_verify_refuses_what_is_not_a_swhid_of_a_version(clone, monkeypatch, capsys):
    monkeypatch.setenv(paths.ROOT_ENV, str(clone))
    blob = git(clone, "hash-object", RECORD)
    assert main(["verify", "--swhid", f"swh:1:cnt:{blob}", str(clone / RECORD)]) == 2
    assert "swh:1:rev or swh:1:dir" in _one_line(capsys.readouterr().err)
    assert main(["verify", "--swhid", "swh:2:dir:abc", str(clone / RECORD)]) == 2
    assert "not a SWHID" in _one_line(capsys.readouterr().err)
    assert main(["verify", "--commit", "zz", str(clone / RECORD)]) == 2
    assert main(["verify"]) == 2 and "--claim" in capsys.readouterr().err


def test_a_changed_checkout_is_another_version_even_at_the_cited_commit(clone, monkeypatch, capsys):
    from causalbandits_lib.book.verify import check_version

    monkeypatch.setenv(paths.ROOT_ENV, str(clone))
    head, tree = git(clone, "rev-parse", "HEAD"), git(clone, "rev-parse", "HEAD^{tree}")
    assert check_version(clone, commit=head) == [f"this checkout is at commit {head}: the version the citation names"]
    assert "the version the citation names" in check_version(clone, swhid=f"swh:1:dir:{tree};origin=x")[0]
    readme = clone / "README.md"
    text = readme.read_text()
    try:
        readme.write_text(text + "\nan edit\n")
        assert main(["verify", "--commit", head, str(clone / RECORD)]) == 2
        line = _one_line(capsys.readouterr().err)
        assert "uncommitted changes" in line and f"swh:1:dir:{tree}" in line
        assert main(["verify", "--swhid", f"swh:1:dir:{tree}", str(clone / RECORD)]) == 2
    finally:
        readme.write_text(text)
    assert check_version(clone, tree=tree[:12])


def test_a_copy_without_git_is_checked_by_its_tree(clone, tmp_path, monkeypatch, capsys):
    from causalbandits_lib.book.verify import check_version

    copy = tmp_path / "copy"
    archive = subprocess.run(["git", "archive", "HEAD"], cwd=clone, capture_output=True, check=True).stdout
    copy.mkdir()
    subprocess.run(["tar", "-x", "-C", str(copy)], input=archive, check=True)
    (copy / ".venv").mkdir()  # what make setup adds is ignored by the copy's .gitignore
    (copy / ".venv" / "x").write_text("x")
    tree = git(clone, "rev-parse", "HEAD^{tree}")
    assert check_version(copy, swhid=f"swh:1:dir:{tree}") == [
        f"this copy's tree is swh:1:dir:{tree}: the version the citation names"
    ]
    monkeypatch.setenv(paths.ROOT_ENV, str(copy))
    assert main(["verify", "--commit", git(clone, "rev-parse", "HEAD"), str(copy / RECORD)]) == 2
    assert "not a git checkout" in _one_line(capsys.readouterr().err)
    (copy / "stray.txt").write_text("not in the tree")
    assert main(["verify", "--swhid", f"swh:1:dir:{tree}", str(copy / RECORD)]) == 2
    assert f"swh:1:dir:{tree}" in _one_line(capsys.readouterr().err)


def test_a_claim_id_finds_its_committed_record():
    from causalbandits_lib.book.params import ParameterError
    from causalbandits_lib.book.verify import find_claim_record

    found = find_claim_record("fucb.fig2b.ucb_c_d_order")
    assert found == paths.paper_results_dir() / "fucb" / "04_email_experiment.json"
    with pytest.raises(ParameterError, match="fucb.no_such"):
        find_claim_record("fucb.no_such")


@pytest.mark.notebooks
def test_verify_by_claim_id_in_a_clone_at_the_cited_tree(clone, monkeypatch, capsys):
    monkeypatch.setenv(paths.ROOT_ENV, str(clone))
    tree = git(clone, "rev-parse", "HEAD^{tree}")
    claim = "primer.ucb1.logarithmic_growth"
    assert main(["verify", "--smoke", "--swhid", f"swh:1:dir:{tree}", "--claim", claim]) == 0
    out = capsys.readouterr().out
    assert f"this copy's tree is swh:1:dir:{tree}" in out and "judges all its claims" in out
    assert f"claim {claim}: " in out and "in the smoke re-run" in out
