"""Named random streams: every random number of the book is derived here from one root seed.

Randomness is organised so that **run ``i``'s numbers depend only on the root seed, on ``i`` and
on the name of the stream**, never on how many runs are simulated beside it, nor on the chunk size
used to draw them:

- run ``i``'s stream ``name`` is ``Generator(PCG64(SeedSequence(seed, spawn_key=(i, key(name)))))``,
  where ``key`` is a stable 32-bit hash of the name (:func:`stream_key`);
- per-round noise of a fixed shape is drawn from each run's generator in chunks of rounds and
  stacked (:class:`RoundNoise`), so simulating runs ``[0..99]`` together gives, run for run,
  exactly what 100 separate one-run simulations give;
- a notebook's own purposes (generating an instance, a data set) get
  ``SeedSequence(seed, spawn_key=(2**32 + key(name),))`` (:func:`notebook_seed_sequence`), which
  can never collide with a run's streams (run indices are below ``2**32``).

**Configurations x replications.** Comparing several configurations of one algorithm (thresholds,
step sizes, ...) on common random numbers is done on the runs axis: with ``replications=n``, run
``i`` is replication ``i % n`` of configuration ``i // n``, and every stream of run ``i`` is the
stream of run ``i % n``. All configurations of a replication then see the same contexts, reward
noise and tie-breaking numbers, and one vectorised simulation steps all of them
(:meth:`RunStreams.per_config` spreads per-configuration values over the runs).

Distributions whose parameters change every round (a Beta posterior, say) are drawn by inversion
from per-round uniforms, e.g. ``scipy.special.betaincinv(a, b, u)``, which keeps them vectorised and
seeded the same way.
"""

from __future__ import annotations

import hashlib
from typing import Sequence

import numpy as np

__all__ = [
    "NOTEBOOK_STREAM_OFFSET",
    "SEED_SCHEME",
    "stream_key",
    "run_seed_sequence",
    "notebook_seed_sequence",
    "notebook_rng",
    "run_indices",
    "RoundNoise",
    "RunStreams",
]

#: Offset of the spawn keys of a notebook's own streams (above every run index).
NOTEBOOK_STREAM_OFFSET = 2**32

#: The seed derivation in words (stored in every record).
SEED_SCHEME = (
    "run i, stream s: SeedSequence(root, spawn_key=(i, sha256(s)[:4])); "
    "notebook stream s: SeedSequence(root, spawn_key=(2**32 + sha256(s)[:4],))"
)


def stream_key(name: str) -> int:
    """Stable 32-bit integer for a stream name (SHA-256 based, identical on every platform)."""
    return int.from_bytes(hashlib.sha256(name.encode("utf-8")).digest()[:4], "little")


def run_seed_sequence(seed: int, run: int, name: str) -> np.random.SeedSequence:
    """The :class:`~numpy.random.SeedSequence` of stream ``name`` of run ``run``."""
    if seed < 0 or run < 0:
        raise ValueError(f"seed and run must be non-negative, got seed={seed}, run={run}")
    return np.random.SeedSequence(seed, spawn_key=(run, stream_key(name)))


def notebook_seed_sequence(seed: int, name: str) -> np.random.SeedSequence:
    """An independent :class:`~numpy.random.SeedSequence` for a named purpose of a notebook
    (generating an instance, say); simulations derive their per-run streams from the root seed
    themselves (:class:`RunStreams`)."""
    if seed < 0:
        raise ValueError(f"seed must be non-negative, got seed={seed}")
    return np.random.SeedSequence(seed, spawn_key=(NOTEBOOK_STREAM_OFFSET + stream_key(name),))


def notebook_rng(seed: int, name: str) -> np.random.Generator:
    """A :class:`numpy.random.Generator` on :func:`notebook_seed_sequence`."""
    return np.random.Generator(np.random.PCG64(notebook_seed_sequence(seed, name)))


