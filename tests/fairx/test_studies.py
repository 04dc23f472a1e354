"""The studies of tuned algorithms (:mod:`causalbandits_lib.fairx.studies`), on hand-made runs
whose tables and metrics are computed by hand."""

from __future__ import annotations

import numpy as np
import pytest

from causalbandits_lib.core import checks
from causalbandits_lib.fairx import studies
from causalbandits_lib.fairx.data import MultiLabelData
from causalbandits_lib.fairx.experiments import FairnessRun, Tuned
from causalbandits_lib.fairx.studies import RegretProtocol, ReplayStudy, TunedSet
from tests.recording_notebook import RecordingNotebook


def tuned(name, final_fr, final_rr, c=2.0, chosen=None, rounds=None, uniform=None):
    """A tuned algorithm with one configuration whose cumulative regrets grow linearly to the given
    final values over the checkpoints 1, 2, 4, 8 (one row per run)."""
    t = np.array([1.0, 2.0, 4.0, 8.0])
    fr = np.asarray(final_fr, dtype=float)[:, None, None] * (t / 8.0)
    rr = np.asarray(final_rr, dtype=float)[:, None, None] * (t / 8.0)
    extra = {}
    if rounds is not None:
        extra["rounds"] = np.asarray(rounds, dtype=float)[:, None, None] * np.ones((1, 1, 4))
    if uniform is not None:
        extra["uniform"] = np.asarray(uniform, dtype=float)[:, None, None] * np.ones((1, 1, 4))
    run = FairnessRun(t, fr, rr, {}, np.arange(len(final_fr)), 0, 8, **extra)
    return Tuned(name, np.array([c]), None, chosen or {"eps": np.array([0.1])}, run)


@pytest.fixture
def three():
    # final FR per run: A (1, 2), B (3, 5), C (2, 2); final RR: A (5, 5), B (1, 1), C (3, 3)
    return TunedSet(
        A=tuned("A", [1, 2], [5, 5], uniform=[20, 20]),
        B=tuned("B", [3, 5], [1, 1]),
        C=tuned("C", [2, 2], [3, 3]),
    )


def test_finals_best_worst_and_opposite_pairs(three):
    assert three.final("A").tolist() == [1.0, 2.0]
    assert three.final("B", 0, "reward").tolist() == [1.0, 1.0]
    assert list(three.finals(["A", "C"])) == ["A", "C"]
    # means of FR: A 1.5, B 4, C 2; of RR: A 5, B 1, C 3
    assert three.best_and_worst(["A", "B", "C"]) == ("A", "B")
    assert three.best(["B", "C"], 0, "reward") == "B"
    assert three.worst(["A", "C"]) == "C"
    # a below b on FR and above it on RR: every pair in the order FR ascending
    assert three.opposite_pairs(["A", "B", "C"]) == [("A", "B"), ("A", "C"), ("C", "B")]
    # per run (max - min) / mean of FR over A, B, C: (3 - 1) / 2 = 1 and (5 - 2) / 3 = 1
    np.testing.assert_allclose(three.relative_spread(["A", "B", "C"]), [1.0, 1.0])
    np.testing.assert_allclose(studies.relative_spread(np.array([[1.0, 4.0], [2.0, 2.0]])), [1.2, 0.0])
    assert three.uniform_rr("A").tolist() == [20.0, 20.0]
    assert studies.with_se([1.0, 3.0]) == {"mean": 2.0, "se": 1.0}


