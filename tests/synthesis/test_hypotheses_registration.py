"""The synthesis chapter's hypotheses stay as registered (notebooks/synthesis/01_hypotheses.md and
hypotheses.yml): H1-H5's text and criteria are those of their registration commit 4fa5ae7, every
later hypothesis is stated in full (quantity, unit, checks, margins with their basis, refutation),
and no hypothesis, its prose or its entry, changes after the commit that registered it, nor is it
judged or recorded before that commit.

The checks against history read git; in a copy without it (the source archive) they are skipped.
"""

from __future__ import annotations

import ast
import re
import subprocess
from functools import lru_cache

import pytest
import yaml

from causalbandits_lib.book import paths
from causalbandits_lib.core import checks
from causalbandits_lib.synthesis.experiments import HYPOTHESES

ROOT = paths.notebooks_dir().parent
NB = "notebooks/synthesis/01_hypotheses.md"
YML = "notebooks/synthesis/hypotheses.yml"
#: The commit that registered H1-H5 (before any model, algorithm, experiment or record of the chapter).
H1_H5_COMMIT = "4fa5ae7"
FIELDS = ("title", "statement", "quantity", "unit", "check", "criterion", "margins", "refutation")


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return out.stdout if out.returncode == 0 else None


@lru_cache(maxsize=None)
def _has_history() -> bool:
    return _git("cat-file", "-e", f"{H1_H5_COMMIT}^{{commit}}") is not None


needs_git = pytest.mark.skipif(not _has_history(), reason=f"no git history with {H1_H5_COMMIT} (source archive)")


def _hypothesis_paragraphs(md: str) -> dict[int, str]:
    """``{n: text}`` for each paragraph that opens with ``**Hn —``, comments dropped and white space
    made single (a ``<!-- from: ... -->`` comment traces numbers, it is not part of the text)."""
    out = {}
    for block in re.split(r"\n\s*\n", md):
        m = re.match(r"\*\*H(\d+) —", block.strip())
        if m:
            text = re.sub(r"<!--.*?-->", " ", block, flags=re.S)
            out[int(m.group(1))] = " ".join(text.split())
    return out


def _show(commit: str, path: str) -> str | None:
    return _git("show", f"{commit}:{path}")


def _first_commit_with(string: str, *pathspecs: str) -> str | None:
    """The oldest commit (of the current history) that changed how often ``string`` occurs in
    ``pathspecs``: for a string added once, the commit that added it."""
    out = _git("log", "--reverse", "--format=%H", "-S", string, "--", *pathspecs)
    lines = (out or "").split()
    return lines[0] if lines else None


def _is_ancestor(a: str, b: str) -> bool:
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "merge-base", "--is-ancestor", a, b], capture_output=True)
    except OSError:
        return False
    return out.returncode == 0


def _current_md() -> str:
    return (ROOT / NB).read_text(encoding="utf-8")


def _registered() -> dict:
    return yaml.safe_load((ROOT / YML).read_text(encoding="utf-8"))["hypotheses"]


# -- H1-H5: unchanged since 4fa5ae7 ------------------------------------------------------------------


@needs_git
def test_h1_to_h5_prose_unchanged_since_their_registration():
    then = _hypothesis_paragraphs(_show(H1_H5_COMMIT, NB))
    now = _hypothesis_paragraphs(_current_md())
    assert sorted(then) == [1, 2, 3, 4, 5]
    for n in range(1, 6):
        assert now.get(n) == then[n], f"H{n}'s text differs from {H1_H5_COMMIT}:\nthen: {then[n]}\nnow:  {now.get(n)}"


@needs_git
def test_h1_to_h5_table_unchanged_since_their_registration():
    """The library's HYPOTHESES (what notebook 3 judges) is the dict notebook 1 held at 4fa5ae7."""
    md = _show(H1_H5_COMMIT, NB)
    m = re.search(r"^HYPOTHESES = (\{.*?^\})", md, flags=re.S | re.M)
    assert m, f"no HYPOTHESES dict in {NB} at {H1_H5_COMMIT}"
    assert HYPOTHESES == ast.literal_eval(m.group(1))


@needs_git
def test_h1_to_h5_registered_first_at_their_commit():
    """4fa5ae7 is where H1-H5 first appear, and it precedes every judge and every record of them."""
    full = _git("rev-parse", H1_H5_COMMIT).strip()
    for n in range(1, 6):
        assert _first_commit_with(f"**H{n} —", NB) == full
    for key in HYPOTHESES:
        _assert_after_registration(full, key, int(key.split("_")[0][1:]))


# -- every later hypothesis stated in full, in the prose and in the file ----------------------------


