"""The synthetic causal model of Huang and Wu (2024), its exact ground truth and the printed Table 1.

The paper's Figure 2 is a drawing; its edges are rebuilt from the parent sets of the paper's
Table 2 (the conditional probability table that generates the data)::

    U1 -> X1,  U2 -> X2,  X1 -> I1,  C1 -> I1,  C1 -> Y,  U1 -> Y,  X2 -> Y,  I1 -> Y,  I1 -> S

- ``U1, U2``: the user's context (observed);
- ``X1, X2``: the item's features, i.e. the arm (observed; the logging policy chose them from the
  context, which confounds arm and reward through ``U1``);
- ``C1``: a hidden confounder of the intermediate ``I1`` and the reward ``Y`` (never in the data);
- ``S``: selection; only rows with ``S = 1`` enter the offline log, and ``S`` depends on ``I1``.

The model is a :class:`~causalbandits_lib.core.scm.DiscreteSCM` over all eight nodes, so the hidden
confounder and the selection node are ordinary nodes there: exact answers (the conditional causal
effects that are the bandit's arm means) come from exact queries on it, while the offline data
generator (:mod:`.offline`) hides ``C1`` and keeps only the selected rows, which is all an analyst
would see.

Indexing used throughout the chapter
------------------------------------
- arm ``a = 2·x1 + x2`` (4 arms), context ``c = 2·u1 + u2`` (4 contexts);
- arrays over cells have shape ``(n_arms, n_contexts) = (4, 4)``; raveled, cell ``4a + c`` is row
  ``4a + c + 1`` of the paper's Table 1 (index ``1 + 8·x1 + 4·x2 + 2·u1 + u2``; the paper does not
  state the order, this one makes its CP column match the model, see the chapter's notebook 3).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..core.scm import DiscreteSCM

__all__ = [
    "NODES",
    "OBSERVED",
    "CONTEXT",
    "ARM",
    "LATENT",
    "SELECTION",
    "OUTCOME",
    "INTERMEDIATE",
    "N_ARMS",
    "N_CONTEXTS",
    "ARM_LABELS",
    "CONTEXT_LABELS",
    "TABLE1_PRINTED",
    "fig2_model",
    "table2_model",
    "exchange_counterexample_model",
    "compound_bias_model",
    "without_hidden_reward_edge",
    "exchange_rule_gap",
    "interventional_context_probabilities",
    "arm_bits",
    "context_bits",
    "table1_index",
    "conditional_causal_effects",
    "truncated_factorisation",
    "truncated_factorisation_effects",
    "substitute_intervention_effects",
    "interventional_arm_means",
    "context_probabilities",
    "selected_observed_distribution",
    "observational_arm_means",
    "conditional_table",
]

#: All nodes of the model, in the order of the data generator's uniforms.
NODES = ("U1", "U2", "C1", "X1", "X2", "I1", "Y", "S")
#: Axes of an offline count table (the variables recorded in a selected row).
OBSERVED = ("X1", "X2", "U1", "U2", "I1", "Y")
CONTEXT = ("U1", "U2")
ARM = ("X1", "X2")
LATENT = ("C1",)
SELECTION = "S"
OUTCOME = "Y"
INTERMEDIATE = "I1"
N_ARMS = 4
N_CONTEXTS = 4
ARM_LABELS = tuple(f"x={a >> 1}{a & 1}" for a in range(N_ARMS))
CONTEXT_LABELS = tuple(f"u={c >> 1}{c & 1}" for c in range(N_CONTEXTS))

#: The paper's Table 1 as printed (rows 1..16; columns CP, Biased, BCE lb, BCE ub, Truth).
TABLE1_PRINTED: dict[str, np.ndarray] = {
    "cp": np.array(
        [0.313, 0.336, 0.533, 0.510, 0.517, 0.494, 0.657, 0.710, 0.377, 0.386, 0.525, 0.518, 0.547, 0.513, 0.756, 0.681]
    ),
    "biased": np.array(
        [0.364, 0.351, 0.346, 0.362, 0.539, 0.519, 0.513, 0.537, 0.492, 0.474, 0.468, 0.490, 0.652, 0.628, 0.620, 0.649]
    ),
    "lb": np.array(
        [0.246, 0.236, 0.233, 0.244, 0.350, 0.376, 0.371, 0.389, 0.296, 0.285, 0.282, 0.295, 0.414, 0.409, 0.404, 0.324]
    ),
    "ub": np.array(
        [0.385, 0.371, 0.367, 0.384, 0.565, 0.545, 0.538, 0.563, 0.505, 0.486, 0.480, 0.503, 0.665, 0.640, 0.632, 0.662]
    ),
    "truth": np.array(
        [0.283, 0.278, 0.275, 0.283, 0.448, 0.440, 0.436, 0.448, 0.419, 0.411, 0.407, 0.419, 0.580, 0.569, 0.564, 0.580]
    ),
}
for _v in TABLE1_PRINTED.values():
    _v.setflags(write=False)


def _bern(p) -> np.ndarray:
    """``P(node | parents)`` of a binary node from ``P(node = 1 | parents)``."""
    p = np.asarray(p, dtype=float)
    return np.stack([1.0 - p, p], axis=-1)


def _check_prob(name: str, p) -> np.ndarray:
    arr = np.asarray(p, dtype=float)
    if not np.all(np.isfinite(arr)) or np.any((arr < 0) | (arr > 1)):
        raise ValueError(f"{name}={np.asarray(p).tolist()} must hold probabilities in [0, 1]")
    return arr


def fig2_model(
    p_u1: float,
    p_u2: float,
    p_c1: float,
    p_x1: np.ndarray,
    p_x2: np.ndarray,
    p_i1: np.ndarray,
    p_y: np.ndarray,
    p_s: np.ndarray,
    name: str = "Huang-Wu Fig. 2",
) -> DiscreteSCM:
    """A binary model on the graph of the paper's Figure 2, from ``P(V = 1 | parents)``.

    Parameters
    ----------
    p_u1, p_u2, p_c1 : float
        ``P(U1=1)``, ``P(U2=1)``, ``P(C1=1)``.
    p_x1 : array_like, shape (2,)
        ``P(X1=1 | U1)``.
    p_x2 : array_like, shape (2,)
        ``P(X2=1 | U2)``.
    p_i1 : array_like, shape (2, 2)
        ``P(I1=1 | X1, C1)``, indexed ``[x1, c1]``.
    p_y : array_like, shape (2, 2, 2, 2)
        ``P(Y=1 | C1, U1, X2, I1)``, indexed ``[c1, u1, x2, i1]``.
    p_s : array_like, shape (2,)
        ``P(S=1 | I1)``.
    """
    shapes = {
        "p_u1": (),
        "p_u2": (),
        "p_c1": (),
        "p_x1": (2,),
        "p_x2": (2,),
        "p_i1": (2, 2),
        "p_y": (2, 2, 2, 2),
        "p_s": (2,),
    }
    given = dict(p_u1=p_u1, p_u2=p_u2, p_c1=p_c1, p_x1=p_x1, p_x2=p_x2, p_i1=p_i1, p_y=p_y, p_s=p_s)
    arrays = {}
    for key, shape in shapes.items():
        arr = _check_prob(key, given[key])
        if arr.shape != shape:
            raise ValueError(f"{key} has shape {arr.shape}; it must have shape {shape}")
        arrays[key] = arr
    return DiscreteSCM(
        {n: (0, 1) for n in NODES},
        {
            "U1": ((), _bern(arrays["p_u1"])),
            "U2": ((), _bern(arrays["p_u2"])),
            "C1": ((), _bern(arrays["p_c1"])),
            "X1": (("U1",), _bern(arrays["p_x1"])),
            "X2": (("U2",), _bern(arrays["p_x2"])),
            "I1": (("X1", "C1"), _bern(arrays["p_i1"])),
            "Y": (("C1", "U1", "X2", "I1"), _bern(arrays["p_y"])),
            "S": (("I1",), _bern(arrays["p_s"])),
        },
        name=name,
    )


def _table2_tables() -> dict:
    """``P(V = 1 | parents)`` of the paper's Table 2, as :func:`fig2_model` takes them."""
    b = np.arange(2.0)
    c1, u1, x2, i1 = np.meshgrid(b, b, b, b, indexing="ij")
    return {
        "p_u1": 0.4,
        "p_u2": 0.6,
        "p_c1": 0.5,
        "p_x1": (b + 0.5) / 2,
        "p_x2": (b + 0.3) / 2,
        "p_i1": (b[:, None] + b[None, :]) / 4 + 0.3,
        "p_y": (c1 + u1 + x2 + i1) / 6 + 0.1,
        "p_s": [0.1, 0.8],
    }


