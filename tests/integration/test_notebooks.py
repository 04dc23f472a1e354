"""Every notebook executes through papermill at the smoke profile, then nbval re-executes the
executed copy and compares the cells tagged ``nbval-check-output``: the seeded key numbers must
come out the same."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from causalbandits_lib.book.records import load_record
from causalbandits_lib.core.checks import VERDICTS

from .notebook_support import SMOKE_DIR, all_notebooks, execute_smoke

NOTEBOOKS = all_notebooks()


@pytest.mark.notebooks
@pytest.mark.parametrize("spec", NOTEBOOKS, ids=[nb.id for nb in NOTEBOOKS])
def test_notebook_executes_and_reexecution_reproduces(spec, tmp_path):
    result = execute_smoke(spec)
    rec = load_record(result.record)
    assert rec["notebook"] == spec.id and rec["profile"] == "smoke"
    assert rec["claims"], "a notebook must register at least one claim"
    assert all(c["verdict"] in VERDICTS for c in rec["claims"])
    assert rec["metrics"], "a notebook must record metrics"

    env = dict(os.environ, CAUSALBANDITS_RECORD_DIR=str(tmp_path / "nbval-records"))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "--nbval-lax",
            "-p",
            "no:cacheprovider",
            "-q",
            "--nbval-cell-timeout=900",
            str(result.output),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=SMOKE_DIR,
        timeout=1800,
    )
    assert proc.returncode == 0, (
        f"nbval found differences on re-execution:\n{proc.stdout[-4000:]}\n{proc.stderr[-2000:]}"
    )
    # the re-execution wrote an identical record, metric for metric
    again = load_record(tmp_path / "nbval-records" / spec.chapter / f"{spec.name}.json")
    assert again["metrics"] == rec["metrics"]
    assert [c["verdict"] for c in again["claims"]] == [c["verdict"] for c in rec["claims"]]
