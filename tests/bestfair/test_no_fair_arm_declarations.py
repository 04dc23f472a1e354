"""Theorem 2's experiment (experiments.no_fair_arm_declarations, notebook bestfair/03) on hand-made
identification results."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from causalbandits_lib.bestfair import experiments


def test_no_fair_arm_declarations_from_hand_made_results(monkeypatch):
    """Three runs, three phases, two arms: run 1 first certifies an arm in phase 2, run 2 never,
    run 3 in phase 1; at T=10 only run 2 declares "no fair arm", at T=20 runs 2 and 3."""
    fair_set = np.zeros((3, 3, 2), dtype=bool)
    fair_set[0, 1, 0] = fair_set[0, 2, 1] = True
    fair_set[2, 0, 1] = True
    chosen = {10: np.array([0, -1, 1]), 20: np.array([0, -1, -1])}
    calls = []

    def fake_identify(problem, name, T, tolerance, seed, n_runs, lp, estimator):
        calls.append((name, T))
        return SimpleNamespace(chosen=chosen[T], fair_set=fair_set)

    monkeypatch.setattr(experiments, "identify", fake_identify)
    declared, first = experiments.no_fair_arm_declarations(None, ("A", "B"), [10, 20], 0.1, 0, 3)
    assert calls == [("A", 10), ("A", 20), ("B", 10), ("B", 20)]
    assert declared["A"].tolist() == [[False, True, False], [False, True, True]]
    assert first["B"].tolist() == [2, 0, 1]
