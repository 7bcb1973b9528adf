"""Python's cycle collector in a server process: no long pause once it serves.

A full collection scans every object of the oldest generation, and a server's
are long-lived: pygls', lsprotocol's and cattrs' classes, the grammars' and
the abstraction's tables, the knowledge index (~66,000 objects once loaded).
On a loaded 2-core machine each full collection stopped fixlore's event loop
for 20-35 ms (a real-fix replay: six in 300 events, each catching whatever
request, pull or publish was under way).

So once a serving process has loaded (:func:`loaded`: the server built, the
knowledge store open, a worker's first job done) what exists is frozen
(``gc.freeze``: out of the collector's sight for good, still freed by
reference counting), after a collection of the young generations so that
little garbage is frozen with it: from then on a full collection scans only
what the session has made since. Loading itself collects as usual: loading
with the collector off left the server 7-10 MiB larger at rest (the imports'
garbage piled up before the one collection), and measured no better in the
start-up window. Only a process that called :func:`serving` is touched: a
test that builds servers in its own process keeps Python's defaults.
"""

from __future__ import annotations

import gc

_serving = False


def serving() -> None:
    """This process is a server or one of its workers: :func:`loaded` freezes what it has loaded."""
    global _serving  # noqa: PLW0603 - one flag per process
    _serving = True


def loaded() -> None:
    """What is loaded stays for the process's life: out of every later full collection.

    A no-op unless :func:`serving` was called. Called again when more long-lived state
    arrives (the knowledge store opened): each call costs a young collection, no full scan.
    """
    if not _serving:
        return
    gc.collect(1)
    gc.freeze()
