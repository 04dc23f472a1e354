"""The runs and measurements of notebook ``cclb/02`` (the confidence set) as result objects.

- :func:`play_ofulog_plus`: OFULog+ runs that keep the played features and outcomes and compare the
  fast optimistic step with the exact one at chosen rounds (:class:`PlayedRuns`);
- :func:`mle_differences`: our constrained MLE against scipy's on the played data;
- :func:`lemma7_check`: distances in the curvature norm of points found on the boundary of the
  confidence set against Lemma 7's radius and the ball's bound (:class:`Lemma7Check`);
- :func:`appendix_c_lemmas`: Lemmas 1-6 of Appendix C evaluated on the played features and on grids
  (:class:`AppendixCLemmas`);
- :func:`fast_step_comparison` and :func:`binned_loss_errors`: the fast optimistic step and the
  binned loss against the exact ones (:class:`FastStepComparison`).

``record(nb)`` takes the notebook session duck-typed: it only calls ``nb.metric``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

from ..core import checks
from ..core.runner import simulate
from . import confidence as C
from . import theory as Th
from .algorithms import OFULogPlus
from .environment import FairLogisticBandit
from .experiments import PlayedRounds, compare_optimistic_steps, finish_comparisons
from .generator import RoundGenerator

__all__ = [
    "PlayedRuns",
    "play_ofulog_plus",
    "mle_differences",
    "Lemma7Check",
    "lemma7_check",
    "AppendixCLemmas",
    "appendix_c_lemmas",
    "FastStepComparison",
    "fast_step_comparison",
    "binned_loss_errors",
]


@dataclass(frozen=True)
class PlayedRuns:
    """What :func:`play_ofulog_plus` kept.

    Attributes
    ----------
    policy : the OFULog+ policy after the runs (its history holds the binned loss)
    X : (n_runs, n, T) the played features; y : (n_runs, T) the outcomes
    probe_rounds : the rounds compared with the exact step
    compared : per probed round, the comparison of :func:`~.experiments.finish_comparisons`
    """

    policy: OFULogPlus
    X: np.ndarray
    y: np.ndarray
    probe_rounds: list[int]
    compared: list[dict]


def play_ofulog_plus(
    generator: RoundGenerator,
    T: int,
    seed: int,
    n_runs: int,
    exact_checks: Sequence[int],
    exact_runs: int,
    jobs: int = 1,
    scheduler: str | None = None,
    timed: Callable = contextlib.nullcontext,
    **policy_kw,
) -> PlayedRuns:
    """``n_runs`` runs of OFULog+ for ``T`` rounds that keep the played features and outcomes; before
    each round of ``exact_checks`` below ``T`` the exact optimistic programmes of the first
    ``exact_runs`` runs are posed, and they are solved after the runs in one batch (``jobs`` workers).

    Parameters
    ----------
    generator : the round generator
    T, seed, n_runs : horizon, root seed and number of runs
    exact_checks, exact_runs : the rounds and the number of runs compared with the exact step
    jobs, scheduler : the task runner of the exact programmes
    timed : a context manager factory ``timed(label)`` (e.g. ``nb.timed``) around the runs
    **policy_kw : passed to :class:`~.algorithms.OFULogPlus` (``alpha``, ``beta_denominator``, ``loss_bins``)

    Returns
    -------
    PlayedRuns
    """
    policy = OFULogPlus(**policy_kw)
    probe_rounds = sorted(c for c in exact_checks if c < T)
    # the probes keep each probed round's exact programs; they are solved in one batch after the run
    played = PlayedRounds(
        probe_rounds,
        lambda t, ctx, Xs, ys, pol: compare_optimistic_steps(t, ctx, Xs, ys, pol, range(exact_runs), defer=True),
    )
    with timed("OFULog+ runs with exact comparisons"):
        run = simulate(FairLogisticBandit(generator), policy, T, seed, n_runs=n_runs, metrics=(), recorders=[played])
        kept = run.recorded["played"]
        compared = finish_comparisons(kept.probes, jobs=jobs, scheduler=scheduler)
    return PlayedRuns(policy, kept.X, kept.y, probe_rounds, compared)


def mle_differences(X: np.ndarray, y: np.ndarray, S: float, rounds: Sequence[int]) -> list[float]:
    """At each of ``rounds``, the largest ``|ours - scipy|`` over the coordinates of the constrained MLE
    of the first ``t`` rounds of run 0 (ours: :func:`~.confidence.constrained_mle`, scipy's SLSQP:
    :func:`~.confidence.constrained_mle_scipy`)."""
    out = []
    for t in rounds:
        data = C.LogisticData.from_observations(X[:, :, :t], y[:, :t])
        ours, _, _, _ = C.constrained_mle(data, S, max_steps=200, tol=1e-13)
        ref = C.constrained_mle_scipy(X[0, :, :t], y[0, :t], S)
        out.append(float(np.abs(ours[0] - ref).max()))
    return out


@dataclass(frozen=True)
class Lemma7Check:
    """Lemma 7 at chosen rounds.

    Attributes
    ----------
    rounds : (m,) the rounds
    found : (n_runs, m) the largest ``||theta - theta*||_{H_t(theta*)}`` found on the set's boundary
    trivial : (n_runs, m) the ball's bound ``2 S sqrt(lambda_max(H_t(theta*)))``
    gamma : (m,) Lemma 7's radius ``gamma_t``
    informative_from : the horizon from which ``gamma_t`` is below half the ball's bound, with
        ``lambda_max`` extrapolated linearly in ``t`` from its smallest value over runs at the last round
    """

    rounds: np.ndarray
    found: np.ndarray
    trivial: np.ndarray
    gamma: np.ndarray
    informative_from: int | None

    @property
    def largest_found_over_gamma(self) -> float:
        """The largest distance found relative to ``gamma_t``, over runs and rounds."""
        return float((self.found / self.gamma).max())

    @property
    def gamma_over_ball_bound_at_T(self) -> float:
        """``gamma_T`` over the smallest ball bound at the last round."""
        return float(self.gamma[-1] / self.trivial[:, -1].min())

    def record(self, nb: Any) -> None:
        """Register ``lemma7.largest_found_over_gamma`` and ``lemma7.gamma_over_ball_bound_at_T``."""
        nb.metric("lemma7.largest_found_over_gamma", self.largest_found_over_gamma)
        nb.metric("lemma7.gamma_over_ball_bound_at_T", self.gamma_over_ball_bound_at_T)


def lemma7_check(
    X: np.ndarray,
    y: np.ndarray,
    rounds: np.ndarray,
    S: float,
    alpha: float,
    beta_denominator: float,
    rng: np.random.Generator,
    theta_star: Sequence[float],
    n_random: int = 64,
) -> Lemma7Check:
    """Points of ``C_t`` on its boundary, from the MLE along the eigenvectors of ``H_t(theta*)`` (both
    signs) and ``n_random`` random directions (drawn from ``rng``, the same for every round and run),
    and their largest distance to ``theta*`` in the ``H_t(theta*)`` norm, at each of ``rounds``.

    Parameters
    ----------
    X, y : (n_runs, n, T) played features and (n_runs, T) outcomes
    rounds : the rounds
    S, alpha, beta_denominator : the radius of the ball and of the set (:func:`~.confidence.beta_squared`)
    rng : the random directions' generator
    theta_star : the true parameter

    Returns
    -------
    Lemma7Check
    """
    n_runs, n = X.shape[0], X.shape[1]
    random_dirs = rng.normal(size=(n_random, n))
    random_dirs /= np.linalg.norm(random_dirs, axis=1, keepdims=True)
    found, trivial = [], []
    for t_c in rounds:
        data = C.LogisticData.from_observations(X[:, :, :t_c], y[:, :t_c])
        theta_hat, _, _, _ = C.constrained_mle(data, S, max_steps=200, tol=1e-13)
        H = Th.analysis_gram(X[:, :, :t_c], theta_star, S)
        evals, evecs = np.linalg.eigh(H)
        eig_dirs = np.swapaxes(evecs, 1, 2)
        dirs = np.concatenate([eig_dirs, -eig_dirs, np.broadcast_to(random_dirs, (n_runs, n_random, n))], axis=1)
        beta2 = float(C.beta_squared(t_c + 1, n, S, alpha, beta_denominator))
        boundary = Th.confidence_boundary_points(data, theta_hat, beta2, S, dirs)
        pts = np.concatenate([theta_hat[:, None, :], boundary], axis=1)
        diff = pts - np.asarray(theta_star)
        norms = np.sqrt(np.einsum("rmi,rij,rmj->rm", diff, H, diff))
        found.append(norms.max(axis=1))
        trivial.append(2 * S * np.sqrt(evals[:, -1]))
    found = np.array(found).T  # (runs, rounds)
    trivial = np.array(trivial).T
    gamma = Th.lemma7_radius(rounds + 1, n, S, alpha, beta_denominator)
    # where the bound would start to bite: lambda_max(H_t) extrapolated linearly in t from its value at T
    lam_rate = float((trivial[:, -1].min() / (2 * S)) ** 2 / rounds[-1])
    informative_from = checks.informative_horizon(
        lambda m: float(Th.lemma7_radius(m + 1, n, S, alpha, beta_denominator)),
        lambda m: 2 * S * np.sqrt(lam_rate * m),
    )
    return Lemma7Check(np.asarray(rounds), found, trivial, gamma, informative_from)


@dataclass(frozen=True)
class AppendixCLemmas:
    """Lemmas 1-6 of Appendix C, evaluated.

    Attributes
    ----------
    lemma1_slack : (n_runs, m) ``n log(lambda + t B^2/n) - log det V_{t+1}`` at the rounds
    lemma2_ratio : (n_runs, m) the elliptical potential over Lemma 2's bound at the rounds
    l3_left, l3_right : the two sides of Lemma 3 on a 201 x 201 grid of logits in ``[-S, S]``
    l4_root, l4_bound : the largest root of ``u^2 = b u + c`` and ``b + sqrt(c)`` on a grid
    kl_err : the largest difference between the three forms of the Bernoulli KL (Lemma 6)
    freedman : (n_runs, 2n) the largest excess of each (run, direction) martingale over Lemma 5's boundary
    """

    lemma1_slack: np.ndarray
    lemma2_ratio: np.ndarray
    l3_left: np.ndarray
    l3_right: np.ndarray
    l4_root: np.ndarray
    l4_bound: np.ndarray
    kl_err: float
    freedman: np.ndarray

    @property
    def freedman_missed(self) -> float:
        """The fraction of (run, direction) martingales that cross Lemma 5's boundary at some round."""
        return float(np.mean(self.freedman > 0))

    def record(self, nb: Any) -> None:
        """Register ``lemma1.min_slack`` ... ``lemma5.fraction_missed`` with ``nb.metric``."""
        nb.metric("lemma1.min_slack", float(self.lemma1_slack.min()))
        nb.metric("lemma2.max_potential_over_bound", float(self.lemma2_ratio.max()))
        nb.metric("lemma3.min_left_minus_right", float((self.l3_left - self.l3_right).min()))
        nb.metric("lemma4.max_root_minus_bound", float((self.l4_root - self.l4_bound).max()))
        nb.metric("lemma6.max_abs_difference", float(self.kl_err))
        nb.metric("lemma5.fraction_missed", self.freedman_missed)

    def summary(self) -> str:
        """The measured value of each lemma, as text."""
        return "\n".join(
            [
                f"Lemma 1: smallest slack {self.lemma1_slack.min():.3f}; "
                f"Lemma 2: largest potential / bound {self.lemma2_ratio.max():.4f}",
                f"Lemma 3: min(left - right) {(self.l3_left - self.l3_right).min():.2e}; "
                f"Lemma 4: max(root - bound) {(self.l4_root - self.l4_bound).max():.2e}; "
                f"Lemma 6: max |difference| {self.kl_err:.1e}",
                f"Lemma 5: {self.freedman_missed:.3f} of {self.freedman.size} (run, direction) martingales cross "
                f"the boundary; largest excess {self.freedman.max():.2f}",
            ]
        )


