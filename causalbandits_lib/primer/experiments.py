"""The primer's experiments: many observational studies at once (notebook ``primer/02``)."""

from __future__ import annotations

import numpy as np

from ..core.scm import DiscreteSCM
from .algorithms import backdoor_estimates

__all__ = ["observational_study"]


def observational_study(
    model: DiscreteSCM,
    n_datasets: int,
    n_samples: int,
    rng: np.random.Generator,
    x_value: int = 1,
    batch_rows: int = 2_000_000,
):
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
