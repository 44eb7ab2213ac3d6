"""A format is one module: no code outside `eduart_core/formats/` and `eduart_core/vocab.py` spells a format name.

What a contributor relies on: adding a format is its module (plus a prompt file), never a hunt for
the places that branch on format names. So every string constant in the library and the pages
(plain strings, the pieces of f-strings, dictionary keys, comparisons) is checked against the names
of the registry; code that needs a format's name takes it from the registry or from `vocab`.
"""
from __future__ import annotations

import ast
from pathlib import Path

from eduart_core import formats

ROOT = Path(__file__).resolve().parents[2]
#: Where format knowledge lives: the registry's modules and the vocabulary.
HOMES = ("eduart_core/formats/", "eduart_core/vocab.py")
#: String constants equal to a format name that are not about the format, each with its reason.
ALLOWED: dict[tuple[str, str], str] = {
    ("eduart_core/store/pg_connection.py", "numeric"): "PostgreSQL's NUMERIC column type, not the answer format",
}


def _modules() -> list[Path]:
    return sorted([*(ROOT / "eduart_core").rglob("*.py"), *(ROOT / "pages").rglob("*.py")])


def _spelled(path: Path, names: set[str]) -> list[tuple[int, str]]:
    """(line, name) of every string constant of the module equal to a format name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return sorted((node.lineno, node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names)


def test_no_module_outside_the_formats_spells_a_format_name():
    names = {f.name for f in formats.all_formats()}
    assert len(names) >= 10
    found = []
    for path in _modules():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(HOMES):
            continue
        found += [f"{rel}:{line}: {name!r}" for line, name in _spelled(path, names) if (rel, name) not in ALLOWED]
    assert not found, ("format names spelled outside eduart_core/formats/ and vocab.py (ask the format's "
                       "registry entry instead):\n" + "\n".join(found))


def test_the_allowed_exceptions_are_still_needed():
    names = {f.name for f in formats.all_formats()}
    for (rel, name), reason in ALLOWED.items():
        assert reason
        assert name in {n for _, n in _spelled(ROOT / rel, names)}, f"{rel} no longer spells {name!r}: drop the exception"


def test_the_check_sees_f_strings_keys_and_comparisons(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('x = {"true_false": 1}\nif t == "numeric":\n    y = f"{t}-open_text"\n'
                      "z = f\"{'select_errors'}\"\n")
    spelled = {name for _, name in _spelled(sample, {f.name for f in formats.REGISTRY})}
    assert spelled == {"true_false", "numeric", "select_errors"}  # a name inside a longer text is not the name
