"""The random family of recommender SCMs on which hypotheses H6-H10 are judged (ours): a seeded
generator of :class:`~.model.Instance` with stated ranges for every parameter.

The structure of the model is :mod:`.model`'s (4 contexts ``o = (A, U)``, 4 items in the two item
groups of :data:`~.model.GROUP`); a member of the family draws its numbers independently as follows
(``U(lo, hi)`` uniform, every draw independent of the others unless the table says otherwise):

==============  =====================================================  ========================================
parameter       role                                                   draw
==============  =====================================================  ========================================
a_effect        strength of the path ``A -> Y`` (scale of ``w^A``)     U(0.5, 4.0)
w_a             ``w^A_k``, the click's dependence on ``A`` per item    a_effect x a permutation of
                                                                       (0, 1/3, 2/3, 1) x a random sign,
                                                                       plus U(-0.05, 0.05)
b               ``b_k``, the click's baseline logit                    U(-2.0, 1.0) per item
w_u             ``w^U_k``, the click's dependence on ``U``             U(-1.0, 1.0) per item
e               ``e_k``, the engagement's logit                        U(-1.5, 1.5) per item
w_e             ``w^E``, the click's dependence on ``E``               U(0.5, 2.5)
eta             ``η``, the hidden ``H``'s effect on ``E``              U(0.5, 1.5)
logging         ``l_{k,u}``, the logging policy's preferences          U(-2.0, 2.0) per (item, value of U)
lam             ``λ``, the logging policy's confounding through ``H``  U(0.0, 2.5)
s0              selection ``P(S=1 | E=0)``                             U(0.01, 0.8)
s1              selection ``P(S=1 | E=1)``                             U(0.5, 1.0)
==============  =====================================================  ========================================

So ``|w^A_k| <= a_effect + 0.05``, and one item in each model depends on ``A`` only through the
noise (its level is 0): the threshold then binds for some items only, as in :mod:`.model`. ``λ``,
``s0`` and ``s1`` change the offline log only (:func:`~.model.build_scm`,
:func:`~.model.offline_counts`), never the online problem; they are drawn with the model so that
each model carries a log of its own, kept in ``Instance.extra`` (:func:`log_bias` reads them) with
``a_effect`` and the model's index. The ranges are :data:`RANGES` (the table above is checked
against it by the tests).

Seeds: model ``i`` of ``family(seed, n)`` is drawn from the ``i``-th child of the notebook stream
``"family"`` of the root ``seed`` (:func:`~causalbandits_lib.core.streams.notebook_seed_sequence`), or
of the :class:`~numpy.random.SeedSequence` given instead of ``seed``; it depends neither on ``n``
nor on the other models. :func:`~.model.random_instance` (notebooks 2 and 3's instances) is a
different, narrower generator and is left as it is.
"""

from __future__ import annotations

import numpy as np

from ..core.streams import notebook_seed_sequence
from . import model as M

__all__ = ["STREAM", "RANGES", "W_A_NOISE", "draw_model", "family", "log_bias"]

#: the name of the notebook stream the family is drawn from (when a root seed is given)
STREAM = "family"
#: the half-width of the uniform noise added to ``w^A_k``
W_A_NOISE = 0.05
#: ``name: (low, high)`` of every uniform draw (the module docstring's table)
RANGES: dict[str, tuple[float, float]] = {
    "a_effect": (0.5, 4.0),
    "b": (-2.0, 1.0),
    "w_u": (-1.0, 1.0),
    "e": (-1.5, 1.5),
    "w_e": (0.5, 2.5),
    "eta": (0.5, 1.5),
    "logging": (-2.0, 2.0),
    "lam": (0.0, 2.5),
    "s0": (0.01, 0.8),
    "s1": (0.5, 1.0),
}


def draw_model(rng: np.random.Generator, name: str = "model", index: int = -1) -> M.Instance:
    """One member of the family from ``rng`` (the draws in the order of the module's table)."""

    def draw(key, size=None):
        lo, hi = RANGES[key]
        return rng.uniform(lo, hi, size)

    a_effect = float(draw("a_effect"))
    levels = rng.permutation(np.linspace(0.0, 1.0, M.N_ITEMS))
    signs = rng.choice([-1.0, 1.0], size=M.N_ITEMS)
    w_a = a_effect * levels * signs + rng.uniform(-W_A_NOISE, W_A_NOISE, M.N_ITEMS)
    b, w_u, e = (draw(key, M.N_ITEMS) for key in ("b", "w_u", "e"))
    w_e, eta = float(draw("w_e")), float(draw("eta"))
    logging = draw("logging", (M.N_ITEMS, 3))
    extra = {"index": index, "a_effect": a_effect}
    extra.update({key: float(draw(key)) for key in ("lam", "s0", "s1")})
    return M.Instance(b=b, w_u=w_u, w_a=w_a, e=e, logging=logging, w_e=w_e, eta=eta, name=name, extra=extra)


def family(seed: int | np.random.SeedSequence, n: int) -> list[M.Instance]:
    """``n`` models of the family: model ``i`` from the ``i``-th child of the stream (see the
    module docstring), named ``"model i"``."""
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    root = seed if isinstance(seed, np.random.SeedSequence) else notebook_seed_sequence(int(seed), STREAM)
    # the children ``root.spawn(n)`` would give a fresh root, built without spawning: ``spawn`` counts
    # the children it has given, and a second call on the same root would give other models
    children = (
        np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, i), pool_size=root.pool_size) for i in range(n)
    )
    return [
        draw_model(np.random.Generator(np.random.PCG64(child)), name=f"model {i}", index=i)
        for i, child in enumerate(children)
    ]


def log_bias(inst: M.Instance) -> tuple[float, float, float]:
    """The model's own offline-log bias ``(λ, s0, s1)``, the arguments of :func:`~.model.build_scm`
    and :func:`~.model.offline_counts`."""
    return inst.extra["lam"], inst.extra["s0"], inst.extra["s1"]
