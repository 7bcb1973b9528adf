r"""Fixes learned as a rewrite rather than as a shape: one pattern, whatever the code at hand.

A shape learned token by token fixes one arity and one operand structure; some
fixes users make by hand are the same mechanical rewrite every time, of code of
any size: ``"…%s" % x`` -> ``f"…{x}"`` and ``"…{}".format(x)`` -> ``f"…{x}"``
(:mod:`~fixlore.abstraction._formats`), and ``log.info("…%s" % x)`` ->
``log.info("…%s", x)`` (:mod:`~fixlore.abstraction._logging_args`);
``raise X(…)`` -> ``raise X(…) from None``, ``from err`` (the name the enclosing
``except … as err`` binds) or, naming the exception, ``except E as exc:`` …
``from exc`` (B904); ``a == b`` -> ``a is b`` and ``type(a) == B`` ->
``isinstance(a, B)`` (E721); ``x: T = None`` -> ``x: Optional[T] = None`` or
``typing.Optional[T]``, as the file imports it (RUF013); ``warn(…)`` ->
``warn(…, stacklevel=2)`` in the call's own layout (B028), by
:mod:`~fixlore.abstraction._expressions`; an unused import dropped
from its statement or made an explicit re-export (``X as X``, F401), and the
earlier, unused import a redefinition's message points at (F811), by
:mod:`~fixlore.abstraction._bindings`; an undefined name -> the bound name it is
one typo of (``isisntance`` -> ``isinstance``, F821), by
:mod:`~fixlore.abstraction._typos`; an undefined Python 2 builtin -> its Python 3
name (``unicode`` -> ``str``, F821), by :mod:`~fixlore.abstraction._py2`; a forward
reference in an annotation -> the name quoted (``task: Task`` above ``class Task`` ->
``task: "Task"``, F821), by :mod:`~fixlore.abstraction._forward_refs`; an undefined name -> the import the
project's other files bind it with (``from six.moves import xrange``, read by the
server from the workspace and passed in :attr:`Site.imports`; F821); an ambiguous
name renamed through its scope after what it holds (``for l in lines`` -> ``line``,
``l = Locale.parse(…)`` -> ``locale``, E741), by :mod:`~fixlore.abstraction._renames`
(one edit from the variable's first use to its last); ``self`` undefined in a
method -> added as its first parameter (``def get(key)`` -> ``def get(self, key)``,
F821), by :mod:`~fixlore.abstraction._methods`; the pattern of a call of ``re`` made raw where it
holds escapes such as ``\n`` (``re.compile("\n\d+")`` -> ``re.compile(r"\n\d+")``, W605), by
:mod:`~fixlore.abstraction._literals`. At extraction, when the human's fixed
file is one of these rewrites of the code at the diagnostic (layout aside), the
pattern records the rewrite's name (``extra`` ``("rewrite", name)``, a word of
this module: nothing of the user's code); instantiation computes the rewrite on
the code at hand. Each rewrite carries the user's code over whole or not at all.
"""

from __future__ import annotations

import functools
import io
import re
import tokenize
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from fixlore.abstraction._bindings import Change, drop_at, drop_named, re_export_at
from fixlore.abstraction._expressions import eq_to_is, optional, stacklevel, type_eq_isinstance, typing_optional
from fixlore.abstraction._formats import format_rewrite, percent_rewrite
from fixlore.abstraction._forward_refs import quoted_forward_ref
from fixlore.abstraction._import_lines import statement_binds, top_level_imports, without_imports
from fixlore.abstraction._imports import imports_its_own, is_stdlib_import, place_import
from fixlore.abstraction._literals import drop_u_prefixes, escape_backslash, regex_raw
from fixlore.abstraction._logging_args import log_args
from fixlore.abstraction._methods import instance_parameter
from fixlore.abstraction._pattern import SPANS_DIAGNOSTIC, Anchor, EditShape, FixCategory, Pattern, Signature
from fixlore.abstraction._py2 import COMPAT_NAMES, PY2_MEANS_OTHERWISE, PY3_NAMES, compat_name, py3_name, still_python_2
from fixlore.abstraction._raises import CAUGHT_NAMES, from_caught, from_new, from_none
from fixlore.abstraction._renames import ITEM, MADE, rename_ambiguous, renamed_to
from fixlore.abstraction._templates import quotes
from fixlore.abstraction._tree import parsed
from fixlore.abstraction._typos import meant_name


