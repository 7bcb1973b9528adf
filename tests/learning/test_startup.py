"""Start-up stays short: the server is built without loading libcst (the extractor loads later, in a worker)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from importlib.metadata import version
from pathlib import Path

import pytest

from fixlore.abstraction import DiagnosticInfo, Extracted, Position, TextRange, extract_pattern
from fixlore.lsp import __version__
from fixlore.lsp.learning.extractor import Extractor
from fixlore.lsp.transport.framing import encode_message

PROBE = (
    "import sys\n"
    "from fixlore.lsp.server import create_server\n"
    "create_server()\n"
    "print(sorted(m for m in sys.modules if m.split('.')[0] == 'libcst'))\n"
)


def test_building_the_server_does_not_import_libcst() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"


# Loaded later if at all: the other sub-commands, worker processes, libcst (in the
# extraction worker). The knowledge store's modules are not listed: a worker thread
# that starts once the workspace is known imports them, and may begin before the answer.
NOT_BEFORE_THE_ANSWER = (
    "libcst",
    "multiprocessing",
    "importlib.metadata",
    "fixlore.knowledge.cli",
    "fixlore.knowledge.dashboard_cli",
    "fixlore.knowledge.team_cli",
    "fixlore.lsp.actions.explain",
    "fixlore.lsp.tools.explain_cli",
)


@pytest.mark.parametrize("late", [False, True], ids=["early answer", "--late-initialize"])
def test_serve_answers_initialize_before_loading_what_it_needs_later(tmp_path: Path, late: bool) -> None:
    log = tmp_path / "importtime.txt"
    with log.open("w") as err:
        process = subprocess.Popen(
            [
                sys.executable,
                "-X",
                "importtime",
                "-m",
                "fixlore.lsp",
                "serve",
                *(["--late-initialize"] if late else []),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=err,
            cwd=tmp_path,
        )
        assert process.stdin is not None and process.stdout is not None
        params = {"processId": None, "rootUri": None, "capabilities": {}}
        process.stdin.write(encode_message({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}))
        process.stdin.flush()
        header = process.stdout.readline()  # everything imported so far was imported before the answer
        process.kill()
        process.wait()
    assert header.startswith(b"Content-Length: ")
    loaded = {line.split("|")[2].strip() for line in log.read_text().splitlines() if line.startswith("import time:")}
    # The full server answered only once built; the early front answers while a thread still loads it.
    assert "fixlore.lsp.server" in loaded or not late  # the log is the server's
    assert [m for m in NOT_BEFORE_THE_ANSWER if m in loaded] == []


def test_the_version_is_the_distributions() -> None:
    assert __version__ == version("fixlore")


E711_BEFORE = "def f(x):\n    if x == None:\n        return 1\n"
E711 = DiagnosticInfo("Ruff", "E711", "Comparison to `None`", TextRange(Position(1, 12), Position(1, 16)))


async def test_the_extractor_started_in_the_background_extracts_in_its_worker() -> None:
    extractor = Extractor()
    extractor.start()  # returns at once; the worker is made by a thread of its own
    try:
        result = await extractor.extract("python", E711_BEFORE, E711_BEFORE.replace("== None", "is None"), E711)
    finally:
        extractor.close()

    expected = extract_pattern("python", E711_BEFORE, E711_BEFORE.replace("== None", "is None"), E711)
    assert isinstance(result, Extracted) and isinstance(expected, Extracted)
    assert result.pattern.fingerprint == expected.pattern.fingerprint


def test_closing_while_the_extractor_starts_leaves_no_worker() -> None:
    import multiprocessing

    for _ in range(5):
        extractor = Extractor()
        extractor.start()
        extractor.close()  # at once: before, while or after the starting thread makes the pool
        threads = [t for t in threading.enumerate() if t.name == "fixlore-extractor-start"]
        for thread in threads:
            thread.join(30)
    for child in multiprocessing.active_children():  # reaps the ended ones
        child.join(30)
    # The pool's own thread reaps its child too: a join racing it may return before the exit
    # is recorded, so look until it is (a child still running after 30 s fails the test).
    deadline = time.monotonic() + 30
    while multiprocessing.active_children() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert multiprocessing.active_children() == []


async def test_an_extraction_asked_for_after_close_learns_nothing_and_starts_no_worker() -> None:
    import multiprocessing

    extractor = Extractor()
    extractor.close()
    assert await extractor.extract("python", E711_BEFORE, E711_BEFORE.replace("== None", "is None"), E711) is None
    assert multiprocessing.active_children() == []


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


async def test_a_served_session_starts_no_worker_process_until_a_job_needs_one(tmp_path: Path) -> None:
    import asyncio
    import os

    from fixlore.lsp.transport.jsonrpc import spawn

    async def answer(method: str, params: object) -> object:
        return [None] * len(params.get("items", [])) if isinstance(params, dict) else None

    env = dict(os.environ, FIXLORE_HOME=str(tmp_path / "home"))
    process, conn = await spawn(
        [sys.executable, "-m", "fixlore.lsp", "serve"], env=env, cwd=str(tmp_path), on_request=answer
    )
    try:
        params = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
        await conn.request("initialize", params, timeout=60)
        conn.notify("initialized", {})
        uri = (tmp_path / "a.py").as_uri()
        doc = {"uri": uri, "languageId": "python", "version": 1, "text": E711_BEFORE}
        conn.notify("textDocument/didOpen", {"textDocument": doc})
        span = {"start": {"line": 1, "character": 7}, "end": {"line": 1, "character": 16}}
        action = {"textDocument": {"uri": uri}, "range": span, "context": {"diagnostics": []}}
        answered = await conn.request("textDocument/codeAction", action, timeout=60)
        assert answered is None or isinstance(answered, list)  # served (no action on this range)
        await asyncio.sleep(1.5)  # the workers used to start right after initialized
        assert _children(process.pid) == []  # the idle session is the server process alone
    finally:
        process.kill()
        await process.wait()
