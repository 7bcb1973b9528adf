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
what the session has made since. Loading collects the young generations as
usual, but makes no full collection (:func:`serving` until :func:`loaded`): the
one that came while the imports piled up (~50,000 objects) held the GIL for
~20 ms in the loading thread while the early front relayed the editor's
requests on the main thread, and found ~250 objects of garbage, which now
stay. Loading with the collector off altogether left the server 7-10 MiB
larger at rest (the imports' young garbage piled up too). Only a process that
called :func:`serving` is touched: a test that builds servers in its own
process keeps Python's defaults.
"""

from __future__ import annotations

import gc

_serving = False
_full_every: int | None = None
"""The oldest generation's threshold, set aside while loading (``None``: not loading)."""
NO_FULL = 1 << 30
"""A threshold for the oldest generation that is never reached: no full collection while loading."""


def serving() -> None:
    """This process is a server or one of its workers: no full collection until :func:`loaded` freezes it."""
    global _serving, _full_every  # noqa: PLW0603 - one flag per process
    _serving = True
    if _full_every is None:
        young, middle, _full_every = gc.get_threshold()
        gc.set_threshold(young, middle, NO_FULL)


def loaded() -> None:
    """What is loaded stays for the process's life: out of every later full collection.

    A no-op unless :func:`serving` was called. Called again when more long-lived state
    arrives (the knowledge store opened): each call costs a young collection, no full scan.
    """
    global _full_every  # noqa: PLW0603 - one flag per process
    if not _serving:
        return
    gc.collect(1)
    gc.freeze()
    if _full_every is not None:
        young, middle, _ = gc.get_threshold()
        gc.set_threshold(young, middle, _full_every)
        _full_every = None
