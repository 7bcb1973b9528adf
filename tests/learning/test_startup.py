"""Start-up stays short: the server is built without loading libcst (the extractor loads later, in a worker)."""

from __future__ import annotations

import subprocess
import sys

PROBE = (
    "import sys\n"
    "from fixlore.lsp.server import create_server\n"
    "create_server()\n"
    "print(sorted(m for m in sys.modules if m.split('.')[0] == 'libcst'))\n"
)


def test_building_the_server_does_not_import_libcst() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "[]"
