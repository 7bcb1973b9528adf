"""fixlore's logs reach the editor as ``window/logMessage`` with their real type; stderr stays silent.

Editors show every line a server writes to stderr as an error (VS Code's
Output channel ``[error]``, Neovim's ``lsp.log`` ``[ERROR]``). A real
``fixlore serve`` is started as an editor starts it, its stderr kept in a file.
"""

from __future__ import annotations

import io
import logging
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.tools.editor_session import EditorSession
from fixlore.lsp.transport.logs import LspLogHandler, NotReady, message_type

BIN = Path(sys.executable).parent
ERROR, WARNING, INFO, LOG = 1, 2, 3, 4


async def session_logs(tmp_path: Path, settings: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    """The ``window/logMessage`` params of one short session, and what the server wrote to stderr."""
    stderr = tmp_path / "stderr.txt"
    (tmp_path / "a.py").write_text("import os\n")
    editor = EditorSession(tmp_path, timeout=30)
    # The shell only redirects stderr to a file, then becomes fixlore (exec).
    command = ["/bin/sh", "-c", 'exec "$0" "$@" 2>"$FIXLORE_TEST_STDERR"', str(BIN / "fixlore"), "serve"]
    await editor.start(command, cwd=str(tmp_path), env={**os.environ, "FIXLORE_TEST_STDERR": str(stderr)})
    try:
        await editor.initialize(init_options={"fixlore": settings})
        # The knowledge store opens after `initialized`; fixlore/status follows.
        await editor.wait_for(lambda: any(m == "fixlore/status" for m, _ in editor.notifications), what="status")
        editor.open("a.py")
        await editor.published(editor.uri("a.py"))
        assert await editor.close() == 0
    finally:
        await editor.kill()
    logs = [params for method, params in editor.notifications if method == "window/logMessage"]
    return logs, stderr.read_text()


def texts(logs: list[dict[str, Any]], kind: int) -> list[str]:
    return [m["message"] for m in logs if m["type"] == kind]


@pytest.mark.e2e
async def test_default_level_logs_info_and_warnings_with_their_types_and_nothing_on_stderr(tmp_path: Path) -> None:
    # An invalid setting: fixlore warns once (and logs it as a warning, not an error).
    logs, stderr = await session_logs(tmp_path, {"diagnosticsDebounceMs": "soon"})
    assert any("knowledge open" in t for t in texts(logs, INFO)), logs
    assert any("configuration" in t and "diagnosticsDebounceMs" in t for t in texts(logs, WARNING)), logs
    assert texts(logs, ERROR) == [], "nothing went wrong, so nothing is shown as an error"
    assert texts(logs, LOG) == [], "debug records are not sent at the default level"
    assert stderr == "", "editors show stderr as errors: it stays silent but for crashes"


@pytest.mark.e2e
async def test_log_level_warning_drops_info_records(tmp_path: Path) -> None:
    logs, stderr = await session_logs(tmp_path, {"logLevel": "warning", "diagnosticsDebounceMs": "soon"})
    assert texts(logs, INFO) == [] and texts(logs, LOG) == [], logs
    assert any("configuration" in t for t in texts(logs, WARNING)), logs
    assert stderr == ""


def test_records_wait_for_the_editor_then_go_in_order_with_their_types() -> None:
    sent: list[tuple[int, str]] = []
    ready = False

    def send(kind: int, message: str) -> None:
        if not ready:
            raise NotReady
        sent.append((kind, message))

    handler = LspLogHandler(send)
    log = logging.getLogger("fixlore.test-logs")
    log.propagate = False
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        log.info("before the transport")
        assert sent == []
        ready = True
        log.debug("a detail")
        log.warning("a warning")
        log.error("an error")
    finally:
        log.removeHandler(handler)
    assert sent == [
        (INFO, "fixlore.test-logs: before the transport"),
        (LOG, "fixlore.test-logs: a detail"),
        (WARNING, "fixlore.test-logs: a warning"),
        (ERROR, "fixlore.test-logs: an error"),
    ]
    assert [message_type(level) for level in (logging.CRITICAL, logging.ERROR, 5)] == [ERROR, ERROR, LOG]


def test_a_record_the_editor_cannot_take_goes_to_stderr() -> None:
    stream = io.StringIO()
    fallback = logging.StreamHandler(stream)

    def send(kind: int, message: str) -> None:
        raise BrokenPipeError

    handler = LspLogHandler(send, fallback=fallback)
    handler.handle(logging.makeLogRecord({"name": "fixlore.x", "msg": "editor gone", "levelno": logging.ERROR}))
    assert "editor gone" in stream.getvalue()
