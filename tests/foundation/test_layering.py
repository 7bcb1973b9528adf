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


PRIVATE_ABSTRACTION = "fixlore.abstraction._"
OWN_TESTS = Path("tests") / "abstraction"
"""The abstraction layer's own unit tests may test its private modules; nobody else imports them."""
SAMPLES = Path("lsp") / "tools" / "sample_workspace"
"""The demo's user code (with deliberate syntax errors), not fixlore's."""


def private_abstraction_imports(path: Path) -> list[str]:
    """``fixlore.abstraction._x`` modules imported by ``path``, in any spelling of the import."""
    tree = ast.parse(path.read_text(), str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names if a.name.startswith(PRIVATE_ABSTRACTION))
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith(PRIVATE_ABSTRACTION):
                found.append(node.module)
            elif node.module == "fixlore.abstraction":
                found.extend(f"{node.module}.{a.name}" for a in node.names if a.name.startswith("_"))
    return found


def outside_abstraction() -> list[Path]:
    files = [
        path
        for top in ("lsp", "knowledge", "tests", "bench")
        for path in sorted((REPO / top).rglob("*.py"))
        if not any(path.relative_to(REPO).is_relative_to(skip) for skip in (OWN_TESTS, SAMPLES))
        and not any(part.startswith(".") or part == "node_modules" for part in path.relative_to(REPO).parts)
    ]
    assert len(files) > 100, "the scan found too few files to mean anything"
    return files


def test_nothing_outside_abstraction_imports_its_private_modules() -> None:
    offenders = [
        f"{path.relative_to(REPO)} imports {name}"
        for path in outside_abstraction()
        for name in private_abstraction_imports(path)
    ]
    assert offenders == [], "import these from fixlore.abstraction (export them there if need be)"


@pytest.mark.parametrize(
    "source",
    [
        "from fixlore.abstraction._pattern import Pattern",
        "import fixlore.abstraction._text",
        "from fixlore.abstraction import _pattern",
        "def f():\n    from fixlore.abstraction._soundness import never_sound\n",
    ],
)
def test_the_private_import_check_sees_every_spelling(tmp_path: Path, source: str) -> None:
    path = tmp_path / "m.py"
    path.write_text(source)
    assert private_abstraction_imports(path), source


def test_the_private_import_check_lets_public_imports_through(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("from fixlore.abstraction import Pattern, Scope\nimport fixlore.abstraction.languages\n")
    assert private_abstraction_imports(path) == []


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
