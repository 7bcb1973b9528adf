"""No import cycle hides behind ``if TYPE_CHECKING:``: a part names what it calls as a small protocol instead.

A module that imports another only for its types, while that one imports it
back (at once, lazily or for types too), is a cycle the interpreter never sees
and a reader always does.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "lsp" / "tools" / "sample_workspace"
"""The demo's user code (with deliberate syntax errors), not fixlore's."""


def module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(("fixlore", *(parts[:-1] if parts[-1] == "__init__" else parts)))


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    base = node.module or ""
    if node.level:
        package = module if is_package else module.rpartition(".")[0]
        for _ in range(node.level - 1):
            package = package.rpartition(".")[0]
        base = f"{package}.{base}" if base else package
    return [f"{base}.{alias.name}" for alias in node.names]  # a name that is no module resolves to `base`


def import_graph(root: Path) -> dict[tuple[str, str], bool]:
    """``(importer, imported) -> only under TYPE_CHECKING`` for the modules under ``root``."""
    files = {module_name(root, p): p for p in root.rglob("*.py") if SAMPLES not in p.parents}
    edges: dict[tuple[str, str], bool] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(), str(path))
        typing_only = {
            id(sub)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
            for sub in ast.walk(node)
        }
        for node in ast.walk(tree):
            for target in _targets(node, module, path.name == "__init__.py"):
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target and target != module:
                    edges[module, target] = edges.get((module, target), True) and id(node) in typing_only
    return edges


def typing_cycles(edges: dict[tuple[str, str], bool]) -> list[str]:
    """Each TYPE_CHECKING import whose target imports its importer back, directly or not."""
    after: dict[str, set[str]] = {}
    for a, b in edges:
        after.setdefault(a, set()).add(b)
    found = []
    for (a, b), typing_only in sorted(edges.items()):
        seen, todo = {b}, [b]
        while todo and typing_only:
            for nxt in after.get(todo.pop(), ()):
                if nxt == a:
                    found.append(f"{a} imports {b} for types, and {b} leads back to {a}")
                    todo = []
                    break
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
    return found


@pytest.mark.parametrize("layer", ["lsp", "knowledge", "abstraction"])
def test_no_import_cycle_goes_through_a_type_checking_import(layer: str) -> None:
    edges = import_graph(REPO / layer)
    assert any(typing_only for typing_only in edges.values())  # the check has something to look at
    assert typing_cycles(edges) == []


def test_a_cycle_through_a_type_checking_import_is_named(tmp_path: Path) -> None:
    package = tmp_path / "lsp"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .b import B\n")
    (package / "b.py").write_text("from fixlore.lsp.c import C\n")
    (package / "c.py").write_text("def f():\n    from fixlore.lsp import a\n")
    assert typing_cycles(import_graph(package)) == [
        "fixlore.lsp.a imports fixlore.lsp.b for types, and fixlore.lsp.b leads back to fixlore.lsp.a"
    ]
