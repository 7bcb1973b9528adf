"""Diagnostics: fixlore's own syntax diagnostics and the per-document merge.

Every source of diagnostics for a document (fixlore's syntax check, each
upstream server) puts its latest list into the :class:`DiagnosticsHub` under
its own key, tagged with the document version it was computed for. The
learning loop hears the merge of the lists that belong to the document's
current version (:meth:`DiagnosticsHub.current`); a list that arrives for an
out-of-date version publishes nothing (the editor keeps what it shows until
the source reports for the current text). The editor is shown that merge plus
the list of a source that lags behind, carried over the edits typed since
(:meth:`DiagnosticsHub.shown`), as an editor moves its own markers: with ruff
and a slower server, the slower one's diagnostics would otherwise leave the
editor at each keystroke, when ruff reports, until it caught up.
Diagnostics are kept as raw JSON dicts: an upstream's fields pass unchanged.

Serves: ``textDocument/publishDiagnostics`` (server → client).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import BrokenExecutor, Executor, Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from fixlore.abstraction import Position, TextEdit, TextRange
from fixlore.abstraction.syntax import SyntaxProblem, syntax_problems
from fixlore.lsp.in_flight import InFlight
from fixlore.lsp.learning.timeline import to_code_points
from fixlore.lsp.workers import BACKGROUND_IDLE_S, WorkerProcess

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from fixlore.lsp.ports import Editor

logger = logging.getLogger(__name__)

OWN_SOURCE = "fixlore"
OWN_KEY = "fixlore"


class PublishFollower(Protocol):
    """Who hears of every merged publish (:class:`~fixlore.lsp.dispatch.Dispatch`)."""

    def published(self, uri: str, version: int | None, merged: list[dict[str, Any]]) -> None:
        """The merged diagnostics of ``uri`` for ``version``."""


MAX_EDITS = 256
"""Edits remembered per document to carry a lagging list over; a source further behind is held back."""


@dataclass
class _DocDiagnostics:
    by_source: dict[str, tuple[int | None, list[dict[str, Any]]]] = field(default_factory=dict)
    arrived: dict[str, int | None] = field(default_factory=dict)
    """The document's version when each source's latest list arrived."""
    edits: list[tuple[int | None, int, list[dict[str, Any]] | None]] = field(default_factory=list)
    """Each didChange as (version before, version after, its changes; ``None``: a whole new text), oldest first."""
    seen: int | None = None
    """The document's version when the hub last heard of it (a list arrived, an edit came)."""


