"""The Overview's address in the menu Streamlit builds from this folder's file names on a server's
first run (`pages.common.through_app`): app.py draws the Overview itself, as a function."""
from pages import common

common.through_app()
