"""Records: atomic writes, content hashes, and the notebook session that fills them."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from causalbandits_lib.book import provenance, records
from causalbandits_lib.book.claims import verdict_badge
from causalbandits_lib.book.notebook import setup_notebook
from causalbandits_lib.book.params import ParameterError
from causalbandits_lib.core import checks

from .fake import fake_record


def minimal_record():
    return fake_record(notebook="primer/x")


def test_write_and_load_roundtrip(tmp_path):
    path = records.write_record(minimal_record(), tmp_path / "r.json")
    rec = records.load_record(path)
    assert rec["content_hash"] == records.content_hash(rec)


def test_tampered_record_is_detected(tmp_path):
    path = records.write_record(minimal_record(), tmp_path / "r.json")
    data = json.loads(path.read_text())
    data["profile"] = "paper"
    path.write_text(json.dumps(data))
    with pytest.raises(records.RecordError, match="content hash does not match"):
        records.load_record(path)


@pytest.mark.parametrize(
    "content, fragment", [("{", "not a JSON record"), ("[]", "must be a JSON object"), ('{"schema": 1}', "lacks key")]
)
def test_malformed_records_are_named(tmp_path, content, fragment):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(records.RecordError, match=fragment):
        records.load_record(path)


def test_atomic_write_leaves_old_file_on_failure(tmp_path, monkeypatch):
    path = tmp_path / "r.json"
    records.atomic_write_text(path, "old")

    def boom(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        records.atomic_write_text(path, "new")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left behind


def test_non_finite_and_numpy_values_are_stored_safely():
    assert records.to_jsonable({"a": np.float64(np.inf), "b": np.arange(3), "c": np.bool_(True)}) == {
        "a": "inf",
        "b": [0, 1, 2],
        "c": True,
    }
    with pytest.raises(TypeError):
        records.to_jsonable({"a": object()})


def test_session_validates_and_writes_a_record(record_dir):
    ns = {"profile": "smoke", "seed": 3, "T": None, "n_runs": None, "arm_means": None}
    nb = setup_notebook("primer/01_bandits_and_regret", ns)
    assert ns["T"] == 2000 and nb.params["n_runs"] == 20  # None replaced by the profile value
    nb.metric("a.b", np.float64(1.5))
    nb.curve("c", np.ones((3, 10)))
    nb.claim("primer.test.claim", "s", checks.check_at_most(1, 2))
    path = nb.finish(show=False)
    rec = records.load_record(path)
    assert path == record_dir / "primer" / "01_bandits_and_regret.json"
    assert rec["parameters"]["seed"] == 3 and rec["metrics"] == {"a.b": 1.5}
    assert rec["claims"][0]["verdict"] == "reproduced"
    assert "causalbandits_lib.core.streams" in rec["library"]["modules"]  # imported by the session
    assert "causalbandits_lib.book.notebook" not in rec["library"]["modules"]  # infrastructure only
    assert rec["versions"]["numpy"] == np.__version__


def test_session_rejects_unknown_and_bad_parameters(record_dir):
    with pytest.raises(ParameterError, match="unknown parameter 'Tee'"):
        setup_notebook("primer/01_bandits_and_regret", {"profile": "smoke", "seed": 0, "Tee": 5})
    with pytest.raises(ParameterError, match="parameter T = -5 is out of range"):
        setup_notebook("primer/01_bandits_and_regret", {"profile": "smoke", "seed": 0, "T": -5})


def test_session_ignores_modules_and_functions(record_dir):
    import math

    ns = {"profile": "smoke", "seed": 0, "math": math, "f": lambda: 1, "_private": 3}
    setup_notebook("primer/01_bandits_and_regret", ns)


def test_claim_ids_must_belong_to_the_chapter(record_dir):
    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke")
    with pytest.raises(ValueError, match="must start with the chapter name"):
        nb.claim("fucb.x.y", "s", checks.check_at_most(1, 2))
    nb.claim("primer.x.y", "s", checks.check_at_most(1, 2))
    with pytest.raises(ValueError, match="twice"):
        nb.claim("primer.x.y", "s", checks.check_at_most(1, 2))


def test_paper_results_flag_a_changed_library(record_dir):
    from causalbandits_lib.book.notebook import PaperResults

    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke")
    rec = records.load_record(nb.finish(show=False))
    assert not PaperResults(rec, record_dir).stale
    rec["library"]["modules"]["causalbandits_lib.core.runner"] = "0" * 64
    stale = PaperResults(rec, record_dir)
    assert stale.stale and stale.changed_modules() == ["causalbandits_lib.core.runner"]


def test_dirty_flag_ignores_the_generated_records(tmp_path):
    import subprocess

    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q")
    git("config", "user.email", "t@example.org")
    git("config", "user.name", "t")
    (tmp_path / "results" / "paper").mkdir(parents=True)
    (tmp_path / "results" / "paper" / "r.json").write_text("{}")
    (tmp_path / "code.py").write_text("x = 1\n")
    git("add", "-A")
    git("commit", "-qm", "init")
    assert provenance.git_info(tmp_path)["dirty"] is False
    (tmp_path / "results" / "paper" / "r.json").write_text('{"new": 1}')  # a re-run rewrites its record
    assert provenance.git_info(tmp_path)["dirty"] is False
    (tmp_path / "code.py").write_text("x = 2\n")
    assert provenance.git_info(tmp_path)["dirty"] is True


def _result_record(**results):
    base = {"notebook": "primer/01_bandits_and_regret", "metrics": {"a": 1.0, "b": [1, 2]}, "curves": {"c": {"t": [1]}}}
    base["claims"] = [{"id": "primer.x.y", "verdict": "reproduced", "reason": "r"}]
    base.update(results)
    return base


def test_compare_results_is_empty_for_identical_results_and_names_each_difference():
    a = _result_record()
    assert records.compare_results(a, _result_record(timings={"wall_seconds": 9})) == []
    b = _result_record(metrics={"a": 1.0000000001, "b": [1, 2], "new": 3})
    assert records.compare_results(a, b) == [
        "metrics.a: 1.0 → 1.0000000001 (change +1e-10, relative +1e-10)",
        "metrics.new: only in the second record",
    ]
    c = _result_record(claims=[{"id": "primer.x.y", "verdict": "partly", "reason": "r2"}])
    assert records.compare_results(a, c) == [
        "claims.primer.x.y: verdict reproduced → partly",
        "claims.primer.x.y: differs in reason",
    ]
    d = _result_record(curves={"c": {"t": [2]}})
    assert records.compare_results(a, d) == ["curves.c: differs"]
    e = _result_record(parameters={"T": 10})
    assert records.compare_results(a, e) == ["parameters.T: '(not set)' → 10"]


def test_compare_results_with_a_relative_tolerance_still_demands_equal_verdicts():
    a = _result_record(claims=[{"id": "primer.x.y", "verdict": "reproduced", "reason": "mean 1.0", "measured": 1.0}])
    b = _result_record(
        metrics={"a": 1.0 + 1e-9, "b": [1, 2]},
        claims=[{"id": "primer.x.y", "verdict": "reproduced", "reason": "mean 1.000000001", "measured": 1.0 + 1e-9}],
    )
    assert records.compare_results(a, b, rtol=1e-6) == []
    assert len(records.compare_results(a, b)) == 2  # exact by default
    far = _result_record(metrics={"a": 1.1, "b": [1, 2]}, claims=a["claims"])
    assert records.compare_results(a, far, rtol=1e-6) == ["metrics.a: 1.0 → 1.1 (change +0.1, relative +0.1)"]
    moved = _result_record(claims=[{"id": "primer.x.y", "verdict": "partly", "reason": "x", "measured": 1.0}])
    assert records.compare_results(a, moved, rtol=0.5) == ["claims.primer.x.y: verdict reproduced → partly"]


def test_results_hash_ignores_time_and_commit_and_follows_every_result(tmp_path):
    rec = fake_record(**_result_record())
    rec["claims"][0]["statement"] = "s"
    first = records.load_record(records.write_record(rec, tmp_path / "a.json"))
    later = dict(rec, timings={"started": "2031-01-01T00:00:00+00:00"}, git={"commit": "f" * 40, "dirty": False})
    second = records.load_record(records.write_record(later, tmp_path / "b.json"))
    assert first["results_hash"] == second["results_hash"]
    assert first["content_hash"] != second["content_hash"]
    for changed in (
        {"metrics": {"a": 2.0}},
        {"parameters": {"seed": 1}},
        {"data": [{"name": "adult", "files": {"f": "0" * 64}, "stand_in": True}]},
    ):
        other = records.load_record(records.write_record(dict(rec, **changed), tmp_path / "c.json"))
        assert other["results_hash"] != first["results_hash"], changed
    # an edited result is caught even when the content hash is recomputed
    text = json.loads((tmp_path / "a.json").read_text())
    text["metrics"]["a"] = 5.0
    text["content_hash"] = records.content_hash(text)
    (tmp_path / "a.json").write_text(json.dumps(text))
    with pytest.raises(records.RecordError, match="results hash does not match"):
        records.load_record(tmp_path / "a.json")


def test_diff_command_compares_folders_by_relative_path(tmp_path):
    from causalbandits_lib.book.cli import main

    for folder, value in (("old", 1.0), ("new", 1.0), ("changed", 2.0)):
        rec = fake_record(**_result_record(metrics={"a": value}))
        rec["claims"][0]["statement"] = "s"
        records.write_record(rec, tmp_path / folder / "primer" / "01.json")
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "new")]) == 0
    assert main(["diff", str(tmp_path / "old"), str(tmp_path / "changed")]) == 1
    (tmp_path / "new" / "primer" / "01.json").rename(tmp_path / "new" / "primer" / "02.json")
    assert records.compare_record_files(tmp_path / "old", tmp_path / "new") == {
        "primer/01.json": [f"no record in {tmp_path / 'new'}"],
        "primer/02.json": [f"no record in {tmp_path / 'old'}"],
    }


def test_a_page_below_paper_scale_shows_one_verdict_per_claim(record_dir, monkeypatch):
    """The paper-scale verdict is the verdict; the page's own run is a labelled column, with its
    differences marked and counted."""
    from causalbandits_lib.book.notebook import NotebookRun, PaperResults

    paper = setup_notebook("primer/01_bandits_and_regret", profile="smoke")
    paper.claim("primer.x.same", "s", checks.check_at_most(1, 2), kind="experiment")
    paper.claim("primer.x.moves", "s", checks.check_at_most(1, 2), kind="theorem")
    rec = records.load_record(paper.finish(show=False))
    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke", T=100)
    nb.claim("primer.x.same", "s", checks.check_at_most(1, 2))
    nb.claim("primer.x.moves", "s", checks.check_at_most(3, 2))
    nb.claim("primer.x.new", "s", checks.check_at_most(1, 2))
    monkeypatch.setattr(NotebookRun, "paper_results", lambda self: PaperResults(rec, record_dir / "p.json"))
    table = nb.claims_table()
    rows = {line.split(" | ")[0][2:].split("<br>")[0]: line for line in table.splitlines() if line.startswith("| `")}
    assert "this page's run (smoke profile, with T=100)" in table
    badge = verdict_badge("reproduced")
    assert f"{badge} |" in rows["`primer.x.moves`"] and "**differs: not reproduced**" in rows["`primer.x.moves`"]
    assert "reproduced (same)" in rows["`primer.x.same`"]
    assert "no paper-scale verdict yet" in rows["`primer.x.new`"]
    assert "differs on 1 of 3" in table
    assert table.count(badge) == 2  # one verdict column: the paper-scale one
    # at the paper profile, or without a record, the run's own claims are the table
    monkeypatch.setattr(NotebookRun, "paper_results", lambda self: None)
    alone = nb.claims_table()
    assert "this page's run" not in alone and "no paper-scale record yet" in alone


def test_records_name_the_blas_kernels_and_executions_pin_them(monkeypatch):
    """BLAS-heavy numbers differ in the last digits between OpenBLAS kernel sets: a record names the
    set it ran with, and executions pin one (the user's choice first)."""
    from causalbandits_lib.book.execution import NUMPY_ABOVE_AVX2, blas_environment
    from causalbandits_lib.book.provenance import platform_info

    info = platform_info()
    assert "cpu" in info and isinstance(info["blas"], list)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "SandyBridge")
    monkeypatch.setenv("NPY_DISABLE_CPU_FEATURES", "AVX512_SPR")
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    env = blas_environment()
    assert {k: env[k] for k in ("OPENBLAS_CORETYPE", "NPY_DISABLE_CPU_FEATURES", "OPENBLAS_NUM_THREADS")} == {
        "OPENBLAS_CORETYPE": "SandyBridge",
        "NPY_DISABLE_CPU_FEATURES": "AVX512_SPR",
        "OPENBLAS_NUM_THREADS": "3",
    }
    monkeypatch.delenv("OPENBLAS_CORETYPE")
    monkeypatch.delenv("NPY_DISABLE_CPU_FEATURES")
    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    env = blas_environment()
    assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "1"  # a run alone sums as a run beside others
    assert env.get("OPENBLAS_CORETYPE") in ("Haswell", None)
    assert env.get("NPY_DISABLE_CPU_FEATURES") in (NUMPY_ABOVE_AVX2, None)


