"""The measurements of ``fairx/02`` (FairX-UCB and FairX-TS on arms with yeast's label
frequencies) as objects that know their records.

- :func:`metric_key`: an algorithm's display name as one dotted word of a metric name;
- :func:`optimistic_step_gaps`: exact minus projected-gradient optimistic value on random boxes
  (:class:`StepGaps`, with its metrics and printed summary);
- :func:`run_table`, :func:`record_runs`: final regrets and slopes of simulated runs, and the
  metrics and curves a notebook records for them;
- :func:`late_fairness_per_round`: the per-round fairness regret over the last tenth of a run;
- :func:`run_proof_steps`: the steps of Theorem 3.2.1's proof measured on FairX-UCB runs
  (:class:`ProofSteps`);
- :func:`time_per_round`: wall-clock microseconds per round, repeated.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..core.curves import summarise_checkpoints
from ..core.runner import simulate
from . import optimism, theory
from .algorithms import FairXUCB
from .experiments import FairnessRun, simulate_fairness
from .model import ArmsBandit

__all__ = [
    "metric_key",
    "StepGaps",
    "optimistic_step_gaps",
    "run_table",
    "record_runs",
    "late_fairness_per_round",
    "ProofSteps",
    "run_proof_steps",
    "time_per_round",
]


def metric_key(name: str) -> str:
    """``"FairX-UCB (theory w0, exact)"`` -> ``"FairX-UCB_theory_w0_exact"``: spaces to ``_``,
    brackets and commas dropped."""
    return name.replace(" ", "_").replace("(", "").replace(")", "").replace(",", "")


@dataclass(frozen=True)
class StepGaps:
    """Optimistic value of the exact box solver minus that of the paper's projected gradient
    steps, per box, for each width ``w0`` (``gaps[w0]``, shape ``(n_boxes,)``)."""

    gaps: dict[float, np.ndarray]

    def metrics(self) -> dict[str, float]:
        """``optimistic_step.value_gap_mean.w0_<w0>``: the mean gap per width."""
        return {f"optimistic_step.value_gap_mean.w0_{w0:.3g}": g.mean() for w0, g in self.gaps.items()}

    def text(self) -> str:
        """One printed line per width: mean, largest and smallest gap and the share of boxes where
        the gradient steps fall short by more than 1e-6."""
        return "\n".join(
            f"w0 = {w0:.3g}: exact - PGD value gap mean {g.mean():.2e}, max {g.max():.2e}, "
            f"PGD short by > 1e-6 in {np.mean(g > 1e-6):.0%} of boxes, min gap {g.min():.1e}"
            for w0, g in self.gaps.items()
        )


def optimistic_step_gaps(
    merit, means: np.ndarray, w0s: Sequence[float], rng: np.random.Generator, n_boxes: int
) -> StepGaps:
    """Random boxes around ``means`` and the gap between the exact optimistic step and the
    projected gradient steps on them, for each width in ``w0s``.

    The pull counts are log-uniform in ``[1, 1e5]``, the centres ``N(μ, μ(1-μ)/N)`` clipped to
    ``[0, 1]`` (Bernoulli arms), both drawn once from ``rng`` (counts first); the box of width
    ``w0`` is ``centre ± w0/√N``.
    """
    means = np.asarray(means, dtype=float)
    K = means.size
    counts = np.exp(rng.uniform(0, np.log(1e5), size=(n_boxes, K)))
    centres = np.clip(means + rng.normal(0, 1, size=(n_boxes, K)) * np.sqrt(means * (1 - means) / counts), 0, 1)
    gaps = {}
    for w0 in w0s:
        lower, upper = centres - w0 / np.sqrt(counts), centres + w0 / np.sqrt(counts)
        exact_v = optimism.optimistic_box_exact(merit, lower, upper)[1]
        pgd_v = optimism.fair_value(merit, optimism.optimistic_box_pgd(merit, lower, upper, start=centres))
        gaps[w0] = exact_v - pgd_v
    return StepGaps(gaps)


def run_table(runs: Mapping[str, FairnessRun]) -> dict[str, dict[str, float]]:
    """Per run: mean final fairness regret ``fr``, mean final reward regret ``rr`` and the
    second-half log-log slope of the mean fairness regret ``slope`` (configuration 0)."""
    return {
        name: {"fr": run.final().mean(), "rr": run.final("reward").mean(), "slope": run.slope()}
        for name, run in runs.items()
    }


def record_runs(nb: Any, runs: Mapping[str, FairnessRun], prefix: str) -> dict[str, dict[str, float]]:
    """Record :func:`run_table` as ``<prefix>final_fairness_regret.<key>``,
    ``<prefix>final_reward_regret.<key>`` and ``<prefix>fairness_regret_slope.<key>``
    (``nb.metric``) and the two regret curves (``nb.curves``), ``key`` the :func:`metric_key` of
    the run's name; returns the table."""
    table = run_table(runs)
    for name, run in runs.items():
        key = metric_key(name)
        nb.metric(f"{prefix}final_fairness_regret.{key}", table[name]["fr"])
        nb.metric(f"{prefix}final_reward_regret.{key}", table[name]["rr"])
        nb.metric(f"{prefix}fairness_regret_slope.{key}", table[name]["slope"])
        nb.curves[f"{prefix}fairness_regret.{key}"] = summarise_checkpoints(run.t, run.fairness[:, 0])
        nb.curves[f"{prefix}reward_regret.{key}"] = summarise_checkpoints(run.t, run.reward[:, 0])
    return table


