"""The suspect-key queue and human score overrides on a real store with a planted wrong key."""
from __future__ import annotations

import json

import pg_kit
import pytest

from eduart_core import suspects
from eduart_core.analysis.keyflags import FLAG_SOURCES, register_flag_source
from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.scoring.item_writes import upsert_items
from eduart_core.scoring.responses import add_responses
from eduart_core.store.items import get_item, item_history
from eduart_core.store.overrides import add_override, load_overrides
from eduart_core.store.runs import create_run, ensure_model
from eduart_core.store.scores import load_responses, load_scores
from eduart_core.store.suspects import raise_flags
from eduart_core.team.identity import local

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL

DATASET = "keys"
STRENGTH = [0.95, 0.9, 0.8, 0.7, 0.45, 0.35, 0.25, 0.15]  # eight models, strongest first


def radio(item_id: str, key: str = "A") -> dict:
    options = ["un affresco", "una tela", "una tavola", "un mosaico"]
    return {"item_id": item_id, "type": "multiple_choice_radio", "language": "it",
            "question_text": f"Domanda {item_id}: che cosa dipinse il maestro?",
            "choices": [{"id": chr(65 + i), "text": t} for i, t in enumerate(options)],
            "answers": [{"id": key, "description": options[ord(key) - 65]}], "has_image": False, "image": None}


def answer(ident: str) -> str:
    return json.dumps({"Answers": [{"id": ident}]})


@pytest.fixture
def keyed_store(store):
    """12 items keyed A; item k07 is miskeyed B (the truth is A): strong models answer A there
    and are marked wrong, weak ones guess B. Item k12 is one nobody gets right."""
    with store.held():  # a fixture's build: one open of the file, not one per write (DuckDB)
        return plant_keys(store)


def plant_keys(store):
    """The dataset of ``keyed_store`` written into ``store``."""
    records = [radio(f"k{i:02d}") for i in range(1, 13)]
    records[6] = radio("k07", key="B")
    upsert_items(store, records, DATASET, origin="test")
    for m, ability in enumerate(STRENGTH):
        key = f"sim-{m}"
        ensure_model(store, key, f"Sim {m}", "Simulated", "offline", None, simulated=True)
        create_run(store, f"run-{m}", DATASET, key, "default", "simulated")
        rows = []
        for i in range(1, 13):
            right = ((i * 7 + m * 3) % 10) / 10 < ability
            if i == 7:
                choice = "A" if ability >= 0.5 else "B"
            elif i == 12:
                choice = "D"
            else:
                choice = "A" if right else "C"
            rows.append({"item_id": f"k{i:02d}", "raw_text": answer(choice)})
        add_responses(store, f"run-{m}", rows)
    return store


def test_flags_lead_from_the_statistics_to_the_queue(keyed_store):
    queue = suspects.suspect_queue(keyed_store, DATASET).set_index("item_id")
    assert "k07" in queue.index
    reasons = queue.loc["k07", "reasons"]
    assert "negative_discrimination" in reasons and "distractor:A" in reasons
    assert queue.loc["k07", "r_pb"] < 0 and "distractors" in queue.loc["k07", "sources"]
    assert "all_fail" in queue.loc["k12", "reasons"]
    assert "k01" not in queue.index or "distractor" not in queue.loc["k01", "reasons"]


def test_detail_shows_key_answers_and_rationales(keyed_store):
    detail = suspects.suspect_detail(keyed_store, DATASET, "k07")
    assert detail["item"]["record"]["answers"][0]["id"] == "B"
    assert len(detail["answers"]) == len(STRENGTH) and set(detail["answers"]["chosen"]) == {"A", "B"}
    counts = detail["options"].set_index("option")["answers"]
    assert counts["A"] == 4 and counts["B"] == 4


def test_an_answer_marking_options_true_or_false_chose_only_the_true_ones(keyed_store):
    ensure_model(keyed_store, "marker", "Marker", "Simulated", "offline", None, simulated=True)
    create_run(keyed_store, "run-marker", DATASET, "marker", "default", "simulated")
    marked = json.dumps({"Answers": [{"id": "A", "text": "TRUE"}, {"id": "B", "text": "FALSE"}]})
    add_responses(keyed_store, "run-marker", [{"item_id": "k01", "raw_text": marked}])
    detail = suspects.suspect_detail(keyed_store, DATASET, "k01")
    answers = detail["answers"].set_index("model")
    assert answers.loc["Marker", "chosen"] == "A"
    counts = detail["options"].set_index("option")["answers"]
    assert "B" not in counts.index  # nobody else chose B on k01 (they answer A or C)


