"""The constrained causal logistic bandit as a runner environment, vectorised over runs.

:class:`FairLogisticBandit` follows :class:`causalbandits_lib.core.protocols.Environment`: each
round it shows every run a :class:`FairContext` (factual and counterfactual features of the
candidates) and, for the played decisions, returns the Bernoulli outcome with exact per-round
regrets and violations computed from ``theta*`` (:mod:`.oracle`).

It reads the runs' layout from the streams it is reset with: with ``simulate(...,
replications=n)`` (:class:`~causalbandits_lib.core.streams.RunStreams`) the runs are
configurations x replications, every configuration of a replication sees the same contexts and
reward noise, and ``tau`` may give one threshold per configuration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.streams import RunStreams
from .features import raw_features
from .generator import RoundGenerator, RoundStream
from .kernels import mixture_lp_values
from .oracle import best_feasible

__all__ = ["FairContext", "FairLogisticBandit"]


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
    :class:`~.generator.RoundGenerator`) and its rewards from the stream ``rewards``: one uniform per round,
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
        of the configurations x replications layout of the streams
        (:meth:`~causalbandits_lib.core.streams.RunStreams.per_config`). Figure 5 varies it with the
        generator fixed (our choice: common contexts for every tau).
    chunk : int
        Rounds generated per refill (results do not depend on it).
    """

    def __init__(self, generator: RoundGenerator | None = None, tau=None, chunk: int = 256):
        self.generator = generator if generator is not None else RoundGenerator()
        self.tau = self.generator.tau if tau is None else tau
        if np.any(np.asarray(self.tau, dtype=float) < 0):
            raise ValueError(f"tau={tau} must be non-negative")
        if chunk < 1:
            raise ValueError(f"chunk={chunk} must be a positive integer")
        self.chunk = int(chunk)
        self.n_features = self.generator.n_features
        self.n_candidates = int(self.generator.n_candidates)

    def reset(self, streams: RunStreams) -> None:
        # contexts are generated once per replication (rejection sampling is the costly part) and
        # spread over its configurations; the reward noise is drawn per run from the same streams
        self._inverse = streams.inverse
        self._streams = [RoundStream(self.generator, g) for g in streams.replicas().generators("contexts")]
        self._reward_noise = streams.per_round("rewards", (), "uniform")
        self._taus = streams.per_config(self.tau, "tau")
        self._rows = np.arange(streams.n_runs)
        self._start = None
        self._buf = None

    def _refill(self, start: int) -> None:
        # the contexts once per replication (``_rep``); what depends on a run's tau per run (``_run``)
        parts = [s.take(self.chunk) for s in self._streams]
        inv = self._inverse
        r_rep = np.stack([p.reward for p in parts])
        e_rep = np.stack([p.effect for p in parts])
        r, e = r_rep[inv], e_rep[inv]
        tau = self._taus[:, None, None]
        best = best_feasible(r, e, tau)
        if not np.all(np.isfinite(best["value"])):
            raise ValueError(
                f"a round has no decision with |Delta| <= tau={self.tau}; lower slater_margin or raise tau"
            )
        self._rep = {
            "x": np.stack([p.x for p in parts]),
            "x_cf": np.stack([p.x_cf for p in parts]),
            "reward": r_rep,
            "size": np.abs(e_rep),
            "code": np.stack([4 * p.a + 2 * p.w + p.m for p in parts]).astype(np.int64),
            "raw": np.stack([raw_features(p.a, p.w, p.m, p.d) for p in parts]),
        }
        self._run = {
            "best": best["value"],
            "lp": mixture_lp_values(r, e, self._taus),
            "unconstrained": r.max(axis=-1),
        }
        self._buf = None
        self._start = start

    def _full(self) -> dict[str, np.ndarray]:
        """The chunk for every run (what :meth:`observe` and :meth:`pull` read), built on first use:
        the compiled kernel reads the replications' arrays (:meth:`replica_block`) and never needs it."""
        if self._buf is None:
            self._buf = {**{k: v[self._inverse] for k, v in self._rep.items()}, **self._run}
        return self._buf

    def _ensure(self, t: int) -> None:
        """Generate the chunk holding round ``t`` (rounds come in order)."""
        if self._start is None or t >= self._start + self.chunk:
            if self._start is not None and t != self._start + self.chunk:
                raise ValueError(f"rounds must be observed in order; got t={t} after a chunk starting at {self._start}")
            self._refill(t if self._start is None else self._start + self.chunk)
        self._i = t - self._start

    def observe(self, t: int) -> FairContext:
        self._ensure(t)
        i, b = self._i, self._full()
        return FairContext(b["x"][:, i], b["x_cf"][:, i], b["code"][:, i], b["raw"][:, i])

    def replica_block(self, t0: int, t1: int) -> dict[str, np.ndarray]:
        """The rounds ``t0 .. t1-1`` for a compiled kernel, once per replication: ``x``, ``x_cf``
        and ``raw`` as ``(n_replications, t1 - t0, n, K)`` (features before candidates, the layout
        the generator writes, so the chunks are joined without a transposing copy), ``code``
        ``(n_replications, t1 - t0)``, ``reward`` and ``size`` ``(n_replications, t1 - t0, K)``; per
        run ``best``, ``lp`` and ``unconstrained`` ``(R, t1 - t0)`` and ``replica`` ``(R,)``, the row
        of each run's replication. Rounds are generated exactly as by :meth:`observe` (same chunks,
        in order), and the environment is left as ``observe(t1 - 1)`` leaves it."""
        parts = []
        t = t0
        while t < t1:
            self._ensure(t)
            a, b = t - self._start, min(t1, self._start + self.chunk) - self._start
            part = {k: v[:, a:b] for k, v in {**self._rep, **self._run}.items()}
            for k in ("x", "x_cf", "raw"):
                part[k] = np.swapaxes(part[k], -1, -2)
            parts.append(part)
            t = self._start + b
        self._ensure(t1 - 1)
        out = {k: np.concatenate([p[k] for p in parts], axis=1) for k in parts[0]}
        out["replica"] = np.asarray(self._inverse, dtype=np.int64)
        return out

    def block(self, t0: int, t1: int) -> dict[str, np.ndarray]:
        """The rounds ``t0 .. t1-1`` for every run, as :meth:`observe` and :meth:`pull` see them:
        ``x``, ``x_cf``, ``raw`` ``(R, t1 - t0, K, n)``, ``code`` ``(R, t1 - t0)``, ``reward``,
        ``size`` ``(R, t1 - t0, K)``, ``best``, ``lp``, ``unconstrained`` ``(R, t1 - t0)``."""
        blk = self.replica_block(t0, t1)
        rows = blk.pop("replica")
        for k in ("x", "x_cf", "raw"):
            blk[k] = np.swapaxes(blk[k], -1, -2)
        for k in ("x", "x_cf", "raw", "code", "reward", "size"):
            blk[k] = blk[k][rows]
        return blk

    @property
    def taus(self) -> np.ndarray:
        """The threshold of every run, shape (R,) (after :meth:`reset`)."""
        return self._taus

    @property
    def reward_noise(self):
        """The per-round uniforms of the rewards (:class:`~causalbandits_lib.core.streams.RoundNoise`)."""
        return self._reward_noise

    def pull(self, t: int, actions: np.ndarray) -> dict[str, np.ndarray]:
        i, rows, b = self._i, self._rows, self._full()
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
