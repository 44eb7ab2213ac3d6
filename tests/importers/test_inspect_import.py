"""import-inspect against real Inspect AI logs: Inspect itself runs offline on a small multiple-choice
task with an image and 2 epochs, writes .eval and .json logs, and the studio imports them.

Offline: Inspect's ``mockllm/model`` answers from ``custom_outputs`` whose usage is set, so it never
counts tokens with tiktoken (which would download a vocabulary). Needs ``inspect-ai``
(requirements-harness.txt): skipped without it, unless EDUART_REQUIRE_INSPECT=1 (CI), which fails.
"""
from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import zipfile
from pathlib import Path

import pg_kit
import pytest
from PIL import Image

from eduart_core.cli import main
from eduart_core.store import Store

pytestmark = pytest.mark.slow
pg_server, pg_url, pg_store = pg_kit.pg_server, pg_kit.pg_url, pg_kit.pg_store  # the PostgreSQL test's store

RED = io.BytesIO()
Image.new("RGB", (12, 8), (200, 10, 10)).save(RED, "PNG")
RED_PNG = RED.getvalue()
BLUE = io.BytesIO()
Image.new("RGB", (8, 8), (10, 10, 200)).save(BLUE, "PNG")
BLUE_PNG = BLUE.getvalue()
#: Sample ids that map onto items; "two-images" cannot (an item holds one image).
MAPPED = ["red", "mona", "venus", "david"]
ANSWERS = ["ANSWER: A", "ANSWER: C", "ANSWER: B", "Thinking...\nANSWER: B", "ANSWER: A", "no letter here"]


def _uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode()


def _run_inspect(log_dir: Path, log_format: str) -> Path:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageUser, ContentImage, ContentText, ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import Score, choice, mean, scorer
    from inspect_ai.solver import multiple_choice

    @scorer(metrics=[mean()])
    def brevity():  # a second scorer with numeric values: its own profile
        async def score(state, target):
            return Score(value=round(1 / (1 + len(state.output.completion)), 4))
        return score

    samples = [
        Sample(id="red", input=[ChatMessageUser(content=[ContentText(text="Which colour fills this plate?"),
                                                          ContentImage(image=_uri(RED_PNG))])],
               choices=["Red", "Green", "Blue"], target="A", metadata={"period": "test", "level": 2}),
        Sample(id="mona", input="Who painted the Mona Lisa?", choices=["Raphael", "Leonardo", "Titian"], target="B"),
        Sample(id="venus", input="Who painted the Birth of Venus?", choices=["Botticelli", "Giotto", "Masaccio"],
               target="A"),
        Sample(id="david", input="Who sculpted the David in Florence?", choices=["Donatello", "Michelangelo"],
               target="B"),
        Sample(id="two-images", input=[ChatMessageUser(content=[ContentText(text="Which plate is red?"),
                                                                 ContentImage(image=_uri(RED_PNG)),
                                                                 ContentImage(image=_uri(BLUE_PNG))])],
               choices=["The first", "The second"], target="A"),
    ]
    outputs = []
    for k in range(len(samples) * 2):
        output = ModelOutput.from_content(model="mockllm/model", content=ANSWERS[k % len(ANSWERS)])
        output.usage = ModelUsage(input_tokens=20 + k, output_tokens=4, total_tokens=24 + k)
        outputs.append(output)
    model = get_model("mockllm/model", custom_outputs=outputs)
    task = Task(name="arthistory_mc", dataset=samples, solver=multiple_choice(), scorer=[choice(), brevity()],
                epochs=2)
    logs = eval(task, model=model, log_dir=str(log_dir), log_format=log_format, display="none")
    assert logs[0].status == "success", logs[0].error
    return Path(logs[0].location)


@pytest.fixture(scope="module")
def inspect_logs(tmp_path_factory) -> dict[str, Path]:
    try:
        import inspect_ai  # noqa: F401
    except ImportError:
        if os.environ.get("EDUART_REQUIRE_INSPECT") == "1":
            pytest.fail("EDUART_REQUIRE_INSPECT=1 but inspect_ai is missing (pip install -r requirements-harness.txt)")
        pytest.skip("inspect-ai not installed and EDUART_REQUIRE_INSPECT is unset: Inspect test skipped locally")
    folder = tmp_path_factory.mktemp("inspect-logs")
    return {"eval": _run_inspect(folder / "logs", "eval"), "json": _run_inspect(folder / "logs", "json"),
            "folder": folder / "logs"}