def table2_model() -> DiscreteSCM:
    """The data-generating model of the paper's Table 2 (Appendix H).

    ``P(U1=1)=0.4``, ``P(U2=1)=0.6``, ``P(C1=1)=0.5``, ``P(X1=1|u1)=(1{u1=1}+0.5)/2``,
    ``P(X2=1|u2)=(1{u2=1}+0.3)/2``, ``P(I1=1|x1,c1)=(1{x1=1}+1{c1=1})/4+0.3``,
    ``P(Y=1|c1,u1,x2,i1)=(1{c1=1}+1{u1=1}+1{x2=1}+1{i1=1})/6+0.1``, ``P(S=1|i1)`` = 0.8 if
    ``i1=1`` else 0.1.
    """
    return fig2_model(**_table2_tables(), name="Huang-Wu Table 2")


def exchange_counterexample_model() -> DiscreteSCM:
    """A model on the same graph where the paper's substitute-intervention bound (Thm 4) fails.

    Our construction (not in the paper): ``P(I1=1 | c1)`` is 0.2 or 0.9 (``I1`` mostly follows the
    hidden ``C1``), and ``Y = 1`` with probability 0.9 when ``I1 = C1`` (0.1 otherwise); the other
    tables are Table 2's. Then ``P(Y=1 | do(x), c) = 0.78`` while ``P(Y=1 | do(x, i1), c) = 0.5`` for
    both values of ``i1``, so ``[min_w, max_w] P_{x,w}(y | c)`` excludes the truth; the conditioning
    bound ``[min, max]_{i1} P(y | x, c, i1) = [0.7545, 0.8111]`` contains it.
    """
    tables = _table2_tables()
    agree = np.equal.outer(np.arange(2), np.arange(2))[:, None, None, :]  # [c1, ., ., i1]: c1 == i1
    tables["p_i1"] = np.array([[0.2, 0.9], [0.2, 0.9]])
    tables["p_y"] = np.broadcast_to(np.where(agree, 0.9, 0.1), (2, 2, 2, 2))
    return fig2_model(**tables, name="same graph, exchange counterexample")


