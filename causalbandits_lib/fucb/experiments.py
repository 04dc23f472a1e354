"""The runs behind Figure 2b and Tables 1 and 2 of Huang, Zhang and Wu (AAAI 2022), kept out of
the notebooks so their cells stay short.

- :func:`email_setup`, :func:`adult_setup` (and :func:`adult_setup_from_users`): the
  environments, graphs, separators, decompositions and discrepancy estimators of the two
  experiments;
- :func:`make_policy`: UCB, C-UCB, D-UCB and the F-UCB variants by name;
- :func:`audited_run`: one algorithm with the unfair-decision auditor riding along (the counts of
  unfair decisions are :func:`~causalbandits_lib.fucb.auditing.unfair_counts`);
- :func:`offline_estimation_error`: how fast each decomposition learns the arm means from random
  play (notebook 1);
- :func:`paired_comparisons`: several "lower than" claims between runs on common random numbers,
  each judged on its paired differences (the claims of Figure 2b and Tables 1 and 2).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

import networkx as nx
import numpy as np

from ..core import checks
from ..core.runner import SimulationResult, simulate
from .algorithms import (
    BoundedDiscrepancy,
    DecomposedUCB,
    DecomposedUCBConfig,
    FairUCB,
    FairUCBConfig,
    IdentifiedDiscrepancy,
    linear_features,
)
from .auditing import Audited, FairnessAuditor
from .instances.adult_video import (
    REWARD as ADULT_REWARD,
)
from .instances.adult_video import (
    SENSITIVE as ADULT_SENSITIVE,
)
from .instances.adult_video import (
    USER_NODES,
    VIDEO_NODES,
    adult_video_env,
    adult_video_graph,
    fit_user_model,
    learn_user_graph,
    load_adult_users,
    sensitive_descendants,
    split_users,
)
from .instances.email_campaign import (
    ARM_NODES,
    CONTEXT_NODES,
    INTERMEDIATE_NODES,
    REWARD,
    SENSITIVE,
    email_campaign_env,
    email_graph,
)
from .model import CausalBanditEnv, CellDecomposition
from .separators import minimum_domain_separator

__all__ = [
    "FUCB_VARIANTS",
    "EmailSetup",
    "AdultSetup",
    "email_setup",
    "adult_setup",
    "adult_setup_from_users",
    "make_policy",
    "audited_run",
    "offline_estimation_error",
    "paired_comparisons",
    "tau_key",
    "markdown_table",
    "FALLBACK_RULES",
    "fallback_rules",
    "mean_se_text",
    "by_fallback",
    "random_chain_policy",
    "policy_value_two_ways",
]

#: F-UCB's moves when no arm is certified fair (the paper is silent): the arm of smallest
#: ``UCB_Δ`` (ours) and D-UCB's unconstrained choice; the notebooks run both side by side.
FALLBACK_RULES: tuple[str, ...] = ("min_ucb_delta", "unconstrained")

#: The F-UCB variants shown side by side: the algorithm as printed, and our two repairs.
FUCB_VARIANTS: dict[str, dict] = {
    "F-UCB": {"fair_radius": "paper"},
    "F-UCB-diff": {"fair_radius": "diff"},
    "F-UCB-diff-clip": {"fair_radius": "diff", "clip_radius": True},
}


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A Markdown table; floats are shown with one decimal, other values as they print."""

    def fmt(v):
        return f"{v:,.1f}" if isinstance(v, (float, np.floating)) else str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def fallback_rules(chosen: str) -> tuple[str, ...]:
    """The fallback rules to run, the ``chosen`` one (whose verdicts are recorded) first."""
    if chosen not in FALLBACK_RULES:
        raise ValueError(f"fallback={chosen!r} is not one of {FALLBACK_RULES}")
    return (chosen, *(r for r in FALLBACK_RULES if r != chosen))


def mean_se_text(samples, digits: int = 1) -> str:
    """``"566.0 ± 92.4"``: the mean over runs and its standard error, for a table cell."""
    mean, se = checks.mean_se(samples)
    return f"{mean:,.{digits}f} ± {se:,.{digits}f}"


