"""Citations a reviewer can follow: repository, commit, shell-quoted commands, results hash, one
claim, CSL-JSON; smoke-profile and stand-in records only with a flag that the citation repeats."""

from __future__ import annotations

import json
import shlex
import tomllib

import pytest
import yaml

from causalbandits_lib.book import paths, records
from causalbandits_lib.book.citation import repository_url
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import setup_notebook
from causalbandits_lib.core import checks

PAPER_RECORD = "results/paper/primer/01_bandits_and_regret.json"


def test_the_repository_is_set_once_and_the_book_button_and_citation_file_use_it():
    root = paths.book_root()
    url = tomllib.loads((root / "pyproject.toml").read_text())["project"]["urls"]["Repository"]
    assert repository_url() == url and url.startswith("https://")
    config = yaml.safe_load((root / "_config.yml").read_text())
    assert config["repository"]["url"] == url and config["html"]["use_repository_button"] is True
    cff = yaml.safe_load((root / "CITATION.cff").read_text())
    assert cff["repository-code"] == url and cff["cff-version"] == "1.2.0" and cff["authors"]


def test_a_paper_record_citation_gives_the_reviewers_path(capsys):
    rec = records.load_record(paths.book_root() / PAPER_RECORD)
    assert main(["cite", str(paths.book_root() / PAPER_RECORD), "--format", "text"]) == 0
    out = capsys.readouterr().out
    assert repository_url() in out and rec["git"]["commit"] in out
    assert records.results_hash(rec) in out
    assert f"git checkout {rec['git']['commit']}" in out
    assert f".venv/bin/causalbandits verify {PAPER_RECORD}" in out
    # the re-run command is shell-quoted: list values survive zsh and bash globbing
    rerun = next(line for line in out.splitlines() if line.startswith("Re-run by hand: "))
    words = shlex.split(rerun.removeprefix("Re-run by hand: "))
    assert words[:5] == ["causalbandits", "run", "primer/01_bandits_and_regret", "--profile", "paper"]
    given = dict(w.split("=", 1) for w in words[5:] if w != "-p")
    assert given["arm_means"] == "[" + ",".join(str(x) for x in rec["parameters"]["arm_means"]) + "]"


def test_one_claim_is_cited_with_its_statement_values_verdict_and_kind(capsys):
    rec = records.load_record(paths.book_root() / PAPER_RECORD)
    claim = rec["claims"][0]
    path = str(paths.book_root() / PAPER_RECORD)
    assert main(["cite", path, "--claim", claim["id"], "--format", "both"]) == 0
    out = capsys.readouterr().out
    assert f"Claim {claim['id']} ({claim['kind']}" in out and claim["statement"] in out
    assert f"verdict: {claim['verdict']}" in out and claim["id"].split(".", 1)[1] in out.splitlines()[0]
    assert main(["cite", path, "--claim", "primer.no.such_claim"]) == 2
    err = capsys.readouterr().err
    assert "primer.no.such_claim" in err and claim["id"] in err


def test_csl_json_is_one_dataset_item_that_pins_the_commit(capsys):
    rec = records.load_record(paths.book_root() / PAPER_RECORD)
    assert main(["cite", str(paths.book_root() / PAPER_RECORD), "--format", "csl"]) == 0
    (item,) = json.loads(capsys.readouterr().out)
    assert item["type"] == "dataset" and item["version"] == rec["git"]["commit"]
    assert item["URL"].endswith(rec["git"]["commit"]) and records.results_hash(rec) in item["note"]
    assert item["issued"]["date-parts"][0][0] == int(rec["timings"]["started"][:4])


@pytest.fixture
def smoke_record(record_dir):
    nb = setup_notebook("primer/01_bandits_and_regret", profile="smoke", seed=7)
    nb.claim("primer.x.y", "s", checks.check_at_most(1, 2), kind="experiment")
    return nb.finish(show=False)


def test_a_record_below_the_papers_scale_needs_a_flag_and_the_citation_says_so(smoke_record, capsys):
    assert main(["cite", str(smoke_record)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'smoke' profile" in err and "--allow-below-paper" in err
    assert main(["cite", str(smoke_record), "--allow-below-paper"]) == 0
    out = capsys.readouterr().out
    assert "smoke profile, below the paper's scale" in out and "seed 7" in out
