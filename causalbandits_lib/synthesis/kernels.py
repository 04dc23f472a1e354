"""Compiled fast paths of the chapter's adapters: the fucb and fairx chapters' own kernels, run on
the recommender.

No learner is compiled here. Each chapter's kernel is handed the recommender
(:class:`~.model.RecommenderEnv`) in the form it already knows, built from the recommender's exact
tables and drawing from the recommender's own named streams, so it reads the very numbers the
numpy path reads:

- the fucb kernel (:func:`causalbandits_lib.fucb.kernels.kernel_for`) gets a
  :class:`~causalbandits_lib.fucb.model.CausalBanditEnv` (:func:`causal_view`): context node ``O``,
  arm node ``I`` and one click node ``Y_k`` per item, whose table is ``Bernoulli(μ_k(o))`` when
  ``I = k`` and 0 otherwise, with the state "clicked" first. The model's inverse-CDF rule then clicks
  exactly when the uniform is below ``μ_k(o)``, the recommender's own rule, and the click node of
  item ``k`` reads the recommender's reward uniform of item ``k``
  (:class:`ItemColumns`). The reward ``Σ_k label(Y_k)`` is the click (every other term is 0, and
  the view's Gaussian noise has ``σ = 0``). The adapters' PCB clipping and the true-Δ reference reach the kernel
  through its ``algorithm`` and ``index_bounds`` keywords;
- the fairx kernel (:func:`causalbandits_lib.fairx.kernels.kernel_for`, or the inner policy's own
  ``compiled``) gets the core's
  :class:`~causalbandits_lib.core.environments.ContextualBernoulliBandit` on the same context
  probabilities and means (:func:`bandit_view`), which the context-free learners do not read the
  context of; :class:`~.algorithms.BoundedFairXUCB` hands its bounds to the kernel's
  ``box_bounds``.

A thin wrapper (:class:`RecommenderKernel`) steps that kernel through each block, takes the
contexts and items it played, and computes from them, by the same elementwise operations as
:meth:`~.model.RecommenderEnv.pull` on the same tables, every per-round value the recommender adds
(``regret``, ``delta``, ``violation``, ``violation_pos``, ``cf_unfair``, the codes ``O`` and ``I``)
and the deployed ``exposure``; ``reward`` and F-UCB's diagnostics come from the chapter's kernel.
The two paths agree bit for bit (the registry's conformance check and ``tests/synthesis``
compare them). Where a view would not be exact (it is checked when built) or an adapter is
subclassed, ``compiled`` returns None and the numpy path runs.

The module registers :func:`cell_kernel` as the compiled fast path of the three cell adapters and
:func:`context_free_kernel` as that of :class:`~.algorithms.ContextFree`
(:func:`~causalbandits_lib.core.kernels.register_kernel`) when it is imported, which the chapter's
package does: the adapters do not import it back.
"""

from __future__ import annotations

import numpy as np

from ..core.environments import ContextualBernoulliBandit
from ..core.kernels import register_kernel
from ..core.scm import DiscreteSCM
from ..fairx import kernels as fairx_kernels
from ..fucb import kernels as fucb_kernels
from ..fucb.algorithms import DecomposedUCB, FairUCB, TrueDeltaFairUCB
from ..fucb.model import CausalBanditEnv, IIDContexts
from . import algorithms as A
from . import model as M

__all__ = ["ItemColumns", "causal_view", "bandit_view", "RecommenderKernel", "cell_kernel", "context_free_kernel"]

#: the per-round values of :meth:`~.model.RecommenderEnv.pull`, with their dtypes
FEEDBACK = {
    "reward": np.float64,
    "regret": np.float64,
    "delta": np.float64,
    "violation": np.float64,
    "violation_pos": np.float64,
    "cf_unfair": np.float64,
    "O": np.int64,
    "I": np.int64,
}
#: F-UCB's per-round diagnostics, written by the fucb kernel
FUCB_DIAGNOSTICS = ("fallback", "fair_set_size", "own_ucb_delta")


class ItemColumns:
    """The node uniforms of :func:`causal_view`: the recommender's per-item reward uniforms
    (stream ``rewards``, shape ``(K,)`` per round) placed in the columns of the click nodes; the
    other columns (the context and arm nodes, which are never sampled) are 0."""

    def __init__(self, noise, n_nodes: int, columns):
        self.noise, self.n_nodes, self.columns = noise, int(n_nodes), list(columns)

    def _spread(self, u: np.ndarray) -> np.ndarray:
        out = np.zeros(u.shape[:-1] + (self.n_nodes,))
        out[..., self.columns] = u
        return out

    def at(self, t: int) -> np.ndarray:
        return self._spread(self.noise.at(t))

    def block(self, t0: int, t1: int) -> np.ndarray:
        return self._spread(self.noise.block(t0, t1))