def test_fair_and_conventional_names_and_paired_checks():
    res = TunedSet(
        **{
            "FairX-UCB": tuned("FairX-UCB", [1, 2, 1], [0, 0, 0]),
            "FairX-TS": tuned("FairX-TS", [2, 3, 2.5], [0, 0, 0]),
            "UCB": tuned("UCB", [10, 12, 11], [0, 0, 0]),
            "EG": tuned("EG", [9, 9, 9], [0, 0, 0]),
        }
    )
    assert res.fair == ["FairX-UCB", "FairX-TS"]
    assert res.conventional == ["UCB"]  # our EG is not one of the paper's baselines
    below = res.below_fraction("FairX-TS", "UCB", 0.5)
    # 0.5 x UCB - FairX-TS per run: 3, 3, 3 > 0 in every run
    assert below.verdict == "reproduced"
    assert "FairX-TS < 0.5 x UCB" in below.reason
    ((label, verdict),) = res.worst_below_best(res.fair, res.conventional, 0.5).items()
    assert label == "FairX-TS < 0.5 x UCB" and verdict.verdict == "reproduced"
    ((label, _),) = res.equivalent_best_worst(res.fair, checks.Margin(np.log(2.0), "a factor 2")).items()
    assert label == "FairX-TS ≈ FairX-UCB"


def test_replay_rounds_and_reward_per_accepted_round():
    res = TunedSet(
        **{
            "FairX-EG": tuned("FairX-EG", [1, 1], [-4, 6], rounds=[2, 3]),
            "UCB": tuned("UCB", [5, 5], [0, 0], rounds=[4, 4]),
        }
    )
    assert res.accepted_rounds("FairX-EG").tolist() == [2.0, 3.0]
    assert res.reward_regret_per_accepted_round("FairX-EG").tolist() == [2.0, 2.0]  # |-4| / 2, 6 / 3
    study = ReplayStudy(
        mab=res, linear=TunedSet(**{"FairX-LinEG": tuned("FairX-LinEG", [1, 1], [0, 0], rounds=[5, 5])})
    )
    assert study.accepted_rounds_fairx() == pytest.approx(3.75)  # mean of 2.5 and 5; UCB not counted
    nb = RecordingNotebook()
    study.record(nb, "fig")
    assert nb.metrics["fig.mab.final_fairness_regret.UCB"] == 5.0
    assert nb.metrics["fig.mab.final_reward_regret.FairX-EG"] == 1.0
    assert nb.metrics["fig.linear.accepted_rounds.FairX-LinEG"] == 5.0
    assert nb.metrics["tuned.fig.mab.UCB.eps.c=2"] == 0.1
    assert study.text().splitlines()[1] == "mab    UCB           FR      5.0  RR   0.000  accepted rounds     4.0"


def test_record_and_printed_tables(three):
    nb = RecordingNotebook()
    table = three.record(nb, "fig.", c_index=0)
    assert table["B"]["fr"] == 4.0 and table["A"]["rr"] == 5.0
    assert table["C"]["slope"] == pytest.approx(1.0)  # linear growth
    assert nb.metrics["fig.final_fairness_regret.A"] == 1.5
    assert nb.metrics["fig.final_reward_regret.C"] == 3.0
    assert set(nb.curves) == {f"fig.{w}_regret.{n}" for w in ("fairness", "reward") for n in "ABC"}
    nb = RecordingNotebook()
    three.record(nb, "all.")
    assert nb.metrics["all.final_fairness_regret.A.c_2"] == 1.5
    three.record_tuned(nb, "tuned.x.")
    assert nb.metrics["tuned.x.B.eps.c=2"] == 0.1
    assert three.chosen_text().splitlines()[0] == "A         chosen per c: eps = 0.1"
    text = studies.regret_table_text({"T": {"A": {"fr": 1.25, "rr": -0.5, "slope": 0.5}}})
    assert text == "T\n  A             FR_T        1.2  RR_T     -0.50  slope 0.500"


def test_split_finals_metrics_and_lines(three):
    lin = TunedSet(L=tuned("L", [6, 8], [0, 0]))
    metrics, text = studies.split_finals([three, three], [lin, lin], 0, 0)
    assert metrics["splits.yeast_mab.final_fairness_regret.B.split_1"] == 4.0
    assert metrics["splits.yeast_linear.final_fairness_regret.L.split_0"] == 7.0
    assert len(metrics) == 8
    assert text.splitlines()[1] == "split 1: FR_T MAB (c=2) A 2, B 4, C 2 | linear (c=2) L 7"