def test_later_hypotheses_have_every_field():
    later = _registered()
    assert 3 <= len(later) <= 5
    numbers = [h["number"] for h in later.values()]
    assert numbers == list(range(len(HYPOTHESES) + 1, len(HYPOTHESES) + 1 + len(later)))
    for key, h in later.items():
        assert key.split("_")[0] == f"h{h['number']}" and key not in HYPOTHESES
        empty = [f for f in FIELDS if not h.get(f)]
        assert not empty, f"{key}: no {empty}"
        for f in FIELDS:
            if f not in ("check", "margins"):
                assert isinstance(h[f], str) and len(h[f].split()) >= 3, f"{key}.{f} says nothing"
        unknown = [c for c in h["check"] if not callable(getattr(checks, c, None))]
        assert not unknown, f"{key}: checks not in core.checks: {unknown}"
        assert "check_instances" in h["check"], f"{key} is not judged over models"
        named = set(re.findall(r"check_\w+|not_testable", h["criterion"]))
        assert named <= set(h["check"]), f"{key}: the criterion names {sorted(named - set(h['check']))} not listed"
        for m in h["margins"]:
            assert isinstance(m.get("value"), (int, float)) and m["value"] >= 0, f"{key}: margin {m}"
            assert m.get("name") and m.get("unit") and len(str(m.get("basis", "")).split()) >= 2, f"{key}: margin {m}"


def test_later_hypotheses_are_stated_in_the_notebook():
    """Each entry of the file is a paragraph of notebook 1 under the same title, naming its checks and
    its margins, with a quantity, a unit, a criterion and a refutation."""
    paras = _hypothesis_paragraphs(_current_md())
    for key, h in _registered().items():
        text = paras.get(h["number"])
        assert text, f"no paragraph **H{h['number']} — in {NB}"
        assert text.startswith(f"**H{h['number']} — {' '.join(h['title'].split())}."), f"{key}: title differs"
        for word in ("*Quantity:*", "*Unit:*", "*Criterion:*", "*Refuted*"):
            assert word in text, f"H{h['number']}: no {word}"
        for c in h["check"]:
            assert f"`{c}`" in text, f"H{h['number']}: the prose does not name {c}"
        for m in h["margins"]:
            if m["value"] > 0:
                written = f"{m['value']:g}" in text or (m["value"] == 0.5 and "half" in text)
                assert written, f"H{h['number']}: margin {m['name']} = {m['value']:g} not in the prose"


# -- no change after registration; nothing judged or recorded before it -----------------------------


def _registration_commit(key: str) -> str | None:
    return _first_commit_with(f"{key}:", YML)


@needs_git
def test_later_hypotheses_unchanged_since_their_registration():
    now_paras = _hypothesis_paragraphs(_current_md())
    for key, h in _registered().items():
        commit = _registration_commit(key)
        if commit is None:
            continue  # not yet committed: this working copy is the registration
        then = yaml.safe_load(_show(commit, YML))["hypotheses"][key]
        strip = {k: v for k, v in h.items() if k != "amendments"}
        assert strip == {k: v for k, v in then.items() if k != "amendments"}, f"{key} changed after {commit[:7]}"
        prose_commit = _first_commit_with(f"**H{h['number']} —", NB)
        assert prose_commit is not None, f"H{h['number']}'s entry is committed and its prose is not"
        then_para = _hypothesis_paragraphs(_show(prose_commit, NB))[h["number"]]
        assert now_paras[h["number"]] == then_para, f"H{h['number']}'s text changed after {prose_commit[:7]}"


def _assert_after_registration(commit: str | None, key: str, number: int) -> None:
    """The judge ``judge_h<number>`` and any record with the claim ``synthesis.<key>`` first appear
    in commits after ``commit``; present in this working copy, they need ``commit``."""
    traces = {
        f"def judge_h{number}(": ("causalbandits_lib/synthesis", "*.py"),
        f'"synthesis.{key}"': ("results", "*/synthesis/*.json"),
    }
    for string, (where, pattern) in traces.items():
        present = any(string in p.read_text(encoding="utf-8", errors="replace") for p in (ROOT / where).glob(pattern))
        first = _first_commit_with(string, f"{where}/{pattern}")
        if not present and first is None:
            continue
        assert commit is not None, f"{string} exists before {key} is registered (committed)"
        if first is not None:
            assert first != commit and _is_ancestor(commit, first), (
                f"{string} first appears in {first[:7]}, not after {key}'s registration {commit[:7]}"
            )


@needs_git
def test_later_hypotheses_registered_before_their_judges_and_records():
    """The commit that registers a hypothesis precedes the first commit of its judge and of any record
    with its claim; a judge or a record in this working copy needs the registration committed."""
    for key, h in _registered().items():
        _assert_after_registration(_registration_commit(key), key, h["number"])
