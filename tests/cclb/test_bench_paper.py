"""The benchmark of CCLB's kernel at the paper's configuration (``benchmarks/cclb_paper.py``)."""

from __future__ import annotations

from benchmarks.cclb_paper import paper_values, run_cclb_paper


def test_paper_batch_is_notebook_04s_and_both_backends_decide_alike():
    v = paper_values()
    assert v["T"] == 10_000 and v["reps"] == 20  # the paper profile, read from parameters.yml
    row = run_cclb_paper(T=40)
    assert row["configurations"] == 7  # OFULog+, CCLB, epsilon-CCLB, two more epsilons, two more taus
    assert row["n_runs"] == row["configurations"] * row["replications"] == 140
    assert row["T"] == 40
    assert row["same_decisions"] and row["first_different_round"] is None
    assert row["numpy_steps_per_second"] > 0 and row["compiled_steps_per_second"] > 0
    assert abs(row["kernel_speedup"] - row["numpy_seconds"] / row["compiled_seconds"]) < 1e-12
