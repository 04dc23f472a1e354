"""A Yahoo!-shaped click-log simulator and the replay evaluator (Li et al. 2010).

The Yahoo! Front Page Today Module logs (R6) used in §5.5 and App. B are licence-gated and cannot
be obtained here. :class:`YahooLikeSimulator` reproduces the properties the paper relies on, and
*is not the real data*:

- logging by a **uniformly random** policy over the candidate pool (what makes replay unbiased);
- a **changing candidate pool**: about ``pool_size`` (20) of ``n_articles`` (271) articles are
  live at a time, articles entering and leaving as the days pass;
- users and articles described by 6-dimensional features (5 soft-cluster memberships plus a
  constant 1, the R6 convention), linear context = their outer product (``d = 36``);
- a **low click rate** (about 3.57%, the whole data set's 1,633,488 / 45,811,883) from a logistic
  model of the user-article pair, with article popularity drifting from day to day (user
  interests change, so the multi-armed model is misspecified over time).

:class:`ReplayEnvironment` runs a bandit algorithm on a log: in each logged event the algorithm
deploys a policy over the event's pool and samples an arm; the event counts as a round (the click
is revealed, the algorithm learns, the regrets accrue) only if the sampled arm is the logged one.
Under uniform logging the accepted events are distributed as if the algorithm had interacted with
the users (Li et al. 2010, 2011), which :func:`replay_policy_value` lets a test check.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ..core.streams import RunStreams

__all__ = ["ClickLog", "YahooLikeSimulator", "ReplayEnvironment", "replay_policy_value"]


@dataclass
class ClickLog:
    """Logged events of a uniformly random policy.

    Attributes
    ----------
    user : ndarray (n, 6)
    pool : int ndarray (n, P), article ids of the candidate pool of each event
    shown : int ndarray (n,), index *into the pool* of the displayed article
    click : ndarray (n,), 0/1
    day : int ndarray (n,)
    article_features : ndarray (A, 6)
    """

    user: np.ndarray
    pool: np.ndarray
    shown: np.ndarray
    click: np.ndarray
    day: np.ndarray
    article_features: np.ndarray

    @property
    def n_events(self) -> int:
        return len(self.click)

    def days(self, first: int, last: int) -> slice:
        """Events of days ``first..last`` (0-based, inclusive) as a slice (events are in time order)."""
        idx = np.flatnonzero((self.day >= first) & (self.day <= last))
        if idx.size == 0:
            raise ValueError(f"no events on days {first}..{last}")
        return slice(int(idx[0]), int(idx[-1]) + 1)

    def contexts(self, events) -> np.ndarray:
        """Outer-product contexts ``vec(user ⊗ article)`` of every pool article, (n, P, 36)."""
        u = self.user[events]
        a = self.article_features[self.pool[events]]
        return (u[:, None, :, None] * a[:, :, None, :]).reshape(u.shape[0], a.shape[1], -1)

    def article_ctr(self, events) -> np.ndarray:
        """Empirical click rate of every article over ``events`` (the multi-armed μ*, notes A13);
        articles never shown get the overall rate. Shape (A,)."""
        shown = self.pool[events][np.arange(self.pool[events].shape[0]), self.shown[events]]
        A = len(self.article_features)
        n = np.bincount(shown, minlength=A).astype(float)
        c = np.bincount(shown, weights=self.click[events], minlength=A)
        overall = self.click[events].mean()
        return np.where(n > 0, c / np.maximum(n, 1.0), overall)

    def linear_fit(self, events) -> np.ndarray:
        """Least squares from the displayed article's context to the click (the linear μ*), (36,)."""
        ctx = self.contexts(events)
        rows = np.arange(ctx.shape[0])
        X = ctx[rows, self.shown[events]]
        return np.linalg.lstsq(X, self.click[events], rcond=None)[0]