class DiagnosticsHub:
    """Keeps each source's diagnostics per document and publishes the merge."""

    def __init__(self, editor: Editor) -> None:
        self._editor = editor
        self._docs: dict[str, _DocDiagnostics] = {}
        self.follower: PublishFollower | None = None
        """Set once by ``create_server`` (the follower is built from the hub's users)."""
        self.publish_enabled = True
        """Off when the editor pulls diagnostics instead (the proxy decides)."""

    def set(self, uri: str, key: str, version: int | None, diagnostics: list[dict[str, Any]]) -> None:
        """Replace ``key``'s diagnostics for ``uri``; publish the merge if the list is for the current version.

        A list for an out-of-date version (the editor typed on while the source
        worked) is kept, so :meth:`source_versions` knows how far the source has
        got, but not published: it is not part of the current version's merge,
        so publishing would only take the source's diagnostics off the editor
        until it catches up (flicker while typing). What the editor shows stays
        until the source reports for the current version. Nor does it replace
        the source's list for the current version (answers out of order): that
        one stays, and the out-of-date one is dropped.
        """
        doc = self._docs.setdefault(uri, _DocDiagnostics())
        current = self._version(uri)
        had = doc.by_source.get(key)
        if superseded(had[0] if had is not None else None, current, version):
            return
        doc.by_source[key] = (version, diagnostics)
        doc.arrived[key] = doc.seen = current
        if version is None or current is None or version == current:
            self.publish(uri)

    def changed(self, uri: str, version: int, changes: Any) -> None:
        """A didChange of ``uri`` to ``version``: its edits, to carry a lagging source's list over them."""
        doc = self._docs.get(uri)
        if doc is None:
            return  # no source has reported: nothing to carry
        ranged = isinstance(changes, list) and all(isinstance(c, dict) and "range" in c for c in changes)
        doc.edits.append((doc.seen, version, changes if ranged else None))
        doc.seen = version
        oldest = min((v for v, _ in doc.by_source.values() if v is not None), default=version)
        while doc.edits and (len(doc.edits) > MAX_EDITS or doc.edits[0][1] <= oldest):
            doc.edits.pop(0)

    def reported(self, uri: str, key: str) -> tuple[int | None, list[dict[str, Any]]] | None:
        """What ``key`` last reported for ``uri``: (version, diagnostics)."""
        doc = self._docs.get(uri)
        return None if doc is None else doc.by_source.get(key)

    def source_versions(self, uri: str) -> dict[str, int | None]:
        """For each source that reported for ``uri``: the version its latest list is for.

        A source that sends no version is taken to have reported for the
        version that was current when its list arrived (``None`` if unknown).
        """
        doc = self._docs.get(uri)
        if doc is None:
            return {}
        return {key: doc.arrived.get(key) if v is None else v for key, (v, _) in doc.by_source.items()}

    def lagging(self, uri: str) -> frozenset[str]:
        """Sources that reported for ``uri`` but not yet for its current version."""
        version = self._version(uri)
        if version is None:
            return frozenset()
        return frozenset(key for key, v in self.source_versions(uri).items() if v is not None and v != version)

    def current_by_source(self, uri: str) -> dict[str, list[dict[str, Any]]]:
        """Like :meth:`current`, per source key (only sources whose list is for the current version)."""
        doc = self._docs.get(uri)
        if doc is None:
            return {}
        version = self._version(uri)
        return {
            key: diagnostics
            for key, (diag_version, diagnostics) in doc.by_source.items()
            if _for_text(diag_version, version)
        }

    def current(self, uri: str, *, exclude: str | None = None) -> list[dict[str, Any]]:
        """The merged diagnostics for the document's current version."""
        doc = self._docs.get(uri)
        if doc is None:
            return []
        version = self._version(uri)
        merged: list[dict[str, Any]] = []
        for key, (diag_version, diagnostics) in doc.by_source.items():
            if key != exclude and _for_text(diag_version, version):  # else: another text's, held back
                merged.extend(diagnostics)
        return merged

    def shown(self, uri: str, current: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """:meth:`current` (given, or read), and each lagging source's list carried over the edits since.

        A list that cannot be carried (a whole-text change since, more edits than
        are remembered, a version the edits do not lead from) is held back, as in
        :meth:`current`.
        """
        merged = self.current(uri) if current is None else list(current)
        doc = self._docs.get(uri)
        editor_doc = self._editor.open_document(uri)
        if doc is None or editor_doc is None or editor_doc.version is None:
            return merged
        version = editor_doc.version
        for diag_version, diagnostics in doc.by_source.values():
            if diag_version is None or diag_version == version or not diagnostics:
                continue  # in the current list already, or nothing to carry
            edits = _edits_since(doc.edits, diag_version, version)
            if edits is not None:
                num_units = editor_doc.position_codec.client_num_units
                merged.extend(carried(d, edits, num_units) for d in diagnostics)
        return merged

    def publish(self, uri: str) -> None:
        """Send the merged diagnostics of ``uri`` to the editor (the follower hears only the current ones)."""
        merged = self.current(uri)
        version = self._version(uri)
        if self.follower is not None:
            try:
                self.follower.published(uri, version, merged)
            except Exception:  # a follower's bug must not cost the user diagnostics
                logger.exception("following a diagnostics publish failed")
        if not self.publish_enabled:
            return
        params: dict[str, Any] = {"uri": uri, "diagnostics": self.shown(uri, merged)}
        if version is not None:
            params["version"] = version
        self._editor.send_raw_notification("textDocument/publishDiagnostics", params)

    def drop_source(self, key: str) -> None:
        """A source went away (an upstream died): its lists go, and the merges are published again.

        Unlike an empty list, a dropped source has not *reported* anything:
        the learning loop does not take its diagnostics for fixed.
        """
        for uri, doc in list(self._docs.items()):
            if doc.by_source.pop(key, None) is not None:
                doc.arrived.pop(key, None)
                self.publish(uri)

    def forget(self, uri: str) -> None:
        """The document closed: clear what the editor shows for it."""
        if self._docs.pop(uri, None) is not None and self.publish_enabled:
            self._editor.send_raw_notification("textDocument/publishDiagnostics", {"uri": uri, "diagnostics": []})

    def _version(self, uri: str) -> int | None:
        doc = self._editor.open_document(uri)
        return None if doc is None else doc.version


def _for_text(diag_version: int | None, version: int | None) -> bool:
    """Whether a list for ``diag_version`` was computed for the text at ``version`` (unknown counts as yes)."""
    return version is None or diag_version is None or diag_version == version


def _edits_since(
    edits: list[tuple[int | None, int, list[dict[str, Any]] | None]], since: int, version: int
) -> list[dict[str, Any]] | None:
    """The ranged changes that lead from version ``since`` to ``version``, in order, or ``None``."""
    for i, (before, _, _) in enumerate(edits):
        if before == since:
            chain = edits[i:]
            if chain[-1][1] != version or any(changes is None for _, _, changes in chain):
                return None
            return [change for _, _, changes in chain for change in changes or ()]
    return None


def carried(
    diagnostic: dict[str, Any], changes: list[dict[str, Any]], num_units: Callable[[str], int]
) -> dict[str, Any]:
    """``diagnostic`` with its range moved over ``changes`` (LSP content changes, applied in order).

    Text inserted before it moves it; an edit inside it keeps it over the edited
    text, as an editor keeps a marker. A copy: the source's own list is left as it came.
    """
    rng = diagnostic.get("range")
    if not isinstance(rng, dict):
        return diagnostic
    try:
        start = (int(rng["start"]["line"]), int(rng["start"]["character"]))
        end = (int(rng["end"]["line"]), int(rng["end"]["character"]))
    except (KeyError, TypeError, ValueError):
        return diagnostic
    for change in changes:
        span = change["range"]
        c0 = (span["start"]["line"], span["start"]["character"])
        c1 = max(c0, (span["end"]["line"], span["end"]["character"]))
        text = change["text"]
        start = _moved(start, c0, c1, text, num_units, at_end=False)
        end = max(start, _moved(end, c0, c1, text, num_units, at_end=True))
    out = dict(diagnostic)
    out["range"] = {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}}
    return out


