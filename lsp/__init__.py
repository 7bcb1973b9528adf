"""fixlore's language-server layer: protocol, proxy, documents and code actions."""

from __future__ import annotations

# The distribution's version (pyproject.toml; a test checks that they agree).
# A literal: importlib.metadata costs an editor tens of milliseconds at each
# server start, before `initialize` can be answered.
__version__ = "0.1.0"

__all__ = ["__version__"]
