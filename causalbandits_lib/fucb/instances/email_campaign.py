"""The Email Campaign causal model of Huang, Zhang and Wu (AAAI 2022, §4.1 and App. E.1).

Eleven variables: user features gender ``X1`` (sensitive), age ``X2``, occupation ``X3``; arm
features product ``A1``, purpose ``A2``, send time ``A3``; intermediate email body template
``I1``, fitness ``I2``, subject length ``I3``, user query ``I4``; and the reward

``R = (I1 + I2 + I3 + A3) / 12 + N(0, σ²)``,  ``σ = 0.1``.

Tables (App. E.1): ``P(I4 | X1, X2, X3)`` is Table 5; ``P(I2 = 1 | A1, A2, I4) = (A1 + A2 + I4)/12``;
``P(I1 = 1 | A1, A2, I2) = (A1 + A2 + I2)/10``; ``P(I3 = 1 | I2 = 1) = 0.4``,
``P(I3 = 1 | I2 = 2) = 0.6``. The graph (Figure 2a is not in the text) is rebuilt from these tables:

``X1, X2, X3 → I4``; ``A1, A2, I4 → I2``; ``A1, A2, I2 → I1``; ``I2 → I3``; ``I1, I2, I3, A3 → R``,

plus the policy edges ``X → A`` of the paper's Figure 1 (the policy replaces them).

Choices the paper leaves open (all parameters; the book's defaults follow the reading notes):

- ``X`` codes ``{0, 1}`` (Table 5) although Table 4 lists ``(1, 2)``; ``I4`` has four values (Table 5
  has four columns) although Table 4 lists two;
- ``i3_values``: ``I3`` is binary ``{1, 2}`` (only ``P(I3 = 1 | I2)`` is given) or takes ``{1, 2, 3, 4}``
  as Table 4 lists, with the remaining mass spread evenly over ``{2, 3, 4}``;
- ``context_marginals``: the users' features are independent with these ``P(X_j = 1)`` (default
  uniform); independent roots keep the counterfactual identifiable, as the paper states it is;
- the complement value of each binary table is 2.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ...core.scm import DiscreteSCM
from ..counterfactual import identified_discrepancy, monotone_discrepancy_table
from ..model import CausalBanditEnv, IIDContexts

__all__ = [
    "CONTEXT_NODES",
    "ARM_NODES",
    "INTERMEDIATE_NODES",
    "SENSITIVE",
    "REWARD",
    "TABLE5",
    "email_campaign_model",
    "email_graph",
    "email_campaign_env",
    "arm_label",
]

CONTEXT_NODES = ("X1", "X2", "X3")
ARM_NODES = ("A1", "A2", "A3")
INTERMEDIATE_NODES = ("I1", "I2", "I3", "I4")
SENSITIVE = "X1"
REWARD = "R"
#: Meaning of every node (Table 4).
MEANING = {
    "X1": "gender",
    "X2": "age",
    "X3": "occupation",
    "A1": "product",
    "A2": "purpose",
    "A3": "send time",
    "I1": "email body template",
    "I2": "fitness",
    "I3": "subject length",
    "I4": "user query",
    "R": "click (reward)",
}

#: Table 5: ``P(I4 = i | X1, X2, X3)``, rows (X1, X2, X3) = (0,0,0), (0,0,1), ..., (1,1,1).
TABLE5 = np.array(
    [
        [0.4, 0.3, 0.2, 0.1],
        [0.3, 0.4, 0.2, 0.1],
        [0.6, 0.1, 0.2, 0.1],
        [0.5, 0.2, 0.2, 0.1],
        [0.1, 0.3, 0.2, 0.4],
        [0.1, 0.4, 0.2, 0.3],
        [0.1, 0.1, 0.2, 0.6],
        [0.1, 0.2, 0.2, 0.5],
    ]
)


def email_campaign_model(
    i3_values: int = 2,
    context_marginals: Sequence[float] = (0.5, 0.5, 0.5),
    policy_edges: bool = True,
    age_given_gender: Sequence[float] | None = None,
) -> DiscreteSCM:
    """The Email Campaign model as a :class:`DiscreteSCM` (every node except the reward).

    Parameters
    ----------
    i3_values : {2, 4}
        Number of values of subject length ``I3`` (see the module docstring).
    context_marginals : sequence of 3 floats
        ``P(X1 = 1), P(X2 = 1), P(X3 = 1)`` of independent user features.
    policy_edges : bool
        Give the arm nodes the context nodes as parents (uniform tables), as in Figure 1.
    age_given_gender : (float, float), optional
        Not the paper's model: ``P(X2 = 1 | X1 = 0), P(X2 = 1 | X1 = 1)`` adds the edge ``X1 → X2``
        (then ``context_marginals[1]`` is unused). Age then descends from gender and the
        counterfactual is no longer identified: the case of Theorem 2, used to test it.
    """
    if i3_values not in (2, 4):
        raise ValueError(
            f"i3_values={i3_values!r}: allowed are 2 (binary, the book's default) and 4 (Table 4's domain)"
        )
    marg = np.asarray(context_marginals, dtype=float)
    if marg.shape != (3,) or np.any((marg < 0) | (marg > 1)):
        raise ValueError(
            f"context_marginals={list(context_marginals)!r} must be three probabilities P(X1=1), P(X2=1), P(X3=1)"
        )
    a1, a2, i4 = np.meshgrid([1, 2, 3], [1, 2, 3, 4], [1, 2, 3, 4], indexing="ij")
    p_i2 = (a1 + a2 + i4) / 12.0
    a1b, a2b, i2 = np.meshgrid([1, 2, 3], [1, 2, 3, 4], [1, 2], indexing="ij")
    p_i1 = (a1b + a2b + i2) / 10.0
    if i3_values == 2:
        i3_table = np.array([[0.4, 0.6], [0.6, 0.4]])
    else:
        i3_table = np.array([[0.4, 0.2, 0.2, 0.2], [0.6, 0.4 / 3, 0.4 / 3, 0.4 / 3]])
    arm_parents = CONTEXT_NODES if policy_edges else ()
    arm_table = lambda k: np.full((2, 2, 2, k) if policy_edges else (k,), 1.0 / k)  # noqa: E731
    states = {
        "X1": (0, 1),
        "X2": (0, 1),
        "X3": (0, 1),
        "A1": (1, 2, 3),
        "A2": (1, 2, 3, 4),
        "A3": (1, 2, 3),
        "I4": (1, 2, 3, 4),
        "I2": (1, 2),
        "I1": (1, 2),
        "I3": tuple(range(1, i3_values + 1)),
    }
    if age_given_gender is None:
        x2 = ((), [1 - marg[1], marg[1]])
    else:
        g = np.asarray(age_given_gender, dtype=float)
        if g.shape != (2,) or np.any((g < 0) | (g > 1)):
            raise ValueError(
                f"age_given_gender={list(age_given_gender)!r} must be two probabilities P(X2=1|X1=0), P(X2=1|X1=1)"
            )
        x2 = (("X1",), [[1 - g[0], g[0]], [1 - g[1], g[1]]])
    mechanisms = {
        "X1": ((), [1 - marg[0], marg[0]]),
        "X2": x2,
        "X3": ((), [1 - marg[2], marg[2]]),
        "A1": (arm_parents, arm_table(3)),
        "A2": (arm_parents, arm_table(4)),
        "A3": (arm_parents, arm_table(3)),
        "I4": (CONTEXT_NODES, TABLE5.reshape(2, 2, 2, 4)),
        "I2": (("A1", "A2", "I4"), np.stack([p_i2, 1 - p_i2], axis=-1)),
        "I1": (("A1", "A2", "I2"), np.stack([p_i1, 1 - p_i1], axis=-1)),
        "I3": (("I2",), i3_table),
    }
    return DiscreteSCM(states, mechanisms, name="email campaign")


def email_graph(model: DiscreteSCM | None = None):
    """The causal graph with the reward node: the model's edges plus ``I1, I2, I3, A3 → R``."""
    model = model or email_campaign_model()
    g = model.graph.copy()
    g.add_edges_from((p, REWARD) for p in ("I1", "I2", "I3", "A3"))
    return g