def test_confirming_clears_the_flags_the_reviewer_saw(keyed_store):
    flags = list(suspects.suspect_queue(keyed_store, DATASET).set_index("item_id").loc["k12", "flags"])
    with pytest.raises(UserError, match="enter your name first"):
        suspects.confirm_key(keyed_store, DATASET, "k12", local(""), flags)
    suspects.confirm_key(keyed_store, DATASET, "k12", local("Carla"), flags, note="hard on purpose")
    assert "k12" not in set(suspects.suspect_queue(keyed_store, DATASET)["item_id"])
    review = suspects.suspect_detail(keyed_store, DATASET, "k12")["reviews"].iloc[-1]
    assert review["action"] == "confirm" and review["reviewer"] == "Carla" and review["flags"] == sorted(flags)


def test_correcting_the_key_versions_the_item_and_rescores_every_response(keyed_store):
    before = load_responses(keyed_store, DATASET, "k07")
    strong = before[before["model"] == "Sim 0"].iloc[0]
    assert strong["strict_score"] == 0.0
    flags = list(suspects.suspect_queue(keyed_store, DATASET).set_index("item_id").loc["k07", "flags"])
    with pytest.raises(UserError, match="unchanged"):
        suspects.correct_key(keyed_store, DATASET, "k07", [{"id": "B", "description": "una tela"}], local("Carla"), flags)
    version, rescored = suspects.correct_key(keyed_store, DATASET, "k07",
                                             [{"id": "A", "description": "un affresco"}], local("Carla"), flags,
                                             note="the fresco is right")
    assert version == 2 and rescored == len(STRENGTH)
    after = load_responses(keyed_store, DATASET, "k07")
    assert after[after["model"] == "Sim 0"].iloc[0]["strict_score"] == 1.0
    history = item_history(keyed_store, DATASET, "k07")
    assert list(history["version"]) == [1, 2] and "key corrected by Carla" in history.iloc[1]["note"]
    queue = suspects.suspect_queue(keyed_store, DATASET)
    assert "k07" not in set(queue["item_id"])  # the statistics no longer flag it
    scores = load_scores(keyed_store, dataset=DATASET)
    assert scores[(scores["item_id"] == "k07") & (scores["model"] == "Sim 0")]["score"].iloc[0] == 1.0


def test_other_sources_feed_the_same_queue(keyed_store):
    version = get_item(keyed_store, DATASET, "k03")["version"]
    assert raise_flags(keyed_store, DATASET, [{"item_id": "k03", "item_version": version, "source": "irt",
                                               "reason": "misfit", "detail": "infit 1.9"}]) == 1
    assert raise_flags(keyed_store, DATASET, [{"item_id": "k03", "item_version": version, "source": "irt",
                                               "reason": "misfit", "detail": "again"}]) == 0
    row = suspects.suspect_queue(keyed_store, DATASET).set_index("item_id").loc["k03"]
    assert "irt" in row["sources"] and "misfit" in row["reasons"] and "infit 1.9" in row["details"]
    calls = []
    register_flag_source("test-source", lambda scores, ctx: calls.append(1) or scores.iloc[0:0][["item_id"]]
                         .assign(reason=[], detail=[]))
    try:
        suspects.suspect_queue(keyed_store, DATASET)
        assert calls
    finally:
        FLAG_SOURCES.pop("test-source")


