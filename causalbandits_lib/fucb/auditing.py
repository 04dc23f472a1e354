"""Unfair decisions, as the book defines them (Huang, Zhang and Wu, AAAI 2022, never define them):
an auditor that rides along any algorithm and the counts of unfair decisions of a run.

- :class:`FairnessAuditor`: from an algorithm's own history, the cell statistics F-UCB would keep,
  and for each chosen arm ``Δ̂`` and both radii of Eq. 12 (ours);
- :class:`Audited`: a policy with an auditor riding along (its diagnostics carry the audit);
- :func:`unfair_counts` and :data:`UNFAIR_DEFINITIONS`: how many decisions of each run are unfair
  at a level ``τ``, under each definition the book uses.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core.kernels import registered_kernel
from ..core.policies import CellStatistics
from ..core.runner import SimulationResult
from ..core.streams import RunStreams
from .algorithms import cell_radius, log_inv_delta, running_means

__all__ = ["FairnessAuditor", "Audited", "UNFAIR_DEFINITIONS", "unfair_counts", "radius_coverage"]

#: Definitions of an unfair decision at level τ (the paper gives none):
#: ``auditor_paper``: Δ̂ + radius of Eq. 12 as printed > τ, computed by the shared auditor from the
#: algorithm's own history; ``auditor_diff``: the same with the propagated radius; ``estimate``:
#: Δ̂ alone > τ; ``true``: the exact |Δ(x_t, a_t)| of the model > τ.
UNFAIR_DEFINITIONS = ("auditor_paper", "auditor_diff", "estimate", "true")


class FairnessAuditor:
    """Counts "unfair decisions" of any algorithm the way the book defines them (the paper does not).

    It watches an algorithm's own trajectory, keeps the cell statistics F-UCB would keep on that
    history, and before each update reports for the chosen arm ``Δ̂`` and both radii of Eq. 12.
    A decision is unfair at level ``τ`` when ``Δ̂ + radius > τ`` (radius ``"paper"`` or ``"diff"``).
    For F-UCB with the same settings the auditor's numbers equal the policy's own.

    Parameters
    ----------
    estimator : IdentifiedDiscrepancy or BoundedDiscrepancy
    delta_power, unseen_mean, clip_radius
        As the audited F-UCB would use them.
    """

    def __init__(self, estimator, delta_power: float = 2.0, unseen_mean: float = 0.0, clip_radius: bool = False):
        self.estimator = estimator
        self.dec = estimator.dec
        self.delta_power = float(delta_power)
        self.unseen_mean = float(unseen_mean)
        self.clip_radius = bool(clip_radius)

    def reset(self, n_runs: int) -> None:
        self.stats = CellStatistics(n_runs, self.dec.n_cells)

    def measure(self, t: int, context: np.ndarray, actions: np.ndarray) -> dict[str, np.ndarray]:
        rad8 = cell_radius(self.stats.counts, log_inv_delta(t, self.delta_power), 8.0, self.clip_radius)
        delta_hat, r_paper, r_diff = self.estimator.estimate(
            running_means(self.stats, self.unseen_mean), rad8, context, np.asarray(actions)
        )
        return {"audit_delta_hat": delta_hat, "audit_radius_paper": r_paper, "audit_radius_diff": r_diff}

    def observe(self, feedback: dict) -> None:
        self.stats.add(self.dec.realized_cells(feedback), feedback["reward"])


class Audited:
    """A policy with a :class:`FairnessAuditor` riding along (its diagnostics carry the audit)."""

    def __init__(self, policy, auditor: FairnessAuditor):
        self.policy = policy
        self.auditor = auditor
        self.name = getattr(policy, "name", type(policy).__name__)

    def reset(self, streams: RunStreams) -> None:
        self.policy.reset(streams)
        self.auditor.reset(streams.n_runs)
        self.last_audit: dict[str, np.ndarray] = {}

    def select(self, t: int, context) -> np.ndarray:
        actions = self.policy.select(t, context)
        self.last_audit = self.auditor.measure(t, context, actions)
        return actions

    def update(self, t: int, context, actions, feedback) -> None:
        self.policy.update(t, context, actions, feedback)
        self.auditor.observe(feedback)

    def diagnostics(self) -> dict[str, np.ndarray]:
        own = getattr(self.policy, "diagnostics", None)
        return {**(own() if own is not None else {}), **self.last_audit}

    def compiled(self, env):
        """The compiled fast path of the policy and its auditor together against
        :class:`~.model.CausalBanditEnv` (:func:`~.kernels.kernel_for`, registered by
        :mod:`.kernels`), or None."""
        return registered_kernel(self, env)


def unfair_counts(result: SimulationResult, taus: Sequence[float], definition: str = "auditor_paper") -> np.ndarray:
    """Number of unfair decisions per run at each τ, shape ``(len(taus), n_runs)`` (see
    :data:`UNFAIR_DEFINITIONS`); ``result`` keeps the metrics of an audited run
    (:func:`~causalbandits_lib.fucb.experiments.audited_run`)."""
    if definition not in UNFAIR_DEFINITIONS:
        raise ValueError(f"definition={definition!r} is not allowed; use one of {UNFAIR_DEFINITIONS}")
    if definition == "true":
        score = np.abs(result["discrepancy"])
    elif definition == "estimate":
        score = result["audit_delta_hat"]
    else:
        score = result["audit_delta_hat"] + result["audit_radius_" + definition.split("_")[1]]
    return np.stack([(score > float(tau)).sum(axis=1) for tau in taus])


def radius_coverage(result: SimulationResult, radius: str, bands: Sequence[tuple[int, int]]) -> np.ndarray:
    """How often the audited confidence interval ``[Δ̂ - radius, Δ̂ + radius]`` of the chosen arm
    contains its true ``|Δ|``: the share of rounds ``t`` with ``lo <= t < hi`` (rounds counted from 1)
    in which it does, per band ``(lo, hi)`` and run, shape ``(len(bands), n_runs)``. ``radius`` is
    ``"paper"`` (Eq. 12 as printed) or ``"diff"`` (propagated)."""
    if radius not in ("paper", "diff"):
        raise ValueError(f"radius={radius!r} is not allowed; use 'paper' or 'diff'")
    covered = np.abs(result["audit_delta_hat"] - np.abs(result["discrepancy"])) <= result["audit_radius_" + radius]
    T = covered.shape[1]
    out = []
    for lo, hi in bands:
        lo, hi = int(lo), min(int(hi), T + 1)
        if not 1 <= lo < hi:
            raise ValueError(f"band ({lo}, {hi}) must satisfy 1 <= lo < hi <= T + 1 = {T + 1}")
        out.append(covered[:, lo - 1 : hi - 1].mean(axis=1))
    return np.stack(out)