class YahooLikeSimulator:
    """Generative model of a Today-Module-like click log (see the module docstring).

    Parameters
    ----------
    seed : int
        Seed of the model (articles, weights, drift); logs are drawn with their own generator.
    n_articles, pool_size, n_days : int
    target_ctr : float
        Average click probability of a uniformly random display (calibrated by the intercept).
    drift_sd : float
        Standard deviation of the day-to-day random walk of each article's popularity (logit).
    """

    def __init__(
        self,
        seed: int = 0,
        n_articles: int = 271,
        pool_size: int = 20,
        n_days: int = 10,
        target_ctr: float = 0.0357,
        drift_sd: float = 0.3,
    ):
        if not 2 <= pool_size < n_articles:
            raise ValueError(f"pool_size={pool_size} must be at least 2 and below n_articles={n_articles}")
        if not 0 < target_ctr < 0.5 or n_days < 1 or drift_sd < 0:
            raise ValueError(
                f"target_ctr={target_ctr} must lie in (0, 0.5), n_days={n_days} >= 1, drift_sd={drift_sd} >= 0"
            )
        rng = np.random.default_rng(seed)
        self.n_articles, self.pool_size, self.n_days = int(n_articles), int(pool_size), int(n_days)
        self.article_features = np.column_stack([rng.dirichlet(np.full(5, 0.5), n_articles), np.ones(n_articles)])
        self.interaction = rng.normal(0.0, 1.5, size=(6, 6))
        self.popularity = rng.normal(0.0, 0.6, size=n_articles)[None, :] + np.cumsum(
            rng.normal(0.0, drift_sd, size=(n_days, n_articles)), axis=0
        )
        self._user_alpha = np.full(5, 0.5)
        self.intercept = 0.0
        probe = self._draw_users(np.random.default_rng(seed + 1), 20000)
        arts = np.random.default_rng(seed + 2).integers(0, n_articles, 20000)
        days = np.random.default_rng(seed + 3).integers(0, n_days, 20000)
        lo, hi = -10.0, 2.0
        for _ in range(60):  # bisection on the intercept for the average click rate
            self.intercept = 0.5 * (lo + hi)
            if self.click_probability(probe, arts[:, None], days)[:, 0].mean() > target_ctr:
                hi = self.intercept
            else:
                lo = self.intercept
        self.target_ctr = float(target_ctr)

    def _draw_users(self, rng, n):
        return np.column_stack([rng.dirichlet(self._user_alpha, n), np.ones(n)])

    def click_probability(self, users: np.ndarray, articles: np.ndarray, days: np.ndarray) -> np.ndarray:
        """Exact click probability of each (user, article) pair: users (n, 6), articles (n, P) ids,
        days (n,) → (n, P)."""
        a = self.article_features[articles]  # (n, P, 6)
        logit = (
            np.einsum("ni,ij,npj->np", users, self.interaction, a)
            + self.popularity[days[:, None], articles]
            + self.intercept
        )
        return expit(logit)

    def pool_at(self, events: np.ndarray, n_events: int) -> np.ndarray:
        """Candidate pools: a window of ``pool_size`` consecutive articles sliding through all of
        them over the log, (n, P)."""
        start = (events * (self.n_articles - self.pool_size)) // max(n_events, 1)
        return start[:, None] + np.arange(self.pool_size)[None, :]

    def log(self, events_per_day: int, seed: int) -> ClickLog:
        """A uniformly-random-logged click log of ``n_days × events_per_day`` events."""
        if int(events_per_day) < 1:
            raise ValueError(f"events_per_day={events_per_day} must be positive")
        rng = np.random.default_rng(seed)
        n = self.n_days * int(events_per_day)
        ev = np.arange(n)
        day = ev // int(events_per_day)
        users = self._draw_users(rng, n)
        pool = self.pool_at(ev, n)
        shown = rng.integers(0, self.pool_size, n)
        p = self.click_probability(users, pool[ev, shown][:, None], day)[:, 0]
        click = (rng.random(n) < p).astype(float)
        return ClickLog(users, pool, shown, click, day, self.article_features)


class ReplayEnvironment:
    """Replay of a click log as a bandit environment (Li et al. 2010).

    Round ``t`` is logged event ``start + t``. ``observe`` gives the pool (``mode="mab"``: the
    article ids, shape (P,)) or the contexts (``mode="linear"``: (R, P, 36)); ``pull`` marks as
    ``accepted`` the runs and configurations whose arm is the logged one, reveals their click, and
    reports the ground truth of the round: the articles' click rates over the evaluated events
    (multi-armed) or ``θ_LS·x`` with ``θ_LS`` fitted on them (linear), as the paper does (§5.1).

    Parameters
    ----------
    log : ClickLog
    events : slice
        The evaluated events (e.g. ``log.days(1, 1)``).
    mode : {"mab", "linear"}
    """

    def __init__(self, log: ClickLog, events: slice, mode: str = "mab"):
        if mode not in ("mab", "linear"):
            raise ValueError(f"mode={mode!r}; allowed are 'mab' and 'linear'")
        self.log, self.mode = log, mode
        self.start, self.stop = events.start, events.stop
        self.n_rounds = self.stop - self.start
        self.ctr = log.article_ctr(events)
        self.theta = log.linear_fit(events) if mode == "linear" else None
        self.n_arms = log.pool.shape[1]
        self.dim = 36

    def reset(self, streams: RunStreams) -> None:
        self.n_runs = streams.n_runs

    def observe(self, t: int):
        e = self.start + t
        if e >= self.stop:
            raise IndexError(f"round {t} is past the end of the replayed events ({self.n_rounds})")
        self._e = e
        pool = self.log.pool[e]
        if self.mode == "mab":
            self._means = np.broadcast_to(self.ctr[pool], (self.n_runs, len(pool)))
            return pool
        ctx = self.log.contexts(slice(e, e + 1))[0]
        self._means = np.broadcast_to(ctx @ self.theta, (self.n_runs, len(pool)))
        return np.broadcast_to(ctx, (self.n_runs,) + ctx.shape)

    def pull(self, t: int, arms: np.ndarray) -> dict[str, np.ndarray]:
        accepted = arms == self.log.shown[self._e]
        return {"reward": accepted * self.log.click[self._e], "accepted": accepted, "arm_means": self._means}


def replay_policy_value(log: ClickLog, events: slice, policy_probs, rng: np.random.Generator) -> tuple[float, int]:
    """Replay estimate of a fixed policy's click rate: mean click over the accepted events.

    Parameters
    ----------
    policy_probs : callable
        ``policy_probs(user (n, 6), pool (n, P)) -> (n, P)`` probabilities of the policy.
    rng : numpy.random.Generator
        For sampling the policy's arm in each event.

    Returns
    -------
    value : float, accepted : int
    """
    user, pool = log.user[events], log.pool[events]
    probs = policy_probs(user, pool)
    cdf = np.cumsum(probs, axis=1)
    arms = np.minimum((cdf <= rng.random(len(user))[:, None] * cdf[:, -1:]).sum(axis=1), pool.shape[1] - 1)
    accepted = arms == log.shown[events]
    return float(log.click[events][accepted].mean()), int(accepted.sum())
