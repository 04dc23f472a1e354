"""Discrete structural causal models given by conditional probability tables.

A :class:`DiscreteSCM` is a Markovian causal model over discrete variables: each node has a finite
list of states and a table ``P(node | parents)``. It is validated on construction (tables are
non-negative and normalised, the graph is acyclic, every parent exists), converted to a pgmpy
``DiscreteBayesianNetwork`` for exact inference, and sampled by a vectorised inverse-CDF sampler.

Conventions
-----------
- **Tables** have shape ``(*parent_cards, card)``: one row per parent configuration, the last axis
  over the node's own states, summing to one.
- **Queries** (:meth:`DiscreteSCM.query`, :meth:`DiscreteSCM.expectation`,
  :meth:`DiscreteSCM.counterfactual`) take and return *state labels*, as pgmpy does.
- **Sampling** works on *state codes* ``0..card-1`` so that it stays vectorised; use
  :meth:`DiscreteSCM.code` and :meth:`DiscreteSCM.label` to translate.
- The sampler couples all interventions through the same uniforms: node ``V`` takes the smallest
  code whose cumulative probability exceeds ``U_V``. Sampling a factual and an intervened world from
  the same uniforms therefore gives a twin-network draw under this (monotone) coupling.

Interventions
-------------
- hard: ``do={"X": value}`` replaces ``P(X | pa(X))`` by a point mass;
- soft (a policy, σ-calculus): ``soft={"X": (parents, table)}`` replaces it by ``P_π(X | parents)``,
  where the new parents may differ from the old ones (Correa and Bareinboim, 2020).
"""

from __future__ import annotations

import gzip
import importlib.resources
import itertools
import warnings
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Hashable, Mapping, Sequence

import networkx as nx
import numpy as np

with warnings.catch_warnings():
    # pgmpy 1.1 warns about its own deprecated modules on import, and the tqdm.auto it imports warns
    # inside a notebook kernel without ipywidgets; nothing here uses either.
    warnings.simplefilter("ignore", FutureWarning)
    warnings.filterwarnings("ignore", message="IProgress not found")
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.inference import VariableElimination
    from pgmpy.models import DiscreteBayesianNetwork
    from pgmpy.readwrite import BIFReader

__all__ = [
    "SCMError",
    "NotIdentifiableError",
    "Mechanism",
    "DiscreteSCM",
    "bundled_network",
]

#: Tolerance on the sum of a table row. Published networks print probabilities with a few decimals
#: (bnlearn's HEPAR-II has rows summing to 1.00000001); rows within this tolerance are accepted and
#: divided by their sum, so that the stored tables are normalised to machine precision.
ROW_SUM_ATOL = 1e-6


class SCMError(ValueError):
    """The model's tables, states or graph are invalid."""


class NotIdentifiableError(ValueError):
    """A counterfactual query cannot be computed from the tables alone."""


@dataclass(frozen=True)
class Mechanism:
    """``P(node | parents)`` as a table of shape ``(*parent_cards, card)``."""

    parents: tuple[str, ...]
    table: np.ndarray


def _fmt_config(parents: Sequence[str], labels: Sequence[Any]) -> str:
    return ", ".join(f"{p}={v!r}" for p, v in zip(parents, labels)) or "(no parents)"


