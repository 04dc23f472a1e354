"""A contextual bandit on a discrete causal model, and the cell decomposition of its reward.

The setting of Huang, Zhang and Wu (AAAI 2022, §3): a user with features **X** arrives, the learner
sets the arm features **A** (a soft intervention on **A**, deterministic per round), intermediate
features **I** follow from the model, and the reward is

``R = Σ_V w_V · label(V) + σ ε``,  ``ε ~ N(0, 1)``

(linear in the state labels of some nodes, as in both of the paper's experiments). Everything a
learner is compared with comes from exact computation on the model's tables:

- :class:`CellDecomposition`: ``P(W = k | x, do(a))`` for every context, arm and joint value ``k``
  of a node set **W**, and the cell means ``E[R | W = k]`` (Eq. 2 of the paper);
- :class:`CausalBanditEnv`: exact per-context arm means ``μ(x, a) = E[R | do(a), x]``, the best arm
  of each context, and a table of counterfactual discrepancies supplied by the experiment.

Index conventions (used by every policy of the chapter):

- a **context** code ``c`` enumerates the joint values of the context nodes in row-major order
  (``numpy.ravel_multi_index`` over their state codes, first node most significant);
- an **arm** code ``a`` enumerates the joint values of the arm nodes the same way;
- a **cell** code ``k`` of a decomposition enumerates the joint values of **W** the same way.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import numpy as np

from ..core.scm import DiscreteSCM
from ..core.streams import RunStreams

__all__ = [
    "joint_codes",
    "CellDecomposition",
    "IIDContexts",
    "UserSequence",
    "CausalBanditEnv",
]


def joint_codes(cards: Sequence[int]) -> np.ndarray:
    """All joint state codes of variables with ``cards`` states, row-major (shape ``(Π cards, len(cards))``)."""
    if len(cards) == 0:
        return np.zeros((1, 0), dtype=np.int64)
    return np.array(list(itertools.product(*(range(int(c)) for c in cards))), dtype=np.int64)


@dataclass(frozen=True)
class CellDecomposition:
    """The d-separation decomposition of the reward over the cells of a node set **W** (Eq. 2).

    Derived in notebooks/fucb/01_dseparation_estimator.md, section 'The d-separation decomposition' (equation
    ``fucb-eq2-dsep-decomposition``).

    ``μ(x, a) = Σ_k probs[x, a, k] · cell_means[k]`` holds exactly when **W** d-separates the reward
    from the arm and context nodes outside **W**; for other sets (e.g. **W** = the arm nodes, which
    gives the context-free UCB baseline) ``cell_means`` is still ``E[R | W = k]`` under the
    environment's context distribution, and the sum is what a learner using those cells believes.

    Attributes
    ----------
    variables : tuple of str
        The nodes of **W**, in cell-code order.
    cards : tuple of int
        Their numbers of states.
    probs : ndarray, shape (n_contexts, n_arms, n_cells)
        ``P(W = k | X = x, do(A = a))`` (the "known" ``P(z | x_{t,a})`` of the paper, with the arm and
        context parts of **W** as point masses).
    cell_means : ndarray, shape (n_cells,)
        ``E[R | W = k]`` (exact; a cell of probability zero gets NaN).
    name : str
        A label (e.g. ``"W"``, ``"Pa(R)"``).
    """

    variables: tuple[str, ...]
    cards: tuple[int, ...]
    probs: np.ndarray
    cell_means: np.ndarray
    name: str = "W"

    @property
    def n_cells(self) -> int:
        return int(np.prod(self.cards, dtype=np.int64)) if self.cards else 1

    @property
    def n_arms(self) -> int:
        return self.probs.shape[1]

    @property
    def n_contexts(self) -> int:
        return self.probs.shape[0]

    def realized_cells(self, feedback: Mapping[str, np.ndarray]) -> np.ndarray:
        """The cell of each run's realized **W** values, read from the feedback codes (shape ``(n_runs,)``)."""
        if not self.variables:
            return np.zeros(len(feedback["reward"]), dtype=np.int64)
        try:
            codes = tuple(np.asarray(feedback[v], dtype=np.int64) for v in self.variables)
        except KeyError as exc:
            raise KeyError(
                f"the feedback has no value for {exc.args[0]!r}, a node of {self.name}; it has {sorted(feedback)}"
            ) from None
        return np.ravel_multi_index(codes, self.cards)

    def arm_means(self) -> np.ndarray:
        """``Σ_k probs[x, a, k] cell_means[k]``, shape ``(n_contexts, n_arms)`` (NaN cells have zero weight)."""
        m = np.where(np.isnan(self.cell_means), 0.0, self.cell_means)
        return (self.probs * m).sum(axis=-1)


