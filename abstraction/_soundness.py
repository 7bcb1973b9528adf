"""The soundness guard: a learned edit may not drop the user's code that its pattern does not account for.

Two checks, both pure:

* :func:`pattern_unsound`, on a pattern alone (at extraction, and again before
  instantiating a stored pattern): the fix may delete a user name only when
  the diagnostic names it (``$1`` in "`$1` imported but unused": removing it
  *is* the fix); a string or number literal only together with the whole
  unit that holds such a name (``$1 = $S`` for an unused variable). ``$S % $1`` -> ``$S`` (an f-string that
  abstraction could not see into) is refused here: it would drop ``$1``.
* :func:`edit_unsound`, on one instantiation: every user name of the
  replaced region occurs at least as often in the result, unless its
  placeholder is one the pattern may delete. This catches what the shape
  cannot show (a binding that renders to less than it matched).

Both return a reason (no user text) or ``None``. The checks that parse a
Python result (roles kept, names bound, bindings still used) are in
:mod:`fixlore.abstraction._python_result`.
"""

from __future__ import annotations

import difflib
import functools
import keyword
import re
from collections import Counter
from collections.abc import Callable, Set

from fixlore.abstraction._pattern import Pattern
from fixlore.abstraction._placeholders import (
    IDENTIFIER,
    NUMBER,
    PLACEHOLDER,
    STRING,
    STRING_QUOTE,
    is_numbered,
    is_string,
    quote_of,
    string_prefix,
    tokenizer,
)
from fixlore.abstraction._python_result import BUILTINS, bound_names

_PLACEHOLDERS = tokenizer(r"\S+")
_IN_TEXT = re.compile(PLACEHOLDER)
_DEFINING = frozenset({"import", "from", "def", "class", "async", "@"})


def _counts(text: str) -> Counter[str]:
    """Tokens of shape text; a string of any prefix (``u$S``, ``r$S``) counts as a string."""
    return Counter(STRING if t.endswith(STRING) else t for t in (m.group() for m in _PLACEHOLDERS.finditer(text)))


def deletable(pattern: Pattern) -> frozenset[str]:
    """Placeholders the pattern may delete: the ones its diagnostic's message names."""
    return frozenset(m.group() for m in _IN_TEXT.finditer(pattern.signature.message) if is_numbered(m.group()))


AT_DIAGNOSTIC = ("drops", "at_diagnostic")
"""``Pattern.extra`` mark: the names the fix deletes were the diagnostic's whole subject.

Set at extraction when every deleted user name lay inside the diagnostic's
range (a duplicate list item, an extra word); instantiation then deletes a
name only where it lies inside the new diagnostic's range."""


def dropped(pattern: Pattern) -> frozenset[str]:
    """Numbered placeholders the fix deletes although the message does not name them.

    Empty when the fix deletes the definition of the name the message is about
    (the whole unit, see :func:`_deletes_subject`): everything in it may go.
    """
    shape = pattern.shape
    if shape is None or not shape.before.strip() or _deletes_subject(pattern):
        return frozenset()
    before, after = _counts(shape.before), _counts(shape.after)
    allowed = deletable(pattern)
    return frozenset(t for t, n in before.items() if is_numbered(t) and after[t] < n and t not in allowed)


def _renames_subject(pattern: Pattern) -> bool:
    """The fix puts a fixed name where the name the diagnostic is about was.

    Learned from one ``unicode`` -> ``str``, it would turn every undefined name
    into ``str``: one instance says nothing about other names.
    """
    shape = pattern.shape
    if shape is None:
        return False
    before, after = _counts_order(shape.before), _counts_order(shape.after)
    return bool(swapped_for_a_name(before, after, deletable(pattern), keep=frozenset({"_"})))


def swapped_for_a_name(
    before: list[str], after: list[str], subjects: Set[str], keep: Set[str] = frozenset()
) -> frozenset[str]:
    """The ``subjects`` a fix replaces by a fixed name (one not in ``keep``), shape tokens before and after.

    A placeholder in the after-side is no fixed name: ``$1`` -> ``self . $1``
    keeps the name, ``unicode`` -> ``str`` does not.
    """
    return replaced_by(before, after, subjects, lambda new: any(IDENTIFIER.fullmatch(t) and t not in keep for t in new))


