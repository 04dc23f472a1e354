"""Soft interventions as arms, what one pull observes, exact ground truth and the divergences.

The setting (Gao and Feng 2021, §3): a Markovian causal model with a binary root ``S`` (the
sensitive attribute), a node ``V`` whose mechanism ``P(V | pa(V))`` is replaced by arm ``k``'s
table ``P_k(V | pa(V))`` (a soft intervention), and an outcome ``Y`` with values in ``[0, 1]``.
A pull of arm ``k`` is one of three kinds (:data:`POOLS`): ``S`` drawn naturally, or ``S`` set to
``s`` or to ``s'``. It reveals the observed nodes ``pa(V)``, ``V``, the used children of ``S`` with
their other parents, and ``Y``.

Every estimator of the paper is a sum over samples of a function of these observed values only, so
a sample is summarised by its **cell**: the joint configuration of the observed nodes. A problem is
then fully described by

- ``cell_probs[pool, k, c]``: the exact probability of cell ``c`` for a pull of arm ``k`` of kind
  ``pool`` (computed from the model, never by simulation);
- ``arm_prob[k, c] = P_k(v_c | pa_c)``, hence the importance ratios ``P_k / P_j`` at each cell;
- ``rho[c] = P_s / P_{s'}``: the product over the used children ``X`` of ``S`` of
  ``P(x_c | pa(X)_c \\ S, S=s) / P(x_c | pa(X)_c \\ S, S=s')`` (the counterfactual ratio of Eq. 1);
- ``cell_y[c]``: the outcome value of the cell.

Ground truth (means ``μ_k = E_k[Y]`` and fairness gaps ``ζ_k``) and the divergences ``M_kj`` and
``D_kj`` (§4) are exact sums over cells; the divergences are computed as log-sum-exp so that
importance ratios of several hundred do not overflow.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Hashable, Mapping, Sequence

import networkx as nx
import numpy as np
from scipy.special import logsumexp

from ..core.scm import DiscreteSCM

__all__ = [
    "POOLS",
    "NATURAL",
    "FORCED_S",
    "FORCED_S_PRIME",
    "ProblemError",
    "FairArmsProblem",
    "outcome_divergence",
    "fairness_divergence",
    "ObservationModel",
    "observation_model",
    "observed_joint",
    "problem_from_scm",
    "cheap_arm_costs",
]

#: The three kinds of pull, in the order used by every ``(3, K, ...)`` array: ``S`` drawn from its
#: natural distribution (for ``Ŷ``), ``S`` set to ``s`` (for ``ζ̂^{s',s}``), ``S`` set to ``s'``
#: (for ``ζ̂^{s,s'}``). The allocation fractions ``ν_Y, ν_s, ν_{s'}`` follow the same order.
POOLS = ("natural", "s", "s_prime")
NATURAL, FORCED_S, FORCED_S_PRIME = 0, 1, 2


class ProblemError(ValueError):
    """A problem's tables or roles violate the paper's assumptions."""


def outcome_divergence(probs: np.ndarray, ratios: np.ndarray) -> np.ndarray:
    """``M = log E_{P_k}[exp(P_k / P_j)]`` computed as a log-sum-exp.

    The paper defines ``M_kj = 1 + log(1 + D_{f1}(P_k || P_j))`` with ``f1(x) = x e^{x-1} - 1``
    (§4, Def. 2); since ``E_k[e^{P_k/P_j}] = e (1 + D_{f1})`` (Eq. 20) this is the expression above.

    Parameters
    ----------
    probs : ndarray, shape (..., C)
        Probability of each cell under arm ``k`` (natural pulls); only the marginal over
        ``(pa(V), V)`` matters.
    ratios : ndarray, shape (..., C)
        ``P_k(v_c | pa_c) / P_j(v_c | pa_c)`` at each cell (broadcast against ``probs``).

    Returns
    -------
    ndarray, shape (...)
        ``M_kj >= 1``, with equality iff ``P_k = P_j`` wherever ``probs > 0``.
    """
    probs, ratios = np.broadcast_arrays(np.asarray(probs, float), np.asarray(ratios, float))
    return logsumexp(ratios, b=probs, axis=-1)


def fairness_divergence(probs_s: np.ndarray, probs_sp: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``D = log(E_{k,s}[e^{|w|}] + E_{k,s'}[e^{|w|}])`` with ``w = (P_k/P_j)(P_s/P_{s'} - 1)`` (§4).

    Parameters
    ----------
    probs_s, probs_sp : ndarray, shape (..., C)
        Cell probabilities of arm ``k`` with ``S`` set to ``s`` and to ``s'``.
    weights : ndarray, shape (..., C)
        The counterfactual importance weight ``w`` at each cell.

    Returns
    -------
    ndarray, shape (...)
        ``D >= log 2``; unlike ``M`` it can be below 1 (notes, ambiguity A6).
    """
    ps, psp, w = np.broadcast_arrays(
        np.asarray(probs_s, float), np.asarray(probs_sp, float), np.abs(np.asarray(weights, float))
    )
    return logsumexp(np.concatenate([w, w], axis=-1), b=np.concatenate([ps, psp], axis=-1), axis=-1)


