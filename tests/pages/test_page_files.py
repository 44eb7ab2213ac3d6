"""Every page file is named after its URL path and hands itself to app.py when Streamlit runs it alone.

Until a session calls ``st.navigation``, Streamlit serves the ``pages`` folder by file name, so a
shared link opened on a freshly started server reaches the file whose name matches the link
(``pages/11_review.py`` for ``/review``); the page then runs app.py, which draws it in the app's
menu (`pages.ui.navigate.through_app`; the browser test opens such a link on a cold server)."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from pages.ui import menu

ROOT = Path(__file__).resolve().parents[2]
FILE_NAME = re.compile(r"^\d+_(?P<path>[a-z_]+)\.py$")


def _first_statement_after_imports(path: Path) -> str:
    body = ast.parse(path.read_text(encoding="utf-8")).body
    rest = [n for n in body if not isinstance(n, (ast.Import, ast.ImportFrom))
            and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]  # the docstring
    return ast.unparse(rest[0]) if rest else ""


@pytest.mark.parametrize("key", list(menu.PAGES))
def test_a_page_file_is_named_after_its_url_path_and_hands_over_to_the_app(key):
    path = ROOT / menu.PAGES[key].file  # the Overview is a function of app.py: its file is an address
    assert path.exists(), f"no page file for /{key}"
    match = FILE_NAME.match(path.name)
    assert match and match.group("path") == key, path.name
    assert _first_statement_after_imports(path) == "navigate.through_app()", path.name


def test_every_numbered_file_in_pages_is_a_page_of_the_menu():
    numbered = {p.name for p in (ROOT / "pages").glob("*.py") if FILE_NAME.match(p.name)}
    wanted = {Path(s.file).name for s in menu.PAGES.values()}
    assert numbered == wanted


def test_the_page_files_are_numbered_in_menu_order():
    """Listed by name, the folder reads as the menu does (the number is only an order: the URL drops it)."""
    files = [Path(s.file).name for s in menu.PAGES.values()]
    assert files == sorted(files) and len({f.split("_")[0] for f in files}) == len(files)
