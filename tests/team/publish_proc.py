"""A fixlore process that dies by SIGKILL in the middle of publishing (used by the team tests).

Usage: ``python publish_proc.py HOME CONNINFO``. Records five events, puts them
in three outbox batches, and kills itself with SIGKILL right after PostgreSQL
committed the second batch, before the outbox row of that batch is deleted.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from fixlore.knowledge import Event, EventKind, Knowledge, _team, _teamdb

sys.path.insert(0, str(Path(__file__).parent.parent / "knowledge"))
from _patterns import FIX, LEARNED  # noqa: E402


def main() -> None:
    home, url = Path(sys.argv[1]), sys.argv[2]
    _team.BATCH_EVENTS = 2
    real = _teamdb.publish
    done: list[str] = []

    def publish_then_die(*args: Any) -> bool:
        new = real(*args)
        done.append(args[1])
        if len(done) == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return new

    _teamdb.publish = publish_then_die  # type: ignore[assignment]
    k = Knowledge.open(home, workspace_root=home / "ws", base=False, auto_prune=False, team=url, team_interval=0)
    for pattern, kind, n in ((LEARNED, EventKind.MANUAL, 3), (FIX, EventKind.ACCEPTED, 2)):
        for _ in range(n):
            k.record(Event(kind, pattern, k.workspace_id, time.time()))
    k.flush()
    assert k.team is not None
    k.team.sync()
    print("not killed", flush=True)


if __name__ == "__main__":
    main()
