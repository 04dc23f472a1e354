"""The pure parts of ``tools/mutants.py`` (``make mutants``): reading a mutant's preamble, choosing
the patches, and the rule that says when a mutant is caught. No mutant is run here; every
committed patch is only checked to have a complete preamble and to apply to the tree."""

from __future__ import annotations

import importlib.util
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("mutants_harness", ROOT / "tools" / "mutants.py")
H = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(H)

DIFF = """diff --git a/causalbandits_lib/x/a.py b/causalbandits_lib/x/a.py
index 1111111..2222222 100644
--- a/causalbandits_lib/x/a.py
+++ b/causalbandits_lib/x/a.py
@@ -1 +1 @@
-r = max(n, 1)
+r = n + 1
"""
PREAMBLE = "Mutant: the radius divides by 1 + N.\nChapter: x\nPath: every index of chapter x.\n\n"


def test_the_preamble_and_the_files_touched_are_read():
    second = DIFF.replace("x/a.py", "x/kernels.py")
    info = H.parse_patch(PREAMBLE + DIFF + second)
    assert info == {
        "description": "the radius divides by 1 + N.",
        "chapter": "x",
        "path": "every index of chapter x.",
        "files": ["causalbandits_lib/x/a.py", "causalbandits_lib/x/kernels.py"],
    }


@pytest.mark.parametrize(
    "text, message",
    [
        (PREAMBLE, "no 'diff --git'"),
        ("Mutant: a bug\nChapter: x\n\n" + DIFF, "'Path'"),
        ("Chapter: x\nPath: y\n\n" + DIFF, "'Mutant'"),
    ],
)
def test_an_incomplete_patch_is_an_error_naming_what_is_missing(text, message):
    with pytest.raises(H.HarnessError, match=message):
        H.parse_patch(text)


def test_a_failing_test_catches_the_mutant_whatever_the_notebooks_say():
    failed = ["tests/x/test_a.py::test_radius"]
    assert H.caught_by(failed, {"x.claim": "reproduced"}, None) == failed
    assert H.caught_by(failed, {}, {}, error="boom") == failed


def test_a_code_check_claim_that_stops_being_reproduced_catches_the_mutant():
    baseline = {"x.a": "reproduced", "x.b": "reproduced", "x.c": "not reproduced"}
    assert H.caught_by([], baseline, {"x.a": "reproduced", "x.b": "partly", "x.c": "not reproduced"}) == ["x.b"]
    # a claim the mutant's run no longer makes counts as not reproduced
    assert H.caught_by([], baseline, {"x.b": "reproduced", "x.c": "reproduced"}) == ["x.a"]
    # a claim that was not reproduced without the mutant catches nothing, whatever it becomes
    assert H.caught_by([], baseline, {"x.a": "reproduced", "x.b": "reproduced", "x.c": "reproduced"}) == []
    assert H.caught_by([], baseline, dict(baseline)) == []  # survived


def test_a_notebook_error_catches_the_mutant():
    assert H.caught_by([], {"x.a": "reproduced"}, {}, error="x/01 failed in cell 3: ValueError: nan") == [
        "notebook error: x/01 failed in cell 3: ValueError: nan"
    ]


def test_only_identity_and_construction_claims_are_code_checks():
    records = [
        {"claims": [{"id": "a", "kind": "identity", "verdict": "reproduced"}]},
        {
            "claims": [
                {"id": "b", "kind": "experiment", "verdict": "reproduced"},
                {"id": "c", "kind": "theorem", "verdict": "not reproduced"},
                {"id": "d", "kind": "construction", "verdict": "partly"},
            ]
        },
        {},
    ]
    assert H.code_check_verdicts(records) == {"a": "reproduced", "d": "partly"}


def test_patches_are_chosen_sorted_by_chapter_and_one_per_chapter(tmp_path):
    for rel in ("b/02_y.patch", "b/01_x.patch", "a/01_z.patch", "a/README.md", "c/03_w.patch"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    names = lambda ps: [f"{p.parent.name}/{p.name}" for p in ps]  # noqa: E731
    assert names(H.select_patches(None, False, tmp_path)) == [
        "a/01_z.patch",
        "b/01_x.patch",
        "b/02_y.patch",
        "c/03_w.patch",
    ]
    assert names(H.select_patches(["b"], False, tmp_path)) == ["b/01_x.patch", "b/02_y.patch"]
    assert names(H.select_patches(None, True, tmp_path)) == ["a/01_z.patch", "b/01_x.patch", "c/03_w.patch"]
    assert names(H.select_patches(["b", "c"], True, tmp_path)) == ["b/01_x.patch", "c/03_w.patch"]


PATCHES = sorted((ROOT / "tests" / "mutants").glob("*/*.patch"))


@pytest.mark.parametrize("patch", PATCHES, ids=[f"{p.parent.name}/{p.stem}" for p in PATCHES])
def test_every_committed_mutant_has_a_preamble_and_applies(patch):
    info = H.parse_patch(patch.read_text(encoding="utf-8"))
    assert info["chapter"] == patch.parent.name
    assert info["files"] and all((ROOT / f).is_file() for f in info["files"])
    done = subprocess.run(["git", "apply", "--check", str(patch)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"{patch.name} no longer applies: {done.stderr.strip()}"
