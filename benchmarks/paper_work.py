"""Where the paper profile's time goes: every (environment, policy) pair its records simulated.

Each committed paper-scale record (``results/paper/<chapter>/<notebook>.json``) keeps, under
``timings.simulations``, one row per (environment, policy, backend) the execution simulated (the
runner's work ledger, worker processes included): calls, run-steps and seconds. This lists them
all, the most expensive first, with their share of the notebook's wall time and of the book's, and
flags what issue 30 asks to compile: a pair on the numpy path costing more than
:data:`NUMPY_LIMIT` seconds of the paper profile.
"""

from __future__ import annotations

import json
from pathlib import Path

__all__ = ["NUMPY_LIMIT", "paper_work"]

#: Seconds of the paper profile above which a pair still on the numpy path is flagged.
NUMPY_LIMIT = 10.0


def paper_work(record_dir: Path) -> dict:
    """Rows ``{notebook, environment, policy, backend, calls, run_steps, seconds, share_of_notebook,
    share_of_book}`` over every record of ``record_dir``, and the records without the ledger."""
    rows, missing, total = [], [], 0.0
    for path in sorted(Path(record_dir).glob("*/*.json")):
        rec = json.loads(path.read_text(encoding="utf-8"))
        timings = rec.get("timings", {})
        wall = float(timings.get("wall_seconds", 0.0))
        total += wall
        if "simulations" not in timings:
            missing.append(rec.get("notebook", path.stem))
            continue
        for r in timings["simulations"]:
            rows.append(dict(r, notebook=rec["notebook"], share_of_notebook=r["seconds"] / wall if wall else 0.0))
    for r in rows:
        r["share_of_book"] = r["seconds"] / total if total else 0.0
    rows.sort(key=lambda r: -r["seconds"])
    flagged = [r for r in rows if r["backend"] == "numpy" and r["seconds"] > NUMPY_LIMIT]
    return {"rows": rows, "book_seconds": total, "without_ledger": missing, "numpy_over_limit": flagged}
