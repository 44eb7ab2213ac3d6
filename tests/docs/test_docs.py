"""The docs describe the code as it is: every view, command, answer format, provider and setting
appears in the manual's generated reference (read back from the pages and compared with the
registries, so nothing is listed by hand twice); every page of the menu is named in the hand-written
manual; every dotted name eduart_core/CONTRACTS.md gives resolves to a module or an attribute (a
renamed function fails here, not in a reader's notebook); the README is the short way in, with the
two commands. `mkdocs build --strict` runs in CI (`.ci/run`) and in the slow test at the end."""
from __future__ import annotations

import importlib
import importlib.util
import json
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import eduart_core
from eduart_core import views, vocab
from eduart_core.cli import build_parser
from eduart_core.formats import REGISTRY
from pages.ui import menu

ROOT = Path(__file__).resolve().parents[2]
CONTRACTS = (ROOT / "eduart_core" / "CONTRACTS.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: the hand-written pages of the manual, by path under docs/ (the generator's folder holds no page)
MANUAL = {path.relative_to(ROOT / "docs").as_posix(): path.read_text(encoding="utf-8")
          for path in sorted((ROOT / "docs").rglob("*.md")) if "tools" not in path.relative_to(ROOT / "docs").parts}
ROOMS = {m.name for m in pkgutil.iter_modules(eduart_core.__path__)}
DOTTED = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)")
RUN_COMMAND = "pip install -r requirements.txt && streamlit run app.py"
TEST_COMMAND = "pip install -r requirements.txt && ruff check . && mypy eduart_core && pytest"


def _generator():
    """docs/tools/reference.py, the mkdocs hook that makes the reference pages (a script, not a package)."""
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "docs" / "tools" / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


REFERENCE = _generator()
GENERATED = REFERENCE.reference_pages()


def _named(word: str, text: str) -> bool:
    return bool(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text))


def _dotted_names() -> list[str]:
    """Backticked names in CONTRACTS that start at a room of eduart_core (or at pages)."""
    found = []
    text = re.sub(r"```.*?```", "", CONTRACTS, flags=re.DOTALL)  # the map is a picture, not names
    for span in re.findall(r"`([^`]+)`", text):
        match = DOTTED.match(span.strip())
        if match and "/" not in span and (match.group(1).split(".")[0] in ROOMS | {"eduart_core", "pages"}):
            found.append(match.group(1))
    return sorted(set(found))


def _resolves(name: str) -> bool:
    parts = name.split(".")
    if parts[0] in ROOMS:
        parts = ["eduart_core", *parts]
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def test_contracts_name_many_things_and_every_one_resolves():
    names = _dotted_names()
    assert len(names) > 150
    assert [name for name in names if not _resolves(name)] == []


def test_contracts_and_manual_describe_the_present():
    """No history in the docs; CONTRACTS has no size cap (it is the manual's architecture page)."""
    for name, text in {"eduart_core/CONTRACTS.md": CONTRACTS, "README.md": README, **MANUAL}.items():
        assert not re.search(r"supersede|\bissue \d+|\(as before\)", text, re.IGNORECASE), name


def _rows(page: str) -> list[str]:
    """The first cell of every table row of a generated page, without its backticks."""
    return [m.group(1) for m in re.finditer(r"^\| `([^`|]+)` \|", GENERATED[page], re.MULTILINE)]


def _commands(parser, prefix: str = "") -> list[str]:
    """Every command and subcommand of the CLI, as typed (``roles grant``)."""
    found = []
    for action in parser._actions:
        if hasattr(action, "choices") and isinstance(action.choices, dict):
            for name, sub in action.choices.items():
                found += [f"{prefix}{name}", *_commands(sub, f"{prefix}{name} ")]
    return found


