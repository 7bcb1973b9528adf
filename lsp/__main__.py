"""``python -m fixlore.lsp`` runs the ``fixlore`` command line."""

from __future__ import annotations

import sys

from fixlore.lsp.cli import main

sys.exit(main())
