"""Python's cycle collector paused around bulk work, collected once per batch instead.

Why: an import of a large folder parses hundreds of thousands of small JSON files into dicts and
lists that live for one batch, while the scoring memos and the items stay alive all along. The
automatic collector starts a pass every few hundred new containers and, every so often, walks
all the long-lived ones too: at 209,040 answer files that was about a fifth of the import's CPU
time, spent finding no cycles (the rows are freed by reference counting). With the collector
paused and one collection after each committed batch, memory stays bounded by the batch (any
cycle a batch made is freed at its end) and that time is saved. What survives a batch's
collection is set aside (``gc.freeze``), so the next collection walks only what is new; it is
handed back to the collector when the pause ends.

Pauses nest and may overlap across threads (the app can run two imports at once): the collector
comes back when the last pause ends, and only if it was running when the first one began.
"""
from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_LOCK = threading.Lock()
_PAUSES = 0
_RESUME = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """The automatic cycle collector off for the block (call ``batch_done`` after each batch)."""
    global _PAUSES, _RESUME
    with _LOCK:
        if _PAUSES == 0:
            _RESUME = gc.isenabled()
            gc.disable()
        _PAUSES += 1
    try:
        yield
    finally:
        with _LOCK:
            _PAUSES -= 1
            if _PAUSES == 0:
                gc.unfreeze()
                if _RESUME:
                    gc.enable()


def batch_done() -> None:
    """One collection: whatever cycles the batch left behind are freed now; the survivors are set
    aside until the pause ends (no later collection of this pause walks them again)."""
    gc.collect()
    gc.freeze()
