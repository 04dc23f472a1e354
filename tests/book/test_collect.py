"""collect (issue 34, items 1-3): each record is checked against its point, every point of the grid
without a valid record is counted and stops the table unless --allow-missing, and a summary's
denominators count every point of the grid and say when a claim was not testable."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from causalbandits_lib.book import records, sweep
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import find_notebook_spec
from causalbandits_lib.book.sweep import collect, point_folder, summarise

from .fake import fake_record

NB = "primer/02_seeing_and_doing"
CLAIM = "primer.backdoor.adjustment_unbiased"


def _point(out: Path, seed: int, verdict: str = "reproduced", record: bool = True) -> Path:
    """A point folder as ``sweep`` leaves it: ``point.json``, and a record of the point."""
    spec = find_notebook_spec(NB)
    given = {"seed": seed, "profile": "smoke"}
    values, _ = spec.resolve(given)
    folder = out / spec.chapter / spec.name / point_folder(spec, given)
    folder.mkdir(parents=True)
    point = {"notebook": spec.id, "given": given, "parameters": values}
    (folder / "point.json").write_text(json.dumps(point))
    if record:
        claim = {"id": CLAIM, "statement": "s", "verdict": verdict, "reason": "r", "criterion": "c"}
        rec = fake_record(notebook=NB, parameters=values, metrics={"m.x": float(seed)}, claims=[claim])
        records.write_record(rec, folder / "record.json")
    return folder


def _sweep(out: Path, verdicts=("reproduced",) * 4) -> list[Path]:
    return [_point(out, seed, v) for seed, v in enumerate(verdicts)]


def test_a_record_copied_into_another_points_folder_is_refused(tmp_path, capsys):
    """Item 1: seed 1's record copied over seed 0's was counted twice, with exit 0."""
    folders = _sweep(tmp_path)
    shutil.copy(folders[1] / "record.json", folders[0] / "record.json")
    assert main(["collect", str(tmp_path), "--summary"]) == 1
    err = capsys.readouterr().err
    assert f"point {folders[0].relative_to(tmp_path).as_posix()}: not this point's record" in err
    assert "recorded with other parameters: seed=1 (the point has 0)" in err
    assert "1 of the grid's 4 point(s) have no valid record (0 missing, 1 left out); no table written" in err
    assert not (tmp_path / "collected.csv").exists()

    table, problems = collect(tmp_path)
    assert sorted(table["seed"]) == [1, 2, 3] and len(problems) == 1  # seed 1 once, seed 0 left out
    assert main(["collect", str(tmp_path), "--summary", "--allow-missing"]) == 0
    out = capsys.readouterr().out
    assert "3 point(s) ->" in out and "3 of the grid's 4 points" in out
    assert f"{CLAIM} (n_datasets=50, n_samples=2000, p_severe=0.5): reproduced at 75% of 4 point(s)" in out


def test_a_copied_record_is_refused_by_the_folders_point_id_without_point_json(tmp_path, capsys):
    folders = _sweep(tmp_path)
    shutil.copy(folders[1] / "record.json", folders[0] / "record.json")
    (folders[0] / "point.json").unlink()
    col = sweep.collect_points(tmp_path)
    assert list(col.left_out) == [folders[0].relative_to(tmp_path).as_posix()]
    assert "those of point" in col.left_out[folders[0].relative_to(tmp_path).as_posix()]
    assert sorted(col.table["seed"]) == [1, 2, 3] and col.points == 4


def test_one_point_in_two_folders_counts_once_and_twice_with_other_results_not_at_all(tmp_path):
    folders = _sweep(tmp_path)
    shutil.copytree(folders[2], tmp_path / "elsewhere")  # same point, same results: one row
    col = sweep.collect_points(tmp_path)
    assert sorted(col.table["seed"]) == [0, 1, 2, 3] and col.points == 4 and not col.problems
    assert any("counted once" in n for n in col.notes)
    rec = records.load_record(folders[2] / "record.json")
    rec["metrics"]["m.x"] = 99.0
    records.write_record(rec, tmp_path / "elsewhere" / "record.json")
    col = sweep.collect_points(tmp_path)
    assert sorted(col.table["seed"]) == [0, 1, 3] and col.points == 4 and len(col.left_out) == 2


def test_missing_and_corrupt_points_stop_the_table_unless_allowed(tmp_path, capsys):
    """Item 2: 3 of 4 points skipped gave exit 0, "100% of 1 point(s)" and a SHA-256 to cite."""
    folders = _sweep(tmp_path)
    (folders[1] / "record.json").write_text('{"truncated": ')
    (folders[2] / "record.json").unlink()  # a point the sweep did not finish
    shutil.copy(folders[0] / "record.json", folders[3] / "record.json")
    assert main(["collect", str(tmp_path), "--summary"]) == 1
    captured = capsys.readouterr()
    assert "3 of the grid's 4 point(s) have no valid record (1 missing, 2 left out); no table written" in captured.err
    assert "--allow-missing" in captured.err and "SHA-256" not in captured.out
    assert not (tmp_path / "collected.csv").exists() and not (tmp_path / "collected.summary.csv").exists()

    assert main(["collect", str(tmp_path), "--summary", "--allow-missing"]) == 0
    captured = capsys.readouterr()
    assert "causalbandits: error" not in captured.err and "causalbandits: warning: point" in captured.err
    assert "1 point(s) ->" in captured.out and "3 of the grid's 4 point(s) have no valid record" in captured.out
    assert "(1 of the grid's 4 points; cite" in captured.out
    assert "reproduced at 25% of 4 point(s) (reproduced 1, no record 3)" in captured.out
    assert "100%" not in captured.out
    summary = (tmp_path / "collected.summary.csv").read_text()
    assert f"claim,{CLAIM},4,1,0.25," in summary


def test_a_claim_not_testable_at_any_point_is_reported_as_such(tmp_path, capsys):
    """Item 3 (collect --summary): a claim not testable at every point read "reproduced at 0%"."""
    _sweep(tmp_path, ["not testable here"] * 3)
    assert main(["collect", str(tmp_path), "--summary"]) == 0
    out = capsys.readouterr().out
    assert f"{CLAIM} (n_datasets=50, n_samples=2000, p_severe=0.5): not testable at any of its 3 point(s)" in out
    assert "(not testable here 3)" in out and "reproduced at 0%" not in out
    table, _ = collect(tmp_path)
    row = summarise(table).set_index("name").loc[CLAIM]
    assert math.isnan(row["value"]) and row["not testable here"] == 3 and row["reproduced"] == 0


def test_a_claim_testable_at_some_points_counts_every_verdict(tmp_path, capsys):
    _sweep(tmp_path / "a", ["reproduced", "not testable here", "partly", "reproduced"])
    assert main(["collect", str(tmp_path / "a"), "--summary"]) == 0
    assert "reproduced at 50% of 4 point(s) (reproduced 2, partly 1, not testable here 1)" in capsys.readouterr().out
    _sweep(tmp_path / "b", ["not testable here", "not testable here"])
    (Path(next((tmp_path / "b").rglob("record.json")))).unlink()
    assert main(["collect", str(tmp_path / "b"), "--summary", "--allow-missing"]) == 0
    assert "not testable at any of the 1 of its 2 point(s) that judged it" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--plot", "m.x"], "--plot METRIC needs --by"),
        (["--plot", "m.x", "--by", "nope"], "--by nope: not a parameter"),
        (["--plot", "nope", "--by", "seed"], "--plot nope: not a metric"),
        (["--summary", "--over", "nope"], "--over nope: not a parameter"),
        (["--metric", "nope"], "--metric nope: no record"),
        (["--strict", "--allow-missing"], "contradict"),
    ],
)
def test_bad_options_are_usage_errors_before_anything_is_written(tmp_path, capsys, extra, fragment):
    _sweep(tmp_path)
    assert main(["collect", str(tmp_path), *extra]) == 2
    assert fragment in capsys.readouterr().err
    assert not (tmp_path / "collected.csv").exists()