def run_indices(n_runs: int | None, runs: Sequence[int] | None) -> np.ndarray:
    """The global run indices named by ``n_runs`` (``0..n_runs-1``) or ``runs``, exactly one given."""
    if (n_runs is None) == (runs is None):
        raise ValueError("give exactly one of n_runs (runs 0..n_runs-1) or runs (explicit indices)")
    if runs is None:
        if int(n_runs) < 1:
            raise ValueError(f"n_runs={n_runs} must be at least 1")
        return np.arange(int(n_runs))
    return np.asarray(list(runs), dtype=np.int64)


class RoundNoise:
    """Per-round random numbers of a fixed shape for every run, drawn in chunks.

    ``at(t)`` returns an array of shape ``(n_runs, *shape)`` for round ``t``. Rounds must be
    requested in increasing order (each at most once is not required; a round may be re-read).

    Parameters
    ----------
    generators : list of numpy.random.Generator
        One generator per run (already specific to this stream).
    shape : tuple of int
        Shape of one round's draw for one run.
    kind : {"uniform", "normal", "exponential"}
        Distribution: U[0, 1), N(0, 1) or Exp(1).
    chunk : int
        Rounds drawn per refill. Results do not depend on it.
    """

    _KINDS = ("uniform", "normal", "exponential")

    def __init__(self, generators: Sequence[np.random.Generator], shape: tuple[int, ...], kind: str, chunk: int = 1024):
        if kind not in self._KINDS:
            raise ValueError(f"kind={kind!r} is not allowed; use one of {self._KINDS}")
        if chunk < 1:
            raise ValueError(f"chunk={chunk} must be a positive integer")
        self._gens = list(generators)
        self.shape = tuple(int(s) for s in shape)
        self.kind = kind
        self.chunk = int(chunk)
        self._start = 0
        self._buf: np.ndarray | None = None

    def _draw(self, gen: np.random.Generator, out: np.ndarray) -> None:
        # ``out=`` fills the chunk in place: the same numbers as drawing a new array of its shape
        if self.kind == "uniform":
            gen.random(out=out)
        elif self.kind == "normal":
            gen.standard_normal(out=out)
        else:
            gen.standard_exponential(out=out)

    def at(self, t: int) -> np.ndarray:
        """Noise of round ``t`` (0-based), shape ``(n_runs, *shape)``."""
        while self._buf is None or t >= self._start + self.chunk:
            # Chunks are drawn in order (skipped ones too), so round t always gets the same numbers.
            if self._buf is not None:
                self._start += self.chunk
            # a new buffer per chunk: arrays returned by earlier ``at`` calls stay valid
            self._buf = np.empty((len(self._gens), self.chunk, *self.shape))
            for i, g in enumerate(self._gens):
                self._draw(g, self._buf[i])
        if t < self._start:
            raise ValueError(f"round {t} was requested after round {self._start}; rounds must not go back")
        return self._buf[:, t - self._start]

    def block(self, t0: int, t1: int) -> np.ndarray:
        """Noise of rounds ``t0 .. t1-1``, shape ``(n_runs, t1 - t0, *shape)``: the same numbers as
        ``at(t)`` for each of those rounds (a view when the rounds lie in one chunk). Compiled
        kernels read their random numbers through it."""
        if not 0 <= t0 < t1:
            raise ValueError(f"block({t0}, {t1}) must name at least one round, t0 >= 0")
        self.at(t0)
        if t1 <= self._start + self.chunk:
            return self._buf[:, t0 - self._start : t1 - self._start]
        parts = [self._buf[:, t0 - self._start :]]
        while self._start + self.chunk < t1:
            self.at(self._start + self.chunk)
            parts.append(self._buf[:, : min(self.chunk, t1 - self._start)])
        return np.concatenate(parts, axis=1)


