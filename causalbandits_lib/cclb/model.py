"""The extended standard fairness model of Chen, Tian and Quinn (ICML 2025) as a generator of rounds.

Graph (their Fig. 1): a sensitive attribute ``A``, confounded features ``W`` (``A <-> W``: an
unobserved common cause ``U``), mediators ``M`` (``A -> M <- W``), the decision ``D`` and the outcome
``Y`` with parents ``A, W, M, D``. Each round the learner sees ``(a_t, w_t, m_t)`` and a set of
``K`` candidate decisions; playing ``d`` returns ``Y ~ Bernoulli(g(f(Z)^T theta*))`` with
``Z = (a_t, w_t, m_t, d)`` (their Eq. 1-2, **formulas reconstructed**: the supplied paper lost its
display equations; see ``notebooks/cclb/01_model.md``). The counterfactual feature replaces ``a_t``
by ``a'_t = 1 - a_t`` and keeps ``w_t, m_t, d`` (Eq. 3), and the counterfactual fairness effect is

``Delta_t(d) = g(f(Z^{a'}_t(d))^T theta*) - g(f(Z_t(d))^T theta*)``   (Eq. 4, reconstructed).

The paper does not publish its structural equations. :func:`context_model` is this book's stand-in
(the coefficients of the notes' calibrated generator, with the ``A <-> W`` dependence produced by a
latent ``U``), and :class:`RoundGenerator` applies the paper's rejection rule (at least 12 of the
20 candidates feasible) plus our Slater margin.

Everything the evaluator needs (expected rewards, effects, the best feasible decision, the value of
the LP over mixtures, Eq. 8) is computed exactly from ``theta*``, never from samples.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy.special import expit

from ..core.scm import DiscreteSCM
from ..core.streams import RoundNoise, RunStreams, run_seed_sequence

__all__ = [
    "THETA_STAR",
    "S_DEFAULT",
    "SFM_EDGES",
    "sfm_graph",
    "context_model",
    "unit_norm_features",
    "half_scaled_features",
    "FEATURE_MAPS",
    "raw_features",
    "expected_rewards",
    "Rounds",
    "RoundGenerator",
    "GeneratorCheckError",
    "RoundStream",
    "best_feasible",
    "mixture_lp_value",
    "Replicas",
    "FairContext",
    "FairLogisticBandit",
    "kappa_feature_space",
]

#: The parameter of the notes' calibrated generator: ``||theta*|| = 5 = S`` (our choice; the paper
#: states neither).
THETA_STAR = (-2.0, -2.0, -1.0, 4.0)
S_DEFAULT = 5.0

#: Directed edges of the extended SFM with the latent ``U`` standing for ``A <-> W``.
SFM_EDGES = (
    ("U", "A"),
    ("U", "W"),
    ("A", "M"),
    ("W", "M"),
    ("A", "D"),
    ("W", "D"),
    ("M", "D"),
    ("A", "Y"),
    ("W", "Y"),
    ("M", "Y"),
    ("D", "Y"),
)


def sfm_graph():
    """The extended standard fairness model as a :class:`networkx.DiGraph` (latent ``U`` explicit)."""
    import networkx as nx

    return nx.DiGraph(list(SFM_EDGES))


def context_model(latent_agreement: float | None = None, mediator_weights=(1.0, 1.0)) -> DiscreteSCM:
    """The context part ``U, A, W, M`` of the round generator as a :class:`DiscreteSCM`.

    ``U ~ Bern(1/2)``; ``A`` and ``W`` each copy ``U`` with probability ``latent_agreement`` (so
    ``A <-> W`` through ``U``); ``M | A, W ~ Bern(g(c_A (2A-1) + c_W (2W-1)))``.

    The default ``latent_agreement`` ``q = (1 + sqrt(2 g(1.2) - 1)) / 2 = 0.8664`` gives
    ``P(W=1 | A=1) = q^2 + (1-q)^2 = g(1.2)``: the observed law of ``(A, W, M)`` equals the notes'
    generator (``W | A ~ Bern(g(1.2 (2A-1)))``), whose coefficients are adapted from the first
    author's later public generator. Our choice.

    Parameters
    ----------
    latent_agreement : float in (0, 1), optional
        ``P(A = U) = P(W = U)``.
    mediator_weights : (float, float)
        ``(c_A, c_W)``.
    """
    q = (1.0 + np.sqrt(2.0 * expit(1.2) - 1.0)) / 2.0 if latent_agreement is None else float(latent_agreement)
    if not 0.0 < q < 1.0:
        raise ValueError(f"latent_agreement={latent_agreement} must lie strictly between 0 and 1")
    c_a, c_w = (float(c) for c in mediator_weights)
    copy = np.array([[q, 1 - q], [1 - q, q]])  # rows U=0,1; columns child=0,1
    pm = np.empty((2, 2, 2))
    for a in (0, 1):
        for w in (0, 1):
            p1 = expit(c_a * (2 * a - 1) + c_w * (2 * w - 1))
            pm[a, w] = (1 - p1, p1)
    return DiscreteSCM(
        {"U": (0, 1), "A": (0, 1), "W": (0, 1), "M": (0, 1)},
        {"U": ((), [0.5, 0.5]), "A": (("U",), copy), "W": (("U",), copy), "M": (("A", "W"), pm)},
        name="extended SFM context",
    )


# ---------------------------------------------------------------------------- features
def unit_norm_features(raw: np.ndarray) -> np.ndarray:
    """``f(Z) = Z / ||Z||_2`` (and ``f(0) = 0``), so ``||f(Z)|| <= 1`` (Assumption 2). Shape kept."""
    raw = np.asarray(raw, dtype=float)
    norm = np.sqrt(np.sum(raw * raw, axis=-1, keepdims=True))
    return np.divide(raw, norm, out=np.zeros_like(raw), where=norm > 0)


def half_scaled_features(raw: np.ndarray) -> np.ndarray:
    """``f(Z) = Z / 2``: a linear alternative (``||Z|| <= 2`` for binary ``A, W, M`` and ``|d| <= 1``)."""
    return np.asarray(raw, dtype=float) / 2.0


#: Feature maps by name (a parameter of the generator; the notes' choice is ``unit_norm``).
FEATURE_MAPS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "unit_norm": unit_norm_features,
    "half_scaled": half_scaled_features,
}


def raw_features(
    a: np.ndarray, w: np.ndarray, m: np.ndarray, d: np.ndarray, counterfactual: bool = False
) -> np.ndarray:
    """``Z = (a, w, m, d)`` for every candidate, or ``Z^{a'} = (1 - a, w, m, d)``.

    Parameters
    ----------
    a, w, m : arrays of shape (...)
        The round's context (codes 0/1).
    d : array of shape (..., K)
        Candidate decisions.

    Returns
    -------
    ndarray of shape (..., K, 4)
    """
    d = np.asarray(d, dtype=float)
    a = np.asarray(a, dtype=float)
    if counterfactual:
        a = 1.0 - a
    ctx = np.stack([a, np.asarray(w, dtype=float), np.asarray(m, dtype=float)], axis=-1)  # (..., 3)
    ctx = np.broadcast_to(ctx[..., None, :], d.shape + (3,))
    return np.concatenate([ctx, d[..., None]], axis=-1)


def expected_rewards(x: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``g(x^T theta)`` for features ``x`` of shape ``(..., n)`` and ``theta`` of shape ``(n,)``."""
    x = np.asarray(x, dtype=float)
    theta = np.asarray(theta, dtype=float)
    return expit(np.sum(x * theta, axis=-1))


# ---------------------------------------------------------------------------- rounds
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
        without the constraint would take (``argmax_d r_t(d)``). If the mean of
        ``|Delta_t(d)| - tau`` at that decision is not positive, the long-term constraint is slack
        for an unconstrained learner and the experiment cannot distinguish the methods.

        Returns
        -------
        dict with ``acceptance_rate``, ``unconstrained_mean_excess`` (mean of ``|Delta| - tau`` at
        the unconstrained optimum), ``unconstrained_infeasible_fraction``, ``reward_gap`` (mean
        ``r(unconstrained best) - r(best feasible)``), ``feasible_mean_count``.

        Raises
        ------
        GeneratorCheckError
            If ``strict`` and the mean excess is not positive.
        """
        tau = self.tau if tau is None else float(tau)
        stream = RoundStream(self, rng)
        rounds = stream.take(n_rounds)
        rows = np.arange(len(rounds))
        best = np.argmax(rounds.reward, axis=1)
        size = np.abs(rounds.effect)
        excess = size[rows, best] - tau
        feas = best_feasible(rounds.reward, rounds.effect, tau)
        out = {
            "acceptance_rate": stream.accepted / stream.attempts,
            "unconstrained_mean_excess": float(excess.mean()),
            "unconstrained_infeasible_fraction": float(np.mean(excess > 0)),
            "reward_gap": float(np.mean(rounds.reward[rows, best] - feas["value"])),
            "feasible_mean_count": float(np.mean(np.sum(size <= tau, axis=1))),
        }
        if strict and not out["unconstrained_mean_excess"] > 0:
            raise GeneratorCheckError(
                f"the unconstrained optimum has mean |Delta| - tau = {out['unconstrained_mean_excess']:.4g} <= 0 at tau={tau}: "
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


# ---------------------------------------------------------------------------- benchmarks
def best_feasible(reward: np.ndarray, effect: np.ndarray, tau: float) -> dict[str, np.ndarray]:
    """The best single decision with ``|Delta_t(d)| <= tau`` (the benchmark ``d*_t`` of Eq. 6).

    Parameters
    ----------
    reward, effect : (..., K)

    Returns
    -------
    dict with ``index`` (...,) and ``value`` (...,); ``value`` is ``-inf`` where nothing is feasible.
    """
    reward = np.asarray(reward, dtype=float)
    feasible = np.abs(np.asarray(effect, dtype=float)) <= tau
    masked = np.where(feasible, reward, -np.inf)
    index = np.argmax(masked, axis=-1)
    return {"index": index, "value": np.take_along_axis(masked, index[..., None], axis=-1)[..., 0]}


def mixture_lp_value(reward: np.ndarray, effect: np.ndarray, tau: float) -> np.ndarray:
    """Value of the LP over mixtures (Eq. 8): ``max_pi E_pi r`` s.t. ``E_pi |Delta| <= tau``.

    One linear constraint over the simplex: an optimal vertex mixes at most two decisions, a
    feasible ``i`` (``|Delta_i| <= tau``) and possibly an infeasible ``j`` with weight
    ``p = (tau - |Delta_i|) / (|Delta_j| - |Delta_i|)`` so that the constraint binds. We enumerate
    all pairs (``K^2`` per round).

    Parameters
    ----------
    reward, effect : (..., K)
    tau : float or array broadcasting against (..., K)

    Returns
    -------
    ndarray (...,): ``-inf`` where the LP is infeasible (no feasible decision).
    """
    r = np.asarray(reward, dtype=float)
    c = np.abs(np.asarray(effect, dtype=float))
    tau = np.asarray(tau, dtype=float)
    feasible = c <= tau
    single = np.where(feasible, r, -np.inf).max(axis=-1)
    tau = tau[..., None] if tau.ndim else tau  # broadcast over the candidate pairs
    ci, cj = c[..., :, None], c[..., None, :]
    ri, rj = r[..., :, None], r[..., None, :]
    pair_ok = feasible[..., :, None] & ~feasible[..., None, :] & (rj > ri)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(pair_ok, (tau - ci) / (cj - ci), 0.0)
    mixed = np.where(pair_ok, ri + p * (rj - ri), -np.inf).max(axis=(-2, -1))
    return np.maximum(single, mixed)


def kappa_feature_space(theta: np.ndarray, feature_map: str = "unit_norm", n_grid: int = 20001) -> dict[str, float]:
    """Problem constants of Definition 1 on the generator's feature space (reconstructed).

    ``kappa_Z = max_{Z} 1/g'(f(Z)^T theta)`` over binary ``A, W, M`` and ``d`` on a grid of
    ``[-1, 1]`` (factual and counterfactual features are both in this set), and
    ``kappa = max over ||theta'|| <= ||theta||, ||x|| <= 1`` of ``1/g'(x^T theta') = 1/g'(S)``.

    Returns
    -------
    dict with ``kappa_Z``, ``kappa``, ``logit_min``, ``logit_max``.
    """
    theta = np.asarray(theta, dtype=float)
    d = np.linspace(-1.0, 1.0, int(n_grid))
    combos = np.array([(a, w, m) for a in (0, 1) for w in (0, 1) for m in (0, 1)], dtype=float)
    raw = raw_features(combos[:, 0], combos[:, 1], combos[:, 2], np.broadcast_to(d, (8, len(d))))
    z = np.sum(FEATURE_MAPS[feature_map](raw) * theta, axis=-1)
    gdot = lambda v: expit(v) * (1 - expit(v))  # noqa: E731
    s = float(np.linalg.norm(theta))
    return {
        "kappa_Z": float(1 / gdot(np.abs(z).max())),
        "kappa": float(1 / gdot(s)),
        "logit_min": float(z.min()),
        "logit_max": float(z.max()),
    }


# ---------------------------------------------------------------------------- environment
class Replicas:
    """Runs laid out as configurations x replications, sharing random numbers across configurations.

    Run ``i`` is replication ``i % n`` of configuration ``i // n``. Every random stream of run ``i``
    is that of run ``i % n`` (``SeedSequence(seed, spawn_key=(i % n, stream))``), so all
    configurations of one replication see the same contexts, reward noise and tie-breaking
    numbers (common random numbers), and one vectorised simulation steps every configuration at
    once. With ``replications=None`` every run is its own replication of a single configuration
    (the runner's usual streams).

    Parameters
    ----------
    streams : RunStreams
    replications : int or None
    """

    def __init__(self, streams: RunStreams, replications: int | None = None):
        runs = np.asarray(streams.runs, dtype=np.int64)
        if replications is None:
            self.base, self.config = runs, np.zeros(len(runs), dtype=np.int64)
        else:
            if int(replications) < 1:
                raise ValueError(f"replications={replications} must be a positive integer")
            self.base, self.config = runs % int(replications), runs // int(replications)
        self.seed, self.prefix = streams.seed, streams.prefix

    def generators(self, name: str) -> list[np.random.Generator]:
        return [
            np.random.Generator(np.random.PCG64(run_seed_sequence(self.seed, int(b), self.prefix + name)))
            for b in self.base
        ]

    def per_round(self, name: str, shape: tuple[int, ...] = (), kind: str = "uniform") -> RoundNoise:
        return RoundNoise(self.generators(name), shape, kind)

    def per_config(self, values, name: str) -> np.ndarray:
        """A value per run from a scalar or one value per configuration."""
        arr = np.atleast_1d(np.asarray(values, dtype=float))
        if arr.ndim != 1:
            raise ValueError(f"{name} must be a number or a list of numbers, got shape {arr.shape}")
        if len(arr) == 1:
            return np.full(len(self.config), arr[0])
        if self.config.max() >= len(arr):
            raise ValueError(
                f"{name} gives {len(arr)} configurations but run {int(self.config.argmax())} belongs to configuration {int(self.config.max())}"
            )
        return arr[self.config]


@dataclass
class FairContext:
    """What the learner sees in a round, for every run.

    Attributes
    ----------
    x, x_cf : (R, K, n)
        Factual and counterfactual features ``f(Z)``, ``f(Z^{a'})`` of the candidates.
    code : (R,) int
        The observed context ``(a_t, w_t, m_t)`` as ``4 a + 2 w + m`` (0..7).
    raw : (R, K, n)
        The raw factual ``Z = (a_t, w_t, m_t, d)``: the candidates differ only in the scalar ``d``,
        so their raw features lie on a segment (the optimistic step uses this).
    """

    x: np.ndarray
    x_cf: np.ndarray
    code: np.ndarray
    raw: np.ndarray


class FairLogisticBandit:
    """The constrained causal logistic bandit of the paper as a runner environment, vectorised over runs.

    Each run draws its rounds from its own stream ``contexts`` (rejection sampling of
    :class:`RoundGenerator`) and its rewards from the stream ``rewards``: one uniform per round,
    ``y = 1{u < r_t(d_t)}``, so two policies with the same seed face the same contexts and the same
    reward noise (common random numbers).

    Per-round feedback (all exact from ``theta*`` except ``reward``):

    - ``reward``: the Bernoulli outcome;
    - ``regret``: ``r_t(d*_t) - r_t(d_t)`` against the best feasible decision (Eq. 6);
    - ``regret_plus``: LP value (Eq. 8) minus ``r_t(d_t)`` (the "stronger" regret, Eq. 9);
    - ``penalized_regret``: ``r_t(d*_t) - r_t(d_t) 1{|Delta_t(d_t)| <= tau}`` (§4);
    - ``violation``: ``|Delta_t(d_t)| - tau`` (signed; Eq. 7 sums it);
    - ``violation_pos``: its positive part;
    - ``unconstrained_regret``: ``max_d r_t(d) - r_t(d_t)``.

    Parameters
    ----------
    generator : RoundGenerator
    tau : float or list of float, optional
        Threshold of the evaluation (default: the generator's); a list gives one per configuration
        (see :class:`Replicas`). Figure 5 varies it with the generator fixed (our choice: common
        contexts for every tau).
    replications : int, optional
        Lay the runs out as configurations x replications (:class:`Replicas`).
    chunk : int
        Rounds generated per refill (results do not depend on it).
    """

    def __init__(
        self, generator: RoundGenerator | None = None, tau=None, replications: int | None = None, chunk: int = 256
    ):
        self.generator = generator if generator is not None else RoundGenerator()
        self.tau = self.generator.tau if tau is None else tau
        if np.any(np.asarray(self.tau, dtype=float) < 0):
            raise ValueError(f"tau={tau} must be non-negative")
        if chunk < 1:
            raise ValueError(f"chunk={chunk} must be a positive integer")
        self.replications = replications
        self.chunk = int(chunk)
        self.n_features = self.generator.n_features
        self.n_candidates = int(self.generator.n_candidates)

    def reset(self, streams: RunStreams) -> None:
        rep = Replicas(streams, self.replications)
        self._base, self._inverse = np.unique(rep.base, return_inverse=True)
        base_streams = Replicas(RunStreams(streams.seed, self._base, streams.prefix))
        self._streams = [RoundStream(self.generator, g) for g in base_streams.generators("contexts")]
        self._reward_noise = rep.per_round("rewards", (), "uniform")
        self._taus = rep.per_config(self.tau, "tau")
        self._rows = np.arange(streams.n_runs)
        self._start = None
        self._buf = None

    def _refill(self, start: int) -> None:
        parts = [s.take(self.chunk) for s in self._streams]
        inv = self._inverse
        r = np.stack([p.reward for p in parts])[inv]
        e = np.stack([p.effect for p in parts])[inv]
        tau = self._taus[:, None, None]
        best = best_feasible(r, e, tau)
        if not np.all(np.isfinite(best["value"])):
            raise ValueError(
                f"a round has no decision with |Delta| <= tau={self.tau}; lower slater_margin or raise tau"
            )
        self._buf = {
            "x": np.stack([p.x for p in parts])[inv],
            "x_cf": np.stack([p.x_cf for p in parts])[inv],
            "reward": r,
            "size": np.abs(e),
            "best": best["value"],
            "lp": mixture_lp_value(r, e, tau),
            "unconstrained": r.max(axis=-1),
            "code": np.stack([4 * p.a + 2 * p.w + p.m for p in parts]).astype(np.int64)[inv],
            "raw": np.stack([raw_features(p.a, p.w, p.m, p.d) for p in parts])[inv],
        }
        self._start = start

    def observe(self, t: int) -> FairContext:
        if self._start is None or t >= self._start + self.chunk:
            if self._start is not None and t != self._start + self.chunk:
                raise ValueError(f"rounds must be observed in order; got t={t} after a chunk starting at {self._start}")
            self._refill(t if self._start is None else self._start + self.chunk)
        i = t - self._start
        self._i = i
        b = self._buf
        return FairContext(b["x"][:, i], b["x_cf"][:, i], b["code"][:, i], b["raw"][:, i])

    def pull(self, t: int, actions: np.ndarray) -> dict[str, np.ndarray]:
        i, rows, b = self._i, self._rows, self._buf
        actions = np.asarray(actions, dtype=np.int64)
        r = b["reward"][rows, i, actions]
        size = b["size"][rows, i, actions]
        violation = size - self._taus
        feasible = size <= self._taus
        u = self._reward_noise.at(t)
        return {
            "action": actions.astype(float),
            "reward": (u < r).astype(float),
            "expected_reward": r,
            "regret": b["best"][:, i] - r,
            "regret_plus": b["lp"][:, i] - r,
            "penalized_regret": b["best"][:, i] - np.where(feasible, r, 0.0),
            "violation": violation,
            "violation_pos": np.maximum(violation, 0.0),
            "unconstrained_regret": b["unconstrained"][:, i] - r,
        }
