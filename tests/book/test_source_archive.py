"""The source ships with the book: ``make book``'s archive step (``python -m
causalbandits_lib.book.citation source-archive SITE``) on a clean clone writes ``git archive`` of
the commit into the site with its SHA-256 (SOURCE.txt, the landing page's ``source-archive`` span,
a pinned CITATION.cff), and from a dirty tree ships none and says so. The reviewer's three routes
(README, "Cite a result, and check a citation") on temporary copies, no network: from a clone
(when an address is configured), from the archive inside the built book, from any copy with a
matching tree id.

The routes run ``causalbandits verify --smoke`` with this venv's Python inside the copy (the copy's
own library first on ``PYTHONPATH``) instead of ``make setup`` there, which would install a second
venv: that the archive holds every file ``git ls-files`` lists is checked apart."""

from __future__ import annotations

import gzip
import hashlib
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

from causalbandits_lib.book import paths
from causalbandits_lib.book.citation import REPOSITORY_ENV, archive_name, main, site_config, write_source_archive

from .gitcopy import clone_book, git

RECORD = "results/paper/primer/01_bandits_and_regret.json"  # the cheapest primer record at the smoke profile
CLAIM = "primer.ucb1.logarithmic_growth"
INTRO = '<p>Source: <span class="source-archive"><a href="../SOURCE.txt">SOURCE.txt</a> names the archive</span>.</p>'


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    return clone_book(tmp_path_factory)


def _site(tmp_path: Path) -> Path:
    site = tmp_path / "html"
    (site / "book").mkdir(parents=True)
    (site / "book" / "intro.html").write_text(INTRO, encoding="utf-8")
    return site


@pytest.fixture(scope="module")
def built(clone, tmp_path_factory):
    """The archive step run on a site built from the clean clone."""
    site = _site(tmp_path_factory.mktemp("site"))
    info = write_source_archive(site, clone)
    return site, info


