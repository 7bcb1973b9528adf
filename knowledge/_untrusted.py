"""Reading a file fixlore did not write: an import, a workspace's ``patterns.json``.

Whatever such a file holds, the answer is its bytes or :class:`InvalidImport`
naming what was wrong (never the file's text), and nothing blocks:

* only a regular file is read (a symlink is followed to what it names): a FIFO,
  a device such as ``/dev/zero``, a socket or a directory is refused without a
  read; the file is opened non-blocking, so opening a FIFO cannot wait for a writer;
* the size is read (``fstat``) before the content and reading stops one byte
  past the cap, so a file that grows while read is refused too;
* the JSON parser refuses duplicate keys (``{"version": 2, "version": 1}``
  would otherwise keep the last), integers and decimals longer than any value
  the format has, ``NaN``/``Infinity`` (not JSON), and nesting deeper than the
  parser's recursion allows; the schema check that follows allows only the
  format's own depth (objects and lists six levels deep).
"""

from __future__ import annotations

import json
import os
import stat
import unicodedata
from pathlib import Path
from typing import Any

from ._model import InvalidImport

MAX_NUMBER_CHARS = 40
"""The longest integer or decimal literal read (a count has at most 10 digits, a time ~20 characters)."""

_CHUNK = 1 << 20
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def read_regular(path: Path | str, max_bytes: int) -> bytes:
    """The bytes of the regular file at ``path``, at most ``max_bytes`` of them.

    Raises :class:`FileNotFoundError` if nothing is there, :class:`InvalidImport`
    for anything else that is wrong (unreadable, not a regular file, too large).
    """
    try:
        fd = os.open(path, _FLAGS)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise InvalidImport(f"cannot read the file: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InvalidImport("not a regular file (a pipe, device, socket or directory is never read)")
        if st.st_size > max_bytes:
            raise InvalidImport(f"file too large: {st.st_size} bytes, the limit is {max_bytes}")
        chunks: list[bytes] = []
        size = 0
        while chunk := os.read(fd, min(_CHUNK, max_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
            if size > max_bytes:
                raise InvalidImport(f"file too large: it grew past the limit of {max_bytes} bytes while read")
        return b"".join(chunks)
    except OSError as exc:
        raise InvalidImport(f"cannot read the file: {exc.strerror}") from None
    finally:
        os.close(fd)


def loads(data: bytes) -> Any:
    """Parse UTF-8 JSON strictly (see the module docstring); :class:`InvalidImport` on any problem."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidImport(f"not UTF-8 text (byte {exc.start})") from None
    try:
        return json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_int=_int,
            parse_float=_float,
            parse_constant=_constant,
        )
    except json.JSONDecodeError as exc:
        raise InvalidImport(f"malformed JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InvalidImport("JSON nested too deeply (a fixlore knowledge file nests six levels)") from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise InvalidImport("duplicate key in a JSON object (which value counts would be a guess)")
    return d


def _int(s: str) -> int:
    if len(s) > MAX_NUMBER_CHARS:
        raise InvalidImport(f"a number of {len(s)} digits (the limit is {MAX_NUMBER_CHARS})")
    return int(s)


def _float(s: str) -> float:
    if len(s) > MAX_NUMBER_CHARS:
        raise InvalidImport(f"a number of {len(s)} characters (the limit is {MAX_NUMBER_CHARS})")
    return float(s)


def _constant(s: str) -> float:
    raise InvalidImport(f"{s} is not a JSON number")


def check_unicode(v: str) -> bool:
    r"""Whether ``v`` can be written as UTF-8 (JSON's ``\ud800`` escapes make lone surrogates)."""
    if v.isascii():
        return True
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


_UNSAFE = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))


def printable(text: str) -> str:
    r"""``text`` for a terminal: control, format and unassigned characters escaped.

    They are written as ``\x1b``, ``\u202e`` (right-to-left override), ``\u200b``
    (zero width); tab and newline are kept.

    A stored pattern passed the privacy verifier, but nothing checked what it would
    do to a terminal (an escape sequence, a backspace that hides text, a bidi override).
    """
    if text.isascii() and (text.isprintable() or not _has_control(text)):
        return text
    return "".join(_escape(ch) for ch in text)


def _has_control(text: str) -> bool:
    return any(ch not in "\t\n" and not ch.isprintable() for ch in text)


def _escape(ch: str) -> str:
    if ch in "\t\n" or (ch.isprintable() and unicodedata.category(ch) not in _UNSAFE):
        return ch
    n = ord(ch)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"