def _inspect_samples(path: Path) -> list:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(path)).samples


def _responses(store: Store) -> list[tuple]:
    with store.connect(read_only=True) as con:
        return con.execute(
            """SELECT u.run_id, r.item_id, r.repetition, r.response_id,
                      max(CASE WHEN s.profile = 'strict' THEN s.score END),
                      max(CASE WHEN s.profile = 'inspect:choice' THEN s.score END)
               FROM responses r JOIN runs u USING (run_id) LEFT JOIN scores s USING (response_id)
               GROUP BY ALL ORDER BY 1, 2, 3""").fetchall()


def _counts(store: Store) -> tuple:
    with store.connect(read_only=True) as con:
        return tuple(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                     for t in ("items", "images", "models", "runs", "responses", "scores"))


def test_every_sample_both_epochs_and_inspects_scores_equal_ours(inspect_logs, tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    code = main(["import-inspect", str(inspect_logs["folder"]), "--db", str(db)])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)  # the two-image sample is named and skipped, in both logs and both epochs
    skipped = [line for line in err.splitlines() if "two-images" in line]
    assert len(skipped) == 4 and all("holds 2 images; an item holds one" in line for line in skipped)
    assert "Inspect scorers as profiles: inspect:brevity, inspect:choice" in out
    store = Store(db)
    rows = _responses(store)
    for kind in ("eval", "json"):
        samples = _inspect_samples(inspect_logs[kind])
        run = f"inspect:{_eval_id(inspect_logs[kind])}"
        mine = {(r[1], r[2]): r for r in rows if r[0] == run}
        expected = {(str(s.id), s.epoch - 1): s for s in samples if s.id in MAPPED}
        assert set(mine) == set(expected)  # every mapped sample, both epochs as repeats 0 and 1
        assert {rep for _, rep in mine} == {0, 1}
        for key, sample in expected.items():
            inspect_value = 1.0 if sample.scores["choice"].value == "C" else 0.0
            assert mine[key][5] == inspect_value     # Inspect's score, stored under inspect:choice
            assert mine[key][4] == inspect_value     # ours (strict) on the same answer agrees
            with store.connect(read_only=True) as con:
                brevity = con.execute("SELECT score FROM scores WHERE response_id = ? AND profile = "
                                      "'inspect:brevity'", [mine[key][3]]).fetchone()[0]
            assert brevity == pytest.approx(sample.scores["brevity"].value)  # each scorer under its own profile
    strict = [r[4] for r in rows]
    assert 0.0 in strict and 1.0 in strict  # the answers were mixed: agreement is not all-right or all-wrong


def _eval_id(path: Path) -> str:
    from inspect_ai.log import read_eval_log

    return read_eval_log(str(path), header_only=True).eval.eval_id


def test_items_images_and_model_kept_and_reimport_adds_nothing(inspect_logs, tmp_path):
    db = tmp_path / "s.duckdb"
    main(["import-inspect", str(inspect_logs["eval"]), str(inspect_logs["json"]), "--db", str(db)])
    store = Store(db)
    before = _counts(store)
    assert main(["import-inspect", str(inspect_logs["folder"]), "--db", str(db)]) == 2
    assert _counts(store) == before
    with store.connect(read_only=True) as con:
        items = {r[0]: (json.loads(r[1]), r[2]) for r in con.execute(
            "SELECT item_id, CAST(record AS TEXT), image_hash FROM items WHERE dataset = 'arthistory_mc' "
            "AND is_current").fetchall()}
        model = con.execute("SELECT provider, api_model_id FROM models WHERE model = 'mockllm/model'").fetchone()
        repeats = con.execute("SELECT DISTINCT repetition FROM responses ORDER BY 1").fetchall()
    assert sorted(items) == sorted(MAPPED)
    red, red_hash = items["red"]
    assert red["has_image"] and red_hash == hashlib.sha256(RED_PNG).hexdigest()  # content-addressed
    assert red["question_text"] == "Which colour fills this plate?"
    assert [c["text"] for c in red["choices"]] == ["Red", "Green", "Blue"] and red["answers"][0]["id"] == "A"
    assert red["tags"] == {"period": "test", "level": 2}
    assert model == ("mockllm", "model")
    assert repeats == [(0,), (1,)]


