"""One causal problem for five notions of fairness: a small recommender SCM (ours), its exact
quantities and a seeded generator of random instances.

The model (a :class:`~causalbandits_lib.core.scm.DiscreteSCM`, pgmpy underneath)::

    A -> U <- NU          the user: sensitive attribute A, feature U = NU + A (NU: hidden noise)
    U -> I <- H           the logging policy picks the item I from U and a hidden H (confounding)
    H -> E <- I           engagement E (an intermediate response) depends on the item and on H
    A, U, I, E -> Y       the click
    E -> S                the offline log keeps a row with a probability that depends on E (selection)

- ``A, NU, H`` are roots with ``P(A=1) = P(NU=1) = P(H=1) = 1/2``; ``NU`` and ``H`` are hidden.
- ``U = NU + A`` is deterministic, so a user's context ``o = (A, U)`` takes four values
  (:data:`CONTEXTS`) and the counterfactual user with ``A`` flipped is known exactly
  (:data:`CF_CONTEXT`): abduction recovers ``NU = U - A``.
- ``P(E=1 | I=k, H=h) = σ(e_k + η (2h - 1))``; ``P(Y=1 | a, u, k, e) = σ(b_k + w^U_k u + w^A_k a + w^E e)``:
  the dependence on ``A`` differs across items (``w^A_k``), so the counterfactual discrepancies
  differ by item and a threshold binds for some items only.
- the logging policy ``P(I=k | u, h) ∝ exp(l_{k,u} + λ (2h - 1) z_k)``, ``z = (1, -1, 1, -1)``:
  ``λ`` is the strength of the confounding through ``H`` (it only biases the log);
  ``P(S=1 | E=1) = s_1``, ``P(S=1 | E=0) = s_0``: the selection.

Online, the recommender sets ``do(I = k)`` for a user with context ``o``; the reward mean is
``μ_k(o) = P(Y=1 | do(I=k), o) = Σ_e P(E=e | do(k)) P(Y=1 | o, k, e)``, which neither ``λ`` nor the
selection changes: the bias levels change the log only. Arrays over items and contexts have shape
``(n_contexts, n_items) = (4, 4)`` (context first, as the runner's contexts index rows).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import optimize, special

from ..core.environments import ContextualBernoulliBandit
from ..core.scm import DiscreteSCM
from ..core.streams import RunStreams

__all__ = [
    "N_ITEMS",
    "N_CONTEXTS",
    "CONTEXTS",
    "CF_CONTEXT",
    "GROUP",
    "HIDDEN",
    "Instance",
    "random_instance",
    "instances",
    "build_scm",
    "exact_means",
    "exact_discrepancies",
    "pgmpy_means",
    "pgmpy_counterfactual_means",
    "RecommenderEnv",
]

N_ITEMS = 4
#: the feasible contexts o = (a, u), u = nu + a: code c indexes this tuple
CONTEXTS = ((0, 0), (0, 1), (1, 1), (1, 2))
N_CONTEXTS = len(CONTEXTS)
#: the code of the counterfactual context of each context (A flipped, NU kept): (a, u) -> (1-a, u-a+(1-a))
CF_CONTEXT = (2, 3, 0, 1)
#: the group attribute of each item
GROUP = (0, 1, 0, 1)
HIDDEN = ("NU", "H")
_Z = np.array([1.0, -1.0, 1.0, -1.0])


@dataclass(frozen=True)
class Instance:
    """The numbers of one instance of the model (see the module docstring for their roles).

    ``b, w_u, w_a, e`` have one entry per item; ``logging`` is ``l`` of shape ``(n_items, 3)``
    (one column per value of ``U``).
    """

    b: np.ndarray
    w_u: np.ndarray
    w_a: np.ndarray
    e: np.ndarray
    logging: np.ndarray
    w_e: float = 1.5
    eta: float = 1.0
    name: str = "instance"
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        for k in ("b", "w_u", "w_a", "e"):
            v = np.asarray(getattr(self, k), dtype=float)
            if v.shape != (N_ITEMS,):
                raise ValueError(f"{k} must have shape ({N_ITEMS},), got {v.shape}")
            object.__setattr__(self, k, v)
        lg = np.asarray(self.logging, dtype=float)
        if lg.shape != (N_ITEMS, 3):
            raise ValueError(f"logging must have shape ({N_ITEMS}, 3), got {lg.shape}")
        object.__setattr__(self, "logging", lg)

    # -- exact quantities ------------------------------------------------------------------------
    @cached_property
    def p_engage(self) -> np.ndarray:
        """``P(E=1 | do(I=k))``, shape (n_items,): ``H`` is averaged with its prior."""
        return 0.5 * (special.expit(self.e + self.eta) + special.expit(self.e - self.eta))

    def click(self, a, u, e) -> np.ndarray:
        """``P(Y=1 | a, u, k, e)`` for every item (broadcast over a, u, e; item axis last)."""
        a, u, e = (np.asarray(v, dtype=float)[..., None] for v in (a, u, e))
        return special.expit(self.b + self.w_u * u + self.w_a * a + self.w_e * e)

    @cached_property
    def means(self) -> np.ndarray:
        """``μ_k(o)``, shape (n_contexts, n_items)."""
        return exact_means(self)

    @cached_property
    def discrepancy(self) -> np.ndarray:
        """``Δ_k(o) = |E[Y_{A<-1}(k) | o] - E[Y_{A<-0}(k) | o]|``, shape (n_contexts, n_items)."""
        return exact_discrepancies(self)

    @cached_property
    def context_probs(self) -> np.ndarray:
        """``P(o)``: each of the four contexts has probability 1/4."""
        return np.full(N_CONTEXTS, 0.25)

    @cached_property
    def merit_means(self) -> np.ndarray:
        """``μ̄_k = E_o[μ_k(o)]``, the items' merit arguments (FairX ignores the context)."""
        return self.context_probs @ self.means

    def tau(self, quantile: float) -> float:
        """The threshold: the ``quantile`` quantile of the exact discrepancies over (context, item)."""
        return float(np.quantile(self.discrepancy, quantile))

    def logistic_parameters(self) -> np.ndarray:
        """``θ`` with ``μ_k(o) = σ(θ^T x_k(o))`` for one-hot features ``x_k(o)`` of the (context,
        item) pairs: the logistic-link form of the same reward (exact, saturated), shape (4, 4)."""
        return special.logit(self.means)


