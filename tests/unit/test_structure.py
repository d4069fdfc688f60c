"""The package's shape: no import cycle between files or between subpackages, one door for Locust's
options, no module over 400 lines.

The import graph is read from the source (``ast``), every ``import`` counted wherever it is —
also inside functions, where a cycle hides best — except under ``if TYPE_CHECKING:`` (never
executed). ``from llmload.a import b`` depends on the module ``llmload.a.b`` when that is a
module, else on ``llmload.a`` (its ``__init__``). Subpackages are the first level under
``llmload/`` (``llmload.config``, ``llmload.results``, ...; a top-level module is its own node).
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "llmload"
MAX_LINES = 400


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    """The llmload modules ``tree`` imports (TYPE_CHECKING blocks left out)."""
    found: set[str] = set()

    def target(name: str) -> None:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name.startswith("llmload"):
            found.add(name)

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                target(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    pkg = pkg.rpartition(".")[0]
                base = f"{pkg}.{base}" if base else pkg
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                target(sub if sub in MODULES else base)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    found.discard(module)
    return found


Graph = dict[str, set[str]]  # module -> the modules it imports


def file_graph() -> Graph:
    g: Graph = {}
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        g[name] = _imports(tree, name, path.name == "__init__.py")
    return g


def edges(g: Graph) -> set[tuple[str, str]]:
    return {(a, b) for a, deps in g.items() for b in deps}


def subpackage(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else module


def subpackage_graph(files: Graph) -> Graph:
    g: Graph = {}
    for a, b in edges(files):
        sa, sb = subpackage(a), subpackage(b)
        g.setdefault(sa, set())
        if sa != sb and sb != "llmload":
            g[sa].add(sb)
    return g


def cycle(g: Graph) -> list[str] | None:
    """One import cycle of ``g`` (``[a, b, ..., a]``), or None."""
    try:
        TopologicalSorter(g).prepare()
    except CycleError as e:
        return list(e.args[1])
    return None


def reachable(g: Graph, start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for dep in g.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def test_the_graph_sees_real_imports():
    e = edges(file_graph())
    assert ("llmload.plugin", "llmload.runtime") in e  # from llmload.runtime import Runtime
    assert ("llmload.config.run", "llmload.config.collect") in e  # a module, not the package
    assert ("llmload.users.llm_user", "llmload.users.context") in e
    assert ("llmload.analysis.verdict", "llmload.results.judgement") in e


def test_type_checking_imports_are_not_dependencies():
    tree = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from llmload.runtime import Runtime\n")
    assert _imports(tree, "llmload.x", False) == set()
    tree = ast.parse("def f():\n    from llmload.runtime import Runtime\n")  # a lazy import still counts
    assert _imports(tree, "llmload.x", False) == {"llmload.runtime"}


def test_a_cycle_would_be_found():
    g = {"llmload.a.x": {"llmload.b.y"}, "llmload.b.y": {"llmload.a.z"}, "llmload.a.z": set()}
    assert cycle(g) is None and sorted(set(cycle(subpackage_graph(g)))) == ["llmload.a", "llmload.b"]
    assert cycle({"x": {"y"}, "y": {"x"}}) is not None


def test_no_import_cycle_between_files():
    assert cycle(file_graph()) is None


def test_no_import_cycle_between_subpackages():
    assert cycle(subpackage_graph(file_graph())) is None


#: docs/design.md's layers, top to bottom: a package imports its own layer or the layers below, never above.
LAYERS = (
    ("plugin", "webform", "cli", "__main__", "locustfile", "locustfile_ladder", "locustfile_web"),
    ("runtime",),
    ("users", "webui", "web", "webauth", "exporter"),
    ("ladder", "collect", "gpu", "report", "gate", "capacity", "rundir", "discovery", "preflight"),
    ("analysis",),
    ("results",),
    ("config",),
    ("metrics", "workload", "adapters", "arrivals", "sim", "testing"),
    ("errors", "redact"),
)


def test_every_package_has_a_layer_and_imports_only_its_own_layer_or_below():
    layer = {f"llmload.{name}": i for i, names in enumerate(LAYERS) for name in names}
    g = subpackage_graph(file_graph())
    assert set(g) - {"llmload"} <= set(layer), sorted(set(g) - set(layer))
    upward = sorted((a, b) for a, deps in g.items() for b in deps if layer[b] < layer[a])
    assert upward == []


def test_analysis_does_not_import_the_writers():
    bad = [(a, b) for a, b in edges(file_graph()) if a.startswith("llmload.analysis") and b.startswith("llmload.report")]
    assert bad == []


def test_config_results_and_analysis_stay_below_the_runtime():
    g = subpackage_graph(file_graph())
    for pkg in ("llmload.config", "llmload.results", "llmload.analysis"):
        reach = reachable(g, pkg)
        assert not reach & {"llmload.runtime", "llmload.plugin", "llmload.users", "llmload.webui"}, (pkg, reach)


def _touches_parsed_options(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "parsed_options":
            return True
        if isinstance(node, ast.Constant) and node.value == "parsed_options":  # getattr(env, "parsed_options")
            return True
    return False


def test_one_module_reads_locusts_parsed_options():
    readers = sorted(n for n, p in MODULES.items() if _touches_parsed_options(ast.parse(p.read_text(encoding="utf-8"))))
    assert readers == ["llmload.runtime.options"]


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_over_400_lines(name):
    lines = MODULES[name].read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(ROOT)}: {lines} lines (split it: one concept per module)"
