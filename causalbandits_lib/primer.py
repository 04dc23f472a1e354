"""The primer chapter: small models that show the ideas every later chapter uses.

- :func:`confounded_treatment_model`: a treatment ``X``, an outcome ``Y`` and a confounder ``Z``
  (``Z → X``, ``Z → Y``, ``X → Y``), where seeing ``X = 1`` and doing ``X = 1`` differ;
- :func:`backdoor_estimates`: the naive and the back-door adjusted estimates of
  ``P(Y=1 | do(X=x))`` from observational samples, for many independent data sets at once;
- :func:`contextual_model` and :func:`policy_value_decomposition`: a context ``C``, an action ``A``
  chosen by a policy (a soft intervention on ``A``) and a reward ``Y``, with the value of a policy
  decomposed as ``Σ_c P(c) Σ_a π(a|c) E[Y | do(a), c]`` (Correa and Bareinboim, 2020).
"""

from __future__ import annotations

import numpy as np

from .scm import DiscreteSCM

__all__ = [
    "confounded_treatment_model",
    "backdoor_estimates",
    "contextual_model",
    "policy_value_decomposition",
    "deterministic_policies",
    "policy_table",
    "observational_study",
]


def confounded_treatment_model(p_severe: float = 0.5, treat_if_severe: float = 0.8, treat_if_mild: float = 0.2) -> DiscreteSCM:
    """Severity ``Z`` (mild/severe) drives both treatment ``X`` and recovery ``Y``.

    The recovery table makes treatment help in both strata while severe patients, who are treated
    more often, recover less: the observational contrast understates the causal effect.

    Parameters
    ----------
    p_severe : float
        ``P(Z = severe)``.
    treat_if_severe, treat_if_mild : float
        ``P(X = 1 | Z)``.
    """
    for name, v in (("p_severe", p_severe), ("treat_if_severe", treat_if_severe), ("treat_if_mild", treat_if_mild)):
        if not 0.0 <= v <= 1.0:
            raise ValueError(f"{name}={v} must be a probability in [0, 1]")
    recover = np.array([[0.60, 0.75], [0.20, 0.35]])  # P(Y=1 | Z, X): rows Z=mild,severe; columns X=0,1
    return DiscreteSCM(
        {"Z": ("mild", "severe"), "X": (0, 1), "Y": (0, 1)},
        {
            "Z": ((), [1 - p_severe, p_severe]),
            "X": (("Z",), [[1 - treat_if_mild, treat_if_mild], [1 - treat_if_severe, treat_if_severe]]),
            "Y": (("Z", "X"), np.stack([1 - recover, recover], axis=-1)),
        },
        name="confounded treatment",
    )


def backdoor_estimates(z: np.ndarray, x: np.ndarray, y: np.ndarray, x_value: int, n_z: int) -> dict[str, np.ndarray]:
    """Naive and back-door adjusted estimates of ``P(Y=1 | do(X=x_value))`` from samples.

    Parameters
    ----------
    z, x, y : int arrays, shape (n_sets, n)
        State codes of ``n`` observational samples in each of ``n_sets`` independent data sets.
    x_value : int
        The treatment value.
    n_z : int
        Number of states of ``Z``.

    Returns
    -------
    dict with ``naive`` = ``P̂(Y=1 | X=x)`` and ``adjusted`` = ``Σ_z P̂(Y=1 | X=x, z) P̂(z)``
    (Pearl 2009, Eq. 3.19), each of shape ``(n_sets,)``. A stratum with no treated sample
    contributes ``NaN``, which propagates (it means the data set cannot identify the effect).
    """
    treated = x == x_value
    with np.errstate(invalid="ignore", divide="ignore"):
        naive = (y * treated).sum(axis=1) / treated.sum(axis=1)
        adjusted = np.zeros(z.shape[0])
        for zc in range(n_z):
            in_z = z == zc
            p_z = in_z.mean(axis=1)
            cell = in_z & treated
            adjusted = adjusted + p_z * (y * cell).sum(axis=1) / cell.sum(axis=1)
    return {"naive": naive, "adjusted": adjusted}