def exact_means(inst: Instance) -> np.ndarray:
    """``μ_k(o) = Σ_e P(e | do(k)) P(Y=1 | o, k, e)`` by the truncated factorisation (numpy)."""
    a = np.array([c[0] for c in CONTEXTS])
    u = np.array([c[1] for c in CONTEXTS])
    p1 = inst.p_engage
    return (1 - p1) * inst.click(a, u, 0) + p1 * inst.click(a, u, 1)


def exact_discrepancies(inst: Instance) -> np.ndarray:
    """``Δ_k(o)``: the counterfactual user of ``o`` has ``A`` flipped and ``U`` shifted with it
    (``NU = U - A`` is recovered exactly), and ``H, E`` and the click noise do not depend on ``A``,
    so ``E[Y_{A<-a'}(k) | o] = μ_k(o')`` with ``o'`` the counterfactual context."""
    m = exact_means(inst)
    return np.abs(m[list(CF_CONTEXT)] - m)


def _logging_table(inst: Instance, lam: float) -> np.ndarray:
    """``P(I | U, H)``, shape (3, 2, n_items)."""
    z = inst.logging.T[:, None, :] + lam * (2 * np.arange(2)[None, :, None] - 1) * _Z
    return special.softmax(z, axis=-1)


def build_scm(inst: Instance, lam: float = 0.0, s0: float = 0.8, s1: float = 0.8) -> DiscreteSCM:
    """The instance as a :class:`DiscreteSCM` with logging confounding ``lam`` and selection
    ``P(S=1 | E=0) = s0``, ``P(S=1 | E=1) = s1``."""
    half = np.array([0.5, 0.5])
    u_table = np.zeros((2, 2, 3))
    for a, nu in itertools.product(range(2), range(2)):
        u_table[a, nu, a + nu] = 1.0
    pe = special.expit(inst.e[:, None] + inst.eta * (2 * np.arange(2)[None, :] - 1))  # (k, h)
    e_table = np.stack([1 - pe, pe], axis=-1)
    y1 = inst.click(
        np.arange(2)[:, None, None], np.arange(3)[None, :, None], np.arange(2)[None, None, :]
    )  # (a, u, e, k)
    y1 = np.moveaxis(y1, -1, 2)  # (a, u, k, e)
    y_table = np.stack([1 - y1, y1], axis=-1)
    s_table = np.array([[1 - s0, s0], [1 - s1, s1]])
    return DiscreteSCM(
        {
            "A": (0, 1),
            "NU": (0, 1),
            "H": (0, 1),
            "U": (0, 1, 2),
            "I": tuple(range(N_ITEMS)),
            "E": (0, 1),
            "Y": (0, 1),
            "S": (0, 1),
        },
        {
            "A": ((), half),
            "NU": ((), half),
            "H": ((), half),
            "U": (("A", "NU"), u_table),
            "I": (("U", "H"), _logging_table(inst, lam)),
            "E": (("I", "H"), e_table),
            "Y": (("A", "U", "I", "E"), y_table),
            "S": (("E",), s_table),
        },
        name=inst.name,
    )


