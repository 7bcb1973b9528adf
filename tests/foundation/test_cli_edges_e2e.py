"""The command line as a user meets it: pipes closed early, bad or busy TCP ports (issue 14)."""

from __future__ import annotations

import os
import socket
import subprocess

import pytest

from tests.conftest import fixlore_command

pytestmark = pytest.mark.e2e


def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        fixlore_command(*args), capture_output=True, text=True, timeout=120, env=dict(os.environ), **kwargs
    )


@pytest.mark.parametrize("command", [["list"], ["stats"], ["export"], ["list", "--json"]])
def test_output_into_a_closed_pipe_ends_quietly(command: list[str]) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader has gone, as `| head -2` does once it has its lines
    try:
        proc = subprocess.run(
            fixlore_command("knowledge", *command),
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
            env=dict(os.environ),
        )
    finally:
        os.close(write_end)

    assert (proc.returncode, proc.stderr) == (0, "")


@pytest.mark.parametrize("address", ["127.0.0.1:99999", "127.0.0.1:-1", "127.0.0.1:http", "2087", ":2087"])
def test_a_bad_tcp_address_is_a_usage_error_in_one_line(address: str) -> None:
    proc = run("serve", "--tcp", address)

    assert proc.returncode == 2
    assert proc.stderr.startswith(f"fixlore: cannot listen on {address}: ")
    assert len(proc.stderr.splitlines()) == 1, proc.stderr


def test_out_of_range_port_says_so() -> None:
    proc = run("serve", "--tcp", "127.0.0.1:99999")

    assert proc.stderr == "fixlore: cannot listen on 127.0.0.1:99999: port out of range\n"


def test_a_port_in_use_is_one_line_and_a_failure() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        address = f"127.0.0.1:{busy.getsockname()[1]}"
        proc = run("serve", "--tcp", address)

    assert proc.returncode == 1
    assert proc.stderr == f"fixlore: cannot listen on {address}: address already in use\n"


def test_an_unknown_host_is_one_line_and_a_failure() -> None:
    proc = run("serve", "--tcp", "no-such-host.invalid:2087")

    assert proc.returncode == 1
    assert proc.stderr.startswith("fixlore: cannot listen on no-such-host.invalid:2087: ")
    assert len(proc.stderr.splitlines()) == 1, proc.stderr
