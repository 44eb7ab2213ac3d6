"""Imports at disk speed: `import-responses` streams its file under the file and text limits and
summarises skips; both importers commit in batches, so a SIGKILL keeps what was committed and the
next run adds only the rest; the cycle collector, paused during an import, comes back as it was;
files are read to their end (a pipe too); the JSON check walks a clean value without allocating
per node.
Real CLI (in process and as a killed subprocess), real DuckDB stores in tmp_path; made-up items."""
from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import tracemalloc
import weakref
from pathlib import Path

import pytest
from runner_items import fill_store

from eduart_core.cli import main
from eduart_core.gcpause import batch_done, collector_paused
from eduart_core.jsonsafe import BadInput, check_value, loads, read_bytes
from eduart_core.store import Store
from eduart_core.text import plain

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"dataset": "demo", "item_id": "0001", "model": "my-vlm", "condition": "default",
        "raw_response": '{"Answers": [{"id": "A"}]}'}


def _write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _import(store: Store, path: Path, *extra: str) -> int:
    return main(["import-responses", str(path), "--db", str(store.path), *extra])


def _count(store: Store, table: str = "responses") -> tuple[int, int]:
    with store.connect(read_only=True) as con:
        return con.execute(f"SELECT count(*), count(DISTINCT {'run_id || request_key' if table == 'responses' else '*'})"
                           f" FROM {table}").fetchone()


def test_text_over_the_limit_skips_its_line_naming_the_variable(store, tmp_path, capsys):
    fill_store(store)
    path = _write(tmp_path / "outside.jsonl", [json.dumps(GOOD), json.dumps({**GOOD, "item_id": "0002",
                                                                             "raw_response": "x" * 300_000})])
    assert _import(store, path) == 2
    err = capsys.readouterr().err
    assert ("outside.jsonl:2: raw_response of 300,000 characters exceeds the limit of 200,000 characters "
            "(EDUART_MAX_TEXT_CHARS)") in err
    assert _count(store)[0] == 1


def test_a_file_over_the_limit_is_refused_at_once_in_one_line(store, tmp_path, capsys, monkeypatch):
    fill_store(store)
    path = _write(tmp_path / "outside.jsonl", [json.dumps({**GOOD, "motivation": f"line {i} " + "y" * 500})
                                               for i in range(400)])  # about 260 kB
    monkeypatch.setenv("EDUART_MAX_FILE_MB", "0.1")
    assert _import(store, path) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "exceeds the limit of 0.1 MB (EDUART_MAX_FILE_MB)" in err and "nothing imported" in err
    assert _count(store)[0] == 0


def test_skips_are_summarised_first_twenty_named_then_counted(store, tmp_path, capsys):
    fill_store(store)
    lines = [json.dumps(GOOD)] + [json.dumps({**GOOD, "item_id": f"no-such-{i}"}) for i in range(45)]
    assert _import(store, _write(tmp_path / "outside.jsonl", lines)) == 2
    out, err = capsys.readouterr()
    assert "46 line(s): 1 new response(s), 0 already stored, 45 skipped" in out
    err = err.splitlines()
    assert err[0] == "skipped 45 line(s):"
    named = [line for line in err if line.startswith("  outside.jsonl:")]
    assert len(named) == 20 and named[0].startswith("  outside.jsonl:2: no item no-such-0")
    assert err[-1].startswith("  ... and 25 more line(s) skipped")


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "eduart_core", *args]