def appendix_c_lemmas(
    X: np.ndarray,
    y: np.ndarray,
    rounds: np.ndarray,
    S: float,
    alpha: float,
    theta_star: Sequence[float],
    timed: Callable = contextlib.nullcontext,
) -> AppendixCLemmas:
    """Lemmas 1 and 2 on the played features ``u_s = sqrt(g'(x_s^T theta*)) x_s`` (``B^2 = 1/4``, at
    Lemma 7's ridge) at ``rounds``; Lemmas 3, 4 and 6 on grids; Lemma 5 on the reward noise along
    ``x_s^T v`` for ``v = +-e_k`` at ``eta = 1``.

    Parameters
    ----------
    X, y : (n_runs, n, T) played features and (n_runs, T) outcomes
    rounds : the rounds of Lemmas 1 and 2
    S, alpha : the ball's radius (the logits' range) and Lemma 5's level
    theta_star : the true parameter
    timed : a context manager factory ``timed(label)`` (e.g. ``nb.timed``) around Lemmas 1-2

    Returns
    -------
    AppendixCLemmas
    """
    n = X.shape[1]
    lam7 = C.analysis_ridge(S)
    p_star = 1 / (1 + np.exp(-np.einsum("k,rkt->rt", np.asarray(theta_star), X)))
    U = X * np.sqrt(p_star * (1 - p_star))[:, None, :]
    with timed("lemmas 1-2"):
        potential = Th.elliptical_potential(U, lam7)
        gram = [lam7 * np.eye(n) + U[:, :, :t_c] @ np.swapaxes(U[:, :, :t_c], 1, 2) for t_c in rounds]
        logdet = np.array([np.linalg.slogdet(g)[1] for g in gram]).T
    lemma1_slack = Th.lemma1_bound(rounds, n, 0.25, lam7) - logdet
    lemma2_ratio = potential[:, rounds - 1] / Th.lemma2_bound(rounds, n, 0.25, lam7)
    z_grid = np.linspace(-S, S, 201)
    z1, z2 = np.meshgrid(z_grid, z_grid, indexing="ij")
    l3_left, l3_right = Th.lemma3_sides(z1, z2)
    b_grid, c_grid = np.meshgrid(np.linspace(0, 50, 201), np.linspace(0, 2500, 201), indexing="ij")
    l4_root, l4_bound = Th.lemma4_sides(b_grid, c_grid)
    kl = Th.bernoulli_kl_forms(z1, z2)
    kl_err = max(np.abs(kl["bregman"] - kl["direct"]).max(), np.abs(kl["integral"] - kl["direct"]).max())
    xi = p_star - y
    var = p_star * (1 - p_star)
    freedman = np.array(
        [
            Th.freedman_excess(sgn * xi * X[:, k, :], var * X[:, k, :] ** 2, 1.0, alpha)
            for k in range(n)
            for sgn in (1, -1)
        ]
    ).T
    return AppendixCLemmas(lemma1_slack, lemma2_ratio, l3_left, l3_right, l4_root, l4_bound, kl_err, freedman)


