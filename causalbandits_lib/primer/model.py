"""The primer's models: small discrete SCMs that show the ideas every later chapter uses.

- :func:`confounded_treatment_model`: a treatment ``X``, an outcome ``Y`` and a confounder ``Z``
  (``Z → X``, ``Z → Y``, ``X → Y``), where seeing ``X = 1`` and doing ``X = 1`` differ
  (notebook ``primer/02``);
- :func:`contextual_model`: a context ``C``, an action ``A`` chosen by a policy (a soft
  intervention on ``A``) and a reward ``Y`` (notebook ``primer/03``), with the policies as tables
  (:func:`policy_table`, :func:`deterministic_policies`).
"""

from __future__ import annotations

import numpy as np

from ..core.scm import DiscreteSCM

__all__ = ["confounded_treatment_model", "contextual_model", "policy_table", "deterministic_policies"]


def confounded_treatment_model(
    p_severe: float = 0.5, treat_if_severe: float = 0.8, treat_if_mild: float = 0.2
) -> DiscreteSCM:
    """Severity ``Z`` (mild/severe) drives both treatment ``X`` and recovery ``Y``.

    The recovery table makes treatment help in both strata while severe patients, who are treated
    more often, recover less: the observational contrast understates the causal effect.

    Parameters
    ----------
    p_severe : float
        ``P(Z = severe)``.
    treat_if_severe, treat_if_mild : float
        ``P(X = 1 | Z)``.
    """
    for name, v in (("p_severe", p_severe), ("treat_if_severe", treat_if_severe), ("treat_if_mild", treat_if_mild)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{name}={v} must be a probability in [0, 1]")
    recover = np.array([[0.60, 0.75], [0.20, 0.35]])  # P(Y=1 | Z, X): rows Z=mild,severe; columns X=0,1
    return DiscreteSCM(
        {"Z": ("mild", "severe"), "X": (0, 1), "Y": (0, 1)},
        {
            "Z": ((), [1 - p_severe, p_severe]),
            "X": (("Z",), [[1 - treat_if_mild, treat_if_mild], [1 - treat_if_severe, treat_if_severe]]),
            "Y": (("Z", "X"), np.stack([1 - recover, recover], axis=-1)),
        },
        name="confounded treatment",
    )


def contextual_model(
    context_probs=(0.5, 0.3, 0.2),
    reward_table=((0.70, 0.40, 0.20), (0.30, 0.60, 0.35), (0.20, 0.30, 0.55)),
) -> DiscreteSCM:
    """Context ``C`` (user type), action ``A`` (item shown) and binary reward ``Y``.

    The action's observational mechanism ``P(A | C)`` is uniform; a policy replaces it (soft
    intervention). ``reward_table[c][a] = P(Y=1 | C=c, A=a)``.
    """
    pc = np.asarray(context_probs, dtype=float)
    r = np.asarray(reward_table, dtype=float)
    if r.shape != (len(pc), r.shape[1]) or r.ndim != 2:
        raise ValueError(f"reward_table must have one row per context ({len(pc)}), got shape {r.shape}")
    n_c, n_a = r.shape
    return DiscreteSCM(
        {"C": tuple(range(n_c)), "A": tuple(range(n_a)), "Y": (0, 1)},
        {
            "C": ((), pc),
            "A": (("C",), np.full((n_c, n_a), 1.0 / n_a)),
            "Y": (("C", "A"), np.stack([1 - r, r], axis=-1)),
        },
        name="contextual recommendation",
    )


def policy_table(actions_per_context: np.ndarray, n_actions: int) -> np.ndarray:
    """The table ``π(A | C)`` of a deterministic policy (one action per context)."""
    actions_per_context = np.asarray(actions_per_context, dtype=np.int64)
    table = np.zeros((len(actions_per_context), n_actions))
    table[np.arange(len(actions_per_context)), actions_per_context] = 1.0
    return table


def deterministic_policies(n_contexts: int, n_actions: int) -> np.ndarray:
    """All ``n_actions ** n_contexts`` deterministic policies, one row of actions per policy."""
    grids = np.meshgrid(*[np.arange(n_actions)] * n_contexts, indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1)
