"""The store boundary's call into the privacy verifier of ``fixlore.abstraction``.

The knowledge layer has no verifier of its own: a second, diverging notion of
what is safe would be worse than one. If the verifier cannot be imported the
store fails closed and refuses everything.
"""

from __future__ import annotations

import logging

from fixlore.abstraction._pattern import Pattern

logger = logging.getLogger(__name__)


def check_privacy(pattern: Pattern) -> tuple[bool, str]:
    """``(ok, field)``: whether ``pattern`` may be stored, and the refused field if not."""
    try:
        from fixlore.abstraction import verify_privacy
    except ImportError:
        try:  # until fixlore.abstraction re-exports it
            from fixlore.abstraction._privacy import verify_privacy
        except ImportError:
            verify_privacy = None
    if verify_privacy is None:
        logger.error("privacy verifier unavailable: refusing pattern %s", pattern.fingerprint)
        return False, "(verifier unavailable)"
    verdict = verify_privacy(pattern)
    return bool(verdict.ok), str(getattr(verdict, "field", ""))
