"""A stdio tap in front of a language server: every request's time to its answer, as the editor sees it.

The replay of real fixes (``bench_humanfix.py --tap``) measures code actions
only; the learned fixes of a file just opened are made before its first
diagnostics go out (``lsp/learning/fixes.py``, ``FIRST_HOLD_S``), so that wait
shows in the first pull's answer instead. The tap times both, and every other
request, on the wire between the editor and the server, for fixlore and for
ruff alone alike (the same hop in front of each). Frames are copied as they
come; only the start of each is read (method, id, and the document of a
``didOpen`` or a pull).

    python bench/wire_tap.py --out TIMINGS.jsonl -- COMMAND [ARGS...]
    python bench/wire_tap.py --summary SERVER.jsonl [BASELINE.jsonl]   # p50 / p99 per kind, and added

Each line of ``TIMINGS.jsonl``: ``{"method", "ms", "first"}`` (``first``: a pull
of a document's diagnostics, the first since it was opened).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from typing import IO, Any

HEAD = 400
"""How much of a message is read: the harness and the servers write ``id`` and ``method`` first."""
_ID = re.compile(rb'"id"\s*:\s*(\d+|"[^"]*")')
_METHOD = re.compile(rb'"method"\s*:\s*"([^"]+)"')
_URI = re.compile(rb'"uri"\s*:\s*"([^"]+)"')


def frames(stream: IO[bytes]) -> Any:
    """Each LSP frame of ``stream``: (its bytes as read, the body)."""
    while True:
        header = b""
        while not header.endswith(b"\r\n\r\n"):
            line = stream.readline()
            if not line:
                return
            header += line
        length = int(re.search(rb"Content-Length:\s*(\d+)", header, re.IGNORECASE).group(1))  # type: ignore[union-attr]
        body = stream.read(length)
        yield header + body, body


class Tap:
    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.pending: dict[bytes, tuple[str, float, bool]] = {}
        self.fresh: set[bytes] = set()
        self.lock = threading.Lock()

    def from_editor(self, body: bytes) -> None:
        head = body[:HEAD]
        method = _METHOD.search(head)
        ident = _ID.search(head)
        if method is None:
            return  # the editor's answer to a request of the server's
        name = method.group(1).decode()
        uri = _URI.search(head)
        with self.lock:
            if name == "textDocument/didOpen" and uri is not None:
                self.fresh.add(uri.group(1))
            elif name in ("textDocument/didClose", "textDocument/didChange") and uri is not None:
                self.fresh.discard(uri.group(1))
            if ident is not None:
                first = name == "textDocument/diagnostic" and uri is not None and uri.group(1) in self.fresh
                if first:
                    self.fresh.discard(uri.group(1))  # type: ignore[union-attr]
                self.pending[ident.group(1)] = (name, time.perf_counter(), first)

    def from_server(self, body: bytes) -> None:
        head = body[:HEAD]
        if _METHOD.search(head) is not None:
            return  # a notification or a request of the server's
        ident = _ID.search(head)
        if ident is None:
            return
        now = time.perf_counter()
        with self.lock:
            sent = self.pending.pop(ident.group(1), None)
            if sent is not None:
                name, at, first = sent
                self.out.write(json.dumps({"method": name, "ms": round((now - at) * 1000, 3), "first": first}) + "\n")


def pump(source: IO[bytes], sink: IO[bytes], see: Any) -> None:
    try:
        for raw, body in frames(source):
            see(body)
            sink.write(raw)
            sink.flush()
    except (BrokenPipeError, ValueError, OSError):
        pass
    finally:
        try:
            sink.close()
        except OSError:
            pass


KINDS = {
    "first pull after open": lambda t: t["method"] == "textDocument/diagnostic" and t["first"],
    "other pulls": lambda t: t["method"] == "textDocument/diagnostic" and not t["first"],
    "code action": lambda t: t["method"] == "textDocument/codeAction",
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)] if ordered else math.nan


def summary(path: str) -> dict[str, tuple[int, float, float]]:
    """Per kind of request (:data:`KINDS`): how many, p50, p99 (ms)."""
    timings = [json.loads(line) for line in open(path, encoding="utf-8") if line.strip()]
    out = {}
    for kind, pick in KINDS.items():
        ms = [t["ms"] for t in timings if pick(t)]
        out[kind] = (len(ms), pct(ms, 0.5), pct(ms, 0.99))
    return out


def report(server: str, baseline: str | None = None) -> list[str]:
    """Lines of a table: p50 / p99 per kind, for ``server`` and (with the difference) ``baseline``."""
    mine = summary(server)
    base = summary(baseline) if baseline else None
    lines = []
    for kind, (n, p50, p99) in mine.items():
        line = f"  {kind:22} n={n:5d}  {p50:7.2f} / {p99:7.2f} ms"
        if base is not None:
            bn, b50, b99 = base[kind]
            line += f"   baseline n={bn:5d} {b50:7.2f} / {b99:7.2f}   added {p50 - b50:+.2f} / {p99 - b99:+.2f}"
        lines.append(line)
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out")
    parser.add_argument("--summary", nargs="+", metavar="TIMINGS", help="print p50 / p99 of one or two tap files")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.summary:
        print("\n".join(report(*args.summary[:2])))
        return 0
    if not args.out or not args.command:
        parser.error("--out FILE -- COMMAND, or --summary FILE [BASELINE]")
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    with open(args.out, "a", encoding="utf-8", buffering=1) as out:
        tap = Tap(out)
        child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert child.stdin is not None and child.stdout is not None
        up = threading.Thread(target=pump, args=(sys.stdin.buffer, child.stdin, tap.from_editor), daemon=True)
        up.start()
        pump(child.stdout, sys.stdout.buffer, tap.from_server)
        return child.wait()


if __name__ == "__main__":
    code = main()
    # Not sys.exit: the editor's side is a daemon thread blocked reading stdin, whose
    # buffer lock the interpreter's shutdown would wait for (and abort on).
    os._exit(code)
