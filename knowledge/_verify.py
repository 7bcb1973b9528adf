"""The store boundary's call into the privacy verifier of ``fixlore.abstraction``.

The knowledge layer has no verifier of its own: a second, diverging notion of
what is safe would be worse than one. Every pattern written to the user store,
the workspace file, an export, or read from an import or the base knowledge
passes through :func:`check_privacy`. What crosses the store's edge (read from
an import, the team store, a workspace file or the base knowledge; written to
an export, the team store or a workspace file) must also pass
:func:`shared_fields`: its language, source, code and action kind must be ones
fixlore knows (``fixlore.abstraction._fields``), not merely short plain words.
"""

from __future__ import annotations

from fixlore.abstraction import Pattern, shared_problem, verify_privacy


def check_privacy(pattern: Pattern) -> tuple[bool, str]:
    """``(ok, field)``: whether ``pattern`` may be stored, and the refused field if not."""
    verdict = verify_privacy(pattern)
    return bool(verdict.ok), str(verdict.field)


def shared_fields(pattern: Pattern) -> tuple[str, str]:
    """``(field, reason)`` if ``pattern`` names a language, tool, code or kind fixlore does not know, else ``("", "")``.

    The reason is one of the grammar's fixed phrases: it never quotes the field.
    """
    sig = pattern.signature
    kind = pattern.action.kind if pattern.action is not None else None
    return shared_problem(sig.language, sig.source, sig.code, kind)


def shareable(pattern: Pattern) -> bool:
    """Whether ``pattern`` may leave the store (an export, the team store, a workspace file)."""
    return not shared_fields(pattern)[0]
