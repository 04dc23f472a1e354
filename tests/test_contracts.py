"""The protocol conformance test: every (environment, policy) pair and every identifier that a
chapter registers follows the protocols, gives identical numbers all at once and one run at a
time, and gives each run the same numbers whatever runs are simulated beside it."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.book.chapters import chapter_names, registry_entries
from causalbandits_lib.core.environments import BernoulliBandit
from causalbandits_lib.core.policies import UCB1
from causalbandits_lib.core.registry import BanditEntry, ConformanceError, conformance
from causalbandits_lib.core.streams import RunStreams


def _collect():
    """Every chapter's entries; a chapter whose registry cannot be read becomes one failing case."""
    out = []
    for chapter in chapter_names():
        try:
            out.extend(pytest.param(e, id=e.name) for e in registry_entries([chapter]))
        except Exception as exc:  # noqa: BLE001 - reported as the failing case of that chapter
            out.append(pytest.param(exc, id=f"{chapter}.registry"))
    return out


ENTRIES = _collect()


def test_every_chapter_registers_something():
    chapters = {e.values[0].name.split(".")[0] for e in ENTRIES if not isinstance(e.values[0], Exception)}
    assert chapters == set(chapter_names())
    names = [e.values[0].name for e in ENTRIES if not isinstance(e.values[0], Exception)]
    assert len(names) == len(set(names)), "registry entry names must be unique"


@pytest.mark.parametrize("entry", ENTRIES)
def test_entry_conforms(entry):
    if isinstance(entry, Exception):
        raise entry
    compared = conformance(entry)
    assert compared


class _LeakyUCB1(UCB1):
    """A policy whose tie-breaking uses one generator shared by all runs: its runs depend on their
    neighbours, which the conformance check must detect."""

    def reset(self, streams: RunStreams) -> None:
        super().reset(streams)
        self._shared = np.random.default_rng(streams.seed)

    def select(self, t, context):
        arms = super().select(t, context)
        flip = self._shared.random(len(arms)) < 0.3
        return np.where(flip, (arms + 1) % self.n_arms, arms)


class _RunsAxisForgotten(BernoulliBandit):
    def pull(self, t, actions):
        out = super().pull(t, actions)
        out["regret"] = out["regret"].sum(keepdims=True)
        return out


def test_the_check_catches_a_run_that_depends_on_its_neighbours():
    entry = BanditEntry("primer.leaky", lambda: BernoulliBandit([0.6, 0.5]), lambda: _LeakyUCB1(2), T=50)
    with pytest.raises(ConformanceError, match="differ"):
        conformance(entry)


def test_the_check_catches_a_missing_runs_axis():
    entry = BanditEntry("primer.flat", lambda: _RunsAxisForgotten([0.6, 0.5]), lambda: UCB1(2), T=20)
    with pytest.raises(ConformanceError, match="leading runs axis"):
        conformance(entry)


class _OffByALittle(UCB1):
    """A policy whose compiled path drifts from its numpy path by 1e-6 per reward."""

    def compiled(self, env):
        from causalbandits_lib.core.kernels import UCB1Kernel

        kernel = UCB1Kernel(self, env)

        class Drifting:
            outputs = kernel.outputs

            def run(self, t0, t1, out):
                kernel.run(t0, t1, out)
                out["reward"] += 1e-6

        return Drifting()


def test_the_check_catches_a_kernel_that_differs_from_its_reference():
    entry = BanditEntry("primer.drift", lambda: BernoulliBandit([0.6, 0.5]), lambda: _OffByALittle(2), T=30)
    with pytest.raises(ConformanceError, match="compiled kernel and the numpy reference differ in 'reward'"):
        conformance(entry)
