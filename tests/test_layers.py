"""Layers without cycles (docs/architecture.md, "Layers"): the import graph of src/ideaharness.

The graph is built from the AST of every module: an edge ``a -> b`` when a module of top-level
package ``a`` imports one of ``b`` (``ideaharness.<b>...``; ``from ideaharness import __version__``
is the package root, not a layer). Module-level imports (those run at import time, outside any
function; ``if TYPE_CHECKING:`` blocks excluded) must form no cycle between top-level packages and
never go from a lower layer to a higher one. Function-local imports (run when the function is
called, which is how a lower layer reaches a higher one without an import cycle) may go upward only
where :data:`LOCAL_UPWARD` names the file and says why; a new one fails, and so does an entry
that is no longer needed.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "ideaharness"

LAYERS: list[tuple[str, frozenset[str]]] = [
    ("base", frozenset({"errors", "text", "textio", "jsonl", "concurrency", "tables", "results", "fileio",
                        "redaction", "seeding", "schema", "net", "cutoff"})),
    ("clients", frozenset({"llm", "scholarly", "systems"})),
    # systems (idea-generation systems as providers; the idea contracts) imports llm; llm.providers
    # reaches systems.adapters only inside its provider factories; benchmarks register contracts
    ("domain", frozenset({"data", "metrics", "prompts"})),
    ("methods", frozenset({"retrieval", "generation"})),
    ("store", frozenset({"runs"})),
    ("analysis", frozenset({"analysis"})),
    ("presentation", frozenset({"report"})),
    ("runner", frozenset({"runner"})),
    ("benchmarks", frozenset({"benchmarks"})),
    ("entry points", frozenset({"api", "cli", "__main__"})),
]
"""Bottom to top; a package may import its own layer and the layers below it. The same order is
written in docs/architecture.md."""

TESTING = "testing"
"""``ideaharness.testing`` (loopback servers): imports only the base layer and itself; no runtime
module imports it."""

ROOT = "__root__"
"""The package root ``ideaharness/__init__.py`` (``__version__``; lazy ``run``, ``arun``, ``load_run``)."""

LOCAL_UPWARD: dict[tuple[str, str], str] = {
    ("runner/registry.py", "benchmarks"): "discover() imports the built-in benchmark packages (plugin "
                                          "discovery, the same path as an entry point)",
    ("runs/ray_runner.py", "runner"): "a Ray worker builds the StepRunner of its unit on the worker",
    ("report/console.py", "runner"): "the console prints the runner's banner line and reliability table",
    ("analysis/compare.py", "runner"): "settings_mismatch reads a benchmark's free_settings from the "
                                       "registry",
    ("analysis/load.py", "runner"): "load_run looks up the run's benchmark in the registry",
}
"""(file under src/ideaharness, imported top-level package) -> why a function-local import goes
up the layers there. Keep it short: each entry is a place where a lower layer knows a higher one."""


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    file: str
    line: int
    local: bool


def _top_level(path: Path, root: Path) -> str:
    parts = path.relative_to(root).parts
    if len(parts) == 1:
        return ROOT if parts[0] == "__init__.py" else parts[0].removesuffix(".py")
    return parts[0]


def _targets(node: ast.AST, root: Path) -> list[str]:
    """Top-level packages of ``ideaharness`` that one import statement names."""
    names: list[str] = []
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
        if node.module == "ideaharness":
            names = [f"ideaharness.{a.name}" for a in node.names]
        else:
            names = [node.module]
    out = []
    for name in names:
        parts = name.split(".")
        if parts[0] != "ideaharness":
            continue
        if len(parts) == 1:
            out.append(ROOT)
            continue
        sub = parts[1]
        is_module = (root / sub).is_dir() or (root / f"{sub}.py").is_file()
        out.append(sub if is_module else ROOT)
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def import_edges(root: Path) -> list[Edge]:
    """Every import between top-level packages of the package at ``root`` (no self-edges).

    Raises:
        SyntaxError: a module that does not parse.
    """
    edges: list[Edge] = []
    for path in sorted(root.rglob("*.py")):
        source = _top_level(path, root)
        rel = str(path.relative_to(root))
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))

        def visit(node: ast.AST, local: bool, source: str = source, rel: str = rel) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.If) and _is_type_checking(child):
                    continue  # type-only: never imported at run time
                inner = local or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                for target in _targets(child, root):
                    if target != source:
                        edges.append(Edge(source, target, rel, getattr(child, "lineno", 0), inner))
                visit(child, inner)

        visit(tree, False)
    return edges


def cycles(edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components with more than one package (Tarjan), each sorted."""
    graph: dict[str, set[str]] = defaultdict(set)
    for e in edges:
        graph[e.source].add(e.target)
        graph.setdefault(e.target, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def strongconnect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    return found


def rank(package: str) -> int:
    """The layer index of a top-level package (0 = base).

    Raises:
        KeyError: a package no layer lists (a new top-level package must be placed in LAYERS).
    """
    for i, (_, members) in enumerate(LAYERS):
        if package in members:
            return i
    raise KeyError(package)


def upward(edges: list[Edge]) -> list[Edge]:
    """Edges from a lower layer to a higher one (the root and ``testing`` are checked apart)."""
    return [e for e in edges if ROOT not in (e.source, e.target) and TESTING not in (e.source, e.target)
            and rank(e.source) < rank(e.target)]


def _evidence(edges: list[Edge]) -> str:
    return "; ".join(f"{e.file}:{e.line} ({e.source} -> {e.target})" for e in edges)


EDGES = import_edges(SRC)
MODULE_LEVEL = [e for e in EDGES if not e.local]
PACKAGES = sorted({p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").is_file()})


def test_every_top_level_package_is_in_a_layer() -> None:
    names = {_top_level(p, SRC) for p in SRC.rglob("*.py")} - {ROOT, TESTING}
    unplaced = sorted(n for n in names if not any(n in members for _, members in LAYERS))
    assert not unplaced, f"top-level packages/modules in no layer (add them to LAYERS and docs): {unplaced}"


def test_no_import_cycle_between_top_level_packages() -> None:
    found = cycles(MODULE_LEVEL)
    detail = [_evidence([e for e in MODULE_LEVEL if e.source in c and e.target in c]) for c in found]
    assert not found, f"module-level import cycles between top-level packages: {found}: {detail}"


def test_no_lower_layer_imports_a_higher_one_at_module_level() -> None:
    bad = upward(MODULE_LEVEL)
    assert not bad, f"a lower layer imports a higher one: {_evidence(bad)}"


def test_function_local_upward_imports_are_the_listed_ones() -> None:
    local = upward([e for e in EDGES if e.local])
    seen = {(e.file, e.target) for e in local}
    new = [e for e in local if (e.file, e.target) not in LOCAL_UPWARD]
    assert not new, f"function-local imports up the layers not in LOCAL_UPWARD: {_evidence(new)}"
    stale = sorted(set(LOCAL_UPWARD) - seen)
    assert not stale, f"LOCAL_UPWARD entries no longer needed (remove them): {stale}"


def test_the_root_imports_nothing_at_module_level() -> None:
    bad = [e for e in MODULE_LEVEL if e.source == ROOT]
    assert not bad, f"ideaharness/__init__.py imports at module level: {_evidence(bad)}"


def test_no_runtime_module_imports_the_test_servers() -> None:
    bad = [e for e in EDGES if e.target == TESTING]
    assert not bad, f"runtime modules import ideaharness.testing: {_evidence(bad)}"
    below = [e for e in EDGES if e.source == TESTING and e.target != ROOT and rank(e.target) > 0]
    assert not below, f"ideaharness.testing imports above the base layer: {_evidence(below)}"


@pytest.mark.parametrize("package", PACKAGES)
def test_each_top_level_package_imports_alone(package: str) -> None:
    """In a fresh interpreter, so an import that works only after another package was imported
    (a cycle held together by import order) fails here."""
    done = subprocess.run([sys.executable, "-c", f"import ideaharness.{package}"], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "ideaharness"
    for name, text in {"__init__.py": "", **files}.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def test_the_checks_find_a_cycle_an_upward_import_and_a_local_one(tmp_path: Path) -> None:
    """The detector itself: errors -> llm at module level closes a cycle; a function-local import
    is kept apart; a TYPE_CHECKING import is not an edge."""
    root = _tree(tmp_path, {
        "errors.py": "from ideaharness.llm.x import y\n",
        "llm/__init__.py": "",
        "llm/x.py": ("from ideaharness.errors import E\nfrom typing import TYPE_CHECKING\n"
                     "if TYPE_CHECKING:\n    from ideaharness.runner import R\n"
                     "def f():\n    from ideaharness.runner.run import g\n"),
        "runner/__init__.py": "from ideaharness import __version__\n",
    })
    edges = import_edges(root)
    module_level = {(e.source, e.target) for e in edges if not e.local}
    assert module_level == {("errors", "llm"), ("llm", "errors"), ("runner", ROOT)}
    assert cycles([e for e in edges if not e.local]) == [["errors", "llm"]]
    local = [(e.source, e.target, e.file, e.line) for e in edges if e.local]
    assert local == [("llm", "runner", "llm/x.py", 6)]
    assert [(e.source, e.target) for e in upward(edges)] == [("errors", "llm"), ("llm", "runner")]