def pgmpy_means(scm: DiscreteSCM) -> np.ndarray:
    """``μ_k(o) = P(Y=1 | do(I=k), A=a, U=u)`` by pgmpy's variable elimination, shape (4, 4)."""
    out = np.zeros((N_CONTEXTS, N_ITEMS))
    for c, (a, u) in enumerate(CONTEXTS):
        for k in range(N_ITEMS):
            out[c, k] = scm.query(["Y"], evidence={"A": a, "U": u}, do={"I": k})[1]
    return out


def pgmpy_counterfactual_means(scm: DiscreteSCM, a_cf: int) -> np.ndarray:
    """``E[Y_{A<-a_cf}(k) | A=a, U=u]`` by abduction, action and prediction with pgmpy queries:
    ``Σ_n P(NU=n | a, u) P(Y=1 | do(A=a_cf, NU=n, I=k))``, shape (4, 4)."""
    out = np.zeros((N_CONTEXTS, N_ITEMS))
    for c, (a, u) in enumerate(CONTEXTS):
        post = scm.query(["NU"], evidence={"A": a, "U": u})
        for k in range(N_ITEMS):
            out[c, k] = sum(
                post[n] * scm.query(["Y"], do={"A": a_cf, "NU": n, "I": k})[1] for n in range(2) if post[n] > 0
            )
    return out


def random_instance(rng: np.random.Generator, a_effect: float = 2.0, name: str = "instance") -> Instance:
    """A random instance: item ``k``'s dependence on ``A`` is ``a_effect`` times a random
    permutation of ``(0, 1/3, 2/3, 1)`` with a random sign, plus a little noise; baselines, the
    dependence on ``U``, engagement and the logging policy's preferences are drawn uniformly."""
    levels = rng.permutation(np.linspace(0.0, 1.0, N_ITEMS))
    w_a = a_effect * levels * rng.choice([-1.0, 1.0], size=N_ITEMS) + rng.normal(0.0, 0.05, N_ITEMS)
    return Instance(
        b=rng.uniform(-1.5, 0.5, N_ITEMS),
        w_u=rng.uniform(-0.6, 0.6, N_ITEMS),
        w_a=w_a,
        e=rng.uniform(-1.0, 1.0, N_ITEMS),
        logging=rng.normal(0.0, 1.0, (N_ITEMS, 3)),
        name=name,
    )


