"""The pages stay small enough to read: short functions, helpers split by job, one runner facade.

What a maintainer relies on: every function of the app's scripts fits on a screen (at most
`LONGEST` lines), the page helpers live in small modules of ``pages/ui`` (no catch-all module),
and the Runs page asks the runner through its facade only, so the runner's rooms can move."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The most lines a function of app.py or pages/ may take (``end_lineno - lineno + 1``).
LONGEST = 60


def _scripts() -> list[Path]:
    return [ROOT / "app.py", *sorted((ROOT / "pages").rglob("*.py"))]


def test_no_function_of_the_app_is_longer_than_a_screen():
    long = []
    for path in _scripts():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = node.end_lineno - node.lineno + 1
                if lines > LONGEST:
                    long.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    assert long == []


def test_the_catch_all_helper_module_is_gone():
    common = ROOT / "pages" / "common.py"
    assert not common.exists() or len(common.read_text(encoding="utf-8").splitlines()) < 200


def test_the_runs_page_asks_the_runner_through_its_facade_only():
    from pages.ui import menu

    tree = ast.parse((ROOT / menu.PAGES["runs"].script).read_text(encoding="utf-8"))
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    imported |= {f"{node.module}.{a.name}" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
                 for a in node.names}
    imported |= {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    rooms = {m for m in imported if m.startswith(("eduart_core.runner", "eduart_core.providers"))}
    assert rooms <= {"eduart_core.runner", "eduart_core.runner.facade"}, rooms
