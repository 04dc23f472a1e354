"""The primer's estimators: seeing versus doing from observational samples (notebook ``primer/02``).

The bandit algorithm of the primer, UCB1, is generic and lives in
:mod:`causalbandits_lib.core.policies`.
"""

from __future__ import annotations

import numpy as np

__all__ = ["backdoor_estimates"]


def backdoor_estimates(z: np.ndarray, x: np.ndarray, y: np.ndarray, x_value: int, n_z: int) -> dict[str, np.ndarray]:
    """Naive and back-door adjusted estimates of ``P(Y=1 | do(X=x_value))`` from samples.

    Derived in notebooks/primer/02_seeing_and_doing.md, section 'What the graph says'
    (equation ``primer-backdoor-adjustment``).

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