def compound_bias_model(p_s_i1_0: float = 0.1, confounding: float = 1.0) -> DiscreteSCM:
    """Table 2 with the two biases turned up or down (our family, for "resistant to different
    levels of compound bias").

    - selection: ``P(S=1 | I1=0) = p_s_i1_0`` with ``P(S=1 | I1=1) = 0.8`` kept (Table 2: 0.1;
      0.8 means no selection bias);
    - confounding: the hidden ``C1`` enters ``P(I1=1 | x1, c1) = (x1 + κ·c1)/4 + 0.3`` and
      ``P(Y=1 | c1, u1, x2, i1) = (κ·c1 + u1 + x2 + i1)/6 + 0.1`` with weight ``κ = confounding``
      (Table 2: 1; 0 removes the hidden confounder's effect). ``κ`` must lie in ``[0, 1.6]`` so that
      the tables stay probabilities.
    """
    if not 0.0 < float(p_s_i1_0) <= 1.0:
        raise ValueError(f"p_s_i1_0={p_s_i1_0!r} must lie in (0, 1]")
    if not 0.0 <= float(confounding) <= 1.6:
        raise ValueError(f"confounding={confounding!r} must lie in [0, 1.6]")
    k = float(confounding)
    b = np.arange(2.0)
    c1, u1, x2, i1 = np.meshgrid(b, b, b, b, indexing="ij")
    tables = _table2_tables()
    tables["p_i1"] = (b[:, None] + k * b[None, :]) / 4 + 0.3
    tables["p_y"] = (k * c1 + u1 + x2 + i1) / 6 + 0.1
    tables["p_s"] = [float(p_s_i1_0), 0.8]
    return fig2_model(**tables, name=f"Table 2, P(S=1|I1=0)={p_s_i1_0:g}, confounding {k:g}")