def _moved(
    pos: tuple[int, int],
    c0: tuple[int, int],
    c1: tuple[int, int],
    text: str,
    num_units: Callable[[str], int],
    *,
    at_end: bool,
) -> tuple[int, int]:
    """Where ``pos`` is once ``[c0, c1)`` is replaced by ``text``.

    Text typed right where a range starts pushes it on (a line inserted above a
    diagnostic moves it down); a range over replaced text keeps covering what
    replaced it.
    """
    if pos < c0 or (pos == c0 < c1 and not at_end):
        return pos
    lines = text.split("\n")
    last = (c0[0] + len(lines) - 1, (c0[1] if len(lines) == 1 else 0) + num_units(lines[-1]))
    if pos <= c1:
        return last if at_end or c0 == c1 else c0
    if pos[0] == c1[0]:
        return (last[0], last[1] + pos[1] - c1[1])
    return (pos[0] + last[0] - c1[0], pos[1])


def superseded(kept: int | None, current: int | None, version: int | None) -> bool:
    """Whether a source's list for ``version`` came after its list for the ``current`` version (out of order)."""
    return version is not None and kept is not None and kept == current != version


PROCESS_CHARS = 4_000
"""From this size a syntax check runs in a child process: parsing holds the GIL, so in a
thread it stalls every request as long as it takes (``compile`` of a 13 KB module took
~10 ms on a loaded machine: a code action asked for right after opening waited for it).
Below it, the check takes well under a millisecond and the pipe would cost more."""
CHILD_START_WAIT_S = 10.0
"""How long a check waits for the syntax-check child to start, at most."""
KEPT_CHECKS = 8
"""Syntax checks remembered by text: the learning loop's settle asks about the very text
the diagnostics check had (or is having) checked, and gets that answer, not a second parse."""


