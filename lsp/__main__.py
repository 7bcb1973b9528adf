"""``python -m fixlore.lsp`` runs the ``fixlore`` command line."""

from __future__ import annotations

import sys

from fixlore.lsp.tools.cli import main

# Guarded: the extraction worker process (spawn) imports the main module again.
if __name__ == "__main__":
    sys.exit(main())