def _click_node(k: int) -> str:
    return f"Y{k}"


def causal_view(env: M.RecommenderEnv) -> CausalBanditEnv | None:
    """The recommender as the fucb chapter's :class:`CausalBanditEnv` (see the module docstring),
    reset on the recommender's streams; None if the view's sampling tables or context draws
    would not be the recommender's bit for bit."""
    means = np.asarray(env.means, dtype=float)
    n_c, n_k = means.shape
    states: dict = {"O": tuple(range(n_c)), "I": tuple(range(n_k))}
    mechanisms: dict = {"O": ((), env.context_probs), "I": ((), np.full(n_k, 1.0 / n_k))}
    for k in range(n_k):
        table = np.zeros((n_c, n_k, 2))
        table[..., 1] = 1.0  # not clicked unless item k is shown
        table[:, k, 0] = means[:, k]
        table[:, k, 1] = 1.0 - means[:, k]
        states[_click_node(k)] = (1, 0)  # code 0 is the click: it comes first in the inverse CDF
        mechanisms[_click_node(k)] = (("O", "I"), table)
    model = DiscreteSCM(states, mechanisms, name=f"recommender view of {env.instance.name}")
    view = CausalBanditEnv(
        model=model,
        context_nodes=("O",),
        arm_nodes=("I",),
        reward_weights={_click_node(k): 1.0 for k in range(n_k)},
        sigma=0.0,
        contexts=IIDContexts(env.context_probs),
        discrepancy=env.delta,
        name=model.name,
    )
    # the click of item k happens iff its uniform is below the threshold of its row: it must be μ_k(o)
    for node, _, parents, _, cdf in view.sampling_plan():
        k = int(node[1:])
        expected = np.zeros((n_c, n_k))
        expected[:, k] = means[:, k]
        if parents != ("O", "I") or not np.array_equal(cdf[:, 0], expected.ravel()):
            return None
    if not np.array_equal(view.contexts.cdf, env.context_cdf):
        return None
    view.reset(env.streams)
    columns = [model.column(_click_node(k)) for k in range(n_k)]
    view.node_uniforms = ItemColumns(env.streams.per_round("rewards", (n_k,), "uniform"), len(model.nodes), columns)
    return view


def bandit_view(env: M.RecommenderEnv) -> ContextualBernoulliBandit | None:
    """The recommender as the core's :class:`ContextualBernoulliBandit` (its clicks and contexts
    without the scores), reset on the recommender's streams; None if its context draws would differ."""
    view = ContextualBernoulliBandit(env.context_probs, env.means)
    if not (np.array_equal(view.context_cdf, env.context_cdf) and np.array_equal(view.means, env.means)):
        return None
    view.reset(env.streams)
    return view


def recommender_values(env: M.RecommenderEnv, contexts: np.ndarray, items: np.ndarray, out: dict) -> None:
    """Write into ``out`` the requested values of :meth:`~.model.RecommenderEnv.pull` other than
    ``reward``, for blocks of contexts and items ``(R, B)``: the same operations on the same tables."""
    means = env.means
    if "regret" in out:
        out["regret"][...] = means.max(axis=1)[contexts] - means[contexts, items]
    d = env.delta[contexts, items]
    if "delta" in out:
        out["delta"][...] = d
    if "violation" in out:
        out["violation"][...] = d - env.tau
    if "violation_pos" in out:
        out["violation_pos"][...] = np.maximum(d - env.tau, 0.0)
    if "cf_unfair" in out:
        out["cf_unfair"][...] = (d > env.tau).astype(float)
    if "O" in out:
        out["O"][...] = contexts
    if "I" in out:
        out["I"][...] = items


def _one_hot(items: np.ndarray, n_items: int, out: np.ndarray | None = None) -> np.ndarray:
    if out is None:
        out = np.empty(items.shape + (n_items,))
    out[...] = 0.0
    np.put_along_axis(out, items[..., None], 1.0, axis=-1)
    return out


