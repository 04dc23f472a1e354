"""Helpers shared by the notebook and book-build tests."""

from __future__ import annotations

from pathlib import Path

from causalbandits_lib.book.execution import execute_notebook
from causalbandits_lib.book.params import NotebookSpec, load_all

ROOT = Path(__file__).resolve().parents[2]
#: Executed smoke-profile copies of every notebook (made by test_notebooks.py, used by the book test).
SMOKE_DIR = ROOT / "_build" / "test-notebooks"


def all_notebooks() -> list[NotebookSpec]:
    return [nb for ch in load_all(ROOT / "notebooks").values() for nb in ch.notebooks.values()]


def executed_copy(spec: NotebookSpec) -> Path:
    return SMOKE_DIR / "executed" / spec.chapter / f"{spec.name}.ipynb"


def execute_smoke(spec: NotebookSpec, timeout: int = 900):
    """Execute ``spec`` at the smoke profile with papermill into :data:`SMOKE_DIR`."""
    return execute_notebook(
        spec, {"profile": "smoke"}, SMOKE_DIR / "executed", SMOKE_DIR / "records", progress=False, timeout=timeout
    )


def is_claim_call(node) -> bool:
    """Whether an AST node is a claim registration ``nb.claim(...)``."""
    import ast

    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "claim"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "nb"
    )
