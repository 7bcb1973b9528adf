"""``fixlore dashboard``: what fixlore learned, as one self-contained HTML page.

By default the page is written to a temporary file and opened in the browser
(:mod:`webbrowser`); ``-o FILE`` writes it without opening anything (``-o -``
to standard output); ``--json`` gives the data instead; ``--serve`` serves it
on 127.0.0.1 and the page reloads itself when the store changes. With a team
store configured (``--team URL``, ``teamKnowledge`` or ``FIXLORE_TEAM_KNOWLEDGE``,
as ``fixlore team``), the team's trusted patterns are pulled once and shown as
the ``team`` scope; an unreachable team store leaves that scope out and says so.
Exit codes as ``fixlore knowledge`` (0 ok, 2 usage, 4 store error).
"""

from __future__ import annotations

import argparse
import logging
import sqlite3
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import orjson

from ._knowledge import Knowledge
from ._model import KnowledgeError
from ._teamdb import team_conninfo
from .dashboard import dashboard_data, render_page, store_revision
from .team_cli import configured_url

if TYPE_CHECKING:
    from http.server import ThreadingHTTPServer

logger = logging.getLogger(__name__)

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_STORE = 4
LIVE_PATH = "/revision"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``dashboard`` to the ``fixlore`` command."""
    p = subparsers.add_parser(
        "dashboard",
        help="see what fixlore learned: patterns, trends and effect in the browser",
        epilog="examples:\n"
        + "\n".join(
            f"  {line}"
            for line in (
                "fixlore dashboard                       # write a page and open it in the browser",
                "fixlore dashboard -o lore.html          # write it, open nothing",
                "fixlore dashboard --json > lore.json    # the same data for scripts",
                "fixlore dashboard --serve               # on 127.0.0.1, refreshes itself as fixlore learns",
            )
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("-o", "--output", help="write the page (or with --json, the data) here; '-' for standard output")
    p.add_argument("--json", action="store_true", help="the dashboard's data as JSON instead of the page")
    p.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1 with live refresh")
    p.add_argument("--port", type=int, default=0, help="port for --serve (default: any free port)")
    p.add_argument("--no-open", action="store_true", help="do not open the browser")
    p.add_argument("--home", type=Path, help="knowledge directory (default: $FIXLORE_HOME or the user data dir)")
    p.add_argument("--workspace", type=Path, help="also show this workspace's .fixlore/ scope")
    p.add_argument("--no-base", action="store_true", help="leave out the shipped base knowledge")
    p.add_argument(
        "--team",
        metavar="URL",
        help="also show the team's trusted patterns, pulled once from this team store"
        " (default: the configured teamKnowledge, else $FIXLORE_TEAM_KNOWLEDGE)",
    )
    p.add_argument("--no-team", action="store_true", help="do not read the team store")
    p.set_defaults(run=run)


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """Execute a parsed ``dashboard`` command; the exit code."""
    out = out or sys.stdout
    if args.serve and (args.json or args.output):
        print("fixlore: --serve does not combine with --json or -o", file=sys.stderr)
        return EXIT_USAGE
    if not 0 <= args.port <= 65535:
        print("fixlore: --port must be between 0 and 65535", file=sys.stderr)
        return EXIT_USAGE
    try:
        team = None if args.no_team else team_conninfo(args.team if args.team is not None else configured_url())
    except ValueError as exc:
        print(f"fixlore: the team store setting {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        k = Knowledge.open(
            args.home,
            workspace_root=args.workspace,
            workspace_scope=args.workspace is not None,
            learning=False,
            base=not args.no_base,
            auto_prune=False,
            # The dashboard reads the user store with its own queries: load none of it for ranking.
            eager_max=0,
            cache_rows=0,
            packed_rows=0,
            team=team or None,
            team_interval=0,  # pulled once here, not in a thread
        )
    except KnowledgeError as exc:
        print(f"fixlore: {exc}", file=sys.stderr)
        return EXIT_STORE
    try:
        if k.team is not None:
            report = k.team.sync(publish=False)
            if report.error:  # the page is still made, without the team scope
                print(f"fixlore: the team scope is left out: {report.error}", file=sys.stderr)
        if args.serve:
            return serve(k, port=args.port, open_browser=not args.no_open, out=out)
        data = dashboard_data(k)
        body = orjson.dumps(data, option=orjson.OPT_APPEND_NEWLINE) if args.json else render_page(data)
        if args.output == "-" or (args.json and args.output is None):
            out.write(body.decode())
            return EXIT_OK
        if args.output is not None:
            Path(args.output).write_bytes(body)
            print(f"wrote {args.output}", file=out)
            return EXIT_OK
        import tempfile  # here and below: not imported by the commands that write a file (-o, --json)
        import webbrowser

        fd, name = tempfile.mkstemp(prefix="fixlore-dashboard-", suffix=".html")
        with open(fd, "wb") as f:
            f.write(body)
        print(f"wrote {name}", file=out)
        if not args.no_open:
            webbrowser.open(Path(name).as_uri())
        return EXIT_OK
    except (KnowledgeError, OSError, sqlite3.Error) as exc:
        print(f"fixlore: knowledge store error: {exc}", file=sys.stderr)
        return EXIT_STORE
    finally:
        k.close()


def make_server(k: Knowledge, port: int = 0) -> ThreadingHTTPServer:
    """An HTTP server on 127.0.0.1: ``/`` is the page (built afresh), ``/revision`` the store's revision."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server calls
            path = self.path.split("?", 1)[0]
            with lock:  # one build at a time: the Knowledge object is shared
                if path == "/":
                    body, ctype = render_page(dashboard_data(k), live=LIVE_PATH), "text/html"
                elif path == "/data.json":
                    body, ctype = orjson.dumps(dashboard_data(k)), "application/json"
                elif path == LIVE_PATH:
                    body, ctype = store_revision(k).encode(), "text/plain"
                else:
                    self.send_error(404)
                    return
            self.send_response(200)
            self.send_header("Content-Type", f"{ctype}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            logger.debug("dashboard: " + format, *args)

    return ThreadingHTTPServer(("127.0.0.1", port), Handler)


def serve(k: Knowledge, *, port: int = 0, open_browser: bool = True, out: TextIO) -> int:
    """Serve the dashboard until interrupted (Ctrl-C)."""
    try:
        httpd = make_server(k, port)
    except OSError as exc:
        print(f"fixlore: cannot listen on 127.0.0.1:{port}: {exc}", file=sys.stderr)
        return 1
    url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    print(f"serving the dashboard on {url} (Ctrl-C stops)", file=out, flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return EXIT_OK