@dataclass(frozen=True, slots=True)
class Site:
    """Where a rewrite is asked for: the file, the diagnostic's range in it, its message."""

    text: str
    start: int
    end: int
    message: str
    imports: Mapping[str, str] | None = None
    """How the workspace's other files import names: name -> one-name import statement (memory only)."""


Rewrite = Callable[[Site], Change | None]
"""A site -> ``(start, end, new)``, the one edit of the fix, or ``None`` if the rewrite does not apply."""


def _in_place(rewrite: Callable[[str, int, int], str | None]) -> Rewrite:
    """A rewrite of the diagnostic's own range: ``(text, start, end)`` -> its new text."""

    def at(site: Site) -> Change | None:
        new = rewrite(site.text, site.start, site.end)
        return None if new is None else (site.start, site.end, new)

    return at


def _whole(rewrite: Callable[[str, int, int], Change | None]) -> Rewrite:
    """A rewrite that answers its own edit from ``(text, start, end)`` (:func:`~._expressions.stacklevel`)."""
    return lambda site: rewrite(site.text, site.start, site.end)


def _literal(rewrite: Callable[[str, int, str], Change | None]) -> Rewrite:
    """A rewrite of a string literal (:mod:`~fixlore.abstraction._literals`): ``(text, start, message)``."""
    return lambda site: rewrite(site.text, site.start, site.message)


REWRITE = "rewrite"
"""``Pattern.extra`` key; its value names one of :data:`REWRITES`."""


def _percent(*, integers: bool, plain_d: bool = False) -> Rewrite:
    """UP031, one of three rewrites (:func:`~fixlore.abstraction._formats.percent_rewrite`)."""
    return lambda site: percent_rewrite(site.text, site.start, site.end, integers=integers, plain_d=plain_d)


def _drop_unused(site: Site) -> Change | None:
    """F401: the import at the diagnostic loses the name it is about."""
    return drop_at(site.text, site.start)


def _re_export(site: Site) -> Change | None:
    """F401 in a package's ``__init__``: the unused import made an explicit re-export (``X as X``)."""
    return re_export_at(site.text, site.start)


_REDEFINED = re.compile(r"`([^`]+)` from line (\d+)\b")


def _drop_redefined(site: Site) -> Change | None:
    """F811: the earlier, unused import the message points at ("`x` from line 3") loses ``x``."""
    found = _REDEFINED.search(site.message)
    if found is None:
        return None
    return drop_named(site.text, int(found.group(2)) - 1, found.group(1))


def _unless_imported(rewrite: Rewrite) -> Rewrite:
    """``rewrite`` of an undefined name, except a name the project imports elsewhere (that import is meant).

    ``xrange`` where the project writes ``from six.moves import xrange`` is no typo nor Python 2's builtin.
    """
    return lambda site: None if site.imports and site.text[site.start : site.end] in site.imports else rewrite(site)


def _meant_name(site: Site) -> Change | None:
    """An undefined name -> the one bound name it is a typo of (:mod:`~fixlore.abstraction._typos`)."""
    meant = meant_name(site.text, site.start, site.end, site.message)
    return None if meant is None else (site.start, site.end, meant)


def _py3_name(old: str) -> Rewrite:
    """The undefined Python 2 builtin ``old`` -> its Python 3 name (:mod:`~fixlore.abstraction._py2`)."""
    return _unless_imported(lambda site: py3_name(old, site.text, site.start, site.end, site.message))


def _compat_name(old: str) -> Rewrite:
    """The undefined Python 2 builtin ``old`` -> the file's name for it on both Pythons (``text_type``)."""
    return lambda site: compat_name(old, site.text, site.start, site.end, site.message)


def _import_as_elsewhere(site: Site) -> Change | None:
    """An undefined name -> the import that binds it in the project's other files, placed as a careful human would.

    The name is the diagnostic's range and is quoted in its message ("Undefined
    name `xrange`", pyright's ``"xrange" is not defined``); the statement comes
    from :attr:`Site.imports` and must bind exactly that name.
    """
    name = site.text[site.start : site.end]
    if not site.imports or not quotes(site.message, name):
        return None
    statement = site.imports.get(name)
    if statement is None or statement_binds(statement) != name or imports_its_own(site.text, statement):
        return None
    src = parsed("python", site.text)
    if src.root.has_error:
        return None
    edits = place_import(src, statement)
    if not edits or len(edits) != 1:
        return None
    start, end, new = edits[0]
    return src.char(start), src.char(end), new


def _import_title(site: Site) -> str | None:
    """The title "Add `from six.moves import xrange`", whether the import joins an existing statement or not."""
    statement = (site.imports or {}).get(site.text[site.start : site.end])
    return None if statement is None else f"Add `{statement}`"


