"""The round generator: contexts from the fairness model, ``K`` candidate decisions, rejection sampling.

:class:`RoundGenerator` draws the context ``(U, A, W, M)`` from :func:`~.model.context_model` and
``K`` decisions ``U[-1, 1]``, and applies the paper's rejection rule (at least 12 of the 20
candidates feasible) plus our Slater margin. Everything about a round that the evaluator needs
(expected rewards, effects) is computed exactly from ``theta*``, never from samples.
:class:`RoundStream` serves the accepted rounds of one random generator in order, however they are
requested.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.scm import DiscreteSCM
from .features import FEATURE_MAPS, expected_rewards, raw_features
from .model import THETA_STAR, context_model
from .oracle import best_feasible, unconstrained_optimum

__all__ = ["Rounds", "RoundGenerator", "GeneratorCheckError", "RoundStream"]


@dataclass
class Rounds:
    """A batch of generated rounds (leading axis: rounds; ``K`` candidates; ``n = 4`` features).

    Attributes
    ----------
    a, w, m : int arrays (N,)
    d : (N, K) candidate decisions
    x, x_cf : (N, K, n) factual and counterfactual features ``f(Z)``, ``f(Z^{a'})``
    reward : (N, K) ``r_t(d) = g(f(Z)^T theta*)``
    effect : (N, K) ``Delta_t(d)`` (Eq. 4)
    attempts : int, candidate sets drawn to obtain these rounds (rejection sampling)
    """

    a: np.ndarray
    w: np.ndarray
    m: np.ndarray
    d: np.ndarray
    x: np.ndarray
    x_cf: np.ndarray
    reward: np.ndarray
    effect: np.ndarray
    attempts: int = 0

    def __len__(self) -> int:
        return len(self.a)

    def take(self, index) -> "Rounds":
        """The rounds ``index`` (a slice or an index array)."""
        return Rounds(
            *(getattr(self, f)[index] for f in ("a", "w", "m", "d", "x", "x_cf", "reward", "effect")),
            attempts=self.attempts,
        )

    @staticmethod
    def concatenate(parts: list["Rounds"]) -> "Rounds":
        fields = ("a", "w", "m", "d", "x", "x_cf", "reward", "effect")
        return Rounds(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in fields), attempts=sum(p.attempts for p in parts)
        )


class GeneratorCheckError(ValueError):
    """The generator's unconstrained optimum does not violate the constraint on average, so the
    long-term constraint is slack and constrained and unconstrained methods cannot be told apart."""


@dataclass(frozen=True)
class RoundGenerator:
    """Rejection sampler of rounds: context from :func:`context_model`, ``K`` decisions ``U[-1, 1]``.

    Derived in notebooks/cclb/01_model.md, section 'Identification' (equation
    ``cclb-eq4-counterfactual-effect``).

    A candidate set is accepted iff at least ``min_feasible`` decisions satisfy
    ``|Delta_t(d)| <= tau`` (the paper's rule, §4) **and** the smallest ``|Delta_t(d)|`` is at most
    ``tau - slater_margin`` (ours: it enforces Slater's condition, Assumption 3, with
    ``delta = slater_margin``).

    Parameters
    ----------
    theta_star : sequence of float, length n
    tau : float in [0, 1)
        Fairness threshold used by the rejection rule.
    n_candidates, min_feasible : int
        ``|D_t|`` (20 in the paper) and the feasible minimum (12).
    slater_margin : float >= 0
        ``delta``; 0 disables our extra condition.
    feature_map : str
        A key of :data:`FEATURE_MAPS`.
    latent_agreement, mediator_weights
        Passed to :func:`context_model`.
    """

    theta_star: tuple = THETA_STAR
    tau: float = 0.2
    n_candidates: int = 20
    min_feasible: int = 12
    slater_margin: float = 0.15
    feature_map: str = "unit_norm"
    latent_agreement: float | None = None
    mediator_weights: tuple = (1.0, 1.0)
    _model: DiscreteSCM = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        theta = np.asarray(self.theta_star, dtype=float)
        if theta.shape != (4,) or not np.all(np.isfinite(theta)):
            raise ValueError(f"theta_star={self.theta_star!r} must be 4 finite numbers (features A, W, M, D)")
        if not 0.0 <= self.tau < 1.0:
            raise ValueError(f"tau={self.tau} must lie in [0, 1) (for tau >= 1 the constraint is vacuous)")
        if int(self.n_candidates) < 1:
            raise ValueError(f"n_candidates={self.n_candidates} must be at least 1")
        if not 1 <= int(self.min_feasible) <= int(self.n_candidates):
            raise ValueError(f"min_feasible={self.min_feasible} must lie in [1, n_candidates={self.n_candidates}]")
        if not 0.0 <= self.slater_margin <= self.tau:
            raise ValueError(f"slater_margin={self.slater_margin} must lie in [0, tau={self.tau}]")
        if self.feature_map not in FEATURE_MAPS:
            raise ValueError(f"feature_map={self.feature_map!r} is not allowed; use one of {sorted(FEATURE_MAPS)}")
        object.__setattr__(self, "theta_star", tuple(float(v) for v in theta))
        object.__setattr__(self, "_model", context_model(self.latent_agreement, self.mediator_weights))

    @property
    def n_features(self) -> int:
        return 4

    @property
    def context(self) -> DiscreteSCM:
        return self._model

    def attempt(self, u: np.ndarray) -> tuple[Rounds, np.ndarray]:
        """Build candidate sets from uniforms and say which are accepted.

        Parameters
        ----------
        u : ndarray (N, 4 + K)
            Four uniforms for ``U, A, W, M`` (in :attr:`context` node order), then ``K`` for the decisions.

        Returns
        -------
        rounds : Rounds of length N (every attempt)
        accepted : bool array (N,)
        """
        u = np.asarray(u, dtype=float)
        K = int(self.n_candidates)
        if u.ndim != 2 or u.shape[1] != 4 + K:
            raise ValueError(f"u must have shape (N, {4 + K}), got {u.shape}")
        ctx = self._model.sample_from_uniforms(u[:, :4])
        d = 2.0 * u[:, 4:] - 1.0
        fmap = FEATURE_MAPS[self.feature_map]
        x = fmap(raw_features(ctx["A"], ctx["W"], ctx["M"], d))
        x_cf = fmap(raw_features(ctx["A"], ctx["W"], ctx["M"], d, counterfactual=True))
        theta = np.asarray(self.theta_star)
        r = expected_rewards(x, theta)
        effect = expected_rewards(x_cf, theta) - r
        size = np.abs(effect)
        accepted = (np.sum(size <= self.tau, axis=1) >= self.min_feasible) & (
            size.min(axis=1) <= self.tau - self.slater_margin
        )
        return Rounds(ctx["A"], ctx["W"], ctx["M"], d, x, x_cf, r, effect, attempts=len(u)), accepted

    def draw(self, rng: np.random.Generator, n_rounds: int, batch: int = 512) -> Rounds:
        """``n_rounds`` accepted rounds (one-shot; see :class:`RoundStream` for a stream)."""
        return RoundStream(self, rng, batch=batch).take(n_rounds)

    def check(
        self, rng: np.random.Generator, n_rounds: int = 20000, tau: float | None = None, strict: bool = True
    ) -> dict[str, float]:
        """Does the unconstrained optimum violate the constraint on average?

        Draws ``n_rounds`` rounds and evaluates, exactly from ``theta*``, the decision an oracle
        without the constraint would take (``argmax_d r_t(d)``, ties toward the smaller ``|Delta|``:
        :func:`~.oracle.unconstrained_optimum`; the first-index reading is returned beside). If the mean of
        ``|Delta_t(d)| - tau`` at that decision is not positive, the long-term constraint is slack
        for an unconstrained learner and the experiment cannot distinguish the methods.

        Returns
        -------
        dict with ``acceptance_rate``, ``unconstrained_mean_excess`` (mean of ``|Delta| - tau`` at
        the unconstrained optimum), ``unconstrained_infeasible_fraction``, ``reward_gap`` (mean
        ``r(unconstrained best) - r(best feasible)``), ``feasible_mean_count``, the first two with
        ties to the first index (``..._first_index``), ``tied_round_fraction`` (rounds where several
        decisions tie for the best reward) and ``tied_decisions_mean`` (how many, in those rounds).

        Raises
        ------
        GeneratorCheckError
            If ``strict`` and the mean excess is not positive.
        """
        tau = self.tau if tau is None else float(tau)
        stream = RoundStream(self, rng)
        rounds = stream.take(n_rounds)
        rows = np.arange(len(rounds))
        opt = unconstrained_optimum(rounds.reward, rounds.effect)
        best = opt["index"]
        size = np.abs(rounds.effect)
        excess = size[rows, best] - tau
        excess_first = size[rows, opt["first"]] - tau
        feas = best_feasible(rounds.reward, rounds.effect, tau)
        tied = opt["n_tied"] > 1
        out = {
            "acceptance_rate": stream.accepted / stream.attempts,
            "unconstrained_mean_excess": float(excess.mean()),
            "unconstrained_infeasible_fraction": float(np.mean(excess > 0)),
            "unconstrained_mean_excess_first_index": float(excess_first.mean()),
            "unconstrained_infeasible_fraction_first_index": float(np.mean(excess_first > 0)),
            "tied_round_fraction": float(np.mean(tied)),
            "tied_decisions_mean": float(opt["n_tied"][tied].mean()) if tied.any() else 0.0,
            "reward_gap": float(np.mean(rounds.reward[rows, best] - feas["value"])),
            "feasible_mean_count": float(np.mean(np.sum(size <= tau, axis=1))),
        }
        if strict and not out["unconstrained_mean_excess"] > 0:
            raise GeneratorCheckError(
                f"the unconstrained optimum has mean |Delta| - tau = {out['unconstrained_mean_excess']:.4g} <= 0 "
                f"at tau={tau}: "
                "the long-term constraint is slack; choose theta_star or tau so that it is violated on average"
            )
        return out


class RoundStream:
    """Accepted rounds from one random generator, in order, independent of how they are requested.

    Attempts are drawn in batches and the accepted ones are queued, so ``take(3)`` then ``take(5)``
    returns exactly the rounds of one ``take(8)``: run ``i``'s contexts depend only on its stream.
    """

    def __init__(self, generator: RoundGenerator, rng: np.random.Generator, batch: int = 512):
        if batch < 1:
            raise ValueError(f"batch={batch} must be a positive integer")
        self.generator = generator
        self.rng = rng
        self.batch = int(batch)
        self._queue: list[Rounds] = []
        self._queued = 0
        self.attempts = 0
        self.accepted = 0

    def take(self, n: int) -> Rounds:
        if n < 1:
            raise ValueError(f"n={n} must be at least 1")
        width = 4 + int(self.generator.n_candidates)
        while self._queued < n:
            rounds, ok = self.generator.attempt(self.rng.random((self.batch, width)))
            self.attempts += self.batch
            self.accepted += int(ok.sum())
            if ok.any():
                kept = rounds.take(np.flatnonzero(ok))
                self._queue.append(kept)
                self._queued += len(kept)
        allq = Rounds.concatenate(self._queue)
        out, rest = allq.take(slice(0, n)), allq.take(slice(n, None))
        self._queue = [rest] if len(rest) else []
        self._queued = len(rest)
        out.attempts = self.attempts
        return out
