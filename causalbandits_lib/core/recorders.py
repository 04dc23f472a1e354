"""What a simulation keeps: recorders for the one loop of :func:`~causalbandits_lib.core.runner.simulate`.

- :class:`PerRound`: per-round arrays ``(n_runs, T, ...)`` of named values from the feedback and
  the policy's ``diagnostics()`` (what ``simulate(..., metrics=...)`` keeps);
- :class:`RunningSums`: running sums of per-round values, copied at checkpoint rounds; memory does
  not grow with ``T`` (FairX's 2,000,000-round runs);
- :class:`AtRounds`: calls a function before the decision of chosen rounds and keeps what it
  returns (cclb probes its confidence sets this way).

A chapter writes its own recorder when it must keep something particular (cclb keeps the played
features); it follows :class:`~causalbandits_lib.core.protocols.Recorder`, most simply by
subclassing :class:`RecorderBase`.

A recorder that can also take whole blocks of rounds from a compiled kernel says which per-round
values it needs (``block_inputs``, a tuple of names, or ``None`` when it cannot) and implements
``after_block(t0, t1, values)``, where ``values[name]`` has shape ``(n_runs, t1 - t0, ...)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

__all__ = ["RecorderBase", "PerRound", "RunningSums", "CheckpointSums", "AtRounds", "available_memory"]


def available_memory() -> int | None:
    """Bytes of memory available to new work (``MemAvailable``), None if unknown."""
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except ImportError:  # pragma: no cover
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover
        pass
    return None


class RecorderBase:
    """No-op hooks; subclasses override what they need."""

    name = "recorder"
    #: per-round values needed to record whole blocks of rounds (None: this recorder cannot)
    block_inputs: tuple[str, ...] | None = None
    #: the rounds (0-based, sorted) before whose decision ``before_decision`` must see the policy;
    #: None: every round. A recorder that overrides ``before_decision`` and names its rounds keeps
    #: the compiled kernel: the runner ends a block before each of them (see ``simulate``)
    probe_rounds: tuple[int, ...] | None = None

    def after_block(self, t0: int, t1: int, values: Mapping[str, np.ndarray]) -> None:
        raise NotImplementedError(f"recorder {self.name!r} cannot record blocks of rounds")

    def start(self, T: int, runs: np.ndarray) -> None:
        self.T, self.runs = int(T), np.asarray(runs)

    def before_decision(self, t: int, context: Any, policy) -> None:
        pass

    def after_round(
        self, t: int, context: Any, actions: np.ndarray, feedback: Mapping[str, np.ndarray], policy
    ) -> None:
        pass

    def result(self) -> Any:
        return None


class PerRound(RecorderBase):
    """Keep named per-round values, each as an array of shape ``(n_runs, T, ...)``.

    Parameters
    ----------
    names : sequence of str or None
        Looked up in the environment's feedback and then in the policy's optional
        ``diagnostics()``. ``None`` keeps all of them.

    Raises
    ------
    KeyError
        (In the first round) if a name is neither in the feedback nor in the diagnostics.
    ValueError
        If a value lacks the leading runs axis.
    """

    name = "metrics"

    def __init__(self, names: Sequence[str] | None = ("regret", "reward")):
        self.names = None if names is None else list(names)
        self.block_inputs = None if names is None else tuple(self.names)

    def start(self, T: int, runs: np.ndarray) -> None:
        super().start(T, runs)
        self.store: dict[str, np.ndarray] = {}

    def after_round(self, t, context, actions, feedback, policy) -> None:
        values = dict(feedback)
        diagnostics = getattr(policy, "diagnostics", None)
        if diagnostics is not None:
            values.update(diagnostics())
        if t == 0:
            wanted = list(values) if self.names is None else self.names
            missing = [m for m in wanted if m not in values]
            if missing:
                raise KeyError(f"metric(s) {missing} are not produced; available per-round values are {sorted(values)}")
            n = len(self.runs)
            for name in wanted:
                first = np.asarray(values[name])
                if first.shape[:1] != (n,):
                    raise ValueError(
                        f"per-round value {name!r} has shape {first.shape}; expected a leading runs axis of {n}"
                    )
                self.store[name] = np.empty((n, self.T) + first.shape[1:], dtype=first.dtype)
        for name, arr in self.store.items():
            arr[:, t] = values[name]

    def after_block(self, t0: int, t1: int, values: Mapping[str, np.ndarray]) -> None:
        if t0 == 0:
            n = len(self.runs)
            for name in self.names:
                first = values[name]
                self.store[name] = np.empty((n, self.T) + first.shape[2:], dtype=first.dtype)
        for name, arr in self.store.items():
            arr[:, t0:t1] = values[name]

    def result(self) -> dict[str, np.ndarray]:
        return self.store


@dataclass
class CheckpointSums:
    """Running sums taken at checkpoint rounds.

    Attributes
    ----------
    t : ndarray (P,)
        The checkpoint rounds, 1-based.
    sums : dict of name to ndarray (n_runs, ..., P)
        ``sums[name][..., j]`` is the sum of the per-round values over rounds ``1..t[j]``.
    """

    t: np.ndarray
    sums: dict[str, np.ndarray]

    def __getitem__(self, name: str) -> np.ndarray:
        return self.sums[name]

    def mean(self, name: str) -> np.ndarray:
        """Running averages ``sum / t`` at the checkpoints."""
        return self.sums[name] / self.t


class RunningSums(RecorderBase):
    """Running sums (float64) of per-round values computed by ``values``, copied at checkpoints.

    Parameters
    ----------
    values : callable
        ``values(t, context, actions, feedback, policy)`` returns a dict of arrays with the leading
        runs axis; their shapes must not change between rounds.
    checkpoints : sequence of int
        1-based rounds at which the sums are kept (sorted and deduplicated here).
    name : str
        Key of the result in :attr:`SimulationResult.recorded`.
    block_values : callable, optional
        For compiled kernels: ``block_values(values)`` maps a block of a kernel's per-round values
        (``values[name]`` of shape ``(n_runs, B, ...)``) to the same dict of summands as ``values``,
        with a rounds axis after the runs axis. ``block_inputs`` names the kernel outputs it reads.
    block_inputs : tuple of str, optional

    Notes
    -----
    The first round's values are copied and later rounds added in place, so a sum equals
    ``np.cumsum`` of the per-round values along the rounds, bit for bit.
    """

    def __init__(
        self,
        values: Callable[..., Mapping[str, np.ndarray]],
        checkpoints: Sequence[int],
        name: str = "sums",
        block_values: Callable[[Mapping[str, np.ndarray]], Mapping[str, np.ndarray]] | None = None,
        block_inputs: Sequence[str] | None = None,
    ):
        self.values = values
        if (block_values is None) != (block_inputs is None):
            raise ValueError(f"recorder {name!r}: give both block_values and block_inputs, or neither")
        self.block_values = block_values
        self.block_inputs = None if block_inputs is None else tuple(block_inputs)
        self.points = np.unique(np.asarray(list(checkpoints), dtype=np.int64))
        if self.points.size == 0:
            raise ValueError(f"recorder {name!r}: checkpoints must name at least one round")
        self.name = name

    def start(self, T: int, runs: np.ndarray) -> None:
        super().start(T, runs)
        if self.points[0] < 1 or self.points[-1] > T:
            raise ValueError(
                f"recorder {self.name!r}: checkpoints must lie in 1..T={T}, got {self.points[0]}..{self.points[-1]}"
            )
        self._marks = set(int(p) for p in self.points)
        self._sums: dict[str, np.ndarray] = {}
        self._out: dict[str, np.ndarray] = {}
        self._j = 0

    def after_round(self, t, context, actions, feedback, policy) -> None:
        vals = self.values(t, context, actions, feedback, policy)
        if t == 0:
            for k, v in vals.items():
                self._sums[k] = np.array(v, dtype=float)
                self._out[k] = np.empty(self._sums[k].shape + (len(self.points),))
        else:
            for k, v in vals.items():
                self._sums[k] += v
        if t + 1 in self._marks:
            for k, s in self._sums.items():
                self._out[k][..., self._j] = s
            self._j += 1

    def after_block(self, t0: int, t1: int, values: Mapping[str, np.ndarray]) -> None:
        from .kernels import accumulate_block

        summands = self.block_values(values)
        marks = np.array([p - 1 - t0 for p in self.points if t0 < p <= t1], dtype=np.int64)
        for k, v in summands.items():
            v = np.asarray(v, dtype=float)
            if t0 == 0:
                self._sums[k] = np.array(v[:, 0])
                self._out[k] = np.empty(self._sums[k].shape + (len(self.points),))
                start = 1
            else:
                start = 0
            flat_sum = self._sums[k].reshape(len(self.runs), -1)
            flat_v = np.ascontiguousarray(v.reshape(v.shape[0], v.shape[1], -1))
            taken = accumulate_block(flat_sum, flat_v, start, marks)
            out = self._out[k].reshape(len(self.runs), -1, len(self.points))
            out[:, :, self._j : self._j + len(marks)] = taken
        self._j += len(marks)

    def result(self) -> CheckpointSums:
        return CheckpointSums(self.points, self._out)


class AtRounds(RecorderBase):
    """Call ``fn(t, context, policy)`` before the decision of each round in ``rounds`` (0-based)
    and keep the returns in round order. ``fn`` must not change the policy (probe a copy)."""

    block_inputs: tuple[str, ...] = ()

    def __init__(self, fn: Callable[[int, Any, Any], Any], rounds: Sequence[int], name: str = "at_rounds"):
        self.fn = fn
        self.rounds = set(int(r) for r in rounds)
        self.probe_rounds = tuple(sorted(self.rounds))
        self.name = name

    def after_block(self, t0: int, t1: int, values) -> None:
        pass

    def start(self, T: int, runs: np.ndarray) -> None:
        super().start(T, runs)
        self._out: list[Any] = []

    def before_decision(self, t, context, policy) -> None:
        if t in self.rounds:
            self._out.append(self.fn(t, context, policy))

    def result(self) -> list[Any]:
        return self._out