def _of_its_name(rewrite: Callable[[str, int, int], Change | None]) -> Rewrite:
    """``rewrite`` of the name at the diagnostic, where the message quotes that name (else it is about another)."""
    return lambda site: (
        rewrite(site.text, site.start, site.end) if quotes(site.message, site.text[site.start : site.end]) else None
    )


def _rename(how: str) -> Rewrite:
    """An ambiguous name renamed through its scope, the name derived ``how`` (:mod:`~fixlore.abstraction._renames`)."""
    return _of_its_name(functools.partial(rename_ambiguous, how))


def _rename_title(how: str) -> Callable[[Site], str | None]:
    """The title "Rename `l` to `line`" (the edit spans every use: "Replace …" would show a block)."""

    def title(site: Site) -> str | None:
        new = renamed_to(how, site.text, site.start, site.end)
        return None if new is None else f"Rename `{site.text[site.start : site.end]}` to `{new}`"

    return title


_RENAME_ITEM, _RENAME_MADE = _rename(ITEM), _rename(MADE)


_instance_parameter = _of_its_name(instance_parameter)
"""``self`` (``cls``) undefined in a method: added as its first parameter (:mod:`~fixlore.abstraction._methods`)."""


def _instance_title(site: Site) -> str | None:
    """The title "Add `self` as the method's first parameter" (the edit is in the ``def`` line, not here)."""
    return f"Add `{site.text[site.start : site.end]}` as the method's first parameter"


TITLES: dict[Rewrite, Callable[[Site], str | None]] = {
    _import_as_elsewhere: _import_title,
    _RENAME_ITEM: _rename_title(ITEM),
    _RENAME_MADE: _rename_title(MADE),
    _instance_parameter: _instance_title,
}
"""Rewrites whose title is not "Replace `old` with `new`" (an import joined to a statement, a variable renamed)."""


def _from_new(name: str) -> Rewrite:
    """The rewrite naming the caught exception ``name`` (:func:`~fixlore.abstraction._raises.from_new`)."""
    return lambda site: from_new(name, site.text, site.start, site.end)