class SyntaxChecker:
    """Debounced syntax diagnostics per document, computed off the event loop."""

    def __init__(
        self, editor: Editor, hub: DiagnosticsHub, threads: Executor, in_flight: InFlight | None = None
    ) -> None:
        self._editor = editor
        self._in_flight = in_flight or InFlight()
        """The code actions being answered: a check's result lands after them (:mod:`~fixlore.lsp.in_flight`)."""
        self._hub = hub
        self._threads = threads
        self._pending: dict[str, asyncio.Task[None]] = {}
        self._process = WorkerProcess("syntax-check", processes=None, idle_stop_s=BACKGROUND_IDLE_S)
        """Started at the first file past :data:`PROCESS_CHARS`, ended when idle, another after one dies."""
        self._background = WorkerProcess(
            "syntax-check-background", processes=None, idle_stop_s=BACKGROUND_IDLE_S, background=True
        )
        """The learning loop's checks (:meth:`problems_in_background`): the same, stepping back for the requests'."""
        self._started: dict[WorkerProcess, asyncio.Future[None]] = {}
        """Each child's future, set once it answered its first job (see :meth:`_child_started`)."""
        self._checks: dict[tuple[str, str], tuple[asyncio.Future[list[SyntaxProblem]], bool]] = {}
        """(language, text) -> its check, running or done, and whether it runs in the background (the last
        :data:`KEPT_CHECKS`)."""

    def close(self) -> None:
        """Stop the child processes, if any was started."""
        self._process.close()
        self._background.close()

    def schedule(self, uri: str, *, immediate: bool = False) -> None:
        """(Re)start the debounce timer of ``uri``."""
        task = self._pending.pop(uri, None)
        if task is not None:
            task.cancel()
        delay = 0.0 if immediate else self._editor.config.diagnostics_debounce_ms / 1000
        self._pending[uri] = asyncio.ensure_future(self._run(uri, delay))

    def cancel(self, uri: str) -> None:
        """Stop any pending check of ``uri``."""
        task = self._pending.pop(uri, None)
        if task is not None:
            task.cancel()

    async def _run(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        doc = self._editor.open_document(uri)
        if doc is None:
            return
        from fixlore.lsp.documents import document_language

        language = document_language(doc)
        if language is None:
            return
        version, text = doc.version, doc.source
        try:
            problems = await self.problems(language, text)
        except BrokenExecutor:  # before RuntimeError (its base): the child died; no diagnostics now, a new child next
            logger.warning("the syntax-check process ended unexpectedly")
            return
        except RuntimeError:  # closed: the session is ending
            return
        await self._in_flight.wait()
        current = self._editor.open_document(uri)
        if current is None or current.version != version:
            return  # the text moved on; a newer check is scheduled
        self._pending.pop(uri, None)
        self._hub.set(uri, OWN_KEY, version, [to_lsp_diagnostic(current, p) for p in problems])

    async def problems(self, language: str, text: str, *, background: bool = False) -> list[SyntaxProblem]:
        """The syntax problems of ``text``, checked once per text however many ask (off the GIL if large).

        ``background``: for the learning loop, whose settles nobody waits for. A
        large text is then checked in a child that steps back for the request
        path (:data:`~fixlore.lsp.workers.BACKGROUND_NICE`): a settle runs as the
        diagnostics of a document just opened arrive (its baseline), beside the
        parse its first lightbulb waits for, and compiling the whole file at the
        same priority took a core from it and from the upstream. A check the
        diagnostics ask for is never left waiting behind a background one.

        Raises what the check raised (:class:`RuntimeError` once closed,
        :class:`BrokenExecutor` when the child died); a failed check is not kept.
        """
        key = (language, text)
        kept = self._checks.get(key)
        check = None if kept is None else kept[0]
        if (
            check is None
            or (check.done() and (check.cancelled() or check.exception() is not None))
            or (not background and kept is not None and kept[1] and not check.done())  # never behind the background
        ):
            check = asyncio.ensure_future(self._check(language, text, background=background))
            self._checks.pop(key, None)
            self._checks[key] = (check, background)
            while len(self._checks) > KEPT_CHECKS:
                del self._checks[next(iter(self._checks))]
        # Shielded: one asker cancelled (the text changed under it) must not cancel the other's.
        return await asyncio.shield(check)

    async def problems_in_background(self, language: str, text: str) -> list[SyntaxProblem]:
        """:meth:`problems` for the learning loop's settles (``background``)."""
        return await self.problems(language, text, background=True)

    async def _check(self, language: str, text: str, *, background: bool) -> list[SyntaxProblem]:
        if len(text) < PROCESS_CHARS:
            return await asyncio.get_running_loop().run_in_executor(self._threads, syntax_problems, language, text)
        process = self._background if background else self._process
        await self._child_started(process)
        return await asyncio.wrap_future(process.submit(syntax_problems, language, text))

    async def _child_started(self, process: WorkerProcess) -> None:
        """Start the child from a thread of its own (a spawn holds the loop ~0.1-0.2 s) and wait for it.

        At most :data:`CHILD_START_WAIT_S`: past that (the session closing under it,
        say), the check is submitted anyway and fails or starts the child as before.
        """
        started = self._started.get(process)
        if started is None:
            loop = asyncio.get_running_loop()
            started = self._started[process] = loop.create_future()

            def loaded(_: Future[None]) -> None:  # on the pool's thread
                loop.call_soon_threadsafe(_settle, started)

            process.start(_child_ready, loaded=loaded)
        try:
            await asyncio.wait_for(asyncio.shield(started), CHILD_START_WAIT_S)
        except TimeoutError:
            pass


def _settle(started: asyncio.Future[None]) -> None:
    if not started.done():
        started.set_result(None)


def _child_ready() -> None:
    """The syntax-check child's first job: importing this module loaded the parsers."""


def to_lsp_diagnostic(doc: TextDocument, problem: SyntaxProblem) -> dict[str, Any]:
    """A syntax problem as a raw LSP diagnostic in the client's position units."""
    return {
        "range": to_lsp_range(doc, problem.range),
        "severity": 1,
        "source": OWN_SOURCE,
        "code": problem.code.value,
        "message": problem.message,
    }


def to_lsp_range(doc: TextDocument, text_range: Any, lines: Sequence[str] | None = None) -> dict[str, Any]:
    r"""A code-point :class:`TextRange` in the client's position encoding (``lines``: the text split at ``\n``)."""
    if lines is None:
        lines = doc.source.split("\n")
    return {
        "start": to_lsp_position(doc, text_range.start.line, text_range.start.character, lines),
        "end": to_lsp_position(doc, text_range.end.line, text_range.end.character, lines),
    }


def to_lsp_position(doc: TextDocument, line: int, character: int, lines: Sequence[str] | None = None) -> dict[str, int]:
    r"""A code-point position in the client's position encoding.

    Lines are the text's split at ``\n``, as the abstraction layer counts them
    (pygls' ``TextDocument.lines`` also breaks at a form feed or U+2028, which
    Python and LSP read as part of a line).
    """
    if lines is None:
        lines = doc.source.split("\n")
    if line >= len(lines):
        return {"line": line, "character": 0}
    prefix = lines[line][:character]
    units = len(prefix) if prefix.isascii() else doc.position_codec.client_num_units(prefix)
    return {"line": line, "character": units}


def from_lsp_edits(
    text: str | Sequence[str], edits: list[dict[str, Any]], num_units: Callable[[str], int]
) -> list[TextEdit]:
    """Raw LSP TextEdits on ``text`` as code-point :class:`TextEdit` s (``num_units``: the client's encoding).

    ``text`` may be given already split into lines (:func:`~fixlore.lsp.learning.timeline.lines_of`).
    """
    lines = text.split("\n") if isinstance(text, str) else text

    def position(pos: dict[str, int]) -> Position:
        line = min(max(int(pos["line"]), 0), len(lines) - 1)
        return Position(line, to_code_points(lines[line], int(pos["character"]), num_units))

    return [
        TextEdit(TextRange(position(e["range"]["start"]), position(e["range"]["end"])), str(e["newText"]))
        for e in edits
    ]
