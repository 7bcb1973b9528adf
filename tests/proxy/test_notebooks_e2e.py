"""Notebooks through fixlore with a real `ruff server`: its diagnostics and fixes reach the cells.

An editor that syncs notebooks (VS Code with Jupyter) sends ``notebookDocument/*``
only to a server that advertises ``notebookDocumentSync``; fixlore advertises
its upstreams' and forwards the notebook to them. Without that, wrapping ruff
in fixlore lost ruff's linting of notebooks altogether.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.proxy.editor import PULL_CAPS, PUSH_CAPS, RUFF, Editor, edits_for, fixlore_cmd, server_flag

pytestmark = pytest.mark.e2e

NOTEBOOK_SYNC = {"notebookDocument": {"synchronization": {"dynamicRegistration": False}}}


@pytest.fixture
async def editor() -> AsyncIterator[Editor]:
    ed = Editor()
    await ed.start(fixlore_cmd(f"python={RUFF} server"))
    yield ed
    await ed.close()


def open_notebook(editor: Editor, path: Path, cells: list[str]) -> tuple[str, list[str]]:
    """``notebookDocument/didOpen`` of a Jupyter notebook of Python cells; returns its and the cells' URIs."""
    notebook = path.as_uri()
    uris = [f"vscode-notebook-cell:{path.as_posix()}#W{k}sZmlsZQ%3D%3D" for k in range(len(cells))]
    for uri, text in zip(uris, cells, strict=True):
        editor.texts[uri], editor.versions[uri] = text, 1
    editor.notify(
        "notebookDocument/didOpen",
        {
            "notebookDocument": {
                "uri": notebook,
                "notebookType": "jupyter-notebook",
                "version": 7,  # the notebook's own version; each cell has its own too
                "cells": [{"kind": 2, "document": uri} for uri in uris],
            },
            "cellTextDocuments": [
                {"uri": uri, "languageId": "python", "version": 1, "text": text}
                for uri, text in zip(uris, cells, strict=True)
            ],
        },
    )
    return notebook, uris


def change_cell(editor: Editor, notebook: str, version: int, cell: str, text: str) -> None:
    """Replace a cell's whole text with ``notebookDocument/didChange``."""
    old = editor.texts[cell]
    editor.versions[cell] += 1
    editor.texts[cell] = text
    end = {"line": old.count("\n"), "character": len(old.rpartition("\n")[2])}
    change = {"range": {"start": {"line": 0, "character": 0}, "end": end}, "text": text}
    editor.notify(
        "notebookDocument/didChange",
        {
            "notebookDocument": {"uri": notebook, "version": version},
            "change": {
                "cells": {
                    "textContent": [{"document": {"uri": cell, "version": editor.versions[cell]}, "changes": [change]}]
                }
            },
        },
    )


async def test_a_notebooks_cells_get_ruffs_diagnostics_and_quick_fixes(editor: Editor, tmp_path: Path) -> None:
    result = await editor.initialize(tmp_path, caps={**PUSH_CAPS, **NOTEBOOK_SYNC})
    selectors = result["capabilities"]["notebookDocumentSync"]["notebookSelector"]
    assert any(c.get("language") == "python" for s in selectors for c in s.get("cells", []))

    notebook, (first, second) = open_notebook(editor, tmp_path / "analysis.ipynb", ["import os\n", "x = 1\n"])
    diag = await editor.diagnostic(first, "F401")
    assert diag["source"] == "Ruff"
    # ruff tags a cell's diagnostics with the notebook's version: taken for the cell's
    # current text, not held back as stale (which showed the cell clean in between)
    published = [p for m, p in editor.notifications if m == "textDocument/publishDiagnostics" and p["uri"] == first]
    assert all(p["diagnostics"] for p in published), published
    assert not [d for d in editor.current(second) if d.get("source") == "Ruff"]

    actions = await editor.code_actions(first, diag)
    fix = next(a for a in actions if a.get("kind") == "quickfix" and "import" in a["title"].lower())
    resolved = fix if "edit" in fix else await editor.request("codeAction/resolve", fix)
    assert edits_for(resolved["edit"], first), "the fix edits the cell"

    change_cell(editor, notebook, 8, first, "import os\nprint(os.sep)\n")
    await editor.gone(first, "F401")

    editor.notify(
        "notebookDocument/didClose",
        {"notebookDocument": {"uri": notebook}, "cellTextDocuments": [{"uri": first}, {"uri": second}]},
    )
    # and the session goes on
    script = tmp_path / "after.py"
    script.write_text("import sys\n")
    await editor.diagnostic(editor.open(script), "F401")


