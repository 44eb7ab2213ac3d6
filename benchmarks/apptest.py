"""AppTest as a server runs pages: one compiled copy of each script.

Why: AppTest compiles app.py and the page on every run (Streamlit's "magic" rewrite of the syntax
tree, ~40 ms per script), which a server does once; the page benchmarks share one script cache so
their numbers are what a user waits for. `--recompile` measures AppTest as it is.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def compiled_once(enabled: bool = True) -> Iterator[None]:
    """Let every AppTest run share one script cache (as a server's runs do), then restore."""
    # deferred: Streamlit's test harness loads only when pages are measured
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test, local_script_runner

    if not enabled:
        yield
        return
    shared = ScriptCache()
    saved = app_test.ScriptCache, local_script_runner.ScriptCache
    app_test.ScriptCache = local_script_runner.ScriptCache = lambda: shared
    try:
        yield
    finally:
        app_test.ScriptCache, local_script_runner.ScriptCache = saved