def email_campaign_env(
    i3_values: int = 2,
    context_marginals: Sequence[float] = (0.5, 0.5, 0.5),
    sigma: float = 0.1,
    age_given_gender: Sequence[float] | None = None,
) -> CausalBanditEnv:
    """The Email Campaign as a bandit: 8 contexts (``c = 4·X1 + 2·X2 + X3``), 36 arms
    (``a = 12·(A1−1) + 3·(A2−1) + (A3−1)``), reward ``(I1 + I2 + I3 + A3)/12 + N(0, σ²)``.

    The feedback's ``discrepancy`` is the exact counterfactual discrepancy
    ``Δ(x, a) = μ_{a, X1=1}(x) − μ_{a, X1=0}(x)`` (Eq. 8, identified because ``X2, X3`` do not
    descend from ``X1``). With ``age_given_gender`` (not the paper's model) it is not identified and
    the feedback reports it under the monotone coupling instead.
    """
    if not sigma >= 0:
        raise ValueError(f"sigma={sigma} must be >= 0")
    model = email_campaign_model(i3_values, context_marginals, age_given_gender=age_given_gender)
    probs = model.query(list(CONTEXT_NODES)).reshape(-1)
    env = CausalBanditEnv(
        model=model,
        context_nodes=CONTEXT_NODES,
        arm_nodes=ARM_NODES,
        reward_weights={"I1": 1 / 12, "I2": 1 / 12, "I3": 1 / 12, "A3": 1 / 12},
        sigma=float(sigma),
        contexts=IIDContexts(probs),
        name=f"email campaign (I3 with {i3_values} values)",
    )
    if age_given_gender is None:
        dec = env.decomposition(("A3", "I1", "I2"))
        env.discrepancy = identified_discrepancy(dec, env.counterfactual_contexts(SENSITIVE))
    else:
        env.discrepancy = monotone_discrepancy_table(env, SENSITIVE)
    return env


def arm_label(env: CausalBanditEnv, arm: int) -> tuple:
    """The arm's feature labels, e.g. ``(1, 1, 3)`` for (product, purpose, send time)."""
    return tuple(env.model.label(n, int(c)) for n, c in zip(env.arm_nodes, env.arm_codes[int(arm)]))