class IIDContexts:
    """Contexts drawn i.i.d. from ``probs`` every round (one uniform per run and round)."""

    def __init__(self, probs: np.ndarray):
        probs = np.asarray(probs, dtype=float)
        if probs.ndim != 1 or np.any(probs < 0) or abs(probs.sum() - 1.0) > 1e-9:
            raise ValueError(f"context probabilities must be a probability vector, got {probs.tolist()}")
        self.probs = probs
        self.cdf = np.cumsum(probs)
        self.cdf[-1] = 1.0

    def reset(self, streams: RunStreams) -> None:
        self.noise = streams.per_round("contexts", (), "uniform")

    def draw(self, t: int) -> np.ndarray:
        return np.searchsorted(self.cdf, self.noise.at(t), side="right").astype(np.int64)


class UserSequence:
    """Each run serves a fixed pool of users in its own random order (a permutation per run).

    Round ``t`` of run ``r`` serves user ``order[r, t mod n]``; with ``T <= n`` every user arrives at
    most once, as in the paper's Adult-Video experiment (5,000 online users, 5,000 rounds).

    Parameters
    ----------
    user_contexts : int array, shape (n_users,)
        The context code of every user of the pool.
    """

    def __init__(self, user_contexts: np.ndarray):
        user_contexts = np.asarray(user_contexts, dtype=np.int64)
        if user_contexts.ndim != 1 or len(user_contexts) == 0:
            raise ValueError("user_contexts must be a non-empty 1-d array of context codes")
        self.user_contexts = user_contexts
        counts = np.bincount(user_contexts)
        self.probs = counts / counts.sum()

    def reset(self, streams: RunStreams) -> None:
        u = streams.once("user order", (len(self.user_contexts),))
        self.order = np.argsort(u, axis=1, kind="stable")

    def draw(self, t: int) -> np.ndarray:
        return self.user_contexts[self.order[:, t % len(self.user_contexts)]]


