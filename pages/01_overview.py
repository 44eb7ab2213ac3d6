"""The Overview's address in the menu Streamlit builds from this folder's file names where it does
(AppTest; `pages.navigate.through_app`): app.py draws the Overview itself, as a function."""
from pages.ui import navigate

navigate.through_app()
