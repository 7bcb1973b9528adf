"""Export and import of the user store (the file format is :mod:`._exchange`'s)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

from fixlore.abstraction import Pattern

from ._delta import Batch, PatternDelta
from ._exchange import Entry, Verifier, parse_entries, record_line
from ._model import COUNT_KINDS, Counts, ExportFilters, ImportReport, InvalidImport
from ._shared import SharedStore
from ._tiers import Tiers
from ._untrusted import read_regular
from ._verify import shareable

logger = logging.getLogger(__name__)

EXPORT_PAGE = 2000
"""Rows read per query while exporting (the store stays usable in between)."""
_N = len(COUNT_KINDS)


def _passes_counts(c: Counts, workspaces: int, f: ExportFilters) -> bool:
    """Whether a record passes the export filters (the language is filtered in SQL)."""
    if c.uses < f.min_uses or workspaces < f.min_workspaces:
        return False
    verified = c.succeeded + c.failed
    if f.min_success > 0 and (verified == 0 or c.succeeded / verified < f.min_success):
        return False
    return True


def export_lines(shared: SharedStore, verifier: Verifier, filters: ExportFilters, tally: list[int]) -> Iterator[str]:
    """Record lines of the user store, by fingerprint, a page at a time (``tally[0]``: how many).

    The stored body is the pattern's canonical JSON, so it is copied into the
    line as is; it is still parsed, to go through the privacy verifier again.
    """
    refused = 0
    after = ""
    while True:
        with shared.lock:
            db = shared.ro()
            page = [] if db is None else db.export_page(language=filters.language, after=after, limit=EXPORT_PAGE)
        if not page:
            break
        after = page[-1][0]
        for fp, body, *rest in page:
            counts = Counts(*rest[:_N])
            first, last, workspaces = rest[_N:]
            if not _passes_counts(counts, workspaces, filters):
                continue
            pattern = Pattern.from_json(body)
            if not verifier(pattern)[0] or not shareable(pattern):
                refused += 1
                continue
            tally[0] += 1
            yield record_line(fp, body, counts.as_tuple(), first, last, workspaces)
    if refused:
        logger.warning(
            "export skipped %d patterns the privacy verifier refused or an import would"
            " (a language, tool, code or action kind fixlore does not know)",
            refused,
        )


def import_file(shared: SharedStore, tiers: Tiers, verifier: Verifier, path: Path, max_bytes: int) -> ImportReport:
    """Merge an export file into the user store: all of it, or nothing (see ``Knowledge.import_file``)."""
    try:
        data = read_regular(path, max_bytes)
    except OSError as exc:
        raise InvalidImport(f"cannot read the file: {exc.strerror}") from None
    entries = parse_entries(data, verifier, max_bytes=max_bytes)
    db = shared.rw()
    with shared.lock:
        seen = db.imported_digests([e.digest for e in entries])
    fresh = [e for e in entries if e.digest not in seen]
    batch = _batch(fresh)
    with shared.lock:
        with db.write_tx():
            # Checked again inside the transaction: another process may have imported it meanwhile.
            again = db.imported_digests([e.digest for e in fresh])
            if again:
                for e in fresh:
                    if e.digest in again:
                        batch.patterns.pop(e.fingerprint, None)
                fresh = [e for e in fresh if e.digest not in again]
            existing = db.count_existing(batch.patterns)
            db.apply_in_tx(batch)
            db.mark_imported([(e.digest, e.fingerprint, e.record.counts.as_tuple()) for e in fresh])
            imported = db.imported_counts()
        # Still under the shared lock: a cold rule key being loaded sees this import
        # either in its snapshot or here, never both.
        tiers.add_imported(batch, imported)
    unchanged = len(entries) - len(fresh)
    logger.info("imported %d patterns (%d merged, %d imported before)", len(fresh) - existing, existing, unchanged)
    return ImportReport(imported=len(fresh) - existing, merged=existing, unchanged=unchanged)


def _batch(entries: list[Entry]) -> Batch:
    batch = Batch()
    for e in entries:
        r = e.record
        p = r.pattern
        batch.patterns[e.fingerprint] = PatternDelta(
            e.fingerprint,
            p.signature.rule_key,
            p.category.value,
            p.shape is not None,
            "/".join(p.context),
            e.body,
            counts=list(r.counts.as_tuple()),
            first_seen=r.first_seen,
            last_seen=r.last_seen,
            set_workspaces=r.workspaces,
        )
    return batch
