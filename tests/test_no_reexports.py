"""One name, one import path: no swarmq module hands out a name it only imports.

For every ``from swarmq.x import name`` in swarmq, the tests and the benchmarks, ``name`` must be
defined in ``swarmq.x`` (a def, a class or an assignment), not merely imported there. The package
root ``swarmq`` is the one exception: its few public names are its documented face.
"""

from __future__ import annotations

import ast
from pathlib import Path

import swarmq

REPO = Path(swarmq.__file__).resolve().parents[1]
SCANNED = ("swarmq", "tests", "bench")
FACE = "swarmq"

KNOWN: set[str] = set()
"""Modules still re-exporting; a module that no longer does fails the check, so this shrinks."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _bindings(tree: ast.Module) -> tuple[set[str], set[str]]:
    """The names a module defines and the names it binds by ``from swarmq... import``."""
    defined: set[str] = set()
    imported: set[str] = set()
    nodes: list[ast.stmt] = list(tree.body)
    while nodes:
        node = nodes.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif (
            isinstance(node, ast.ImportFrom)
            and node.level == 0
            and (node.module or "").startswith("swarmq")
        ):
            imported.update(a.asname or a.name for a in node.names)
        elif isinstance(node, ast.If | ast.Try):
            nodes.extend(node.body + node.orelse)
            if isinstance(node, ast.Try):
                nodes.extend(s for h in node.handlers for s in h.body)
    return defined, imported - defined


def _reexports() -> dict[str, set[str]]:
    """Module → the names other files import from it that it only imports itself."""
    modules = {_module_name(p): p for p in (REPO / "swarmq").rglob("*.py")}
    only_imported = {
        name: _bindings(ast.parse(p.read_text("utf-8")))[1] for name, p in modules.items()
    }
    found: dict[str, set[str]] = {}
    for top in SCANNED:
        for path in (REPO / top).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if not isinstance(node, ast.ImportFrom) or node.level or node.module == FACE:
                    continue
                passed_on = only_imported.get(node.module or "", set())
                names = {a.name for a in node.names} & passed_on
                if names:
                    found.setdefault(node.module or "", set()).update(names)
    return found


def test_the_check_sees_a_reexport() -> None:
    defined, imported = _bindings(ast.parse("from swarmq.a import x, y\ndef y(): ...\n"))
    assert (defined, imported) == ({"y"}, {"x"})


def test_no_module_reexports_another_modules_names() -> None:
    found = _reexports()
    assert {m: sorted(n) for m, n in found.items() if m not in KNOWN} == {}
    assert set(found) >= KNOWN, (
        f"no longer re-exporting, drop from KNOWN: {sorted(KNOWN - set(found))}"
    )
