"""Python's cycle collector in a server process: no long pause once it serves.

A full collection scans every object of the oldest generation, and a server's
are long-lived: pygls', lsprotocol's and cattrs' classes, the grammars' and
the abstraction's tables, the knowledge index (~66,000 objects once loaded).
On a loaded 2-core machine each full collection stopped fixlore's event loop
for 20-35 ms (a real-fix replay: six in 300 events, each catching whatever
request, pull or publish was under way), and start-up ran five more while
importing (22-66 ms, the GIL held while the early front relayed).

So the server loads with the collector off (:func:`loading`: imports make
long-lived objects, next to no garbage), and once loaded freezes what exists
(``gc.freeze``: out of the collector's sight for good, still freed by reference
counting) and turns it back on (:func:`loaded`): from then on a full collection
scans only what the session has made since. A worker process collects while it
loads (its first job may be a fix's extraction, whose garbage would be frozen
with it) and freezes once loaded. Only a process that called :func:`loading`
is touched: a test that builds servers in its own process keeps Python's
defaults.
"""

from __future__ import annotations

import gc

_serving = False


def loading(*, collect: bool = False) -> None:
    """This process serves and is about to load; unless ``collect``, no collection until :func:`loaded`."""
    global _serving  # noqa: PLW0603 - one flag per process
    _serving = True
    if not collect:
        gc.disable()


def loaded() -> None:
    """What is loaded stays: freeze it and collect again (a no-op unless :func:`loading` was called).

    Called again when more long-lived state arrives (the knowledge store opened): each call is
    cheap (no scan), and moves what exists then out of the full collections' way.
    """
    if not _serving:
        return
    gc.freeze()
    gc.enable()
