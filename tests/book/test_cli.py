"""The causalbandits command: errors before anything runs, list, report, cite."""

from __future__ import annotations

import subprocess
import sys

import pytest

from causalbandits_lib.book import paths, records
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import setup_notebook
from causalbandits_lib.core import checks


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "causalbandits_lib.book.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_bad_parameter_fails_at_once_naming_it(tmp_path):
    out = run_cli("run", "primer", "-p", "T=-5", "--out", str(tmp_path))
    assert out.returncode == 2
    assert "parameter T = -5 is out of range: allowed is an integer with 10 <= T <= 10000000" in out.stderr
    assert not any(tmp_path.iterdir())  # nothing executed, nothing written


@pytest.mark.parametrize(
    "args, fragment",
    [
        (["run", "primer", "-p", "nonsense=1"], "unknown parameter 'nonsense'"),
        (["run", "primer", "-p", "T"], "expected name=value"),
        (["run", "nochapter"], "unknown chapter 'nochapter'"),
        (["run", "primer/09"], "matches no notebook of primer"),
        (["run", "primer", "-p", "T=10", "-p", "T=20"], "given twice"),
        (["run", "primer", "-p", "seed=abc"], "parameter seed = 'abc' (str)"),
        (["run", "primer", "--profile", "smoke", "-p", "profile=book"], "either with --profile"),
    ],
)
def test_usage_errors(args, fragment, capsys):
    assert main(args) == 2
    assert fragment in capsys.readouterr().err


def test_list_shows_parameters_with_ranges(capsys):
    assert main(["list", "primer"]) == 0
    out = capsys.readouterr().out
    assert "primer/01_bandits_and_regret" in out
    assert "T (int): smoke=2000 book=20000 paper=100000; allowed: an integer with 10 <= T <= 10000000" in out
    rec = records.load_record(paths.paper_results_dir() / "primer" / "01_bandits_and_regret.json")
    seconds = f"{rec['timings']['wall_seconds']:.0f} s"
    assert f"paper {seconds} (committed record, {rec['timings']['started'][:10]})" in out


def test_cite_pins_commit_parameters_and_hash(record_dir, capsys):
    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke", seed=7)
    nb.claim("primer.x.y", "s", checks.check_at_most(1, 2))
    path = nb.finish(show=False)
    rec = records.load_record(path)
    assert main(["cite", str(path), "--allow-below-paper"]) == 0
    out = capsys.readouterr().out
    assert rec["results_hash"] in out and "seed 7" in out and "@misc{causalbandits:primer:01_bandits_and_regret" in out
    assert "causalbandits run primer/01_bandits_and_regret --profile smoke" in out
    assert rec["git"]["commit"] in out


def test_cite_rejects_a_corrupt_record(tmp_path, capsys):
    bad = tmp_path / "r.json"
    bad.write_text("{}")
    assert main(["cite", str(bad)]) == 1
    assert "lacks key" in capsys.readouterr().err


def test_committed_reproducibility_page_is_up_to_date(capsys):
    assert main(["report", "--check"]) == 0, capsys.readouterr().err


def test_jobs_must_be_positive(tmp_path):
    out = run_cli("run", "primer", "--jobs", "0", "--out", str(tmp_path))
    assert out.returncode == 2 and "--jobs 0" in out.stderr
    assert not any(tmp_path.iterdir())


@pytest.mark.notebooks
def test_notebooks_run_in_parallel_give_the_records_of_a_serial_run(tmp_path):
    """Two notebooks on two worker processes write the records that one after the other write."""
    common = ["run", "primer", "-p", "seed=3", "--profile", "smoke"]
    assert main([*common, "--out", str(tmp_path / "serial"), "--no-progress"]) == 0
    assert main([*common, "--out", str(tmp_path / "parallel"), "--jobs", "2"]) == 0
    found = records.compare_record_files(tmp_path / "serial", tmp_path / "parallel")
    assert len(found) == 3 and all(not lines for lines in found.values()), found


# ---------------------------------------------------------------------------- issue 34, item 11
def _timed_record(path, profile="smoke", seconds=3.0, started="2026-01-02T00:00:00+00:00", **fields):
    from causalbandits_lib.book.notebook import find_notebook_spec

    from .fake import fake_record

    nb = "primer/02_seeing_and_doing"
    values = find_notebook_spec(nb).resolve({"profile": profile})[0]
    rec = fake_record(
        notebook=nb, profile=profile, parameters=values, timings={"started": started, "wall_seconds": seconds}
    )
    return records.write_record(rec | fields, path)


def test_list_takes_times_from_runs_outside_build_records(tmp_path, capsys, monkeypatch):
    """`list` said "smoke not measured here" after smoke runs written elsewhere than _build/records."""
    monkeypatch.setattr(paths, "default_record_dir", lambda profile: tmp_path / "build" / profile)
    monkeypatch.delenv("CAUSALBANDITS_RECORD_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["list", "primer/02", "--brief"]) == 0
    assert "smoke not measured in the folders searched" in capsys.readouterr().out
    _timed_record(tmp_path / "causalbandits-out" / "primer" / "02_seeing_and_doing.json")  # run's default --out
    assert main(["list", "primer/02", "--brief"]) == 0
    assert "smoke 3 s (causalbandits-out, 2026-01-02)" in capsys.readouterr().out
    sweep = tmp_path / "mine" / "primer" / "02_seeing_and_doing" / "seed=0--0123456789abcdef" / "record.json"
    _timed_record(sweep, profile="book", seconds=7.0, started="2026-01-03T00:00:00+00:00")
    assert main(["list", "primer/02", "--brief", "--records", str(tmp_path / "mine")]) == 0
    out = capsys.readouterr().out
    assert f"book 7 s ({tmp_path / 'mine'}, 2026-01-03)" in out and "smoke 3 s" in out
    assert main(["list", "primer/02", "--records", str(tmp_path / "nope")]) == 2
    assert "list --records" in capsys.readouterr().err


def test_diff_of_two_folders_says_missing_records_apart(tmp_path, capsys):
    """`diff` counted a record present on one side only as compared and different."""
    for side in ("old", "new"):
        _timed_record(tmp_path / side / "primer" / "a.json")
    _timed_record(tmp_path / "old" / "primer" / "b.json")
    _timed_record(tmp_path / "new" / "primer" / "c.json")
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "new")]) == 1
    out = capsys.readouterr().out
    assert f"primer/b.json: missing in {tmp_path / 'new'}" in out
    assert f"primer/c.json: missing in {tmp_path / 'old'}" in out
    assert "1 record(s) compared (parameters/metrics/curves/claims): 1 identical, 0 differ; 2 missing" in out
    assert "3 record(s) compared" not in out and "difference(s)" not in out


def test_diff_of_two_sweeps_compares_records_not_point_descriptions(tmp_path, capsys):
    for side in ("old", "new"):
        point = tmp_path / side / "primer" / "02_seeing_and_doing" / "seed=0--0123456789abcdef"
        _timed_record(point / "record.json")
        (point / "point.json").write_text('{"notebook": "primer/02_seeing_and_doing", "given": {}, "parameters": {}}')
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    assert "1 record(s) compared (parameters/metrics/curves/claims): 1 identical, 0 differ" in capsys.readouterr().out
    record = tmp_path / "old" / "primer" / "02_seeing_and_doing" / "seed=0--0123456789abcdef" / "record.json"
    assert main(["diff", str(tmp_path / "old"), str(record)]) == 2
    assert "is a folder and" in capsys.readouterr().err
