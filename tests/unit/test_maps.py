"""The house's maps stay true: every package's docstring names each of its modules, every
Sphinx-style reference in a docstring or comment (``:mod:``, ``:func:``, ``:class:``, ``:meth:``,
``:data:``, ``:attr:``) reaches something that exists, and no two modules share a basename or
take a standard-library name (issue 24, item 4).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import sys
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "llmload"

MODULES = sorted(p for p in PKG.rglob("*.py") if "static" not in p.parts)
# every folder that holds a module is a package, with or without its ``__init__.py`` (a missing one fails)
PACKAGES = sorted({p.parent for p in MODULES})
ROLE = re.compile(r":(mod|func|class|meth|data|attr|exc):`~?([\w.]+)`")

def _dotted(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _own_modules(pkg: Path) -> list[str]:
    return sorted(p.stem for p in pkg.glob("*.py") if p.stem not in ("__init__", "__main__"))


def test_no_two_modules_share_a_basename_or_take_a_stdlib_name():
    by_name: dict[str, list[str]] = defaultdict(list)
    for p in MODULES:
        if p.stem not in ("__init__", "__main__"):
            by_name[p.stem].append(str(p.relative_to(ROOT)))
    repeated = {n: ps for n, ps in by_name.items() if len(ps) > 1}
    assert not repeated, f"module basenames used twice (name each after its own concept): {repeated}"
    stdlib = sorted(n for n in by_name if n in sys.stdlib_module_names)
    assert not stdlib, f"modules named like the standard library's: {stdlib}"


@pytest.mark.parametrize("pkg", PACKAGES, ids=lambda p: _dotted(p / "__init__.py"))
def test_every_package_docstring_maps_each_of_its_modules(pkg):
    dotted = _dotted(pkg / "__init__.py")
    init = pkg / "__init__.py"
    assert init.is_file(), f"{pkg.relative_to(ROOT)}/ has no __init__.py (its docstring is the package's map)"
    doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
    named = set()
    for _, target in ROLE.findall(doc):
        full = dotted + target if target.startswith(".") else target
        if full.startswith(dotted + "."):
            named.add(full[len(dotted) + 1 :].split(".")[0])
    missing = [m for m in _own_modules(pkg) if m not in named]
    assert not missing, (
        f"{pkg.relative_to(ROOT)}/__init__.py: its docstring does not name {missing} "
        f"(one line each, as :mod:`{dotted}.<module>` or :mod:`.<module>`)"
    )


def _resolve(target: str) -> bool:
    """Whether ``llmload.a.b.C.m`` names a module, or an attribute reachable from the longest module prefix."""
    try:  # a module is found, not imported: importing a locustfile would register llmload's flags with Locust
        if importlib.util.find_spec(target) is not None:
            return True
    except (ImportError, ValueError):  # a parent that is not a package: an attribute, looked up below
        pass
    parts = target.split(".")
    for i in range(len(parts), 0, -1):
        name = ".".join(parts[:i])
        try:
            obj = importlib.import_module(name)
        except ImportError:
            continue
        for attr in parts[i:]:
            if not hasattr(obj, attr):
                annotations = getattr(obj, "__annotations__", {}) if isinstance(obj, type) else {}
                fields = getattr(obj, "__dataclass_fields__", {}) if isinstance(obj, type) else {}
                return attr in annotations or attr in fields  # a dataclass field or a typed attribute
            obj = getattr(obj, attr)
        return True
    return False


def _references() -> list[tuple[str, int, str]]:
    refs = []
    for p in MODULES:
        dotted = _dotted(p)
        package = dotted if p.stem == "__init__" else dotted.rsplit(".", 1)[0]
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            for _, target in ROLE.findall(line):
                if target.startswith("."):
                    full = package + target
                elif target.startswith("llmload.") or target == "llmload":
                    full = target
                else:
                    continue  # a name of this module, or another library's
                refs.append((f"{p.relative_to(ROOT)}:{n}", target, full))
    return refs


def test_every_llmload_reference_in_the_code_reaches_something_that_exists():
    broken = [f"{where}: {target}" for where, target, full in _references() if not _resolve(full)]
    assert not broken, "references to nothing (fix the name or the reference):\n" + "\n".join(broken)


def test_the_reference_check_sees_a_broken_one():
    assert _resolve("llmload.metrics.parts.phases.PhaseStats.tail")
    assert not _resolve("llmload.metrics.phases.NoSuchThing")
    assert not _resolve("llmload.no_such_module")
