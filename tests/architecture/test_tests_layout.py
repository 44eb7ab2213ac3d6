"""The tests mirror the library: every test file sits in the folder of what it tests.

What a contributor relies on: the tests of a room are found in one folder (``tests/README.md`` names
each folder), a kit beside the tests that use it, and the root of ``tests/`` holds only what several
folders share. pytest imports test modules by file name (the default import mode, no ``__init__.py``),
so two test files of one name in two folders would not even collect: names stay unique.
"""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

#: What may stay at the root of tests/, and why: shared by several folders (or by pytest itself).
ROOT_FILES = {
    "conftest.py": "pytest's fixtures and the everyday subset, for every folder",
    "batch_env.py": "the batch set-up: the s3_url fixture of conftest, runner, pages and team tests",
    "batch_stubs.py": "the batch control-plane stubs: runner, pages and judges tests",
    "browser_kit.py": "the Streamlit server and Chromium: browser, views and team tests, docs/tools/screenshots.py",
    "demo_kit.py": "the demo store built once and copied: conftest's demo fixtures, docs/tools/screenshots.py",
    "format_items.py": "made-up items of the newer formats: formats, humans and runner tests",
    "judge_fixtures.py": "the written-answer store and rubric: judges, pages and team tests",
    "pg_kit.py": "the PostgreSQL server and databases: conftest's fixtures and most folders",
    "poison.py": "poisoned inputs: importers and store tests",
    "reading.py": "page text as a person reads it: pages and extraction tests",
    "review_fixtures.py": "the extraction demo per test: extraction, pages and team tests, pg_kit",
    "runner_items.py": "small items of every format: runner tests and most folders that run a model",
    "stubs.py": "the loopback model servers: runner tests and most folders that run a model",
    "trial_kit.py": "`team-trial` as a real process: team and browser tests",
    "README.md": "the map of the folders",
}


def test_the_root_of_tests_holds_only_shared_kits_with_their_reason():
    at_root = sorted(p.name for p in TESTS.iterdir() if p.is_file() and not p.name.startswith("."))
    assert [name for name in at_root if name.startswith("test_")] == [], "a test file goes in its room's folder"
    assert [name for name in at_root if name not in ROOT_FILES] == [], "a new shared kit needs its reason here"


def test_every_folder_of_tests_is_named_in_the_readme():
    readme = (TESTS / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"^\| `(\w+)/` \|", readme, re.MULTILINE))
    folders = {p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert sorted(folders - named) == [] and sorted(named - folders) == []


def test_test_file_names_are_unique_across_folders():
    names = Counter(p.name for p in TESTS.rglob("*.py") if "__pycache__" not in p.parts)
    assert sorted(name for name, n in names.items() if n > 1) == []