def cheap_arm_costs(n_arms: int, cheap_arm: int | None = 0) -> np.ndarray:
    """Per-sample costs ``(c, a, b)`` of shape ``(3, K)``: 0 for every kind of pull of the cheap
    (already deployed) arm, 1 otherwise (the paper's §5 setting; with the average-cost budget
    ``B = 1/√T`` at most about ``√T`` samples go to the other arms)."""
    costs = np.ones((3, int(n_arms)))
    if cheap_arm is not None:
        if not 0 <= cheap_arm < n_arms:
            raise ValueError(f"cheap_arm={cheap_arm} must be an arm index in 0..{n_arms - 1}")
        costs[:, cheap_arm] = 0.0
    return costs


class FairArmsProblem:
    """A best-fair-arm identification problem, summarised by its sample cells.

    Parameters
    ----------
    cell_probs : ndarray, shape (3, K, C)
        ``cell_probs[pool, k, c]``: probability of cell ``c`` for a pull of arm ``k`` of kind
        ``POOLS[pool]``. Each ``(pool, k)`` row sums to 1.
    arm_prob : ndarray, shape (K, C)
        ``P_k(v_c | pa(V)_c)``, arm ``k``'s probability of the cell's ``V`` given its ``pa(V)``.
    rho : ndarray, shape (C,)
        ``P_s / P_{s'}`` at each cell (product over the used children of ``S``).
    cell_y : ndarray, shape (C,)
        Outcome value of each cell, in ``[0, 1]``.
    costs : ndarray, shape (3, K), optional
        Per-sample cost of each kind of pull of each arm (default: arm 0 free, others 1).
    name : str
    arm_names : sequence of str, optional
    sensitive_labels : (s, s')
        Labels of the two values of ``S``, for display.
    observed : sequence of str, optional
        Names of the observed nodes that make up a cell (for display).
    cell_codes : int ndarray, shape (C, len(observed)), optional
        State codes of the observed nodes in each cell.

    Raises
    ------
    ProblemError
        If shapes disagree, a row is not a distribution, ``Y`` leaves ``[0, 1]``, ``rho`` is not
        positive and finite where a cell can occur, or two arms do not share their support (the
        paper's absolute-continuity assumption, needed for finite importance ratios).
    """

    def __init__(
        self,
        cell_probs: np.ndarray,
        arm_prob: np.ndarray,
        rho: np.ndarray,
        cell_y: np.ndarray,
        costs: np.ndarray | None = None,
        name: str = "problem",
        arm_names: Sequence[str] | None = None,
        sensitive_labels: tuple[Hashable, Hashable] = ("s", "s'"),
        observed: Sequence[str] = (),
        cell_codes: np.ndarray | None = None,
    ):
        self.name = name
        cp = np.asarray(cell_probs, dtype=float)
        if cp.ndim != 3 or cp.shape[0] != 3:
            raise ProblemError(f"{name}: cell_probs has shape {cp.shape}; expected (3, K, C) for the pools {POOLS}")
        _, K, C = cp.shape
        if K < 2:
            raise ProblemError(f"{name}: {K} arm(s); identification needs at least 2")
        if np.any(cp < 0) or not np.allclose(cp.sum(-1), 1.0, atol=1e-9):
            raise ProblemError(f"{name}: every cell_probs[pool, k] must be a probability vector over the {C} cells")
        ap = np.asarray(arm_prob, dtype=float)
        if ap.shape != (K, C):
            raise ProblemError(f"{name}: arm_prob has shape {ap.shape}; expected (K, C) = {(K, C)}")
        reach = cp.sum((0, 1)) > 0  # cells some pull can produce
        bad = reach[None, :] & (ap <= 0)
        if bad.any():
            k, c = (int(i) for i in np.argwhere(bad)[0])
            raise ProblemError(
                f"{name}: arm {k} gives probability {ap[k, c]} to the V of cell {c}, which other arms reach; the arms must share "
                "their support (absolute continuity), or importance ratios are infinite"
            )
        r = np.asarray(rho, dtype=float)
        y = np.asarray(cell_y, dtype=float)
        if r.shape != (C,) or y.shape != (C,):
            raise ProblemError(f"{name}: rho and cell_y must have shape (C,) = ({C},); got {r.shape} and {y.shape}")
        if np.any(~np.isfinite(r[reach]) | (r[reach] <= 0)):
            raise ProblemError(
                f"{name}: P_s/P_s' must be positive and finite on every reachable cell (the children of S need a common support)"
            )
        if np.any((y < 0) | (y > 1)):
            raise ProblemError(
                f"{name}: outcome values must lie in [0, 1] (the paper's bounds assume it); got range [{y.min()}, {y.max()}]"
            )
        costs = cheap_arm_costs(K, 0) if costs is None else np.asarray(costs, dtype=float)
        if costs.shape == (K,):
            costs = np.tile(costs, (3, 1))
        if costs.shape != (3, K) or np.any(costs < 0):
            raise ProblemError(
                f"{name}: costs must be non-negative with shape (3, K) = {(3, K)} or (K,); got {costs.shape}"
            )
        self.cell_probs = cp
        self.arm_prob = ap
        self.rho = np.where(reach, r, 1.0)
        self.cell_y = y
        self.costs = costs
        self.n_arms = K
        self.n_cells = C
        self.arm_names = tuple(arm_names) if arm_names is not None else tuple(f"arm {k}" for k in range(K))
        if len(self.arm_names) != K:
            raise ProblemError(f"{name}: {len(self.arm_names)} arm names for {K} arms")
        self.sensitive_labels = tuple(sensitive_labels)
        self.observed = tuple(observed)
        self.cell_codes = None if cell_codes is None else np.asarray(cell_codes, dtype=np.int64)
        for a in (self.cell_probs, self.arm_prob, self.rho, self.cell_y, self.costs):
            a.setflags(write=False)

    def __repr__(self) -> str:
        return f"FairArmsProblem({self.name!r}, K={self.n_arms}, cells={self.n_cells})"

    # ------------------------------------------------------------------ importance ratios
    @cached_property
    def ratios(self) -> np.ndarray:
        """``P_k / P_j`` at every cell, shape ``(K, K, C)`` (1 where neither arm reaches the cell)."""
        num, den = self.arm_prob[:, None, :], self.arm_prob[None, :, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(den > 0, num / np.where(den > 0, den, 1.0), 1.0)
        out.setflags(write=False)
        return out

    @cached_property
    def rho_reverse(self) -> np.ndarray:
        """``P_{s'} / P_s`` at every cell, shape ``(C,)``."""
        return 1.0 / self.rho

    # ------------------------------------------------------------------ ground truth
    @cached_property
    def mu(self) -> np.ndarray:
        """``μ_k = E_k[Y]`` with ``S`` natural, shape ``(K,)``."""
        return self.cell_probs[NATURAL] @ self.cell_y

    @cached_property
    def conditional_means(self) -> np.ndarray:
        """``E_k[Y | do(S=s)]`` and ``E_k[Y | do(S=s')]``, shape ``(2, K)``."""
        return self.cell_probs[1:] @ self.cell_y

    @cached_property
    def zeta(self) -> np.ndarray:
        """``ζ_k^{s,s'} = E[Y_{S←s} | S=s'] − E[Y | S=s']`` under arm ``k``, shape ``(K,)``.

        ``S`` is a root of a Markovian model, so the counterfactual mean equals ``E_k[Y | S=s]``
        and ``ζ^{s,s'} = E_k[Y | s] − E_k[Y | s']`` (notes §2.3, item 8).
        """
        es, esp = self.conditional_means
        return es - esp

    @cached_property
    def zeta_reverse(self) -> np.ndarray:
        """``ζ_k^{s',s} = E[Y_{S←s'} | S=s] − E[Y | S=s]``, shape ``(K,)`` (equal to ``−ζ^{s,s'}``)."""
        es, esp = self.conditional_means
        return esp - es

    def fair(self, tolerance: float) -> np.ndarray:
        """Which arms are ``tolerance``-fair (Def. 1: both ``|ζ| < 𝓔``), shape ``(K,)`` bool."""
        if not tolerance > 0:
            raise ValueError(f"tolerance={tolerance!r} must be positive")
        return (np.abs(self.zeta) < tolerance) & (np.abs(self.zeta_reverse) < tolerance)

    def best_fair_arm(self, tolerance: float) -> int:
        """Index of the fair arm with the largest ``μ`` (``-1`` if no arm is fair).

        Raises
        ------
        ProblemError
            If two fair arms tie for the best mean (the paper assumes a unique ``k*``).
        """
        fair = self.fair(tolerance)
        if not fair.any():
            return -1
        masked = np.where(fair, self.mu, -np.inf)
        best = int(np.argmax(masked))
        if np.sum(masked == masked[best]) > 1:
            raise ProblemError(f"{self.name}: several fair arms share the best mean {masked[best]}; k* must be unique")
        return best

    def gaps(self, tolerance: float) -> dict[str, float]:
        """The instance's difficulty: smallest outcome gap of a fair arm to ``k*`` and smallest
        distance ``||ζ_k| − 𝓔|`` over all arms (the paper's "minimum gaps", §5)."""
        k = self.best_fair_arm(tolerance)
        fair = self.fair(tolerance)
        others = fair.copy()
        if k >= 0:
            others[k] = False
        out = {
            "outcome_gap": float(self.mu[k] - self.mu[others].max()) if k >= 0 and others.any() else float("nan"),
            "fairness_gap": float(np.min(np.abs(np.abs(np.concatenate([self.zeta, self.zeta_reverse])) - tolerance))),
        }
        return out

    # ------------------------------------------------------------------ divergences
    @cached_property
    def M(self) -> np.ndarray:
        """Outcome divergences ``M_kj = log E_k[exp(P_k/P_j)]``, shape ``(K, K)``; ``M_kk = 1``."""
        return outcome_divergence(self.cell_probs[NATURAL][:, None, :], self.ratios)

    def _weights(self, rho: np.ndarray) -> np.ndarray:
        return self.ratios * (rho - 1.0)

    @cached_property
    def D(self) -> np.ndarray:
        """Fairness divergences ``D_kj^{s,s'}`` (for ``ζ̂^{s,s'}``, estimated from ``S=s'`` pulls),
        shape ``(K, K)``."""
        ps, psp = self.cell_probs[FORCED_S][:, None, :], self.cell_probs[FORCED_S_PRIME][:, None, :]
        return fairness_divergence(ps, psp, self._weights(self.rho))

    @cached_property
    def D_reverse(self) -> np.ndarray:
        """Fairness divergences ``D_kj^{s',s}`` (for ``ζ̂^{s',s}``, estimated from ``S=s`` pulls)."""
        ps, psp = self.cell_probs[FORCED_S][:, None, :], self.cell_probs[FORCED_S_PRIME][:, None, :]
        return fairness_divergence(psp, ps, self._weights(self.rho_reverse))

    @cached_property
    def allocation_matrices(self) -> np.ndarray:
        """The LP matrices of ALLOCATE, shape ``(3, K, K)``, one per kind of pull in :data:`POOLS`
        order: ``1/M`` (multiplies ``ν_Y``), ``1/D^{s',s}`` (``ν_s``, whose samples estimate
        ``ζ̂^{s',s}``) and ``1/D^{s,s'}`` (``ν_{s'}``). The reciprocal and this pairing follow from
        ``Z_k = Σ_j τ_j / M_kj`` and ``O_k^{s,s'} = Σ_j τ_{j,s'} / D_kj^{s,s'}`` (notes, A7)."""
        out = np.stack([1.0 / self.M, 1.0 / self.D_reverse, 1.0 / self.D])
        out.setflags(write=False)
        return out

    # ------------------------------------------------------------------ display helpers
    def summary(self, tolerance: float) -> dict[str, Any]:
        """Exact facts of the instance at fairness tolerance ``tolerance``."""
        k = self.best_fair_arm(tolerance)
        fair = self.fair(tolerance)
        off = ~np.eye(self.n_arms, dtype=bool)
        return {
            "n_arms": self.n_arms,
            "n_feasible": int(fair.sum()),
            "best_fair_arm": k,
            "best_mean": float(self.mu[k]) if k >= 0 else float("nan"),
            "best_unconstrained_arm": int(np.argmax(self.mu)),
            **self.gaps(tolerance),
            "M_range": [float(self.M[off].min()), float(self.M[off].max())],
            "D_range": [
                float(min(self.D[off].min(), self.D_reverse[off].min())),
                float(max(self.D[off].max(), self.D_reverse[off].max())),
            ],
        }


# ---------------------------------------------------------------------------- from a causal model
def _dedupe(names: Sequence[str]) -> list[str]:
    out: list[str] = []
    for n in names:
        if n not in out:
            out.append(n)
    return out


class ObservationModel:
    """What pulls of any arm can show, computed once from a causal model by exact inference.

    One exact query per kind of pull gives ``base[pool, c]``, the joint of the observed nodes with
    ``V``'s mechanism set to uniform. Because ``pa(V)`` and ``V`` are observed, the cell
    probabilities of an arm ``P_k(V | pa(V))`` are ``base · P_k(v_c | pa_c) · |V|`` (truncated
    factorisation), so any table can be evaluated without further inference.

    Build it with :func:`observation_model`.
    """

    def __init__(
        self,
        name,
        observed,
        codes,
        base,
        rho,
        cell_y,
        pa_index,
        v_index,
        pa_cards,
        card_v,
        sensitive_labels,
        intervened,
    ):
        self.name = name
        self.observed = tuple(observed)
        self.codes = codes
        self.base = base
        self.rho = rho
        self.cell_y = cell_y
        self.pa_index = pa_index
        self.v_index = v_index
        self.pa_cards = tuple(pa_cards)
        self.card_v = int(card_v)
        self.sensitive_labels = tuple(sensitive_labels)
        self.intervened = intervened

    def _tables(self, arm_tables: np.ndarray) -> np.ndarray:
        tables = np.asarray(arm_tables, dtype=float)
        want = self.pa_cards + (self.card_v,)
        if tables.ndim != len(want) + 1 or tables.shape[1:] != want:
            raise ProblemError(
                f"arm_tables has shape {tables.shape}; expected (K, {', '.join(map(str, want))}) for P_k({self.intervened} | parents)"
            )
        if np.any(tables < 0) or not np.allclose(tables.sum(-1), 1.0, atol=1e-9):
            raise ProblemError("every row of every arm table must be a probability vector")
        return tables

    def arm_prob(self, arm_tables: np.ndarray) -> np.ndarray:
        """``P_k(v_c | pa_c)`` for every arm and cell, shape ``(K, C)``."""
        tables = self._tables(arm_tables)
        return tables[(slice(None),) + self.pa_index + (self.v_index,)]

    def cell_probs(self, arm_tables: np.ndarray) -> np.ndarray:
        """Cell probabilities of each kind of pull of each arm, shape ``(3, K, C)``."""
        probs = self.base[:, None, :] * self.arm_prob(arm_tables)[None, :, :] * self.card_v
        return probs / probs.sum(-1, keepdims=True)  # removes the inference's round-off (~1e-16)

    def means(self, arm_tables: np.ndarray) -> np.ndarray:
        """``E_k[Y]`` with ``S`` natural, set to ``s`` and set to ``s'``, shape ``(3, K)``; valid for
        any tables, including deterministic ones."""
        return self.cell_probs(arm_tables) @ self.cell_y

    def problem(
        self,
        arm_tables: np.ndarray,
        costs: np.ndarray | None = None,
        arm_names: Sequence[str] | None = None,
        name: str | None = None,
    ) -> FairArmsProblem:
        """The :class:`FairArmsProblem` of these arms."""
        return FairArmsProblem(
            self.cell_probs(arm_tables),
            self.arm_prob(arm_tables),
            self.rho,
            self.cell_y,
            costs=costs,
            name=name or self.name,
            arm_names=arm_names,
            sensitive_labels=self.sensitive_labels,
            observed=self.observed,
            cell_codes=self.codes,
        )


def _point_mass(model: DiscreteSCM, node: str, label: Hashable) -> np.ndarray:
    table = np.zeros(model.card(node))
    table[model.code(node, label)] = 1.0
    return table


def observed_joint(
    model: DiscreteSCM, observed: Sequence[str], replace: Mapping[str, tuple] | None = None
) -> np.ndarray:
    """Exact joint distribution of ``observed`` after replacing some mechanisms, by variable
    elimination in a fixed order.

    pgmpy's inference gives the same numbers up to the last bits, but in an order that depends on
    Python's string hashing, so two executions of a notebook could differ in the 16th digit; this
    routine eliminates the non-observed ancestors in reverse topological order and multiplies
    factors with ``numpy.einsum`` in list order, so its result is the same in every process.

    Parameters
    ----------
    model : DiscreteSCM
    observed : sequence of str
        The nodes of the joint, in the order of the returned axes.
    replace : mapping of node to (parents, table)
        Mechanisms to use instead of the model's (a point mass with no parents is ``do``).

    Returns
    -------
    ndarray with one axis per observed node.
    """
    replace = dict(replace or {})
    mech = {
        n: (tuple(replace[n][0]), np.asarray(replace[n][1], dtype=float))
        if n in replace
        else (model.parents(n), model.mechanisms[n].table)
        for n in model.nodes
    }
    needed = set(observed)
    frontier = list(observed)
    while frontier:
        for p in mech[frontier.pop()][0]:
            if p not in needed:
                needed.add(p)
                frontier.append(p)
    order = [n for n in model.nodes if n in needed]  # topological
    factors: list[tuple[tuple[str, ...], np.ndarray]] = [(mech[n][0] + (n,), mech[n][1]) for n in order]
    rank = {n: i for i, n in enumerate(order)}

    def contract(parts, keep):
        labels = {n: i for i, n in enumerate(sorted({v for axes, _ in parts for v in axes} | set(keep), key=rank.get))}
        args: list = []
        for axes, table in parts:
            args += [table, [labels[v] for v in axes]]
        return np.einsum(*args, [labels[v] for v in keep], optimize=False)

    for x in reversed(order):
        if x in observed:
            continue
        touching = [f for f in factors if x in f[0]]
        factors = [f for f in factors if x not in f[0]]
        keep = tuple(sorted({v for axes, _ in touching for v in axes} - {x}, key=rank.get))
        factors.append((keep, contract(touching, keep)))
    return contract(factors, tuple(observed))


def observation_model(
    model: DiscreteSCM,
    sensitive: str,
    intervened: str,
    outcome: str,
    outcome_values: Sequence[float] | Mapping[Hashable, float] | None = None,
    sensitive_values: tuple[Hashable, Hashable] | None = None,
    sensitive_children: Sequence[str] | None = None,
    name: str | None = None,
) -> ObservationModel:
    """The :class:`ObservationModel` of a discrete causal model with the paper's roles.

    Parameters
    ----------
    model : DiscreteSCM
    sensitive : str
        ``S``: a root; ``sensitive_values`` (default: its first two states) are ``s`` and ``s'``.
    intervened : str
        ``V``: the node whose mechanism the arms replace; ``S`` must not be one of its parents.
    outcome : str
        ``Y``.
    outcome_values : sequence or mapping, optional
        The number in ``[0, 1]`` of each state of ``Y`` (default: the state labels).
    sensitive_children : sequence of str, optional
        The children of ``S`` whose conditionals are reweighted (``ch(S)`` in Eq. 1). Default: the
        children of ``S`` that are ancestors of ``Y`` (or ``Y`` itself); any other child may be
        added but none of those may be left out, or the counterfactual estimator is biased.

    Raises
    ------
    ProblemError
        Naming the role or node that violates an assumption.
    """
    name = name or f"{model.name}: σ({intervened}) → {outcome}, S = {sensitive}"
    for role, node in (("sensitive", sensitive), ("intervened", intervened), ("outcome", outcome)):
        if node not in model.states:
            raise ProblemError(f"{role} node {node!r} is not in {model.name}")
    if len({sensitive, intervened, outcome}) != 3:
        raise ProblemError(
            f"sensitive={sensitive!r}, intervened={intervened!r} and outcome={outcome!r} must be three different nodes"
        )
    if model.parents(sensitive):
        raise ProblemError(
            f"the sensitive attribute {sensitive!r} has parents {model.parents(sensitive)}; the paper assumes it is a root"
        )
    pa_v = list(model.parents(intervened))
    if sensitive in pa_v:
        raise ProblemError(
            f"{sensitive!r} is a parent of the intervened node {intervened!r}; the arms would change a mechanism that S enters"
        )
    s_vals = tuple(sensitive_values) if sensitive_values is not None else tuple(model.states[sensitive][:2])
    if len(s_vals) != 2 or s_vals[0] == s_vals[1]:
        raise ProblemError(f"sensitive_values={sensitive_values!r} must be two different states of {sensitive!r}")
    s_codes = [model.code(sensitive, v) for v in s_vals]
    children = sorted(model.graph.successors(sensitive))
    ancestors = nx.ancestors(model.graph, outcome) | {outcome}
    needed = [c for c in children if c in ancestors]
    ch = list(sensitive_children) if sensitive_children is not None else needed
    for c in ch:
        if c not in children:
            raise ProblemError(
                f"sensitive_children names {c!r}, which is not a child of {sensitive!r} (children: {children})"
            )
    missing = [c for c in needed if c not in ch]
    if missing:
        raise ProblemError(
            f"sensitive_children leaves out {missing}: children of {sensitive!r} that affect {outcome!r} must be reweighted"
        )
    observed = _dedupe(
        pa_v + [intervened] + [n for c in ch for n in (c, *model.parents(c)) if n != sensitive] + [outcome]
    )

    card_v = model.card(intervened)
    pa_cards = tuple(model.card(p) for p in pa_v)
    if outcome_values is None:
        yv = np.asarray(model.states[outcome], dtype=float)
    elif isinstance(outcome_values, Mapping):
        yv = np.array([float(outcome_values[s]) for s in model.states[outcome]])
    else:
        yv = np.asarray(outcome_values, dtype=float)
    if yv.shape != (model.card(outcome),):
        raise ProblemError(
            f"outcome_values must give one number per state of {outcome!r} ({model.card(outcome)} states)"
        )
    if np.any((yv < 0) | (yv > 1)):
        raise ProblemError(f"outcome_values {yv.tolist()} must lie in [0, 1]")

    uniform = np.full(pa_cards + (card_v,), 1.0 / card_v)
    base = np.stack(
        [
            observed_joint(model, observed, replace={intervened: (tuple(pa_v), uniform)}),
            observed_joint(
                model,
                observed,
                replace={intervened: (tuple(pa_v), uniform), sensitive: ((), _point_mass(model, sensitive, s_vals[0]))},
            ),
            observed_joint(
                model,
                observed,
                replace={intervened: (tuple(pa_v), uniform), sensitive: ((), _point_mass(model, sensitive, s_vals[1]))},
            ),
        ]
    ).reshape(3, -1)
    cards = [model.card(n) for n in observed]
    codes = np.array(np.unravel_index(np.arange(int(np.prod(cards))), cards)).T  # (C, n_obs)
    col = {n: i for i, n in enumerate(observed)}
    reach = base.sum(0) > 0
    rho = np.ones(codes.shape[0])
    for c in ch:
        table = model.mechanisms[c].table
        idx_s = tuple(np.full(len(codes), s_codes[0]) if p == sensitive else codes[:, col[p]] for p in model.parents(c))
        idx_sp = tuple(
            np.full(len(codes), s_codes[1]) if p == sensitive else codes[:, col[p]] for p in model.parents(c)
        )
        x = codes[:, col[c]]
        num, den = table[idx_s + (x,)], table[idx_sp + (x,)]
        if np.any(((den <= 0) | (num <= 0)) & reach):
            raise ProblemError(
                f"P({c} | ..., {sensitive}) is zero for one value of {sensitive} where the other is positive; P_s/P_s' is not finite"
            )
        rho *= np.where(reach, num / np.where(den > 0, den, 1.0), 1.0)
    return ObservationModel(
        name=name,
        observed=observed,
        codes=codes,
        base=base,
        rho=rho,
        cell_y=yv[codes[:, col[outcome]]],
        pa_index=tuple(codes[:, col[p]] for p in pa_v),
        v_index=codes[:, col[intervened]],
        pa_cards=pa_cards,
        card_v=card_v,
        sensitive_labels=s_vals,
        intervened=intervened,
    )


def problem_from_scm(
    model: DiscreteSCM,
    sensitive: str,
    intervened: str,
    outcome: str,
    arm_tables: np.ndarray,
    outcome_values: Sequence[float] | Mapping[Hashable, float] | None = None,
    sensitive_values: tuple[Hashable, Hashable] | None = None,
    sensitive_children: Sequence[str] | None = None,
    costs: np.ndarray | None = None,
    arm_names: Sequence[str] | None = None,
    name: str | None = None,
) -> FairArmsProblem:
    """A :class:`FairArmsProblem` for ``arm_tables`` (shape ``(K, *pa_cards(V), card(V))``) on a
    causal model: :func:`observation_model` followed by :meth:`ObservationModel.problem`."""
    obs = observation_model(
        model, sensitive, intervened, outcome, outcome_values, sensitive_values, sensitive_children, name
    )
    return obs.problem(arm_tables, costs=costs, arm_names=arm_names)
