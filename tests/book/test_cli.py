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
