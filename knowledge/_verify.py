"""The store boundary's call into the privacy verifier of ``fixlore.abstraction``.

The knowledge layer has no verifier of its own: a second, diverging notion of
what is safe would be worse than one. Every pattern written to the user store,
the workspace file, an export, or read from an import or the base knowledge
passes through :func:`check_privacy`.
"""

from __future__ import annotations

from fixlore.abstraction import Pattern, verify_privacy


def check_privacy(pattern: Pattern) -> tuple[bool, str]:
    """``(ok, field)``: whether ``pattern`` may be stored, and the refused field if not."""
    verdict = verify_privacy(pattern)
    return bool(verdict.ok), str(verdict.field)
