"""Dependencies point one way: lsp -> abstraction, knowledge; never back, never pygls below lsp."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FORBIDDEN = {
    "abstraction": ("pygls", "lsprotocol", "fixlore.lsp", "fixlore.knowledge"),
    "knowledge": ("pygls", "lsprotocol", "fixlore.lsp"),
}


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_does_not_import_upwards(layer: str) -> None:
    files = sorted((REPO / layer).rglob("*.py"))
    assert files, f"no Python files under {layer}/"
    offenders = [
        f"{path.relative_to(REPO)} imports {name}"
        for path in files
        for name in imported_modules(path)
        if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN[layer])
    ]
    assert offenders == []


def _lsp_imports() -> dict[str, set[str]]:
    root = REPO / "lsp"
    return {
        str(path.relative_to(root)): imported_modules(path)
        for path in sorted(root.rglob("*.py"))
        if "sample_workspace" not in path.parts
    }


def test_the_server_does_not_import_the_users_tools() -> None:
    """``lsp/tools/`` (cli, doctor, demo, explain, the editor stand-in) sits on top; only ``__main__`` starts it."""
    offenders = [
        f"lsp/{module} imports {name}"
        for module, names in _lsp_imports().items()
        if not module.startswith("tools/") and module != "__main__.py"
        for name in names
        if name == "fixlore.lsp.tools" or name.startswith("fixlore.lsp.tools.")
    ]
    assert offenders == []


def test_no_part_reaches_for_the_server_object() -> None:
    """Parts get what they use in their constructors; only the tools start a server (``create_server``)."""
    offenders = [
        f"lsp/{module} imports {name}"
        for module, names in _lsp_imports().items()
        if not module.startswith("tools/")
        for name in names
        if name in ("fixlore.lsp.server", "fixlore.lsp.transport.language_server") and module != "server.py"
    ]
    assert offenders == []
