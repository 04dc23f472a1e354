"""Issue 34, the last items: an interrupted ``--scheduler`` sweep stops the kernels on its Dask
workers (item 6); ``run --jobs`` keeps Ctrl-C from its workers as a sweep does; ``run --html``
without the book's MathJax is refused; ``run_point`` waits for a busy point by default, as
``run_sweep`` does."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

import pytest

from causalbandits_lib.book import records
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import find_notebook_spec
from causalbandits_lib.core.parallel import map_tasks

from . import scheduler_tasks, sweep_tasks
from .fake import fake_record
from .scheduler_tasks import alive

NB = "primer/02_seeing_and_doing"


@pytest.fixture
def remote_cluster():
    """A Dask cluster whose worker is a thread of this process (on TCP): it outlives the command
    and the client, as a remote cluster does, so what an interrupted client leaves running on it
    can be seen."""
    from distributed import LocalCluster

    cluster = LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        protocol="tcp",  # reachable from a command run in a child process
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
    )
    try:
        yield cluster
    finally:
        cluster.close()


def _sigint_when(condition, timeout: float = 60.0) -> threading.Thread:
    def fire():
        deadline = time.time() + timeout
        while time.time() < deadline and not condition():
            time.sleep(0.1)
        os.kill(os.getpid(), signal.SIGINT)

    t = threading.Thread(target=fire, daemon=True)
    t.start()
    return t


# ---------------------------------------------------------------------------- item a (6 with --scheduler)
@pytest.mark.timeout(90)
def test_an_interrupted_dask_map_kills_what_its_running_task_started_and_writes_nothing(tmp_path, remote_cluster):
    """Before: the client cancelled the futures and returned, while the worker's thread and its
    child (a kernel) went on, and the task wrote its record afterwards."""
    pidfile = tmp_path / "child.pid"
    # Ctrl-C as a terminal delivers it: Python's own handler, SIGINT not blocked in this thread (a
    # test run earlier in the same worker process must not decide whether this one can be interrupted)
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    try:
        _sigint_when(pidfile.exists)
        with pytest.raises(KeyboardInterrupt):
            map_tasks(
                scheduler_tasks.child_then_write,
                [{"folder": str(tmp_path)}],
                scheduler=remote_cluster.scheduler_address,
                retries=0,
            )
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        signal.signal(signal.SIGINT, handler)
    child = int(pidfile.read_text())
    assert not alive(child), "the task's child process still runs after the map returned"
    time.sleep(2)
    assert not (tmp_path / "record.json").exists()


def _kernels_below(pid: int) -> list[int]:
    import psutil

    out = []
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.Error:
        return out
    for k in kids:
        try:
            if "ipykernel" in " ".join(k.cmdline()) and k.status() != psutil.STATUS_ZOMBIE:
                out.append(k.pid)
        except psutil.Error:
            pass
    return out


@pytest.mark.notebooks
@pytest.mark.timeout(180)
@pytest.mark.parametrize("where", ["remote", "local"])
def test_ctrl_c_of_a_scheduler_sweep_stops_the_kernels_on_the_workers_and_no_record_appears(tmp_path, where, request):
    """Issue 34, item 6: with --scheduler, "workers stopped" was printed while the kernels on the
    Dask worker went on and wrote records afterwards."""
    address = request.getfixturevalue("remote_cluster").scheduler_address if where == "remote" else "local"
    out = tmp_path / "sweep"
    cmd = sweep_tasks.small_sweep_command(out, "--scheduler", address)
    cmd[cmd.index("smoke")] = "book"  # points long enough to be interrupted inside a cell
    proc = sweep_tasks.in_its_own_group(cmd)
    host = os.getpid() if where == "remote" else proc.pid  # the process whose worker runs the kernels
    deadline = time.time() + 90
    while time.time() < deadline and proc.poll() is None and not _kernels_below(host):
        time.sleep(0.1)
    kernels = _kernels_below(host)
    assert kernels, "no kernel started on the worker"
    time.sleep(1.0)  # inside a cell
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stdout + stderr
    assert stderr.count("\n") == 1 and "interrupted (Ctrl-C)" in stderr, stderr
    recorded = sorted(p.parent.name for p in out.rglob("record.json"))
    assert f"interrupted: {len(recorded)} point(s) finished" in stdout, stdout
    assert not [k for k in kernels if alive(k)], "a kernel on the worker still runs after the command returned"
    assert not _kernels_below(os.getpid())
    time.sleep(5)
    assert sorted(p.parent.name for p in out.rglob("record.json")) == recorded  # none appeared afterwards
    for point in (out / "primer" / "02_seeing_and_doing").iterdir():
        assert not list(point.glob(".work-*")), point


# ---------------------------------------------------------------------------- item b
def _wait_for_children(proc, word: str, timeout: float = 60.0) -> None:
    import psutil

    deadline = time.time() + timeout
    while time.time() < deadline and proc.poll() is None:
        try:
            if any(word in " ".join(k.cmdline()) for k in psutil.Process(proc.pid).children(recursive=True)):
                return
        except psutil.Error:
            pass
        time.sleep(0.05)
    raise AssertionError(f"no {word} process started")


@pytest.mark.notebooks
@pytest.mark.timeout(90)
def test_ctrl_c_while_run_jobs_starts_its_workers_is_one_line_and_says_what_finished(tmp_path):
    """``run --jobs`` (joblib) did not block Ctrl-C from its workers as a sweep does: workers still
    importing printed a KeyboardInterrupt traceback each, and nothing said what had finished."""
    cmd = [sys.executable, "-m", "causalbandits_lib.book.cli", "run", "primer", "--profile", "smoke"]
    proc = sweep_tasks.in_its_own_group([*cmd, "--jobs", "2", "--force", "--out", str(tmp_path / "o"), "--no-progress"])
    _wait_for_children(proc, "popen_loky")
    time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole foreground group
    stdout, stderr = proc.communicate(timeout=40)
    assert proc.returncode == 130, stdout + stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stderr.count("\n") == 1 and "interrupted (Ctrl-C)" in stderr, stderr
    finished = len(list((tmp_path / "o").rglob("*.json")))
    assert f"run interrupted: {finished} notebook(s) finished" in stdout, stdout


# ---------------------------------------------------------------------------- item c
def test_run_html_without_the_books_mathjax_is_refused_before_anything_runs(tmp_path, monkeypatch, capsys):
    """Before, the notebook ran and a page was written whose formulas show as raw TeX offline."""
    from causalbandits_lib.book import execution

    def must_not_run(*args, **kwargs):
        raise AssertionError("the notebook was executed")

    monkeypatch.setattr(execution, "html_mathjax", lambda: None)
    monkeypatch.setattr(execution, "execute_notebook", must_not_run)
    out = tmp_path / "o"
    assert main(["run", "primer/01", "--profile", "smoke", "--html", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "--html" in err and "tex-svg-full.js" in err and "make mathjax" in err, err
    assert not out.exists()  # nothing was written


# ---------------------------------------------------------------------------- item d
def test_run_point_waits_for_a_busy_point_by_default_as_run_sweep_does(tmp_path, monkeypatch):
    """``run_point`` defaulted to ``wait=False`` (a busy point raised PointBusyError) while
    ``run_sweep`` waits: a busy point is waited for, then its record kept, never a failure."""
    from causalbandits_lib.book import execution, paths, provenance
    from causalbandits_lib.book.sweep import point_lock, run_point

    def must_not_run(*args, **kwargs):
        raise AssertionError("the point was executed again")

    monkeypatch.setattr(execution, "execute_notebook", must_not_run)
    spec = find_notebook_spec(NB)
    given = {"profile": "smoke", "seed": 0}
    folder = (tmp_path / "point").resolve()
    locked, release = threading.Event(), threading.Event()

    def other():
        with point_lock(folder):
            locked.set()
            release.wait(30)
            values, _ = spec.resolve(given)
            rec = fake_record(
                notebook=spec.id,
                parameters=values,
                git=provenance.git_info(paths.book_root()),
                library=provenance.library_fingerprint(["causalbandits_lib.core.checks"]),
            )
            records.write_record(rec, folder / "record.json")

    t = threading.Thread(target=other)
    t.start()
    assert locked.wait(30)
    threading.Timer(1.0, release.set).start()
    result = run_point(NB, given, str(folder))  # the default, as run_sweep calls it
    t.join(30)
    assert result.get("skipped") == "recorded meanwhile by another process", result
