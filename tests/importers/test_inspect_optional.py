"""Inspect AI is optional: the studio imports and runs without it, only ``import-inspect`` names it, and
the mapping rules (what an Inspect sample becomes) hold without Inspect installed."""
from __future__ import annotations

import ast
import base64
import json
import subprocess
import sys
from pathlib import Path

import pytest

from eduart_core.importers.inspect_map import SampleProblem, answer_text, decode_image, item_record, read_letters

ROOT = Path(__file__).resolve().parents[2]
#: Blocks ``import inspect_ai`` in a fresh interpreter, as if it were not installed.
WITHOUT_INSPECT = "import sys; sys.modules['inspect_ai'] = None; sys.modules['inspect_ai.log'] = None\n"


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_INSPECT + code], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.slow
def test_the_library_and_its_cli_import_without_inspect():
    done = _python("import eduart_core.cli as cli, eduart_core.api, eduart_core.views\n"
                   "cli.build_parser()\n"
                   "import eduart_core.importers.inspect_import\n"  # importable too: Inspect is read lazily
                   "assert sys.modules.get('inspect_ai') is None, 'inspect_ai was imported'\n"
                   "print('ok')")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_import_inspect_without_inspect_names_the_install_in_one_line(tmp_path):
    log = tmp_path / "run.eval"
    log.write_bytes(b"PK")
    done = _python("from eduart_core.cli import main\n"
                   f"sys.exit(main(['import-inspect', {str(log)!r}, '--db', {str(tmp_path / 's.duckdb')!r}]))")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: import-inspect reads Inspect AI logs with Inspect's own reader: pip install inspect-ai"]


def test_only_the_reader_module_imports_inspect():
    """Nothing in the studio (library, pages, app) imports inspect_ai but the log reader, and the benchmark
    that has Inspect write its large log (inside the function that writes it)."""
    importers = []
    for path in [*ROOT.joinpath("eduart_core").rglob("*.py"), *ROOT.joinpath("pages").rglob("*.py"),
                 ROOT / "app.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(n == "inspect_ai" or n.startswith("inspect_ai.") for n in names):
                importers.append(path.relative_to(ROOT).as_posix())
    assert sorted(set(importers)) == ["eduart_core/bench/inspect_logs.py", "eduart_core/importers/inspect_logs.py"]


def test_requirements_keep_inspect_out_of_the_core():
    assert "inspect" not in (ROOT / "requirements.txt").read_text().lower()
    assert "inspect-ai" in (ROOT / "requirements-harness.txt").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert "EDUART_REQUIRE_INSPECT=1" in ci
    assert ci.index("pip install -r requirements-harness.txt") < ci.index('pytest -m "slow or browser or postgres"')


# ---------------------------------------------------------------- mapping rules

def _record(**changes):
    args = {"sample_id": "s1", "text": "Who painted the Mona Lisa?", "choices": ["Raphael", "Leonardo"],
            "target": ["B"], "metadata": {"period": "Renaissance", "nested": {"a": 1}, "": "x"}, "n_images": 0,
            "language": "en", "source": "task"}
    args.update(changes)
    return item_record(**args)


def test_a_multiple_choice_sample_becomes_a_radio_item():
    record = _record()
    assert record["type"] == "multiple_choice_radio"
    assert record["choices"] == [{"id": "A", "text": "Raphael"}, {"id": "B", "text": "Leonardo"}]
    assert record["answers"] == [{"id": "B", "description": "Leonardo"}]
    assert record["tags"] == {"period": "Renaissance", "nested": '{"a": 1}'}
    assert _record(target=["leonardo"])["answers"][0]["id"] == "B"  # the option's text names it too


@pytest.mark.parametrize("changes, reason", [
    ({"choices": None}, "it has no choices"),
    ({"target": ["A", "B"]}, "it has 2 targets"),
    ({"target": ["Z"]}, "its target 'Z' is not one of the options A, B"),
    ({"n_images": 2}, "its input holds 2 images; an item holds one"),
    ({"text": "  "}, "its input has no text"),
])
def test_samples_that_cannot_map_say_why(changes, reason):
    with pytest.raises(SampleProblem, match=reason.replace("(", r"\(")):
        _record(**changes)


def test_images_must_be_embedded():
    with pytest.raises(SampleProblem, match="not embedded"):
        decode_image("https://example.org/plate.png")
    assert decode_image("data:image/png;base64," + base64.b64encode(b"\x89PNG bytes").decode()) == b"\x89PNG bytes"
    with pytest.raises(SampleProblem, match="not valid base64"):
        decode_image("data:image/png;base64,***")


@pytest.mark.parametrize("completion, letters", [
    ("ANSWER: B", ["B"]), ("I think...\nANSWER: C.", ["C"]), ("answer: a", ["A"]), ("ANSWER: A, C", ["A", "C"]),
    ("First ANSWER: A\nthen\nANSWER: B", ["B"]), ("The answer is B", None), ("", None),
])
def test_our_reading_of_the_answer_line(completion, letters):
    assert read_letters(completion) == letters


def test_answer_text_keeps_the_models_words_beside_our_answer():
    raw, kept = answer_text("Leonardo painted it.\nANSWER: B")
    assert json.loads(raw) == {"Answers": [{"id": "B"}]} and kept == "Leonardo painted it.\nANSWER: B"
    assert answer_text("no letter") == ("no letter", None)
    assert answer_text(None) == ("", None)
