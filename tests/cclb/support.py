"""Shared pieces of the cclb tests: the default generator and a recorded run."""

from __future__ import annotations

from causalbandits_lib.cclb.experiments import Played, PlayedRounds
from causalbandits_lib.cclb.generator import RoundGenerator
from causalbandits_lib.core.runner import simulate

GEN = RoundGenerator()


def play(env, policy, T: int, seed: int, n_runs: int, rounds=(), probe=None) -> Played:
    """Simulate and keep the played features, outcomes and actions (and the probes' returns)."""
    result = simulate(env, policy, T, seed, n_runs=n_runs, metrics=(), recorders=[PlayedRounds(rounds, probe)])
    return result.recorded["played"]


def played_data(T: int, seed: int = 0, n_runs: int = 2):
    """``X (R, n, T)`` and ``y (R, T)`` of OFULog+ on the default generator."""
    from causalbandits_lib.cclb.algorithms import OFULogPlus
    from causalbandits_lib.cclb.environment import FairLogisticBandit

    kept = play(FairLogisticBandit(GEN), OFULogPlus(), T, seed, n_runs)
    return kept.X, kept.y