def by_fallback(verdicts: Mapping[str, checks.Verdict], chosen: str) -> checks.Verdict:
    """The verdict under the ``chosen`` fallback rule, with how it moves under the others
    (:func:`~causalbandits_lib.core.checks.with_sensitivity`); ``verdicts`` maps every rule run
    to its verdict."""
    if chosen not in verdicts:
        raise ValueError(f"no verdict for the chosen fallback {chosen!r}; have {sorted(verdicts)}")
    others = {rule: v for rule, v in verdicts.items() if rule != chosen}
    return checks.with_sensitivity(verdicts[chosen], "fallback", chosen, others)


def tau_key(tau: float) -> str:
    """``tau_0.1`` for τ = 0.1 (the metric-key suffix)."""
    return f"tau_{float(tau):g}"


@dataclass
class EmailSetup:
    env: CausalBanditEnv
    graph: object
    separator: tuple[str, ...]
    separator_domain: int
    decompositions: dict[str, CellDecomposition]
    estimator: IdentifiedDiscrepancy


def email_setup(
    i3_values: int = 2, sigma: float = 0.1, context_marginals: Sequence[float] = (0.5, 0.5, 0.5)
) -> EmailSetup:
    """The Email Campaign bandit with its three decompositions: ``D-UCB`` on the minimum-domain
    separator found by :func:`minimum_domain_separator`, ``C-UCB`` on Pa(R) and ``UCB`` on the arms;
    and the identified discrepancy estimator (Eq. 9–10) on the separator."""
    env = email_campaign_env(i3_values, context_marginals, sigma)
    graph = email_graph(env.model)
    cards = {n: env.model.card(n) for n in env.model.states}
    w, dom = minimum_domain_separator(graph, REWARD, ARM_NODES, CONTEXT_NODES, INTERMEDIATE_NODES, cards)
    w = tuple(sorted(w))
    pa = tuple(sorted(graph.predecessors(REWARD)))
    decs = {
        "UCB": env.decomposition(ARM_NODES, "the arms"),
        "C-UCB": env.decomposition(pa, "Pa(R)"),
        "D-UCB": env.decomposition(w, "W"),
    }
    est = IdentifiedDiscrepancy(decs["D-UCB"], env.counterfactual_contexts(SENSITIVE))
    return EmailSetup(env, graph, w, dom, decs, est)


@dataclass
class AdultSetup:
    env: CausalBanditEnv
    user_graph: object
    graph: object
    separator: tuple[str, ...]
    separator_domain: int
    decomposition: CellDecomposition
    descendants: tuple[str, ...]
    estimators: dict[str, object]
    provenance: dict
    offline: np.ndarray
    online: np.ndarray
    features: np.ndarray = field(repr=False, default=None)
    groups: np.ndarray = field(repr=False, default=None)

    def estimator(self, which: str = "auto"):
        """``"auto"``: Theorem 2's bounds if a descendant of the sensitive feature is in **W** (the
        paper's own rule), else Eq. 9; or ``"bounds"`` / ``"identified"`` explicitly."""
        if which == "auto":
            which = "bounds" if set(self.descendants) & set(self.separator) else "identified"
        if which not in self.estimators:
            raise ValueError(f"cf_estimator={which!r} is not allowed; use 'auto', 'bounds' or 'identified'")
        return self.estimators[which]


def adult_setup(
    split_rng: np.random.Generator,
    stand_in_rng: np.random.Generator,
    n_users: int = 10000,
    age_threshold: float = 37.0,
    significance: float = 0.01,
    sigma: float = 0.1,
) -> AdultSetup:
    """Users, learned graph, fitted user model, bandit, separator and estimators of the Adult-Video
    experiment (see :mod:`causalbandits_lib.fucb.instances.adult_video` for every choice): the
    users of :func:`~causalbandits_lib.fucb.instances.adult_video.load_adult_users`, then
    :func:`adult_setup_from_users`."""
    users, prov = load_adult_users(age_threshold=age_threshold, stand_in_rng=stand_in_rng)
    return adult_setup_from_users(users, prov, split_rng, n_users, significance, sigma)


