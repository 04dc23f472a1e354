"""A toy instance with a known answer (ours, not the paper's): one binary user feature ``S`` (the
sensitive attribute), one binary arm ``A`` and an intermediate ``Z`` with ``R = Z + σ ε``.

Arm 0 pays 0.3 to ``S = 0`` and 1.0 to ``S = 1`` (counterfactual discrepancy ``Δ = 0.7``); arm 1
pays 0.5 to both (``Δ = 0``). D-UCB learns to play arm 0 for ``S = 1`` users; F-UCB at ``τ < 0.7``
must never play it once it has seen data.
"""

from __future__ import annotations

import numpy as np

from ...core.scm import DiscreteSCM
from ..counterfactual import monotone_discrepancy_table
from ..model import CausalBanditEnv, CellDecomposition, IIDContexts

__all__ = ["fair_toy", "premise_toy"]


def fair_toy(sigma: float = 0.1) -> tuple[CausalBanditEnv, CellDecomposition]:
    """The toy bandit (uniform users) and its decomposition over ``W = {Z}``; the feedback's
    ``discrepancy`` is the exact ``Δ(x, a)`` of Eq. 8."""
    pz1 = np.array([[0.3, 0.5], [1.0, 0.5]])  # P(Z=1 | S, A)
    model = DiscreteSCM(
        {"S": (0, 1), "A": (0, 1), "Z": (0, 1)},
        {"S": ((), [0.5, 0.5]), "A": ((), [0.5, 0.5]), "Z": (("S", "A"), np.stack([1 - pz1, pz1], axis=-1))},
    )
    env = CausalBanditEnv(model, ("S",), ("A",), {"Z": 1.0}, sigma, IIDContexts([0.5, 0.5]), name="fair toy")
    dec = env.decomposition(("Z",))
    env.discrepancy = (dec.probs[1] - dec.probs[0]) @ dec.cell_means * np.ones((2, 1))
    return env, dec


def premise_toy(
    b_given_s: tuple[float, float] = (0.3, 0.7),
    z_given_a: tuple[float, ...] = (0.2, 0.5, 0.8),
    weights: tuple[float, float] = (0.2, 0.6),
    sigma: float = 0.1,
) -> tuple[CausalBanditEnv, CellDecomposition]:
    """A bandit inside Theorem 2's premise (ours): the sensitive ``S`` has a descendant ``B`` among
    the user features, and no user feature points into the intermediate feature ``Z``.

    ``S → B`` with ``P(B = 1 | S = s) = b_given_s[s]``; the arm ``A`` (one value per entry of
    ``z_given_a``) sets ``P(Z = 1 | A = a) = z_given_a[a]``; ``R = w_B·B + w_Z·Z + σ ε`` with
    ``weights = (w_B, w_Z)``. The contexts are ``(S, B)`` from their joint distribution, the
    decomposition is over ``W = {B, Z}`` (the reward's parents, with ``B ∈ W`` a descendant of
    ``S``), and the feedback's ``discrepancy`` is reported under the monotone coupling (the
    counterfactual is not identified).
    """
    pb = np.asarray(b_given_s, dtype=float)
    pz = np.asarray(z_given_a, dtype=float)
    if pb.shape != (2,) or pz.ndim != 1 or pz.size < 2 or np.any((pb < 0) | (pb > 1)) or np.any((pz < 0) | (pz > 1)):
        raise ValueError(
            f"b_given_s={b_given_s!r} (two probabilities) and z_given_a={z_given_a!r} (two or more) are not allowed"
        )
    arms = tuple(range(pz.size))
    model = DiscreteSCM(
        {"S": (0, 1), "B": (0, 1), "A": arms, "Z": (0, 1)},
        {
            "S": ((), [0.5, 0.5]),
            "B": (("S",), np.stack([1 - pb, pb], axis=-1)),
            "A": ((), np.full(pz.size, 1.0 / pz.size)),
            "Z": (("A",), np.stack([1 - pz, pz], axis=-1)),
        },
    )
    probs = model.query(["S", "B"]).reshape(-1)
    env = CausalBanditEnv(
        model,
        ("S", "B"),
        ("A",),
        {"B": float(weights[0]), "Z": float(weights[1])},
        sigma,
        IIDContexts(probs),
        name="Theorem 2 premise toy",
    )
    env.discrepancy = monotone_discrepancy_table(env, "S")
    return env, env.decomposition(("B", "Z"))
