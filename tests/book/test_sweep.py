"""Sweeps: grid expansion and validation, task retries on joblib and Dask, resumable notebook
sweeps that give the same table wherever they run, and collect."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from causalbandits_lib.book import records
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import find_notebook_spec
from causalbandits_lib.book.params import ParameterError
from causalbandits_lib.book.sweep import collect, expand_grid, point_id
from causalbandits_lib.core.parallel import map_tasks

from . import sweep_tasks
from .fake import fake_record

NB = "primer/02_seeing_and_doing"


def test_grid_expands_ranges_lists_and_products():
    spec = find_notebook_spec(NB)
    points = expand_grid(spec, ["seed=0:3,7", "n_samples=500,1000"], profile="smoke")
    assert len(points) == 8
    assert points[0] == {"seed": 0, "n_samples": 500, "profile": "smoke"}
    assert sorted({p["seed"] for p in points}) == [0, 1, 2, 7]
    spec1 = find_notebook_spec("primer/01_bandits_and_regret")
    pts = expand_grid(spec1, ["arm_means=[0.5,0.4];[0.9,0.1,0.2]"])
    assert [p["arm_means"] for p in pts] == [[0.5, 0.4], [0.9, 0.1, 0.2]]


@pytest.mark.parametrize(
    "grid, fragment",
    [
        (["n_samples=500,5,1000"], "parameter n_samples = 5 is out of range"),
        (["seed=3:1"], "the range '3:1' is empty"),
        (["nope=1,2"], "unknown parameter 'nope'"),
        (["seed=0:2", "seed=4"], "given twice"),
        (["p_severe=0.5,abc"], "parameter p_severe = 'abc'"),
    ],
)
def test_an_invalid_point_is_rejected_before_anything_runs(grid, fragment, tmp_path, capsys):
    spec = find_notebook_spec(NB)
    with pytest.raises(ParameterError, match=fragment.replace("(", r"\(")):
        expand_grid(spec, grid)
    assert main(["sweep", NB, *sum((["-p", g] for g in grid), []), "--out", str(tmp_path)]) == 2
    assert fragment in capsys.readouterr().err
    assert not any(tmp_path.rglob("*"))


def test_point_id_names_the_resolved_point():
    spec = find_notebook_spec(NB)
    assert point_id(spec, {"profile": "smoke"}) == point_id(spec, {"profile": "smoke", "n_samples": 2000})
    assert point_id(spec, {"profile": "smoke"}) != point_id(spec, {"profile": "smoke", "seed": 1})


@pytest.mark.parametrize("how", [{"jobs": 1}, {"jobs": 2}, {"jobs": 2, "scheduler": "local"}])
def test_map_tasks_returns_results_in_order_wherever_it_runs(how):
    tasks = [{"seed": s} for s in range(6)]
    out = map_tasks(sweep_tasks.seeded_mean, tasks, **how)
    assert [o.result for o in out] == [sweep_tasks.seeded_mean(s) for s in range(6)]
    assert all(o.ok and o.attempts == 1 for o in out)


@pytest.mark.parametrize("how", [{"jobs": 1}, {"jobs": 2}, {"jobs": 2, "scheduler": "local"}])
def test_a_failing_task_is_retried_then_reported(how, tmp_path):
    out = map_tasks(sweep_tasks.fail_once, [{"marker": str(tmp_path / "m"), "value": 5}], retries=1, **how)
    assert out[0].ok and out[0].result == 5 and out[0].attempts == 2
    bad = map_tasks(sweep_tasks.always_fails, [{"value": 3}], retries=1, **how)
    assert not bad[0].ok and bad[0].attempts == 2 and "bad value 3" in bad[0].error


@pytest.mark.parametrize("how", [{"jobs": 2}, {"jobs": 2, "scheduler": "local"}])
def test_a_task_that_kills_its_worker_is_retried(how, tmp_path):
    tasks = [{"marker": str(tmp_path / "m"), "value": 1}] + [
        {"marker": str(tmp_path / f"ok{i}"), "value": i} for i in range(2, 4)
    ]
    for i in range(2, 4):
        (tmp_path / f"ok{i}").write_text("")  # these never die
    out = map_tasks(sweep_tasks.die_once, tasks, retries=2, **how)
    assert [o.result for o in out] == [1, 2, 3]
    assert (tmp_path / "m").read_text() == "died once"  # the first attempt did kill its worker
    if "scheduler" not in how:
        # joblib: a death while other tasks run is charged to none of them (each is run again alone);
        # a death while it ran alone is its own. Dask reschedules a lost task itself.
        assert out[0].attempts in (1, 2)


def _fake_record(folder: Path, seed: int, value: float):
    rec = fake_record(
        notebook=NB,
        profile="smoke",
        parameters={"profile": "smoke", "seed": seed},
        metrics={"m": value, "curve": [1, 2]},
        claims=[],
    )
    records.write_record(rec, folder / "record.json")


def test_collect_reports_a_corrupt_record_and_keeps_the_rest(tmp_path, capsys):
    for s in range(3):
        _fake_record(tmp_path / NB / f"p{s}", s, s / 10)
    (tmp_path / NB / "p1" / "record.json").write_text('{"truncated": ')
    table, problems = collect(tmp_path)
    assert list(table["seed"]) == [0, 2] and list(table["m"]) == [0.0, 0.2]
    assert "curve" not in table.columns  # only scalar metrics by default
    assert len(problems) == 1 and "p1" in problems[0]
    # issue 34, item 2: a point without a valid record stops the table (exit 1) unless allowed
    assert main(["collect", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "p1: invalid record" in captured.err and "1 of the grid's 3 point(s) have no valid record" in captured.err
    assert not (tmp_path / "collected.csv").exists()
    assert main(["collect", str(tmp_path), "--allow-missing"]) == 0
    captured = capsys.readouterr()
    assert "warning: point" in captured.err and "2 point(s) ->" in captured.out
    assert "(2 of the grid's 3 points; cite" in captured.out
    assert main(["collect", str(tmp_path), "--strict"]) == 1


@pytest.mark.notebooks
def test_dask_sweep_equals_serial_sweep(tmp_path):
    grid = ["-p", "seed=0:3", "-p", "n_datasets=10", "-p", "n_samples=200", "--profile", "smoke"]
    assert main(["sweep", NB, *grid, "--out", str(tmp_path / "serial"), "--jobs", "1"]) == 0
    assert main(["sweep", NB, *grid, "--out", str(tmp_path / "dask"), "--jobs", "2", "--scheduler", "local"]) == 0
    assert main(["collect", str(tmp_path / "serial")]) == 0
    assert main(["collect", str(tmp_path / "dask")]) == 0
    serial = (tmp_path / "serial" / "collected.csv").read_bytes()
    assert serial == (tmp_path / "dask" / "collected.csv").read_bytes()
    assert serial.count(b"\n") == 4  # header + 3 points


@pytest.mark.notebooks
def test_killed_worker_loses_nothing_and_resume_completes(tmp_path):
    """Kill a joblib worker while it executes a point (no retries): the death is not charged to the
    points that were running beside it (issue 18, item 4): they run again one at a time, the one
    that was killed too, since it does not die alone; no partial record is left, and re-running the
    command finds every point done and touches nothing."""
    import psutil

    out = tmp_path / "sweep"
    cmd = sweep_tasks.small_sweep_command(out, "--jobs", "2", "--retries", "0")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    victim = None
    deadline = time.time() + 120
    while victim is None and time.time() < deadline and proc.poll() is None:
        for child in psutil.Process(proc.pid).children(recursive=True):
            try:
                # a worker that is running a point has a kernel process below it
                if "loky" in " ".join(child.cmdline()) and child.children():
                    victim = child
                    break
            except psutil.NoSuchProcess:
                pass
        time.sleep(0.2)
    assert victim is not None, "no busy worker found to kill"
    victim.send_signal(signal.SIGKILL)
    output, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, output
    assert "0 failed" in output

    base = out / "primer" / "02_seeing_and_doing"

    def recorded():
        return {p.parent.name: p.stat().st_mtime_ns for p in base.glob("*/record.json")}

    before = recorded()
    assert len(before) == 4
    for rec in base.glob("*/record.json"):
        records.load_record(rec)  # every record that exists is complete and valid
    assert not list(base.rglob("*.tmp")) and not list(base.glob("*/.work-*"))

    again = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "4 already done, 0 to run" in again.stdout
    after = recorded()
    assert len(after) == 4
    assert all(after[k] == v for k, v in before.items())  # existing records untouched, none duplicated
    ids = [json.loads((base / pid / "point.json").read_text())["parameters"]["seed"] for pid in after]
    assert sorted(ids) == [0, 1, 2, 3]


@pytest.mark.notebooks
def test_dask_worker_with_two_threads_files_every_record_under_its_point(tmp_path, monkeypatch):
    """Issue 18, item 1: two points executing at once in one worker process (a Dask worker with two
    threads) must not share a working directory or environment: every point's record is its own,
    nothing lands in the checkout, and the relative --out is resolved once, in the caller."""
    from distributed import LocalCluster

    from causalbandits_lib.book import paths

    nb = "primer/01_bandits_and_regret"
    before = {p for p in (paths.notebooks_dir() / "primer").rglob("*")}
    monkeypatch.chdir(tmp_path)
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=True, host="127.0.0.1", dashboard_address=None
    ) as cluster:
        code = main(
            ["sweep", nb, "-p", "seed=0:4", "-p", "T=200", "-p", "n_runs=4", "--profile", "smoke"]
            + ["--out", "out", "--scheduler", cluster.scheduler_address, "--retries", "0"]
        )
    assert code == 0
    base = tmp_path / "out" / "primer" / "01_bandits_and_regret"
    seeds = []
    for point in sorted(base.glob("*/point.json")):
        wanted = json.loads(point.read_text())
        rec = records.load_record(point.parent / "record.json")
        assert rec["notebook"] == nb and rec["parameters"] == wanted["parameters"], point.parent.name
        seeds.append(rec["parameters"]["seed"])
    assert sorted(seeds) == [0, 1, 2, 3]
    table, problems = collect(tmp_path / "out")
    assert not problems and sorted(table["seed"]) == [0, 1, 2, 3]
    assert {p for p in (paths.notebooks_dir() / "primer").rglob("*")} == before  # nothing in the checkout


def test_collect_summary_gives_each_claims_share_and_each_metrics_interval_over_seeds(tmp_path, capsys):
    from causalbandits_lib.book.cli import main
    from causalbandits_lib.book.sweep import summarise

    for seed, (value, verdict) in enumerate(
        [(1.0, "reproduced"), (2.0, "reproduced"), (3.0, "partly"), (4.0, "reproduced")]
    ):
        rec = fake_record(
            parameters={"profile": "smoke", "seed": seed, "T": 10},
            metrics={"m.x": value},
            claims=[{"id": "primer.a.b", "statement": "s", "verdict": verdict, "reason": "r", "criterion": "c"}],
        )
        records.write_record(rec, tmp_path / "sweep" / f"seed={seed}" / "record.json")
    table, problems = collect(tmp_path / "sweep")
    assert not problems and list(table["verdict:primer.a.b"]) == ["reproduced", "reproduced", "partly", "reproduced"]
    assert {"commit", "library", "data", "results_hash"} <= set(table.columns)
    summary = summarise(table).set_index("name")
    assert summary.loc["primer.a.b", "value"] == 0.75 and summary.loc["primer.a.b", "points"] == 4
    # mean 2.5, sd 1.2910, t(0.975, 3) = 3.1824: half-width 3.1824 * 1.2910 / 2 = 2.0543
    assert summary.loc["m.x", "value"] == 2.5
    assert summary.loc["m.x", "low"] == pytest.approx(2.5 - 2.0543, abs=1e-3)
    assert summary.loc["m.x", "high"] == pytest.approx(2.5 + 2.0543, abs=1e-3)
    assert main(["collect", str(tmp_path / "sweep"), "--summary"]) == 0
    assert "primer.a.b (T=10): reproduced at 75% of 4 point(s)" in capsys.readouterr().out
    assert (tmp_path / "sweep" / "collected.summary.csv").is_file()


def test_point_folders_are_readable_and_unique():
    from causalbandits_lib.book.sweep import point_folder

    spec = find_notebook_spec("primer/01_bandits_and_regret")
    a = point_folder(spec, {"profile": "smoke", "seed": 3, "arm_means": [0.9, 0.5]})
    b = point_folder(spec, {"profile": "smoke", "seed": 3, "arm_means": [0.9, 0.4]})
    assert a.startswith("arm_means=[0.9,0.5],seed=3--") and a.endswith(
        point_id(spec, {"profile": "smoke", "seed": 3, "arm_means": [0.9, 0.5]})
    )
    assert a != b and "/" not in a and " " not in a


def _valid_record_of(spec, given, folder: Path) -> None:
    """A record of the point that resume accepts (this commit, this library code, no stand-in)."""
    from causalbandits_lib.book import paths, provenance

    values, _ = spec.resolve(given)
    rec = fake_record(
        notebook=spec.id,
        parameters=values,
        git=provenance.git_info(paths.book_root()),
        library=provenance.library_fingerprint(["causalbandits_lib.core.checks"]),
    )
    records.write_record(rec, folder / "record.json")


def test_a_point_another_sweep_is_running_is_waited_for_then_skipped_not_failed(tmp_path, monkeypatch):
    """Issue 34, item 4: two sweeps into one --out; the second met the first's lock, reported a
    PointBusyError failure, and re-ran points the first had finished. Now it waits for the lock,
    finds the record the other one wrote, and keeps it."""
    import threading

    from causalbandits_lib.book import execution
    from causalbandits_lib.book.sweep import point_folder, point_lock, run_sweep

    def must_not_run(*args, **kwargs):
        raise AssertionError("the point was executed again")

    monkeypatch.setattr(execution, "execute_notebook", must_not_run)
    spec = find_notebook_spec(NB)
    given = {"profile": "smoke", "seed": 0}
    folder = (tmp_path / "out" / spec.chapter / spec.name / point_folder(spec, given)).resolve()
    locked, release = threading.Event(), threading.Event()

    def other_sweep():
        with point_lock(folder):
            locked.set()
            release.wait(30)
            _valid_record_of(spec, given, folder)

    other = threading.Thread(target=other_sweep)
    other.start()
    assert locked.wait(30)
    timer = threading.Timer(1.0, release.set)
    timer.start()
    lines: list[str] = []
    report = run_sweep(spec, [given], tmp_path / "out", jobs=1, retries=0, log=lines.append)
    other.join(30)
    assert report.failed == {} and report.done == [] and report.skipped == [folder.name], lines
    assert any("skipped: recorded meanwhile by another process" in line for line in lines)
    records.load_record(folder / "record.json")


@pytest.mark.notebooks
def test_two_sweeps_into_one_out_run_each_point_once_and_neither_fails(tmp_path):
    """Issue 34, item 4, end to end: the same sweep started twice at once into one --out."""
    out = tmp_path / "sweep"
    cmd = sweep_tasks.small_sweep_command(out, "--retries", "0")
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(1.0)
    second = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    outputs = [p.communicate(timeout=600)[0] for p in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, outputs
    assert all("0 failed" in o and "PointBusyError" not in o for o in outputs), outputs
    assert sum(o.count(" done in ") for o in outputs) == 4, outputs  # every point executed once
    base = out / "primer" / "02_seeing_and_doing"
    assert len(list(base.glob("*/record.json"))) == 4
    assert main(["collect", str(out)]) == 0


def test_an_interrupted_sweep_removes_staging_once_a_stopping_worker_releases_its_lock(tmp_path):
    """A point whose lock a stopping worker still holds for a moment is cleaned once it is released;
    one whose lock stays held (a live process) keeps its staging."""
    import threading

    from causalbandits_lib.book import sweep as S

    slow, held = tmp_path / "slow", tmp_path / "held"
    for folder in (slow, held):
        (folder / ".work-abc").mkdir(parents=True)
    released = threading.Event()

    def hold(folder, seconds):
        with S.point_lock(folder):
            released.wait(seconds)

    t1 = threading.Thread(target=hold, args=(slow, 0.5))
    t1.start()
    time.sleep(0.1)
    S._remove_staged_after_interrupt([slow], grace=5.0)
    t1.join()
    assert not list(slow.glob(".work-*"))
    t2 = threading.Thread(target=hold, args=(held, 3.0))
    t2.start()
    time.sleep(0.1)
    S._remove_staged_after_interrupt([held], grace=0.5)
    assert list(held.glob(".work-*"))
    released.set()
    t2.join()
