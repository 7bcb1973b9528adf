"""Message and title templates: the cheap half of abstraction (no parsing).

``abstract_signature`` and ``abstract_action`` run on the request path, so
they use one regular expression pass and set look-ups. A tool's message is
split into code spans (backticks, quotes), whose identifiers are kept only if
allowlisted for the language, and prose, whose words are kept only if they are
common diagnostic vocabulary. Everything else becomes a numbered placeholder,
shared with the pattern's shape through one :class:`Namer`.

Only a message's first line is templated (:func:`first_line`): tools append
hints below it that change between their versions (ruff 0.17 appends a blank
line and ``help: <fix title>``), and a pattern learned under one version must
still apply under the next.
"""

from __future__ import annotations

import re
from functools import lru_cache

from fixlore.abstraction._pattern import ActionTemplate, FixCategory, Hole, Pattern, Signature
from fixlore.abstraction._placeholders import (
    IDENTIFIER,
    NUMBER,
    PLACEHOLDER_LIKE,
    is_hole,
    is_numbered,
    is_placeholder,
    numbered,
    tokenizer,
)
from fixlore.abstraction._text import DiagnosticInfo
from fixlore.abstraction._vocab import class_members, is_allowed_name, keywords, prose_words

STRICT = re.compile(r"[A-Za-z0-9_.\-/]{1,64}\Z")
"""The form of ``language``, ``source``, ``code`` and action ``kind`` fields."""

_SPAN = re.compile(r"`[^`\n]+`|(?<!\w)'[^'\n]+'(?!\w)|\"[^\"\n]+\"")
_WORD = tokenizer(rf"{PLACEHOLDER_LIKE}|[^\W\d]\w*(?:-[^\W\d]\w*)*|\d[\w.]*|[^\x00-\x7f\w\s]+")
_BACKTICKS = re.compile(r"`[^`\n]+`")
_MATCH_TOKEN = tokenizer(r"[^\W\d]\w*|\d[\w.]*|\s+|.", re.S)


def quoted_names(message: str) -> list[str]:
    """The names a message quotes as code, in order ("Undefined name `xrange`", pyright's ``"xrange"``)."""
    return [inner for span in _SPAN.findall(message) if (inner := span[1:-1]).isidentifier()]


def quotes(message: str, name: str) -> bool:
    """Whether ``message`` is about ``name``: it quotes it as code."""
    return name in quoted_names(message)


class Namer:
    """Numbers user names in order of first appearance: ``$1``, ``$2``, ..."""

    __slots__ = ("names", "concrete")

    def __init__(self) -> None:
        self.names: dict[str, str] = {}
        self.concrete: dict[str, str] = {}

    def __call__(self, text: str) -> str:
        ph = self.names.get(text)
        if ph is None:
            ph = self.names[text] = numbered(len(self.names) + 1)
            self.concrete[ph] = text
        return ph


def first_line(text: str) -> str:
    r"""The part of a message that identifies it: its first line, without trailing whitespace.

    ``"`x` imported but unused\n\nhelp: Remove unused import: `x`"`` ->
    ``"`x` imported but unused"``.
    """
    return text.partition("\n")[0].rstrip()


_PLACEHOLDERS = re.compile(r"\$[A-Z]?\d*\b")


def same_wording(language: str, template: str, message: str) -> bool:
    """Whether ``message`` says what ``template`` says, whatever names, strings and numbers it holds.

    ``"`$1` imported but unused"`` fits ``"`os` imported but unused"`` and
    ``"`a.b` imported but unused"``, not ``"`os` imported but unused; consider
    adding to `__all__`"``: with code spans blanked and placeholders told apart
    from nothing else, the two templates must be the same text.
    """
    return _form(template) == _message_form(language, message)


@lru_cache(maxsize=4096)
def _form(text: str) -> str:
    """``text`` with its code spans blanked and its placeholders alike (see :func:`same_wording`)."""
    return _PLACEHOLDERS.sub("$", _SPAN.sub("`…`", text))


@lru_cache(maxsize=1024)
def _message_form(language: str, message: str) -> str:
    """:func:`_form` of a live message's template, once per message (memory only).

    Every stored rewrite of the rule is asked about the same message at a
    diagnostic: templating it again for each cost ~20 us, a good part of the
    checks a code-action request makes before any parsing (``may_apply``).
    """
    return _form(template_text(language, message, Namer()))


