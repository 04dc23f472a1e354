"""The chapter's registry: what it registers and the settings the benchmark relies on.

Conformance itself (protocols, all runs at once equal one at a time, runs independent of their
neighbours) is ``tests/test_contracts.py``.
"""

from __future__ import annotations

from causalbandits_lib.core.registry import BanditEntry
from causalbandits_lib.core.runner import simulate
from causalbandits_lib.fucb import registry as R
from causalbandits_lib.fucb.auditing import Audited
from causalbandits_lib.fucb.experiments import FUCB_VARIANTS


def test_every_pair_the_notebooks_simulate_is_registered():
    names = [e.name for e in R.ENTRIES]
    assert len(names) == len(set(names)) and all(n.startswith("fucb.") for n in names)
    assert all(isinstance(e, BanditEntry) for e in R.ENTRIES)
    # notebook 2 (and the benchmark): plain runs on the Email bandit
    assert {"fucb.ucb_email", "fucb.cucb_email", "fucb.ducb_email", "fucb.fucb_email"} <= set(names)
    # notebook 4: every algorithm with the auditor
    key = lambda n: n.lower().replace("-", "_")  # noqa: E731
    assert {f"fucb.email_audited.{key(n)}" for n in ("UCB", "C-UCB", "D-UCB", *FUCB_VARIANTS)} <= set(names)
    # notebook 5: D-UCB, Fair-LinUCB and F-UCB with both estimators and both radii
    adult = {
        "fucb.adult_audited.d_ucb",
        "fucb.adult_audited.fair_linucb",
        *(f"fucb.adult_audited.f_ucb_{w}_{r}" for w in ("bounds", "identified") for r in ("paper", "diff")),
    }
    assert adult <= set(names)
    for e in R.ENTRIES:
        if e.name.split(".")[1] in ("email_audited", "adult_audited", "toy_audited"):
            assert isinstance(e.make_policy(), Audited)
            # every per-round value compared: the named list is all a simulation produces
            every = simulate(e.make_env(), e.make_policy(), 3, 0, n_runs=1, metrics=None, backend="numpy")
            assert sorted(e.metrics) == sorted(every.metrics), e.name


def test_benchmark_entries_keep_the_former_bench_settings():
    bench = {e.name: e for e in R.ENTRIES if e.bench_T is not None}
    assert set(bench) == {
        "fucb.ucb_email",
        "fucb.cucb_email",
        "fucb.ducb_email",
        "fucb.fucb_email",
        "fucb.fucb_audited_email",
        "fucb.fair_linucb_email",
    }
    for e in bench.values():
        assert (e.bench_T, tuple(e.bench_runs), e.target_ratio, e.seed) == (1000, (1, 10, 100), None, 0)
    assert bench["fucb.fucb_email"].make_policy().tau == 0.3


def test_the_small_adult_video_bandit_is_the_books_instance_in_small():
    s = R.adult()
    assert sorted(s.user_graph.edges()) == sorted(R.ADULT_USER_GRAPH)
    assert s.separator == ("age", "income", "ratings", "views")
    assert s.estimator().kind == "bounded"  # descendants of sex are in W, as on the real data
    assert s.estimator("bounds").cells is not None  # W inside the user and video features: point masses
    assert len(s.online) < R.ENTRIES[0].T  # the user order wraps around within an entry's horizon
    toy_est = R.toy()
    assert toy_est[1].variables == ("Z",)  # the toy's bounded estimator takes the general sums
