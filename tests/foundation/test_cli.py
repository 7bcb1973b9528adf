"""The `fixlore` command line: version, doctor, serve over TCP, demo."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from fixlore.lsp.transport.jsonrpc import JsonRpcConnection

FIXLORE = str(Path(sys.executable).parent / "fixlore")


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([FIXLORE, *args], capture_output=True, text=True, timeout=120, cwd=cwd, env=dict(os.environ))


def test_version() -> None:
    proc = run("--version")
    assert proc.returncode == 0
    assert proc.stdout.startswith("fixlore ")


def test_doctor_is_happy_with_grammars_and_a_present_upstream(tmp_path: Path) -> None:
    proc = run("doctor", "--upstream", "python=ruff server", cwd=tmp_path)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tree-sitter-python" in proc.stdout
    assert str(os.environ["FIXLORE_HOME"]) in proc.stdout
    assert "All good." in proc.stdout
    assert "python       ruff format, where the code a quick fix touches is formatted" in proc.stdout


def test_doctor_says_when_fixes_are_not_formatted(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fixlore]\nformatFixes = false\n")
    report = run("doctor", "--upstream", "python=ruff server", cwd=tmp_path).stdout
    assert "Formatted fixes (formatFixes):\n  off" in report
    (tmp_path / "plain").mkdir()  # no settings, no upstream
    assert "none: no upstream formats" in run("doctor", cwd=tmp_path / "plain").stdout


def test_doctor_fails_on_a_missing_upstream_and_names_it(tmp_path: Path) -> None:
    proc = run("doctor", "--upstream", "go=gopls-not-installed-anywhere", cwd=tmp_path)

    assert proc.returncode == 1
    assert "upstream `gopls-not-installed-anywhere` for go is not on PATH" in proc.stdout


def test_doctor_reports_invalid_pyproject_settings(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.fixlore]\nlearning = 'sometimes'\n")
    proc = run("doctor", cwd=tmp_path)

    assert proc.returncode == 1
    assert "`learning`: expected true or false" in proc.stdout


def test_bad_upstream_flag_is_a_usage_error() -> None:
    proc = run("serve", "--upstream", "ruff server")
    assert proc.returncode == 2
    assert "LANGUAGE='COMMAND" in proc.stderr


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.e2e
async def test_serve_over_tcp(tmp_path: Path) -> None:
    port = free_port()
    process = await asyncio.create_subprocess_exec(FIXLORE, "serve", "--tcp", f"127.0.0.1:{port}")
    try:
        for _ in range(200):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)  # polling for the listening socket, not synchronising on work
        else:
            pytest.fail("fixlore did not listen on its TCP port")
        notes: list[tuple[str, object]] = []
        got = asyncio.Event()
        conn = JsonRpcConnection(reader, writer, on_notification=lambda m, p: (notes.append((m, p)), got.set()))
        conn.start()
        result = await conn.request("initialize", {"processId": None, "capabilities": {}}, timeout=30)
        assert result["serverInfo"]["name"] == "fixlore"
        conn.notify("initialized", {})
        conn.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": "file:///t/x.rs",
                    "languageId": "rust",
                    "version": 1,
                    "text": "fn main() { let x = 1 }",
                }
            },
        )

        # Other notifications (fixlore/status, once the store is open) may come first.
        async def published() -> object:
            while True:
                for method, params in notes:
                    if method == "textDocument/publishDiagnostics":
                        return params
                got.clear()
                await got.wait()

        params = await asyncio.wait_for(published(), 20)
        assert params["diagnostics"][0]["message"] == "Syntax error: missing `;`"  # type: ignore[index]
        await conn.request("shutdown", None, timeout=10)
        conn.notify("exit")
        await conn.close()
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


@pytest.mark.e2e
def test_demo_runs_on_the_shipped_workspace() -> None:
    proc = run("demo")

    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    # Python goes to ruff (one syntax error, not two); the other languages get fixlore's own
    assert "report.py: 1 problem(s)" in out and "Ruff invalid-syntax" in out
    assert "fixlore python-syntax" not in out
    assert "fixlore missing-token    Syntax error: missing `)`" in out
    assert "fixlore missing-token    Syntax error: missing fi" in out
    assert "Ruff F821                Undefined name `os`" in out
    # and the learning part: the order flips after three choices (the numbered lists only:
    # the headings name the action chosen)
    before, after = out.split("After 3 choices", 1)
    first = [line.strip() for line in before.split("keeps ruff's order:", 1)[1].splitlines()[1:3]]
    then = [line.strip() for line in after.splitlines()[1:3]]
    assert first[0].startswith("1. Ruff (F401): Remove unused import") and "Disable for this line" in first[1], first
    assert then[0].startswith("1. Ruff (F401): Disable for this line") and "Remove unused import" in then[1], then
    # first, as the habit says, but a suppression is never marked preferred (editors apply those unasked)
    assert not then[0].endswith("<- preferred"), then


@pytest.mark.e2e
def test_demo_skips_byte_code_and_binaries_like_an_installed_sample_has(tmp_path: Path) -> None:
    # A non-editable install byte-compiles the sample's .py files into __pycache__.
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\xa7\r\r\n\x00\x00\x00\x00binary")
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    (tmp_path / "app.py").write_text("def f(x)\n    return x\n")

    proc = run("demo", "--workspace", str(tmp_path), "--no-ruff")

    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "app.py: 1 problem(s)" in proc.stdout
    assert ".pyc" not in proc.stdout and "logo.png" not in proc.stdout
