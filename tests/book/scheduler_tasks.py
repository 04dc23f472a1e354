"""Module-level task functions for tests/book/test_interrupts_scheduler.py (Dask workers import them)."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path


def child_then_write(folder: str) -> str:
    """Stands in for a notebook point on a Dask worker: starts a long child process (its kernel),
    registered to be killed when the task is cancelled, waits for it, then writes ``record.json``
    into ``folder`` unless the task was cancelled meanwhile."""
    from causalbandits_lib.core import parallel

    current = getattr(parallel, "current_cancellation", None)  # (absent before issue 34's fix)
    cancellation = current() if current else None
    child = subprocess.Popen(["sleep", "60"])
    Path(folder, "child.pid").write_text(str(child.pid))
    if cancellation is not None:
        cancellation.on_cancel(lambda: os.kill(child.pid, signal.SIGKILL))
    child.wait()
    if cancellation is not None:
        cancellation.check()
    Path(folder, "record.json").write_text("{}")
    return folder


def alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie does not)."""
    import psutil

    try:
        p = psutil.Process(pid)
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False
