"""The primer's identities and bounds.

- :func:`policy_value_decomposition`: the value of a soft intervention as a mixture of hard ones
  (Correa and Bareinboim, 2020; notebook ``primer/03``);
- the UCB1 upper bound and the Lai-Robbins lower bound of notebook ``primer/01`` are generic and
  live in :mod:`causalbandits_lib.core.bounds`.
"""

from __future__ import annotations

import numpy as np

from ..core.scm import DiscreteSCM

__all__ = ["policy_value_decomposition"]


def policy_value_decomposition(model: DiscreteSCM, policy: np.ndarray) -> float:
    """``E[Y; σ_A = π] = Σ_c P(c) Σ_a π(a|c) E[Y | do(A=a), C=c]`` (σ-calculus decomposition).

    Derived in notebooks/primer/03_soft_interventions.md, section 'The model and the value of a policy'
    (equation ``primer-policy-value``).

    Each term ``E[Y | do(a), c]`` is an exact interventional query; the test and the notebook
    compare the sum with the exact query on the soft-intervened model.
    """
    policy = np.asarray(policy, dtype=float)
    pc = model.query(["C"])
    total = 0.0
    for c, c_label in enumerate(model.states["C"]):
        for a, a_label in enumerate(model.states["A"]):
            if policy[c, a] == 0:
                continue
            total += pc[c] * policy[c, a] * model.expectation("Y", evidence={"C": c_label}, do={"A": a_label})
    return float(total)