def without_hidden_reward_edge() -> DiscreteSCM:
    """Table 2 with the edge ``C1 -> Y`` removed (ours, for Lemma 1): ``P(Y=1 | u1, x2, i1)`` is
    Table 2's averaged over ``C1`` (``(0.5 + u1 + x2 + i1)/6 + 0.1``); every other table is
    Table 2's. On this graph the exchange condition ``(Y, C ⊥ I1, S | X)`` in ``G_{X̄ I1̲}`` holds."""
    base = table2_model()
    b = np.arange(2.0)
    u1, x2, i1 = np.meshgrid(b, b, b, indexing="ij")
    mechanisms = {n: (base.mechanisms[n].parents, base.mechanisms[n].table) for n in NODES if n != OUTCOME}
    mechanisms[OUTCOME] = (("U1", "X2", "I1"), _bern((0.5 + u1 + x2 + i1) / 6 + 0.1))
    return DiscreteSCM({n: (0, 1) for n in NODES}, mechanisms, name="Table 2 without C1 -> Y")


def exchange_rule_gap(model: DiscreteSCM) -> float:
    """The largest violation of Lemma 1's equality with ``W = {I1}`` and ``Z = C`` (eq. 9):
    ``max |P(Y=1 | do(x), do(i1), c, S=1) - P(Y=1 | do(x), i1, c, S=1)|`` over arms, contexts and
    ``i1`` (exact)."""
    gap = 0.0
    for a in range(N_ARMS):
        do_x = dict(zip(ARM, arm_bits(a)))
        for c in range(N_CONTEXTS):
            ctx = dict(zip(CONTEXT, context_bits(c)))
            for i1 in (0, 1):
                acted = model.expectation(OUTCOME, evidence={**ctx, SELECTION: 1}, do={**do_x, INTERMEDIATE: i1})
                seen = model.expectation(OUTCOME, evidence={**ctx, INTERMEDIATE: i1, SELECTION: 1}, do=do_x)
                gap = max(gap, abs(acted - seen))
    return gap


def arm_bits(a: int) -> tuple[int, int]:
    """``(x1, x2)`` of arm ``a``."""
    if not 0 <= int(a) < N_ARMS:
        raise ValueError(f"arm {a} must be in 0..{N_ARMS - 1}")
    return int(a) >> 1, int(a) & 1


def context_bits(c: int) -> tuple[int, int]:
    """``(u1, u2)`` of context ``c``."""
    if not 0 <= int(c) < N_CONTEXTS:
        raise ValueError(f"context {c} must be in 0..{N_CONTEXTS - 1}")
    return int(c) >> 1, int(c) & 1


