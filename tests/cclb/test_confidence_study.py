"""The result objects of notebook cclb/02 (confidence_study), against hand-computed expectations
on tiny inputs and against the statements they measure on a short recorded run."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from causalbandits_lib.cclb import confidence as C
from causalbandits_lib.cclb import confidence_study as CS
from causalbandits_lib.cclb import theory as Th
from causalbandits_lib.cclb.model import THETA_STAR
from tests.recording_notebook import RecordingNotebook


def test_lemma7_check_properties_and_record_by_hand():
    check = CS.Lemma7Check(
        np.array([10, 20]),
        found=np.array([[1.0, 2.0], [3.0, 4.0]]),
        trivial=np.array([[10.0, 8.0], [12.0, 5.0]]),
        gamma=np.array([2.0, 4.0]),
        informative_from=None,
    )
    assert check.largest_found_over_gamma == pytest.approx(1.5)  # 3 / 2
    assert check.gamma_over_ball_bound_at_T == pytest.approx(0.8)  # 4 / min(8, 5)
    nb = RecordingNotebook()
    check.record(nb)
    assert nb.metrics == pytest.approx(
        {"lemma7.largest_found_over_gamma": 1.5, "lemma7.gamma_over_ball_bound_at_T": 0.8}
    )


def test_lemma7_check_on_played_data(played):
    X, y = played
    rounds = np.array([50, 400])
    check = CS.lemma7_check(X, y, rounds, 5.0, 0.05, 4.0, np.random.default_rng(1), THETA_STAR, n_random=8)
    # the MLE is one of the points: its distance to theta* in the H norm is a lower bound of what is found
    t = 400
    H = Th.analysis_gram(X[:, :, :t], THETA_STAR, 5.0)
    theta_hat = C.constrained_mle(
        C.LogisticData.from_observations(X[:, :, :t], y[:, :t]), 5.0, max_steps=200, tol=1e-13
    )[0]
    d = theta_hat - np.asarray(THETA_STAR)
    assert np.all(check.found[:, -1] >= np.sqrt(np.einsum("ri,rij,rj->r", d, H, d)) - 1e-9)
    np.testing.assert_allclose(check.trivial[:, -1], 2 * 5.0 * np.sqrt(np.linalg.eigvalsh(H)[:, -1]))
    np.testing.assert_allclose(check.gamma, Th.lemma7_radius(rounds + 1, 4, 5.0, 0.05, 4.0))
    assert check.found.shape == (2, 2)


def test_appendix_c_lemmas_by_hand_and_on_played_data(played):
    X, y = played
    rounds = np.array([10, 100, 400])
    lemmas = CS.appendix_c_lemmas(X, y, rounds, 5.0, 0.05, THETA_STAR)
    # Lemma 1 at t = 100, run 1, computed here directly
    p = 1 / (1 + np.exp(-np.asarray(THETA_STAR) @ X[1, :, :100]))
    u = X[1, :, :100] * np.sqrt(p * (1 - p))
    lam = C.analysis_ridge(5.0)
    logdet = np.linalg.slogdet(lam * np.eye(4) + u @ u.T)[1]
    assert lemmas.lemma1_slack[1, 1] == pytest.approx(4 * np.log(lam + 100 * 0.25 / 4) - logdet)
    # the statements themselves: they hold for every input
    assert lemmas.lemma1_slack.min() >= 0 and lemmas.lemma2_ratio.max() <= 1
    assert (lemmas.l3_left - lemmas.l3_right).min() >= -1e-12 and lemmas.kl_err <= 1e-9
    assert lemmas.freedman.shape == (2, 8)
    nb = RecordingNotebook()
    lemmas.record(nb)
    assert len(nb.metrics) == 6 and len(lemmas.summary().splitlines()) == 3


def test_freedman_missed_by_hand():
    lemmas = CS.AppendixCLemmas(*[np.zeros(1)] * 6, kl_err=0.0, freedman=np.array([[0.5, -1.0], [-0.1, -2.0]]))
    assert lemmas.freedman_missed == pytest.approx(0.25)


def test_fast_step_comparison_by_hand():
    compared = [
        {
            "exact_best": np.array([1.0, 2.0]),
            "exact_at_choice": np.array([1.0, 1.5]),
            "fast_at_choice": np.array([1.01, 2.0]),
            "quadratic": np.array([[0.0, 3.0], [1.0, 1.0]]),
            "exact": np.array([[0.5, 1.0], [1.0, 1.2]]),
        },
        {
            "exact_best": np.array([3.0, 4.0]),
            "exact_at_choice": np.array([3.0, 4.0]),
            "fast_at_choice": np.array([3.0, 3.9]),
            "quadratic": np.zeros((2, 2)),
            "exact": np.zeros((2, 2)),
        },
    ]
    fast = CS.fast_step_comparison(compared, [5, 9], 2)
    np.testing.assert_array_equal(fast.rounds, [5, 5, 9, 9])
    np.testing.assert_array_equal(fast.runs, [0, 1, 0, 1])
    assert fast.optimal_choice == pytest.approx(0.75)  # 1.5 < 2
    assert fast.value_error == pytest.approx(0.1)  # |3.9 - 4|
    np.testing.assert_allclose(fast.quadratic_error, [2.0, 0.2, 0.0, 0.0])
    nb = RecordingNotebook()
    fast.record(nb)
    assert nb.metrics["fast_step.rounds_compared"] == 4


def test_binned_loss_errors_against_a_shifted_loss(played):
    X, y = played
    raw = C.LogisticData.from_observations(X, y)
    shifted = SimpleNamespace(loss=lambda theta: raw.loss(theta) + 1.0)
    err = CS.binned_loss_errors(shifted, X, y, np.random.default_rng(0), 5.0)
    assert err.shape == (2, 200)
    np.testing.assert_allclose(err, 1.0, atol=1e-9)
    assert np.all(CS.binned_loss_errors(raw, X, y, np.random.default_rng(0), 5.0) == 0.0)


def test_mle_differences_are_small_and_one_per_round(played):
    X, y = played
    diffs = CS.mle_differences(X, y, 5.0, [20, 400])
    assert len(diffs) == 2 and max(diffs) < 1e-3
