"""The Adult-Video experiment (Huang, Zhang and Wu, AAAI 2022, §4.2 and App. E.2).

Users are rows of UCI Adult with four binarised features; arms are the 16 video types given by
four binarised video features; the reward is linear,

``R = (age + income + ratings + views) / 5 + N(0, 0.1²)``,

and gender is the sensitive attribute. Every choice the paper leaves open is stated here and is a
parameter:

- **binarisation** (not given): ``age >= 37`` (the median of adult.data), ``sex = Male``,
  ``race = White``, ``income = >50K``;
- **users**: 10,000 rows drawn at random from adult.data (32,561 rows; the paper's "31,561" is a
  typo), split in half: 5,000 offline rows to learn the graph and 5,000 online users, served to
  each run in its own random order;
- **videos**: the YouTube statistics data set is not available offline; since the arms are exactly
  the 16 combinations of (length, ratings, views, comments) we use those combinations directly
  (the main text's feature list; the appendix names "age" instead of "views", but **W** contains
  views);
- **graph** (Figure 3 is not in the text; the paper ran Tetrad): the PC algorithm of pgmpy
  (stable variant, chi-square tests at level 0.01) on the offline rows with background knowledge
  given as a temporal order sex → race → age → income (sex and race are fixed at birth; income
  comes last); any edge PC leaves undirected is oriented along that order. Video features are
  root nodes (set by the policy) and the reward's parents are the four features it is built on;
- **user model** for ground truth: tables fitted on the offline rows with one pseudo-count per cell
  (so every user type has positive probability), and the monotone coupling of
  :func:`~causalbandits_lib.fucb.counterfactual.monotone_counterfactual` for the structural
  equations. The true counterfactual discrepancy is *not* identified from data when features
  descend from gender; it is reported under this coupling, labelled as such.

Without the Adult files (``CAUSALBANDITS_DATA_DIR`` unset or empty), :func:`load_adult_users`
builds a synthetic stand-in that reproduces the joint distribution of the binarised features listed
in the chapter's reading notes, and flags it (``stand_in: true`` in the provenance, a
:class:`~causalbandits_lib.core.datasets.StandInWarning`).
"""

from __future__ import annotations

import warnings
from typing import Sequence

import networkx as nx
import numpy as np

from ...core import datasets
from ...core.scm import DiscreteSCM
from ..counterfactual import monotone_discrepancy_table
from ..model import CausalBanditEnv, UserSequence

__all__ = [
    "USER_NODES",
    "VIDEO_NODES",
    "SENSITIVE",
    "REWARD",
    "REWARD_PARENTS",
    "TEMPORAL_ORDER",
    "STAND_IN_CELLS",
    "load_adult_users",
    "adult_column_kinds",
    "synthetic_adult_users",
    "binarise_adult",
    "split_users",
    "learn_user_graph",
    "fit_user_model",
    "adult_video_graph",
    "adult_video_env",
    "sensitive_descendants",
]

USER_NODES = ("age", "sex", "race", "income")
VIDEO_NODES = ("length", "ratings", "views", "comments")
SENSITIVE = "sex"
REWARD = "R"
REWARD_PARENTS = ("age", "income", "ratings", "views")
#: Background knowledge for structure learning (earlier tiers may cause later ones, never the reverse).
TEMPORAL_ORDER = (("sex",), ("race",), ("age",), ("income",))
ADULT_COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)

#: The stand-in's joint distribution over (age >= 37, male, White): P(cell) and P(>50K | cell), from
#: all 32,561 rows of adult.data (the chapter's reading notes, §7).
STAND_IN_CELLS = {
    (0, 0, 0): (0.0342, 0.0386),
    (0, 0, 1): (0.1452, 0.0713),
    (0, 1, 0): (0.0416, 0.1180),
    (0, 1, 1): (0.2649, 0.1655),
    (1, 0, 0): (0.0312, 0.1064),
    (1, 0, 1): (0.1202, 0.1765),
    (1, 1, 0): (0.0387, 0.3278),
    (1, 1, 1): (0.3239, 0.4419),
}


def binarise_adult(frame, age_threshold: float = 37.0) -> np.ndarray:
    """Binarise the raw Adult columns into ``(age, sex, race, income)`` codes, shape ``(n, 4)``:
    ``age >= age_threshold``, ``sex == "Male"``, ``race == "White"``, ``income`` starts with ``">50K"``
    (the test split writes ``">50K."``)."""
    for col in ("age", "sex", "race", "income"):
        if col not in frame:
            raise KeyError(f"the Adult table has no column {col!r}; it has {list(frame.columns)}")
    out = np.stack(
        [
            (frame["age"].astype(float) >= age_threshold).to_numpy(),
            (frame["sex"].str.strip() == "Male").to_numpy(),
            (frame["race"].str.strip() == "White").to_numpy(),
            frame["income"].str.strip().str.startswith(">50K").to_numpy(),
        ],
        axis=1,
    )
    return out.astype(np.int64)


