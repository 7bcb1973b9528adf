"""fixlore's language-server layer: protocol, proxy, documents and code actions."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("fixlore")
except PackageNotFoundError:  # running from a checkout without an install
    __version__ = "0.0.0"

__all__ = ["__version__"]