class RecommenderKernel:
    """An adapter's compiled fast path on the recommender: the chapter's kernel ``inner`` on the
    view ``view``, and the recommender's per-round values and the deployed exposure computed from
    what it played (see the module docstring); built by :func:`cell_kernel` and
    :func:`context_free_kernel`.

    ``kind`` is ``"cells"`` (the fucb kernel: contexts and items are its node codes ``O`` and ``I``)
    or ``"context_free"`` (the fairx kernel, one configuration: the items are its played arms, the
    exposure its deployed policy, the contexts the view's draws).
    """

    def __init__(self, policy, env: M.RecommenderEnv, view, inner, kind: str):
        if kind not in ("cells", "context_free"):
            raise ValueError(f"kind={kind!r} is not 'cells' or 'context_free'")
        self.policy, self.env, self.view, self.inner, self.kind = policy, env, view, inner, kind
        self.n_items = env.n_arms
        outputs = {name: (dtype, ()) for name, dtype in FEEDBACK.items()}
        outputs["exposure"] = (np.float64, (self.n_items,))
        if kind == "cells":
            outputs.update({n: inner.outputs[n] for n in FUCB_DIAGNOSTICS if n in inner.outputs})
        self.outputs = outputs

    def run(self, t0: int, t1: int, out) -> None:
        env, policy = self.env, self.policy
        R, B = env._rows.shape[0], t1 - t0
        if self.kind == "cells":
            inner_out = {n: out[n] for n in FUCB_DIAGNOSTICS if n in out}
            inner_out["reward"] = out["reward"] if "reward" in out else np.empty((R, B))
            for code in ("O", "I"):
                inner_out[code] = np.empty((R, B), dtype=np.int64)
            self.inner.run(t0, t1, inner_out)
            contexts, items = inner_out["O"], inner_out["I"]
            exposure = _one_hot(items, self.n_items, out.get("exposure"))
        else:
            inner_out = {"policy": np.empty((R, B, 1, self.n_items)), "reward": np.empty((R, B, 1))}
            arms = np.empty((R, B, 1), dtype=np.int64)
            self.inner.run(t0, t1, inner_out, arms=arms)
            items = arms[:, :, 0]
            contexts = np.searchsorted(env.context_cdf, self.view.context_noise.block(t0, t1), side="right")
            exposure = inner_out["policy"][:, :, 0, :]
            if "reward" in out:
                out["reward"][...] = inner_out["reward"][:, :, 0]
            if "exposure" in out:
                out["exposure"][...] = exposure
        recommender_values(env, contexts, items, out)
        # what the numpy path leaves behind after round t1 - 1
        env._context = contexts[:, -1].copy()
        if self.kind == "cells":
            own = getattr(policy, "last_diagnostics", {})
            policy._diag = {**own, "exposure": exposure[:, -1].copy()}


def cell_kernel(policy, env) -> RecommenderKernel | None:
    """The fast path of :class:`~.algorithms.CellUCB`, :class:`~.algorithms.CellFairUCB` or
    :class:`~.algorithms.CellTrueDeltaUCB` (exact types) on :class:`~.model.RecommenderEnv`: the
    fucb kernel of the class each adapts, with the adapter's PCB bounds; None otherwise."""
    algorithm = {A.CellUCB: DecomposedUCB, A.CellFairUCB: FairUCB, A.CellTrueDeltaUCB: TrueDeltaFairUCB}.get(
        type(policy)
    )
    if algorithm is None or type(env) is not M.RecommenderEnv:
        return None
    view = causal_view(env)
    if view is None:
        return None
    bounds = None if policy.lower is None else (policy.lower, policy.upper)
    inner = fucb_kernels.kernel_for(policy, view, algorithm=algorithm, index_bounds=bounds)
    return None if inner is None else RecommenderKernel(policy, env, view, inner, "cells")


def context_free_kernel(policy, env) -> RecommenderKernel | None:
    """The fast path of :class:`~.algorithms.ContextFree` (exact type) on
    :class:`~.model.RecommenderEnv`: the fairx kernel of its inner policy (the policy's own
    ``compiled``, e.g. FairX-UCB's or FairX-TS's, or FairX-UCB's kernel with the clipped box for
    :class:`~.algorithms.BoundedFairXUCB`); None when the fairx chapter has no kernel for it."""
    if type(policy) is not A.ContextFree or type(env) is not M.RecommenderEnv:
        return None
    inner = policy.inner
    view = bandit_view(env)
    if view is None:
        return None
    if type(inner) is A.BoundedFairXUCB:
        kernel = fairx_kernels.kernel_for(inner, view, fairx_kernels.FAIRX_UCB, box_bounds=(inner.lower, inner.upper))
    else:
        make = getattr(inner, "compiled", None)
        kernel = make(view) if make is not None else None
    if not isinstance(kernel, fairx_kernels.FairXKernel):
        return None
    return RecommenderKernel(policy, env, view, kernel, "context_free")


register_kernel(A.CellUCB, cell_kernel)
register_kernel(A.CellFairUCB, cell_kernel)
register_kernel(A.CellTrueDeltaUCB, cell_kernel)
register_kernel(A.ContextFree, context_free_kernel)
