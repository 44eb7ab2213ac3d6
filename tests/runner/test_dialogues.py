"""Multi-turn items: turns of a dialogue are asked in order within one
conversation per model and condition, each request carrying the earlier questions and the model's
own earlier answers. Real CLI, real store, real SDKs over HTTP to the stub servers. Made-up items."""
from __future__ import annotations

import json

import pytest
from dialogue_items import fill_dialogue
from stubs import StubServer

from eduart_core.cli import main
from eduart_core.dialogues import dialogue_turns
from eduart_core.store import Store


def _answer(info) -> str:
    """Answer A, naming the question it answers, so each reply can be recognised in later turns."""
    label = info.user_text.split(":")[0].rsplit("\n", 1)[-1]
    return json.dumps({"Answers": [{"id": "A"}], "motivation": f"reply to {label}"})


def _adhoc(stub: StubServer, store: Store, *extra: str) -> int:
    return main(["run", "--db", str(store.path), "--provider", "openai_compatible", "--base-url",
                 f"{stub.url}/v1", "--model-id", "stub-model", "--quiet", "--backoff", "0.05", *extra])


def _turn(requests, label: str, condition: str):
    """The one request asking ``label`` under ``condition`` (the motivation schema asks for a motivation)."""
    found = [r for r in requests if f"{label}:" in r.user_text
             and ("motivation" in r.schema["properties"]) == (condition == "motivation")]
    assert len(found) == 1, (label, len(found))
    return found[0]


def _check_conversation(requests, condition: str) -> None:
    """The exact messages of each turn: earlier questions, the model's own replies, then the question."""
    one, two, three = (_turn(requests, label, condition) for label in ("TURN-ONE", "TURN-TWO", "TURN-THREE"))
    assert one.time <= two.time <= three.time
    assert [m["role"] for m in one.messages] == ["user"]
    assert one.image is not None
    reply_one = _answer(one)
    assert [(m["role"], m["image"] is not None) for m in two.messages] == [
        ("user", True), ("assistant", False), ("user", False)]
    assert two.messages[0]["text"] == one.user_text and two.messages[1]["text"] == reply_one
    assert two.user_text.count("TURN-") == 1 and "TURN-TWO" in two.user_text
    assert [(m["role"], m["image"] is not None) for m in three.messages] == [
        ("user", True), ("assistant", False), ("user", False), ("assistant", False), ("user", False)]
    assert [m["text"] for m in three.messages[:4]] == [one.user_text, reply_one, two.user_text, _answer(two)]
    assert three.messages[0]["image"] == one.image  # the image travels once, with the turn that showed it
    assert all(r.system == one.system for r in (two, three))


def test_dialogue_turns_carry_the_earlier_questions_and_the_models_own_answers(store):
    fill_dialogue(store)
    with StubServer(answer=_answer) as stub:
        assert _adhoc(stub, store, "--condition", "both", "--concurrency", "4", "--run-id", "talk") == 0
        seen = list(stub.requests)
    assert len(seen) == 8
    _check_conversation(seen, "default")
    _check_conversation(seen, "motivation")
    solo = _turn(seen, "SOLO", "default")
    assert [m["role"] for m in solo.messages] == ["user"]

    frame = dialogue_turns(store, "demo", "plate", condition="default")
    assert list(frame["item_id"]) == ["d-3", "d-1", "d-2"] and list(frame["turn"]) == [1, 2, 3]
    assert frame["question"].str.startswith("TURN-").all()
    assert [json.loads(a)["motivation"] for a in frame["answer"]] == ["reply to TURN-ONE", "reply to TURN-TWO",
                                                                      "reply to TURN-THREE"]
    assert list(frame["strict_score"]) == [1.0, 1.0, 1.0] and frame["error"].isna().all()
    assert len(dialogue_turns(store, "demo", "plate")) == 6  # both conditions
    assert dialogue_turns(store, "demo", "nope").empty


