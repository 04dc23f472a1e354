"""The pcb chapter's (environment, policy) pairs, for the conformance test and ``make bench``.

- ``pcb.figure4.*``: every algorithm of Figure 4 (:func:`~.experiments.linucb_family`) on the
  contextual bandit of Table 2's model, each run with the priors of its own offline data set, as
  notebook ``pcb/04`` runs them;
- ``pcb.table1_world.*``: the same family in the world of the printed Table 1 (shared priors);
- ``pcb.ucb`` and ``pcb.ucb_pcb_per_run``: UCB and UCB-PCB on the arm means, UCB-PCB with each
  run's averaged bounds, as in notebook ``pcb/04``;
- ``pcb.linucb_pcb_contextual`` and ``pcb.ucb_pcb``: the benchmarks (prior bounds are the
  population values of the sound conditioning bound, so no offline sampling enters the timing);
- ``pcb.linucb_random.*``: LinUCB-PCB with random, possibly invalid and overlapping per-run
  bounds (both clippings), a warm start with random weights (zeros and a NaN estimate included),
  and the lowest-arm tie-break.

Every entry's policy has a compiled kernel for its environment (:mod:`.kernels`), so the
conformance check also compares the kernel with the numpy path.

The models and priors are computed on first use, so importing the registry is cheap.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from ..core.environments import BernoulliBandit
from ..core.registry import BanditEntry
from .algorithms import ClippedUCB, LinUCB, LinUCBConfig, arm_context_features
from .estimators import conditioning_bounds, marginal_bounds, offline_priors
from .experiments import arm_bounds, contextual_environment, linucb_family, table1_world
from .model import (
    N_ARMS,
    conditional_causal_effects,
    context_probabilities,
    interventional_arm_means,
    selected_observed_distribution,
    table2_model,
)
from .offline import offline_count_tables

__all__ = ["ENTRIES", "FIGURE4_NAMES", "TABLE1_WORLD_NAMES", "population_setting"]

#: The algorithms of Figure 4 on the causal model (``one_weight=True``) and in the Table 1 world.
FIGURE4_NAMES = (
    "LinUCB",
    "LinUCB-PCB",
    "LinUCB-PCB_plugin",
    "LinUCB_Biased",
    "LinUCB_CP",
    "LinUCB_Biased_n1",
    "LinUCB_CP_n1",
)
TABLE1_WORLD_NAMES = ("LinUCB", "LinUCB-PCB", "LinUCB_Biased", "LinUCB_CP")

#: Runs and offline draws of the entries whose priors come from offline data (notebook 4's
#: ``n_draws``, level and clipping; alpha = lam = 1).
N_PRIOR_RUNS = 6
N_DRAWS = 30_000
LEVEL = 0.95
RANDOM_RUNS = 6
METRICS = ("regret", "reward", "dominated")


@cache
def population_setting() -> dict:
    """Table 2's model and what the entries take from it: arm means ``truth`` (``[arm, context]``),
    ``p_context``, the population sound bounds ``lo``, ``hi`` (``[arm, context]``), the features,
    the non-contextual ``arm_means`` and their bounds ``arm_lo``, ``arm_hi`` (computed once)."""
    model = table2_model()
    truth = conditional_causal_effects(model)
    p_context = context_probabilities(model)
    lo, hi = conditioning_bounds(selected_observed_distribution(model) * 1e9)
    arm_lo, arm_hi = marginal_bounds(lo, hi, p_context)
    return {
        "model": model,
        "truth": truth,
        "p_context": p_context,
        "lo": lo,
        "hi": hi,
        "features": arm_context_features(),
        "arm_means": interventional_arm_means(model),
        "arm_lo": arm_lo,
        "arm_hi": arm_hi,
    }


@cache
def _offline_priors() -> dict:
    counts = offline_count_tables(population_setting()["model"], N_DRAWS, N_PRIOR_RUNS, seed=0).selected
    return offline_priors(counts, LEVEL, True)


@cache
def _figure4_family() -> dict:
    s = population_setting()
    return linucb_family(s["features"], _offline_priors(), 1.0, 1.0, "both")


@cache
def _table1_world() -> tuple:
    return table1_world(population_setting()["model"], N_DRAWS)


@cache
def _table1_world_family() -> dict:
    return linucb_family(population_setting()["features"], _table1_world()[1], 1.0, 1.0, "both", one_weight=False)


@cache
def _random_priors() -> dict:
    """Per-run random bounds (lower may exceed another arm's upper) and warm starts."""
    rng = np.random.default_rng(5)
    n = RANDOM_RUNS
    upper = rng.uniform(0.4, 0.9, (n, 4, 4))
    lower = upper - rng.uniform(0.1, 0.4, (n, 4, 4))
    weight = rng.integers(0, 50, (n, 4, 4)).astype(float)
    reward = rng.random((n, 4, 4))
    reward[0, 0, 0] = np.nan  # skipped cell
    return {"lower": lower, "upper": upper, "weight": weight, "reward": reward}


def _causal_env():
    s = population_setting()
    return contextual_environment(s["p_context"], s["truth"])


def _table1_env():
    return contextual_environment(population_setting()["p_context"], _table1_world()[0])


def _arm_env():
    return BernoulliBandit(population_setting()["arm_means"])


def _key(name: str) -> str:
    return name.lower().replace("-", "_")


def _from(family, name):
    return lambda: family()[name]()


def _random_linucb(**kw):
    def make():
        p = _random_priors()
        if kw.get("warm"):
            return LinUCB(
                arm_context_features(), LinUCBConfig(alpha=0.5), warm_weight=p["weight"], warm_reward=p["reward"]
            )
        return LinUCB(arm_context_features(), lower=p["lower"], upper=p["upper"], clip=kw["clip"])

    return make


ENTRIES = [
    *(
        BanditEntry(
            f"pcb.figure4.{_key(n)}", _causal_env, _from(_figure4_family, n), n_runs=N_PRIOR_RUNS, metrics=METRICS
        )
        for n in FIGURE4_NAMES
    ),
    *(
        BanditEntry(f"pcb.table1_world.{_key(n)}", _table1_env, _from(_table1_world_family, n), metrics=METRICS)
        for n in TABLE1_WORLD_NAMES
    ),
    BanditEntry("pcb.ucb", _arm_env, lambda: ClippedUCB(N_ARMS, 120)),
    BanditEntry(
        "pcb.ucb_pcb_per_run",
        _arm_env,
        lambda: ClippedUCB(N_ARMS, 120, *arm_bounds(_offline_priors(), population_setting()["p_context"])),
        n_runs=N_PRIOR_RUNS,
    ),
    # the two cases of the former benchmarks/bench_pcb.py (same horizon, runs and seed)
    BanditEntry(
        "pcb.linucb_pcb_contextual",  # disjoint LinUCB, d=5, 4 arms, Sherman-Morrison with ordered sums
        _causal_env,
        lambda: LinUCB(
            arm_context_features(),
            lower=population_setting()["lo"].T,
            upper=population_setting()["hi"].T,
            clip="both",
        ),
        bench_T=2000,
        seed=0,
    ),
    BanditEntry(
        "pcb.ucb_pcb",
        _arm_env,
        lambda: ClippedUCB(N_ARMS, 2000, lower=population_setting()["arm_lo"], upper=population_setting()["arm_hi"]),
        bench_T=2000,
        seed=0,
    ),
    # random per-run priors (the former hand-written vectorised-equals-loop test)
    *(
        BanditEntry(
            f"pcb.linucb_random.pcb_{clip}",
            _causal_env,
            _random_linucb(clip=clip),
            T=400,
            n_runs=RANDOM_RUNS,
            metrics=METRICS,
            seed=1,
        )
        for clip in ("both", "upper")
    ),
    BanditEntry(
        "pcb.linucb_random.warm",
        _causal_env,
        _random_linucb(warm=True),
        T=400,
        n_runs=RANDOM_RUNS,
        metrics=METRICS,
        seed=1,
    ),
    BanditEntry(
        "pcb.linucb_first_tie",
        _causal_env,
        lambda: LinUCB(arm_context_features(), tie_break="first"),
        metrics=METRICS,
    ),
]
