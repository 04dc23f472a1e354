"""The multi-label data sets of the FairX experiments: yeast from the real file (or a flagged
stand-in), a mediamill-shaped synthetic set, and the paper's 20/80 validation/test split.

- :func:`load_yeast`: the MULAN multi-label yeast file (2,417 examples, 103 features, 14 labels)
  through :func:`causalbandits_lib.core.datasets.fetch`, read with ``scipy.io.arff.loadarff``. Without
  the file a synthetic stand-in with yeast's label frequencies is returned, flagged
  ``stand_in=True`` (and announced by a :class:`~causalbandits_lib.core.datasets.StandInWarning`).
- :func:`mediamill_like`: mediamill (43,907 × 120, 101 labels) cannot be obtained offline; this
  generator has its shape (120 features, 101 labels, label cardinality about 4.4, a heavy-tailed
  label-frequency profile) and is always labelled as synthetic.
- :func:`validation_test_split`: the random 20% validation / 80% test split of §5.1.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.special import ndtri

from ..core import datasets

__all__ = [
    "YEAST_LABEL_COUNTS",
    "MultiLabelData",
    "load_yeast",
    "synthetic_multilabel",
    "yeast_stand_in",
    "mediamill_like",
    "mediamill_like_frequencies",
    "validation_test_split",
]

#: Label counts of the 14 yeast classes in the MULAN file (notes §7.1), 2,417 examples.
YEAST_LABEL_COUNTS = np.array([762, 1038, 983, 862, 722, 597, 428, 480, 178, 253, 289, 1816, 1799, 34])
YEAST_N = 2417


@dataclass
class MultiLabelData:
    """Features (n, p), 0/1 labels (n, K), a name and the provenance to pin in a record."""

    name: str
    features: np.ndarray
    labels: np.ndarray
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def stand_in(self) -> bool:
        return bool(self.provenance.get("stand_in", False))

    @property
    def label_frequencies(self) -> np.ndarray:
        return self.labels.mean(axis=0)

    def subset(self, rows: np.ndarray, name: str) -> "MultiLabelData":
        return MultiLabelData(name, self.features[rows], self.labels[rows], self.provenance)


def load_yeast(allow_stand_in: bool = True, stand_in_seed: int = 0) -> MultiLabelData:
    """The multi-label yeast data (Elisseeff and Weston 2001; MULAN distribution).

    Parameters
    ----------
    allow_stand_in : bool
        Without the file (or without a data folder), return :func:`yeast_stand_in` instead of
        raising :class:`~causalbandits_lib.core.datasets.DataUnavailable`.
    stand_in_seed : int
        Seed of the stand-in's generator.

    Returns
    -------
    MultiLabelData with features (2417, 103) (rows of unit norm) and labels (2417, 14).
    """
    try:
        files = datasets.fetch("yeast")
    except datasets.DataUnavailable as exc:
        if not allow_stand_in:
            raise
        return yeast_stand_in(stand_in_seed, reason=str(exc))
    from scipy.io import arff

    data, meta = arff.loadarff(files["yeast/yeast.arff"])
    names = meta.names()
    feature_names = [n for n in names if n.startswith("Att")]
    label_names = [n for n in names if n.startswith("Class")]
    if len(feature_names) != 103 or len(label_names) != 14:
        raise ValueError(
            f"yeast.arff: expected 103 features and 14 labels, found {len(feature_names)} and {len(label_names)}"
        )
    features = np.stack([np.asarray(data[n], dtype=float) for n in feature_names], axis=1)
    labels = np.stack([(np.asarray(data[n]) == b"1").astype(np.int8) for n in label_names], axis=1)
    return MultiLabelData("yeast", features, labels, dict(files.provenance))


def synthetic_multilabel(
    rng: np.random.Generator, n: int, n_features: int, frequencies, latent_dim: int = 8, noise: float = 1.0
):
    """Features and labels from a latent probit model with given label frequencies.

    ``x = normalise(B h + e)`` with a shared latent ``h ~ N(0, I)``; label ``a`` is
    ``1{w_a·h + noise·ε_a > t_a}``, ``w_a`` Gaussian, and ``t_a`` set so that ``P(label a) =
    frequencies[a]`` exactly in expectation (``t_a = −Φ⁻¹(f_a)·√(‖w_a‖² + noise²)``). Labels that
    share latent directions co-occur, as yeast's classes 11 and 12 do.

    Returns
    -------
    features : ndarray (n, n_features), rows of unit norm; labels : int8 ndarray (n, K)
    """
    f = np.asarray(frequencies, dtype=float)
    if np.any((f <= 0) | (f >= 1)):
        raise ValueError("label frequencies must lie strictly between 0 and 1")
    h = rng.standard_normal((n, latent_dim))
    B = rng.standard_normal((latent_dim, n_features))
    x = h @ B + rng.standard_normal((n, n_features))
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    W = rng.standard_normal((latent_dim, len(f)))
    scale = np.sqrt((W * W).sum(axis=0) + noise**2)
    thresholds = -ndtri(f) * scale
    labels = (h @ W + noise * rng.standard_normal((n, len(f))) > thresholds).astype(np.int8)
    return x, labels


def yeast_stand_in(seed: int = 0, reason: str = "file not found") -> MultiLabelData:
    """A synthetic stand-in with yeast's shape and label frequencies (flagged as a stand-in)."""
    rng = np.random.default_rng(seed)
    features, labels = synthetic_multilabel(rng, YEAST_N, 103, YEAST_LABEL_COUNTS / YEAST_N)
    prov = datasets.stand_in_provenance(
        "yeast",
        reason,
        "a latent-probit generator with yeast's shape (2,417 x 103, 14 labels) and label frequencies",
        generator_seed=seed,
    )
    return MultiLabelData("yeast (STAND-IN)", features, labels, prov)


