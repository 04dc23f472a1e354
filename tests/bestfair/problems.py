"""Small problems shared by the chapter's tests."""

from __future__ import annotations

import numpy as np

from causalbandits_lib.bestfair.instances.synthetic import bernoulli_context_problem


def small_instance(rng: np.random.Generator, K: int = 4, m: int = 3, spread: float = 0.6):
    """A random synthetic instance with K arms and m contexts (contexts with positive mass)."""
    ps = rng.dirichlet(np.full(m, 2.0))
    psp = rng.dirichlet(np.full(m, 2.0))
    q = rng.uniform(0.5 - spread / 2, 0.5 + spread / 2, (K, m))
    return ps, psp, q, bernoulli_context_problem(ps, psp, q)


def easy_problem():
    """Four arms, well separated means, all fair by far at tolerance 0.2, small divergences."""
    ps = np.array([0.3, 0.4, 0.3])
    psp = np.array([0.35, 0.3, 0.35])
    q = np.array([[0.5, 0.5, 0.5], [0.75, 0.7, 0.75], [0.3, 0.35, 0.3], [0.55, 0.5, 0.6]])
    return bernoulli_context_problem(ps, psp, q, costs=np.ones((3, 4)))


def unfair_problem():
    """Every |ζ| is about 0.2 > 𝓔 = 0.1."""
    ps, psp = np.array([0.6, 0.2, 0.2]), np.array([0.2, 0.4, 0.4])
    q = np.array([[0.8, 0.3, 0.3], [0.2, 0.7, 0.7], [0.9, 0.5, 0.4], [0.3, 0.8, 0.9]])
    return bernoulli_context_problem(ps, psp, q, costs=np.ones((3, 4)))
