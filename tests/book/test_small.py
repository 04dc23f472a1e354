"""Issue 18, items 6 (cross-parameter constraints) and 7 (the smaller ones)."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from causalbandits_lib.book import execution, records
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import find_notebook_spec
from causalbandits_lib.book.params import ParameterError, SpecError, load_chapter, parse_cli_value

from .fake import fake_record

NB = "primer/01_bandits_and_regret"


# ---------------------------------------------------------------------------- item 7
def test_a_later_success_removes_a_stale_error_txt(tmp_path, monkeypatch):
    from causalbandits_lib.book.sweep import run_point

    spec = find_notebook_spec(NB)
    given = {"profile": "smoke", "seed": 3}
    values, _ = spec.resolve(given)

    def fake_execute(spec, parameters, out_dir, record_dir=None, progress=None, timeout=None):
        nb = Path(out_dir) / spec.chapter / f"{spec.name}.ipynb"
        nb.parent.mkdir(parents=True, exist_ok=True)
        nb.write_text("{}")
        rec = records.write_record(
            fake_record(notebook=spec.id, parameters=values), Path(record_dir) / spec.chapter / f"{spec.name}.json"
        )
        return execution.Executed(spec.id, nb, rec, 0.1)

    monkeypatch.setattr(execution, "execute_notebook", fake_execute)
    point = tmp_path / "point"
    point.mkdir()
    (point / "error.txt").write_text("an earlier attempt failed")
    run_point(NB, given, str(point))
    assert (point / "record.json").is_file() and not (point / "error.txt").exists()


def test_exponent_notation_is_a_float():
    spec = find_notebook_spec("primer/02_seeing_and_doing")
    assert parse_cli_value(spec.parameters["p_severe"], "1e-1") == 0.1
    assert parse_cli_value(spec.parameters["p_severe"], "5E-1") == 0.5
    spec1 = find_notebook_spec(NB)
    assert parse_cli_value(spec1.parameters["arm_means"], "[5e-1,1e-1]") == [0.5, 0.1]


def test_timeout_must_be_positive(tmp_path, capsys):
    assert main(["run", NB, "--profile", "smoke", "--timeout", "0", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "--timeout 0" in err and "positive" in err
    assert not (tmp_path / "o").exists()


def test_an_interrupted_run_leaves_the_older_notebook_and_record_as_they_were(tmp_path, monkeypatch):
    import papermill

    final = tmp_path / "o" / "primer"
    final.mkdir(parents=True)
    (final / "01_bandits_and_regret.ipynb").write_text("older")
    (final / "01_bandits_and_regret.json").write_text("older record")

    def fake_execute(nb, output, **kw):
        Path(output).write_text("partial")  # papermill saves after every cell
        raise KeyboardInterrupt

    monkeypatch.setattr(papermill, "execute_notebook", fake_execute)
    assert main(["run", NB, "--profile", "smoke", "--out", str(tmp_path / "o")]) == 130
    assert (final / "01_bandits_and_regret.ipynb").read_text() == "older"
    assert (final / "01_bandits_and_regret.json").read_text() == "older record"
    assert sorted(p.name for p in final.iterdir()) == ["01_bandits_and_regret.ipynb", "01_bandits_and_regret.json"]


def test_kernel_socket_folders_of_dead_processes_are_removed():
    proc = subprocess.Popen(["true"])
    proc.wait()
    stale = Path(tempfile.mkdtemp(prefix=f"causalbandits-kernel-{proc.pid}-"))
    live = Path(tempfile.mkdtemp(prefix=f"causalbandits-kernel-{os.getpid()}-"))
    try:
        execution.remove_stale_kernel_folders()
        assert not stale.exists() and live.exists()
    finally:
        for d in (stale, live):
            if d.exists():
                d.rmdir()


# ---------------------------------------------------------------------------- item 6: constraints
def _chapter(tmp_path, constraints) -> Path:
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "01_x.md").write_text("# x\n")
    spec = {
        "title": "Toy",
        "notebooks": {
            "01_x": {
                "title": "x",
                "parameters": {
                    "taus": {"type": "list[float]", "help": "t", "value": [0.1, 0.3]},
                    "fig_tau": {"type": "float", "help": "f", "value": 0.3},
                    "arm_means": {"type": "list[float]", "help": "m", "value": [0.5, 0.4]},
                },
                "constraints": constraints,
            }
        },
    }
    (folder / "parameters.yml").write_text(json.dumps(spec))
    return folder


def test_cross_parameter_constraints_are_checked_at_validation(tmp_path):
    nb = load_chapter(_chapter(tmp_path, ["fig_tau in taus", "unique max arm_means"])).notebooks["01_x"]
    nb.resolve({})
    with pytest.raises(ParameterError, match=r"fig_tau = 0.2 must be one of taus = \[0.1, 0.3\]"):
        nb.resolve({"fig_tau": 0.2})
    with pytest.raises(ParameterError, match=r"the largest value of arm_means = \[0.5, 0.5\] must be unique"):
        nb.resolve({"arm_means": [0.5, 0.5]})


@pytest.mark.parametrize(
    "constraints, fragment",
    [(["fig_tau in nope"], "unknown parameter 'nope'"), (["fig_tau likes taus"], "not a constraint")],
)
def test_a_malformed_constraint_is_a_spec_error(tmp_path, constraints, fragment):
    with pytest.raises(SpecError, match=fragment):
        load_chapter(_chapter(tmp_path, constraints))


def test_a_point_being_run_elsewhere_is_not_run_again_at_once(tmp_path):
    """Issue 18, item 4: a re-run started while the first still runs a point must not run it too."""
    from causalbandits_lib.book.sweep import PointBusyError, point_lock, run_point

    point = tmp_path / "point"
    with point_lock(point):
        with pytest.raises(PointBusyError, match="being run by another process"):
            run_point(NB, {"profile": "smoke"}, str(point), wait=False)
    assert not (point / "record.json").exists()
