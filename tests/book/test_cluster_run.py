"""Issue 36, item 1: ``run`` and ``verify`` on a Dask cluster (``--scheduler``). The notebook runs
on a worker, which sends its executed notebook and record back; they are written where the command
runs, checked first. The cluster here is the issue's: a scheduler, two single-thread workers and
one two-thread worker, on 127.0.0.1, each worker a process of its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from causalbandits_lib.book import cluster as cluster_module
from causalbandits_lib.book import paths
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.execution import Detached, ExecutionError, execute_detached, write_detached
from causalbandits_lib.book.records import load_record

from .scheduler_tasks import alive

NB = "primer/01_bandits_and_regret"
SMOKE = ["--profile", "smoke", "--no-progress"]


@pytest.fixture(scope="module")
def cluster():
    """Scheduler + workers of 1, 1 and 2 threads (processes, so that one can be killed)."""
    from distributed import Nanny, Scheduler, SpecCluster

    spec = {
        name: {"cls": Nanny, "options": {"nthreads": n, "host": "127.0.0.1", "dashboard_address": None}}
        for name, n in (("one-a", 1), ("one-b", 1), ("two", 2))
    }
    c = SpecCluster(
        scheduler={"cls": Scheduler, "options": {"host": "127.0.0.1", "dashboard_address": "127.0.0.1:0"}},
        workers=spec,
    )
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def serial(tmp_path_factory):
    """The smoke record of ``NB`` run here, serially: what the cluster's must equal."""
    out = tmp_path_factory.mktemp("serial")
    assert main(["run", NB, *SMOKE, "--out", str(out)]) == 0
    return load_record(out / "primer" / "01_bandits_and_regret.json")


def test_run_on_a_cluster_writes_here_the_serial_runs_record(cluster, serial, tmp_path, capsys):
    out, rec = tmp_path / "out", tmp_path / "rec"
    code = main(
        ["run", NB, *SMOKE, "--out", str(out), "--record-dir", str(rec), "--scheduler", cluster.scheduler_address]
    )
    text = capsys.readouterr().out
    assert code == 0, text
    assert "3 worker(s), 4 thread(s)" in text
    record = load_record(rec / "primer" / "01_bandits_and_regret.json")
    assert record["results_hash"] == serial["results_hash"]
    assert (out / "primer" / "01_bandits_and_regret.ipynb").is_file()
    # the run's output names the record where it was written, not a worker's temporary folder
    ipynb = json.loads((out / "primer" / "01_bandits_and_regret.ipynb").read_text())
    printed = "".join("".join(o.get("text", "")) for c in ipynb["cells"] for o in c.get("outputs", []))
    assert f"record written to {(rec / 'primer' / '01_bandits_and_regret.json').resolve()}" in printed
    assert "causalbandits-detached-" not in printed


