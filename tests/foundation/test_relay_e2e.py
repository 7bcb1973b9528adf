"""While `fixlore serve` still loads, its early front serves through the upstream (issue 14, "no stall after start").

Real processes: `fixlore serve` with the real `ruff server` from the venv, an
editor stand-in (:class:`~fixlore.lsp.tools.editor_session.EditorSession`) that
types as an editor does. The relay (``lsp/transport/relay.py``) answers the
first code actions with ruff's own; the full server then takes over what the
relay passed on: no edit lost or applied twice (ruff's diagnostics follow the
editor's text across the hand-over), no diagnostics published twice, and the
documents opened during the relay are learned from afterwards.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fixlore.lsp.tools.editor_session import EDITOR_CAPABILITIES, EditorSession

pytestmark = pytest.mark.e2e

BIN = Path(sys.executable).parent
RELAYED = re.compile(r"the early front relayed (\d+) messages \((.*) then\)")
PULLS = {**EDITOR_CAPABILITIES["textDocument"], "diagnostic": {"dynamicRegistration": False}}


def serve(*flags: str) -> list[str]:
    return [str(BIN / "fixlore"), "serve", "--upstream", f"python={BIN / 'ruff'} server", *flags]


def hand_over(session: EditorSession) -> tuple[int, str] | None:
    """How many messages the relay served and why it ended, once the full server has said so (``None`` before)."""
    for method, params in session.notifications:
        if method == "window/logMessage" and (found := RELAYED.search(params["message"])):
            return int(found.group(1)), found.group(2)
    return None


def relayed(session: EditorSession) -> int | None:
    """How many messages the relay served (``None`` before the hand-over)."""
    said = hand_over(session)
    return None if said is None else said[0]


def why_ended(session: EditorSession) -> str | None:
    """Why the relay ended (``None`` before the hand-over)."""
    said = hand_over(session)
    return None if said is None else said[1]


async def manual_fixes_past(session: EditorSession, before: int) -> dict[str, Any]:
    """``fixlore.stats`` once the session has learned more than ``before`` hand fixes (or after 20 s)."""
    for _ in range(200):
        stats = await session.execute("fixlore.stats", [])
        if stats["session"]["manualFixes"] > before:
            break
        await asyncio.sleep(0.1)
    return stats


def end_of(text: str) -> dict[str, int]:
    lines = text.split("\n")
    return {"line": len(lines) - 1, "character": len(lines[-1])}


def f401(diagnostics: list[dict[str, Any]]) -> int:
    return sum(d.get("code") == "F401" for d in diagnostics)


def publishes(session: EditorSession, uri: str) -> list[tuple[Any, str]]:
    return [
        (p.get("version"), repr(p["diagnostics"]))
        for m, p in session.notifications
        if m == "textDocument/publishDiagnostics" and p["uri"] == uri
    ]


async def type_across_the_hand_over(session: EditorSession, uri: str, text: str) -> int:
    """Type one import every 20 ms at the end of ``text`` until 15 past the hand-over; how many were typed.

    Each edit is an incremental change at the end, from the relay into the full
    server's time: one lost or applied twice upstream and ruff's diagnostics no
    longer match the text. Returns once ruff has flagged every import of the final version.
    """
    k, handed_over = 0, None
    while handed_over is None or k < handed_over + 15:
        assert k < 1000, "the full server never took over"
        session.edit(uri, [{"range": {"start": end_of(text), "end": end_of(text)}, "newText": f"import m{k}\n"}])
        text += f"import m{k}\n"
        k += 1
        if handed_over is None and relayed(session) is not None:
            handed_over = k
        await asyncio.sleep(0.02)
    final = session.versions[uri]
    await session.wait_for(
        lambda: session.diagnostic_versions.get(uri) == final and f401(session.current(uri)) == k + 1,
        what="the final version's diagnostics",
    )
    return k


async def test_quick_fix_in_the_first_second_and_edits_across_the_hand_over(tmp_path: Path) -> None:
    session = EditorSession(tmp_path, timeout=30)
    await session.start(serve(), cwd=str(tmp_path))
    try:
        loop = asyncio.get_running_loop()
        await session.initialize()
        began = loop.time()  # initialized has just been sent
        text = "import os\n"
        uri = session.open("a.py", text)
        diag = await session.diagnostic(uri, "F401")
        actions = await session.code_actions(uri, diag)
        answered = loop.time() - began
        assert answered < 1.0, f"first code action answered {answered:.2f} s after initialized"
        assert any("Remove unused import" in a["title"] for a in actions), [a["title"] for a in actions]
        # ruff marks its fix preferred; it deletes code this user never chose to delete: relayed
        # (no fixlore.accept) or not, nothing is marked an editor would apply unasked
        assert not any(a.get("isPreferred") for a in actions), [a["title"] for a in actions if a.get("isPreferred")]

        k = await type_across_the_hand_over(session, uri, text)
        count = relayed(session)
        assert count is not None and count >= 3, count  # initialized, didOpen, didChange... at least
        lines = sorted(d["range"]["start"]["line"] for d in session.current(uri) if d.get("code") == "F401")
        assert lines == list(range(k + 1))

        # After the hand-over fixlore serves: its code actions carry fixlore.accept.
        diag = await session.diagnostic(uri, "F401")
        after = await session.code_actions(uri, diag)
        assert any((a.get("command") or {}).get("command") == "fixlore.accept" for a in after)
        # Each list of diagnostics reached the editor once per version (the relay's
        # pass-through and the hub's publish of the same push are one). Empty lists
        # are left out: the hub publishes one for the current version whenever a
        # push for an older one comes in, as it did before the relay.
        twice = [key for key, n in Counter(publishes(session, uri)).items() if n > 1 and key[1] != "[]"]
        assert not twice, twice[:3]
    finally:
        await session.close()


async def test_the_upstream_gets_every_message_once_and_in_order(tmp_path: Path) -> None:
    """What the relay passed on is not sent again by the full server, and nothing is missing (a recording hop)."""
    record = tmp_path / "upstream.log"
    recorder = [
        sys.executable,
        str(Path(__file__).parents[1] / "proxy" / "servers" / "recording.py"),
        str(BIN / "ruff"),
    ]
    command = [str(BIN / "fixlore"), "serve", "--upstream", "python=" + " ".join([*recorder, "server"])]
    session = EditorSession(tmp_path, timeout=30)
    await session.start(command, cwd=str(tmp_path), env={**os.environ, "RECORD_TO": str(record)})
    try:
        await session.initialize()
        text = "import os\n"
        uri = session.open("c.py", text)
        await type_across_the_hand_over(session, uri, text)
        assert (relayed(session) or 0) >= 3
        final = session.versions[uri]
        sent = record.read_text().splitlines()
        sync = [
            line
            for line in sent
            if line.split()[0] in ("initialized", "textDocument/didOpen", "textDocument/didChange")
        ]
        expected = ["initialized -", "textDocument/didOpen 1"] + [
            f"textDocument/didChange {v}" for v in range(2, final + 1)
        ]
        assert sync == expected
    finally:
        await session.close()


async def test_requests_the_relay_does_not_serve_go_to_the_full_server_in_order(tmp_path: Path) -> None:
    """A hover (not relayed) ends the relay: it and the edits behind it reach the upstream in the editor's order."""
    session = EditorSession(tmp_path, timeout=30)
    await session.start(serve(), cwd=str(tmp_path))
    try:
        await session.initialize()
        uri = session.open("b.py", "import os\n")
        await session.diagnostic(uri, "F401")
        hover = asyncio.ensure_future(
            session.request(
                "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 8}}
            )
        )
        session.change(uri, "import os\nimport sys\n")
        await hover
        final = session.versions[uri]
        await session.wait_for(
            lambda: session.diagnostic_versions.get(uri) == final and len(session.current(uri)) == 2,
            what="both imports flagged",
        )
        await session.wait_for(lambda: relayed(session) is not None, what="the hand-over")
    finally:
        await session.close()