def table1_index(a: int, c: int) -> int:
    """Row of the paper's Table 1 (1..16) of arm ``a`` and context ``c``: ``1 + 8x1 + 4x2 + 2u1 + u2``."""
    x1, x2 = arm_bits(a)
    u1, u2 = context_bits(c)
    return 1 + 8 * x1 + 4 * x2 + 2 * u1 + u2


# ---------------------------------------------------------------------------- exact quantities
def conditional_causal_effects(model: DiscreteSCM) -> np.ndarray:
    """The arm means of the contextual bandit, eq. (5): ``u_{a,c} = E[Y | do(X = x_a), C = c]``.

    Derived in notebooks/pcb/01_two_biases.md, section 'The target: conditional causal effects'
    (equation ``pcb-eq5-conditional-causal-effect``).

    Exact, by pgmpy's variable elimination on the intervened model (truncated factorisation).

    Returns
    -------
    ndarray, shape (4, 4)
        Indexed ``[arm, context]``.
    """
    out = np.empty((N_ARMS, N_CONTEXTS))
    for a in range(N_ARMS):
        x1, x2 = arm_bits(a)
        for c in range(N_CONTEXTS):
            u1, u2 = context_bits(c)
            out[a, c] = model.expectation("Y", evidence={"U1": u1, "U2": u2}, do={"X1": x1, "X2": x2})
    return out


def truncated_factorisation(model: DiscreteSCM, do_codes: Mapping[str, int]) -> np.ndarray:
    """The joint distribution after ``do(X = x)`` by the truncated factorisation, eq. (1).

    Derived in notebooks/pcb/01_two_biases.md, section 'The target: conditional causal effects'
    (equation ``pcb-table2-closed-form``).

    ``P_x(v) = Π_{V ∉ X} P(v | pa(V)) · 1{x_X = x}``, computed with one ``einsum`` over the tables
    (an independent route from pgmpy's variable elimination, for tests and notebook 1).

    Returns
    -------
    ndarray
        One axis per node, in ``model.nodes`` order.
    """
    nodes = model.nodes
    col = {n: i for i, n in enumerate(nodes)}
    operands: list = []
    for node in nodes:
        if node in do_codes:
            code = int(do_codes[node])
            if not 0 <= code < model.card(node):
                raise ValueError(f"do code {code} for {node!r} is out of range 0..{model.card(node) - 1}")
            point = np.zeros(model.card(node))
            point[code] = 1.0
            operands += [point, [col[node]]]
        else:
            mech = model.mechanisms[node]
            operands += [mech.table, [col[p] for p in mech.parents] + [col[node]]]
    return np.einsum(*operands, list(range(len(nodes))))


def truncated_factorisation_effects(model: DiscreteSCM) -> np.ndarray:
    """``E[Y | do(x_a), c]`` from :func:`truncated_factorisation` (no pgmpy), shape ``(4, 4)``.

    Derived in notebooks/pcb/01_two_biases.md, section 'The target: conditional causal effects'
    (equation ``pcb-table2-closed-form``).
    """
    nodes = model.nodes
    out = np.empty((N_ARMS, N_CONTEXTS))
    for a in range(N_ARMS):
        x1, x2 = arm_bits(a)
        joint = truncated_factorisation(model, {"X1": x1, "X2": x2})
        keep = [nodes.index(v) for v in ("U1", "U2", "Y")]
        marg = joint.sum(axis=tuple(i for i in range(len(nodes)) if i not in keep))
        # marg axes follow model.nodes order restricted to U1, U2, Y
        order = [nodes[i] for i in sorted(keep)]
        marg = np.transpose(marg, [order.index(v) for v in ("U1", "U2", "Y")])
        cond = marg[..., 1] / marg.sum(axis=-1)
        out[a] = cond.reshape(-1)
    return out