REWRITES: dict[str, tuple[Rewrite, EditShape]] = {
    "percent_fstring": (
        _percent(integers=False),
        EditShape(Anchor.AT_DIAGNOSTIC, "BinaryOperation", '" $S %s $S " % $1', 'f" $S { $1 } $S "'),
    ),
    "percent_fstring_d": (
        _percent(integers=True),
        EditShape(Anchor.AT_DIAGNOSTIC, "BinaryOperation", '" $S %d $S " % $1', 'f" $S { $1 : $2 } $S "'),
    ),
    "percent_fstring_plain": (
        _percent(integers=True, plain_d=True),
        EditShape(Anchor.AT_DIAGNOSTIC, "BinaryOperation", '" $S %d $S " % $1', 'f" $S { $1 } $S "'),
    ),
    "percent_log_args": (
        _whole(log_args),
        EditShape(Anchor.AT_DIAGNOSTIC, "BinaryOperation", '" $S %s $S " % $1', '" $S %s $S " , $1'),
    ),
    "format_fstring": (
        _in_place(format_rewrite),
        EditShape(Anchor.AT_DIAGNOSTIC, "Call", '" $S {} $S " . format ( $1 )', 'f" $S { $1 } $S "'),
    ),
    "raise_from_none": (
        _in_place(from_none),
        EditShape(Anchor.AT_DIAGNOSTIC, "Raise", "raise $1 ( )", "raise $1 ( ) from None"),
    ),
    "raise_from_caught": (
        _in_place(from_caught),
        EditShape(Anchor.AT_DIAGNOSTIC, "Raise", "raise $1 ( )", "raise $1 ( ) from $2"),
    ),
    **{
        # One shape per word (numbered apart): a pattern's fingerprint is its shape's, not its rewrite's.
        f"raise_from_new_{name}": (
            _from_new(name),
            EditShape(
                Anchor.AT_DIAGNOSTIC,
                "ExceptHandler",
                "except $2 :\n    raise $1 ( )",
                f"except $2 as ${index + 3} :\n    raise $1 ( ) from ${index + 3}",
            ),
        )
        for index, name in enumerate(CAUGHT_NAMES)
    },
    "eq_to_is": (_in_place(eq_to_is), EditShape(Anchor.AT_DIAGNOSTIC, "Comparison", "$1 == $2", "$1 is $2")),
    "type_eq_isinstance": (
        _in_place(type_eq_isinstance),
        EditShape(Anchor.AT_DIAGNOSTIC, "Comparison", "type ( $1 ) == $2", "isinstance ( $1 , $2 )"),
    ),
    "typing_optional": (
        _in_place(typing_optional),
        EditShape(Anchor.AT_DIAGNOSTIC, "Annotation", "$1", "typing . Optional [ $1 ]"),
    ),
    "optional": (_in_place(optional), EditShape(Anchor.AT_DIAGNOSTIC, "Annotation", "$1", "Optional [ $1 ]")),
    "stacklevel": (_whole(stacklevel), EditShape(Anchor.AT_DIAGNOSTIC, "Call", "$1 ( $2 )", "$1 ( $2 , $3 = $N )")),
    "drop_unused_import": (
        _drop_unused,
        EditShape(Anchor.AT_DIAGNOSTIC, "ImportAlias", "from $1 import $2 , $3", "from $1 import $3"),
    ),
    "re_export": (
        _re_export,
        EditShape(Anchor.AT_DIAGNOSTIC, "ImportAlias", "from $1 import $2", "from $1 import $2 as $2"),
    ),
    "drop_redefined_import": (
        _drop_redefined,
        EditShape(Anchor.IMPORT_BLOCK, "ImportAlias", "from $1 import $2", ""),
    ),
    **{
        f"py3_{old}": (_py3_name(old), EditShape(Anchor.AT_DIAGNOSTIC, "Name", "$1", f"{new} ~ ${index + 2}"))
        for index, (old, new) in enumerate(PY3_NAMES.items())
    },
    **{
        f"compat_{old}": (_compat_name(old), EditShape(Anchor.AT_DIAGNOSTIC, "Name", "$1", f"$2 ~ ${index + 20}"))
        for index, old in enumerate(COMPAT_NAMES)
    },
    "meant_name": (_unless_imported(_meant_name), EditShape(Anchor.AT_DIAGNOSTIC, "Name", "$1", "$2 ~ $1")),
    "quote_forward_ref": (
        _in_place(quoted_forward_ref),
        EditShape(Anchor.AT_DIAGNOSTIC, "Annotation", "$1", '" $S "'),
    ),
    "import_as_elsewhere": (
        _import_as_elsewhere,
        EditShape(Anchor.IMPORT_BLOCK, "Import", "", "from $2 import $1 ~ import $1"),
    ),
    "rename_item": (_RENAME_ITEM, EditShape(Anchor.AT_DIAGNOSTIC, "Name", "$1", "$2 ~ for $2 in $3")),
    "rename_made": (_RENAME_MADE, EditShape(Anchor.AT_DIAGNOSTIC, "Name", "$1", "$2 ~ $2 = $3 ( )")),
    "instance_parameter": (
        _instance_parameter,
        EditShape(Anchor.ENCLOSING_UNIT, "FunctionDef", "def $2 ( $3 ) :", "def $2 ( $1 , $3 ) :"),
    ),
    "drop_u_prefixes": (
        _literal(drop_u_prefixes),
        EditShape(Anchor.AT_DIAGNOSTIC, "SimpleString", 'u" $S " , u" $S "', '" $S " , " $S "'),
    ),
    "escape_backslash": (
        _literal(escape_backslash),
        EditShape(Anchor.AT_DIAGNOSTIC, "SimpleString", '" $S \\$1 $S "', '" $S \\\\$1 $S "'),
    ),
    "regex_raw": (
        _literal(regex_raw),
        EditShape(Anchor.AT_DIAGNOSTIC, "SimpleString", '" $S \\$2 $S \\$1 $S "', 'r" $S \\$2 $S \\$1 $S "'),
    ),
}
"""Every rewrite by name, with the shape ``knowledge show`` and the dashboard display for it.

Each shape is different: a pattern's fingerprint covers its shape, not ``extra``, so two
rewrites with one shape would be one pattern, and the evidence of one would apply the other.
"""


_CATEGORIES = {
    "meant_name": FixCategory.RENAME,
    **{f"py3_{old}": FixCategory.RENAME for old in PY3_NAMES},
    **{f"compat_{old}": FixCategory.RENAME for old in COMPAT_NAMES},
    "import_as_elsewhere": FixCategory.ADD_IMPORT,
    "drop_unused_import": FixCategory.REMOVE_IMPORT,
    "drop_redefined_import": FixCategory.REMOVE_IMPORT,
    "re_export": FixCategory.RENAME,
    "instance_parameter": FixCategory.INSERT_TOKEN,
    "rename_item": FixCategory.RENAME,
    "rename_made": FixCategory.RENAME,
}
"""A rewrite's kind of change, where it is not just :attr:`FixCategory.REWRITE`."""

