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
    ("plugin", "web", "cli", "__main__", "locustfile", "locustfile_ladder", "locustfile_web"),
    ("runtime",),
    ("users", "exporter"),
    ("ladder", "collect", "gpu", "report", "gate", "capacity", "rundir", "discovery", "preflight"),
    ("analysis",),
    ("results",),
    ("config",),
    ("metrics", "workload", "adapters", "arrivals", "sim", "testing"),
    ("errors", "redact", "jsonvalue"),
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
        assert not reach & {"llmload.runtime", "llmload.plugin", "llmload.users", "llmload.web"}, (pkg, reach)


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


#: Modules that read a result's ``config``/``profile`` dicts until they move to ``result.setup`` (issue 24: the
#: console's and report.json's run line, owned by the measure-module split). The list only shrinks.
SETUP_DICT_READERS_LEFT = {"llmload.report.console", "llmload.report.data"}


def _reads_setup_dicts(tree: ast.AST) -> bool:
    """``x.config`` / ``x.profile`` anywhere but on ``run`` (a run directory's ``config.json``, :class:`~llmload.rundir.Run`)."""
    return any(
        isinstance(node, ast.Attribute) and node.attr in ("config", "profile")
        and not (isinstance(node.value, ast.Name) and node.value.id == "run")
        for node in ast.walk(tree)
    )  # fmt: skip


def test_the_analysis_and_the_writers_read_the_typed_setup_not_its_dicts():
    """Flags and profile classes are read once, into :class:`~llmload.results.setup.RunSetup` (``result.setup``)."""
    scope = [n for n in MODULES if n.split(".")[1:2] in (["analysis"], ["report"], ["gate"], ["rundir"])]
    readers = {n for n in scope if _reads_setup_dicts(ast.parse(MODULES[n].read_text(encoding="utf-8")))}
    assert readers == SETUP_DICT_READERS_LEFT


def test_a_setup_dict_read_is_seen():
    assert _reads_setup_dicts(ast.parse("x = result.config.get('seed')"))
    assert _reads_setup_dicts(ast.parse("n = r.profile['name']"))
    assert not _reads_setup_dicts(ast.parse("host = run.config and result.setup.host"))


def _numeric_defaults() -> dict[str, float]:
    from llmload.config.flags import FLAGS

    return {f.dest: f.default for f in FLAGS if isinstance(f.default, (int, float)) and not isinstance(f.default, bool)
            and f.default not in (0, -1)}  # fmt: skip


def _restated_defaults(tree: ast.AST, defaults: dict[str, float]) -> list[str]:
    """Where ``tree`` writes a flag's default itself: ``degradation: float = 0.5`` (a parameter or a field),
    ``d.get("degradation", 0.5)``, ``d.get("degradation") or 0.5``, ``{"degradation": 0.5}``, or a command of its
    own declaring the flag again: ``p.add_argument("--degradation", default=0.5)``."""

    def same(dest: str, value: ast.AST | None) -> bool:
        return dest in defaults and isinstance(value, ast.Constant) and value.value == defaults[dest] \
            and type(value.value) is not bool  # fmt: skip

    def key(node: ast.AST) -> str:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.arguments):
            args = [*node.posonlyargs, *node.args]
            pairs = list(zip(args[len(args) - len(node.defaults) :], node.defaults, strict=True))
            pairs += [(a, d) for a, d in zip(node.kwonlyargs, node.kw_defaults, strict=True) if d is not None]
            found += [a.arg for a, d in pairs if same(a.arg, d)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and same(node.target.id, node.value):
            found.append(node.target.id)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
                and len(node.args) == 2 and same(key(node.args[0]), node.args[1]):  # fmt: skip
            found.append(key(node.args[0]))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
            dest = next((key(a)[2:].replace("-", "_") for a in node.args if key(a).startswith("--")), "")
            found += [dest for k in node.keywords if k.arg == "default" and same(dest, k.value)]
        elif isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or):
            names = {key(n) for n in ast.walk(node.values[0])} - {""}
            found += [n for n in names if same(n, node.values[-1])]
        elif isinstance(node, ast.Dict):
            found += [key(k) for k, v in zip(node.keys, node.values, strict=True) if k is not None and same(key(k), v)]
    return found


def test_every_flag_default_is_written_once_in_the_flag_table():
    """``--degradation``'s 0.5, ``--slo-attainment``'s 0.99, ...: read from :mod:`llmload.config.flags`, never restated
    above it (a package below ``config``, which cannot import it, owns its constants: the table may import them)."""
    defaults = _numeric_defaults()
    assert defaults["degradation"] == 0.5 and defaults["slo_attainment"] == 0.99
    layer = {f"llmload.{name}": i for i, names in enumerate(LAYERS) for name in names}
    above = {pkg for pkg, i in layer.items() if i < layer["llmload.config"]}
    outside = {n: p for n, p in MODULES.items() if subpackage(n) in above}
    assert "llmload.analysis.analyze" in outside and "llmload.arrivals.schedules" not in outside
    found = {n: hits for n, p in outside.items() if (hits := _restated_defaults(ast.parse(p.read_text(encoding="utf-8")), defaults))}
    assert found == {}


def test_a_restated_default_is_seen():
    d = {"degradation": 0.5}
    for text in ("def f(degradation: float = 0.5): ...", "def f(*, degradation=0.5): ...", "class C:\n    degradation: float = 0.5",
                 "x = v.get('degradation', 0.5)", "x = float(c.get('degradation') or 0.5)", "x = {'degradation': 0.5}",
                 "p.add_argument('-d', '--degradation', type=float, default=0.5)"):  # fmt: skip
        assert _restated_defaults(ast.parse(text), d) == ["degradation"], text
    assert _restated_defaults(ast.parse("x = v.get('degradation', DEFAULT) or 0.7; SHARE = 0.5"), d) == []
