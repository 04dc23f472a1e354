"""Citations that stand without an invented address: the code identified by its commit and its
Software Heritage identifiers (checked against git and the documented syntax), the record by its
own id, the results hash, a claim by its id and verdict; an address only when one is configured;
shell-quoted commands; CITATION.cff valid against the CFF 1.2 schema with and without an address;
smoke-profile and stand-in records only with a flag that the citation repeats."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml

from causalbandits_lib.book import citation, paths, records
from causalbandits_lib.book.citation import REPOSITORY_ENV, Citation, citation_cff, repository_url
from causalbandits_lib.book.cli import main
from causalbandits_lib.book.notebook import setup_notebook
from causalbandits_lib.core import checks

from .gitcopy import clone_book, git

PAPER_RECORD = "results/paper/primer/01_bandits_and_regret.json"
CLAIM_RECORD = "results/paper/fucb/04_email_experiment.json"
CLAIM = "fucb.fig2b.ucb_c_d_order"
#: The core SWHID syntax of https://docs.softwareheritage.org/devel/swh-model/persistent-identifiers.html
SWHID = re.compile(r"swh:1:(cnt|dir|rev|rel|snp):[0-9a-f]{40}")
#: The CFF 1.2.0 schema, vendored (source in tests/data/README.md).
CFF_SCHEMA = Path(__file__).resolve().parents[1] / "data" / "cff-schema-1.2.0.json"
#: The address the book once invented (built from parts, so that this file does not hold it).
INVENTED = "causal-fair-bandits" + "/book"


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    return clone_book(tmp_path_factory)


@pytest.fixture
def in_clone(clone, monkeypatch):
    monkeypatch.setenv(paths.ROOT_ENV, str(clone))
    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    return clone


def _cff_errors(text: str) -> list[str]:
    schema = json.loads(CFF_SCHEMA.read_text(encoding="utf-8"))
    data = yaml.safe_load(text)
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(data)]


# ---------------------------------------------------------------------------- no invented address
def test_no_file_of_the_repository_names_the_invented_address():
    root = paths.book_root()
    found = subprocess.run(
        ["git", "grep", "-I", "-l", "--untracked", "-e", INVENTED, "--", "."],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert found.returncode == 1, f"the invented address is still in: {found.stdout}"


def test_the_address_is_optional_configuration_and_empty_by_default():
    root = paths.book_root()
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert project["tool"]["causalbandits"]["repository"] == ""
    assert "urls" not in project["project"]
    config = yaml.safe_load((root / "_config.yml").read_text())
    assert "repository" not in config and config["html"]["use_repository_button"] is False
    cff = yaml.safe_load((root / "CITATION.cff").read_text())
    # CITATION.cff carries repository-code exactly when pyproject.toml sets an address
    assert cff.get("repository-code", "") == citation.configured_repository(root)


def test_the_address_is_read_in_order_setting_then_https_origin(tmp_path, monkeypatch):
    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "--quiet")
    (repo / "pyproject.toml").write_text('[tool.causalbandits]\nrepository = ""\n')
    git(repo, "add", ".")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "--quiet", "-m", "x")
    assert repository_url(repo) is None  # no origin
    git(repo, "remote", "add", "origin", "git@example.org:someone/thing.git")
    assert repository_url(repo) is None  # not an https:// address
    git(repo, "remote", "set-url", "origin", "https://user:secret@example.org/someone/thing.git")
    assert repository_url(repo) == "https://example.org/someone/thing.git"  # credentials dropped
    (repo / "pyproject.toml").write_text('[tool.causalbandits]\nrepository = "https://example.org/set"\n')
    assert repository_url(repo) == "https://example.org/set"
    monkeypatch.setenv(REPOSITORY_ENV, "https://example.org/env")
    assert repository_url(repo) == "https://example.org/env"


# ---------------------------------------------------------------------------- intrinsic identifiers
def _swhids(text: str) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for m in re.finditer(r"swh:1:[a-z]{3}:[0-9a-zA-Z]+", text):
        assert SWHID.fullmatch(m.group(0)), f"not a SWHID: {m.group(0)}"
        out.setdefault(m.group(0).split(":")[2], set()).add(m.group(0).split(":")[3])
    return out


def test_a_record_citation_identifies_the_code_by_swhids_that_git_computes(in_clone, capsys):
    clone = in_clone
    rec = records.load_record(clone / PAPER_RECORD)
    head = git(clone, "rev-parse", "HEAD")
    tree = git(clone, "rev-parse", "HEAD^{tree}")
    blob = git(clone, "hash-object", PAPER_RECORD)
    for fmt in ("text", "bibtex", "csl"):
        assert main(["cite", str(clone / PAPER_RECORD), "--format", fmt]) == 0
        out = capsys.readouterr().out
        ids = _swhids(out)
        # the commit that holds the record, its tree, and the record itself, as git computes them
        assert ids["rev"] == {head} and ids["dir"] == {tree} and ids["cnt"] == {blob}, fmt
        assert git(clone, "rev-parse", f"{head}^{{commit}}") == head
        assert records.results_hash(rec) in out and rec["git"]["commit"] in out
        assert "https://" not in out and "URL" not in out and "url " not in out  # no address configured
    text = Citation(rec, clone / PAPER_RECORD).text()
    assert f"made at commit {rec['git']['commit']}" in text or rec["git"]["commit"] == head
    assert f".venv/bin/causalbandits verify --swhid swh:1:dir:{tree} {PAPER_RECORD}" in text
    assert f"causal-fair-bandits-{head[:12]}.tar.gz" in text  # the archive a book built there ships
    assert "git clone" not in text


def test_a_claim_citation_names_the_claim_its_verdict_and_the_swhids(in_clone, capsys):
    clone = in_clone
    rec = records.load_record(clone / CLAIM_RECORD)
    claim = next(c for c in rec["claims"] if c["id"] == CLAIM)
    tree = git(clone, "rev-parse", "HEAD^{tree}")
    assert main(["cite", str(clone / CLAIM_RECORD), "--claim", CLAIM, "--format", "both"]) == 0
    out = capsys.readouterr().out
    assert f"Claim {CLAIM} ({claim['kind']}" in out and claim["statement"] in out
    assert f"verdict: {claim['verdict']}" in out and CLAIM.split(".", 1)[1] in out.splitlines()[0]
    assert _swhids(out)["dir"] == {tree} and _swhids(out)["rev"] == {git(clone, "rev-parse", "HEAD")}
    assert f".venv/bin/causalbandits verify --swhid swh:1:dir:{tree} --claim {CLAIM}" in out
    assert main(["cite", str(clone / CLAIM_RECORD), "--claim", "fucb.no.such_claim"]) == 2
    err = capsys.readouterr().err
    assert "fucb.no.such_claim" in err and CLAIM in err


def test_a_configured_address_is_named_with_the_clone_commands(in_clone, monkeypatch, capsys):
    monkeypatch.setenv(REPOSITORY_ENV, "https://example.org/someone/book")
    path = str(in_clone / PAPER_RECORD)
    assert main(["cite", path, "--format", "text"]) == 0
    out = capsys.readouterr().out
    head = git(in_clone, "rev-parse", "HEAD")
    assert "git clone https://example.org/someone/book causal-fair-bandits && cd causal-fair-bandits" in out
    assert f"git checkout {head}" in out and "repository https://example.org/someone/book" in out
    assert main(["cite", path, "--format", "csl"]) == 0
    (item,) = json.loads(capsys.readouterr().out)
    assert item["URL"] == "https://example.org/someone/book" and item["version"] == head


def test_the_rerun_command_is_shell_quoted(in_clone, capsys):
    rec = records.load_record(in_clone / PAPER_RECORD)
    assert main(["cite", str(in_clone / PAPER_RECORD), "--format", "text"]) == 0
    out = capsys.readouterr().out
    rerun = next(line for line in out.splitlines() if line.startswith("Re-run by hand: "))
    words = shlex.split(rerun.removeprefix("Re-run by hand: "))
    assert words[:5] == ["causalbandits", "run", "primer/01_bandits_and_regret", "--profile", "paper"]
    given = dict(w.split("=", 1) for w in words[5:] if w != "-p")
    assert given["arm_means"] == "[" + ",".join(str(x) for x in rec["parameters"]["arm_means"]) + "]"


def test_every_records_rerun_command_parses_back_to_its_parameters():
    """The "Re-run by hand" line of every committed paper-scale record is a command the CLI takes
    and gives the record's parameters. (A boolean used to be written ``True``, which ``-p``
    refuses: fairx/06's ``figure9`` and pcb/04's ``simultaneous``.)"""
    from causalbandits_lib.book.cli import build_parser
    from causalbandits_lib.book.execution import parse_assignments, resolve_target

    found = sorted(paths.paper_results_dir().glob("*/*.json"))
    assert len(found) >= 27
    for path in found:
        rec = records.load_record(path)
        words = shlex.split(Citation(rec, path).rerun_command())
        args = build_parser().parse_args(words[1:])
        notebooks = resolve_target(args.target)
        assert [nb.id for nb in notebooks] == [rec["notebook"]]
        given = parse_assignments(args.param or [], notebooks, profile=args.profile)[rec["notebook"]]
        resolved = notebooks[0].resolve(given)[0]  # (a knob declared after the record was made is not in it)
        assert {k: resolved[k] for k in rec["parameters"]} == rec["parameters"], path


def test_csl_json_is_one_dataset_item_that_pins_the_commit(in_clone, capsys):
    rec = records.load_record(in_clone / PAPER_RECORD)
    assert main(["cite", str(in_clone / PAPER_RECORD), "--format", "csl"]) == 0
    (item,) = json.loads(capsys.readouterr().out)
    assert item["type"] == "dataset" and item["version"] == git(in_clone, "rev-parse", "HEAD")
    assert "URL" not in item and records.results_hash(rec) in item["note"]
    assert f"swh:1:dir:{git(in_clone, 'rev-parse', 'HEAD^{tree}')}" in item["note"]
    assert item["issued"]["date-parts"][0][0] == int(rec["timings"]["started"][:4])


def test_a_commit_that_is_not_in_the_repository_gives_tree_unknown(in_clone, tmp_path):
    rec = records.load_record(in_clone / PAPER_RECORD)
    rec["git"] = {**rec["git"], "commit": "0123456789abcdef" * 2 + "01234567"}
    path = tmp_path / "elsewhere.json"
    path.write_text(json.dumps(rec))
    c = Citation(rec, path)
    assert c.commit == rec["git"]["commit"] and c.tree is None
    assert "tree unknown" in c.text() and f"--commit {c.commit}" in c.text()
    assert "is in no commit" in c.text()  # the reviewer needs the record file itself


# ---------------------------------------------------------------------------- CITATION.cff
def test_citation_cff_is_valid_cff_1_2_with_and_without_an_address(in_clone, monkeypatch):
    clone = in_clone
    committed = (clone / "CITATION.cff").read_text(encoding="utf-8")
    assert _cff_errors(committed) == [] and yaml.safe_load(committed)["cff-version"] == "1.2.0"
    pinned = citation_cff(clone)
    assert _cff_errors(pinned) == []
    data = yaml.safe_load(pinned)
    head, tree = git(clone, "rev-parse", "HEAD"), git(clone, "rev-parse", "HEAD^{tree}")
    assert data["commit"] == head and "repository-code" not in data
    assert [i["value"] for i in data["identifiers"]] == [f"swh:1:rev:{head}", f"swh:1:dir:{tree}"]
    assert all(i["type"] == "swh" and SWHID.fullmatch(i["value"]) for i in data["identifiers"])
    monkeypatch.setenv(REPOSITORY_ENV, "https://example.org/someone/book")
    with_address = citation_cff(clone)
    assert _cff_errors(with_address) == []
    assert yaml.safe_load(with_address)["repository-code"] == "https://example.org/someone/book"
    # the schema does catch a bad file (the check is not vacuous)
    assert _cff_errors(with_address.replace("swh:1:dir:", "swh:1:tree:"))


def test_cite_cff_prints_the_pinned_file(in_clone, capsys):
    assert main(["cite", "--cff"]) == 0
    out = capsys.readouterr().out
    assert _cff_errors(out) == [] and yaml.safe_load(out)["commit"] == git(in_clone, "rev-parse", "HEAD")
    assert main(["cite"]) == 2 and "--cff" in capsys.readouterr().err


# ---------------------------------------------------------------------------- below the paper's scale
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
    assert "is in no commit" in out  # a record outside the repository: the reviewer needs the file


def test_a_hypothesis_claim_cites_its_measurements_by_its_reason_and_says_ours_once():
    """synthesis/03's H1 records no measured value of its own (one per instance, in its reason) and
    its source begins "ours": the citation says where the measurements are and "ours" once."""
    path = paths.paper_results_dir() / "synthesis" / "03_price_of_fairness.json"
    record = json.loads(path.read_text())
    claim = next(c for c in record["claims"] if c["id"] == "synthesis.h1_cf_implies_small_violation")
    assert claim["measured"] is None and claim["ours"] and claim["source"].startswith("ours")
    what = Citation(record, path, claim["id"]).what()
    assert "measured: per instance, in the reason;" in what and "None" not in what
    assert "ours, ours" not in what and "(experiment, ours: stated before running" in what
