"""The one import rule of the library, checked on the source (AST), and what importing the core loads.

The rule (``ARCHITECTURE.md``):

- ``causalbandits_lib.core`` imports nothing else of the library;
- a chapter package imports ``core`` and itself only (no other chapter, nothing from ``book``);
- the synthesis chapter (:data:`SYNTHESIS`) sits above the paper chapters: it imports ``core``, any
  paper chapter and itself (never ``book``), and nothing else of the library imports it, ``book``
  included;
- ``causalbandits_lib.book`` may import everything else; nothing outside it imports it;
- no private name (``_x``) is imported from another module;
- no import cycle: no two modules import each other, directly or through others (issue 33);
- every chapter has the same anatomy.

Every ``import`` and ``from ... import`` statement counts, wherever it stands (a lazy import inside
a function still closes a circle); relative imports are resolved, and ``from package import name``
imports the submodule ``package.name`` when there is one, else the package's ``__init__``. Python
also runs a package's ``__init__`` before any module in it; that implicit step is not an edge (an
``__init__`` may import its own submodules).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "causalbandits_lib"
LIB = ROOT / PACKAGE
ANATOMY = ("model", "algorithms", "theory", "experiments", "figures", "registry")
#: The chapters above the paper chapters: they may import the paper chapters, and nothing imports them.
SYNTHESIS = ("synthesis",)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, source: str | None = None) -> list[tuple[str, list[str], int]]:
    """(absolute module, imported names, line) for every import of the library in ``path`` (or in
    ``source``, read as if it were that file)."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []
    text = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module == PACKAGE or module.startswith(PACKAGE + "."):
                names = [a.name for a in node.names]
                # `from causalbandits_lib import core` imports the subpackage
                if module == PACKAGE:
                    out.extend((f"{PACKAGE}.{n}", [], node.lineno) for n in names)
                else:
                    out.append((module, names, node.lineno))
        elif isinstance(node, ast.Import):
            out.extend((a.name, [], node.lineno) for a in node.names if a.name.startswith(PACKAGE))
    return out


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _chapters() -> list[str]:
    return sorted(p.name for p in LIB.iterdir() if (p / "__init__.py").is_file() and p.name not in ("core", "book"))


SOURCES = sorted(LIB.rglob("*.py"))


def test_there_are_chapters_and_sources():
    assert {"primer", "fucb", "bestfair", "cclb", "pcb", "fairx", *SYNTHESIS} <= set(_chapters())
    assert len(SOURCES) > 50


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(LIB)) for p in SOURCES])
def test_import_rule(path):
    me = _module_name(path)
    layer = _layer(me)
    for module, names, line in _imports(path):
        target = _layer(module)
        where = f"{path.relative_to(ROOT)}:{line} imports {module}"
        if target in SYNTHESIS and layer != target:
            raise AssertionError(f"{where}: nothing imports the synthesis chapter, which sits above the others")
        if layer == "core":
            assert target == "core", f"{where}: the core imports nothing but the core"
        elif layer == "book" or layer == "":
            continue
        elif layer in SYNTHESIS:
            assert target != "book", f"{where}: the synthesis chapter imports core, the paper chapters and itself"
        else:  # a paper chapter
            assert target in ("core", layer), f"{where}: a chapter imports only core and itself"


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(LIB)) for p in SOURCES])
def test_no_private_name_crosses_a_module(path):
    for module, names, line in _imports(path):
        private = [n for n in names if n.startswith("_") and not n.startswith("__")]
        assert not private, f"{path.relative_to(ROOT)}:{line} imports private name(s) {private} from {module}"


def _import_graph(sources: dict[Path, str | None]) -> dict[str, dict[str, str]]:
    """module -> {imported module of the library: "file:line" of the first such import}, for the
    files ``sources`` (path -> its text, or None to read the file)."""
    modules = {_module_name(path): path for path in sources}
    graph: dict[str, dict[str, str]] = {}
    for me, path in modules.items():
        edges = graph.setdefault(me, {})
        for module, names, line in _imports(path, sources[path]):
            # `from package import name` imports the submodule package.name when there is one
            targets = [f"{module}.{n}" if f"{module}.{n}" in modules else module for n in names] or [module]
            for target in targets:
                if target in modules and target != me:
                    edges.setdefault(target, f"{path.relative_to(ROOT)}:{line}")
    return graph


