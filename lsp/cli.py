"""The ``fixlore`` command line: serve, doctor, demo, explain, knowledge.

Exit codes: 0 success; 1 something needed is missing (doctor) or not found;
2 usage error; 3 invalid input; 4 store error.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from typing import Any

from fixlore.knowledge import cli as knowledge_cli
from fixlore.lsp import __version__, explain
from fixlore.lsp.config import parse_upstream_flag


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fixlore`` command."""
    parser = argparse.ArgumentParser(
        prog="fixlore",
        description="A language server that learns how you fix problems.",
    )
    parser.add_argument("--version", action="version", version=f"fixlore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen for one editor on a TCP socket")
    _add_server_flags(serve)

    doctor = sub.add_parser("doctor", help="check the installation and configuration")
    _add_server_flags(doctor)

    demo = sub.add_parser("demo", help="drive fixlore like an editor on the sample workspace")
    demo.add_argument("--workspace", metavar="DIR", help="use this workspace instead of the shipped sample")
    demo.add_argument("--no-ruff", action="store_true", help="do not use `ruff server` as upstream")

    knowledge_cli.register(sub)
    explain.register(sub)
    return parser


def _add_server_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--upstream",
        action="append",
        default=[],
        metavar="LANG='CMD ...'",
        help="an upstream server for a language; repeat for several (e.g. python='ruff server')",
    )
    parser.add_argument("--no-learning", action="store_true", help="learn nothing; write nothing")
    parser.add_argument(
        "--log-level", choices=["error", "warning", "info", "debug"], help="log level (logs never carry code)"
    )


def cli_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings layer the CLI flags make (highest precedence)."""
    settings: dict[str, Any] = {}
    upstreams: dict[str, list[dict[str, Any]]] = {}
    for flag in args.upstream:
        language, spec = parse_upstream_flag(flag)
        upstreams.setdefault(language, []).append(spec)
    if upstreams:
        settings["upstreams"] = upstreams
    if args.no_learning:
        settings["learning"] = False
    if args.log_level:
        settings["logLevel"] = args.log_level
    return settings


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``fixlore`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "doctor":
            from fixlore.lsp.doctor import run_doctor

            return run_doctor(cli_settings(args))
        if args.command == "demo":
            from fixlore.lsp.demo import run_demo

            return run_demo(workspace=args.workspace, use_ruff=not args.no_ruff)
    except ValueError as exc:
        print(f"fixlore: {exc}", file=sys.stderr)
        return 2
    handler = getattr(args, "run", None)
    if handler is not None:
        return int(handler(args))
    parser.print_help()
    return 2


def _serve(args: argparse.Namespace) -> int:
    from fixlore.lsp import logs
    from fixlore.lsp.server import ServerOptions, create_server

    settings = cli_settings(args)
    logs.configure(settings.get("logLevel", "info"))
    server = create_server(ServerOptions(cli_settings=settings))
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"--tcp expects HOST:PORT, got {args.tcp!r}")
        server.start_tcp(host, int(port))
    else:
        server.start_io()
    return 0


def which(command: str) -> str | None:
    """``shutil.which`` (here so tests and doctor agree on lookup)."""
    return shutil.which(command)


if __name__ == "__main__":
    sys.exit(main())
