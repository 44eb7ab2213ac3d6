"""The docs describe the code as it is: every view, command, answer format and page is named in the
README or in eduart_core/CONTRACTS.md, and every dotted name CONTRACTS gives resolves to a module
or an attribute (a renamed function fails here, not in a reader's notebook)."""
from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import eduart_core
from eduart_core import views, vocab
from eduart_core.cli import build_parser
from eduart_core.formats import REGISTRY
from pages import menu

ROOT = Path(__file__).resolve().parents[1]
CONTRACTS = (ROOT / "eduart_core" / "CONTRACTS.md").read_text(encoding="utf-8")
README = (ROOT / "README.md").read_text(encoding="utf-8")
ROOMS = {m.name for m in pkgutil.iter_modules(eduart_core.__path__)}
DOTTED = re.compile(r"^([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)")


def _named(word: str) -> bool:
    pattern = rf"(?<![\w-]){re.escape(word)}(?![\w-])"
    return bool(re.search(pattern, README) or re.search(pattern, CONTRACTS))


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


def test_contracts_describe_the_present():
    assert not re.search(r"supersede|\bissue \d+|\(as before\)", CONTRACTS, re.IGNORECASE)
    assert len(CONTRACTS) < 40_000


@pytest.mark.parametrize("kind", ["view", "command", "format", "page"])
def test_every_registered_thing_is_named_in_the_readme_or_contracts(kind):
    if kind == "view":
        wanted = list(views.VIEWS)
    elif kind == "command":
        wanted = list(build_parser()._subparsers._group_actions[0].choices)
    elif kind == "format":
        wanted = [f.name for f in REGISTRY]
        assert wanted == list(vocab.FORMATS)
    else:
        wanted = [spec.title for spec in menu.PAGES.values()]
    assert [name for name in wanted if not _named(name)] == []


def test_the_readme_names_every_providers_key_and_address_variable():
    """Read from the provider table, so a new variable cannot go unmentioned."""
    from eduart_core.providers.adapters import ADAPTERS

    names = {name for a in ADAPTERS.values() for group in a.secrets for name in group}
    names |= {name for a in ADAPTERS.values() for name in a.base_url_env}
    assert {"OPENAI_COMPATIBLE_API_KEY", "OPENAI_BASE_URL"} <= names
    assert not sorted(name for name in names if f"`{name}`" not in README)
    assert "`EDUART_MODELS`" in README
