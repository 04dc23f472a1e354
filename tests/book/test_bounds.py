"""Issue 18, item 2: bounds before work (grid size, --jobs, duplicate points, memory)."""

from __future__ import annotations

import time

from causalbandits_lib.book import bounds, execution
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import find_notebook_spec
from causalbandits_lib.book.sweep import expand_grid

NB = "primer/01_bandits_and_regret"


def test_a_huge_grid_is_refused_by_counting_before_expanding(tmp_path, capsys):
    started = time.perf_counter()
    assert main(["sweep", NB, "-p", "seed=0:100000000", "-p", "T=100,200", "--out", str(tmp_path / "o")]) == 2
    assert time.perf_counter() - started < 10
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "200000000 points" in err and "--max-points" in err
    assert not (tmp_path / "o").exists()


def test_duplicate_points_are_merged():
    spec = find_notebook_spec(NB)
    assert expand_grid(spec, ["seed=5,5,5"], profile="smoke") == [{"seed": 5, "profile": "smoke"}]
    # the profile's own T and the same T given explicitly are one point
    assert len(expand_grid(spec, ["T=2000,2000,100"], profile="smoke")) == 2


def test_jobs_beyond_the_cores_are_refused_unless_forced(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bounds, "cores", lambda: 2)
    for cmd in (["sweep", NB, "-p", "seed=0:2"], ["run", "primer"]):
        assert main([*cmd, "--profile", "smoke", "--jobs", "32", "--out", str(tmp_path / "o")]) == 2
        err = capsys.readouterr().err
        assert "--jobs 32" in err and "2 core" in err and "--force" in err
    assert not (tmp_path / "o").exists()


def test_a_run_needing_more_memory_than_is_free_is_refused_unless_forced(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bounds, "available_memory", lambda: 8 * 2**30)
    ran = []
    monkeypatch.setattr(
        execution, "execute_notebook", lambda *a, **k: ran.append(a) or (_ for _ in ()).throw(KeyboardInterrupt)
    )
    args = ["run", NB, "-p", "T=10000000", "-p", "n_runs=100", "--out", str(tmp_path / "o")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "T=10000000" in err and "n_runs=100" in err and "GB" in err and "--force" in err
    assert not ran
    assert main(args + ["--force"]) == 130  # past the check: execution starts (and is interrupted here)
    assert ran
    # the smoke profile fits easily
    assert bounds.estimate_bytes(find_notebook_spec(NB).resolve({"profile": "smoke"})[0]) < 2**30


def test_sweep_memory_counts_the_points_run_at_once(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(bounds, "available_memory", lambda: 8 * 2**30)
    monkeypatch.setattr(bounds, "cores", lambda: 4)
    args = ["sweep", NB, "-p", "seed=0:4", "-p", "T=2000000", "-p", "n_runs=100", "--out", str(tmp_path / "o")]
    assert main(args + ["--jobs", "4"]) == 2
    assert "4 points at once" in capsys.readouterr().err
