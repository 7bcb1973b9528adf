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