def instances(seed_sequence: np.random.SeedSequence, n: int, a_effect: float = 2.0) -> list[Instance]:
    """``n`` instances, instance ``i`` from its own child of ``seed_sequence`` (the first ``n``
    instances do not depend on how many are drawn)."""
    children = seed_sequence.spawn(n)
    return [
        random_instance(np.random.Generator(np.random.PCG64(s)), a_effect, name=f"instance {i}")
        for i, s in enumerate(children)
    ]


# -- fair optima ---------------------------------------------------------------------------------


def per_decision_optimum(inst: Instance, tau: float) -> np.ndarray:
    """F-UCB's fair optimum: per context the best item with ``Δ_k(o) <= τ`` (the smallest ``Δ``
    when none qualifies); int array of shape (n_contexts,)."""
    d, m = inst.discrepancy, inst.means
    fair = d <= tau
    allowed = np.where(fair.any(axis=1, keepdims=True), fair, d <= d.min(axis=1, keepdims=True))
    return np.argmax(np.where(allowed, m, -np.inf), axis=1)


def average_constraint_optimum(inst: Instance, tau: float) -> tuple[float, np.ndarray]:
    """The best randomised policy ``π(k | o)`` with ``E_o Σ_k π(k|o) (Δ_k(o) - τ) <= 0`` (the
    constraint CCLB enforces on average): a linear program. Returns its value per round and ``π``."""
    p, m, d = inst.context_probs, inst.means, inst.discrepancy
    c = -(p[:, None] * m).ravel()
    a_ub = (p[:, None] * (d - tau)).ravel()[None, :]
    a_eq = np.kron(np.eye(N_CONTEXTS), np.ones(N_ITEMS))
    res = optimize.linprog(c, A_ub=a_ub, b_ub=[0.0], A_eq=a_eq, b_eq=np.ones(N_CONTEXTS), bounds=(0, 1))
    if not res.success:
        raise RuntimeError(f"the average-constraint LP failed: {res.message}")
    return float(-res.fun), res.x.reshape(N_CONTEXTS, N_ITEMS)


def exposure_optimum(inst: Instance, c: float) -> np.ndarray:
    """FairX's optimal fair policy ``π*(k) ∝ exp(c μ̄_k)``, shape (n_items,)."""
    return special.softmax(c * inst.merit_means)


def intervention_optimum(inst: Instance, tau: float) -> int:
    """The best-fair-intervention notion on the rules "always recommend item k": the best ``μ̄_k``
    among the items whose average discrepancy ``ζ_k = E_o Δ_k(o)`` is at most ``τ`` (-1 if none)."""
    zeta = inst.context_probs @ inst.discrepancy
    ok = zeta <= tau
    return int(np.argmax(np.where(ok, inst.merit_means, -np.inf))) if ok.any() else -1


def optimum_values(inst: Instance, tau: float, c: float) -> dict[str, float]:
    """Per-round value ``E_o[μ]`` of each notion's fair optimum, and the unconstrained one."""
    p, m = inst.context_probs, inst.means
    rows = np.arange(N_CONTEXTS)
    k_int = intervention_optimum(inst, tau)
    return {
        "unconstrained": float(p @ m.max(axis=1)),
        "per-decision CF": float(p @ m[rows, per_decision_optimum(inst, tau)]),
        "average CF constraint": average_constraint_optimum(inst, tau)[0],
        "fair intervention": float(inst.merit_means[k_int]) if k_int >= 0 else float("nan"),
        "exposure": float(exposure_optimum(inst, c) @ inst.merit_means),
    }


# -- offline logs ----------------------------------------------------------------------------------