@dataclass(frozen=True)
class FastStepComparison:
    """The fast optimistic step against the exact one at the probed rounds.

    Attributes
    ----------
    rounds, runs : (k,) the round and the run of each comparison
    exact_best : (k,) the exact maximum of the optimistic values over the candidates
    exact_at_choice : (k,) the exact optimistic value of the fast step's choice
    fast_at_choice : (k,) the fast step's optimistic value of its choice
    quadratic_error : (k,) the largest error over candidates of the quadratic model fitted at the MLE
    """

    rounds: np.ndarray
    runs: np.ndarray
    exact_best: np.ndarray
    exact_at_choice: np.ndarray
    fast_at_choice: np.ndarray
    quadratic_error: np.ndarray

    @property
    def optimal_choice(self) -> float:
        """The share of comparisons whose choice is exactly optimal (within 1e-6)."""
        return float(np.mean(self.exact_at_choice >= self.exact_best - 1e-6))

    @property
    def value_error(self) -> float:
        """The largest ``|fast value at its choice - exact maximum|``."""
        return float(np.abs(self.fast_at_choice - self.exact_best).max())

    def record(self, nb: Any) -> None:
        """Register the ``fast_step.*`` metrics of the comparison with ``nb.metric``."""
        nb.metric("fast_step.fraction_exactly_optimal_choices", self.optimal_choice)
        nb.metric("fast_step.max_value_error_at_choice", self.value_error)
        nb.metric("fast_step.max_quadratic_model_error", float(self.quadratic_error.max()))
        nb.metric("fast_step.rounds_compared", len(self.exact_best))


