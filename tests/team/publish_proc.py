"""A fixlore process that dies by SIGKILL in the middle of publishing (used by the team tests).

Usage: ``python publish_proc.py HOME CONNINFO``. Records five events, puts them
in three outbox batches, and kills itself with SIGKILL right after PostgreSQL
committed the second batch, before the outbox row of that batch is deleted.

``python publish_proc.py HOME CONNINFO many``: records ``MANY`` events, queues
them in batches of 5, prints ``publishing`` and publishes them one by one, to be
killed from outside at any moment.
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

MANY = 600


def many(home: Path, url: str) -> None:
    _team.BATCH_EVENTS = 5
    k = Knowledge.open(home, workspace_root=home / "ws", base=False, auto_prune=False, team=url, team_interval=0)
    for i in range(MANY):
        k.record(
            Event(
                EventKind.MANUAL if i % 2 else EventKind.ACCEPTED,
                LEARNED if i % 3 else FIX,
                k.workspace_id,
                time.time(),
            )
        )
    k.flush()
    assert k.team is not None
    k.team.enqueue()
    print("publishing", flush=True)
    k.team.sync()
    print("not killed", flush=True)


def main() -> None:
    home, url = Path(sys.argv[1]), sys.argv[2]
    if sys.argv[3:] == ["many"]:
        many(home, url)
        return
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