def template_text(language: str, text: str, namer: Namer) -> str:
    """Template the first line of a message or title: code spans and prose, each by its own rule."""
    text = first_line(text)
    out: list[str] = []
    pos = 0
    for m in _SPAN.finditer(text):
        out.append(_template_words(language, text[pos : m.start()], namer, code=False))
        out.append(_template_words(language, m.group(), namer, code=True))
        pos = m.end()
    out.append(_template_words(language, text[pos:], namer, code=False))
    return "".join(out)


def _template_words(language: str, text: str, namer: Namer, *, code: bool) -> str:
    """Template one span: numbers become ``$N``, words not kept become ``$k``.

    A run of symbols outside ASCII (an emoji key, ``∑∆``) is user text too: ``$k``.

    A code span keeps the language's keywords (case-sensitive); prose keeps
    common diagnostic vocabulary (case-insensitive), a hyphenated word
    (``f-string``) whole if the vocabulary has it, else part by part. Both
    keep allowlisted names. An English word in a code span is *not* kept: in
    a span it is code, often the user's own name (`count`, `items`).
    """
    kept = keywords(language) if code else prose_words()

    def repl(m: re.Match[str]) -> str:
        word = m.group()
        if "-" not in word:
            return one(word)
        if not code and word.lower() in kept:
            return word
        return "-".join(one(part) for part in word.split("-"))

    def one(word: str) -> str:
        if word[0] == "$":
            if is_placeholder(word):
                return namer(word)
            # ``$`` then a word (a shell variable, ``$HOME``): the word is never kept,
            # or ``$word`` would be a malformed placeholder the verifier refuses.
            rest = word[1:]
            return "$" + (NUMBER if rest[0].isdigit() else namer(rest))
        if word[0].isdigit():
            return NUMBER
        if (word if code else word.lower()) in kept or is_allowed_name(language, word):
            return word
        return namer(word)

    return _WORD.sub(repl, text)


def _strict(value: str) -> str:
    return value if STRICT.match(value) else ""


def abstract_signature(language: str, diag: DiagnosticInfo) -> Signature:
    """The abstract signature of a diagnostic (cheap: no parsing); only the message's first line counts."""
    return _signature(language, diag.source, str(diag.code or ""), first_line(diag.message))


@lru_cache(maxsize=4096)
def _signature(language: str, source: str, code: str, message: str) -> Signature:
    return signature_with(language, source, code, message, Namer())


def signature_with(language: str, source: str, code: str, message: str, namer: Namer) -> Signature:
    """Like :func:`abstract_signature`, numbering placeholders with ``namer`` (first line only)."""
    return Signature(
        language=_strict(language),
        source=_strict(source),
        code=_strict(code),
        message=template_text(language, message, namer),
    )


def abstract_action(language: str, diag: DiagnosticInfo, title: str, kind: str) -> Pattern:
    """An upstream code action as a pattern: signature plus templated title (no parsing)."""
    return _action(language, diag.source, str(diag.code or ""), diag.message, title, kind)


@lru_cache(maxsize=4096)
def _action(language: str, source: str, code: str, message: str, title: str, kind: str) -> Pattern:
    namer = Namer()
    sig = signature_with(language, source, code, message, namer)
    action = ActionTemplate(kind=_strict(kind), title=template_text(language, title, namer))
    return Pattern(signature=sig, category=_action_category(title, kind), action=action)


def abstract_rule_action(language: str, diag: DiagnosticInfo, title: str, kind: str) -> Pattern:
    """An upstream action's identity at the level of its rule: code spans masked, then abstracted.

    :func:`abstract_action` keeps allowlisted names (``json``, ``os``) in
    templates, which is right for learned fixes but would make "Disable for
    this line" under "`json` imported but unused" another action than under
    "`base64` ...". Each distinct backticked span of the message's first line
    and of the title becomes one synthetic name first, so the placeholders
    line up and the concrete names drop out. The server keys upstream actions
    by this, and the base knowledge is generated with it.
    """
    names: dict[str, str] = {}

    def mask(m: re.Match[str]) -> str:
        return "`" + names.setdefault(m.group(), f"fixloreSpan{len(names) + 1}") + "`"

    message = _BACKTICKS.sub(mask, first_line(diag.message))
    return _action(language, diag.source, str(diag.code or ""), message, _BACKTICKS.sub(mask, title), kind)