def fast_step_comparison(compared: Sequence[dict], probe_rounds: Sequence[int], exact_runs: int) -> FastStepComparison:
    """Join the comparisons of :func:`~.experiments.finish_comparisons` (one per probed round, each
    over the first ``exact_runs`` runs) into one :class:`FastStepComparison`."""
    return FastStepComparison(
        np.repeat(probe_rounds, exact_runs),
        np.tile(np.arange(exact_runs), len(probe_rounds)),
        np.concatenate([c["exact_best"] for c in compared]),
        np.concatenate([c["exact_at_choice"] for c in compared]),
        np.concatenate([c["fast_at_choice"] for c in compared]),
        np.concatenate([np.abs(c["quadratic"] - c["exact"]).max(axis=1) for c in compared]),
    )


def binned_loss_errors(binned: Any, X: np.ndarray, y: np.ndarray, rng: np.random.Generator, S: float) -> np.ndarray:
    """``|binned loss - raw loss|`` at 200 random parameters of the ball per run (radius drawn as
    ``S u^(1/4)``), shape (n_runs, 200).

    Parameters
    ----------
    binned : the binned data of a policy's history (``policy.history.data()``, with ``loss(theta)``)
    X, y : (n_runs, n, T) played features and (n_runs, T) outcomes
    rng : the parameters' generator
    S : the ball's radius
    """
    n_runs, n = X.shape[0], X.shape[1]
    theta_test = rng.normal(size=(n_runs, 200, n))
    theta_test *= S * rng.random((n_runs, 200, 1)) ** 0.25 / np.linalg.norm(theta_test, axis=-1, keepdims=True)
    return np.abs(binned.loss(theta_test) - C.LogisticData.from_observations(X, y).loss(theta_test))