def test_overrides_change_every_statistic_unless_switched_off(keyed_store, tmp_path, capsys):
    responses = load_responses(keyed_store, DATASET, "k07")
    target = responses[responses["model"] == "Sim 0"].iloc[0]
    with pytest.raises(UserError, match="reason"):
        add_override(keyed_store, int(target["response_id"]), 1.0, " ", "Carla")
    with pytest.raises(UserError, match="between 0 and 1"):
        add_override(keyed_store, int(target["response_id"]), 1.5, "why", "Carla")
    add_override(keyed_store, int(target["response_id"]), 1.0, "A is right: the key is wrong", "Carla")
    on = load_scores(keyed_store, dataset=DATASET)
    off = load_scores(keyed_store, dataset=DATASET, overrides=False)
    mask = (on["item_id"] == "k07") & (on["model"] == "Sim 0")
    assert on[mask]["score"].iloc[0] == 1.0 and bool(on[mask]["correct"].iloc[0]) and on[mask]["overridden"].iloc[0]
    assert off[(off["item_id"] == "k07") & (off["model"] == "Sim 0")]["score"].iloc[0] == 0.0
    assert int(on["overridden"].sum()) == 1 and not off["overridden"].any()
    paper = load_scores(keyed_store, profile="paper", dataset=DATASET)
    assert paper[(paper["item_id"] == "k07") & (paper["model"] == "Sim 0")]["score"].iloc[0] == 1.0
    # exported with provenance
    out = tmp_path / "overrides.jsonl"
    assert main(["overrides-export", "--out", str(out), "--db", str(keyed_store.path)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and {r["profile"] for r in rows} == {"strict", "paper"}
    assert rows[0]["reviewer"] == "Carla" and rows[0]["original_score"] == 0.0 and rows[0]["model"] == "Sim 0"
    assert rows[0]["item_id"] == "k07" and rows[0]["reason"].startswith("A is right") and rows[0]["created_at"]
    # withdrawn: the computed score again, the history kept
    add_override(keyed_store, int(target["response_id"]), None, "second look: keep the computed score", "Dario")
    again = load_scores(keyed_store, dataset=DATASET)
    assert again[(again["item_id"] == "k07") & (again["model"] == "Sim 0")]["score"].iloc[0] == 0.0
    assert len(load_overrides(keyed_store, DATASET, "k07")) == 4


def test_the_selection_switch_turns_reviewed_overrides_off_everywhere(keyed_store):
    """One visible switch (sidebar "With reviewed overrides", URL reviewed=0, --no-overrides): the
    views' one read of a dataset carries the human score when on, the computed one when off."""
    import argparse

    from eduart_core import views
    from eduart_core.selection import Selection

    responses = load_responses(keyed_store, DATASET, "k07")
    target = responses[responses["model"] == "Sim 0"].iloc[0]
    add_override(keyed_store, int(target["response_id"]), 1.0, "A is right: the key is wrong", "Carla")
    src = views.Source.of(keyed_store)
    on = views.selected_scores(src, Selection(dataset=DATASET))
    off = views.selected_scores(src, Selection(dataset=DATASET, reviewed=False))
    pick = (on["item_id"] == "k07") & (on["model"] == "Sim 0")
    assert on[pick]["score"].iloc[0] == 1.0 and bool(on[pick]["overridden"].iloc[0])
    pick = (off["item_id"] == "k07") & (off["model"] == "Sim 0")
    assert off[pick]["score"].iloc[0] == 0.0 and not off["overridden"].any()
    assert "computed scores (reviewed overrides off)" in Selection(dataset=DATASET, reviewed=False).scope()
    assert Selection(dataset=DATASET, reviewed=False).to_query() == {"dataset": DATASET, "reviewed": "0"}
    assert Selection.from_query({"reviewed": "0"}) == {"reviewed": False}
    parser = argparse.ArgumentParser()
    Selection.add_arguments(parser)
    assert Selection.from_args(parser.parse_args(["--no-overrides"]), dataset=DATASET).reviewed is False
    assert Selection.from_args(parser.parse_args([]), dataset=DATASET).reviewed is True


def test_the_suspect_queue_view_follows_the_reviewed_switch(keyed_store):
    from eduart_core import views
    from eduart_core.selection import Selection

    responses = load_responses(keyed_store, DATASET, "k07")
    target = responses[responses["model"] == "Sim 0"].iloc[0]  # strong, answered A, marked wrong
    add_override(keyed_store, int(target["response_id"]), 1.0, "A is right: the key is wrong", "Carla")
    src = views.Source.of(keyed_store)
    on = views.suspect_keys(src, Selection(dataset=DATASET)).set_index("item_id")
    off = views.suspect_keys(src, Selection(dataset=DATASET, reviewed=False)).set_index("item_id")
    assert off.loc["k07", "p"] == 0.5  # computed: four of eight right
    assert on.loc["k07", "p"] == 0.625  # the reviewer's point counts


def test_the_study_tables_read_overrides_under_the_same_switch(keyed_store):
    """The Tasks page's lean score rows follow "With reviewed overrides" like every other page."""
    from eduart_core.store.studies import load_item_scores

    responses = load_responses(keyed_store, DATASET, "k07")
    target = responses[responses["model"] == "Sim 0"].iloc[0]
    add_override(keyed_store, int(target["response_id"]), 1.0, "A is right: the key is wrong", "Carla")
    on = load_item_scores(keyed_store, DATASET, "strict")
    off = load_item_scores(keyed_store, DATASET, "strict", overrides=False)
    pick = lambda f: f[(f["item_id"] == "k07") & (f["model"] == "Sim 0")]["score"].iloc[0]  # noqa: E731
    assert (pick(on), pick(off)) == (1.0, 0.0)
    assert len(on) == len(off) == len(load_scores(keyed_store, dataset=DATASET))  # the same responses


def test_an_override_stops_applying_when_the_key_changes(keyed_store):
    responses = load_responses(keyed_store, DATASET, "k07")
    weak = responses[responses["model"] == "Sim 7"].iloc[0]  # chose B, right under the wrong key
    add_override(keyed_store, int(weak["response_id"]), 0.0, "B is wrong", "Carla", profiles=("strict",))
    suspects.correct_key(keyed_store, DATASET, "k07", [{"id": "A", "description": "un affresco"}], local("Carla"), [])
    scores = load_scores(keyed_store, dataset=DATASET)
    row = scores[(scores["item_id"] == "k07") & (scores["model"] == "Sim 7")].iloc[0]
    assert row["score"] == 0.0 and not row["overridden"]  # re-scored against the new key, override not applied
    overrides = load_overrides(keyed_store, DATASET, "k07")
    assert not overrides["applied"].any() and overrides.iloc[0]["current_version"] == 2
