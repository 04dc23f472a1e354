"""The offline data of Huang and Wu (2024): confounded logging, then selection.

The old (logging) policy chose the arm from the context, which confounds arm and reward through
``U1``; the hidden ``C1`` is drawn and then dropped; only units with ``S = 1`` enter the log.
:func:`draw_offline_rows` and :func:`selected_rows` show the process row by row;
:func:`offline_count_tables` draws many independent data sets at once and tabulates them
(:class:`OfflineCounts`), each from its own random stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

import numpy as np

from ..core.scm import DiscreteSCM
from ..core.streams import RunStreams
from .model import N_ARMS, NODES, OBSERVED, SELECTION

__all__ = ["OfflineCounts", "draw_offline_rows", "selected_rows", "offline_count_tables"]


def draw_offline_rows(model: DiscreteSCM, n_draws: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Draw ``n_draws`` units from the model, every node included (state codes).

    This is the data-generating process before anything is hidden: the logging policy's arm given
    the context, the hidden ``C1``, the selection indicator ``S``. :func:`selected_rows` gives the
    analyst's view.
    """
    if int(n_draws) < 1:
        raise ValueError(f"n_draws={n_draws} must be at least 1")
    return model.sample(int(n_draws), rng)


def selected_rows(rows: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The offline log: rows with ``S = 1``, without ``C1`` and ``S`` (columns :data:`OBSERVED`)."""
    keep = np.asarray(rows[SELECTION]) == 1
    return {v: np.asarray(rows[v])[keep] for v in OBSERVED}


@dataclass(frozen=True)
class OfflineCounts:
    """Count tables of independent offline data sets.

    Attributes
    ----------
    full : ndarray, shape (n_datasets, 2, 2, 2, 2, 2, 2, 2, 2)
        Counts of every joint value of all eight nodes (axes in :data:`NODES` order) over the
        ``n_draws`` units drawn, selected or not. Only the generator sees this.
    n_draws : int
        Units drawn per data set before selection (the paper: 30,000).
    """

    full: np.ndarray
    n_draws: int

    @property
    def n_datasets(self) -> int:
        return int(self.full.shape[0])

    @property
    def selected(self) -> np.ndarray:
        """The analyst's count tables: rows with ``S = 1``, ``C1`` summed out; shape
        ``(n_datasets, 2, 2, 2, 2, 2, 2)`` with axes in :data:`OBSERVED` order."""
        s = self.full[..., 1].sum(axis=1 + NODES.index("C1"))  # axes U1, U2, X1, X2, I1, Y
        return np.transpose(s, (0, 3, 4, 1, 2, 5, 6))

    @property
    def n_selected(self) -> np.ndarray:
        """Selected rows per data set, shape ``(n_datasets,)``."""
        return self.full[..., 1].reshape(self.n_datasets, -1).sum(axis=1)

    def population_arm_outcome(self) -> np.ndarray:
        """Counts of ``(arm, Y)`` over all drawn units, selected or not, shape ``(n_datasets, 4, 2)``
        (only used to reconstruct the paper's "Truth" column)."""
        keep = [NODES.index(v) for v in ("X1", "X2", "Y")]
        drop = tuple(1 + i for i in range(len(NODES)) if i not in keep)
        return self.full.sum(axis=drop).reshape(self.n_datasets, N_ARMS, 2)


def offline_count_tables(
    model: DiscreteSCM,
    n_draws: int,
    n_datasets: int,
    seed: int,
    first: int = 0,
    batch: int = 16,
) -> OfflineCounts:
    """Draw ``n_datasets`` independent offline data sets of ``n_draws`` units each and tabulate them.

    Data set ``i`` (global index ``first + i``) uses its own stream
    ``SeedSequence(seed, spawn_key=(i, key("pcb/offline")))`` (see :mod:`causalbandits_lib.core.runner`),
    so it is the same whether drawn alone or among thousands, and whatever ``batch`` is.

    Parameters
    ----------
    model : DiscreteSCM
        A model over :data:`~causalbandits_lib.pcb.model.NODES` (e.g.
        :func:`~causalbandits_lib.pcb.model.table2_model`).
    n_draws : int
        Units drawn before selection (the paper: 30,000, of which about 14,300 are selected).
    n_datasets : int
    seed : int
    first : int
        Global index of the first data set.
    batch : int
        Data sets sampled per vectorised call (memory: ``batch · n_draws · 8`` uniforms).
    """
    for name, v, lo in (
        ("n_draws", n_draws, 1),
        ("n_datasets", n_datasets, 1),
        ("batch", batch, 1),
        ("first", first, 0),
    ):
        if int(v) < lo:
            raise ValueError(f"{name}={v} must be at least {lo}")
    if tuple(model.nodes) != NODES:
        raise ValueError(f"model nodes {model.nodes} must be {NODES} (build it with fig2_model)")
    streams = RunStreams(seed, range(int(first), int(first) + int(n_datasets)))
    gens = streams.generators("pcb/offline")
    shape = (2,) * len(NODES)
    full = np.zeros((int(n_datasets), 2 ** len(NODES)), dtype=np.int64)
    for start in range(0, int(n_datasets), int(batch)):
        chunk = gens[start : start + int(batch)]
        u = np.stack([g.random((int(n_draws), len(NODES))) for g in chunk])
        rows = model.sample_from_uniforms(u)
        codes = np.ravel_multi_index(tuple(rows[n] for n in NODES), shape)  # (k, n_draws)
        for j in range(len(chunk)):
            full[start + j] = np.bincount(codes[j], minlength=full.shape[1])
    return OfflineCounts(full.reshape((int(n_datasets),) + shape), int(n_draws))