@dataclass
class CausalBanditEnv:
    """A contextual bandit whose arms are the joint values of the arm nodes of a discrete SCM.

    Each round: a context arrives (``contexts.draw``); the learner picks arm codes; the model's other
    nodes are sampled from per-round uniforms (inverse CDF, :meth:`DiscreteSCM.sample_from_uniforms`)
    with the context and arm nodes fixed; the reward is the linear function of labels plus Gaussian
    noise. Per-round uniforms and noise come from the run's own streams, so every policy simulated
    with the same seed faces the same draws (common random numbers).

    Parameters
    ----------
    model : DiscreteSCM
        Every node but the reward. The arm nodes' own tables are irrelevant (they are set by do()).
    context_nodes, arm_nodes : sequence of str
    reward_weights : mapping of node to float
        ``R = Σ_V w_V · label(V) + offset + σ ε``; labels must be numbers.
    sigma : float
        Standard deviation of the reward noise.
    contexts : IIDContexts or UserSequence
        How contexts arrive. Its ``probs`` (over context codes) is the context distribution used
        for the cell means ``E[R | W = k]``.
    discrepancy : ndarray, shape (n_contexts, n_arms), optional
        The true counterfactual discrepancy ``Δ(x, a)`` of every arm for every context, reported as
        feedback ``discrepancy`` of the chosen arm (zeros if not given).
    offset : float
    name : str

    Feedback of :meth:`pull`
    ------------------------
    ``reward``, ``regret`` (exact ``max_a' μ(x, a') − μ(x, a)``), ``discrepancy`` (the true Δ of the
    chosen arm), and the state code of every node of the model (keyed by node name).
    """

    model: DiscreteSCM
    context_nodes: Sequence[str]
    arm_nodes: Sequence[str]
    reward_weights: Mapping[str, float]
    sigma: float
    contexts: IIDContexts | UserSequence
    discrepancy: np.ndarray | None = None
    offset: float = 0.0
    name: str = "causal bandit"
    _joint: np.ndarray | None = field(default=None, init=False, repr=False)
    _plan: list | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        self.context_nodes = tuple(self.context_nodes)
        self.arm_nodes = tuple(self.arm_nodes)
        for group, nodes in (
            ("context_nodes", self.context_nodes),
            ("arm_nodes", self.arm_nodes),
            ("reward_weights", tuple(self.reward_weights)),
        ):
            for n in nodes:
                if n not in self.model.states:
                    raise ValueError(
                        f"{self.name}: {group} names {n!r}, which is not a node of the model; "
                        f"nodes are {sorted(self.model.states)}"
                    )
        for n in self.context_nodes:
            bad = [p for p in self.model.parents(n) if p not in self.context_nodes]
            if bad:
                raise ValueError(
                    f"{self.name}: context node {n!r} has parent {bad[0]!r}, which is not a context node "
                    "(users arrive before anything else)"
                )
        for n in self.arm_nodes:
            bad = [p for p in self.model.parents(n) if p not in self.context_nodes and p not in self.arm_nodes]
            if bad:
                raise ValueError(
                    f"{self.name}: arm node {n!r} has parent {bad[0]!r}; "
                    "an arm node may only depend on context or arm nodes"
                )
        if not self.sigma >= 0:
            raise ValueError(f"{self.name}: sigma={self.sigma} must be >= 0")
        self.context_cards = tuple(self.model.card(n) for n in self.context_nodes)
        self.arm_cards = tuple(self.model.card(n) for n in self.arm_nodes)
        self.context_codes = joint_codes(self.context_cards)
        self.arm_codes = joint_codes(self.arm_cards)
        self.n_contexts, self.n_arms = len(self.context_codes), len(self.arm_codes)
        if len(self.contexts.probs) > self.n_contexts:
            raise ValueError(
                f"{self.name}: the context source has {len(self.contexts.probs)} contexts, the model {self.n_contexts}"
            )
        probs = np.zeros(self.n_contexts)
        probs[: len(self.contexts.probs)] = self.contexts.probs
        self.context_probs = probs
        self.labels = {
            n: np.asarray(self.model.states[n], dtype=float)
            for n in self.model.states
            if _numeric(self.model.states[n])
        }
        for n in self.reward_weights:
            if n not in self.labels:
                raise ValueError(
                    f"{self.name}: the reward uses {n!r}, whose labels {self.model.states[n]!r} are not numbers"
                )
        self.means = self._exact_means()
        self.best_means = self.means.max(axis=1)
        if self.discrepancy is None:
            self.discrepancy = np.zeros_like(self.means)
        self.discrepancy = np.asarray(self.discrepancy, dtype=float)
        if self.discrepancy.shape != self.means.shape:
            raise ValueError(
                f"{self.name}: discrepancy must have shape {self.means.shape}, got {self.discrepancy.shape}"
            )

    # ------------------------------------------------------------------ exact quantities
    def interventional_joint(self) -> np.ndarray:
        """``P(other nodes | X = x, do(A = a))`` with axes ``(context, arm, *other nodes in model order)``."""
        if self._joint is None:
            # With every context and arm node given, P(rest | x, a) = P(rest | do(x, a)) in a Markovian
            # model (each remaining node's parents are given or sampled after them), so both sets are
            # replaced by uniform roots: every (x, a) then has positive probability.
            uniform = {
                n: ((), np.full(self.model.card(n), 1.0 / self.model.card(n)))
                for n in (*self.context_nodes, *self.arm_nodes)
            }
            m = self.model.intervene(soft=uniform)
            joint = m.joint_table()
            order = list(m.nodes)
            lead = [order.index(n) for n in (*self.context_nodes, *self.arm_nodes)]
            rest = [i for i in range(len(order)) if i not in lead]
            joint = np.transpose(joint, lead + rest)
            joint = joint.reshape(self.n_contexts, self.n_arms, *joint.shape[len(lead) :])
            p_ca = joint.reshape(self.n_contexts, self.n_arms, -1).sum(axis=-1)
            with np.errstate(invalid="ignore", divide="ignore"):
                cond = joint / p_ca.reshape(p_ca.shape + (1,) * (joint.ndim - 2))
            self._joint = np.nan_to_num(cond)
            self._rest_nodes = tuple(order[i] for i in rest)
        return self._joint

    def _exact_means(self) -> np.ndarray:
        cond = self.interventional_joint()
        mean = np.full((self.n_contexts, self.n_arms), float(self.offset))
        for node, w in self.reward_weights.items():
            mean += w * self._expected_label(cond, node)
        return mean

    def _expected_label(self, cond: np.ndarray, node: str) -> np.ndarray:
        labels = self.labels[node]
        if node in self.context_nodes:
            j = self.context_nodes.index(node)
            return np.broadcast_to(labels[self.context_codes[:, j]][:, None], (self.n_contexts, self.n_arms))
        if node in self.arm_nodes:
            j = self.arm_nodes.index(node)
            return np.broadcast_to(labels[self.arm_codes[:, j]][None, :], (self.n_contexts, self.n_arms))
        axis = 2 + self._rest_nodes.index(node)
        other = tuple(i for i in range(2, cond.ndim) if i != axis)
        marginal = cond.sum(axis=other)  # (n_contexts, n_arms, card)
        return marginal @ labels

    def decomposition(self, variables: Sequence[str], name: str = "W") -> CellDecomposition:
        """The exact :class:`CellDecomposition` over ``variables`` (Eq. 2 of the paper).

        ``probs[x, a, k] = P(W = k | x, do(a))`` and ``cell_means[k] = E[R | W = k]``, both from the
        model's joint table, the cell means under the context distribution and uniformly random arms
        (for a d-separating **W** they do not depend on that choice).
        """
        variables = tuple(variables)
        for v in variables:
            if v not in self.model.states:
                raise ValueError(f"{name}: {v!r} is not a node of {self.name}; nodes are {sorted(self.model.states)}")
        if len(set(variables)) != len(variables):
            raise ValueError(f"{name}: a node is repeated in {variables}")
        cond = self.interventional_joint()
        cards = tuple(self.model.card(v) for v in variables)
        n_cells = int(np.prod(cards, dtype=np.int64)) if cards else 1
        # P(all | x, a) reduced to P(W, reward-relevant nodes | x, a) by summing the others out.
        keep = [n for n in self._rest_nodes if n in variables or n in self.reward_weights]
        axes_sum = tuple(2 + i for i, n in enumerate(self._rest_nodes) if n not in keep)
        small = cond.sum(axis=axes_sum) if axes_sum else cond
        # enumerate every (x, a, kept values) and accumulate the W cell probability and reward mass
        kept_cards = [self.model.card(n) for n in keep]
        probs = np.zeros((self.n_contexts, self.n_arms, n_cells))
        mass = np.zeros((self.n_contexts, self.n_arms, n_cells))
        for vals in itertools.product(*(range(c) for c in kept_cards)):
            p = small[(slice(None), slice(None), *vals)]
            node_code = dict(zip(keep, vals))
            codes = []
            for v in variables:
                if v in node_code:
                    codes.append(np.full((self.n_contexts, self.n_arms), node_code[v]))
                elif v in self.context_nodes:
                    codes.append(np.broadcast_to(self.context_codes[:, self.context_nodes.index(v)][:, None], p.shape))
                else:
                    codes.append(np.broadcast_to(self.arm_codes[:, self.arm_nodes.index(v)][None, :], p.shape))
            cell = np.ravel_multi_index(tuple(codes), cards) if cards else np.zeros(p.shape, dtype=np.int64)
            r = np.full(p.shape, float(self.offset))
            for node, w in self.reward_weights.items():
                if node in node_code:
                    r = r + w * self.labels[node][node_code[node]]
                elif node in self.context_nodes:
                    r = r + w * self.labels[node][self.context_codes[:, self.context_nodes.index(node)]][:, None]
                else:
                    r = r + w * self.labels[node][self.arm_codes[:, self.arm_nodes.index(node)]][None, :]
            ci, ai = np.indices(p.shape)
            np.add.at(probs, (ci, ai, cell), p)
            np.add.at(mass, (ci, ai, cell), p * r)
        # Renormalise each row (the joint table's sums carry rounding errors of a few ulps), so a
        # point mass is exactly 1 and the rows sum to 1 up to rounding.
        total = probs.sum(axis=-1, keepdims=True)
        probs, mass = probs / total, mass / total
        # E[R | W = k] under P(x) × uniform arms
        weight = self.context_probs[:, None, None] / self.n_arms
        num = (weight * mass).sum(axis=(0, 1))
        den = (weight * probs).sum(axis=(0, 1))
        with np.errstate(invalid="ignore", divide="ignore"):
            cell_means = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
        return CellDecomposition(variables, cards, probs, cell_means, name)

    def context_code(self, values: Mapping[str, int]) -> int:
        """The context code of state codes ``{node: code}`` (every context node must be given)."""
        return int(np.ravel_multi_index(tuple(int(values[n]) for n in self.context_nodes), self.context_cards))

    def arm_code(self, values: Mapping[str, int]) -> int:
        """The arm code of state codes ``{node: code}`` (every arm node must be given)."""
        return int(np.ravel_multi_index(tuple(int(values[n]) for n in self.arm_nodes), self.arm_cards))

    def counterfactual_contexts(self, sensitive: str) -> np.ndarray:
        """``out[c, s]``: the context code of ``c`` with the sensitive node set to code ``s``,
        shape ``(n_contexts, card(sensitive))``."""
        if sensitive not in self.context_nodes:
            raise ValueError(
                f"{self.name}: sensitive={sensitive!r} must be a context node; they are {self.context_nodes}"
            )
        j = self.context_nodes.index(sensitive)
        out = np.empty((self.n_contexts, self.model.card(sensitive)), dtype=np.int64)
        for s in range(self.model.card(sensitive)):
            codes = self.context_codes.copy()
            codes[:, j] = s
            out[:, s] = np.ravel_multi_index(tuple(codes.T), self.context_cards)
        return out

    def varied_contexts(self, sensitive: str, varied: Sequence[str]) -> np.ndarray:
        """``out[c, s, b]``: the context ``c`` with the sensitive node set to ``s`` and the nodes
        ``varied`` set to their joint value ``b`` (row-major), shape ``(n_contexts, card(S), Π card(B))``."""
        varied = tuple(varied)
        for v in (sensitive, *varied):
            if v not in self.context_nodes:
                raise ValueError(f"{self.name}: {v!r} must be a context node; they are {self.context_nodes}")
        js = self.context_nodes.index(sensitive)
        jb = [self.context_nodes.index(v) for v in varied]
        b_codes = joint_codes([self.model.card(v) for v in varied])
        out = np.empty((self.n_contexts, self.model.card(sensitive), len(b_codes)), dtype=np.int64)
        for s in range(self.model.card(sensitive)):
            for bi, b in enumerate(b_codes):
                codes = self.context_codes.copy()
                codes[:, js] = s
                for j, code in zip(jb, b):
                    codes[:, j] = code
                out[:, s, bi] = np.ravel_multi_index(tuple(codes.T), self.context_cards)
        return out

    # ------------------------------------------------------------------ sampling
    def sampling_plan(self):
        """For every node other than the context and arm nodes, in topological order: its name, its
        column of the uniforms, its parents, their strides in the flattened table, and the table's
        cumulative rows without the last column (the same inverse-CDF rule as
        :meth:`DiscreteSCM.sample_from_uniforms`, without its per-call checks). Computed once."""
        if self._plan is None:
            self._plan = self._build_sampling_plan()
        return self._plan

    def _build_sampling_plan(self):
        plan = []
        fixed = set(self.context_nodes) | set(self.arm_nodes)
        for node in self.model.nodes:
            if node in fixed:
                continue
            mech = self.model.mechanisms[node]
            cards = [self.model.card(p) for p in mech.parents]
            strides = [int(np.prod(cards[i + 1 :], dtype=np.int64)) for i in range(len(cards))]
            cdf = np.cumsum(mech.table.reshape(-1, mech.table.shape[-1]), axis=1)
            cdf[:, -1] = 1.0
            plan.append((node, self.model.column(node), tuple(mech.parents), tuple(strides), cdf[:, :-1]))
        return plan

    def sample_nodes(self, u: np.ndarray, contexts: np.ndarray, actions: np.ndarray) -> dict[str, np.ndarray]:
        """State codes of every node for each run, given its context, arm and uniforms ``u`` of shape
        ``(n_runs, n_nodes)`` (columns as in :meth:`DiscreteSCM.column`)."""
        codes = {n: self.context_codes[contexts, j] for j, n in enumerate(self.context_nodes)}
        codes.update({n: self.arm_codes[actions, j] for j, n in enumerate(self.arm_nodes)})
        for node, col, parents, strides, cdf in self.sampling_plan():
            flat = 0
            for p, st in zip(parents, strides):
                flat = flat + codes[p] * st
            rows = cdf[flat] if parents else cdf[np.zeros(len(u), dtype=np.int64)]
            codes[node] = (u[:, col, None] >= rows).sum(axis=-1)
        return codes

    # ------------------------------------------------------------------ the runner's protocol
    def reset(self, streams: RunStreams) -> None:
        self.contexts.reset(streams)
        self.node_uniforms = streams.per_round("nodes", (len(self.model.nodes),), "uniform")
        self.reward_noise = streams.per_round("reward noise", (), "normal")
        self._context: np.ndarray | None = None

    def observe(self, t: int) -> np.ndarray:
        """Context codes of round ``t``, shape ``(n_runs,)``."""
        self._context = self.contexts.draw(t)
        return self._context

    def pull(self, t: int, actions: np.ndarray) -> dict[str, np.ndarray]:
        c = self._context
        actions = np.asarray(actions, dtype=np.int64)
        codes = self.sample_nodes(self.node_uniforms.at(t), c, actions)
        mean = np.full(len(c), float(self.offset))
        for node, w in self.reward_weights.items():
            mean = mean + w * self.labels[node][codes[node]]
        mu = self.means[c, actions]
        out = {
            "reward": mean + self.sigma * self.reward_noise.at(t),
            "regret": self.best_means[c] - mu,
            "discrepancy": self.discrepancy[c, actions],
        }
        out.update(codes)
        return out


def _numeric(states) -> bool:
    return all(isinstance(s, (int, float, np.integer, np.floating)) and not isinstance(s, bool) for s in states)
