"""Module-level task functions for tests/test_sweep.py (workers must be able to import them)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np


def seeded_mean(seed: int, n: int = 1000) -> float:
    """A deterministic function of its seed (stands in for a simulation)."""
    return float(np.random.default_rng(seed).random(n).mean())


def fail_once(marker: str, value: int) -> int:
    """Raises on the first call (creating ``marker``), succeeds afterwards."""
    path = Path(marker)
    if not path.exists():
        path.write_text("failed once")
        raise RuntimeError("first attempt fails on purpose")
    return value


def die_once(marker: str, value: int) -> int:
    """Kills its own worker process on the first call, succeeds afterwards."""
    path = Path(marker)
    if not path.exists():
        path.write_text("died once")
        os._exit(17)
    return value


def always_fails(value: int) -> int:
    raise ValueError(f"bad value {value}")


def interrupt(value: int) -> int:
    """Behaves like Ctrl-C arriving while the task runs."""
    raise KeyboardInterrupt


def die_or_sleep(value: int, seconds: float = 0.0) -> int:
    """Value 0 always kills its worker (after a short wait, so that its neighbour is already
    running); the others sleep ``seconds`` and return their value."""
    import time

    if value == 0:
        time.sleep(0.5)
        os._exit(17)
    time.sleep(seconds)
    return value


def small_sweep_command(out, *extra) -> list[str]:
    """The command line of a small smoke sweep of primer/02 (4 seeds, tiny data sets) into ``out``,
    run in a child process by the tests that interrupt or kill a sweep."""
    return [
        sys.executable,
        "-m",
        "causalbandits_lib.book.cli",
        "sweep",
        "primer/02_seeing_and_doing",
        "-p",
        "seed=0:4",
        "-p",
        "n_datasets=10",
        "-p",
        "n_samples=200",
        "--profile",
        "smoke",
        "--out",
        str(out),
        *extra,
    ]


def in_its_own_group(cmd: list[str]) -> subprocess.Popen:
    """``cmd`` as a terminal's foreground job: its own process group (Ctrl-C reaches every process
    of the group: the command, its workers and their kernels), SIGINT at its default."""
    return subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