def adult_setup_from_users(
    users: np.ndarray,
    provenance: dict,
    split_rng: np.random.Generator,
    n_users: int = 10000,
    significance: float = 0.01,
    sigma: float = 0.1,
    user_graph: nx.DiGraph | Sequence[tuple[str, str]] | None = None,
) -> AdultSetup:
    """The Adult-Video experiment on given binarised ``users`` (columns
    :data:`~causalbandits_lib.fucb.instances.adult_video.USER_NODES`): ``n_users`` rows drawn with
    ``split_rng`` and split in half, the user graph learned on the offline half by PC at level
    ``significance`` (or ``user_graph``, a graph or a list of edges among the user features, as
    given: the search is skipped), the user model fitted on
    it, the bandit on the online half, the separator and both discrepancy estimators."""
    offline, online = split_users(users, n_users, split_rng)
    if user_graph is None:
        user_graph = learn_user_graph(offline, significance)
    else:
        edges = list(user_graph.edges()) if isinstance(user_graph, nx.DiGraph) else [tuple(e) for e in user_graph]
        user_graph = nx.DiGraph()
        user_graph.add_nodes_from(USER_NODES)
        user_graph.add_edges_from(edges)
        if set(user_graph.nodes) != set(USER_NODES) or not nx.is_directed_acyclic_graph(user_graph):
            raise ValueError(f"user_graph must be a DAG on the user features {USER_NODES}, got edges {edges}")
    model = fit_user_model(offline, user_graph)
    env = adult_video_env(online, model, sigma)
    graph = adult_video_graph(user_graph)
    w, dom = minimum_domain_separator(graph, ADULT_REWARD, VIDEO_NODES, USER_NODES, (), {n: 2 for n in graph.nodes})
    w = tuple(n for n in (*USER_NODES, *VIDEO_NODES) if n in w)
    dec = env.decomposition(w, "W")
    desc = tuple(n for n in USER_NODES if n in sensitive_descendants(user_graph))
    varied = [n for n in desc if n in w]
    estimators = {
        "identified": IdentifiedDiscrepancy(dec, env.counterfactual_contexts(ADULT_SENSITIVE)),
        "bounds": BoundedDiscrepancy(dec, env.varied_contexts(ADULT_SENSITIVE, varied)),
    }
    features = linear_features(env.context_codes, env.arm_codes)
    groups = env.context_codes[:, USER_NODES.index(ADULT_SENSITIVE)]
    return AdultSetup(
        env, user_graph, graph, w, dom, dec, desc, estimators, provenance, offline, online, features, groups
    )


def make_policy(
    name: str,
    dec: CellDecomposition,
    estimator=None,
    tau: float | None = None,
    delta_power: float = 2.0,
    unseen_mean: float = 0.0,
    tie_break: str = "first",
    alpha_r: float = 1.0,
    alpha_c: float = 1.0,
    fallback: str = "min_ucb_delta",
    label: str | None = None,
    **variant,
):
    """A policy by name: ``"UCB"``, ``"C-UCB"``, ``"D-UCB"`` (a :class:`DecomposedUCB` on ``dec``) or
    an F-UCB variant of :data:`FUCB_VARIANTS` (needs ``estimator`` and ``tau``; ``variant`` keywords
    override the variant's). ``label`` names the policy (default: ``name``)."""
    common = dict(delta_power=delta_power, unseen_mean=unseen_mean, tie_break=tie_break)
    if name in ("UCB", "C-UCB", "D-UCB"):
        return DecomposedUCB(dec, DecomposedUCBConfig(**common), name=label or name)
    if name not in FUCB_VARIANTS:
        raise ValueError(f"unknown algorithm {name!r}; known are UCB, C-UCB, D-UCB and {sorted(FUCB_VARIANTS)}")
    if estimator is None or tau is None:
        raise ValueError(f"{name} needs a discrepancy estimator and a threshold tau")
    kw = {**FUCB_VARIANTS[name], **variant}
    config = FairUCBConfig(tau=tau, alpha_r=alpha_r, alpha_c=alpha_c, fallback=fallback, **common, **kw)
    return FairUCB(dec, estimator, config, name=label or name)