def test_verify_on_a_cluster_of_two_committed_records(cluster, tmp_path, capsys):
    """Two of the quickest committed paper-scale records, re-run on the cluster and compared here."""
    records = [paths.paper_results_dir() / "synthesis" / f"{n}.json" for n in ("01_hypotheses", "02_one_problem")]
    code = main(["verify", *map(str, records), "--scheduler", cluster.scheduler_address, "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert code == 0, text
    assert "2 record(s) verified: 2 ok, 0 differ" in text
    for path in records:
        assert load_record(tmp_path / "synthesis" / path.name)["results_hash"] == load_record(path)["results_hash"]


def _worker_pid_running(address: str, timeout: float = 60.0) -> int:
    """The process id of the worker that is running a task, as soon as one is."""
    from distributed import Client

    deadline = time.time() + timeout
    with Client(address, timeout=10) as client:
        while time.time() < deadline:
            busy = [w for w, tasks in client.processing().items() if tasks]
            if busy:
                return client.run(os.getpid, workers=busy[:1])[busy[0]]
            time.sleep(0.2)
    raise AssertionError("no worker started the task")


@pytest.mark.timeout(300)
def test_killing_the_worker_of_a_running_notebook_loses_nothing(cluster, serial, tmp_path):
    """The command runs in a child process; the worker that took its notebook is killed (SIGKILL)
    while it runs: the task runs again on another worker and the record is the serial run's."""
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "causalbandits_lib.book.cli", "run", NB, *SMOKE, "--out", str(out)]
    proc = subprocess.Popen(
        [*cmd, "--scheduler", cluster.scheduler_address], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        pid = _worker_pid_running(cluster.scheduler_address)
        time.sleep(1.0)  # the kernel is executing cells
        os.kill(pid, signal.SIGKILL)
        stdout, _ = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, stdout
    assert not alive(pid), "the worker that ran the notebook was killed"
    record = load_record(out / "primer" / "01_bandits_and_regret.json")
    assert record["results_hash"] == serial["results_hash"]


def test_an_unreachable_scheduler_is_one_line_and_exit_2_before_anything_runs(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cluster_module, "CONNECT_TIMEOUT", 1.0)
    out = tmp_path / "out"
    code = main(["run", NB, *SMOKE, "--out", str(out), "--scheduler", "tcp://127.0.0.1:9"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert len(err) == 1 and "--scheduler tcp://127.0.0.1:9" in err[0] and "no Dask scheduler answered" in err[0]
    assert not any(p.is_file() for p in out.rglob("*"))


def test_an_empty_scheduler_address_is_refused():
    with pytest.raises(cluster_module.SchedulerError, match="give a Dask scheduler address"):
        cluster_module.describe_scheduler("  ")
    assert cluster_module.describe_scheduler("local", jobs=3).line().startswith("a local Dask cluster of 3")


def test_a_detached_record_is_checked_before_anything_is_written(serial, tmp_path):
    """write_detached refuses a record of other parameters (a task sent back for the wrong point)
    and writes nothing; the right one goes in with its notebook."""
    done = execute_detached(NB, {"profile": "smoke"})
    assert json.loads(done.record)["results_hash"] == serial["results_hash"]
    wrong = Detached(done.notebook, {"profile": "smoke", "seed": 1}, done.ipynb, done.record, done.seconds, done.host)
    with pytest.raises(ExecutionError, match="other parameters"):
        write_detached(wrong, tmp_path / "out", tmp_path / "rec")
    assert not [p for p in tmp_path.rglob("*") if p.is_file()]
    written = write_detached(done, tmp_path / "out", tmp_path / "rec")
    assert written.record == (tmp_path / "rec" / "primer" / "01_bandits_and_regret.json").resolve()
    assert load_record(written.record)["results_hash"] == serial["results_hash"] and written.output.is_file()
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == [
        "01_bandits_and_regret.ipynb",
        "01_bandits_and_regret.json",
    ]


def test_a_record_made_by_other_code_on_a_worker_is_refused(tmp_path):
    """A worker whose checkout differs (here: one module's hash in the record changed, as a worker at
    another commit would record it, with the record's own hashes made consistent) is named, and
    nothing is written."""
    from causalbandits_lib.book import records

    done = execute_detached(NB, {"profile": "smoke"})
    rec = json.loads(done.record)
    rec["library"]["modules"]["causalbandits_lib.core.runner"] = "0" * 64
    staged = tmp_path / "staged.json"
    records.write_record({k: v for k, v in rec.items() if k not in ("results_hash", "content_hash")}, staged)
    other = Detached(done.notebook, done.parameters, done.ipynb, staged.read_text(), done.seconds, "elsewhere")
    with pytest.raises(ExecutionError, match=r"made on elsewhere ran other code .*causalbandits_lib\.core\.runner"):
        write_detached(other, tmp_path / "out")
    assert not (tmp_path / "out" / "primer").exists() or not any((tmp_path / "out").rglob("*.json"))


def test_a_sweep_point_sent_back_by_a_worker_is_placed_once(tmp_path):
    """sweep and sensitivity on a cluster: the point comes back and is written into its folder here;
    one already recorded meanwhile (by another sweep into the same --out) is kept, not overwritten."""
    from causalbandits_lib.book.sweep import place_point

    done = execute_detached(NB, {"profile": "smoke"})
    folder = tmp_path / "point"
    folder.mkdir()
    first = place_point(done, folder)
    assert "skipped" not in first and first["host"] == done.host
    assert load_record(folder / "record.json")["results_hash"] == json.loads(done.record)["results_hash"]
    assert (folder / "notebook.ipynb").is_file()
    before = (folder / "record.json").stat().st_mtime_ns
    assert place_point(done, folder)["skipped"] == "recorded meanwhile by another process"
    assert (folder / "record.json").stat().st_mtime_ns == before