class DiscreteSCM:
    """A Markovian SCM over discrete variables.

    Parameters
    ----------
    states : mapping of str to sequence
        The states (labels) of every node, in code order.
    mechanisms : mapping of str to (parents, table)
        For every node, its parents and its table of shape ``(*parent_cards, card)``.
    name : str, optional
        A name used in error messages.

    Raises
    ------
    SCMError
        Naming the node and the offending value: a node without states or with repeated states, a
        table for an unknown node or a missing table, an unknown parent, a table of the wrong shape,
        a negative or non-finite entry, a row that does not sum to one, or a directed cycle.
    """

    def __init__(self, states: Mapping[str, Sequence[Hashable]], mechanisms: Mapping[str, Any], name: str = "model"):
        self.name = name
        self.states: dict[str, tuple] = {}
        for node, sts in states.items():
            sts = tuple(sts)
            if len(sts) == 0:
                raise SCMError(f"{name}: node {node!r} has no states; it needs at least one")
            if len(set(sts)) != len(sts):
                raise SCMError(f"{name}: node {node!r} repeats a state in {sts!r}; states must be distinct")
            self.states[str(node)] = sts
        unknown = [n for n in mechanisms if n not in self.states]
        if unknown:
            raise SCMError(
                f"{name}: a table is given for {unknown[0]!r}, which has no states; known nodes are "
                f"{sorted(self.states)}"
            )
        missing = [n for n in self.states if n not in mechanisms]
        if missing:
            raise SCMError(f"{name}: node {missing[0]!r} has no table P({missing[0]} | parents)")
        self.mechanisms: dict[str, Mechanism] = {}
        for node, mech in mechanisms.items():
            parents, table = (mech.parents, mech.table) if isinstance(mech, Mechanism) else mech
            self.mechanisms[node] = self._check_table(node, tuple(parents), table)
        graph = nx.DiGraph()
        graph.add_nodes_from(self.states)
        for node, mech in self.mechanisms.items():
            graph.add_edges_from((p, node) for p in mech.parents)
        try:
            cycle = nx.find_cycle(graph)
        except nx.NetworkXNoCycle:
            cycle = None
        if cycle:
            path = " -> ".join([e[0] for e in cycle] + [cycle[0][0]])
            raise SCMError(f"{name}: the graph has a directed cycle {path}; a causal model must be acyclic")
        self.graph = graph
        #: Nodes in a fixed topological order (ties broken by declaration order).
        order = {n: i for i, n in enumerate(self.states)}
        self.nodes: tuple[str, ...] = tuple(nx.lexicographical_topological_sort(graph, key=lambda n: order[n]))
        self._column = {n: i for i, n in enumerate(self.nodes)}
        self._cdf_cache: dict[str, np.ndarray] = {}

    # ------------------------------------------------------------------ construction helpers
    def _check_table(self, node: str, parents: tuple[str, ...], table: Any) -> Mechanism:
        for p in parents:
            if p not in self.states:
                raise SCMError(
                    f"{self.name}: parent {p!r} of {node!r} is not a node; known nodes are {sorted(self.states)}"
                )
        if len(set(parents)) != len(parents):
            raise SCMError(f"{self.name}: node {node!r} lists a parent twice in {parents!r}")
        if node in parents:
            raise SCMError(f"{self.name}: node {node!r} lists itself as a parent")
        arr = np.asarray(table, dtype=float)
        shape = tuple(len(self.states[p]) for p in parents) + (len(self.states[node]),)
        if arr.shape != shape:
            raise SCMError(
                f"{self.name}: table of {node!r} has shape {arr.shape}; with parents {parents!r} it must have shape "
                f"{shape} "
                "(one axis per parent, then the node's own states)"
            )
        if not np.all(np.isfinite(arr)):
            raise SCMError(f"{self.name}: table of {node!r} has a non-finite entry")
        if np.any(arr < 0):
            idx = tuple(int(i) for i in np.argwhere(arr < 0)[0])
            raise SCMError(
                f"{self.name}: table of {node!r} has a negative entry {arr[idx]!r} at {idx}; probabilities must be >= 0"
            )
        sums = arr.sum(axis=-1)
        bad = np.argwhere(np.abs(sums - 1.0) > ROW_SUM_ATOL)
        if len(bad):
            cfg = tuple(int(i) for i in bad[0])
            labels = [self.states[p][c] for p, c in zip(parents, cfg)]
            raise SCMError(
                f"{self.name}: row of {node!r} for {_fmt_config(parents, labels)} sums to {float(sums[cfg])!r}; "
                f"every row must sum to 1 (tolerance {ROW_SUM_ATOL:g})"
            )
        arr = arr / sums[..., None]
        arr.setflags(write=False)
        return Mechanism(parents, arr)

    @classmethod
    def from_pgmpy(cls, model: DiscreteBayesianNetwork, name: str = "model") -> "DiscreteSCM":
        """Wrap a pgmpy ``DiscreteBayesianNetwork`` (its CPDs become tables)."""
        states, mechanisms = {}, {}
        for node in model.nodes():
            cpd = model.get_cpds(node)
            if cpd is None:
                raise SCMError(f"{name}: node {node!r} of the pgmpy model has no CPD")
            parents = tuple(cpd.variables[1:])
            states[node] = tuple(cpd.state_names[node])
            # pgmpy stores values with axes (node, *parents); ours are (*parents, node).
            mechanisms[node] = (parents, np.moveaxis(np.asarray(cpd.values, dtype=float), 0, -1))
        return cls(states, mechanisms, name=name)

    # ------------------------------------------------------------------ basic facts
    def card(self, node: str) -> int:
        return len(self.states[self._known(node)])

    def parents(self, node: str) -> tuple[str, ...]:
        return self.mechanisms[self._known(node)].parents

    def _known(self, node: str) -> str:
        if node not in self.states:
            raise KeyError(f"{self.name}: unknown node {node!r}; known nodes are {sorted(self.states)}")
        return node

    def code(self, node: str, label: Hashable) -> int:
        """The code of state ``label`` of ``node``."""
        sts = self.states[self._known(node)]
        try:
            return sts.index(label)
        except ValueError:
            raise KeyError(f"{self.name}: {label!r} is not a state of {node!r}; its states are {sts!r}") from None

    def label(self, node: str, code: int) -> Hashable:
        """The state label of ``code`` for ``node``."""
        return self.states[self._known(node)][int(code)]

    def descendants(self, nodes: str | Sequence[str]) -> set[str]:
        """Strict descendants of a node or of a set of nodes."""
        nodes = [nodes] if isinstance(nodes, str) else list(nodes)
        out: set[str] = set()
        for n in nodes:
            out |= nx.descendants(self.graph, self._known(n))
        return out

    # ------------------------------------------------------------------ interventions
    def intervene(
        self, do: Mapping[str, Hashable] | None = None, soft: Mapping[str, Any] | None = None
    ) -> "DiscreteSCM":
        """The model after hard interventions ``do`` and soft interventions ``soft``.

        Parameters
        ----------
        do : mapping of node to state label
            ``do(X = x)``: X loses its parents and takes ``x``.
        soft : mapping of node to (parents, table)
            ``σ_X = π``: X's table is replaced by ``π(X | parents)``; the parents may be any nodes
            that keep the graph acyclic.
        """
        do = dict(do or {})
        soft = dict(soft or {})
        both = set(do) & set(soft)
        if both:
            raise SCMError(f"{self.name}: node {sorted(both)[0]!r} is given both a hard and a soft intervention")
        mechanisms: dict[str, Any] = {n: m for n, m in self.mechanisms.items()}
        for node, value in do.items():
            table = np.zeros(self.card(node))
            table[self.code(node, value)] = 1.0
            mechanisms[node] = ((), table)
        for node, (parents, table) in soft.items():
            self._known(node)
            mechanisms[node] = (tuple(parents), table)
        tag = ", ".join([f"do({k}={v!r})" for k, v in do.items()] + [f"σ({k})" for k in soft])
        return DiscreteSCM(self.states, mechanisms, name=f"{self.name}[{tag}]" if tag else self.name)

    # ------------------------------------------------------------------ sampling
    def _cdf(self, node: str) -> np.ndarray:
        cdf = self._cdf_cache.get(node)
        if cdf is None:
            table = self.mechanisms[node].table
            cdf = np.cumsum(table.reshape(-1, table.shape[-1]), axis=1)
            cdf[:, -1] = 1.0  # guard against round-off: every u < 1 falls in some state
            self._cdf_cache[node] = cdf
        return cdf

    def column(self, node: str) -> int:
        """Index of ``node`` in the last axis of the uniforms given to :meth:`sample_from_uniforms`."""
        return self._column[self._known(node)]

    def sample_from_uniforms(
        self,
        u: np.ndarray,
        do_codes: Mapping[str, Any] | None = None,
        soft: Mapping[str, Mechanism | tuple] | None = None,
    ) -> dict[str, np.ndarray]:
        """Deterministic ancestral sampling from given uniforms (inverse CDF), vectorised.

        Parameters
        ----------
        u : ndarray, shape (..., n_nodes)
            Uniforms in [0, 1); ``u[..., self.column(V)]`` drives node ``V``.
        do_codes : mapping of node to int or int array broadcastable to ``u.shape[:-1]``
            Hard interventions, as state codes (per row if an array).
        soft : mapping of node to (parents, table)
            Soft interventions; the table has shape ``(*parent_cards, card)``.

        Returns
        -------
        dict of node to int array of shape ``u.shape[:-1]`` (state codes).
        """
        u = np.asarray(u, dtype=float)
        if u.shape[-1] != len(self.nodes):
            raise ValueError(
                f"u has {u.shape[-1]} columns; {self.name} has {len(self.nodes)} nodes (one uniform per node)"
            )
        do_codes = dict(do_codes or {})
        soft_m: dict[str, tuple[tuple[str, ...], np.ndarray]] = {}
        for node, mech in (soft or {}).items():
            parents, table = (mech.parents, mech.table) if isinstance(mech, Mechanism) else mech
            checked = self._check_table(self._known(node), tuple(parents), table)
            cdf = np.cumsum(checked.table.reshape(-1, checked.table.shape[-1]), axis=1)
            cdf[:, -1] = 1.0
            soft_m[node] = (checked.parents, cdf)
        order = self.nodes if not soft_m else self._order_with(soft_m)
        out: dict[str, np.ndarray] = {}
        batch = u.shape[:-1]
        for node in order:
            if node in do_codes:
                code = np.broadcast_to(np.asarray(do_codes[node], dtype=np.int64), batch)
                if np.any((code < 0) | (code >= self.card(node))):
                    raise ValueError(f"do code for {node!r} out of range 0..{self.card(node) - 1}")
                out[node] = code
                continue
            if node in soft_m:
                parents, cdf = soft_m[node]
            else:
                parents, cdf = self.mechanisms[node].parents, self._cdf(node)
            if parents:
                flat = np.ravel_multi_index(tuple(out[p] for p in parents), tuple(self.card(p) for p in parents))
                rows = cdf[flat]
            else:
                rows = np.broadcast_to(cdf[0], batch + cdf.shape[1:])
            uu = u[..., self._column[node]]
            out[node] = (uu[..., None] >= rows[..., :-1]).sum(axis=-1).astype(np.int64)
        return {n: out[n] for n in self.nodes}

    def _order_with(self, soft_m: Mapping[str, tuple]) -> tuple[str, ...]:
        graph = nx.DiGraph()
        graph.add_nodes_from(self.nodes)
        for node in self.nodes:
            parents = soft_m[node][0] if node in soft_m else self.mechanisms[node].parents
            graph.add_edges_from((p, node) for p in parents)
        if not nx.is_directed_acyclic_graph(graph):
            raise SCMError(f"{self.name}: the soft intervention creates a directed cycle")
        order = {n: i for i, n in enumerate(self.nodes)}
        return tuple(nx.lexicographical_topological_sort(graph, key=lambda n: order[n]))

    def sample(
        self,
        n: int,
        rng: np.random.Generator,
        do_codes: Mapping[str, Any] | None = None,
        soft: Mapping[str, Any] | None = None,
    ) -> dict[str, np.ndarray]:
        """Draw ``n`` rows (state codes), consuming ``rng.random((n, n_nodes))``."""
        if n < 0:
            raise ValueError(f"n={n} must be >= 0")
        return self.sample_from_uniforms(rng.random((int(n), len(self.nodes))), do_codes=do_codes, soft=soft)

    # ------------------------------------------------------------------ exact inference (pgmpy)
    @cached_property
    def pgmpy_model(self) -> DiscreteBayesianNetwork:
        """The model as a pgmpy ``DiscreteBayesianNetwork`` (built once)."""
        model = DiscreteBayesianNetwork()
        model.add_nodes_from(self.nodes)
        for node in self.nodes:
            model.add_edges_from((p, node) for p in self.mechanisms[node].parents)
        cpds = []
        for node in self.nodes:
            mech = self.mechanisms[node]
            values = np.moveaxis(mech.table, -1, 0).reshape(self.card(node), -1)
            cpds.append(
                TabularCPD(
                    variable=node,
                    variable_card=self.card(node),
                    values=values,
                    evidence=list(mech.parents) or None,
                    evidence_card=[self.card(p) for p in mech.parents] or None,
                    state_names={v: list(self.states[v]) for v in (node, *mech.parents)},
                )
            )
        model.add_cpds(*cpds)
        return model

    @cached_property
    def _inference(self) -> VariableElimination:
        return VariableElimination(self.pgmpy_model)

    def query(
        self,
        variables: Sequence[str],
        evidence: Mapping[str, Hashable] | None = None,
        do: Mapping[str, Hashable] | None = None,
        soft: Mapping[str, Any] | None = None,
    ) -> np.ndarray:
        """Exact ``P(variables | evidence)`` in the model after ``do`` / ``soft`` interventions.

        Computed by pgmpy's variable elimination on the intervened network (truncated
        factorisation). Returns an array with one axis per requested variable, in the order given,
        over their states in code order.

        pgmpy prunes the network with set operations before contracting, so the order of the
        floating-point operations, and hence the last bits of the result, depend on Python's hash
        seed. Results are bit-for-bit reproducible under a fixed ``PYTHONHASHSEED`` (the Makefile
        and ``causalbandits run`` set it to 0 for every kernel).
        """
        variables = [self._known(v) for v in variables]
        evidence = {self._known(k): v for k, v in (evidence or {}).items()}
        for k, v in evidence.items():
            self.code(k, v)
        model = self.intervene(do, soft) if (do or soft) else self
        overlap = set(variables) & set(evidence)
        if overlap:
            raise ValueError(f"variable {sorted(overlap)[0]!r} is both queried and given as evidence")
        if do and (set(do) & set(evidence)):
            node = sorted(set(do) & set(evidence))[0]
            if evidence[node] != do[node]:
                raise ValueError(f"evidence {node}={evidence[node]!r} contradicts do({node}={do[node]!r})")
            evidence.pop(node)
        factor = model._inference.query(variables, evidence=evidence or None, show_progress=False, joint=True)
        axes = [factor.variables.index(v) for v in variables]
        values = np.transpose(np.asarray(factor.values, dtype=float), axes)
        # pgmpy keeps state order, but check so that a future change cannot silently permute states.
        for v in variables:
            if tuple(factor.state_names[v]) != self.states[v]:
                raise RuntimeError(
                    f"pgmpy returned states {factor.state_names[v]!r} for {v!r}, expected {self.states[v]!r}"
                )
        return values

    def expectation(
        self,
        node: str,
        evidence: Mapping[str, Hashable] | None = None,
        do: Mapping[str, Hashable] | None = None,
        soft: Mapping[str, Any] | None = None,
        values: Sequence[float] | None = None,
    ) -> float:
        """Exact ``E[f(node) | evidence]`` after interventions; ``f`` maps states to ``values``
        (default: the state labels themselves, which must then be numbers)."""
        dist = self.query([node], evidence=evidence, do=do, soft=soft)
        vals = np.asarray(self.states[node] if values is None else values, dtype=float)
        if vals.shape != dist.shape:
            raise ValueError(f"values for {node!r} must have {dist.shape[0]} entries, got {vals.shape}")
        return float(dist @ vals)

    def counterfactual(
        self,
        variables: Sequence[str],
        do: Mapping[str, Hashable],
        evidence: Mapping[str, Hashable],
    ) -> np.ndarray:
        """Exact ``P(variables_{do} | evidence)`` where it is identified from the tables.

        In a Markovian model the counterfactual is identified when every evidence node is either
        intervened on or a non-descendant of the intervened set ``X``, and the parents of the
        intervened nodes that appear in the evidence are non-descendants too. Then, with
        ``N = pa(X ∩ E) \\ X`` and ``E_n`` the evidence on non-descendants,

        ``P(Y_x | e) = Σ_n P(Y | do(x), n, e_n) P(n | e)``

        (the factual value of an intervened node only informs its own independent noise; shared
        non-descendants take the same value in both worlds). Wu, Zhang and Wu (IJCAI 2019, Prop. 1)
        state the same condition for counterfactual fairness.

        Raises
        ------
        NotIdentifiableError
            If the evidence involves a descendant of the intervened set.
        """
        do = {self._known(k): v for k, v in do.items()}
        evidence = {self._known(k): v for k, v in evidence.items()}
        desc = self.descendants(list(do)) - set(do)
        bad = sorted(set(evidence) & desc)
        if bad:
            raise NotIdentifiableError(
                f"{self.name}: evidence on {bad[0]!r}, a descendant of the intervened {sorted(do)}, makes the "
                "counterfactual "
                "depend on the unknown coupling of the noise terms; it is not identified from the tables alone"
            )
        factual_x = [x for x in do if x in evidence]
        adjust = sorted({p for x in factual_x for p in self.parents(x)} - set(do) - set(evidence))
        bad = sorted(set(adjust) & desc)
        if bad:
            raise NotIdentifiableError(
                f"{self.name}: parent {bad[0]!r} of an observed intervened node descends from the intervention; not "
                "identified"
            )
        e_nd = {k: v for k, v in evidence.items() if k not in do}
        if not adjust:
            return self.query(variables, evidence=e_nd, do=do)
        weights = self.query(adjust, evidence=evidence)
        result = np.zeros([self.card(v) for v in variables])
        for combo in itertools.product(*(range(self.card(a)) for a in adjust)):
            w = weights[combo]
            if w == 0:
                continue
            ev = {**e_nd, **{a: self.label(a, c) for a, c in zip(adjust, combo)}}
            result += w * self.query(variables, evidence=ev, do=do)
        return result

    def joint_table(self, max_cells: int = 10_000_000) -> np.ndarray:
        """The full joint distribution, one axis per node in :attr:`nodes` order.

        Only for small models (a brute-force reference for tests and small exact computations).
        """
        cells = int(np.prod([self.card(n) for n in self.nodes], dtype=np.float64))
        if cells > max_cells:
            raise ValueError(f"{self.name}: the joint table would have {cells} cells (> max_cells={max_cells})")
        operands: list[Any] = []
        for node in self.nodes:
            mech = self.mechanisms[node]
            operands += [mech.table, [self._column[p] for p in mech.parents] + [self._column[node]]]
        joint = np.einsum(*operands, list(range(len(self.nodes))))
        return joint


def bundled_network(name: str) -> DiscreteSCM:
    """A bnlearn network shipped inside the installed pgmpy wheel (``hepar2``, ``asia``, ...).

    Reads ``pgmpy/utils/example_models/<name>.bif.gz`` from the installed package, never the
    network: pgmpy's hub loaders are not used.
    """
    folder = importlib.resources.files("pgmpy") / "utils" / "example_models"
    path = folder / f"{name}.bif.gz"
    if not path.is_file():
        names = sorted(p.name[: -len(".bif.gz")] for p in folder.iterdir() if p.name.endswith(".bif.gz"))
        raise FileNotFoundError(f"no bundled network {name!r} in pgmpy; available: {', '.join(names)}")
    text = gzip.decompress(path.read_bytes()).decode("utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BIFReader(string=text).get_model()
    return DiscreteSCM.from_pgmpy(model, name=name)