def audited_run(
    env, policy, estimator, T: int, seed: int, n_runs: int, delta_power: float = 2.0, unseen_mean: float = 0.0
) -> SimulationResult:
    """Simulate ``policy`` with a :class:`FairnessAuditor` built on ``estimator``.

    Per-round metrics kept: ``regret``, ``discrepancy`` (the true Δ of the chosen arm),
    ``audit_delta_hat``, ``audit_radius_paper``, ``audit_radius_diff``, and for F-UCB ``fallback`` and
    ``fair_set_size``.
    """
    metrics = ["regret", "discrepancy", "audit_delta_hat", "audit_radius_paper", "audit_radius_diff"]
    if isinstance(policy, FairUCB):
        metrics += ["fallback", "fair_set_size", "own_ucb_delta"]
    auditor = FairnessAuditor(estimator, delta_power=delta_power, unseen_mean=unseen_mean)
    return simulate(env, Audited(policy, auditor), T, seed, n_runs=n_runs, metrics=metrics)


def random_chain_policy(
    env: CausalBanditEnv, rng: np.random.Generator
) -> dict[str, tuple[tuple[str, ...], np.ndarray]]:
    """A random stochastic policy ``π(a | x)`` over the joint arm, as soft interventions on the arm
    nodes in chain form: ``π(a_1 | x) π(a_2 | x, a_1) ...``, every row drawn from a flat Dirichlet."""
    out = {}
    for i, node in enumerate(env.arm_nodes):
        parents = (*env.context_nodes, *env.arm_nodes[:i])
        shape = tuple(env.model.card(p) for p in parents)
        out[node] = (parents, rng.dirichlet(np.ones(env.model.card(node)), size=shape))
    return out


def policy_value_two_ways(env: CausalBanditEnv, policy: Mapping[str, tuple]) -> tuple[np.ndarray, np.ndarray]:
    """The expected reward of a stochastic ``policy`` (soft interventions on the arm nodes, as
    :func:`random_chain_policy` gives) for every context, computed two ways: by Eq. 1, the mixture
    ``Σ_a π(a | x) μ(x, a)`` of the exact arm means, and from the model after the soft interventions
    (pgmpy variable elimination). Returns ``(mixture, soft)``, each of shape ``(n_contexts,)``.

    Derived in notebooks/fucb/01_dseparation_estimator.md, section 'Policies as soft interventions' (equation
    ``fucb-eq1-policy-value``).
    """
    probs = np.ones((env.n_contexts, env.n_arms))
    for i, node in enumerate(env.arm_nodes):
        parents, table = policy[node]
        if tuple(parents) != (*env.context_nodes, *env.arm_nodes[:i]):
            raise ValueError(
                f"the policy's table of {node!r} must have the parents {(*env.context_nodes, *env.arm_nodes[:i])}"
            )
        idx = [env.context_codes[:, None, j] for j in range(len(env.context_nodes))]
        idx += [env.arm_codes[None, :, j] for j in range(i + 1)]
        probs = probs * np.asarray(table)[tuple(idx)]
    mixture = (probs * env.means).sum(axis=1)
    soft = np.full(env.n_contexts, float(env.offset))
    for c, codes in enumerate(env.context_codes):
        evidence = {n: env.model.label(n, int(v)) for n, v in zip(env.context_nodes, codes)}
        for node, w in env.reward_weights.items():
            soft[c] += w * env.model.expectation(node, evidence=evidence, soft=dict(policy))
    return mixture, soft


