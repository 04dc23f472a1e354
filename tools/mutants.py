"""``make mutants``: does the book catch its own bugs? (issue 29)

Every ``tests/mutants/<chapter>/<NN>_<slug>.patch`` is a small, plausible bug: a preamble of
``Mutant:``, ``Chapter:`` and ``Path:`` lines (the bug, its chapter, the paper-scale computation
that uses the code), then a unified diff relative to the repository's root. For each mutant this
script copies the repository's files as they are in the working tree (tracked, and untracked but
not ignored) into a fresh temporary folder, applies the patch there with ``git apply`` and runs

1. the chapter's unit tests and its conformance entries (``tests/<chapter>``,
   ``tests/test_contracts.py``), with the copy first on ``PYTHONPATH`` so that its library wins
   over the editable install;
2. only if no test failed, the chapter's notebooks at the smoke profile, whose code-check claims
   (kinds identity and construction) are compared with those of an unmutated copy's smoke run (run
   once per chapter).

A mutant is CAUGHT when a unit test fails, a code-check claim reproduced without the mutant is not
reproduced with it, or a notebook stops with an error. A verdict of an experiment or a theorem that
merely moves does not count, and neither does a test that already fails on the unmutated copy (such
tests are found once per chapter, named in a warning and left out of the mutants' runs).

The script prints a line per mutant and the mutation score, writes the results as JSON (``--out``)
and exits 0 when every mutant is caught, 1 when one survives or a patch does not apply.

    .venv/bin/python tools/mutants.py [--chapter C ...] [--one-per-chapter] [--out results/mutants.json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "tests" / "mutants"
CODE_CHECK_KINDS = ("identity", "construction")
PREAMBLE_KEYS = ("Mutant", "Chapter", "Path")


class HarnessError(Exception):
    """The harness itself cannot go on (a patch that does not apply, a preamble that is incomplete)."""


def parse_patch(text: str) -> dict:
    """The preamble's fields (``description``, ``chapter``, ``path``) and the files the diff touches."""
    head, sep, _ = text.partition("diff --git ")
    if not sep:
        raise HarnessError("no 'diff --git' line: the patch is empty")
    fields = {}
    for line in head.splitlines():
        key, colon, value = line.partition(":")
        if colon and key.strip() in PREAMBLE_KEYS:
            fields[key.strip()] = value.strip()
    missing = [k for k in PREAMBLE_KEYS if not fields.get(k)]
    if missing:
        raise HarnessError(f"the preamble has no {missing[0]!r} line")
    files = sorted(set(re.findall(r"^diff --git a/(\S+) b/\S+$", text, flags=re.M)))
    return {"description": fields["Mutant"], "chapter": fields["Chapter"], "path": fields["Path"], "files": files}


def code_check_verdicts(records: list[dict]) -> dict[str, str]:
    """``{claim id: verdict}`` of the identity and construction claims of some records."""
    return {c["id"]: c["verdict"] for r in records for c in r.get("claims", []) if c.get("kind") in CODE_CHECK_KINDS}


def caught_by(failed_tests: list, baseline: dict[str, str], mutant: dict[str, str] | None, error: str = "") -> list:
    """Why a mutant is caught (empty: it survived): the failing tests; else the notebook error, or
    the code-check claims reproduced in the ``baseline`` that are not with the mutant (a claim
    missing from a run that stopped early is not counted: the error is the reason)."""
    if failed_tests:
        return list(failed_tests)
    if error:
        return [f"notebook error: {error}"]
    if mutant is None:
        return []
    return sorted(cid for cid, v in baseline.items() if v == "reproduced" and mutant.get(cid) != "reproduced")