def test_the_archive_step_puts_the_commits_source_and_its_sha256_into_the_site(clone, built):
    site, info = built
    head, tree = git(clone, "rev-parse", "HEAD"), git(clone, "rev-parse", "HEAD^{tree}")
    name = archive_name(head)
    archive = site / f"{name}.tar.gz"
    assert info.archive == archive and name == f"causal-fair-bandits-{head[:12]}"
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert info.sha256 == digest and info.tree == tree
    assert (site / f"{name}.tar.gz.sha256").read_text() == f"{digest}  {name}.tar.gz\n"
    check = subprocess.run(["sha256sum", "-c", f"{name}.tar.gz.sha256"], cwd=site, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    # the archive is git archive of the commit (its id is in the tar header) under the prefix
    tar_commit = subprocess.run(
        ["git", "get-tar-commit-id"], input=gzip.decompress(archive.read_bytes()), capture_output=True
    )
    assert tar_commit.stdout.decode().strip() == head
    source = (site / "SOURCE.txt").read_text()
    for expected in (digest, f"swh:1:rev:{head}", f"swh:1:dir:{tree}", f"tar -xzf {name}.tar.gz && cd {name}"):
        assert expected in source
    assert "repository" not in source  # no address configured in the clone
    # the landing page names the archive, its SHA-256 and the tree, relative to the site's root
    intro = (site / "book" / "intro.html").read_text()
    assert f'href="../{name}.tar.gz"' in intro and digest in intro and f"swh:1:dir:{tree}" in intro
    cff = yaml.safe_load((site / "CITATION.cff").read_text())
    assert cff["commit"] == head and "repository-code" not in cff


def test_the_archive_holds_every_file_git_lists_the_cited_records_included(clone, built):
    site, info = built
    prefix = info.archive.name.removesuffix(".tar.gz") + "/"
    with tarfile.open(info.archive) as tar:
        members = {m.name.removeprefix(prefix) for m in tar.getmembers() if not m.isdir()}
    listed = set(git(clone, "ls-files").splitlines())
    assert members == listed
    assert RECORD in members and any(m.startswith("results/paper/fucb/") for m in members)


def test_a_second_run_keeps_the_archive_and_rewrites_no_page(clone, built):
    site, info = built
    intro = site / "book" / "intro.html"
    before = intro.stat().st_mtime_ns
    again = write_source_archive(site, clone)
    assert again.sha256 == info.sha256  # git archive is deterministic
    assert intro.stat().st_mtime_ns == before  # the PDF step (--if-stale) sees no new page


def test_a_dirty_tree_ships_no_archive_and_says_so(clone, tmp_path, capsys, monkeypatch):
    site = _site(tmp_path)
    monkeypatch.setenv(paths.ROOT_ENV, str(clone))
    assert main(["source-archive", str(site)]) == 0
    assert list(site.glob("causal-fair-bandits-*.tar.gz"))
    capsys.readouterr()
    readme = clone / "README.md"
    text = readme.read_text()
    try:
        readme.write_text(text + "\nan uncommitted line\n")
        assert main(["source-archive", str(site)]) == 0
        out = capsys.readouterr().out
        assert "NOTICE: no source archive" in out and "uncommitted changes" in out and "README.md" in out
        assert not list(site.glob("causal-fair-bandits-*")) and not (site / "CITATION.cff").exists()
        assert "uncommitted changes" in (site / "SOURCE.txt").read_text()
        intro = (site / "book" / "intro.html").read_text()
        assert "none: this site was built from a working tree with uncommitted changes" in intro
        # the site's banner (the book's Sphinx extension sets it when the build starts)
        app, config = _sphinx(clone)
        site_config(app, config)
        assert "uncommitted changes" in config.html_theme_options["announcement"]
    finally:
        readme.write_text(text)
    app, config = _sphinx(clone)
    site_config(app, config)
    assert "announcement" not in config.html_theme_options


class _Obj:
    pass


def _sphinx(root: Path):
    app, config = _Obj(), _Obj()
    app.srcdir = str(root)
    config.html_theme_options = {"use_repository_button": False}
    return app, config


def test_the_repository_button_appears_only_with_a_configured_address(clone, monkeypatch):
    monkeypatch.delenv(REPOSITORY_ENV, raising=False)
    app, config = _sphinx(clone)
    site_config(app, config)
    assert config.html_theme_options["use_repository_button"] is False
    assert "repository_url" not in config.html_theme_options
    monkeypatch.setenv(REPOSITORY_ENV, "https://gitlab.example.org/someone/book.git")
    site_config(app, config)
    assert config.html_theme_options["repository_url"] == "https://gitlab.example.org/someone/book"
    assert config.html_theme_options["use_repository_button"] is True
    # a host the theme cannot link: no button (the citations still name the address)
    monkeypatch.setenv(REPOSITORY_ENV, "https://example.org/someone/book")
    app, config = _sphinx(clone)
    site_config(app, config)
    assert config.html_theme_options["use_repository_button"] is False


# ---------------------------------------------------------------------------- the reviewer's routes
def _verify_in(copy: Path, *args: str) -> subprocess.CompletedProcess:
    """``causalbandits verify`` run inside ``copy`` on its own library, with this venv's Python."""
    env = {**os.environ, "PYTHONPATH": str(copy), paths.ROOT_ENV: str(copy)}
    env.pop("CAUSALBANDITS_RECORD_DIR", None)
    return subprocess.run(
        [sys.executable, "-m", "causalbandits_lib.book.cli", "verify", *args],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _printed_commands(citation_text: str) -> list[str]:
    lines = citation_text.split("Check it:\n", 1)[1].split("\nRe-run by hand:", 1)[0].splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


@pytest.mark.notebooks
@pytest.mark.timeout(900)
def test_route_the_archive_inside_the_built_book(clone, built, tmp_path):
    site, info = built
    subprocess.run(["tar", "-xzf", str(info.archive), "-C", str(tmp_path)], check=True)
    copy = tmp_path / info.archive.name.removesuffix(".tar.gz")
    done = _verify_in(copy, "--smoke", "--swhid", f"swh:1:dir:{info.tree}", RECORD)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"this copy's tree is swh:1:dir:{info.tree}" in done.stdout and "judges all its claims" in done.stdout
    # another version is refused before anything runs, in one line naming both trees
    other = git(clone, "rev-parse", "HEAD~1^{tree}")
    refused = _verify_in(copy, "--smoke", "--swhid", f"swh:1:dir:{other}", RECORD)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.count("\n") == 1 and other in refused.stderr and info.tree in refused.stderr


@pytest.mark.notebooks
@pytest.mark.timeout(900)
def test_route_a_clone_when_an_address_is_configured(clone, tmp_path, monkeypatch, capsys):
    from causalbandits_lib.book.cli import main as cli

    # the "address" is the clone's path: the printed git commands run with no network
    monkeypatch.setenv(REPOSITORY_ENV, str(clone))
    monkeypatch.setenv(paths.ROOT_ENV, str(clone))
    assert cli(["cite", str(clone / RECORD), "--claim", CLAIM, "--format", "text"]) == 0
    commands = _printed_commands(capsys.readouterr().out)
    assert commands[0].startswith(f"git clone {clone} causal-fair-bandits") and commands[-2] == "make setup"
    subprocess.run(" && ".join(commands[:2]), shell=True, cwd=tmp_path, check=True, capture_output=True)
    reviewer = tmp_path / "causal-fair-bandits"
    verify = commands[-1].split()
    assert verify[:2] == [".venv/bin/causalbandits", "verify"] and "--claim" in verify
    done = _verify_in(reviewer, "--smoke", *verify[2:])  # make setup replaced by this venv
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"claim {CLAIM}: " in done.stdout and "judges all its claims" in done.stdout


@pytest.mark.notebooks
@pytest.mark.timeout(900)
def test_route_any_copy_with_the_matching_tree_id(clone, tmp_path):
    # a copy made without git at all (as from Software Heritage, or a colleague's folder)
    archive = subprocess.run(["git", "archive", "--format=tar", "HEAD"], cwd=clone, capture_output=True, check=True)
    copy = tmp_path / "someones-copy"
    copy.mkdir()
    subprocess.run(["tar", "-x", "-C", str(copy)], input=archive.stdout, check=True)
    tree = git(clone, "rev-parse", "HEAD^{tree}")
    done = _verify_in(copy, "--smoke", "--tree", tree, RECORD)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"this copy's tree is swh:1:dir:{tree}" in done.stdout
    refused = _verify_in(copy, "--smoke", "--commit", git(clone, "rev-parse", "HEAD"), RECORD)
    assert refused.returncode == 2 and "not a git checkout" in refused.stderr
