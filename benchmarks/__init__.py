"""Benchmarks that drive the app's pages with Streamlit's test harness (AppTest).

They live outside ``eduart_core`` because the library never imports Streamlit; the CLI still runs them
as `python -m eduart_core bench pages|review|team` and `bench analysis --study` (``eduart_core.bench.load``
finds them by module path). The library's own benchmarks stay in ``eduart_core/bench/``.
"""