def test_over_splits_one_split_is_its_own_verdict_several_are_instances(three):
    seen = []

    def verdict_of(res, i):
        seen.append(i)
        return checks.check_at_most(1.0, 2.0)

    one = studies.over_splits(verdict_of, [three])
    assert one == checks.check_at_most(1.0, 2.0) and seen == [0]
    several = studies.over_splits(verdict_of, [three, three])
    assert seen == [0, 0, 1]
    assert set(several.details["instances"]) == {"split 0", "split 1"}


def test_protocol_environments_draw_the_split_and_the_map_from_their_named_streams():
    rng_of = lambda name: np.random.default_rng(sum(map(ord, name)))  # noqa: E731
    d = MultiLabelData("tiny", np.arange(20, dtype=float).reshape(10, 2), (np.arange(30).reshape(10, 3) % 2))
    protocol = RegretProtocol(0.3, 4, 1.0, 1, 2)
    val, test = protocol.environments(d, rng_of, "k")
    perm = rng_of("split/k").permutation(10)
    assert np.array_equal(val.labels, d.labels[np.sort(perm[:3])])
    assert np.array_equal(test.labels, d.labels[np.sort(perm[3:])])
    lin_val, _ = protocol.environments(d, rng_of, "k", "linear")
    assert lin_val.contexts.shape[0] == 3 and lin_val.contexts.shape[-1] == 4


def test_protocol_tune_passes_the_setting_s_algorithms_and_dimension(monkeypatch):
    calls = []

    def fake(
        names, algorithms, grids, c_values, val, test, K, d, T_tune, n_tune_runs, T, n_runs, seed, jobs, scheduler
    ):
        calls.append((tuple(names), K, d, T_tune, n_tune_runs, T, n_runs, seed, jobs, scheduler))
        return {n: n for n in names}

    monkeypatch.setattr(studies, "tune_and_test", fake)
    protocol = RegretProtocol(0.2, 50, 1.0, 2, 20, 3, "tcp://x")
    out = protocol.tune("mab", [10.0], ("v", "t"), 14, 100, 1000, 5)
    assert isinstance(out, TunedSet) and list(out) == list(studies.MAB)
    protocol.tune("linear", [3.0], ("v", "t"), 14, 100, 1000, 6)
    assert calls[0][1:] == (14, None, 100, 2, 1000, 20, 5, 3, "tcp://x")
    assert calls[1][0] == studies.LIN and calls[1][2] == 50


def test_replay_study_tunes_one_algorithm_at_a_time_per_mode(monkeypatch):
    calls = []

    class Env:
        def __init__(self, log, events, mode):
            self.n_rounds, self.mode = events.stop - events.start, mode

    class Log:
        def days(self, first, last):
            return slice(10 * first, 10 * (last + 1))

    def fake(
        names, algorithms, grids, c_values, val, test, K, d, T_tune, n_tune_runs, T, n_runs, seed, jobs, scheduler
    ):
        calls.append((names, val.mode, K, d, T_tune, T))
        return {names[0]: names[0]}

    monkeypatch.setattr(studies, "tune_and_test", fake)
    monkeypatch.setattr(studies, "ReplayEnvironment", Env)
    out = studies.replay_study(Log(), (0, 0), (1, 2), 1.0, 40, 20, 1, 2, 0)
    assert list(out) == ["mab", "linear"] and list(out["mab"]) == list(studies.REPLAY_MAB)
    assert calls[0] == (["FairX-UCB"], "mab", 40, None, 10, 20)
    assert calls[-1] == (["LinTS"], "linear", 20, 36, 10, 20)
    assert len(calls) == len(studies.REPLAY_MAB) + len(studies.LIN)
