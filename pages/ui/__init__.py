"""What the pages share, one small module per job (store handle, sidebar, query string, charts, tables,
downloads, navigation, sign-in, editors, ...).

Why a folder: Streamlit lists every ``*.py`` file directly in ``pages/`` as a page where it serves
that folder by file name (AppTest, a fresh server before `app.serve_our_menu_only`); files in a
subfolder are never listed, so ``pages/`` holds the page files only.
"""