_TITLE_CATEGORIES: tuple[tuple[str, FixCategory], ...] = (
    ("disable", FixCategory.ADD_SUPPRESSION),
    ("noqa", FixCategory.ADD_SUPPRESSION),
    ("ignore", FixCategory.ADD_SUPPRESSION),
    ("suppress", FixCategory.ADD_SUPPRESSION),
    ("remove unused import", FixCategory.REMOVE_IMPORT),
    ("import", FixCategory.ADD_IMPORT),
    ("remove assignment", FixCategory.DELETE_STATEMENT),
    ("remove", FixCategory.DELETE_TOKEN),
    ("delete", FixCategory.DELETE_TOKEN),
    ("rename", FixCategory.RENAME),
    ("replace", FixCategory.REWRITE),
    ("insert", FixCategory.INSERT_TOKEN),
    ("add", FixCategory.INSERT_TOKEN),
    ("wrap", FixCategory.WRAP_EXPRESSION),
)


def _action_category(title: str, kind: str) -> FixCategory:
    if kind.startswith("source.organizeImports"):
        return FixCategory.REMOVE_IMPORT
    if kind.startswith("source."):
        return FixCategory.OTHER
    low = title.lower()
    for needle, category in _TITLE_CATEGORIES:
        if needle in low:
            return category
    return FixCategory.OTHER


@lru_cache(maxsize=1024)
def message_tokens(language: str, message: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """A concrete message templated, as match tokens, and each placeholder's concrete name.

    Cached: every pattern tried at a diagnostic matches its template against
    the same message. The mapping is shared: read it, never change it.
    """
    namer = Namer()
    return tuple(_MATCH_TOKEN.findall(template_text(language, message, namer))), namer.concrete


@lru_cache(maxsize=8192)
def _template_tokens(template: str) -> tuple[str, ...]:
    return tuple(_MATCH_TOKEN.findall(first_line(template)))


def bind_template(language: str, template: str, concrete: str, holes: tuple[Hole, ...]) -> dict[str, str] | None:
    """Match a concrete message against a template: placeholder -> concrete text.

    Returns ``None`` when the message does not fit the template. A hole binds
    to an allowlisted name of its class; ``$k`` binds to the user name that
    the same templating would have replaced. Both are taken by their first
    line, so a message with a hint appended (ruff's ``help:``) binds to a
    template learned without it, and a template stored with one still binds.
    The dict is the caller's own (callers bind derived holes into it).
    """
    found = _bind_template(language, template, concrete, holes)
    return None if found is None else dict(found)


@lru_cache(maxsize=4096)
def _bind_template(
    language: str, template: str, concrete: str, holes: tuple[Hole, ...]
) -> tuple[tuple[str, str], ...] | None:
    """:func:`bind_template`'s answer, remembered.

    A rule's stored patterns mostly share a template, and each is matched
    against the same diagnostic's message when a lightbulb comes (on the event
    loop, ``may_apply``, and again in the worker): with 1,270 patterns learned
    from real fixes, binding was a sixth of that check's time.
    """
    a_toks, names = message_tokens(language, concrete)
    t_toks = _template_tokens(template)
    if len(a_toks) != len(t_toks):
        return None
    klass = {h.name: h.klass for h in holes}
    binding: dict[str, str] = {}
    for t, a in zip(t_toks, a_toks, strict=True):
        if t == a and not is_numbered(t):
            continue
        if is_hole(t):
            # A hole may bind a name the templating hid (``SimpleNamespace`` for
            # a ``python.stdlib_export`` hole): the binding is used, never stored.
            value = names.get(a, a) if is_numbered(a) else a
            if value not in class_members(language, klass.get(t, "")):
                return None
        elif is_numbered(t) and is_numbered(a):
            value = names[a]
        elif is_numbered(t) and IDENTIFIER.fullmatch(a) and is_allowed_name(language, a):
            # "`$1` imported but unused" fits "`typing` imported but unused": the
            # name is kept in messages (the standard library's) but is a name all the same.
            value = a
        else:
            return None
        if binding.setdefault(t, value) != value:
            return None
    return tuple(binding.items())
