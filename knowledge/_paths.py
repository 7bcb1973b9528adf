"""Where knowledge lives on disk, and how a workspace is named without its path."""

from __future__ import annotations

import functools
import hashlib
import hmac
import os
from pathlib import Path

import platformdirs

STORE_FILE = "knowledge.sqlite3"
"""The user store's file name inside :func:`knowledge_home`."""
WORKSPACE_DIR = ".fixlore"
WORKSPACE_FILE = "patterns.json"
"""The workspace scope: ``<root>/.fixlore/patterns.json``, in the export format."""


def knowledge_home() -> Path:
    """``$FIXLORE_HOME`` if set, else the platform's user data directory for fixlore."""
    env = os.environ.get("FIXLORE_HOME")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir("fixlore", appauthor=False))


def workspace_file(root: Path) -> Path:
    """The workspace-scope file of the workspace at ``root``."""
    return root / WORKSPACE_DIR / WORKSPACE_FILE


def workspace_hash(salt: bytes, root: Path | str) -> str:
    """HMAC-SHA256 of the workspace root under the per-home salt (24 hex digits).

    The salt never leaves the user's store, so the hash cannot be reversed by
    guessing common paths, and an export carries only counts of workspaces.
    Remembered per salt and root: every event recorded asks for it (a code
    action's offers several times), and resolving the path is a system call
    per component of it, each giving up the GIL on the event loop.
    """
    return _workspace_hash(salt, os.fspath(root))


@functools.lru_cache(maxsize=64)
def _workspace_hash(salt: bytes, root: str) -> str:
    path = os.path.realpath(root)
    return hmac.new(salt, path.encode("utf-8", "surrogateescape"), hashlib.sha256).hexdigest()[:24]