@pytest.mark.parametrize("kind", ["view", "command", "format", "provider", "setting"])
def test_the_generated_reference_lists_every_registered_thing(kind):
    """Each reference page is read back and compared with its registry: a thing the generator skips fails."""
    from eduart_core.limits import LIMITS
    from eduart_core.providers.adapters import ADAPTERS
    from eduart_core.settings import SETTINGS

    if kind == "view":
        assert _rows(REFERENCE.VIEWS_PAGE) == list(views.VIEWS)
        recorded = json.loads(REFERENCE.VIEW_COLUMNS.read_text(encoding="utf-8"))  # tests/views/test_show.py keeps it
        assert list(recorded) == [name for name in views.VIEWS if name in recorded]  # no view that is gone
    elif kind == "command":
        wanted = _commands(build_parser())
        assert {"run", "show", "demo", "roles grant", "roles list"} <= set(wanted)
        headings = re.findall(r"^#+ `([^`]+)`$", GENERATED[REFERENCE.COMMANDS_PAGE], re.MULTILINE)
        assert headings == wanted
    elif kind == "format":
        assert [f.name for f in REGISTRY] == list(vocab.FORMATS)
        assert _rows(REFERENCE.FORMATS_PAGE) == [f.name for f in REGISTRY]
    elif kind == "provider":
        page = GENERATED[REFERENCE.PROVIDERS_PAGE]
        assert _rows(REFERENCE.PROVIDERS_PAGE) == list(ADAPTERS)
        names = {name for a in ADAPTERS.values() for group in a.secrets for name in group}
        names |= {name for a in ADAPTERS.values() for name in a.base_url_env}
        assert {"OPENAI_COMPATIBLE_API_KEY", "OPENAI_BASE_URL"} <= names
        assert sorted(name for name in names if f"`{name}`" not in page) == []
        assert "`EDUART_MODELS`" in page
    else:
        wanted = [s.env for s in LIMITS.values()] + [s.env for s in SETTINGS]
        assert sorted(_rows(REFERENCE.SETTINGS_PAGE)) == sorted(wanted)


def test_every_environment_variable_the_code_reads_is_in_the_settings_tables():
    """A quoted ``"EDUART_..."`` name anywhere in the library, the pages or the app is a setting or a
    limit, so the generated settings page cannot miss one."""
    from eduart_core.limits import LIMITS
    from eduart_core.settings import SETTINGS

    known = {s.env for s in LIMITS.values()} | {s.env for s in SETTINGS}
    sources = [*(ROOT / "eduart_core").rglob("*.py"), *(ROOT / "pages").rglob("*.py"), ROOT / "app.py"]
    quoted = {name for path in sources
              for name in re.findall(r"""["'](EDUART_[A-Z0-9_]+)["']""", path.read_text(encoding="utf-8"))}
    assert {"EDUART_DB", "EDUART_MODELS", "EDUART_MAX_FILE_MB"} <= quoted
    assert sorted(quoted - known) == []


def test_every_page_of_the_menu_is_named_in_the_manual():
    """Page titles are not generated: a new page needs a word in a guide (or in the contracts)."""
    text = "\n".join([*MANUAL.values(), CONTRACTS])
    assert [s.title for s in menu.PAGES.values() if not _named(s.title, text)] == []


def _nav_pages(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [page for value in node.values() for page in _nav_pages(value)]
    return [page for item in node for page in _nav_pages(item)]


def test_the_navigation_holds_every_page_and_only_pages_that_exist():
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    assert len(nav) == len(set(nav))
    assert sorted(nav) == sorted({*MANUAL, *GENERATED})


def test_the_readme_is_the_short_way_in_with_the_two_commands():
    """What the studio is, the two commands, a screenshot and the way to the manual, in under 150 lines;
    the test command is the one CI runs first."""
    assert len(README.splitlines()) < 150
    blocks = re.findall(r"```bash\n(.*?)```", README, re.DOTALL)
    assert any(RUN_COMMAND in block for block in blocks) and any(TEST_COMMAND in block for block in blocks)
    assert TEST_COMMAND.replace("pip install", "") in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", README):
        assert (ROOT / image).is_file(), image
    assert re.search(r"!\[[^\]]*\]\(docs/images/[^)]+\.png\)", README)
    assert "mkdocs serve" in README and "docs/index.md" in README
    started = MANUAL["getting-started.md"]
    assert RUN_COMMAND in started and TEST_COMMAND in started


@pytest.mark.slow
def test_the_manual_builds_strictly(tmp_path):
    """`mkdocs build --strict`: a broken link, a missing image or an API name that does not resolve fails."""
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                         cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    views_html = (tmp_path / "site" / "reference" / "views" / "index.html").read_text(encoding="utf-8")
    assert all(f"<code>{name}</code>" in views_html for name in views.VIEWS)
    assert (tmp_path / "site" / "architecture" / "index.html").read_text(encoding="utf-8").count("vocab.FORMATS") >= 1
