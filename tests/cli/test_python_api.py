"""The documented Python API: what the manual's "From Python" section shows works as written.

What a researcher in a notebook relies on: `from eduart_core import Source, Selection, run_view,
VIEWS, scores` gives the numbers `show` prints; `__version__` is the project's version also in a
checkout that was never pip-installed; importing the package stays light.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow


def _readme_block() -> str:
    text = (ROOT / "docs" / "guides" / "scripting.md").read_text(encoding="utf-8")
    section = text.split("## From Python", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def test_the_readme_example_runs_and_gives_the_numbers_of_show(demo_db, capsys):
    import eduart_core
    from eduart_core import views
    from eduart_core.commands.show import render
    from eduart_core.selection import Selection

    code = _readme_block().replace('"data/eduart.duckdb"', repr(str(demo_db)))
    names: dict = {}
    exec(compile(code, "docs/guides/scripting.md", "exec"), names)  # noqa: S102 - our own documentation
    printed = capsys.readouterr().out
    assert "Sim A (strong recogniser)" in printed and "leaderboard" in printed
    board = names["run_view"]("leaderboard", names["src"], names["sel"])
    assert board.equals(views.leaderboard(views.Source.of(str(demo_db)), Selection(dataset="demo")))
    frame = names["frame"]
    assert len(frame) == 88 * 8 and {"model", "condition", "item_id", "score"} <= set(frame.columns)
    assert render(frame, "json") == render(views.run_view("scores", names["src"], names["sel"]), "json")
    assert eduart_core.scores(demo_db, dataset="demo", profile="paper")["profile"].eq("paper").all()
    with pytest.raises(eduart_core.UserError, match="unknown view"):
        eduart_core.run_view("nothing", names["src"], names["sel"])


def test_version_comes_from_the_package_metadata_or_the_checkout(monkeypatch):
    import importlib.metadata

    import eduart_core

    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert eduart_core.__version__ == pyproject

    def not_installed(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", not_installed)
    assert eduart_core._version() == pyproject


def test_importing_the_package_imports_none_of_its_rooms():
    probe = ("import sys, eduart_core, eduart_core.text; "
             "print(sorted(m for m in sys.modules if m.startswith('eduart_core')))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['eduart_core', 'eduart_core.text']"