def mediamill_like_frequencies(
    n_labels: int = 101, top: float = 0.7, exponent: float = 0.9, floor: float = 0.002
) -> np.ndarray:
    """Heavy-tailed label frequencies ``max(top · k^(−exponent), floor)``, ``k = 1..n_labels``
    (the book's choice; with the defaults the label cardinality is about 4.3, near mediamill's
    4.38)."""
    k = np.arange(1, n_labels + 1)
    return np.maximum(top * k ** (-float(exponent)), floor)


def mediamill_like(
    seed: int = 0, n_examples: int = 43907, n_features: int = 120, n_labels: int = 101
) -> MultiLabelData:
    """A synthetic data set with mediamill's shape (Snoek et al. 2006): 120 features, 101 labels,
    heavy-tailed label frequencies. Not the real data, which is not available offline; every
    result computed from it is labelled as coming from this stand-in."""
    rng = np.random.default_rng(seed)
    features, labels = synthetic_multilabel(
        rng, int(n_examples), int(n_features), mediamill_like_frequencies(n_labels), latent_dim=12
    )
    prov = {
        "name": "mediamill-like",
        "stand_in": True,
        "reason": "mediamill is not obtainable offline",
        "description": (
            f"synthetic, mediamill's shape ({n_examples} x {n_features}, {n_labels} labels, heavy-tailed frequencies)"
        ),
        "generator_seed": seed,
        "files": {},
    }
    return MultiLabelData("mediamill-like (synthetic)", features, labels, prov)


def validation_test_split(
    data: MultiLabelData, rng: np.random.Generator, validation_fraction: float = 0.2
) -> tuple[MultiLabelData, MultiLabelData]:
    """Random split into a validation part (hyper-parameter tuning) and a test part (§5.1: 20/80)."""
    if not 0 < validation_fraction < 1:
        raise ValueError(f"validation_fraction={validation_fraction} must lie strictly between 0 and 1")
    n = len(data.labels)
    perm = rng.permutation(n)
    n_val = int(round(validation_fraction * n))
    return data.subset(np.sort(perm[:n_val]), data.name + " validation"), data.subset(
        np.sort(perm[n_val:]), data.name + " test"
    )
