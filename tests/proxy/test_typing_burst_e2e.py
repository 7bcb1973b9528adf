"""A typing burst through fixlore in front of a real `ruff server`: no flicker, nothing lost.

The editor writes a burst of keystrokes (one incremental ``didChange`` each) in
one go; fixlore passes each on at once, and ruff reports every version in turn,
each report reaching fixlore after the editor has typed on. Those reports are
out of date when they arrive: the editor must keep what it shows until ruff's
report of the final text, which it is then shown once, exactly as ruff gives it.

The server is started with ``--late-initialize``, so its hub serves from the
first message: while the early front relays (the default start), the relay
holds out-of-date pushes itself (``tests/foundation/test_relay_e2e.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.proxy.editor import PULL_CAPS, RUFF, Editor, fixlore_cmd

pytestmark = pytest.mark.e2e

SOURCE = "import os\nimport sys\n\n\ndef f(x):\n    return x == None\n"
KEYSTROKES = 14


async def ruff_alone_on(tmp_path: Path, text: str) -> list[dict[str, Any]]:
    """What `ruff server` itself publishes for ``text`` (the same file, the same settings)."""
    ruff = Editor()
    await ruff.start([RUFF, "server"])
    try:
        await ruff.initialize(tmp_path)
        uri = ruff.open(tmp_path / "sample.py", text)
        return await ruff.published(uri)
    finally:
        await ruff.close()


async def open_through_fixlore(tmp_path: Path, caps: dict[str, Any] | None = None) -> tuple[Editor, str]:
    (tmp_path / "ruff.toml").write_text('[lint]\nextend-select = ["E711"]\n')
    (tmp_path / "sample.py").write_text(SOURCE)
    editor = Editor()
    await editor.start([*fixlore_cmd(f"python={RUFF} server"), "--late-initialize"])
    await editor.initialize(tmp_path, caps)
    return editor, editor.open(tmp_path / "sample.py")


def type_burst(editor: Editor, uri: str) -> int:
    """``KEYSTROKES`` keystrokes at the end of the file, written at once; the final version."""
    for k in range(KEYSTROKES):
        editor.insert(uri, len(editor.texts[uri]), "\n" if k % 2 else "x")
    return editor.versions[uri]


async def test_out_of_date_pushes_never_clear_the_editor_and_the_final_text_is_published_once(tmp_path: Path) -> None:
    editor, uri = await open_through_fixlore(tmp_path)
    try:
        await editor.wait_for(lambda: editor.diagnostics.get(uri), what="ruff's diagnostics of the opened file")
        shown = len(editor.notifications)
        final = type_burst(editor, uri)
        await editor.wait_for(lambda: editor.diagnostic_versions.get(uri) == final, what="the final version's")
    finally:
        await editor.close()  # ruff reports in order: every earlier report reached fixlore before the final one
    burst = [p for m, p in editor.notifications[shown:] if m == "textDocument/publishDiagnostics"]
    versions = [p["version"] for p in burst]
    assert all(p["diagnostics"] for p in burst), f"cleared during the burst: {[len(p['diagnostics']) for p in burst]}"
    assert versions == sorted(set(versions)) and versions[-1] == final  # each version once, the final one last
    assert burst[-1]["diagnostics"] == await ruff_alone_on(tmp_path, editor.texts[uri])


async def test_a_pulling_editor_gets_the_final_texts_diagnostics_after_a_burst(tmp_path: Path) -> None:
    editor, uri = await open_through_fixlore(tmp_path, PULL_CAPS)
    try:
        type_burst(editor, uri)
        report = await editor.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    finally:
        await editor.close()
    assert report["kind"] == "full"
    assert report["items"] == await ruff_alone_on(tmp_path, editor.texts[uri])
    assert not [p for m, p in editor.notifications if m == "textDocument/publishDiagnostics"]  # it pulls: no push