def _kill_after(argv: list[str], marker: str, wanted: int) -> None:
    """Start the CLI, read its progress lines, SIGKILL it once a line says ``wanted`` or more
    ``marker`` (a number before the marker word)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(_cli(*argv), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:
            words = line.replace(",", "").split()
            if marker in words and int(words[words.index(marker) - 1]) >= wanted:
                break
        else:
            raise AssertionError("the import ended before it could be killed")
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(30)
        proc.stderr.close()


@pytest.mark.slow  # a real kill
def test_import_responses_killed_mid_way_keeps_its_batches_and_the_next_run_adds_the_rest(store, tmp_path, capsys):
    fill_store(store, 3)  # 21 items
    lines = [json.dumps({**GOOD, "item_id": f"{n % 21 + 1:04d}", "model": f"vlm-{n // 21 % 20}",
                         "raw_response": json.dumps({"Answers": [{"id": "ABC"[n % 3]}], "n": n})})
             for n in range(3000)]
    path = _write(tmp_path / "outside.jsonl", lines)
    _kill_after(["import-responses", str(path), "--db", str(store.path), "--batch", "150"], "stored", 450)
    kept = _count(store)[0]
    assert 450 <= kept < 3000 and kept % 150 == 0  # whole batches only
    with store.connect(read_only=True) as con:  # none of the killed import's runs claims to be complete
        assert con.execute("SELECT count(*) FROM runs WHERE status <> 'running'").fetchone()[0] == 0
    assert main(["stats", "--db", str(store.path)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("notice: the import of outside.jsonl into dataset") and "is interrupted" in err
    assert f"python -m eduart_core import-responses {path}" in err  # how to finish it
    assert _import(store, path, "--batch", "150") == 0
    assert f"3000 line(s): {3000 - kept} new response(s), {kept} already stored, 0 skipped" in capsys.readouterr().out
    assert _count(store) == (3000, 3000)  # every line once
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM scores").fetchone()[0] == 6000  # strict and paper for each
        assert con.execute("SELECT DISTINCT status FROM runs").fetchall() == [("completed",)]
    assert main(["stats", "--db", str(store.path)]) == 0
    assert "notice" not in capsys.readouterr().err


def _layout(root: Path, n_items: int, models: int) -> int:
    """A published-layout folder of made-up radio items and ``models`` x 2 conditions of answers."""
    meta = root / "dataset" / "metadata"
    meta.mkdir(parents=True)
    files = 0
    for i in range(n_items):
        item_id = f"{i + 1:04d}"
        (meta / f"{item_id}.json").write_text(json.dumps({
            "type": "multiple_choice_radio", "question_text": f"Which invented colour does panel {item_id} use?",
            "choices": [{"id": "A", "text": "ochre"}, {"id": "B", "text": "teal"}],
            "answers": [{"id": "A", "description": "ochre"}], "language": "en", "has_image": False,
            "image": None}), encoding="utf-8")
        for m in range(models):
            for condition in ("default", "motivation"):
                folder = root / "answers" / f"acme_made-up-{m}" / condition
                folder.mkdir(parents=True, exist_ok=True)
                answer = "AB"[(i + m) % 2]
                (folder / f"{item_id}.json").write_text(json.dumps({
                    "question_id": item_id, "llm_answer": [{"id": answer}],
                    "raw_response": json.dumps({"Answers": [{"id": answer}]}), "input_tokens": 10,
                    "output_tokens": 2}), encoding="utf-8")
                files += 1
    return files


def _page_notices(page: str | None = None) -> list[str]:
    """The import notices a page of the app shows (AppTest on app.py, the store from EDUART_DB)."""
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    if page:
        at.switch_page(page).run()
    return [w.value for w in at.warning if "import of dataset" in w.value]


@pytest.mark.slow  # a real kill
def test_import_eduart_killed_mid_way_keeps_its_batches_and_the_next_run_adds_the_rest(store, tmp_path, capsys,
                                                                                      monkeypatch):
    root = tmp_path / "eduart"
    files = _layout(root, 60, 8)  # 960 answer files
    _kill_after(["import-eduart", str(root), "--db", str(store.path), "--batch", "60"], "new", 180)
    kept = _count(store)[0]
    assert 180 <= kept < files and kept % 60 == 0
    with store.connect(read_only=True) as con:  # none of the killed import's runs claims to be complete
        assert con.execute("SELECT count(*) FROM runs WHERE status <> 'running'").fetchone()[0] == 0
    # stats says so, and the start of the next command (any command) says how to finish it
    assert main(["stats", "--db", str(store.path)]) == 0
    out, err = capsys.readouterr()
    finish = f"python -m eduart_core import-eduart {root} --dataset eduart"
    assert "in progress)" in out.splitlines()[2] and f"{kept:,} answer(s) so far" in out
    assert err.startswith("notice: the import of dataset eduart is interrupted") and finish in err
    assert main(["review-status", "--db", str(store.path)]) in (0, 2)
    assert finish in capsys.readouterr().err
    with store.connect(read_only=True) as con:
        started = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    monkeypatch.setenv("EDUART_DB", str(store.path))
    assert _page_notices("pages/07_inspector.py") == _page_notices() == [plain(
        f"The import of dataset eduart is interrupted: {started} run(s) hold {kept:,} answer(s) so far and are marked "
        "in progress; finish it by running the same import again: python -m eduart_core import-eduart eduart "
        "--dataset eduart")]  # the folder by its name: no machine path on a page
    assert main(["import-eduart", str(root), "--db", str(store.path), "--batch", "60"]) == 0
    assert f"16 run(s) from 8 model(s); {files - kept} new response(s)" in capsys.readouterr().out
    assert _count(store) == (files, files)
    with store.connect(read_only=True) as con:
        totals = con.execute("SELECT count(*), sum(input_tokens) FROM runs WHERE status = 'completed'").fetchone()
    assert totals == (16, 10 * files)  # every run's totals recounted over all its answers
    assert main(["stats", "--db", str(store.path)]) == 0
    out, err = capsys.readouterr()
    assert "in progress" not in out and "notice" not in err


def test_a_finished_answer_file_import_marks_its_runs_completed_and_leaves_no_notice(store, tmp_path, capsys):
    from eduart_core.importers.unfinished import notices

    fill_store(store, 1)
    path = _write(tmp_path / "outside.jsonl", [json.dumps({**GOOD, "item_id": f"{n % 7 + 1:04d}", "model": f"vlm-{n // 7}",
                                                           "raw_response": json.dumps({"Answers": [{"id": "A"}]})})
                                               for n in range(21)])
    assert _import(store, path, "--batch", "5") == 0
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT DISTINCT status FROM runs").fetchall() == [("completed",)]
        assert con.execute("SELECT count(*) FROM audit_events WHERE action = 'import-responses'").fetchone()[0] == 1
    assert notices(store) == []


def test_a_finished_import_marks_its_runs_completed_and_leaves_no_notice(store, tmp_path, capsys):
    from eduart_core.importers.unfinished import notices

    root = tmp_path / "eduart"
    _layout(root, 6, 2)
    assert main(["import-eduart", str(root), "--db", str(store.path), "--batch", "5"]) == 0
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT DISTINCT status FROM runs").fetchall() == [("completed",)]
    assert notices(store) == []
    assert main(["stats", "--db", str(store.path)]) == 0
    out, err = capsys.readouterr()
    assert "in progress" not in out and "notice" not in err


def test_an_import_hands_the_cycle_collector_back_as_it_found_it(store, tmp_path):
    root = tmp_path / "eduart"
    _layout(root, 6, 2)
    assert gc.isenabled()
    assert main(["import-eduart", str(root), "--db", str(store.path), "--batch", "5"]) == 0
    assert gc.isenabled() and not gc.get_freeze_count()
    (root / "answers" / "acme_made-up-0" / "default" / "0001.json").write_text("{broken", encoding="utf-8")
    gc.disable()  # a caller that runs with the collector off keeps it off
    try:
        with collector_paused():
            with collector_paused():  # pauses nest
                pass
            assert not gc.isenabled()
        assert main(["import-eduart", str(root), "--db", str(store.path)]) == 2  # the broken file is skipped
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(RuntimeError), collector_paused():  # a failure in the middle still hands it back
        raise RuntimeError("stopped")
    assert gc.isenabled() and not gc.get_freeze_count()


def test_a_cycle_made_during_a_batch_is_freed_when_the_batch_is_done():
    class Node:
        pass

    with collector_paused():
        node = Node()
        node.self = node
        gone = weakref.ref(node)
        del node
        assert gone() is not None  # no automatic collection while paused
        batch_done()
        assert gone() is None


def test_a_pipe_is_read_to_its_end(tmp_path):
    fifo = tmp_path / "answers.json"
    os.mkfifo(fifo)
    body = json.dumps({"raw_response": "x" * 200_000}).encode()  # more than one pipe buffer

    def feed():
        with open(fifo, "wb") as out:
            for start in range(0, len(body), 4096):
                out.write(body[start:start + 4096])
                out.flush()

    writer = threading.Thread(target=feed)
    writer.start()
    try:
        assert read_bytes(fifo) == body
    finally:
        writer.join(10)


def test_the_check_walks_a_clean_value_without_allocating_per_node():
    value = {"items": [{"id": str(i), "text": f"option {i} é", "n": i, "share": 0.5, "ok": True, "none": None}
                       for i in range(20_000)]}  # 140,000 nodes
    tracemalloc.start()
    check_value(value, max_text=1_000)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 16_384  # a path string per node would be megabytes
    value["items"][12_345]["text"] = "broken \ud800"
    with pytest.raises(BadInput, match=r"field items\[12345\]\.text: lone surrogate"):
        check_value(value, max_text=1_000)


@pytest.mark.parametrize("text,reason", [
    ('{"a": "\\ud800"}', "field a: lone surrogate"),
    ('{"n": [1, 123456789012345678901234]}', "field n[1]: integer with 24 digits is out of range"),
    ("[" * 70 + "]" * 70, "JSON nested more than 64 levels deep"),
    ('{"t": "' + "y" * 300 + '"}', "field t: text of 300 characters exceeds the limit"),
])
def test_the_quick_scan_never_lets_a_problem_through(text, reason):
    for data in (text, text.encode()):
        with pytest.raises(BadInput, match=reason.replace("[", r"\[").replace("]", r"\]")):
            loads(data, max_text=200)
    assert loads('{"fine": ["\\u00e9", 12345678901234567, 1.5]}', max_text=200) == {
        "fine": ["é", 12345678901234567, 1.5]}
