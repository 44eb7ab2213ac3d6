"""EduArt Studio's library: items, store, scoring, runs, extraction and analysis.

Importable without Streamlit; the app's pages only call into it.
"""
__version__ = "0.1.0"