def _cycles(graph: dict[str, dict[str, str]]) -> list[tuple[list[str], set[str]]]:
    """(one shortest cycle, as a list of modules with the first repeated at the end; the strongly
    connected set it lies in) for every such set of more than one module (Tarjan's algorithm, then
    a breadth-first search)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            components.append(component)

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(limit)
    cycles = []
    for component in components:
        if len(component) < 2:
            continue
        start = min(component)
        parent: dict[str, str] = {}
        frontier = [start]
        while frontier and start not in parent:
            nxt = []
            for v in frontier:
                for w in sorted(graph[v]):
                    if w in component and w not in parent:
                        parent[w] = v
                        nxt.append(w)
            frontier = nxt
        path = [start]
        while len(path) == 1 or path[-1] != start:
            path.append(parent[path[-1]])
        cycles.append((path[::-1], component))
    return sorted(cycles, key=lambda c: c[0])


def _describe(cycle: list[str], component: set[str], graph: dict[str, dict[str, str]]) -> str:
    short = [m.removeprefix(PACKAGE + ".") for m in cycle]
    steps = [f"{short[i]} -> {short[i + 1]} ({graph[cycle[i]][cycle[i + 1]]})" for i in range(len(cycle) - 1)]
    others = sorted(m.removeprefix(PACKAGE + ".") for m in component - set(cycle))
    tangled = f" [also in the tangle: {', '.join(others)}]" if others else ""
    return "import cycle: " + "; ".join(steps) + tangled


def _import_cycles(inside_book: bool) -> list[str]:
    graph = _import_graph({path: None for path in SOURCES})
    return [
        _describe(cycle, component, graph)
        for cycle, component in _cycles(graph)
        if all(_layer(m) == "book" for m in cycle) == inside_book
    ]


def test_no_import_cycle():
    """No two modules of the library import each other, directly or through others (the book's
    own modules are checked by the next test)."""
    found = _import_cycles(inside_book=False)
    assert not found, "\n".join(found)


def test_no_import_cycle_in_the_book():
    """The book's machinery too: reading a sensitivity record (``book.choices``) is apart from
    running one (``book.sensitivity``, which runs sweeps)."""
    found = _import_cycles(inside_book=True)
    assert not found, "\n".join(found)


def test_the_cycle_check_catches_a_cycle():
    """The checker itself must be able to fail: two modules importing each other (one of them
    inside a function) and a longer circle are reported, with the lines; a one-way import is not."""
    fucb = LIB / "fucb"
    probes = {
        fucb / "_probe_a.py": "from . import _probe_b\n",
        fucb / "_probe_b.py": "def f():\n    from ._probe_a import g\n",
        fucb / "_probe_c.py": "from ._probe_d import x\n",
        fucb / "_probe_d.py": "from causalbandits_lib.fucb._probe_e import y\n",
        fucb / "_probe_e.py": "import causalbandits_lib.fucb._probe_c\n",
        fucb / "_probe_f.py": "from ._probe_a import z\n",
    }
    graph = _import_graph(probes)
    found = [_describe(cycle, component, graph) for cycle, component in _cycles(graph)]
    assert found == [
        "import cycle: fucb._probe_a -> fucb._probe_b (causalbandits_lib/fucb/_probe_a.py:1); "
        "fucb._probe_b -> fucb._probe_a (causalbandits_lib/fucb/_probe_b.py:2)",
        "import cycle: fucb._probe_c -> fucb._probe_d (causalbandits_lib/fucb/_probe_c.py:1); "
        "fucb._probe_d -> fucb._probe_e (causalbandits_lib/fucb/_probe_d.py:1); "
        "fucb._probe_e -> fucb._probe_c (causalbandits_lib/fucb/_probe_e.py:1)",
    ], found


@pytest.mark.parametrize("chapter", _chapters())
def test_every_chapter_has_the_same_anatomy(chapter):
    have = {p.stem for p in (LIB / chapter).glob("*.py")} | {p.name for p in (LIB / chapter).iterdir() if p.is_dir()}
    missing = [m for m in ANATOMY if m not in have]
    assert not missing, f"chapter {chapter!r} lacks module(s) {missing} of the common anatomy {ANATOMY}"


def test_the_rule_catches_a_violation(tmp_path):
    """The checker itself must be able to fail: a core module importing book is reported."""
    fake = LIB / "core" / "_layering_probe.py"
    fake.write_text("from ..book import records\nfrom ..fucb.model import _secret\n")
    try:
        with pytest.raises(AssertionError, match="the core imports nothing but the core"):
            test_import_rule(fake)
        with pytest.raises(AssertionError, match="private name"):
            test_no_private_name_crosses_a_module(fake)
    finally:
        fake.unlink()


def test_the_rule_keeps_synthesis_on_top():
    """A paper chapter or the book importing the synthesis chapter is reported; the synthesis
    chapter importing a paper chapter is allowed, importing the book is not."""
    probes = {
        LIB / "fucb" / "_layering_probe.py": ("from ..synthesis import model\n", "nothing imports the synthesis"),
        LIB / "book" / "_layering_probe.py": ("from ..synthesis import model\n", "nothing imports the synthesis"),
        LIB / "synthesis" / "_layering_probe.py": ("from ..book import records\n", "the synthesis chapter imports"),
    }
    allowed = LIB / "synthesis" / "_layering_probe_ok.py"
    try:
        for fake, (source, message) in probes.items():
            fake.write_text(source)
            with pytest.raises(AssertionError, match=message):
                test_import_rule(fake)
        allowed.write_text("from ..fucb import model\nfrom ..pcb import estimators\n")
        test_import_rule(allowed)
    finally:
        for fake in [*probes, allowed]:
            fake.unlink(missing_ok=True)


def test_importing_the_core_loads_no_plotting_or_notebook_machinery():
    code = (
        "import sys, importlib, pkgutil\n"
        "import causalbandits_lib.core as core\n"
        "for m in pkgutil.iter_modules(core.__path__):\n"
        "    importlib.import_module('causalbandits_lib.core.' + m.name)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('matplotlib', 'papermill', 'jupyter_client', 'jupyter_core', 'nbformat', 'IPython', 'ipykernel', 'nbclient')"
        " or m.startswith('causalbandits_lib.book'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "", f"importing causalbandits_lib.core loaded {out.stdout.strip()}"


@pytest.mark.parametrize("chapter", _chapters())
def test_importing_a_chapter_loads_no_book_machinery(chapter):
    mods = list(ANATOMY)
    code = (
        "import sys, importlib\n"
        + "".join(f"importlib.import_module('{PACKAGE}.{chapter}.{m}')\n" for m in mods)
        + "print(','.join(sorted(m for m in sys.modules if m.startswith('causalbandits_lib.book'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "", f"importing {chapter}'s science modules loaded {out.stdout.strip()}"
