"""Issue 18: every error path ends in one clear message with the exit code the README documents
(0 ok, 1 failed or invalid, 2 bad usage, 130/143 interrupted)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from causalbandits_lib.book import paths, records
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.params import load_chapter
from causalbandits_lib.book.sweep import _valid_record, collect

from .fake import fake_record

NB = "primer/01_bandits_and_regret"
CLAIM = {"id": "primer.a.b", "statement": "s", "verdict": "reproduced", "reason": "r", "criterion": "c"}


def _write_raw(path, rec) -> None:
    """Write ``rec`` as it stands (with a content hash that matches, where JSON allows one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rec = dict(rec, schema=records.SCHEMA)
    try:
        rec["content_hash"] = records.content_hash(rec)
    except ValueError:
        rec["content_hash"] = "0" * 64
    path.write_text(json.dumps(rec, allow_nan=True))


# ---------------------------------------------------------------------------- item 5: NaN
def test_a_record_with_nan_is_reported_as_invalid_everywhere(tmp_path, capsys):
    bad = tmp_path / "sweep" / NB / "p1" / "record.json"
    _write_raw(bad, fake_record(metrics={"m": float("nan")}))
    good = tmp_path / "sweep" / NB / "p0" / "record.json"
    records.write_record(fake_record(metrics={"m": 1.0}), good)

    with pytest.raises(records.RecordError, match="NaN"):
        records.load_record(bad)
    table, problems = collect(tmp_path / "sweep")
    assert len(table) == 1 and len(problems) == 1 and str(bad) in problems[0] and "NaN" in problems[0]
    assert _valid_record(bad, NB, {"profile": "smoke", "seed": 0}) is False  # resume runs the point again
    assert main(["cite", str(bad)]) == 1
    err = capsys.readouterr().err
    assert str(bad) in err and "NaN" in err


# ---------------------------------------------------------------------------- item 6: malformed records
@pytest.mark.parametrize(
    "fields, fragment",
    [
        ({"claims": {"a": 1}}, "'claims' must be a list"),
        ({"timings": {}}, "timings.started"),
        ({"claims": [dict(CLAIM, verdict="great")]}, "verdict 'great' is not one of"),
        ({"claims": [{k: v for k, v in CLAIM.items() if k != "statement"}]}, "lacks 'statement'"),
        ({"parameters": [1, 2]}, "'parameters' must be an object"),
    ],
)
def test_cite_names_the_record_and_what_is_wrong(tmp_path, capsys, fields, fragment):
    path = tmp_path / "r.json"
    _write_raw(path, fake_record(**fields))
    assert main(["cite", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and fragment in err


@pytest.mark.parametrize(
    "claim, fragment",
    [
        (dict(CLAIM, verdict="great"), "verdict 'great' is not one of"),
        ({k: v for k, v in CLAIM.items() if k != "statement"}, "lacks 'statement'"),
    ],
)
def test_report_on_a_malformed_record_names_it_and_writes_nothing(tmp_path, capsys, claim, fragment):
    results = tmp_path / "results"
    path = results / NB.replace("/", "/") / "x.json"
    path = results / "primer" / "01_bandits_and_regret.json"
    _write_raw(path, fake_record(profile="paper", parameters={"profile": "paper", "seed": 0}, claims=[claim]))
    page = tmp_path / "book" / "reproducibility.md"
    assert main(["report", "--results", str(results), "--page", str(page)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and fragment in err
    assert not page.exists() and not (page.parent / "_reproduction_summary.md").exists()
    assert load_chapter(paths.notebooks_dir() / "primer")  # (the chapter itself is fine)


# ---------------------------------------------------------------------------- item 6: output folders
def test_out_onto_a_file_is_bad_usage_before_anything_runs(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for args in (
        ["run", NB, "--profile", "smoke", "--out", str(afile)],
        ["run", NB, "--profile", "smoke", "--out", str(tmp_path / "o"), "--record-dir", str(afile / "sub")],
        ["sweep", NB, "-p", "seed=0:2", "--profile", "smoke", "--out", str(afile)],
    ):
        assert main(args) == 2, args
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(afile) in err and "not a folder" in err
    assert not (tmp_path / "o").exists()


# ---------------------------------------------------------------------------- item 6: kernel deaths, timeouts
@pytest.mark.parametrize("error", ["DeadKernelError", "CellTimeoutError"])
def test_a_dead_kernel_or_a_cell_timeout_is_one_message_naming_the_notebook(tmp_path, capsys, monkeypatch, error):
    import nbclient.exceptions
    import papermill

    exc_type = getattr(nbclient.exceptions, error)

    def fake_execute(nb, output, **kw):
        nb.cells[3].metadata["papermill"] = {"status": "running"}
        from nbformat import write

        write(nb, output)
        raise exc_type("the kernel is gone" if error == "DeadKernelError" else "A cell timed out while it was running")

    monkeypatch.setattr(papermill, "execute_notebook", fake_execute)
    assert main(["run", NB, "--profile", "smoke", "--out", str(tmp_path / "o"), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert NB in err and "cell 4" in err and ("died" in err if error == "DeadKernelError" else "timed out" in err)
    assert not (tmp_path / "o" / "primer" / "01_bandits_and_regret.ipynb").exists()


# ---------------------------------------------------------------------------- issue 34, item 5: usage errors
def test_retries_below_zero_is_bad_usage_before_anything_is_written(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(["sweep", NB, "-p", "seed=0:2", "--profile", "smoke", "--retries", "-1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--retries -1" in err and "0 or more" in err
    assert not out.exists()  # no point folder was written (they were, before the ValueError)


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("n_runs=0x10", "'0x10' (str): not written as an integer"),
        ("T=1_000", "'1_000' (str): not written as an integer"),
        ("seed=1.0", "'1.0' (str): not written as an integer"),
        ("T=10 ", "spaces around the value"),
    ],
)
def test_values_not_in_their_literal_form_are_bad_usage_in_one_line(tmp_path, capsys, value, fragment):
    for verb in ("run", "sweep"):
        out = tmp_path / verb
        assert main([verb, NB, "-p", value, "--profile", "smoke", "--out", str(out)]) == 2, (verb, value)
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and fragment in err, (verb, err)
        assert not out.exists()


def test_a_range_beyond_every_bound_is_one_line_of_bad_usage(tmp_path, capsys):
    out = tmp_path / "sweep"
    for extra in ([], ["--max-points", str(10**30)]):  # counted (was an OverflowError), then its ends checked
        assert main(["sweep", NB, "-p", "seed=0:99999999999999999999", "--out", str(out), *extra]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "99999999999999999999" in err and "allowed" in err, err
    assert not out.exists()


@pytest.mark.parametrize("value", ["seed=1\n2", "nope=1\n2", "seed=a:\nb", "arm_means=[0.5,\n0.4]", "T=5\n"])
def test_a_newline_inside_a_value_gives_a_one_line_message(tmp_path, capsys, value):
    for verb in ("run", "sweep"):
        assert main([verb, NB, "-p", value, "--profile", "smoke", "--out", str(tmp_path / verb)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("causalbandits: error: "), (verb, err)
        assert "\\n" in err or "nope" in err  # the newline is shown escaped (where the value is quoted)


def test_a_full_disk_during_run_is_one_line_with_exit_code_1(tmp_path, capsys, monkeypatch):
    import errno

    import papermill

    def no_space(nb, output, **kw):
        raise OSError(errno.ENOSPC, "No space left on device", output)

    monkeypatch.setattr(papermill, "execute_notebook", no_space)
    out = tmp_path / "o"
    assert main(["run", NB, "--profile", "smoke", "--out", str(out), "--no-progress"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and NB in err and "No space left on device" in err and "free some space" in err
    chapter = out / "primer"
    assert [p.name for p in chapter.iterdir()] == []  # nothing half-written, no staging folder left


def test_an_os_error_anywhere_in_a_command_is_one_line_with_exit_code_1(tmp_path, capsys, monkeypatch):
    import errno

    from causalbandits_lib.book import cli

    def full(args):
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "x.json"))

    monkeypatch.setattr(cli, "cmd_run", full)
    assert main(["run", NB, "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "No space left on device" in err and str(tmp_path / "x.json") in err


# ---------------------------------------------------------------------------- issue 34, item 10
@pytest.mark.parametrize("keep", [False, True])
def test_verify_smoke_names_no_folder_it_has_removed(tmp_path, capsys, monkeypatch, keep):
    from causalbandits_lib.book import verify

    record = paths.paper_results_dir() / "primer" / "01_bandits_and_regret.json"
    seen = []

    def fake_verify(path, out_dir, rtol=0.0, smoke=False, timeout=None, progress=False):
        rerun = Path(out_dir) / "primer" / "01_bandits_and_regret.json"
        rerun.parent.mkdir(parents=True, exist_ok=True)
        rerun.write_text("{}")
        seen.append(rerun)
        return verify.Verification(Path(path), NB, smoke, "0" * 64, "0" * 64, rerun)

    monkeypatch.setattr(verify, "verify_record", fake_verify)
    args = ["verify", "--smoke", str(record)] + (["--out", str(tmp_path / "kept")] if keep else [])
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "judges all its claims" in out
    if keep:
        assert str(seen[0]) in out and seen[0].exists()
    else:
        assert not seen[0].exists() and str(seen[0].parent.parent) not in out  # a removed folder is not named
        assert "temporary folder, removed" in out