def late_fairness_per_round(run: FairnessRun, from_fraction: float = 0.9) -> np.ndarray:
    """Per run: the fairness regret per round between the first checkpoint at or after
    ``from_fraction · T`` and the horizon (configuration 0)."""
    t, fr = run.t, run.fairness[:, 0]
    i0 = int(np.argmax(t >= from_fraction * run.T))
    return (fr[:, -1] - fr[:, i0]) / (t[-1] - t[i0])


@dataclass(frozen=True)
class ProofSteps:
    """The steps of Theorem 3.2.1's proof on FairX-UCB runs (:class:`~.theory.UCBProofSteps`,
    one value per run in ``steps``) and the bounds they are compared with.

    Attributes
    ----------
    steps : dict of str to ndarray (R,)
        ``played``, ``expected``, ``rounds``, ``covered``, ``max_step_ratio``.
    width_bound : float
        ``2√(TK)``, the bound on the played widths' sum.
    azuma : float
        ``√(2T ln(4/δ))``, Lemma A.4.2's bound on the expected minus played widths.
    T : int
    """

    steps: dict[str, np.ndarray]
    width_bound: float
    azuma: float
    T: int

    @property
    def deviation(self) -> np.ndarray:
        """Per run: ``|Σ E 1/√N − Σ 1/√N_(t,a_t)|``."""
        return np.abs(self.steps["expected"] - self.steps["played"])

    def metrics(self) -> dict[str, float]:
        """``proof_steps.*``: the largest width sum and deviation over their bounds, the share of
        covered rounds and the largest per-round step ratio."""
        s = self.steps
        return {
            "proof_steps.width_sum_over_bound_max": float(s["played"].max() / self.width_bound),
            "proof_steps.azuma_deviation_over_bound_max": float(self.deviation.max() / self.azuma),
            "proof_steps.covered_round_fraction": float(s["covered"].sum() / s["rounds"].sum()),
            "proof_steps.per_round_step_ratio_max": float(s["max_step_ratio"].max()),
        }

    def text(self) -> str:
        """The measured steps next to their bounds, as printed."""
        s = self.steps
        return (
            f"T = {self.T:,}: Σ 1/√N_(t,a_t) = {s['played'].mean():.1f} (max {s['played'].max():.1f}) "
            f"against 2√(TK) = {self.width_bound:.1f}; "
            f"|Σ E 1/√N − Σ 1/√N_(t,a_t)| at most {self.deviation.max():.2f} against √(2T ln(4/δ)) = {self.azuma:.1f}; "
            f"μ* in the box on {s['covered'].sum() / s['rounds'].sum():.1%} of rounds; "
            f"largest FR_t / step = {s['max_step_ratio'].max():.2e}"
        )


def run_proof_steps(merit, means: np.ndarray, T: int, delta: float, seed: int, n_runs: int) -> ProofSteps:
    """Run FairX-UCB (the theory's width at ``T`` and ``delta``, exact optimistic step) on Bernoulli
    arms with ``means`` for ``n_runs`` runs (numpy path) and measure its proof's steps."""
    K = np.asarray(means).size
    rec = theory.UCBProofSteps(merit)
    policy = FairXUCB(merit, float(theory.theory_width(T, K, delta)), K, solver="exact")
    simulate(ArmsBandit(means), policy, T, seed, n_runs=n_runs, metrics=(), recorders=[rec], backend="numpy")
    steps = {k: v[:, 0] for k, v in rec.result().items()}
    return ProofSteps(steps, float(theory.width_sum_bound(T, K)), float(theory.azuma_width_bound(T, delta)), int(T))


def time_per_round(
    makers: Mapping[str, Callable[[], Any]],
    means: np.ndarray,
    merit,
    T: int,
    seed: int,
    n_runs: int,
    repetitions: int = 5,
    timed: Callable[[str], Any] | None = None,
) -> dict[str, np.ndarray]:
    """Microseconds per round (all runs together, numpy path) of each policy of ``makers`` on
    Bernoulli arms with ``means``, ``repetitions`` times, the policies interleaved within each
    repetition; ``timed(section)`` (a context manager, e.g. ``nb.timed``) wraps each simulation.
    Returns one array of ``repetitions`` values per policy."""
    timed = timed or (lambda section: contextlib.nullcontext())
    reps: dict[str, list[float]] = {name: [] for name in makers}
    for _ in range(repetitions):
        for name, make in makers.items():
            with timed(f"timing {name}, {repetitions} x {T} rounds"):
                start = time.perf_counter()
                simulate_fairness(ArmsBandit(means), make(), merit, T, seed, n_runs=n_runs, backend="numpy")
                reps[name].append((time.perf_counter() - start) / T * 1e6)
    return {name: np.array(v) for name, v in reps.items()}