async def test_a_pulling_editor_pulls_a_cells_diagnostics(editor: Editor, tmp_path: Path) -> None:
    await editor.initialize(tmp_path, caps={**PULL_CAPS, **NOTEBOOK_SYNC})
    notebook, (cell,) = open_notebook(editor, tmp_path / "pull.ipynb", ["import os\n"])

    async def pull() -> list[Any]:
        report = await editor.request("textDocument/diagnostic", {"textDocument": {"uri": cell}})
        return [d.get("code") for d in report["items"] if d.get("source") == "Ruff"]

    assert await pull() == ["F401"]
    change_cell(editor, notebook, 8, cell, "import os\nprint(os.sep)\n")
    assert "F401" not in await pull()


async def test_a_restarted_upstream_gets_the_open_notebook_again_and_its_cells_only_inside_it(
    tmp_path: Path,
) -> None:
    ed = Editor()
    await ed.start(fixlore_cmd(f"python={server_flag('flaky.py', '--notebooks')}"))
    try:
        await ed.initialize(tmp_path, caps={**PUSH_CAPS, **NOTEBOOK_SYNC})
        notebook, (cell, crash) = open_notebook(ed, tmp_path / "n.ipynb", ["x = 1\x0c\ny = 2\n", "CRASH\n"])
        await ed.wait_for(lambda: any(d.get("source") == "flaky" for d in ed.current(cell)), what="cell diagnostics")
        # an edit below a form feed: fixlore's copy of the cell must follow the editor's,
        # since that copy is what a restarted upstream gets
        old = ed.texts[cell]
        ed.texts[cell] = "x = 1\x0c\nzy = 2\n"
        ed.versions[cell] += 1
        start = {"line": 1, "character": 0}
        ed.notify(
            "notebookDocument/didChange",
            {
                "notebookDocument": {"uri": notebook, "version": 8},
                "change": {
                    "cells": {
                        "textContent": [
                            {
                                "document": {"uri": cell, "version": ed.versions[cell]},
                                "changes": [{"range": {"start": start, "end": start}, "text": "z"}],
                            }
                        ]
                    }
                },
            },
        )
        assert old != ed.texts[cell]

        def logged() -> list[str]:
            return [p["message"] for m, p in ed.notifications if m == "window/logMessage"]

        assert "flaky: notebook opened with 2 cells" in logged()
        hover = {"textDocument": {"uri": crash}, "position": {"line": 0, "character": 0}}
        assert await ed.request("textDocument/hover", hover) is None  # the upstream died under it
        await ed.wait_for(lambda: logged().count("flaky: notebook opened with 2 cells") == 2, what="the re-send")
        texts = await ed.wait_for(lambda: [m for m in logged() if m.startswith("flaky: cells ")][1:], what="texts")
        resent = texts[0]
        assert json.loads(resent.removeprefix("flaky: cells ")) == ["x = 1\x0c\nzy = 2\n", "CRASH\n"]
        assert not any("opened languageId" in m for m in logged()), "cells go inside their notebook, not as files"
    finally:
        await ed.close()


async def test_a_deleted_cell_loses_its_diagnostics(editor: Editor, tmp_path: Path) -> None:
    await editor.initialize(tmp_path, caps={**PUSH_CAPS, **NOTEBOOK_SYNC})
    notebook, (first, second) = open_notebook(editor, tmp_path / "cut.ipynb", ["x = 1\n", "import os\n"])
    await editor.diagnostic(second, "F401")
    editor.notify(
        "notebookDocument/didChange",
        {
            "notebookDocument": {"uri": notebook, "version": 8},
            "change": {
                "cells": {
                    "structure": {"array": {"start": 1, "deleteCount": 1}, "didClose": [{"uri": second}]},
                }
            },
        },
    )
    await editor.wait_for(lambda: editor.diagnostics.get(second) == [], what="the deleted cell cleared")
    # the notebook goes on: an edit of the remaining cell is linted
    change_cell(editor, notebook, 9, first, "import sys\n")
    await editor.diagnostic(first, "F401")