def log_cell_probabilities(inst: Instance, lam: float, s0: float, s1: float = 0.8) -> np.ndarray:
    """``P(I=k, O=o, E=e, Y=y, S=1)`` of one logged unit, shape (n_items, n_contexts, 2, 2), exact
    (numpy; the rest of the mass is the unselected units)."""
    pi = _logging_table(inst, lam)  # (u, h, k)
    pe1 = special.expit(inst.e[:, None] + inst.eta * (2 * np.arange(2)[None, :] - 1))  # (k, h)
    pe = np.stack([1 - pe1, pe1], axis=-1)  # (k, h, e)
    sel = np.array([s0, s1])
    out = np.zeros((N_ITEMS, N_CONTEXTS, 2, 2))
    for c, (a, u) in enumerate(CONTEXTS):
        y1 = inst.click(a, u, np.arange(2))  # (e, k)
        py = np.stack([1 - y1, y1], axis=-1)  # (e, k, y)
        # Σ_h P(o) P(h) P(k | u, h) P(e | k, h) P(y | o, k, e) P(S=1 | e)
        joint = np.einsum("hk,khe,eky,e->key", 0.5 * pi[u], pe, py, sel)
        out[:, c] = 0.25 * joint
    return out


def offline_counts(
    inst: Instance, lam: float, s0: float, n_draws: int, seed: int, runs, name: str = "log", s1: float = 0.8
) -> np.ndarray:
    """Each run's offline log: ``n_draws`` units drawn from the model (multinomial over the exact
    cell probabilities, hidden nodes summed out), the selected ones tabulated by
    ``(item, context, E, Y)``; shape (n_runs, 2, 2, 2, 2, 2, 2), the axes of the pcb chapter's
    count tables (item = 2 x1 + x2, context = 2 u1 + u2, then E in the place of I1, then Y), so its
    sound bound :func:`~causalbandits_lib.pcb.estimators.conditioning_bounds` applies as it is.
    Run ``i`` draws from its own stream ``name``."""
    p = log_cell_probabilities(inst, lam, s0, s1).ravel()
    probs = np.append(p, max(0.0, 1.0 - p.sum()))
    probs /= probs.sum()
    gens = RunStreams(seed, runs, prefix="offline/").generators(name)
    counts = np.stack([g.multinomial(int(n_draws), probs)[:-1] for g in gens])
    return counts.reshape((len(gens),) + (2,) * 6)


# -- the online environment ------------------------------------------------------------------------


class RecommenderEnv(ContextualBernoulliBandit):
    """The online recommender: each round a user with context ``o ~ P(o)`` arrives; recommending
    item ``k`` pays a click ``Bernoulli(μ_k(o))`` (the core's contextual Bernoulli bandit).

    Feedback (all exact from the model except ``reward``): ``regret`` (against the unconstrained
    best item of the context), ``delta`` (``Δ_{k}(o)``), ``violation`` (``Δ - τ``, signed),
    ``violation_pos`` (its positive part), ``cf_unfair`` (``1{Δ > τ}``), and the codes ``O`` (the
    context) and ``I`` (the item), which the cell-based learners read.

    Parameters
    ----------
    instance : Instance
    tau : float
        The threshold of the scores.
    """

    def __init__(self, instance: Instance, tau: float):
        super().__init__(instance.context_probs, instance.means)
        self.instance = instance
        self.tau = float(tau)
        self.delta = instance.discrepancy

    def reset(self, streams: RunStreams) -> None:
        super().reset(streams)
        #: the streams of this simulation, from which the compiled paths' views draw the same numbers
        self.streams = streams

    def pull(self, t: int, actions: np.ndarray) -> dict[str, np.ndarray]:
        actions = np.asarray(actions, dtype=np.int64)
        out = super().pull(t, actions)
        c = self._context
        d = self.delta[c, actions]
        out.update(
            delta=d,
            violation=d - self.tau,
            violation_pos=np.maximum(d - self.tau, 0.0),
            cf_unfair=(d > self.tau).astype(float),
            O=c,
            I=actions,
        )
        return out
