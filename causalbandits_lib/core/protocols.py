"""The contracts between the one simulation loop and what it steps.

Every object here carries the state of all runs in arrays with a **leading runs axis** of length
``R = streams.n_runs``; one call steps every run. The protocols are ``runtime_checkable``, and the
conformance test (``tests/test_contracts.py``) checks every registered environment and policy of
every chapter against them.

The feedback contract
---------------------
``env.pull(t, actions)`` returns a dict of arrays, each with the leading runs axis:

- ``"reward"`` (required): what the learner observes, shape ``(R,)``, or ``(R, G)`` for a policy
  that steps ``G`` hyper-parameter configurations inside each run (FairX's grid search);
- exact per-round quantities computed from the model, never from the sample: ``"regret"`` (the
  expected regret of the action for that round's context), ``"arm_means"`` (``(R, K)``), and
  chapter-specific metrics (``"violation"``, ``"unfair"``, ...). A recorder keeps them;
- ``"accepted"`` (optional, replay evaluation): whether the logged event counts as a round.

Actions: ``policy.select`` returns one action per run, an integer array of shape ``(R,)`` (or
``(R, G)``); its values index the environment's actions (arms, or candidates of the round's
context). A policy may expose per-round values of its own through ``diagnostics()`` (a dict of
arrays with the runs axis), which :class:`~causalbandits_lib.core.recorders.PerRound` can keep.

Compiled fast paths
-------------------
A policy may offer a compiled fast path for an environment it knows: ``policy.compiled(env)``
returns a :class:`Kernel` (or ``None``), built after both were reset. A kernel steps every run
through a block of rounds in one call, reading the same named random streams as the readable numpy
path (through :meth:`~causalbandits_lib.core.streams.RoundNoise.block`) and updating the policy's
own state arrays in place, so the objects end in the state the numpy path leaves them in. The loop
uses a kernel only when every recorder can take whole blocks (``block_inputs`` and
``after_block``); the registry's conformance check compares every kernel with the numpy path
(identical decisions, values within 1e-9 relative).
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from .streams import RunStreams

__all__ = ["Environment", "Policy", "Recorder", "Kernel", "Identifier"]


@runtime_checkable
class Environment(Protocol):
    """What :func:`~causalbandits_lib.core.runner.simulate` needs from an environment."""

    def reset(self, streams: RunStreams) -> None:
        """Start every run afresh, drawing randomness only from ``streams``."""

    def observe(self, t: int) -> Any:
        """The context of round ``t`` for every run (``None`` for a context-free bandit)."""

    def pull(self, t: int, actions: np.ndarray) -> dict[str, np.ndarray]:
        """Play ``actions`` (one per run); returns the feedback described in the module docstring."""


@runtime_checkable
class Policy(Protocol):
    """What :func:`~causalbandits_lib.core.runner.simulate` needs from a policy."""

    def reset(self, streams: RunStreams) -> None:
        """Clear all statistics for ``streams.n_runs`` runs."""

    def select(self, t: int, context: Any) -> np.ndarray:
        """One action per run."""

    def update(self, t: int, context: Any, actions: np.ndarray, feedback: dict[str, np.ndarray]) -> None:
        """Learn from the feedback of round ``t``."""


@runtime_checkable
class Recorder(Protocol):
    """Keeps what a simulation must return, without changing it.

    The loop calls ``start`` once, ``before_decision`` after each round's context is observed and
    before the policy decides, ``after_round`` after the policy has learnt from the feedback, and
    ``result`` at the end. A recorder must not draw random numbers from the runs' streams or change
    the environment or the policy (a recorder that needs to probe the policy works on a copy).
    """

    name: str

    def start(self, T: int, runs: np.ndarray) -> None: ...

    def before_decision(self, t: int, context: Any, policy: Policy) -> None: ...

    def after_round(
        self, t: int, context: Any, actions: np.ndarray, feedback: dict[str, np.ndarray], policy: Policy
    ) -> None: ...

    def result(self) -> Any: ...


@runtime_checkable
class Kernel(Protocol):
    """A compiled fast path of one (environment, policy) pair (see the module docstring).

    ``outputs`` maps the name of every per-round value the kernel can write to its dtype and its
    shape after the runs and rounds axes; the names are those of the numpy path's feedback and
    diagnostics.
    """

    outputs: dict[str, tuple[Any, tuple[int, ...]]]

    def run(self, t0: int, t1: int, out: dict[str, np.ndarray]) -> None:
        """Step every run through rounds ``t0 .. t1-1``, writing ``out[name][:, s]`` for round
        ``t0 + s`` of every requested output (arrays of shape ``(n_runs, t1 - t0, ...)``)."""


@runtime_checkable
class Identifier(Protocol):
    """A fixed-budget pure-exploration algorithm (bestfair's CSR and its baselines).

    These are not round-by-round bandits: an identifier spends its whole budget in phases and
    returns, for every run, the arm it recommends. It follows the same randomness rule as the
    simulation loop (run ``i`` draws only from its own named streams), so ``identify(seed, runs)``
    for ``runs = [0..n)`` equals, run for run, the ``n`` results of ``identify(seed, [i])``.
    """

    def identify(self, seed: int, runs: Sequence[int]) -> Any:
        """Run every run of ``runs`` with the budget the identifier was built with; the result has
        a leading runs axis and an ``equals(other)`` method, and results of disjoint runs stack
        with ``type(result).concatenate``."""
