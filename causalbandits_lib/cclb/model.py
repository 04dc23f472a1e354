"""The extended standard fairness model of Chen, Tian and Quinn (ICML 2025): graph, context and parameter.

Graph (their Fig. 1): a sensitive attribute ``A``, confounded features ``W`` (``A <-> W``: an
unobserved common cause ``U``), mediators ``M`` (``A -> M <- W``), the decision ``D`` and the outcome
``Y`` with parents ``A, W, M, D``. Each round the learner sees ``(a_t, w_t, m_t)`` and a set of
``K`` candidate decisions; playing ``d`` returns ``Y ~ Bernoulli(g(f(Z)^T theta*))`` with
``Z = (a_t, w_t, m_t, d)`` (their Eq. 1-2, **formulas reconstructed**: the supplied paper lost its
display equations; see ``notebooks/cclb/01_model.md``). The counterfactual feature replaces ``a_t``
by ``a'_t = 1 - a_t`` and keeps ``w_t, m_t, d`` (Eq. 3), and the counterfactual fairness effect is

``Delta_t(d) = g(f(Z^{a'}_t(d))^T theta*) - g(f(Z_t(d))^T theta*)``   (Eq. 4, reconstructed).

The paper does not publish its structural equations. :func:`context_model` is this book's stand-in
(the coefficients of the notes' calibrated generator, with the ``A <-> W`` dependence produced by a
latent ``U``); the feature map ``f`` and ``g(f(Z)^T theta)`` are in :mod:`.features`, the rounds
built from them (the paper's rejection rule plus our Slater margin) in :mod:`.generator`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit

from ..core.scm import DiscreteSCM

__all__ = ["THETA_STAR", "S_DEFAULT", "SFM_EDGES", "sfm_graph", "context_model"]

#: The parameter of the notes' calibrated generator: ``||theta*|| = 5 = S`` (our choice; the paper
#: states neither).
THETA_STAR = (-2.0, -2.0, -1.0, 4.0)
S_DEFAULT = 5.0

#: Directed edges of the extended SFM with the latent ``U`` standing for ``A <-> W``.
SFM_EDGES = (
    ("U", "A"),
    ("U", "W"),
    ("A", "M"),
    ("W", "M"),
    ("A", "D"),
    ("W", "D"),
    ("M", "D"),
    ("A", "Y"),
    ("W", "Y"),
    ("M", "Y"),
    ("D", "Y"),
)


def sfm_graph():
    """The extended standard fairness model as a :class:`networkx.DiGraph` (latent ``U`` explicit)."""
    import networkx as nx

    return nx.DiGraph(list(SFM_EDGES))


def context_model(latent_agreement: float | None = None, mediator_weights=(1.0, 1.0)) -> DiscreteSCM:
    """The context part ``U, A, W, M`` of the round generator as a :class:`DiscreteSCM`.

    ``U ~ Bern(1/2)``; ``A`` and ``W`` each copy ``U`` with probability ``latent_agreement`` (so
    ``A <-> W`` through ``U``); ``M | A, W ~ Bern(g(c_A (2A-1) + c_W (2W-1)))``.

    The default ``latent_agreement`` ``q = (1 + sqrt(2 g(1.2) - 1)) / 2 = 0.8664`` gives
    ``P(W=1 | A=1) = q^2 + (1-q)^2 = g(1.2)``: the observed law of ``(A, W, M)`` equals the notes'
    generator (``W | A ~ Bern(g(1.2 (2A-1)))``), whose coefficients are adapted from the first
    author's later public generator. Our choice.

    Parameters
    ----------
    latent_agreement : float in (0, 1), optional
        ``P(A = U) = P(W = U)``.
    mediator_weights : (float, float)
        ``(c_A, c_W)``.
    """
    q = (1.0 + np.sqrt(2.0 * expit(1.2) - 1.0)) / 2.0 if latent_agreement is None else float(latent_agreement)
    if not 0.0 < q < 1.0:
        raise ValueError(f"latent_agreement={latent_agreement} must lie strictly between 0 and 1")
    c_a, c_w = (float(c) for c in mediator_weights)
    copy = np.array([[q, 1 - q], [1 - q, q]])  # rows U=0,1; columns child=0,1
    pm = np.empty((2, 2, 2))
    for a in (0, 1):
        for w in (0, 1):
            p1 = expit(c_a * (2 * a - 1) + c_w * (2 * w - 1))
            pm[a, w] = (1 - p1, p1)
    return DiscreteSCM(
        {"U": (0, 1), "A": (0, 1), "W": (0, 1), "M": (0, 1)},
        {"U": ((), [0.5, 0.5]), "A": (("U",), copy), "W": (("U",), copy), "M": (("A", "W"), pm)},
        name="extended SFM context",
    )