class RunStreams:
    """Named random streams for a set of runs.

    Parameters
    ----------
    seed : int
        The root seed.
    runs : sequence of int
        Global indices of the runs simulated together (``range(n_runs)``, or ``[i]`` for one run).
    prefix : str
        Namespace prepended to every stream name (the runner gives the environment ``"env/"`` and
        the policy ``"policy/"``, so their draws never collide).
    replications : int, optional
        Lay the runs out as configurations x replications (see the module docstring): run ``i``
        draws the streams of run ``i % replications`` and belongs to configuration
        ``i // replications``. ``None``: every run is its own replication of one configuration.

    Attributes
    ----------
    runs : ndarray (n_runs,)
        The global run indices.
    base : ndarray (n_runs,)
        The run index each run's streams are derived from (``runs`` without replications).
    config : ndarray (n_runs,)
        The configuration of each run (all 0 without replications).
    """

    def __init__(self, seed: int, runs: Sequence[int], prefix: str = "", replications: int | None = None):
        self.seed = int(seed)
        self.runs = np.asarray(list(runs), dtype=np.int64)
        if self.runs.ndim != 1 or len(self.runs) == 0:
            raise ValueError("runs must be a non-empty sequence of run indices")
        if len(np.unique(self.runs)) != len(self.runs):
            raise ValueError("runs must not repeat a run index")
        self.prefix = prefix
        if replications is None:
            self.base, self.config = self.runs, np.zeros(len(self.runs), dtype=np.int64)
        else:
            if int(replications) < 1:
                raise ValueError(f"replications={replications} must be a positive integer")
            self.base, self.config = self.runs % int(replications), self.runs // int(replications)
        self.replications = None if replications is None else int(replications)

    @property
    def n_runs(self) -> int:
        return len(self.runs)

    def child(self, prefix: str) -> "RunStreams":
        """The same runs (and layout) under a nested namespace."""
        return RunStreams(self.seed, self.runs, self.prefix + prefix, self.replications)

    def generators(self, name: str) -> list[np.random.Generator]:
        """One independent :class:`numpy.random.Generator` per run for stream ``name``."""
        full = self.prefix + name
        return [np.random.Generator(np.random.PCG64(run_seed_sequence(self.seed, int(r), full))) for r in self.base]

    def per_round(self, name: str, shape: tuple[int, ...] = (), kind: str = "uniform", chunk: int = 1024) -> RoundNoise:
        """Per-round noise of ``shape`` for every run (see :class:`RoundNoise`)."""
        return RoundNoise(self.generators(name), shape, kind, chunk)

    def once(self, name: str, shape: tuple[int, ...] = (), kind: str = "uniform") -> np.ndarray:
        """A single draw of ``shape`` per run, stacked to ``(n_runs, *shape)``."""
        return RoundNoise(self.generators(name), shape, kind, chunk=1).at(0)

    def replicas(self) -> "RunStreams":
        """The distinct replications among these runs, as runs of their own (sorted), with the same
        prefix: an environment that computes something once per replication (not once per
        configuration) draws it from these streams and spreads it with ``inverse``."""
        return RunStreams(self.seed, np.unique(self.base), self.prefix)

    @property
    def inverse(self) -> np.ndarray:
        """For each run, its position in :meth:`replicas` (``replicas().runs[inverse] == base``)."""
        return np.unique(self.base, return_inverse=True)[1]

    def per_config(self, values, name: str) -> np.ndarray:
        """A value per run from a scalar or one value per configuration.

        Raises
        ------
        ValueError
            If ``values`` is not a number or a 1-d list, or gives fewer values than there are
            configurations among these runs.
        """
        arr = np.atleast_1d(np.asarray(values, dtype=float))
        if arr.ndim != 1:
            raise ValueError(f"{name} must be a number or a list of numbers, got shape {arr.shape}")
        if len(arr) == 1:
            return np.full(len(self.config), arr[0])
        if self.config.max() >= len(arr):
            raise ValueError(
                f"{name} gives {len(arr)} configurations but run {int(self.runs[self.config.argmax()])} "
                f"belongs to configuration {int(self.config.max())}"
            )
        return arr[self.config]