def substitute_intervention_effects(model: DiscreteSCM) -> np.ndarray:
    """``P(Y=1 | do(x_a, I1 = i1), c)``, the do-quantities of the paper's Theorem 4 (exact).

    Derived in notebooks/pcb/02_causal_bounds.md, section 'The substitute-intervention route'
    (equation ``pcb-eq10-theorem4-bounds``).

    Returns
    -------
    ndarray, shape (4, 4, 2)
        Indexed ``[arm, context, i1]``.
    """
    out = np.empty((N_ARMS, N_CONTEXTS, 2))
    for a in range(N_ARMS):
        x1, x2 = arm_bits(a)
        for c in range(N_CONTEXTS):
            u1, u2 = context_bits(c)
            for i1 in (0, 1):
                out[a, c, i1] = model.expectation("Y", evidence={"U1": u1, "U2": u2}, do={"X1": x1, "X2": x2, "I1": i1})
    return out


def interventional_arm_means(model: DiscreteSCM) -> np.ndarray:
    """``E[Y | do(x_a)]`` for the 4 arms (the non-contextual bandit of UCB-PCB), exact."""
    return np.array([model.expectation("Y", do=dict(zip(ARM, arm_bits(a)))) for a in range(N_ARMS)])


def context_probabilities(model: DiscreteSCM) -> np.ndarray:
    """``P(C = c)`` in the population (before selection), shape ``(4,)``."""
    return model.query(list(CONTEXT)).reshape(-1)


def interventional_context_probabilities(model: DiscreteSCM) -> np.ndarray:
    """``P_x(c) = P(C = c | do(x_a))`` for every arm, shape ``(4, 4)`` indexed ``[arm, context]``
    (exact; eq. 6 uses ``P_x(c) = P(c)`` because the context is not a descendant of the arm)."""
    return np.array([model.query(list(CONTEXT), do=dict(zip(ARM, arm_bits(a)))).reshape(-1) for a in range(N_ARMS)])


def selected_observed_distribution(model: DiscreteSCM) -> np.ndarray:
    """``P(x1, x2, u1, u2, i1, y | S = 1)``: what the offline count table estimates.

    Returns
    -------
    ndarray, shape (2, 2, 2, 2, 2, 2)
        Axes in :data:`OBSERVED` order.
    """
    return model.query(list(OBSERVED), evidence={SELECTION: 1})


def observational_arm_means(model: DiscreteSCM, selected: bool = False) -> np.ndarray:
    """``P(Y=1 | x_a)`` in the population (or among selected rows), shape ``(4,)`` (context-free,
    confounded: used to read the paper's Table 1)."""
    ev = {SELECTION: 1} if selected else {}
    out = np.empty(N_ARMS)
    for a in range(N_ARMS):
        out[a] = model.expectation("Y", evidence={**ev, **dict(zip(ARM, arm_bits(a)))})
    return out


def conditional_table(model: DiscreteSCM, selected: bool) -> dict[str, np.ndarray]:
    """Exact conditionals of the population (``selected=False``) or of the selected units.

    Returns
    -------
    dict with
        ``p_y``: ``P(Y=1 | x_a, c [, S=1])``, shape ``(4, 4)``;
        ``p_i1``: ``P(I1=1 | x_a, c [, S=1])``, shape ``(4, 4)``;
        ``p_y_given_i1``: ``P(Y=1 | x_a, c, i1 [, S=1])``, shape ``(4, 4, 2)``;
        ``p_context``: ``P(c [| S=1])``, shape ``(4,)``.
    """
    ev = {SELECTION: 1} if selected else {}
    joint = model.query(list(OBSERVED), evidence=ev or None).reshape(N_ARMS, N_CONTEXTS, 2, 2)  # (a, c, i1, y)
    axy = joint.sum(axis=2)
    return {
        "p_y": axy[..., 1] / axy.sum(axis=-1),
        "p_i1": joint.sum(axis=3)[..., 1] / joint.sum(axis=(2, 3)),
        "p_y_given_i1": joint[..., 1] / joint.sum(axis=-1),
        "p_context": joint.sum(axis=(0, 2, 3)),
    }