def select_patches(chapters: list[str] | None, one_per_chapter: bool, root: Path = MUTANTS) -> list[Path]:
    """The patch files, sorted; restricted to ``chapters``, and to the first of each with ``one_per_chapter``."""
    patches = sorted(root.glob("*/*.patch"))
    if chapters:
        patches = [p for p in patches if p.parent.name in chapters]
    if one_per_chapter:
        first: dict[str, Path] = {}
        for p in patches:
            first.setdefault(p.parent.name, p)
        patches = sorted(first.values())
    return patches


def _env(tmp: Path) -> dict:
    from causalbandits_lib.book.execution import blas_environment

    env = {**os.environ, "PYTHONPATH": str(tmp), "CAUSALBANDITS_BOOK_ROOT": str(tmp), "CAUSALBANDITS_OFFLINE": "1"}
    # the tests' arithmetic (the Makefile's pins), so that the kernels' bit-identity tests hold outside make too
    env.update(blas_environment(), OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYTHONHASHSEED="0")
    return env


def copy_repository(patch: Path | None = None) -> Path:
    """A fresh temporary copy of the working tree's files, with ``patch`` applied."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.split("\0")
    tmp = Path(tempfile.mkdtemp(prefix="mutant-"))
    for rel in filter(None, listed):
        src = ROOT / rel
        if src.is_file():  # a tracked file deleted in the working tree is skipped
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, tmp / rel)
    if patch is not None:
        done = subprocess.run(["git", "apply", str(patch)], cwd=tmp, capture_output=True, text=True)
        if done.returncode != 0:
            shutil.rmtree(tmp, ignore_errors=True)
            raise HarnessError(f"{patch.relative_to(ROOT)} does not apply: {done.stderr.strip()}")
    return tmp


def run_tests(tmp: Path, chapter: str, stop_first: bool = True, deselect: tuple[str, ...] = ()) -> list[str]:
    """The ids of the failing tests (``stop_first``: ``-x``, the first failure stops the run)."""
    cmd = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *(["-x"] if stop_first else [])]
    cmd += ["-m", "not notebooks and not book", f"tests/{chapter}", "tests/test_contracts.py"]
    cmd += ["-k", f"not test_entry_conforms or [{chapter}."]  # the chapter's conformance entries only
    cmd += [f"--deselect={test}" for test in deselect]
    done = subprocess.run(cmd, cwd=tmp, env=_env(tmp), capture_output=True, text=True)
    failed = [m.split(" - ")[0] for m in re.findall(r"^(?:FAILED|ERROR) (.+)$", done.stdout, flags=re.M)]
    if done.returncode != 0 and not failed:  # e.g. no test collected, or pytest itself broke
        tail = (done.stdout + done.stderr).strip().splitlines()[-1:] or ["no output"]
        raise HarnessError(f"pytest exited with code {done.returncode} in {tmp}: {tail[0]}")
    return failed


def run_notebooks(tmp: Path, chapter: str) -> tuple[dict[str, str], str]:
    """The code-check verdicts of the chapter's notebooks at the smoke profile, and the first line of
    the error of a notebook that stopped ("" when every notebook ran)."""
    out = tmp / "_nb"
    cmd = [sys.executable, "-m", "causalbandits_lib.book.cli", "run", chapter, "--profile", "smoke", "--out", str(out)]
    done = subprocess.run([*cmd, "--no-progress"], cwd=tmp, env=_env(tmp), capture_output=True, text=True)
    records = [json.loads(p.read_text(encoding="utf-8")) for p in sorted((out / chapter).glob("*.json"))]
    error = ""
    if done.returncode != 0:
        lines = [ln for ln in done.stderr.splitlines() if ln.startswith("causalbandits: error:")]
        error = lines[0] if lines else (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        error = error.removeprefix("causalbandits: error: ")
    return code_check_verdicts(records), error


class Baselines:
    """What the unmutated copy gives, per chapter, computed once and only when needed: the unit
    tests that already fail there (deselected in the mutants' runs: a test that fails anyway
    catches nothing) and the code-check verdicts of the smoke run."""

    def __init__(self) -> None:
        self.failing: dict[str, tuple[str, ...]] = {}
        self.verdicts: dict[str, dict[str, str]] = {}

    def failing_tests(self, chapter: str) -> tuple[str, ...]:
        if chapter not in self.failing:
            tmp = copy_repository()
            try:
                self.failing[chapter] = tuple(run_tests(tmp, chapter, stop_first=False))
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            for test in self.failing[chapter]:
                print(f"warning: {test} fails without any mutant; it is left out of the {chapter} runs", flush=True)
        return self.failing[chapter]

    def code_checks(self, chapter: str) -> dict[str, str]:
        if chapter not in self.verdicts:
            tmp = copy_repository()
            try:
                verdicts, error = run_notebooks(tmp, chapter)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
            if error:
                raise HarnessError(f"the unmutated {chapter} notebooks fail at the smoke profile: {error}")
            self.verdicts[chapter] = verdicts
        return self.verdicts[chapter]


def run_mutant(patch: Path, baselines: Baselines) -> dict:
    """Apply one patch to a fresh copy, run the tests (then, if none failed, the notebooks) and say why it is caught."""
    info = parse_patch(patch.read_text(encoding="utf-8"))
    chapter = patch.parent.name
    if info["chapter"] != chapter:
        raise HarnessError(f"{patch.relative_to(ROOT)} says Chapter: {info['chapter']} but lies in {chapter}/")
    deselect = baselines.failing_tests(chapter)
    started = time.perf_counter()
    tmp = copy_repository(patch)
    try:
        failed = run_tests(tmp, chapter, deselect=deselect)
        verdicts, error, baseline = None, "", {}
        if not failed:
            baseline = baselines.code_checks(chapter)
            verdicts, error = run_notebooks(tmp, chapter)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    reasons = caught_by(failed, baseline, verdicts, error)
    return {
        "id": f"{chapter}/{patch.stem}",
        "chapter": chapter,
        "files": info["files"],
        "description": info["description"],
        "path": info["path"],
        "caught": bool(reasons),
        "caught_by": reasons,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chapter", action="append", help="only this chapter's mutants (repeatable)")
    ap.add_argument("--one-per-chapter", action="store_true", help="the first mutant (sorted) of each chapter")
    ap.add_argument("--out", type=Path, help="write the results as JSON here")
    ap.add_argument(
        "--tests-pass",
        action="store_true",
        help="skip the unmutated run of each chapter's tests (CI, right after make test passed)",
    )
    args = ap.parse_args(argv)
    patches = select_patches(args.chapter, args.one_per_chapter)
    if not patches:
        print(f"mutants: error: no patch under {MUTANTS} for {args.chapter or 'any chapter'}", file=sys.stderr)
        return 1
    baselines = Baselines()
    if args.tests_pass:
        baselines.failing = {p.parent.name: () for p in patches}
    results = []
    try:
        for patch in patches:
            r = run_mutant(patch, baselines)
            results.append(r)
            how = "; ".join(r["caught_by"][:3]) if r["caught"] else "SURVIVED"
            print(f"{r['id']}: {'caught' if r['caught'] else 'SURVIVED'} in {r['seconds']:.0f} s ({how})", flush=True)
    except HarnessError as exc:
        print(f"mutants: error: {exc}", file=sys.stderr)
        return 1
    n_caught = sum(r["caught"] for r in results)
    score = n_caught / len(results)
    print(f"mutation score {n_caught}/{len(results)} = {score:.2f}")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        doc = {"mutants": results, "mutation_score": score, "n_mutants": len(results), "n_caught": n_caught}
        doc["failing_without_mutants"] = {c: list(f) for c, f in baselines.failing.items() if f}
        args.out.write_text(json.dumps(doc, sort_keys=True, indent=1) + "\n", encoding="utf-8")
    survivors = [r["id"] for r in results if not r["caught"]]
    if survivors:
        print(f"mutants: error: not caught: {', '.join(survivors)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
