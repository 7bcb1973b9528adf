"""Generalisation: patterns that differ only in allowlisted names merge (anti-unification).

Two patterns of one rule key, category, anchor and unit merge when their
message, title and shapes line up token by token and every column where they
differ is either a pair of placeholders (renumbered consistently) or a pair of
allowlisted names of one class, which becomes a hole ``$Hk`` over that class
(``import os`` / ``import re`` -> ``import $H1`` over ``python.stdlib_module``).
The same pair of names in several fields becomes the same hole. Instance
counts add up. This is Getafix's anti-unification, restricted to the names
fixlore may keep.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache

from fixlore.abstraction._imports import STDLIB_MODULE
from fixlore.abstraction._pattern import ActionTemplate, EditShape, Hole, Pattern, Signature
from fixlore.abstraction._placeholders import (
    IDENTIFIER,
    hole,
    hole_index,
    is_hole,
    is_numbered,
    is_placeholder,
    numbered,
    tokenizer,
)
from fixlore.abstraction._soundness import replaced_by
from fixlore.abstraction._templates import _template_tokens, first_line, message_tokens
from fixlore.abstraction._vocab import class_members, class_of, is_allowed_name

_TOKEN = tokenizer(r"\w+|\s+|.", re.S)


def generalise(patterns: Iterable[Pattern]) -> list[Pattern]:
    """Merge patterns that anti-unify; the rest are returned as they are, in order."""
    merged: list[Pattern] = []
    for pattern in patterns:
        for i, existing in enumerate(merged):
            combined = merge(existing, pattern)
            if combined is not None:
                merged[i] = combined
                break
        else:
            merged.append(pattern)
    return merged


def merge(a: Pattern, b: Pattern) -> Pattern | None:
    """The least general pattern covering both ``a`` and ``b``, or ``None``."""
    if a.signature.rule_key != b.signature.rule_key or a.category != b.category:
        return None
    if a.extra != b.extra or (a.shape is None) != (b.shape is None):
        return None
    if (a.action is None) != (b.action is None):
        return None
    if a.shape and b.shape and (a.shape.anchor, a.shape.unit) != (b.shape.anchor, b.shape.unit):
        return None
    if a.action and b.action and a.action.kind != b.action.kind:
        return None
    au = _Unifier(a, b)
    try:
        message = au.field(a.signature.message, b.signature.message)
        title = au.field(a.action.title, b.action.title) if a.action and b.action else None
        before = au.field(a.shape.before, b.shape.before) if a.shape and b.shape else None
        after = au.field(a.shape.after, b.shape.after) if a.shape and b.shape else None
    except _Mismatch:
        return None
    sig = Signature(a.signature.language, a.signature.source, a.signature.code, message)
    shape = None
    if a.shape is not None and before is not None and after is not None:
        shape = EditShape(a.shape.anchor, a.shape.unit, before, after)
    action = ActionTemplate(a.action.kind, title) if a.action and title is not None else None
    context = a.context if a.context == b.context else _common_tail(a.context, b.context)
    return replace(
        a,
        signature=sig,
        shape=shape,
        action=action,
        context=context,
        holes=tuple(sorted(au.holes.values(), key=lambda h: hole_index(h.name))),
        instances=a.instances + b.instances,
    )


class _Mismatch(Exception):
    """Internal: the two patterns do not anti-unify."""


class _Unifier:
    def __init__(self, a: Pattern, b: Pattern) -> None:
        self.language = a.signature.language
        self.a_holes = {h.name: h.klass for h in a.holes}
        self.b_holes = {h.name: h.klass for h in b.holes}
        self.holes: dict[str, Hole] = {}
        self.pairs: dict[tuple[str, str], str] = {}
        self.ph_ab: dict[str, str] = {}
        self.ph_ba: dict[str, str] = {}
        taken = [hole_index(h.name) for h in a.holes]
        self.next_hole = max(taken, default=0) + 1

    def field(self, x: str, y: str) -> str:
        xs, ys = _TOKEN.findall(x), _TOKEN.findall(y)
        if len(xs) != len(ys):
            raise _Mismatch
        return "".join(self.column(p, q) for p, q in zip(xs, ys, strict=True))

    def column(self, p: str, q: str) -> str:
        if is_numbered(p) or is_numbered(q):
            if not (is_numbered(p) and is_numbered(q)):
                raise _Mismatch
            if self.ph_ab.setdefault(p, q) != q or self.ph_ba.setdefault(q, p) != p:
                raise _Mismatch
            return p
        if p == q and not is_hole(p):
            return p
        return self.hole(p, q)

    def hole(self, p: str, q: str) -> str:
        key = (p, q)
        if key in self.pairs:
            return self.pairs[key]
        klass = self._klass(p, q)
        if is_hole(p) and p in self.a_holes and self.a_holes[p] == klass:
            name = p
        else:
            name = hole(self.next_hole)
            self.next_hole += 1
        if name in self.holes and self.holes[name].klass != klass:
            raise _Mismatch
        self.pairs[key] = name
        self.holes[name] = Hole(name, klass)
        return name

    def _klass(self, p: str, q: str) -> str:
        lang = self.language
        known = [self.a_holes.get(p), self.b_holes.get(q)]
        names = {t for t in (p, q) if not is_placeholder(t)}
        if any(is_placeholder(t) and t not in self.a_holes and t not in self.b_holes for t in (p, q)):
            raise _Mismatch
        if not all(t.isidentifier() and is_allowed_name(lang, t) for t in names):
            raise _Mismatch
        for klass in known:
            if klass is not None:
                others = [k for k in known if k is not None and k != klass]
                if not others and names <= class_members(lang, klass):
                    return klass
                raise _Mismatch
        klass = class_of(lang, names)
        if klass is None:
            raise _Mismatch
        return klass


def _common_tail(x: tuple[str, ...], y: tuple[str, ...]) -> tuple[str, ...]:
    out: list[str] = []
    for p, q in zip(reversed(x), reversed(y), strict=False):
        if p != q:
            break
        out.append(p)
    return tuple(reversed(out))


@lru_cache(maxsize=4096)
def lift(pattern: Pattern, message: str) -> Pattern | None:
    """``pattern`` made to fit a diagnostic that names other names where its template keeps kept words.

    A fix learned for "`sys` imported but unused" (``import sys`` deleted)
    keeps ``sys`` literally, since it is the standard library's; "`io`
    imported but unused" is the same fix. Each column where the template has a
    kept name and ``message`` another name becomes a placeholder, in the
    template and in the shape alike: a hole over the class both names are in
    (``sys``/``io``: standard-library modules), or a numbered placeholder when
    the message's name is the user's. Anti-unification with the diagnostic at
    hand, as :func:`merge` does with another pattern; the result is used to
    instantiate and is never stored. The soundness guard then judges it like
    any pattern (``import $1`` added for a user's name stays refused).
    ``None`` when nothing is to lift or a column cannot be lifted. Remembered
    (a pattern is tried at each diagnostic of its rule, on the loop and in the worker).
    """
    language = pattern.signature.language
    a_toks, names = message_tokens(language, message)
    t_toks = _template_tokens(pattern.signature.message)
    if len(t_toks) != len(a_toks):
        return None
    texts = [pattern.signature.message] + ([pattern.shape.before, pattern.shape.after] if pattern.shape else [])
    next_num = 1 + max((int(m.group()[1:]) for t in texts for m in _NUMBERED.finditer(t)), default=0)
    next_hole = 1 + max((hole_index(h.name) for h in pattern.holes), default=0)
    renames: dict[str, str] = {}
    holes = list(pattern.holes)
    for t, a in zip(t_toks, a_toks, strict=True):
        if t == a or is_placeholder(t) or t in renames:
            continue
        value = names.get(a, a) if is_numbered(a) else a
        if not (IDENTIFIER.fullmatch(t) and IDENTIFIER.fullmatch(value) and is_allowed_name(language, t)):
            return None
        if is_numbered(a):
            renames[t] = numbered(next_num)
            next_num += 1
            continue
        klass = class_of(language, {t, value})
        if klass is None:
            return None
        renames[t] = hole(next_hole)
        holes.append(Hole(renames[t], klass))
        next_hole += 1
    if not renames:
        return None
    swap = re.compile(r"(?<![\w$])(" + "|".join(map(re.escape, renames)) + r")(?!\w)")

    def sub(text: str) -> str:
        return swap.sub(lambda m: renames[m.group()], text)

    sig = pattern.signature
    shape = pattern.shape
    if shape is not None:
        before, after = sub(shape.before).split(), sub(shape.after).split()
        lifted = set(renames.values())
        if replaced_by(before, after, lifted, lambda new: not set(new) <= lifted):
            # The fix is about that very name: another name (``unicode`` -> ``str``) or code of its
            # own (``dict()`` -> ``{}``, no fix of ``list()``) in its place; a name the message
            # names too (``List`` -> ``list``) is lifted with it and stays.
            return None
        if not after and before and set(before) <= lifted:
            # The name alone deleted, the code around it kept: what is left means what it means for
            # that name only (``tuple()`` -> ``()``, which for ``dict()`` would make a tuple).
            return None
        if _brings(before, sub(shape.after), holes, renames):
            return None
    return replace(
        pattern,
        signature=Signature(sig.language, sig.source, sig.code, sub(first_line(sig.message))),
        shape=EditShape(shape.anchor, shape.unit, sub(shape.before), sub(shape.after)) if shape else None,
        holes=tuple(holes),
    )


_NUMBERED = re.compile(r"\$\d+")


def _brings(before: list[str], after: str, holes: list[Hole], renames: dict[str, str]) -> bool:
    """Whether the fix adds a lifted name anywhere but as a standard-library module imported whole.

    ``import $H1`` over standard-library modules holds for any of them (the
    module exists); ``from six.moves import $H1`` learned for ``xrange`` does
    not hold for ``unicode``, although both are Python 2's builtins.
    """
    klass = {h.name: h.klass for h in holes}
    for name in renames.values():
        added = after.split().count(name) - before.count(name)
        if added <= 0:
            continue
        plain = re.findall(rf"^\s*import {re.escape(name)}\s*$", after, re.M)
        if klass.get(name) != STDLIB_MODULE or len(plain) < added:
            return True
    return False