def test_cut_eval_and_newer_format_named_one_line_each_rest_imported(inspect_logs, tmp_path, capsys):
    bad = tmp_path / "bad"
    bad.mkdir()
    data = inspect_logs["eval"].read_bytes()
    (bad / "cut.eval").write_bytes(data[: len(data) // 2])
    log = json.loads(inspect_logs["json"].read_text())
    log["version"] = 99
    (bad / "future.json").write_text(json.dumps(log))
    with zipfile.ZipFile(inspect_logs["eval"]) as archive:
        assert "header.json" in archive.namelist()
    db = tmp_path / "s.duckdb"
    code = main(["import-inspect", str(bad), str(inspect_logs["eval"]), "--db", str(db)])
    out, err = capsys.readouterr()
    assert code == 2
    lines = [line.strip() for line in err.splitlines()]
    assert any(line.startswith(f"{bad / 'cut.eval'}: Inspect's reader refuses the log") for line in lines), err
    assert any(line.startswith(f"{bad / 'future.json'}: Inspect's reader refuses the log") for line in lines), err
    assert "Traceback" not in err
    assert _counts(Store(db))[4] == len(MAPPED) * 2  # the good log imported: every mapped sample, 2 epochs


def test_show_scores_reads_the_inspect_profile(inspect_logs, tmp_path, capsys):
    db = tmp_path / "s.duckdb"
    main(["import-inspect", str(inspect_logs["eval"]), "--db", str(db)])
    capsys.readouterr()
    assert main(["show", "scores", "--db", str(db), "--dataset", "arthistory_mc", "--profile", "inspect:choice",
                 "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["item_id"] for r in rows} == set(MAPPED) and {r["profile"] for r in rows} == {"inspect:choice"}
    assert all(r["n_repeats"] == 2 for r in rows)


@pytest.mark.postgres
def test_postgres_store_imports_the_same(inspect_logs, pg_store):
    from eduart_core.importers.inspect_import import import_inspect
    from eduart_core.store.scores import load_scores

    report = import_inspect(pg_store, [inspect_logs["eval"]])
    assert report.responses_added == len(MAPPED) * 2 and report.n_skipped == 2
    again = import_inspect(pg_store, [inspect_logs["eval"]])
    assert again.responses_added == 0 and again.items_added == 0
    keys = ["item_id", "repetition"]
    ours = load_scores(pg_store, "strict", "arthistory_mc", include_repetitions=True).set_index(keys)["score"]
    theirs = load_scores(pg_store, "inspect:choice", "arthistory_mc", include_repetitions=True).set_index(keys)["score"]
    assert len(ours) == len(MAPPED) * 2
    assert ours.sort_index().equals(theirs.sort_index())


def test_an_interrupted_import_is_named_and_finished_by_running_it_again(inspect_logs, tmp_path, capsys):
    import subprocess
    import sys

    db = tmp_path / "s.duckdb"
    log = inspect_logs["eval"]
    done = subprocess.run([sys.executable, "-m", "eduart_core", "import-inspect", str(log), "--db", str(db)],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr  # the two-image sample
    store = Store(db)
    with store.transaction() as con:  # as a kill between two batches leaves it
        con.execute("UPDATE runs SET status = 'running'")
    capsys.readouterr()
    main(["stats", "--db", str(db)])
    err = capsys.readouterr().err
    assert "is interrupted" in err and f"python -m eduart_core import-inspect {log}" in err, err
    assert main(["import-inspect", str(log), "--db", str(db)]) == 2
    capsys.readouterr()
    main(["stats", "--db", str(db)])
    assert "notice:" not in capsys.readouterr().err
