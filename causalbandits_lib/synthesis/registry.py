"""The chapter's (environment, policy) pairs, for the conformance test.

One fixed instance (the first of the generator with the notebooks' seed 0), the threshold at the
median discrepancy, and every policy of :data:`~.algorithms.POLICIES` and F-UCB-cert (with its
``-PCB`` variant); the ``-PCB`` ones with bounds from offline logs drawn for the conformance runs
(medium bias). The adapters that hand the simulation to the fucb and fairx kernels
(:mod:`.kernels`) are compared with their numpy path there too, F-UCB's (and F-UCB-cert's) with
their diagnostics (:data:`FUCB_METRICS`).
"""

from __future__ import annotations

import numpy as np

from ..core.registry import BanditEntry
from . import algorithms as A
from . import model as M

__all__ = ["ENTRIES", "METRICS", "FUCB_METRICS"]

#: the per-round values the conformance check compares
METRICS = ("regret", "reward", "delta", "violation_pos", "cf_unfair", "exposure")
#: and those of F-UCB (with or without the bounds): its per-round diagnostics too
FUCB_METRICS = METRICS + ("fallback", "fair_set_size", "own_ucb_delta")
_SEED = 11
_RUNS = 8  # bounds for the run indices the conformance check uses (it simulates at most 4 runs)


def _instance() -> M.Instance:
    return M.instances(np.random.SeedSequence(0), 1)[0]


def _bounds():
    inst = _instance()
    counts = M.offline_counts(inst, 1.0, 0.1, 5000, _SEED, range(_RUNS))
    return A.sound_bounds(counts)


def _entry(name: str) -> BanditEntry:
    def make_env():
        inst = _instance()
        return M.RecommenderEnv(inst, inst.tau(0.5))

    def make_policy():
        inst = _instance()
        lo, hi = _bounds() if name.endswith("PCB") else (None, None)
        return A.make_policy(name, inst, inst.tau(0.5), lower=lo, upper=hi, horizon=120)

    key = name.lower().replace("-", "_").replace(" (true δ)", "_true_delta")
    metrics = FUCB_METRICS if name.startswith("F-UCB") and "true" not in name else METRICS
    return BanditEntry(f"synthesis.{key}", make_env, make_policy, T=120, n_runs=4, metrics=metrics, seed=_SEED)


#: every policy of the chapter's tables, and notebook 4's F-UCB-cert (ours) with its bounded variant
ENTRIES = [_entry(name) for name in (*A.POLICIES, "F-UCB-cert", "F-UCB-cert-PCB")]
