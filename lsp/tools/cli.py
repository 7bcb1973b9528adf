"""The ``fixlore`` command line: serve, doctor, demo, explain, knowledge.

Exit codes: 0 success (also when the reader of the output leaves early, as
``| head`` does); 1 something needed is missing (doctor), not found, or the
server cannot listen (port in use); 2 usage error; 3 invalid input; 4 store error.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Any

from fixlore.lsp import __version__, heap

MODULE_COMMANDS = ("knowledge", "dashboard", "team", "explain")
"""Sub-commands registered by their own modules (imported only when needed, see :func:`build_parser`)."""


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser of the ``fixlore`` command.

    ``command``: the sub-command about to run (the first argument). Of the
    sub-commands in :data:`MODULE_COMMANDS` only that one is registered, so
    that neither an editor starting the server nor ``fixlore dashboard`` waits
    for the other modules to import; with none of them (``--help``, a typo),
    all are.
    """
    parser = argparse.ArgumentParser(
        prog="fixlore",
        description="A language server that learns how you fix problems.",
        **examples(
            "fixlore serve --upstream python='ruff server'   # what an editor starts",
            "fixlore doctor                                  # check the installation",
            "fixlore demo                                    # watch a session on a sample workspace",
            "fixlore explain app.py 12:5                     # why the fixes there rank as they do",
            "fixlore knowledge list                          # what fixlore has learned",
            "fixlore dashboard                               # the same, as pictures in the browser",
            codes=EXIT_CODES,
        ),
    )
    parser.add_argument("--version", action="version", version=f"fixlore {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = sub.add_parser(
        "serve",
        help="run the language server (stdio by default)",
        **examples(
            "fixlore serve                                   # LSP over stdin/stdout, standalone",
            "fixlore serve --upstream python='ruff server'   # front ruff: rank its fixes, learn",
            "fixlore serve --tcp 127.0.0.1:2087              # one editor over TCP",
            "fixlore serve --log-level debug --log-file /tmp/fixlore.log  # timings of each code action",
        ),
    )
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk LSP over stdin/stdout (default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen for one editor on a TCP socket")
    serve.add_argument(
        "--log-file", metavar="PATH", help="also write the log to PATH (appended; the log never carries code)"
    )
    serve.add_argument(
        "--late-initialize",
        action="store_true",
        help="answer initialize only once the whole server is loaded (slower start; for comparison)",
    )
    _add_server_flags(serve)

    doctor = sub.add_parser(
        "doctor",
        help="check the installation and configuration",
        **examples(
            "fixlore doctor",
            "fixlore doctor --upstream python='ruff server'  # is that upstream on PATH?",
        ),
    )
    _add_server_flags(doctor)

    demo = sub.add_parser(
        "demo",
        help="drive fixlore like an editor on the sample workspace",
        **examples(
            "fixlore demo",
            "fixlore demo --no-ruff                          # standalone, no upstream server",
        ),
    )
    demo.add_argument("--workspace", metavar="DIR", help="use this workspace instead of the shipped sample")
    demo.add_argument("--no-ruff", action="store_true", help="do not use `ruff server` as upstream")
    if command in ("serve", "doctor", "demo"):
        return parser
    _register(sub, command if command in MODULE_COMMANDS else None)
    return parser


def _register(sub: argparse._SubParsersAction[argparse.ArgumentParser], command: str | None) -> None:
    """Register ``command``'s sub-parser (all of :data:`MODULE_COMMANDS` when None), in the order ``--help`` lists."""
    if command in (None, "knowledge"):
        from fixlore.knowledge import cli as knowledge_cli

        knowledge_cli.register(sub)
    if command in (None, "dashboard"):
        from fixlore.knowledge import dashboard_cli

        dashboard_cli.register(sub)
    if command in (None, "team"):
        from fixlore.knowledge import team_cli

        team_cli.register(sub)
    if command in (None, "explain"):
        from fixlore.lsp.tools import explain_cli

        explain_cli.register(sub)


EXIT_CODES = (
    "0  success, also when there was nothing to do or the reader of the output left early (| head)",
    "1  something needed is missing or not found, or the server cannot listen (port in use)",
    "2  usage error (unknown option, bad address or port, a line past the end of the file)",
    "3  invalid input (a malformed export file)",
    "4  knowledge store error (unreadable, locked, not allowed)",
)


def examples(*lines: str, codes: Sequence[str] = ()) -> dict[str, Any]:
    """``add_parser``/``ArgumentParser`` keywords for a help text that ends with these example lines."""
    preface = "exit codes:\n" + "\n".join(f"  {line}" for line in codes) + "\n\n" if codes else ""
    return {
        "epilog": preface + "examples:\n" + "\n".join(f"  {line}" for line in lines),
        "formatter_class": argparse.RawDescriptionHelpFormatter,
    }


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
    from fixlore.lsp.config import parse_upstream_flag

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
    try:
        code = _main(argv)
        if not sys.stdout.closed:  # `serve` closes it on `exit`
            sys.stdout.flush()  # here, not at interpreter exit, where a closed pipe could not be handled
    except BrokenPipeError:
        # The reader of our output has gone (`fixlore knowledge list | head -2`): stop
        # quietly, as Unix tools do. Later flushes go nowhere instead of failing.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return code


def _main(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv[0] if argv else None)
    args, extra = parser.parse_known_args(argv)
    if extra:  # argparse would blame the top level; the sub-command's usage is the helpful one
        _innermost(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    if args.command is None:
        parser.print_help()
        return 2
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "doctor":
            from fixlore.lsp.tools.doctor import run_doctor

            return run_doctor(cli_settings(args))
        if args.command == "demo":
            from fixlore.lsp.tools.demo import run_demo

            return run_demo(workspace=args.workspace, use_ruff=not args.no_ruff)
    except ValueError as exc:
        print(f"fixlore: {exc}", file=sys.stderr)
        return 2
    handler = getattr(args, "run", None)
    if handler is not None:
        return int(handler(args))
    parser.print_help()
    return 2


def _innermost(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.ArgumentParser:
    """The parser of the (sub-)sub-command ``args`` chose (``fixlore knowledge list``)."""
    while True:
        chosen = [
            action.choices[getattr(args, action.dest)]
            for action in parser._actions
            if isinstance(action, argparse._SubParsersAction) and getattr(args, action.dest, None) in action.choices
        ]
        if not chosen:
            return parser
        parser = chosen[0]


SWITCH_INTERVAL_S = 0.0005
"""How often a thread holding the GIL lets another run (see :func:`sys.setswitchinterval`)."""


def _serve(args: argparse.Namespace) -> int:
    settings = cli_settings(args)
    address = _tcp_address(args.tcp) if args.tcp else None
    # Learned fixes are instantiated on worker threads while the event loop answers the
    # editor; at CPython's default 5 ms a request waits up to that long for the GIL at each
    # turn (a code action takes several). 0.5 ms keeps the loop's share of it small.
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    heap.serving()  # what it loads is frozen once the server is built (see fixlore.lsp.heap)
    if args.log_file:
        try:
            open(args.log_file, "a", encoding="utf-8").close()  # noqa: SIM115 - only: can it be written?
        except OSError as exc:
            print(f"fixlore: cannot write the log file {args.log_file}: {exc.strerror or exc}", file=sys.stderr)
            return 2
    if address is None and not args.late_initialize:
        from fixlore.lsp.transport.handover import serve_stdio

        learning = settings.get("learning") is not False
        serve_stdio(  # answered before pygls loads
            lambda: _server(settings, args.log_file),
            lambda: _load_server(learning=learning),
            settings,
            prepare=_load_tables if learning else None,
        )
        return 0
    from fixlore.lsp.server import CannotListen

    server = _server(settings, args.log_file)
    heap.loaded()
    if address is None:
        server.start_io()
        return 0
    try:
        server.start_tcp(*address)
    except CannotListen as exc:
        print(f"fixlore: cannot listen on {args.tcp}: {exc}", file=sys.stderr)
        return 1
    return 0


def _server(settings: dict[str, Any], log_file: str | None = None) -> Any:
    from fixlore.lsp.server import ServerOptions, create_server
    from fixlore.lsp.transport import logs

    logs.configure(settings.get("logLevel", "info"))
    if log_file:
        logs.to_file(log_file)
    return create_server(ServerOptions(cli_settings=settings))


SERVER_MODULES = (
    "fixlore.lsp.server",
    "fixlore.lsp.documents",
    "fixlore.lsp.lifecycle",
    "fixlore.lsp.proxy",
    "fixlore.lsp.actions.code_actions",
    "fixlore.lsp.actions.commands",
    "fixlore.lsp.dispatch",
    "fixlore.lsp.hub",
    "fixlore.lsp.learning.loop",
)
"""What :func:`~fixlore.lsp.server.create_server` imports: loaded on a thread while the early front works."""


def _load_server(*, learning: bool = True) -> None:
    import importlib

    for name in SERVER_MODULES + (KNOWLEDGE_MODULES if learning else ()):
        importlib.import_module(name)


KNOWLEDGE_MODULES = ("fixlore.knowledge._knowledge",)
"""What opening the knowledge store imports (SQLite, the store, its scopes): on the loading thread too.

Imported at the hand-over instead, they held the GIL in the thread opening the
store while the event loop took in what the relay had passed on, and the first
lightbulbs after it waited (the start-up window's slowest code actions)."""


def _load_tables(documents: list[tuple[str, str]]) -> None:
    """The learning tables of the documents the editor opened while the server loaded (see ``Loading``)."""
    from fixlore.abstraction import load_tables
    from fixlore.abstraction.languages import language_for

    for language in {language_for(language_id, uri) for language_id, uri in documents} - {None}:
        load_tables(language)


def _tcp_address(value: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a host and a port; ``ValueError`` says what is wrong."""
    host, _, port = value.rpartition(":")
    host = host.removeprefix("[").removesuffix("]")
    if not host:
        raise ValueError(f"cannot listen on {value}: expected HOST:PORT, e.g. 127.0.0.1:2087")
    if not port.isdigit():
        raise ValueError(f"cannot listen on {value}: the port must be a number from 0 to 65535")
    if int(port) > 65535:
        raise ValueError(f"cannot listen on {value}: port out of range")
    return host, int(port)


def which(command: str) -> str | None:
    """``shutil.which`` (here so tests and doctor agree on lookup)."""
    import shutil  # here: `serve` answers initialize before it would have loaded

    return shutil.which(command)


if __name__ == "__main__":
    sys.exit(main())
