"""The user-scope rows of the index packed into bytes, and the row layout they share.

A row of :mod:`._index` is a small list (see the ``R_*`` offsets); a rule key
not used lately keeps its rows packed here, about 63 bytes a pattern instead
of about 350, and ranking reads them without touching the disk.
"""

from __future__ import annotations

import struct
from collections.abc import ItemsView, Iterator, Mapping
from typing import Any

from ._model import COUNT_KINDS

R_FIRST = len(COUNT_KINDS)
R_LAST = R_FIRST + 1
R_WS = R_FIRST + 2
R_CTX = R_FIRST + 3
R_BODY = R_FIRST + 4
"""Row layout: seven counts, first seen, last seen, workspaces, context, and the pattern:
canonical JSON until first needed, then the parsed :class:`Pattern` (None for actions
of the user scope, which ranking never needs in full)."""

Row = list[Any]


_PACKED = struct.Struct("<7i2diIB")
"""A packed row: seven counts, first and last seen, workspaces, context id, has a shape."""
FP_BYTES = 10
"""A fingerprint (20 hex digits) as bytes."""


class PackedBucket(Mapping[str, Row]):
    """The user-scope rows of one rule key in two bytes objects, fingerprints sorted.

    Read-only. A row read from it is a fresh list whose pattern is ``""`` (a learned
    fix not read yet) or None, as in a lazily loaded key.
    """

    __slots__ = ("_contexts", "_fps", "_recs", "shapes")

    def __init__(self, fps: bytes, recs: bytes, contexts: list[tuple[str, ...]], shapes: bool) -> None:
        self._fps = fps
        self._recs = recs
        self._contexts = contexts
        self.shapes = shapes
        """Whether any row is a learned fix."""

    @classmethod
    def pack(
        cls, bucket: Mapping[str, Row], context_id: dict[tuple[str, ...], int], contexts: list[tuple[str, ...]]
    ) -> PackedBucket | None:
        """Pack ``bucket``; None if a row does not fit (a foreign fingerprint, a huge count)."""
        fps: list[bytes] = []
        recs: list[bytes] = []
        shapes = False
        try:
            for fp, row in sorted(bucket.items()):
                raw = bytes.fromhex(fp)
                if len(raw) != FP_BYTES:
                    return None
                ctx = row[R_CTX]
                cid = context_id.get(ctx)
                if cid is None:
                    cid = context_id[ctx] = len(contexts)
                    contexts.append(ctx)
                fps.append(raw)
                shapes = shapes or row[R_BODY] is not None
                recs.append(
                    _PACKED.pack(*row[:R_FIRST], row[R_FIRST], row[R_LAST], row[R_WS], cid, row[R_BODY] is not None)
                )
        except (ValueError, struct.error):
            return None
        return cls(b"".join(fps), b"".join(recs), contexts, shapes)

    def _find(self, fp: object) -> int:
        if not isinstance(fp, str) or len(fp) != 2 * FP_BYTES:
            return -1
        try:
            key = bytes.fromhex(fp)
        except ValueError:
            return -1
        fps, lo, hi = self._fps, 0, len(self._fps) // FP_BYTES
        while lo < hi:
            mid = (lo + hi) // 2
            if fps[mid * FP_BYTES : (mid + 1) * FP_BYTES] < key:
                lo = mid + 1
            else:
                hi = mid
        return lo if fps[lo * FP_BYTES : (lo + 1) * FP_BYTES] == key else -1

    def _row(self, i: int) -> Row:
        *counts, first, last, ws, cid, shape = _PACKED.unpack_from(self._recs, i * _PACKED.size)
        return [*counts, first, last, ws, self._contexts[cid], "" if shape else None]

    def __getitem__(self, fp: str) -> Row:
        i = self._find(fp)
        if i < 0:
            raise KeyError(fp)
        return self._row(i)

    def __contains__(self, fp: object) -> bool:
        return self._find(fp) >= 0

    def __iter__(self) -> Iterator[str]:
        fps = self._fps
        for i in range(len(self)):
            yield fps[i * FP_BYTES : (i + 1) * FP_BYTES].hex()

    def __len__(self) -> int:
        return len(self._fps) // FP_BYTES

    def items(self) -> ItemsView[str, Row]:
        """Every row (unpacked)."""
        return ItemsView(self.unpack())

    def unpack(self) -> dict[str, Row]:
        """The rows as a dict of lists."""
        return {fp: self._row(i) for i, fp in enumerate(self)}

    def nbytes(self) -> int:
        """Bytes held."""
        return len(self._fps) + len(self._recs)