def test_metric_table_records_every_cell_under_dotted_words(record_dir):
    import pandas as pd

    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke")
    flat = pd.DataFrame({"regret R_T": [1.5, 2.0], "P(ĵ ≠ j*)": [0.25, np.nan]}, index=["D-UCB", "F-UCB (true Δ)"])
    nb.metric_table("table", flat)
    assert nb.metrics["table.D-UCB.regret_R_T"] == 1.5
    assert nb.metrics["table.F-UCB_(true_Δ).P(ĵ_≠_j*)"] == "nan"  # as to_jsonable stores a NaN
    multi = pd.DataFrame({"R_T": [3.0]}, index=pd.MultiIndex.from_tuples([("CSR-V1", 0.25)]))
    nb.metric_table("csr", multi)
    assert nb.metrics["csr.CSR-V1.0.25.R_T"] == 3.0
    assert sum(k.startswith("table.") for k in nb.metrics) == 4


def test_metric_items_records_each_name(record_dir):
    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke")
    nb.metric_items({"a.b": np.float64(2.5), "a.c": [1, 2]})
    assert nb.metrics["a.b"] == 2.5 and nb.metrics["a.c"] == [1, 2]
    with pytest.raises(ValueError, match="metric name 'a b'"):
        nb.metric_items({"a b": 1})


def test_other_values_are_ours_and_the_alternatives_less_the_value_given(record_dir):
    nb = setup_notebook("synthesis/05_first_hypotheses_many_models", profile="smoke")
    assert nb.other_values("tau_quantile") == [0.3, 0.7]
    # as the sensitivity sweep runs it: at an alternative, ours comes back among the others
    nb = setup_notebook("synthesis/05_first_hypotheses_many_models", profile="smoke", tau_quantile=0.3)
    assert nb.other_values("tau_quantile") == [0.5, 0.7]
    with pytest.raises(ValueError, match="'T' is not an open choice"):
        nb.other_values("T")
