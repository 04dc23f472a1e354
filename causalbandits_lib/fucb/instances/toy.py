"""A toy instance with a known answer (ours, not the paper's): one binary user feature ``S`` (the
sensitive attribute), one binary arm ``A`` and an intermediate ``Z`` with ``R = Z + σ ε``.

Arm 0 pays 0.3 to ``S = 0`` and 1.0 to ``S = 1`` (counterfactual discrepancy ``Δ = 0.7``); arm 1
pays 0.5 to both (``Δ = 0``). D-UCB learns to play arm 0 for ``S = 1`` users; F-UCB at ``τ < 0.7``
must never play it once it has seen data.
"""

from __future__ import annotations

import numpy as np

from ...core.scm import DiscreteSCM
from ..model import CausalBanditEnv, CellDecomposition, IIDContexts

__all__ = ["fair_toy"]


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
