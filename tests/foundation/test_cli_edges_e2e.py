"""The command line as a user meets it: pipes closed early, bad or busy TCP ports (issue 14)."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from tests.conftest import fixlore_command

pytestmark = pytest.mark.e2e


def run(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    options: dict[str, object] = {"env": dict(os.environ), **kwargs}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        fixlore_command(*args), capture_output=True, text=True, timeout=120, **options
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


def test_stats_counts_the_patterns_list_shows() -> None:
    listed = run("knowledge", "list")
    stats = run("knowledge", "stats")

    assert listed.returncode == stats.returncode == 0
    shown = len(listed.stdout.splitlines()) - 1  # the header
    assert shown > 0  # the base knowledge shipped with fixlore
    assert f"patterns   {shown} active (0 learned, 0 workspace, {shown} base)" in stats.stdout
    assert "learning" not in stats.stdout  # "learning off" read as if learning were disabled


@pytest.mark.parametrize("command", [["export", "-o", "{tmp}/out.json"], ["prune"], ["prune", "--dry-run"]])
def test_nothing_to_do_is_success(command: list[str], tmp_path: Path) -> None:
    proc = run("knowledge", *(part.format(tmp=tmp_path) for part in command))

    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_doctor_lists_language_servers_found_on_path(tmp_path: Path) -> None:
    fake = tmp_path / "gopls"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}")

    proc = run("doctor", env=env, cwd=tmp_path)

    assert proc.returncode == 0, proc.stdout
    assert f"go           gopls  {fake}" in proc.stdout


def test_doctor_refuses_an_upstream_for_an_unknown_language(tmp_path: Path) -> None:
    proc = run("doctor", "--upstream", "klingon=ruff server", cwd=tmp_path)

    assert proc.returncode == 1
    assert "All good" not in proc.stdout
    assert "`klingon` is not a language id editors send" in proc.stdout


@pytest.mark.parametrize(
    ("args", "usage"),
    [
        (["doctor", "--bogus"], "usage: fixlore doctor"),
        (["serve", "--bogus"], "usage: fixlore serve"),
        (["knowledge", "list", "--bogus"], "usage: fixlore knowledge list"),
    ],
)
def test_an_unknown_option_shows_the_sub_commands_usage(args: list[str], usage: str) -> None:
    proc = run(*args)

    assert proc.returncode == 2
    assert proc.stderr.startswith(usage), proc.stderr
    assert "unrecognized arguments: --bogus" in proc.stderr


def test_explain_past_the_end_of_the_file_is_a_usage_error(tmp_path: Path) -> None:
    source = tmp_path / "short.py"
    source.write_text("x = 1\ny = 2\n")

    proc = run("explain", str(source), "99", "--no-ruff")

    assert proc.returncode == 2
    assert proc.stderr == f"fixlore: line 99 is past the end of {source} (3 lines)\n"


def test_explain_past_the_end_of_a_line_is_a_usage_error(tmp_path: Path) -> None:
    source = tmp_path / "short.py"
    source.write_text("x = 1\n")

    proc = run("explain", str(source), "1:40", "--no-ruff")

    assert proc.returncode == 2
    assert proc.stderr == f"fixlore: column 40 is past the end of line 1 of {source} (6 columns)\n"


@pytest.mark.parametrize(
    "command",
    [
        [],
        ["serve"],
        ["doctor"],
        ["demo"],
        ["explain"],
        ["knowledge"],
        *(["knowledge", sub] for sub in ("list", "show", "stats", "prune", "export", "import", "forget", "reset")),
        ["dashboard"],
        ["team"],
        *(["team", sub] for sub in ("init", "add-member", "status", "sync", "review", "approve", "reject")),
    ],
)
def test_help_lists_examples(command: list[str]) -> None:
    proc = run(*command, "--help")

    assert proc.returncode == 0
    examples = proc.stdout.split("examples:\n", 1)[1].splitlines()
    assert examples and all(line.startswith(f"  fixlore {' '.join(command)}".rstrip()) for line in examples), examples


def test_help_documents_the_exit_codes() -> None:
    proc = run("--help")

    codes = proc.stdout.split("exit codes:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split()[0] for line in codes] == ["0", "1", "2", "3", "4"]
    assert "nothing to do" in codes[0]


def test_an_empty_list_is_success(tmp_path: Path) -> None:
    proc = run("knowledge", "list", "--no-base", "--home", str(tmp_path / "home"))

    assert (proc.returncode, proc.stdout) == (0, "no patterns\n")


@pytest.mark.parametrize("how", ["--home", "FIXLORE_HOME"])
def test_a_relative_knowledge_home_works(tmp_path: Path, how: str) -> None:
    flags = ["--home", "rel/home"] if how == "--home" else []
    env = dict(os.environ, FIXLORE_HOME="rel/home") if how == "FIXLORE_HOME" else dict(os.environ)

    created = run("knowledge", "prune", *flags, cwd=tmp_path, env=env)  # creates the store
    listed = run("knowledge", "list", *flags, cwd=tmp_path, env=env)  # reads it back

    assert (created.returncode, listed.returncode) == (0, 0), created.stderr + listed.stderr
    assert (tmp_path / "rel" / "home" / "knowledge.sqlite3").is_file()
    assert listed.stderr == ""


@pytest.mark.parametrize("flags", [[], ["--no-ruff"]], ids=["ruff", "standalone"])
def test_demo_shows_a_fix_learned_from_hand_edits(flags: list[str]) -> None:
    proc = run("demo", *flags)

    assert proc.returncode == 0, proc.stdout + proc.stderr
    section = proc.stdout.split("Learning from hand edits", 1)[1]
    assert "Offered for a new file: Apply learned fix: " in section
    assert "Accepted: def shipping_cost(order, rate):" in section  # applied: the colon typed in by fixlore
    # and learning from that accepted quick fix, standalone too: it worked, so it is preferred next time
    assert "Learned from that choice: accepted +1, worked +1" in section
    assert "with `def discount(order, percent):`  <- preferred" in section


def test_a_log_file_that_cannot_be_written_is_one_line_and_a_usage_error(tmp_path: Path) -> None:
    where = tmp_path / "missing-folder" / "fixlore.log"
    proc = subprocess.run(
        fixlore_command("serve", "--log-file", str(where)), capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        f"fixlore: cannot write the log file {where}: No such file or directory"
    ]