async def test_documents_opened_during_the_relay_are_learned_from(tmp_path: Path) -> None:
    """The full server has the history of what the relay passed on: a hand fix made after the hand-over is learned.

    A fix finished while the relay serves is not learned (the full server sees
    those versions at once, with no settled state in between); nothing fails.
    """
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nextend-select = ["E711"]\n')
    session = EditorSession(tmp_path, timeout=30)
    await session.start(serve(), cwd=str(tmp_path))
    try:
        await session.initialize(init_options={"fixlore": {"manualFixPauseMs": 300}})
        early = session.open("early.py", "def f(x):\n    return x == None\n")
        late = session.open("late.py", "def g(y):\n    return y == None\n")
        await session.diagnostic(early, "E711")
        session.change(early, "def f(x):\n    return x is None\n")  # fixed at once, during the relay
        await session.wait_for(lambda: relayed(session) is not None, what="the hand-over")
        await session.diagnostic(late, "E711")
        stats = await session.execute("fixlore.stats", [])
        before = stats["session"]["manualFixes"]
        settles = stats["session"]["settles"]
        while (await session.execute("fixlore.stats", []))["session"]["settles"] <= settles:
            await asyncio.sleep(0.1)  # the late document's state with E711 is the baseline
        session.change(late, "def g(y):\n    return y is None\n")
        await session.gone(late, "E711")
        stats = await manual_fixes_past(session, before)
        assert stats["session"]["manualFixes"] == before + 1, stats["session"]
    finally:
        await session.close()


async def test_an_editor_that_pulls_gets_its_first_diagnostics_from_the_relay(tmp_path: Path) -> None:
    """VS Code pulls as it opens a file: the relay passes the pull to the upstream, not on to the loading server.

    After the hand-over a hand fix of that diagnostic is learned: the hub has the
    report the editor was shown (held for it by the relay, ``test_relay_pulls.py``).
    """
    (tmp_path / "pyproject.toml").write_text('[tool.ruff.lint]\nextend-select = ["E711"]\n')
    session = EditorSession(tmp_path, timeout=30)
    await session.start(serve(), cwd=str(tmp_path))
    try:
        caps = {**EDITOR_CAPABILITIES, "textDocument": PULLS}
        await session.initialize(caps=caps, init_options={"fixlore": {"manualFixPauseMs": 300}})
        assert session.capabilities.get("diagnosticProvider")  # the editor pulls; nothing is published
        text = "def g(y):\n    return y == None\n"
        uri = session.open("pulled.py", text)
        report = await session.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        assert [d["code"] for d in report["items"]] == ["E711"], report
        await session.wait_for(lambda: why_ended(session) is not None, what="the hand-over")
        assert "textDocument/diagnostic" not in (why_ended(session) or ""), why_ended(session)
        assert (relayed(session) or 0) >= 3  # initialized, didOpen, the pull
        stats = await session.execute("fixlore.stats", [])
        before = stats["session"]["manualFixes"]
        session.change(uri, "def g(y):\n    return y is None\n")
        fixed = await session.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        assert fixed["items"] == [], fixed
        stats = await manual_fixes_past(session, before)
        assert stats["session"]["manualFixes"] == before + 1, stats["session"]
    finally:
        await session.close()
