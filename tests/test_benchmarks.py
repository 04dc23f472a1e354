"""The benchmark's bookkeeping: interleaved repetitions, their spread, and the paper-work table."""

from __future__ import annotations

import json

import pytest

from benchmarks.paper_work import NUMPY_LIMIT, paper_work
from benchmarks.timing import interleaved, ratio_spread, spread


def test_interleaved_calls_each_function_in_turn_and_once_only_once():
    calls = []
    seconds, out = interleaved(
        {"a": lambda: calls.append("a") or 1, "b": lambda: calls.append("b") or 2, "c": lambda: calls.append("c")},
        repeat=3,
        once=("c",),
    )
    assert calls == ["a", "b", "c", "a", "b", "a", "b"]
    assert [len(seconds[k]) for k in "abc"] == [3, 3, 1] and out["a"] == 1 and out["b"] == 2
    with pytest.raises(ValueError, match="repeat=0"):
        interleaved({"a": lambda: None}, 0)


def test_spread_is_median_and_range_and_ratios_pair_repetitions():
    assert spread([3.0, 1.0, 2.0, 10.0, 4.0]) == {"median": 3.0, "min": 1.0, "max": 10.0, "n": 5}
    # paired: (2/1, 6/2, 12/3); a single measurement pairs with every repetition
    assert ratio_spread([2.0, 6.0, 12.0], [1.0, 2.0, 3.0]) == {"median": 3.0, "min": 2.0, "max": 4.0, "n": 3}
    assert ratio_spread([6.0], [1.0, 2.0, 3.0])["max"] == 6.0


def test_paper_work_lists_every_pair_with_its_shares_and_flags_slow_numpy_pairs(tmp_path):
    def record(chapter, name, wall, sims):
        (tmp_path / chapter).mkdir(exist_ok=True)
        rec = {"notebook": f"{chapter}/{name}", "timings": {"wall_seconds": wall}}
        if sims is not None:
            rec["timings"]["simulations"] = sims
        (tmp_path / chapter / f"{name}.json").write_text(json.dumps(rec))

    row = dict(environment="Env", policy="P", calls=2, run_steps=100)
    record("a", "01", 100.0, [dict(row, backend="numpy", seconds=60.0), dict(row, backend="compiled", seconds=5.0)])
    record("b", "02", 100.0, [dict(row, backend="numpy", seconds=NUMPY_LIMIT / 2)])
    record("b", "03", 50.0, None)
    work = paper_work(tmp_path)
    assert work["book_seconds"] == 250.0 and work["without_ledger"] == ["b/03"]
    assert [(r["notebook"], r["seconds"]) for r in work["rows"]] == [("a/01", 60.0), ("a/01", 5.0), ("b/02", 5.0)]
    assert work["rows"][0]["share_of_notebook"] == 0.6 and work["rows"][0]["share_of_book"] == 0.24
    assert [(r["notebook"], r["backend"]) for r in work["numpy_over_limit"]] == [("a/01", "numpy")]