@pytest.mark.parametrize("model,protocol", [("gemini-3.5-flash", "gemini"), ("claude-haiku-4.5", "bedrock")])
def test_gemini_and_bedrock_send_the_conversation(store, monkeypatch, model, protocol):
    fill_dialogue(store)
    with StubServer(answer=_answer) as stub:
        monkeypatch.setenv("GEMINI_API_KEY", "gem-test-key-000000")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", stub.url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIATESTTESTTEST0000")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "test-secret-000000000")
        monkeypatch.setenv("AWS_REGION", "us-east-1")
        monkeypatch.setenv("AWS_ENDPOINT_URL_BEDROCK_RUNTIME", stub.url)
        assert main(["run", "--db", str(store.path), "--model", model, "--quiet", "--items", "dialogue=plate"]) == 0
        seen = list(stub.requests)
    assert {r.protocol for r in seen} == {protocol} and len(seen) == 3
    _check_conversation(seen, "default")


def test_a_failed_turn_stops_the_dialogue_and_resume_continues_it(store, capsys):
    fill_dialogue(store)
    with StubServer(answer=_answer) as stub:
        stub.fault_for = lambda info: {"kind": "status", "status": 400} if "TURN-TWO:" in info.user_text else None
        assert _adhoc(stub, store, "--run-id", "broken") == 1  # exit 1: some requests failed
        assert [r.user_text.split(":")[0].rsplit("\n", 1)[-1] for r in stub.requests if "TURN" in r.user_text] \
            == ["TURN-ONE", "TURN-TWO"]  # turn three is never asked
        frame = dialogue_turns(store, "demo", "plate")
        assert frame["error"].notna().tolist() == [False, True, True]
        assert "HTTP 400" in frame.loc[1, "error"]
        assert frame.loc[2, "error"] == "not asked: the previous turn (broken__openai_compatible_stub-model__" \
                                        "default/d-1) has no answer"
        # resuming without --retry-errors asks nothing; with it, turn two and then turn three
        assert _adhoc(stub, store, "--resume", "broken") == 1
        assert len(stub.requests) == 3
        stub.fault_for = None
        assert _adhoc(stub, store, "--resume", "broken", "--retry-errors") == 0
        asked = stub.requests[3:]
    assert [r.user_text.split(":")[0].rsplit("\n", 1)[-1] for r in asked] == ["TURN-TWO", "TURN-THREE"]
    assert asked[1].messages[3]["text"] == _answer(asked[0])  # the new answer of turn two, not the error
    frame = dialogue_turns(store, "demo", "plate")
    assert frame["error"].isna().all() and list(frame["strict_score"]) == [1.0, 1.0, 1.0]


def test_a_later_turn_brings_its_earlier_turns_and_the_cache_is_per_conversation(store):
    fill_dialogue(store)
    with StubServer(answer=_answer) as stub:
        assert _adhoc(stub, store, "--items", "item=d-2", "--run-id", "first") == 0
        labels = sorted(r.user_text.split(":")[0].rsplit("\n", 1)[-1] for r in stub.requests)
        assert labels == ["TURN-ONE", "TURN-THREE", "TURN-TWO"]
        assert _adhoc(stub, store, "--items", "dialogue=plate", "--run-id", "second") == 0
        assert len(stub.requests) == 3  # the same conversation again: every turn from the cache
    frame = dialogue_turns(store, "demo", "plate")
    assert len(frame) == 3  # one run per launch; the latest response per model and condition
    with store.connect(read_only=True) as con:
        assert con.execute("SELECT count(*) FROM responses WHERE run_id LIKE 'second%'").fetchone()[0] == 3


def test_the_offline_chance_model_answers_a_dialogue(store, capsys, monkeypatch):
    fill_dialogue(store)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dryrun-0000000000")
    assert main(["run", "--db", str(store.path), "--model", "gpt-5.5", "--items", "dialogue=plate", "--dry-run"]) == 0
    line = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("gpt-5.5"))
    one_turn = main(["run", "--db", str(store.path), "--model", "gpt-5.5", "--items", "item=d-3", "--dry-run"])
    single = next(ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("gpt-5.5"))
    assert one_turn == 0 and int(line.split()[5]) > 3 * int(single.split()[5])  # later turns resend the talk
    assert main(["run", "--db", str(store.path), "--model", "chance", "--quiet"]) == 0
    frame = dialogue_turns(store, "demo", "plate", model="chance")
    assert len(frame) == 3 and frame["error"].isna().all()
