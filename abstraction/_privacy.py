"""The privacy verifier: a pattern passes only if no field can hold user text.

Every text field of :meth:`Pattern.to_dict` is split into words and checked:
a word must be a placeholder (``$1``, ``$S``, ``$N``, ``$H1``, ``$CODE``), a
keyword or operator of the language's grammar, an allowlisted name, a node
kind (for ``unit``/``context``/``extra``), or, in a message or title, common
diagnostic vocabulary. ``language`` must be a language fixlore parses;
``source``, ``code`` and the action kind must have a strict short form
(the user's own tools may report anything of that form). Anything else is
refused. Never raises.

:func:`verify_shared` is the verifier of knowledge that leaves or enters the
user's store (export, import, team, workspace file, base knowledge): on top,
``source``, ``code`` and the kind must follow the grammar of ``_fields``
(known tools, each tool's code grammar, LSP's kind grammar).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from fixlore.abstraction._fields import language_problem, shared_problem
from fixlore.abstraction._pattern import SPANS_DIAGNOSTIC, Pattern
from fixlore.abstraction._placeholders import (
    PLACEHOLDER_LIKE,
    is_hole,
    is_placeholder,
    is_string,
    is_string_syntax,
    tokenizer,
)
from fixlore.abstraction._results import PrivacyVerdict
from fixlore.abstraction._rewrites import REWRITE, REWRITES
from fixlore.abstraction._soundness import AT_DIAGNOSTIC
from fixlore.abstraction._templates import STRICT
from fixlore.abstraction._vocab import (
    SUPPRESSION_WORDS,
    is_allowed_name,
    is_hole_class,
    keywords,
    node_kinds,
    prose_words,
)

_WORDS = tokenizer(rf"{PLACEHOLDER_LIKE}|[^\W\d][\w\-]*|\d\w*")
_MAX_FIELD = 4000
_SYMBOL = re.compile("[^\x00-\x7f\u2423]")
"""Outside ASCII only the suppression-comment space ``␣`` is fixlore's own; anything else came from user text."""


def verify_privacy(pattern: object) -> PrivacyVerdict:
    """Accept ``pattern`` only if every stored text field is made of safe tokens."""
    if not isinstance(pattern, Pattern):
        return PrivacyVerdict(False, "", "not a pattern")
    try:
        data = pattern.to_dict()
    except (AttributeError, TypeError, ValueError):
        return PrivacyVerdict(False, "", "malformed pattern")
    return _verify(data)


def verify_shared(pattern: object) -> PrivacyVerdict:
    """:func:`verify_privacy`, then the grammar of shared knowledge's fields (``_fields``)."""
    verdict = verify_privacy(pattern)
    if not verdict.ok:
        return verdict
    assert isinstance(pattern, Pattern)
    sig = pattern.signature
    kind = pattern.action.kind if pattern.action is not None else None
    field, reason = shared_problem(sig.language, sig.source, sig.code, kind)
    return PrivacyVerdict(not field, field, reason)


def _verify(data: dict[str, Any]) -> PrivacyVerdict:
    sig = data["signature"]
    language = sig["language"]
    for name in ("language", "source", "code"):
        value = sig[name]
        if not isinstance(value, str) or (value and not STRICT.match(value)):
            return PrivacyVerdict(False, f"signature.{name}", "not a short plain identifier")
    if language_problem(language):
        return PrivacyVerdict(False, "signature.language", language_problem(language))
    code = sig["code"]
    bad = _text_field(language, sig["message"], prose=True, code=code)
    if bad:
        return PrivacyVerdict(False, "signature.message", bad)
    action = data.get("action")
    if action is not None:
        if action["kind"] and not STRICT.match(action["kind"]):
            return PrivacyVerdict(False, "action.kind", "not a short plain identifier")
        bad = _text_field(language, action["title"], prose=True, code=code)
        if bad:
            return PrivacyVerdict(False, "action.title", bad)
    shape = data.get("shape")
    kinds = node_kinds(language)
    if shape is not None:
        if shape["unit"] not in kinds:
            return PrivacyVerdict(False, "shape.unit", "not a node kind")
        for name in ("before", "after"):
            bad = _text_field(language, shape[name], prose=False, code=code)
            if bad:
                return PrivacyVerdict(False, f"shape.{name}", bad)
    for kind in data.get("context", ()):
        if kind not in kinds:
            return PrivacyVerdict(False, "context", "not a node kind")
    for name, klass in data.get("holes", ()):
        if not is_hole(name) or not is_hole_class(language, klass):
            return PrivacyVerdict(False, "holes", "not a hole of a known class")
    for key, value in data.get("extra", ()):
        if (key, value) in (AT_DIAGNOSTIC, SPANS_DIAGNOSTIC) or (key == REWRITE and value in REWRITES):
            continue
        if key != "node" or value not in kinds:
            return PrivacyVerdict(False, "extra", "unknown extra field")
    return PrivacyVerdict(True)


def _text_field(language: str, text: str, *, prose: bool, code: str) -> str:
    """Why ``text`` is refused, or ``""`` if every word in it is safe.

    Memoised: the verdict depends on these arguments alone, and messages,
    titles and contexts repeat across patterns (an import of 100k patterns
    verifies the same few hundred texts over and over).
    """
    if not isinstance(text, str):
        return "not text"
    return _text_field_memo(language, text, prose, code)


@lru_cache(maxsize=16384)
def _text_field_memo(language: str, text: str, prose: bool, code: str) -> str:
    if len(text) > _MAX_FIELD:
        return "too long"
    if _SYMBOL.search(text):
        return "a character that is neither syntax nor a placeholder"
    kws = keywords(language)
    vocab = prose_words() if prose else frozenset()
    words: list[str] = []
    for chunk in text.split():
        if chunk in kws or is_placeholder(chunk) or is_string(chunk) or is_string_syntax(chunk):
            continue
        words.extend(_WORDS.findall(chunk))
    for word in words:
        if word[0] == "$":
            if is_placeholder(word):
                continue
            return "malformed placeholder"
        if word[0].isdigit():
            if word in kws or (len(word) == 1 and not prose):
                continue
            return "a literal number"
        if word in kws or is_allowed_name(language, word) or word.lower() in vocab:
            continue
        if word.lstrip("@") in SUPPRESSION_WORDS or word in SUPPRESSION_WORDS:
            continue
        if prose and "-" in word and all(p.lower() in vocab for p in word.split("-") if p):
            continue
        if "-" in word and all(
            p in kws or is_allowed_name(language, p) or p in SUPPRESSION_WORDS for p in word.split("-") if p
        ):
            continue
        return "a word that is neither allowlisted nor a placeholder"
    return ""