def contextual_model(
    context_probs=(0.5, 0.3, 0.2),
    reward_table=((0.70, 0.40, 0.20), (0.30, 0.60, 0.35), (0.20, 0.30, 0.55)),
) -> DiscreteSCM:
    """Context ``C`` (user type), action ``A`` (item shown) and binary reward ``Y``.

    The action's observational mechanism ``P(A | C)`` is uniform; a policy replaces it (soft
    intervention). ``reward_table[c][a] = P(Y=1 | C=c, A=a)``.
    """
    pc = np.asarray(context_probs, dtype=float)
    r = np.asarray(reward_table, dtype=float)
    if r.shape != (len(pc), r.shape[1]) or r.ndim != 2:
        raise ValueError(f"reward_table must have one row per context ({len(pc)}), got shape {r.shape}")
    n_c, n_a = r.shape
    return DiscreteSCM(
        {"C": tuple(range(n_c)), "A": tuple(range(n_a)), "Y": (0, 1)},
        {
            "C": ((), pc),
            "A": (("C",), np.full((n_c, n_a), 1.0 / n_a)),
            "Y": (("C", "A"), np.stack([1 - r, r], axis=-1)),
        },
        name="contextual recommendation",
    )


def policy_table(actions_per_context: np.ndarray, n_actions: int) -> np.ndarray:
    """The table ``π(A | C)`` of a deterministic policy (one action per context)."""
    actions_per_context = np.asarray(actions_per_context, dtype=np.int64)
    table = np.zeros((len(actions_per_context), n_actions))
    table[np.arange(len(actions_per_context)), actions_per_context] = 1.0
    return table


def deterministic_policies(n_contexts: int, n_actions: int) -> np.ndarray:
    """All ``n_actions ** n_contexts`` deterministic policies, one row of actions per policy."""
    grids = np.meshgrid(*[np.arange(n_actions)] * n_contexts, indexing="ij")
    return np.stack([g.ravel() for g in grids], axis=1)


def policy_value_decomposition(model: DiscreteSCM, policy: np.ndarray) -> float:
    """``E[Y; σ_A = π] = Σ_c P(c) Σ_a π(a|c) E[Y | do(A=a), C=c]`` (σ-calculus decomposition).

    Each term ``E[Y | do(a), c]`` is an exact interventional query; the test and the notebook
    compare the sum with the exact query on the soft-intervened model.
    """
    policy = np.asarray(policy, dtype=float)
    pc = model.query(["C"])
    total = 0.0
    for c, c_label in enumerate(model.states["C"]):
        for a, a_label in enumerate(model.states["A"]):
            if policy[c, a] == 0:
                continue
            total += pc[c] * policy[c, a] * model.expectation("Y", evidence={"C": c_label}, do={"A": a_label})
    return float(total)


def observational_study(model: DiscreteSCM, n_datasets: int, n_samples: int, rng: np.random.Generator, x_value: int = 1, batch_rows: int = 2_000_000):
    """Draw ``n_datasets`` observational data sets of ``n_samples`` rows from the confounded model
    and estimate ``P(Y=1 | do(X=x_value))`` on each (see :func:`backdoor_estimates`).

    Data sets are drawn in batches of at most ``batch_rows`` rows so memory stays bounded; the
    uniforms are consumed in the same order whatever the batch size, so the numbers do not depend
    on it.

    Returns
    -------
    estimates : dict of str to ndarray, shape (n_datasets,)
        ``naive`` and ``adjusted``.
    counts : ndarray
        Joint counts of ``(Z, X, Y)`` pooled over all data sets (axes in ``model.nodes`` order).
    """
    per_batch = max(1, batch_rows // n_samples)
    shape = tuple(model.card(n) for n in model.nodes)
    counts = np.zeros(shape, dtype=np.int64)
    out = {"naive": [], "adjusted": []}
    done = 0
    while done < n_datasets:
        k = min(per_batch, n_datasets - done)
        rows = model.sample_from_uniforms(rng.random((k, n_samples, len(model.nodes))))
        est = backdoor_estimates(rows["Z"], rows["X"], rows["Y"], x_value=x_value, n_z=model.card("Z"))
        for key in out:
            out[key].append(est[key])
        codes = np.ravel_multi_index(tuple(rows[n].ravel() for n in model.nodes), shape)
        counts += np.bincount(codes, minlength=counts.size).reshape(shape)
        done += k
    return {k: np.concatenate(v) for k, v in out.items()}, counts
