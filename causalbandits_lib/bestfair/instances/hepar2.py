"""HEPAR-II (Oniśko et al.) as a best-fair-intervention problem (the paper's §6).

The network is read from the bnlearn file shipped inside the pinned pgmpy wheel
(:func:`causalbandits_lib.core.scm.bundled_network`), never from a hub. Roles, as in the paper:
``V = fibrosis`` (parent ``ChHepatitis``), ``S = sex`` (``s = female``, ``s' = male``) and
``Y = 1{carcinoma = present}``; the arms are random tables ``P_k(fibrosis | ChHepatitis)``.

The paper reweights "two conditional probabilities" and observes "6 nodes (8.6%)": that is
``P(fibrosis | ChHepatitis)`` and ``P(PBC | sex, age)``, observing sex, age, PBC, ChHepatitis,
fibrosis and carcinoma. ``Hyperbilirubinemia``, the other child of ``sex``, is not an ancestor of
``carcinoma`` and can be left out without bias (it can be added with ``sensitive_children``).

Our :class:`~causalbandits_lib.core.scm.DiscreteSCM` divides each published table row by its sum (the
file prints rows summing to 1 within 1e-5), so exact numbers agree with the notes' to about 1e-5.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Sequence

import numpy as np

from ...core.scm import DiscreteSCM, bundled_network
from ..model import FairArmsProblem, cheap_arm_costs
from ..observations import ObservationModel, observation_model

__all__ = [
    "SENSITIVE",
    "INTERVENED",
    "OUTCOME",
    "hepar2_model",
    "hepar2_observations",
    "hepar2_arm_tables",
    "hepar2_problem",
    "fairness_gap_extremes",
]

SENSITIVE, INTERVENED, OUTCOME = "sex", "fibrosis", "carcinoma"
SENSITIVE_VALUES = ("female", "male")
OUTCOME_VALUES = {"present": 1.0, "absent": 0.0}


@lru_cache(maxsize=1)
def hepar2_model() -> DiscreteSCM:
    """The HEPAR-II network (70 nodes) from pgmpy's bundled ``hepar2.bif.gz``."""
    return bundled_network("hepar2")


@lru_cache(maxsize=4)
def hepar2_observations(sensitive_children: tuple[str, ...] = ("PBC",)) -> ObservationModel:
    """What a pull observes on HEPAR-II, by exact inference (three variable-elimination queries)."""
    return observation_model(
        hepar2_model(),
        sensitive=SENSITIVE,
        intervened=INTERVENED,
        outcome=OUTCOME,
        outcome_values=OUTCOME_VALUES,
        sensitive_values=SENSITIVE_VALUES,
        sensitive_children=list(sensitive_children),
        name="HEPAR-II: σ(fibrosis) → carcinoma, S = sex",
    )


def hepar2_arm_tables(rng: np.random.Generator, n_arms: int = 10) -> np.ndarray:
    """Random arms ``P_k(fibrosis = present | ChHepatitis) ~ U(0, 1)``, independently for each of
    the three parent states (our reading of "10 random probability distributions"; notes A13).

    Returns
    -------
    ndarray, shape (n_arms, 3, 2): ``[..., 0]`` = present, ``[..., 1]`` = absent.
    """
    if int(n_arms) != n_arms or n_arms < 2:
        raise ValueError(f"n_arms={n_arms!r} must be an integer >= 2")
    q = rng.uniform(0.0, 1.0, size=(int(n_arms), 3))
    return np.stack([q, 1.0 - q], axis=-1)


def hepar2_problem(
    arm_tables: np.ndarray, sensitive_children: Sequence[str] = ("PBC",), cheap_arm: int | None = 0
) -> FairArmsProblem:
    """The HEPAR-II problem for arm tables of shape ``(K, 3, 2)``; arm ``cheap_arm`` is the
    deployed, free one (the paper's §6 uses §5's budget rule)."""
    obs = hepar2_observations(tuple(sensitive_children))
    tables = np.asarray(arm_tables, dtype=float)
    return obs.problem(
        tables,
        costs=cheap_arm_costs(tables.shape[0], cheap_arm),
        arm_names=[f"arm {k + 1}" for k in range(tables.shape[0])],
    )


def fairness_gap_extremes(sensitive_children: Sequence[str] = ("PBC",)) -> dict[str, float]:
    """The fairness gap ``ζ^{female,male}`` of the network's own fibrosis table, and its smallest
    and largest value over *every* possible arm.

    ``ζ`` is linear in each entry ``P(fibrosis = present | ch)`` of an arm's table, so over the box
    of all tables its extremes are attained at the 2^3 deterministic tables, which are enumerated.
    """
    obs = hepar2_observations(tuple(sensitive_children))
    vertices = np.array([[(b >> i) & 1 for i in range(3)] for b in range(8)], dtype=float)
    tables = np.concatenate(
        [np.stack([vertices, 1.0 - vertices], axis=-1), hepar2_model().mechanisms[INTERVENED].table[None]]
    )
    means = obs.means(tables)
    gaps = means[1] - means[2]
    return {"min": float(gaps[:8].min()), "max": float(gaps[:8].max()), "original_cpt": float(gaps[8])}
