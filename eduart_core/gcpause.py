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
import sys
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


_SETTLED_AT = 0  # len(sys.modules) at the last `settle_imports` freeze


def settle_imports() -> bool:
    """Set aside (``gc.freeze``) what is alive once new modules were imported: True when it froze.

    Why: the app's imports (Streamlit, pandas, pyarrow, scipy, the views) leave about 250,000
    long-lived objects the cycle collector can reach, and each of its full passes walks them all:
    on the Runs page at published scale one such pass took about 0.2 s of a 1 s profile switch,
    finding nothing (modules, classes and functions live as long as the process). Frozen, they are
    never walked again; the data the pages compute stay with the collector. The app calls this at
    the start of every run; it freezes only when the number of loaded modules grew since the last
    freeze (the first run, a page's first imports), a handful of times per process. What is frozen
    also holds whatever data is alive at that moment: reference counting still frees it, only a
    reference cycle among it waits for an unfreeze (the frozen set is not a pile of every rerun's
    data). A pause ending (`collector_paused`) unfreezes everything; the next new
    import freezes again.
    """
    global _SETTLED_AT
    loaded = len(sys.modules)
    if loaded == _SETTLED_AT:
        return False
    with _LOCK:
        if _PAUSES:  # an import's pause owns the frozen set until it ends
            return False
        gc.freeze()
        _SETTLED_AT = loaded
    return True
