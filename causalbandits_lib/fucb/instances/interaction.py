"""A variant of ours where the fairness constraint binds (not the paper's model).

On the paper's two models every arm has the same counterfactual discrepancy for a given user, so
the true constraint admits all arms or none and cannot trade regret for fairness (notebooks 4
and 5). Here gender ``S`` interacts with the arm: the better an arm pays on average, the more it
favours one gender, so a smaller threshold ``τ`` excludes better arms.

Nodes: gender ``S`` and a second user feature ``X2`` (independent roots, uniform), the arm ``A``
(one value per entry of ``base``) and an intermediate ``Z`` with

``P(Z = 1 | S = s, X2 = x, A = a) = base[a] + s · gamma[a] + shift · x``,

and the reward ``R = Z + σ ε``. The counterfactual is identified (``S`` is a root and ``X2`` does not
descend from it) and the discrepancy of arm ``a`` is exactly ``gamma[a]`` for every user.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...core.scm import DiscreteSCM
from ..counterfactual import identified_discrepancy
from ..model import CausalBanditEnv, CellDecomposition, IIDContexts

__all__ = ["SENSITIVE", "BASE", "GAMMA", "interaction_bandit"]

SENSITIVE = "S"
#: ours: the arms' base rates and their gender effects, both increasing with the arm (the effects lie
#: between the thresholds of Table 1, so no comparison with τ rests on rounding)
BASE = (0.30, 0.34, 0.38, 0.42, 0.46, 0.50)
GAMMA = (0.0, 0.05, 0.15, 0.25, 0.35, 0.45)


def interaction_bandit(
    base: Sequence[float] = BASE, gamma: Sequence[float] = GAMMA, shift: float = 0.05, sigma: float = 0.1
) -> tuple[CausalBanditEnv, CellDecomposition]:
    """The bandit and its decomposition over ``W = {Z}`` (the reward's only parent); the feedback's
    ``discrepancy`` is the exact ``Δ(x, a) = gamma[a]`` (Eq. 8)."""
    base, gamma = np.asarray(base, dtype=float), np.asarray(gamma, dtype=float)
    if base.ndim != 1 or base.shape != gamma.shape or base.size < 2:
        raise ValueError(
            f"base and gamma must be equal-length lists of two or more numbers, got {base.tolist()}, {gamma.tolist()}"
        )
    p1 = base[None, None, :] + np.arange(2)[:, None, None] * gamma[None, None, :] + shift * np.arange(2)[None, :, None]
    if np.any(p1 < 0) or np.any(p1 > 1):
        raise ValueError(f"base + gamma + shift must stay in [0, 1]; got P(Z=1) from {p1.min():.3g} to {p1.max():.3g}")
    arms = tuple(range(base.size))
    model = DiscreteSCM(
        {"S": (0, 1), "X2": (0, 1), "A": arms, "Z": (0, 1)},
        {
            "S": ((), [0.5, 0.5]),
            "X2": ((), [0.5, 0.5]),
            "A": ((), np.full(base.size, 1.0 / base.size)),
            "Z": (("S", "X2", "A"), np.stack([1 - p1, p1], axis=-1)),
        },
    )
    probs = model.query(["S", "X2"]).reshape(-1)
    env = CausalBanditEnv(
        model, ("S", "X2"), ("A",), {"Z": 1.0}, sigma, IIDContexts(probs), name="gender-arm interaction (ours)"
    )
    dec = env.decomposition(("Z",))
    env.discrepancy = identified_discrepancy(dec, env.counterfactual_contexts(SENSITIVE))
    return env, dec
