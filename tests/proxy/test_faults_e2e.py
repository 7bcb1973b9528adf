"""A misbehaving upstream (tests/proxy/servers/flaky.py): fixlore survives and stays sensible."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.transport.jsonrpc import RpcError
from tests.proxy.editor import Editor, fixlore_cmd, server_flag

pytestmark = pytest.mark.e2e

INIT_OPTIONS = {"fixlore": {"upstreamTimeoutMs": 500}, "flakyOption": {"level": 3}}
TEXT = "x = 1\nCRASH\nHANG\nGARBAGE\n"


@pytest.fixture
async def editors(tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    """Start fixlore with the given upstream flags and initialize it like an editor."""
    made: list[Editor] = []

    async def go(*upstreams: str, init_options: Any = INIT_OPTIONS) -> Editor:
        ed = Editor()
        made.append(ed)
        await ed.start(fixlore_cmd(*upstreams))
        await ed.initialize(tmp_path, init_options=init_options)
        return ed

    yield go
    for ed in made:
        await ed.close()


def logs(editor: Editor) -> list[str]:
    return [p["message"] for m, p in editor.notifications if m == "window/logMessage"]


def shown(editor: Editor) -> list[str]:
    return [p["message"] for m, p in editor.notifications if m == "window/showMessage"]


def flaky_diagnostics(editor: Editor, uri: str, name: str = "flaky") -> list[dict[str, Any]]:
    return [d for d in editor.diagnostics.get(uri, []) if d.get("source") == name]


async def hover(editor: Editor, uri: str, line: int, timeout: float = 20) -> Any:
    params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": 0}}
    return await editor.request("textDocument/hover", params, timeout=timeout)


async def test_transparent_options_language_and_unknown_fields(editors: Any, tmp_path: Path) -> None:
    ed = await editors(f"python={server_flag('flaky.py')}")
    uri = ed.open(tmp_path / "a.py", "x = 1\n")
    [diag] = await ed.wait_for(lambda: flaky_diagnostics(ed, uri))
    # the editor's initializationOptions minus fixlore's section, and its languageId, arrive unchanged
    assert 'flaky: initializationOptions={"flakyOption": {"level": 3}}' in logs(ed)
    assert "flaky: opened languageId=python" in logs(ed)
    # unknown fields and data pass both ways untouched
    assert diag["x-unknown-field"] == {"kept": True}
    assert diag["data"]["nested"] == {"list": [1, "two", None]}
    result = await hover(ed, uri, 0)
    assert result == {"contents": {"kind": "plaintext", "value": "flaky hover"}, "x-extra": [1, 2]}
    assert ed.init_result["capabilities"]["experimental"] == {"flaky": True}


async def test_crash_mid_session_restarts_and_resends_documents(editors: Any, tmp_path: Path) -> None:
    ed = await editors(f"python={server_flag('flaky.py')}")
    uri = ed.open(tmp_path / "a.py", TEXT)
    await ed.wait_for(lambda: flaky_diagnostics(ed, uri))
    assert await hover(ed, uri, 1) is None  # the upstream died under this request
    # restarted with back-off: the open document is re-sent, so diagnostics come back
    await ed.wait_for(lambda: sum("opened languageId" in m for m in logs(ed)) == 2)
    await ed.wait_for(lambda: flaky_diagnostics(ed, uri))
    assert (await hover(ed, uri, 0))["contents"]["value"] == "flaky hover"


async def test_gives_up_after_five_crashes_and_tells_once(editors: Any, tmp_path: Path) -> None:
    ed = await editors(f"python={server_flag('flaky.py', '--crash-after-init')}")
    await ed.wait_for(lambda: any("crashed 5 times" in m for m in shown(ed)), timeout=30)
    uri = ed.open(tmp_path / "b.py", "def f(:\n")
    # fixlore itself goes on: its own syntax diagnostics still arrive
    await ed.wait_for(lambda: any(d.get("source") == "fixlore" for d in ed.diagnostics.get(uri, [])))
    assert await hover(ed, uri, 0) is None
    assert sum("crashed" in m for m in shown(ed)) == 1


async def test_hang_is_cut_off_and_cancelled_upstream(editors: Any, tmp_path: Path) -> None:
    ed = await editors(f"python={server_flag('flaky.py')}")
    uri = ed.open(tmp_path / "a.py", TEXT)
    await ed.wait_for(lambda: flaky_diagnostics(ed, uri))
    # The early front relays the diagnostics before fixlore has loaded; a hover is the
    # full server's: once one is answered, the timing below is the proxy's alone.
    assert (await hover(ed, uri, 0))["contents"]["value"] == "flaky hover"
    loop = asyncio.get_running_loop()
    began = loop.time()
    assert await hover(ed, uri, 2) is None
    assert loop.time() - began < 3
    await ed.wait_for(lambda: any(m.startswith("flaky: cancelled") for m in logs(ed)))
    assert (await hover(ed, uri, 0))["contents"]["value"] == "flaky hover"


async def test_editor_cancel_reaches_upstream(editors: Any, tmp_path: Path) -> None:
    ed = await editors(f"python={server_flag('flaky.py')}", init_options={"fixlore": {"upstreamTimeoutMs": 30000}})
    uri = ed.open(tmp_path / "a.py", TEXT)
    await ed.wait_for(lambda: flaky_diagnostics(ed, uri))
    assert ed.conn is not None
    params = {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 0}}
    pending = asyncio.ensure_future(ed.conn.request("textDocument/hover", params, msg_id="h1", timeout=5))
    await ed.wait_for(lambda: any(m.startswith("flaky: hanging") for m in logs(ed)))
    ed.notify("$/cancelRequest", {"id": "h1"})
    with pytest.raises(RpcError) as caught:
        await pending
    assert caught.value.code == -32800
    await ed.wait_for(lambda: any(m.startswith("flaky: cancelled") for m in logs(ed)))


async def test_garbage_from_upstream_is_survived(editors: Any, tmp_path: Path) -> None:
    ed = await editors(f"python={server_flag('flaky.py')}")
    uri = ed.open(tmp_path / "a.py", TEXT)
    await ed.wait_for(lambda: flaky_diagnostics(ed, uri))
    assert (await hover(ed, uri, 3))["contents"]["value"] == "flaky hover"
    assert (await hover(ed, uri, 0))["contents"]["value"] == "flaky hover"


async def test_missing_upstream_gives_one_clear_message(editors: Any, tmp_path: Path) -> None:
    ed = await editors("python=no-such-language-server --stdio")
    await ed.wait_for(lambda: shown(ed))
    [message] = shown(ed)
    assert "no-such-language-server" in message and "not found on PATH" in message
    uri = ed.open(tmp_path / "b.py", "def f(:\n")
    await ed.wait_for(lambda: any(d.get("source") == "fixlore" for d in ed.diagnostics.get(uri, [])))


async def test_server_to_client_requests_are_relayed(editors: Any, tmp_path: Path) -> None:
    ed = await editors(f"python={server_flag('flaky.py')}")
    ed.answers["window/showMessageRequest"] = lambda params: params["actions"][0]
    ed.answers["workspace/configuration"] = lambda params: [{"answer": "from the editor"}]
    assert "flaky.ask" in ed.init_result["capabilities"]["executeCommandProvider"]["commands"]
    result = await ed.request("workspace/executeCommand", {"command": "flaky.ask", "arguments": [{"n": 1}]})
    assert result == {
        "configuration": [{"answer": "from the editor"}],
        "progress": None,
        "register": None,
        "choice": {"title": "A"},
        "applied": {"applied": True},
        "arguments": [{"n": 1}],
    }
    methods = [m for m, _ in ed.requests]
    for method in (
        "workspace/configuration",
        "window/workDoneProgress/create",
        "client/registerCapability",
        "window/showMessageRequest",
        "workspace/applyEdit",
    ):
        assert method in methods


async def test_fixlore_commands_are_never_forwarded(editors: Any, tmp_path: Path) -> None:
    ed = await editors(f"python={server_flag('flaky.py')}")
    with pytest.raises(RpcError) as caught:
        await ed.request("workspace/executeCommand", {"command": "fixlore.noSuchCommand", "arguments": []})
    assert "fixlore" in caught.value.message
    assert not any("unknown workspace/executeCommand" in m for m in logs(ed))


async def test_encoding_falls_back_to_utf16_for_the_whole_session(editors: Any, tmp_path: Path) -> None:
    ed = await editors(
        f"python={server_flag('flaky.py', '--name', 'a')}",
        f"python={server_flag('flaky.py', '--name', 'b', '--utf16-only')}",
    )
    assert ed.init_result["capabilities"]["positionEncoding"] == "utf-16"
    # `a` first accepted utf-8, so it was restarted and offered utf-16 only
    await ed.wait_for(lambda: "a: pid" in " ".join(logs(ed)))
    a_logs = [m for m in logs(ed) if m.startswith("a: pid")]
    assert all(m.endswith('encodings=["utf-16"]') for m in a_logs)


async def test_shutdown_ends_every_child(tmp_path: Path) -> None:
    ed = Editor()
    await ed.start(fixlore_cmd(f"python={server_flag('flaky.py', '--name', 'a')}", f"rust={server_flag('flaky.py')}"))
    await ed.initialize(tmp_path)
    await ed.wait_for(lambda: len([m for m in logs(ed) if "pid=" in m]) == 2)
    pids = [int(m.split("pid=")[1].split()[0]) for m in logs(ed) if "pid=" in m]
    assert await ed.close() == 0

    def alive(pid: int) -> bool:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return Path(f"/proc/{pid}/stat").exists() and Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"

    for _ in range(100):
        if not any(alive(p) for p in pids):
            break
        await asyncio.sleep(0.05)  # polling the OS for process exit; there is no event to wait on
    assert not any(alive(p) for p in pids), json.dumps(pids)


async def test_a_dynamic_registration_routes_its_method_until_unregistered_or_restarted(
    editors: Any, tmp_path: Path
) -> None:
    ed = await editors(f"python={server_flag('flaky.py')}")
    uri = ed.open(tmp_path / "a.py", TEXT)
    await ed.wait_for(lambda: flaky_diagnostics(ed, uri))
    params = {"textDocument": {"uri": uri}}

    async def symbols() -> Any:
        return await ed.request("textDocument/documentSymbol", params)

    async def command(name: str) -> Any:
        return await ed.request("workspace/executeCommand", {"command": name, "arguments": []})

    # flaky does not offer document symbols statically: nobody serves them, the editor gets nothing
    assert await symbols() is None
    await command("flaky.register")
    assert [s["name"] for s in await symbols()] == ["flaky symbol"]
    await command("flaky.unregister")
    assert await symbols() is None
    # a registration dies with the process: the restarted child is not asked (it would answer an error)
    await command("flaky.register")
    assert [s["name"] for s in await symbols()] == ["flaky symbol"]
    assert await hover(ed, uri, 1) is None  # CRASH: the upstream dies under this request
    await ed.wait_for(lambda: sum("opened languageId" in m for m in logs(ed)) == 2)
    assert await symbols() is None
    await command("flaky.register")
    assert [s["name"] for s in await symbols()] == ["flaky symbol"]


async def test_a_lone_surrogate_in_an_upstream_diagnostic_costs_nothing_else(editors: Any, tmp_path: Path) -> None:
    ed = await editors(f"python={server_flag('flaky.py')}")
    uri = ed.open(tmp_path / "a.py", "x = 1  # SURROGATE\n")

    published = await ed.wait_for(lambda: len(flaky_diagnostics(ed, uri)) == 2 and flaky_diagnostics(ed, uri))

    messages = {d["code"]: d["message"] for d in published}
    assert messages == {"FLK1": "flaky says hi", "FLK2": "half a pair: \ufffd."}
    assert not shown(ed)  # no "internal error" popup
    assert await hover(ed, uri, 0) is not None  # and the session goes on