def offline_estimation_error(
    env: CausalBanditEnv,
    decompositions: Mapping[str, CellDecomposition],
    checkpoints: Sequence[int],
    n_repeats: int,
    rng: np.random.Generator,
    unseen_mean: float = 0.0,
) -> dict[str, np.ndarray]:
    """How well each decomposition knows the arm means after ``n`` rounds of uniformly random play.

    For each ``n`` in ``checkpoints`` and each data set: the root-mean-square error of the estimated
    arm means ``Σ_k P(k | x, a) μ̂_k`` against the exact ``μ(x, a)``, and the mean confidence width
    ``Σ_k P(k | x, a) sqrt(2 log(1/δ) / max(1, N_k))`` with ``δ = 1/n²`` (the part of ``UCB_a`` that
    exploration must shrink, Eq. 5–6). Both are averaged over contexts (weighted by their
    probability) and arms (uniformly).

    Returns
    -------
    dict of name to ``{"rmse": array, "width": array}``, each of shape ``(len(checkpoints), n_repeats)``.
    """
    checkpoints = np.asarray(sorted(int(n) for n in checkpoints))
    if checkpoints[0] < 1:
        raise ValueError("checkpoints must be positive numbers of rounds")
    n_max = int(checkpoints[-1])
    size = n_repeats * n_max
    cdf = np.cumsum(env.context_probs)
    cdf[-1] = 1.0
    contexts = np.searchsorted(cdf, rng.random(size), side="right")
    arms = rng.integers(0, env.n_arms, size)
    codes = env.sample_nodes(rng.random((size, len(env.model.nodes))), contexts, arms)
    reward = np.full(size, float(env.offset))
    for node, w in env.reward_weights.items():
        reward += w * np.asarray(env.model.states[node], dtype=float)[codes[node]]
    reward += env.sigma * rng.standard_normal(size)
    codes["reward"] = reward
    weight = env.context_probs[:, None] / env.n_arms
    out = {}
    for name, dec in decompositions.items():
        cells = dec.realized_cells(codes).reshape(n_repeats, n_max)
        r = reward.reshape(n_repeats, n_max)
        offset = (np.arange(n_repeats) * dec.n_cells)[:, None]
        errs = np.empty((len(checkpoints), n_repeats))
        widths = np.empty((len(checkpoints), n_repeats))
        for i, n in enumerate(checkpoints):
            flat = (cells[:, :n] + offset).ravel()
            cnt = np.bincount(flat, minlength=n_repeats * dec.n_cells).reshape(n_repeats, dec.n_cells)
            tot = np.bincount(flat, weights=r[:, :n].ravel(), minlength=n_repeats * dec.n_cells).reshape(
                n_repeats, dec.n_cells
            )
            mu_w = np.where(cnt > 0, tot / np.maximum(cnt, 1), unseen_mean)
            est = np.einsum("cak,rk->rca", dec.probs, mu_w)
            errs[i] = np.sqrt((weight * (est - env.means) ** 2).sum(axis=(1, 2)))
            rad = np.sqrt(2.0 * 2.0 * np.log(n) / np.maximum(cnt, 1))
            widths[i] = (weight * np.einsum("cak,rk->rca", dec.probs, rad)).sum(axis=(1, 2))
        out[name] = {"rmse": errs, "width": widths}
    return out


def paired_comparisons(values: Mapping[str, np.ndarray], pairs: Sequence[tuple[str, str]]) -> checks.Verdict:
    """Several claims ``low < high`` about per-run values that share their random numbers (run ``i``
    of every algorithm and threshold faces the same users and noise): each pair by
    :func:`~causalbandits_lib.core.checks.check_paired_lower` (it holds when the mean of
    ``high - low`` exceeds ``checks.Z`` standard errors; values equal in every run fail it), the pairs
    together by :func:`~causalbandits_lib.core.checks.check_parts`."""
    if not pairs:
        raise ValueError("paired_comparisons needs at least one pair")
    parts = {f"{lo} < {hi}": checks.check_paired_lower(values[lo], values[hi], (lo, hi)) for lo, hi in pairs}
    rule = (
        "; ".join(f"{lo} < {hi}" for lo, hi in pairs)
        + f", each by more than {checks.Z:g} standard errors of the paired differences"
    )
    return checks.check_parts(parts, rule)