def replaced_by(
    before: list[str], after: list[str], subjects: Set[str], foreign: Callable[[list[str]], bool]
) -> frozenset[str]:
    """The ``subjects`` a fix replaces (shape tokens before and after) by tokens ``foreign`` says are not theirs."""
    out: set[str] = set()
    matcher = difflib.SequenceMatcher(a=before, b=after, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "replace":
            continue
        hit = subjects & set(before[i1:i2])
        if hit and foreign(after[j1:j2]):
            out |= hit
    return frozenset(out)


def _renamed_kept_names(pattern: Pattern) -> frozenset[str]:
    """The names the fix keeps literally that it replaces by a name the message does not name.

    ``xrange`` -> ``range`` for "Undefined name `xrange`" is a port's rule;
    ``object`` -> ``property`` for "Class `$1` inherits from `object`" was one
    class's redesign, and ``int`` -> ``Optional[float]`` for "PEP 484 prohibits
    implicit `Optional`" a change of type made along with the fix. One example
    cannot tell them apart in general; in Python :func:`renames_a_working_name`
    can, where the fix applies. A replacement the message names (``IOError`` ->
    ``OSError`` for "Replace aliased errors with `OSError`") is the fix itself.
    """
    shape = pattern.shape
    if shape is None:
        return frozenset()
    before, after = _counts_order(shape.before), _counts_order(shape.after)
    kept = frozenset(t for t in before if IDENTIFIER.fullmatch(t) and not keyword.iskeyword(t))
    named = frozenset(
        word for quoted in _BACKTICKED.findall(pattern.signature.message) for word in IDENTIFIER.findall(quoted)
    )
    keep = named | frozenset(keyword.kwlist)
    if pattern.signature.language != "python":
        kept &= named  # other languages: only the name the diagnostic is about (no builtins to tell by)
    return swapped_for_a_name(before, after, kept, keep=keep)


def renames_a_working_name(pattern: Pattern, seen: int, text: str) -> str | None:
    """Why a Python fix seen once would replace a name that works in ``text`` by another, or ``None``.

    Replacing a name that is not defined (``xrange`` in Python 3) repairs code
    that cannot run there, so one example of it is enough; replacing one that
    resolves (a builtin such as ``object``, or a name the file binds) changes
    what working code does, and needs the user's habit (:data:`EVIDENCE`). So
    does an attribute the file reads (``d.keys()`` -> ``d.iterkeys()``, learned
    once from a Python 2 file, would call a method Python 3 dicts do not have):
    no diagnostic says an attribute is missing.
    """
    if seen >= EVIDENCE:
        return None
    renamed = _renamed_kept_names(pattern)
    if not renamed:
        return None
    if renamed & BUILTINS or renamed & bound_names(text) or any(_read_as_attribute(name, text) for name in renamed):
        return "replaces a name that works, on one example's word"
    return None


def _read_as_attribute(name: str, text: str) -> bool:
    """Whether ``text`` reads ``name`` as an attribute somewhere (``.name``)."""
    return _attribute_of(name).search(text) is not None


@functools.lru_cache(maxsize=1024)
def _attribute_of(name: str) -> re.Pattern[str]:
    return re.compile(r"\.[ \t]*" + re.escape(name) + r"\b")


_BACKTICKED = re.compile(r"`([^`]+)`")


_IMPORT_LINE = re.compile(r"^\s*(?:from\s+(?P<module>\S+(?:\s+\.)*)\s+)?import\s+(?P<names>.+)$")


def _imports_unknown(before: str, after: str) -> str | None:
    """An import a Python fix adds whose module or name is a user's word: nothing says it exists.

    Learned from ``import attr`` for "Undefined name `attr`", ``import $1``
    would add ``import unicode`` for every undefined name; ``from . import $1``
    (or ``$1`` joined to ``from .models import $2``) a name the sibling module
    may not have. A standard-library import is a pattern over classed holes
    (``import $H1``, ``from $H2 import $H1``), bound only to names the standard
    library has, and stays sound; so does a name joined to an import from a
    module the pattern names literally (a standard-library one: kept words are).
    """
    had = Counter(w for line in before.splitlines() for w in _imported_words(line, added_only=False))
    for line in after.splitlines():
        for word in _imported_words(line, added_only=bool(before.strip())):
            if had[word] > 0:
                had[word] -= 1
            else:
                return "imports a name nothing says exists"
    return None


def _imported_words(line: str, *, added_only: bool) -> list[str]:
    """The numbered placeholders of an import line (with ``added_only``: only if its module is the user's)."""
    match = _IMPORT_LINE.match(line)
    if match is None:
        return []
    module = (match.group("module") or "").split()
    if added_only and module and not (any(is_numbered(w) for w in module) or module[0].startswith(".")):
        return []
    names = re.sub(r"[(),]", " ", match.group("names")).split()
    return [w for w in module + names if is_numbered(w)]


EVIDENCE = 2
"""Times a fix must have been made (by hand or accepted) before a deletion it makes counts as its habit."""


def pattern_unsound(pattern: Pattern, seen: int = 1) -> str | None:
    """Why ``pattern`` would drop user code it does not account for, or ``None`` (see :func:`_pattern_unsound`).

    The answer depends only on the pattern and on whether ``seen`` reaches
    :data:`EVIDENCE`, so it is remembered: every pattern is asked once per
    diagnostic it is tried on, and the question costs a scan of its shape.
    """
    return _pattern_unsound(pattern, seen >= EVIDENCE)


@functools.lru_cache(maxsize=8192)
def _pattern_unsound(pattern: Pattern, habit: bool) -> str | None:
    """Why ``pattern`` would drop user code it does not account for, or ``None``.

    ``habit``: the user made this very fix :data:`EVIDENCE` times or more. Once is an example, not
    a habit: a fix that deletes names the diagnostic does not name (the
    arguments of ``super($1, self)``) or literals is offered only after
    :data:`EVIDENCE` times, unless the names were exactly what the diagnostic
    pointed at (:data:`AT_DIAGNOSTIC`, checked again where it applies); so is
    one that deletes a ``return``, ``raise``, ``yield``, ``break``, ``continue``
    or ``await`` (what the code does next). A fix that puts a fixed name where
    the diagnostic's name was is never sound.
    """
    shape = pattern.shape
    if shape is None:
        return None
    unknown = _imports_unknown(shape.before, shape.after) if pattern.signature.language == "python" else None
    if unknown or not shape.before.strip():
        return unknown  # a pure insertion is sound unless it imports an unknown name
    if _renames_subject(pattern):
        return "replaces the diagnostic's name with a fixed one"
    if _literal_made_constant(shape.before, shape.after):
        return "replaces a literal with a constant"
    if _texts(shape.after) > _texts(shape.before):
        return "brings in text of its own"
    if habit:
        return None
    if pattern.signature.language == "python" and _byte_strings(shape.before) != _byte_strings(shape.after):
        return "turns text into bytes or back on one example's word"
    flow = _control_flow_gone(shape.before, shape.after)
    if flow:
        return f"drops a `{flow}` on one example's word"
    if _renamed_kept_names(pattern) and pattern.signature.language != "python":
        return "replaces the name the diagnostic is about on one example's word"
    gone = dropped(pattern)
    if gone and AT_DIAGNOSTIC not in pattern.extra:
        return f"drops a name ({min(gone)}) on one example's word"
    before, after = _counts(shape.before), _counts(shape.after)
    named_gone = any(is_numbered(t) and after[t] < n for t, n in before.items())
    literal_gone = any(t in (STRING, NUMBER) and after[t] < n for t, n in before.items())
    # A literal may go only with the unit that holds what the diagnostic is about
    # (``$1 = $S`` for "`$1` is assigned to but never used").
    if literal_gone and not (named_gone and not shape.after.strip()):
        return "drops a literal on one example's word"
    return None


def _texts(shape: str) -> int:
    """How many strings, and pieces of a structured string's text, a shape holds (each ``$S``, prefixed or not).

    A fix whose after-shape holds more than its before-shape brings in text the
    user typed, which no pattern keeps: instantiated, the k-th text is filled
    with the user's k-th, and the one left over is another string of the unit
    (``'cannot read %s' % f`` -> ``'cannot read %s: %s' % (f, err)`` learned,
    applied where a later handler said ``'error when loading: %s'``: that text,
    moved into the first message).
    """
    return sum(map(is_string, shape.split()))


def _literal_made_constant(before: str, after: str) -> bool:
    """A string or number of the user's gone, and ``None`` (``True``, ``null``, ...) come in: data made a constant.

    ``u'5.0,-7.0'`` -> ``None``, made twice in a project's tests when what they
    expected changed, is no fix of the ``u`` prefix anywhere else; however often
    it was made, the value the code had is thrown away for one the pattern chose.
    A default ``[]`` made ``None`` (B006) replaces no string or number.
    """
    had, has = _counts(before), _counts(after)
    if not any(has[t] < had[t] for t in (STRING, NUMBER)):
        return False
    return any(has[t] > had[t] for t in _VALUES)


def _byte_strings(shape: str) -> int:
    """How many of a Python shape's strings are bytes (``b$S``, ``rb$S``, ``b" $S %s "``): their prefix is their type.

    ``"<%s>" % x`` -> ``b"<%s>" % x``, learned once from a port to Python 3
    that made one message bytes, stops UP031 (bytes are not f-strings) and makes
    every other message bytes, which `"%s" % name` then fails on.
    """
    return sum("b" in _prefix(tok).lower() for tok in shape.split())


def string_prefixes(shape: str) -> list[str]:
    """The prefixes of a Python shape's strings, sorted (``r$S``, ``f" $S "``): changing them may reread one."""
    return sorted(_prefix(tok).lower() for tok in shape.split() if is_string(tok) or STRING_QUOTE.match(tok))


def _prefix(token: str) -> str:
    """The prefix of a whole string (``u$S``) or of a structured string's quote (``rb"``), else ``""``."""
    if is_string(token):
        return string_prefix(token)
    if STRING_QUOTE.match(token):
        return token[: len(token) - len(quote_of(token))]
    return ""


_CONTROL_FLOW = ("return", "raise", "yield", "break", "continue", "await")
"""Keywords that decide where a program goes next: a fix that deletes one changes what the code does."""


def _control_flow_gone(before: str, after: str) -> str | None:
    """The control-flow keyword a shape has fewer of after than before (``return $1`` deleted), if any."""
    b, a = _counts(before), _counts(after)
    return next((word for word in _CONTROL_FLOW if a[word] < b[word]), None)


_VALUES = frozenset({"None", "True", "False", "null", "undefined", "true", "false", "nil"})
_JUMPS = frozenset({*_CONTROL_FLOW, "throw"})


@functools.lru_cache(maxsize=8192)
def brings_values(before: str, after: str) -> str | None:
    """A value or a jump a fix's shape puts into the code that was not there, or ``None``.

    The mirror of :func:`_control_flow_gone`: ``pass`` -> ``return True``,
    ``getattr($1, $S)`` -> ``getattr($1, $S, None)``, ``stacklevel = 2``: the fix
    chooses what the program computes or where it goes, which the diagnostic
    did not ask for in those words. Made by hand twice it is the user's habit
    and may rank first, but an editor must not apply it unasked (as ruff leaves
    its unsafe fixes unmarked): such a learned fix is never preferred. Values
    moved (``x == None`` -> ``x is None``) are not brought in. Shape text; a
    number is ``$N`` or digits a fix keeps.
    """
    had, has = _counts(before), _counts(after)
    for token, n in has.items():
        if n > had[token] and (token in _VALUES or token in _JUMPS or token == NUMBER or token.isdigit()):
            return token
    return None


def never_sound(pattern: Pattern) -> str | None:
    """Why no amount of evidence makes ``pattern`` sound (extraction refuses it), or ``None``."""
    return pattern_unsound(pattern, seen=EVIDENCE)


def _deletes_subject(pattern: Pattern) -> bool:
    """The whole unit goes, and it is the definition of the name the diagnostic is about.

    ``$1 = $2 ( $3 )`` deleted for "Local variable `$1` is assigned to but
    never used": the unit's first name is the message's. Deleting a statement
    that only *uses* that name (``$2 = $1`` for "Undefined name `$1`") is not.
    """
    shape = pattern.shape
    if shape is None or shape.after.strip():
        return False
    toks = _counts_order(shape.before)
    if not toks:
        return False
    allowed = deletable(pattern)
    if toks[0] in _DEFINING:  # ``import $1``, ``def $1 (``, ``class $1``
        return any(t in allowed for t in toks)
    # ``$1 = ...``, ``$1 : T = ...``, ``$1 += ...``: an assignment to the subject
    return len(toks) > 1 and toks[0] in allowed and (toks[1] in (":", "=") or toks[1].endswith("="))


def _counts_order(text: str) -> list[str]:
    return [m.group() for m in _PLACEHOLDERS.finditer(text)]


def within(spans: list[tuple[int, int]], d0: int, d1: int) -> bool:
    """Whether every span lies inside the diagnostic's range ``[d0, d1]``."""
    return all(d0 <= start and end <= max(d1, d0 + 1) for start, end in spans)


def subject_of_diagnostic(
    matched: list[tuple[str, int, int]], gone: frozenset[str], data: bytes, d0: int, d1: int
) -> bool:
    """Whether the deleted names were all the diagnostic's range held, punctuation aside.

    ``matched`` holds each pattern token with the span of the code it matched;
    ``data`` is the text's bytes. A range over ``, bar`` whose ``bar`` goes:
    yes. A range over ``"{}".format(value)`` that keeps the call: no.
    """
    deleted = sorted({(s, e) for p, s, e in matched if p in gone})
    if not deleted or not within(deleted, d0, d1):
        return False
    left = bytearray(data[d0:d1])
    for s, e in deleted:
        left[s - d0 : e - d0] = b" " * (e - s)
    return not _WORD_BYTES.search(bytes(left))


_WORD_BYTES = re.compile(rb"\w")


def edit_unsound(binding: dict[str, str], allowed: frozenset[str], old: str, new: str) -> str | None:
    """Why replacing ``old`` by ``new`` drops a bound user name, or ``None``.

    ``binding`` maps placeholders to the user's names; ``allowed`` are the
    placeholders the pattern may delete. Words are counted in the whole text
    of the region, strings included: a name moved into an f-string is kept.
    """
    if not new.strip():
        return None
    old_words, new_words = Counter(IDENTIFIER.findall(old)), Counter(IDENTIFIER.findall(new))
    for placeholder, name in binding.items():
        if not is_numbered(placeholder) or placeholder in allowed:
            continue
        if new_words[name] < old_words[name]:
            return f"drops a name ({placeholder})"
    return None
