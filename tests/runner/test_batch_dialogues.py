"""Multi-turn items in batch mode: one batch per turn, in order, each later turn carrying the earlier
questions and the model's own earlier answers; real SDKs against the loopback batch stubs."""
from __future__ import annotations

import json
import re

import pytest
from batch_env import MODELS, responses, table, use_registry
from batch_stubs import BatchStub, conversation, request_text
from dialogue_items import DIALOGUE, fill_dialogue
from dialogue_items import png as plate_png

from eduart_core.cli import main
from eduart_core.store import Store


def _label(text: str) -> str:
    return re.search(r"(TURN-[A-Z]+|SOLO):", text).group(1)


def _answer(protocol: str, line: dict) -> str:
    return json.dumps({"Answers": [{"id": "A"}], "motivation": f"reply to {_label(request_text(protocol, line))}"})


@pytest.mark.parametrize("provider", ["openai", "gemini", "bedrock"])
@pytest.mark.slow  # a batch round trip per turn
def test_dialogue_turns_go_one_batch_per_turn_with_the_models_own_earlier_answers(store: Store, s3_url, tmp_path,
                                                                                   monkeypatch, provider):
    fill_dialogue(store)
    with BatchStub(s3_endpoint=s3_url, answer=_answer) as stub:
        use_registry(monkeypatch, tmp_path, stub.url, s3_url, bedrock_min=1)
        assert main(["run", "--db", str(store.path), "--batch", "--model", MODELS[provider], "--condition", "both",
                     "--quiet", "--poll-interval", "0.02"]) == 0
        jobs = sorted(stub.jobs.values(), key=lambda j: j.created)
    labels = [sorted({_label(request_text(j.protocol, ln)) for ln in j.lines}) for j in jobs]
    # the first wave holds the first turn and the lone item; each later turn waits for the previous one
    assert sorted(map(tuple, labels[:2])) == [("SOLO",), ("TURN-ONE",)]
    assert labels[2:] == [["TURN-TWO"], ["TURN-THREE"]]
    assert all(len(j.lines) == 2 for j in jobs)  # both conditions pooled per turn
    png = plate_png()
    for line in jobs[3].lines:
        talk = conversation(jobs[3].protocol, line)
        assert [(role, image is not None) for role, _text, image in talk] == [
            ("user", True), ("assistant", False), ("user", False), ("assistant", False), ("user", False)]
        assert [_label(talk[i][1]) for i in (0, 2, 4)] == ["TURN-ONE", "TURN-TWO", "TURN-THREE"]
        assert json.loads(talk[1][1])["motivation"] == "reply to TURN-ONE"  # the model's own earlier answers
        assert json.loads(talk[3][1])["motivation"] == "reply to TURN-TWO"
        assert talk[0][2] == png  # the image goes once, with the first turn that shows it
    rows = responses(store)
    assert sorted((r["item_id"], r["condition"]) for r in rows) == sorted(
        (i["item_id"], c) for i in DIALOGUE for c in ("default", "motivation"))
    assert all(r["error"] is None and r["batch_job_id"] for r in rows)
    turns = {r["turn"] for r in table(store, "batch_jobs")}
    assert turns == {0, 1, 2, 3}


@pytest.mark.slow  # a batch round trip per turn
def test_turns_after_a_turn_that_failed_for_good_are_recorded_not_asked(store: Store, s3_url, tmp_path, monkeypatch):
    fill_dialogue(store)
    with BatchStub(s3_endpoint=s3_url, answer=_answer) as stub:
        stub.outcome = lambda job: {"fail": lambda cid, i: "TURN-ONE" in request_text(job.protocol, job.lines[i])}
        use_registry(monkeypatch, tmp_path, stub.url, s3_url)
        assert main(["run", "--db", str(store.path), "--batch", "--model", "stub-gpt", "--quiet",
                     "--poll-interval", "0.02"]) == 1
        asked = [_label(request_text(j.protocol, ln)) for j in stub.jobs.values() for ln in j.lines]
    assert sorted(asked) == ["SOLO", "TURN-ONE", "TURN-ONE"]  # asked, resubmitted once, never followed
    errors = {r["item_id"]: r["error"] for r in responses(store) if r["error"]}
    assert set(errors) == {"d-3", "d-1", "d-2"}
    assert "stub refused" in errors["d-3"] and "not asked: the previous turn" in errors["d-1"]
    # a later resume with --retry-errors asks the failed turn again, then the turns after it, in order
    with BatchStub(s3_endpoint=s3_url, answer=_answer) as stub:
        use_registry(monkeypatch, tmp_path, stub.url, s3_url)
        launch = table(store, "batch_jobs")[0]["launch_id"]
        assert main(["run", "--db", str(store.path), "--resume", launch, "--retry-errors", "--quiet",
                     "--poll-interval", "0.02"]) == 0
        waves = [[_label(request_text(j.protocol, ln)) for ln in j.lines]
                 for j in sorted(stub.jobs.values(), key=lambda j: j.created)]
    assert waves == [["TURN-ONE"], ["TURN-TWO"], ["TURN-THREE"]]
    answered = {r["item_id"] for r in responses(store) if r["error"] is None}
    assert answered == {"solo", "d-3", "d-1", "d-2"}


@pytest.mark.parametrize("provider", ["openai", "gemini", "bedrock"])
def test_options_that_are_images_go_labelled_in_order_after_the_item_image(store: Store, s3_url, tmp_path,
                                                                          monkeypatch, provider):
    from batch_stubs import question_parts
    from format_items import COLOURS, PIECES, fill, png

    fill(store)
    with BatchStub(s3_endpoint=s3_url, answer=lambda protocol, line: '{"Answers": [{"id": "C"}]}') as stub:
        use_registry(monkeypatch, tmp_path, stub.url, s3_url, bedrock_min=1)
        assert main(["run", "--db", str(store.path), "--batch", "--dataset", "muse", "--model", MODELS[provider],
                     "--items", "item_id=p1", "--quiet", "--poll-interval", "0.02"]) == 0
        (job,) = stub.jobs.values()
    parts = question_parts(job.protocol, job.lines[0])
    kinds = [kind for kind, _ in parts]
    item_first = ["text", "image"] if provider != "bedrock" else ["image", "text"]  # as each online adapter
    assert kinds == item_first + ["text", "image"] * 3
    texts = [v for k, v in parts if k == "text"]
    assert PIECES["question_text"] in texts[0] and texts[1:] == ["Option A:", "Option B:", "Option C:"]
    scene = png(COLOURS["scene.png"], (200, 100))
    assert [v for k, v in parts if k == "image"] == [scene] + [png(COLOURS[f"piece_{c}.png"]) for c in "abc"]
    (row,) = responses(store)
    assert row["image_sent"] and row["error"] is None and row["batch_job_id"] == job.id
