"""The standard of evidence, checked on the notebooks' source (issue 14): every claim declares its
kind, no verdict compares two means with a bare inequality, and every rate claim uses the one
rate test. Checked on the MyST source, without executing."""

from __future__ import annotations

import ast

import jupytext
import pytest

from causalbandits_lib.core.checks import KINDS

from .notebook_support import ROOT, all_notebooks, is_claim_call

NOTEBOOKS = all_notebooks()

#: Checks that decide an ordering or a rate from plain means: not allowed in a claim.
FORBIDDEN_CHECKS = {"check_order"}
#: Library modules where ``check_order`` orders exact numbers computed on the model (no sampling, so
#: no paired differences exist), each with why.
EXACT_ORDERS = {
    "causalbandits_lib/synthesis/study.py": "H6 orders the exact prices of the notions' optima (notebook 1)",
}


def _claim_calls(spec):
    nb = jupytext.read(ROOT / "notebooks" / spec.chapter / f"{spec.name}.md", fmt="md:myst")
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(source)):
            if is_claim_call(node):
                yield node, source


def _label(call: ast.Call) -> str:
    first = call.args[0] if call.args else None
    return ast.unparse(first) if first is not None else "?"


@pytest.mark.parametrize("spec", NOTEBOOKS, ids=[nb.id for nb in NOTEBOOKS])
def test_every_claim_declares_its_kind(spec):
    missing, wrong = [], []
    for call, _ in _claim_calls(spec):
        kind = next((k.value for k in call.keywords if k.arg == "kind"), None)
        if kind is None:
            missing.append(_label(call))
        elif isinstance(kind, ast.Constant) and kind.value not in KINDS:
            wrong.append(f"{_label(call)}: {kind.value!r}")
    assert not missing, f"claims without kind= in {spec.id}: {missing}"
    assert not wrong, f"claims with an unknown kind in {spec.id} (allowed {KINDS}): {wrong}"


def _bare_comparisons(tree: ast.AST, where: str) -> list[str]:
    bad = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name in FORBIDDEN_CHECKS:
            bad.append(f"{where}: {name} (judge orderings on paired differences: check_paired_order)")
        if name in ("check_at_most", "check_at_least") and node.args:
            first = ast.unparse(node.args[0])
            if "slope" in first:
                bad.append(f"{where}: a rate judged by {name}({first}, ...) (use check_rate / check_sublinear)")
    return bad


@pytest.mark.parametrize("spec", NOTEBOOKS, ids=[nb.id for nb in NOTEBOOKS])
def test_no_bare_comparison_of_means_or_rates(spec):
    nb = jupytext.read(ROOT / "notebooks" / spec.chapter / f"{spec.name}.md", fmt="md:myst")
    bad = []
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        bad += _bare_comparisons(ast.parse(source), f"{spec.id} code cell {i}")
    for call, _ in _claim_calls(spec):
        if any(isinstance(n, ast.Call) and getattr(n.func, "attr", "") == "loglog_slope" for n in ast.walk(call)):
            bad.append(f"{_label(call)} judges a rate on loglog_slope (use check_rate / check_sublinear)")
    assert not bad, "\n".join(bad)


def test_no_library_verdict_compares_means_bare():
    bad = []
    for path in sorted((ROOT / "causalbandits_lib").rglob("*.py")):
        if path.parts[-2:] == ("core", "checks.py") or str(path.relative_to(ROOT)) in EXACT_ORDERS:
            continue  # where the checks are defined; exact orderings
        bad += _bare_comparisons(ast.parse(path.read_text(encoding="utf-8")), str(path.relative_to(ROOT)))
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize("spec", NOTEBOOKS, ids=[nb.id for nb in NOTEBOOKS])
def test_verdicts_and_margins_are_never_typed_in(spec):
    """A verdict comes from a check (which keeps its inputs), a margin from the chapter's committed
    ``margins.yml`` (through ``nb.margin``): neither is built by hand in a notebook."""
    nb = jupytext.read(ROOT / "notebooks" / spec.chapter / f"{spec.name}.md", fmt="md:myst")
    bad = []
    for i, cell in enumerate(c for c in nb.cells if c.cell_type == "code"):
        source = "\n".join(line for line in cell.source.splitlines() if not line.lstrip().startswith(("%", "!")))
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
                if name in ("Verdict", "Margin"):
                    bad.append(f"{spec.id} code cell {i}: {name}(...) built by hand")
    assert not bad, "\n".join(bad)
