"""Curves and slopes as records keep them."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core import curves


def test_curve_summary_is_small_and_exact_at_the_end():
    values = np.ones((4, 5000))
    s = curves.summarise_curve(values, n_points=200)
    assert len(s["t"]) <= 201 and s["t"][-1] == 5000 and s["t"][0] == 1
    assert s["mean"][-1] == 5000 and s["sd"][-1] == 0 and s["n_runs"] == 4


def test_checkpoint_summary_equals_the_per_round_summary_at_the_same_rounds():
    rng = np.random.default_rng(0)
    values = rng.random((5, 300))
    t = curves.curve_points(300, 50)
    direct = curves.summarise_curve(values, n_points=50)
    from_sums = curves.summarise_checkpoints(t, np.cumsum(values, axis=1)[:, t - 1])
    for key in ("t", "mean", "sd", "q05", "q95", "n_runs"):
        assert from_sums[key] == direct[key]


@pytest.mark.parametrize("rate", [0.5, 1.0, 0.8])
def test_loglog_slope_recovers_a_power_law(rate):
    t = np.arange(1, 10_001, dtype=float)
    slope, intercept = curves.loglog_slope(t, 3.0 * t**rate, t_min=5000)
    assert slope == pytest.approx(rate, abs=1e-9) and intercept == pytest.approx(np.log(3.0), abs=1e-6)


def test_loglog_slope_needs_two_points():
    with pytest.raises(ValueError, match="at least two positive points"):
        curves.loglog_slope(np.array([1.0, 2.0]), np.array([0.0, 1.0]))