CHANGES_BEHAVIOUR = frozenset({"type_eq_isinstance", "percent_fstring_plain"})
"""Rewrites whose result may behave differently (``isinstance`` accepts subclasses, ``type(a) ==``
does not; ``f"{x}"`` keeps a float's decimals, ``"%d" % x`` drops them): offered once the user
made them twice, like any fix that replaces a name that works."""


_ON_PYTHON_2_OTHERWISE = frozenset(f"py3_{old}" for old in PY2_MEANS_OTHERWISE)
"""The Python 3 renames whose new name does something else on Python 2."""


def changes_behaviour(pattern: Pattern, text: str) -> bool:
    """``pattern`` is a rewrite of :data:`CHANGES_BEHAVIOUR`, or one that does in ``text``.

    A Python 2 name renamed in a file that still runs on Python 2 too
    (:func:`~fixlore.abstraction._py2.still_python_2`): ``str`` is bytes there.
    """
    name = dict(pattern.extra).get(REWRITE)
    return name in CHANGES_BEHAVIOUR or (name in _ON_PYTHON_2_OTHERWISE and still_python_2(text))


def rewrite_of(pattern: Pattern) -> Rewrite | None:
    """The rewrite ``pattern`` records, if any."""
    name = dict(pattern.extra).get(REWRITE)
    entry = REWRITES.get(name) if name is not None else None
    return entry[0] if entry is not None else None


def learned_rewrite(language: str, site: Site, after: str, signature: Signature) -> Pattern | None:
    """The pattern of the rewrite that turns ``site.text`` into ``after``, if one does (layout aside)."""
    if language != "python":
        return None
    before = site.text
    for name, (rewrite, shape) in REWRITES.items():
        if name == "import_as_elsewhere":
            change = rewrite(_with_added_import(site, after))
        else:
            change = rewrite(site)
        if change is None:
            continue
        start, end, new = change
        fixed = before[:start] + new + before[end:]
        if (
            fixed.split() == after.split()
            or _same_but_comments(fixed, after)
            or (name == "import_as_elsewhere" and _same_imports(fixed, after))
        ):
            return Pattern(
                signature=signature,
                category=_CATEGORIES.get(name, FixCategory.REWRITE),
                shape=shape,
                extra=tuple(sorted(((REWRITE, name), SPANS_DIAGNOSTIC))),
            )
    return None


MAX_COMMENTED = 4
"""Lines that may differ by a comment alone for a fix to count as a rewrite (see :func:`_same_but_comments`)."""


def _same_but_comments(fixed: str, after: str) -> bool:
    """The same code line for line, layout aside, but for the comments of a few lines.

    A human who adds ``from None`` writes why beside it (``# on purpose``); the
    rewrite is still what they did, and the comment is theirs, never the
    pattern's. Without this the fix was learned as the whole statement around
    it, token for token, which fits that statement only.
    """
    a, b = fixed.split("\n"), after.split("\n")
    if len(a) != len(b):
        return False
    differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x.split() != y.split()]
    if not differ or len(differ) > MAX_COMMENTED:
        return False
    return all(_without_comment(a[i]).split() == _without_comment(b[i]).split() for i in differ)


def _without_comment(line: str) -> str:
    """``line`` without its comment (tokenized alone: a line inside a string or bracket may keep its ``#``)."""
    cut = len(line)
    try:
        for tok in tokenize.generate_tokens(io.StringIO(line + "\n").readline):
            if tok.type == tokenize.COMMENT:
                cut = tok.start[1]
                break
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return line[:cut]


def _with_added_import(site: Site, after: str) -> Site:
    """``site`` knowing the import the human's fix added for the diagnostic's name (extraction).

    A standard-library import is left to the import patterns over holes
    (:func:`~fixlore.abstraction._imports.lift_import`), which need no other file.
    """
    name = site.text[site.start : site.end]
    statement = top_level_imports(after).get(name) if name.isidentifier() else None
    if statement is None or name in top_level_imports(site.text) or is_stdlib_import(statement):
        return Site(site.text, site.start, site.end, site.message)
    return Site(site.text, site.start, site.end, site.message, {name: statement})


def _same_imports(a: str, b: str) -> bool:
    """The same code binding the same imports, layout aside (the human put the import elsewhere in the block)."""
    return top_level_imports(a) == top_level_imports(b) and without_imports(a).split() == without_imports(b).split()