def synthetic_adult_users(n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` synthetic users ``(age, sex, race, income)`` drawn from :data:`STAND_IN_CELLS`."""
    if n < 1:
        raise ValueError(f"n={n} must be >= 1")
    cells = list(STAND_IN_CELLS)
    p = np.array([STAND_IN_CELLS[c][0] for c in cells])
    p = p / p.sum()
    which = rng.choice(len(cells), size=n, p=p)
    base = np.array(cells, dtype=np.int64)[which]  # (age, sex, race)
    p_inc = np.array([STAND_IN_CELLS[c][1] for c in cells])[which]
    income = (rng.random(n) < p_inc).astype(np.int64)
    return np.column_stack([base, income])


def load_adult_users(
    age_threshold: float = 37.0,
    allow_download: bool = False,
    stand_in_rng: np.random.Generator | None = None,
    stand_in_size: int = 32561,
) -> tuple[np.ndarray, dict]:
    """The binarised users of adult.data, or the flagged synthetic stand-in.

    Parameters
    ----------
    age_threshold : float
    allow_download : bool
        Let :func:`causalbandits_lib.core.datasets.fetch` try the public sources (default no: the book
        never downloads at run time; point ``CAUSALBANDITS_DATA_DIR`` at a copy instead).
    stand_in_rng : numpy.random.Generator, optional
        Generator of the stand-in (required to build it; pass a seeded one).
    stand_in_size : int

    Returns
    -------
    users : int array, shape (n, 4)
        Columns :data:`USER_NODES`.
    provenance : dict
        From :func:`~causalbandits_lib.core.datasets.fetch` (checksums) or
        :func:`~causalbandits_lib.core.datasets.stand_in_provenance` (``stand_in: True``).
    """
    try:
        files = datasets.fetch("adult", allow_download=allow_download)
    except datasets.DataUnavailable as exc:
        if stand_in_rng is None:
            raise datasets.DataUnavailable(f"{exc}; pass stand_in_rng to build the synthetic stand-in") from None
        seed = getattr(getattr(stand_in_rng.bit_generator, "seed_seq", None), "entropy", None)
        prov = datasets.stand_in_provenance(
            "adult",
            str(exc).split(";")[0],
            f"{stand_in_size} synthetic users drawn from the joint distribution of (age>=37, male, White) and "
            "P(>50K | cell) of adult.data (STAND_IN_CELLS in causalbandits_lib/fucb/adult_video.py)",
            generator_seed=seed if isinstance(seed, int) else None,
        )
        return synthetic_adult_users(stand_in_size, stand_in_rng), prov
    import pandas as pd

    frame = pd.read_csv(files["adult/adult.data"], header=None, names=list(ADULT_COLUMNS), skipinitialspace=True)
    frame = frame.dropna(subset=["age", "sex", "race", "income"])
    prov = dict(files.provenance)
    prov["rows"] = int(len(frame))
    prov["binarisation"] = f"age >= {age_threshold:g}, sex == Male, race == White, income == >50K"
    return binarise_adult(frame, age_threshold), prov


def adult_column_kinds(frame=None, allow_download: bool = False) -> dict[str, list[str]]:
    """The continuous (numeric) and categorical columns of adult.data, the label ``income`` left out:
    ``{"continuous": [...], "categorical": [...]}``. ``frame`` is a table with the columns
    :data:`ADULT_COLUMNS` (default: adult.data itself, read through
    :func:`~causalbandits_lib.core.datasets.fetch`; raises ``DataUnavailable`` without it)."""
    import pandas as pd

    if frame is None:
        files = datasets.fetch("adult", allow_download=allow_download)
        frame = pd.read_csv(files["adult/adult.data"], header=None, names=list(ADULT_COLUMNS), skipinitialspace=True)
    missing = [c for c in ADULT_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"the table lacks the adult.data columns {missing}")
    features = [c for c in ADULT_COLUMNS if c != "income"]
    continuous = [c for c in features if pd.api.types.is_numeric_dtype(frame[c])]
    return {"continuous": continuous, "categorical": [c for c in features if c not in continuous]}


def split_users(users: np.ndarray, n_users: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Draw ``n_users`` rows without replacement and split them in half: (offline, online)."""
    users = np.asarray(users)
    if not 2 <= n_users <= len(users):
        raise ValueError(f"n_users={n_users} must be between 2 and the number of rows ({len(users)})")
    idx = rng.permutation(len(users))[:n_users]
    half = n_users // 2
    return users[idx[:half]], users[idx[half:]]


def learn_user_graph(
    offline: np.ndarray, significance: float = 0.01, temporal_order: Sequence[Sequence[str]] = TEMPORAL_ORDER
) -> nx.DiGraph:
    """The user-feature graph learned from ``offline`` rows by pgmpy's PC (stable, chi-square)
    with ``temporal_order`` as background knowledge; undirected edges are oriented along the order.
    """
    import pandas as pd
    from pgmpy.estimators import PC, ExpertKnowledge

    if not 0 < significance < 1:
        raise ValueError(f"significance={significance} must lie in (0, 1)")
    flat = [n for tier in temporal_order for n in tier]
    if sorted(flat) != sorted(USER_NODES):
        raise ValueError(f"temporal_order must list each of {USER_NODES} once, got {temporal_order}")
    rank = {n: i for i, tier in enumerate(temporal_order) for n in tier}
    data = pd.DataFrame(np.asarray(offline, dtype=np.int64), columns=list(USER_NODES))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pdag = PC(data).estimate(
            variant="stable",
            ci_test="chi_square",
            significance_level=significance,
            expert_knowledge=ExpertKnowledge(temporal_order=[list(t) for t in temporal_order]),
            show_progress=False,
            n_jobs=1,
        )
    g = nx.DiGraph()
    g.add_nodes_from(USER_NODES)
    for a, b in pdag.edges():
        if (b, a) in pdag.edges():  # undirected in the PDAG: orient along the order
            a, b = (a, b) if (rank[a], a) < (rank[b], b) else (b, a)
        elif rank[a] > rank[b]:
            raise RuntimeError(f"PC returned {a} -> {b} against the temporal order {temporal_order}")
        g.add_edge(a, b)
    return g


def fit_user_model(offline: np.ndarray, graph: nx.DiGraph, pseudo_count: float = 1.0) -> DiscreteSCM:
    """Tables ``P(V | parents)`` of the user features fitted on ``offline`` rows (counts plus
    ``pseudo_count`` per cell), on ``graph``."""
    offline = np.asarray(offline, dtype=np.int64)
    if not pseudo_count > 0:
        raise ValueError(f"pseudo_count={pseudo_count} must be > 0 (so that every user type has positive probability)")
    mechanisms = {}
    col = {n: i for i, n in enumerate(USER_NODES)}
    for node in USER_NODES:
        parents = tuple(sorted(graph.predecessors(node), key=USER_NODES.index))
        counts = np.full((2,) * len(parents) + (2,), float(pseudo_count))
        np.add.at(counts, tuple(offline[:, col[p]] for p in parents) + (offline[:, col[node]],), 1.0)
        mechanisms[node] = (parents, counts / counts.sum(axis=-1, keepdims=True))
    return DiscreteSCM({n: (0, 1) for n in USER_NODES}, mechanisms, name="adult users")


def adult_video_graph(user_graph: nx.DiGraph, policy_edges: bool = True) -> nx.DiGraph:
    """Figure 3 as we rebuild it: the learned user graph, the video nodes (with the policy edges
    user → video of Figure 1), and ``age, income, ratings, views → R``."""
    g = nx.DiGraph(user_graph)
    g.add_nodes_from(VIDEO_NODES)
    if policy_edges:
        g.add_edges_from((u, v) for u in USER_NODES for v in VIDEO_NODES)
    g.add_edges_from((p, REWARD) for p in REWARD_PARENTS)
    return g


def sensitive_descendants(user_graph: nx.DiGraph, sensitive: str = SENSITIVE) -> set[str]:
    """The user features that descend from the sensitive one (**B** of Theorem 2)."""
    return set(nx.descendants(user_graph, sensitive)) & set(USER_NODES)


def adult_video_env(online: np.ndarray, user_model: DiscreteSCM, sigma: float = 0.1) -> CausalBanditEnv:
    """The Adult-Video bandit: the online users in a random order per run, 16 video types.

    Context codes enumerate ``(age, sex, race, income)``; arm codes ``(length, ratings, views,
    comments)``. The feedback's ``discrepancy`` is ``E[R(a, male) | x] − E[R(a, female) | x]``
    under the monotone coupling of ``user_model`` (arm-independent here: videos do not depend on
    the user, and the reward is additive).
    """
    states = {n: (0, 1) for n in (*USER_NODES, *VIDEO_NODES)}
    mechanisms = {n: (m.parents, m.table) for n, m in user_model.mechanisms.items()}
    mechanisms.update({v: ((), [0.5, 0.5]) for v in VIDEO_NODES})
    model = DiscreteSCM(states, mechanisms, name="adult-video")
    online = np.asarray(online, dtype=np.int64)
    contexts = UserSequence(np.ravel_multi_index(tuple(online.T), (2, 2, 2, 2)))
    env = CausalBanditEnv(
        model=model,
        context_nodes=USER_NODES,
        arm_nodes=VIDEO_NODES,
        reward_weights={n: 0.2 for n in REWARD_PARENTS},
        sigma=float(sigma),
        contexts=contexts,
        name="adult-video",
    )
    env.discrepancy = monotone_discrepancy_table(env, SENSITIVE)
    return env
