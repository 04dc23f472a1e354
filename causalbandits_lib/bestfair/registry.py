"""The bestfair chapter's identifiers, for the conformance test and ``make bench``.

The chapter's algorithms are fixed-budget identifiers, not round-by-round bandits, so every entry
is a :class:`~causalbandits_lib.core.registry.IdentifierEntry` whose factory builds an
:class:`~causalbandits_lib.bestfair.algorithms.Identification` for a budget of ``T`` pulls:

- ``bestfair.<algorithm>_small``: the four algorithms (CSR-V1, CSR-V2, TS-V1, TS-V2) with the
  paper's ALLOCATE on a small synthetic instance (:data:`SMALL`: 6 arms, 6 contexts, 2 infeasible
  arms, one of them better than ``k*``); ``..._small_split``: the same with our "split"
  allocation (notebooks ``bestfair/04`` and ``bestfair/05``); ``bestfair.csr_v1_small_other_readings``:
  CSR-V1 with the other readings of ``n(T)`` and of the clip level's logarithm (notebook
  ``bestfair/02``'s parameters);
- ``bestfair.<algorithm>_hepar2``: the four algorithms on HEPAR-II with four random arms (§6,
  notebook ``bestfair/05``);
- ``bestfair.csr_v2_binomial``: CSR-V2 on the binomial variant (20 values of ``V``: 800 cells,
  divergences to the cheap arm up to ~1e10) of the 'loose' instance, the kind of problem of
  notebook ``bestfair/04``'s "binomial variant" section;
- ``bestfair.csr_v2_loose``, ``bestfair.ts_v1_loose`` and their ``.warm_lp`` variants: the cases of
  the former ``benchmarks/bench_bestfair.py`` (the 'loose' instance of seed 0, ``bench_T = 5000``,
  seed 0). A cold entry builds a fresh LP for every identifier, so its time includes the LP solves;
  a warm entry's identifiers share one LP whose cache a first execution of 100 runs (the largest
  ``bench_runs``) has filled, so its time is the simulation alone.

Every identifier offers the compiled path (:meth:`Identification.with_backend`), so the
conformance check also compares it with the numpy path, bit for bit, on every entry.

The instances are built on first use, so importing the registry is cheap.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

from ..core.registry import IdentifierEntry
from .algorithms import ALGORITHMS, AlgorithmConfig, Identification, identify
from .allocation import AllocationLP
from .instances import hepar2
from .instances.synthetic import SyntheticInstance, SyntheticSetting, binomial_variant, synthetic_instance
from .model import FairArmsProblem

__all__ = ["ENTRIES", "SMALL", "small", "loose", "loose_binomial", "hepar2_small", "warm_lp"]

#: A small synthetic setting (ours, for the conformance checks): every kind of arm of the paper's
#: settings, in an instance small enough to identify in milliseconds.
SMALL = SyntheticSetting(
    "small",
    tolerance=0.1,
    n_infeasible=2,
    outcome_gap=0.06,
    fairness_gap=0.02,
    n_better_infeasible=1,
    n_arms=6,
    n_contexts=6,
    n_fairness_contexts=3,
    description="registry: 6 arms, 2 infeasible (one better than k*), 6 contexts (ours)",
)
#: Tolerance of the HEPAR-II entries (the paper's 0.2).
HEPAR2_TOLERANCE = 0.2
#: Seed of the former benchmark: the 'loose' instance and the identifications.
BENCH_SEED = 0
#: Runs with which a warm entry's shared LP is filled (the largest ``bench_runs``).
WARM_RUNS = 100
#: Values of ``V`` in the binomial entry (notebook ``bestfair/04``'s ``binomial_levels``).
BINOMIAL_LEVELS = 20


@cache
def small() -> SyntheticInstance:
    """The instance of :data:`SMALL` (seed 0)."""
    return synthetic_instance(SMALL, np.random.default_rng(0))


@cache
def loose() -> SyntheticInstance:
    """The 'loose' instance of the former benchmark (seed :data:`BENCH_SEED`)."""
    return synthetic_instance("loose", np.random.default_rng(BENCH_SEED))


@cache
def loose_binomial() -> SyntheticInstance:
    """The binomial variant (:data:`BINOMIAL_LEVELS` values of ``V``) of :func:`loose`."""
    return binomial_variant(loose(), BINOMIAL_LEVELS)


@cache
def hepar2_small() -> FairArmsProblem:
    """HEPAR-II with four random arms (seed 0), the first one cheap."""
    return hepar2.hepar2_problem(hepar2.hepar2_arm_tables(np.random.default_rng(0), 4))


@cache
def warm_lp(algorithm: str, T: int) -> AllocationLP:
    """An LP of the 'loose' instance whose cache :data:`WARM_RUNS` runs of ``algorithm`` with ``T``
    pulls have filled (the warm-LP benchmark cases share it)."""
    inst = loose()
    lp = AllocationLP(inst.problem.allocation_matrices, inst.problem.costs)
    identify(inst.problem, algorithm, T, inst.setting.tolerance, BENCH_SEED, n_runs=WARM_RUNS, lp=lp)
    return lp


def _on_small(algorithm: str, config: AlgorithmConfig | None = None):
    def make(T: int) -> Identification:
        inst = small()
        return Identification(inst.problem, algorithm, T, inst.setting.tolerance, config=config)

    return make


def _on_hepar2(algorithm: str):
    def make(T: int) -> Identification:
        return Identification(hepar2_small(), algorithm, T, HEPAR2_TOLERANCE)

    return make


def _on_loose_binomial(algorithm: str):
    def make(T: int) -> Identification:
        inst = loose_binomial()
        return Identification(inst.problem, algorithm, T, inst.setting.tolerance)

    return make


def _on_loose(algorithm: str, warm: bool):
    def make(T: int) -> Identification:
        inst = loose()
        lp = warm_lp(algorithm, T) if warm else None
        return Identification(inst.problem, algorithm, T, inst.setting.tolerance, lp=lp)

    return make


def _slug(algorithm: str) -> str:
    return algorithm.lower().replace("-", "_")


_SPLIT = AlgorithmConfig(allocation="split")
_OTHER_READINGS = AlgorithmConfig(phase_rule="log2_sqrtT", log_base=math.e)

ENTRIES = [
    *(IdentifierEntry(f"bestfair.{_slug(a)}_small", _on_small(a), budget=2000) for a in ALGORITHMS),
    *(IdentifierEntry(f"bestfair.{_slug(a)}_small_split", _on_small(a, _SPLIT), budget=2000) for a in ALGORITHMS),
    IdentifierEntry("bestfair.csr_v1_small_other_readings", _on_small("CSR-V1", _OTHER_READINGS), budget=2000),
    *(IdentifierEntry(f"bestfair.{_slug(a)}_hepar2", _on_hepar2(a), budget=2000) for a in ALGORITHMS),
    IdentifierEntry("bestfair.csr_v2_binomial", _on_loose_binomial("CSR-V2"), budget=2000),
    *(
        IdentifierEntry(
            f"bestfair.{_slug(a)}_loose" + (".warm_lp" if warm else ""),
            _on_loose(a, warm),
            budget=600,
            bench_T=5000,
            bench_runs=(1, 10, 100),
            seed=BENCH_SEED,
        )
        for warm in (False, True)
        for a in ("CSR-V2", "TS-V1")
    ),
]
