"""Issue 18, item 4: interrupts stop everything (exit 130 / 143, nothing partial at final paths,
a line saying what was finished), and a worker's death is charged to the point that died only."""

from __future__ import annotations

import signal
import subprocess
import time

import pytest

from causalbandits_lib.core.parallel import map_tasks

from . import sweep_tasks

NB = "primer/02_seeing_and_doing"


def test_ctrl_c_in_a_serial_task_is_not_retried_but_stops_the_map():
    calls = []

    def on_done(o):
        calls.append(o)

    with pytest.raises(KeyboardInterrupt):
        map_tasks(sweep_tasks.interrupt, [{"value": 1}, {"value": 2}], retries=2, on_done=on_done)
    assert calls == []  # no attempt was charged, nothing reported as done or failed


def test_a_dead_worker_is_charged_only_to_its_own_task(tmp_path):
    tasks = [{"value": 0}, {"value": 1, "seconds": 3.0}]
    out = map_tasks(sweep_tasks.die_or_sleep, tasks, jobs=2, retries=0)
    assert not out[0].ok and "worker died" in out[0].error and out[0].attempts == 1
    assert out[1].ok and out[1].result == 1 and out[1].attempts == 1  # its neighbour is not charged


def _wait_for_kernel(proc, timeout=120):
    import psutil

    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        kids = psutil.Process(proc.pid).children(recursive=True)
        for k in kids:
            try:
                if "ipykernel" in " ".join(k.cmdline()):
                    return kids
            except psutil.Error:
                pass
        time.sleep(0.2)
    raise AssertionError("no kernel started")


@pytest.mark.notebooks
@pytest.mark.parametrize("sig, code, extra", [(signal.SIGINT, 130, []), (signal.SIGTERM, 143, ["--jobs", "2"])])
def test_an_interrupted_sweep_stops_its_workers_and_says_what_finished(tmp_path, sig, code, extra):
    import psutil

    out = tmp_path / "sweep"
    cmd = sweep_tasks.small_sweep_command(out, *extra)
    # Ctrl-C as a terminal delivers it: SIGINT at its default disposition in the child. A test run
    # started in the background by a non-interactive shell inherits SIGINT ignored (POSIX), and
    # Python then keeps ignoring it, as a background job should.
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    kids = _wait_for_kernel(proc)
    proc.send_signal(sig)
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == code, output
    assert "interrupted" in output and "0 failed" not in output
    assert "point(s) finished" in output
    time.sleep(1)

    def alive(k):
        try:
            return k.is_running() and k.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    assert not [k.pid for k in kids if alive(k)]
    base = out / "primer" / "02_seeing_and_doing"
    for point in base.iterdir():
        assert not list(point.glob(".work-*")), point  # no staging folder left behind
        assert (point / "record.json").exists() == (point / "notebook.ipynb").exists()


# ---------------------------------------------------------------------------- issue 34, item 6
def _in_its_own_group(cmd):
    return sweep_tasks.in_its_own_group(cmd)


def _ctrl_c(proc):
    import os

    os.killpg(proc.pid, signal.SIGINT)
    return proc.communicate(timeout=25)


def _sweep_of(out, seeds):
    cmd = sweep_tasks.small_sweep_command(out, "--jobs", "2")
    cmd[cmd.index("seed=0:4")] = f"seed=0:{seeds}"
    return cmd


@pytest.mark.notebooks
@pytest.mark.timeout(60)
def test_ctrl_c_counts_every_point_whose_record_is_in_place(tmp_path):
    # the process pool reports its points in batches: points already recorded were counted as not finished
    out = tmp_path / "sweep"
    proc = _in_its_own_group(_sweep_of(out, 8))
    deadline = time.time() + 25
    while time.time() < deadline and proc.poll() is None and not list(out.rglob("record.json")):
        time.sleep(0.1)
    assert list(out.rglob("record.json")), "no point finished in time"
    stdout, stderr = _ctrl_c(proc)
    assert proc.returncode == 130, stdout + stderr
    records = len(list(out.rglob("record.json")))
    assert f"interrupted: {records} point(s) finished in this run" in stdout, (records, stdout)
    assert "Traceback" not in stderr, stderr


@pytest.mark.notebooks
@pytest.mark.timeout(60)
def test_ctrl_c_while_the_workers_start_prints_one_line_and_no_traceback(tmp_path):
    import psutil

    proc = _in_its_own_group(_sweep_of(tmp_path / "sweep", 4))
    deadline = time.time() + 20
    workers = []
    while time.time() < deadline and proc.poll() is None and not workers:
        try:
            kids = psutil.Process(proc.pid).children(recursive=True)
            workers = [k for k in kids if "popen_loky" in " ".join(k.cmdline())]
        except psutil.Error:
            pass
        time.sleep(0.05)
    assert workers, "no worker started"
    stdout, stderr = _ctrl_c(proc)  # the workers are still importing
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stderr.count("\n") == 1 and "interrupted (Ctrl-C)" in stderr, stderr


@pytest.mark.notebooks
@pytest.mark.timeout(60)
def test_sigterm_during_run_is_one_line_and_leaves_no_kernel_files(tmp_path):
    import glob
    import sys
    import tempfile

    before = set(glob.glob(f"{tempfile.gettempdir()}/tmp*.json"))
    cmd = [sys.executable, "-m", "causalbandits_lib.book.cli", "run", "primer/01", "--profile", "book"]
    proc = _in_its_own_group([*cmd, "--out", str(tmp_path / "o"), "--no-progress"])
    _wait_for_kernel(proc, timeout=20)
    time.sleep(3)  # inside a cell of the notebook
    proc.send_signal(signal.SIGTERM)  # the command alone, as `kill` sends it
    stdout, stderr = proc.communicate(timeout=25)
    assert proc.returncode == 143, stdout + stderr
    assert stderr.count("\n") == 1 and "interrupted by SIGTERM" in stderr, stderr  # no ZMQError, no asyncio task
    assert set(glob.glob(f"{tempfile.gettempdir()}/tmp*.json")) <= before  # no kernel connection file left
    assert not glob.glob(f"{tempfile.gettempdir()}/causalbandits-kernel-{proc.pid}-*")  # nor its socket folder
    assert not (tmp_path / "o" / "primer" / "01_bandits_and_regret.json").exists()
