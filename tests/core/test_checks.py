"""Verdict checks: each can pass and each can fail."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.book.claims import Claim
from causalbandits_lib.core import checks


def test_at_most_and_at_least_both_ways():
    assert checks.check_at_most(1.0, 2.0).verdict == "reproduced"
    assert checks.check_at_most(3.0, 2.0).verdict == "not reproduced"
    assert checks.check_at_least(3.0, 2.0).verdict == "reproduced"
    assert checks.check_at_least(1.0, 2.0).verdict == "not reproduced"
    v = checks.check_at_most(3.0, 2.0, "regret", "bound")
    assert v.reason == "regret = 3 > bound = 2"


def test_close_with_partly_band():
    assert checks.check_close(105, 100, rel_tol=0.1).verdict == "reproduced"
    assert checks.check_close(115, 100, rel_tol=0.1, partly_factor=2).verdict == "partly"
    assert checks.check_close(150, 100, rel_tol=0.1, partly_factor=2).verdict == "not reproduced"
    assert checks.check_close(0.01, 0.0, rel_tol=0.1, abs_tol=0.02).verdict == "reproduced"


def test_order_counts_pairs():
    vals = {"UCB": 500, "C-UCB": 340, "D-UCB": 290}
    assert checks.check_order(vals, ["UCB", "C-UCB", "D-UCB"]).verdict == "reproduced"
    assert checks.check_order(vals, ["UCB", "D-UCB", "C-UCB"]).verdict == "partly"
    assert checks.check_order(vals, ["D-UCB", "C-UCB", "UCB"]).verdict == "not reproduced"
    assert checks.check_order(vals, ["D-UCB", "C-UCB"], descending=False).verdict == "reproduced"
    with pytest.raises(KeyError):
        checks.check_order(vals, ["UCB", "F-UCB"])


def test_mean_below_has_three_outcomes():
    assert checks.check_mean_below([1.0, 1.1, 0.9, 1.0], 2.0).verdict == "reproduced"
    assert checks.check_mean_below([3.0, 3.1, 2.9, 3.0], 2.0).verdict == "not reproduced"
    assert checks.check_mean_below([1.0, 3.0, 2.0, 2.5], 2.0).verdict == "partly"


def test_all_and_not_testable():
    assert checks.check_all({"a": True, "b": True}).verdict == "reproduced"
    assert checks.check_all({"a": True, "b": False}).verdict == "partly"
    assert checks.check_all({"a": False}).verdict == "not reproduced"
    assert checks.not_testable("figure missing").verdict == "not testable here"
    with pytest.raises(ValueError):
        checks.not_testable(" ")
    with pytest.raises(ValueError):
        checks.check_all({})


def test_claim_validation():
    v = checks.check_at_most(1, 2)
    c = Claim.from_verdict("fucb.table1.cell", "statement", 1.5, 1.0, v)
    assert c.to_dict()["verdict"] == "reproduced"
    with pytest.raises(ValueError, match="dotted"):
        Claim.from_verdict("Bad Id", "s", None, None, v)
    with pytest.raises(ValueError, match="verdict"):
        Claim("fucb.x.y", "s", None, None, "maybe", "r", "c")


def test_paired_order_uses_paired_differences():
    """Orderings are judged on paired differences with their standard error (``cclb/04`` uses it)."""
    base = np.array([0.0, 10.0, -5.0, 3.0])
    order = checks.check_paired_order
    assert order({"a": base, "b": base + 1.0}, ["a", "b"]).verdict == "reproduced"  # constant shift: se 0
    assert order({"a": base + 1.0, "b": base}, ["a", "b"]).verdict == "not reproduced"
    noisy = base + np.array([1.0, -1.0, 1.5, -1.4])
    assert order({"a": base, "b": noisy}, ["a", "b"]).verdict == "partly"  # within noise
    three = order({"a": base, "b": base + 1, "c": base}, ["a", "b", "c"])
    assert three.verdict == "partly"
