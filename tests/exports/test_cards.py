"""Exam cards: `export-card` then `import-card` into a fresh store gives back every model's score per
format exactly; `export-eee` validates against the Every Eval Ever schema (0.3.0, the copy kept in
tests/exports/data) for every demo dataset with scores; the page escapes text; a broken card is one line."""
from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path

import jsonschema
import pytest

from eduart_core import views
from eduart_core.cli import main
from eduart_core.selection import Selection
from eduart_core.store import Store

SCHEMA = Path(__file__).parent / "data" / "every_eval_ever-0.3.0.eval.schema.json"
JUDGE = "judge:sim-judge-faithful/open-v1"


def _validator() -> jsonschema.Draft7Validator:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    assert schema["version"] == "0.3.0"
    return jsonschema.Draft7Validator(schema)


def _export_card(db: Path, out: Path, dataset: str, profile: str = "strict") -> dict:
    assert main(["export-card", "--db", str(db), "--dataset", dataset, "--profile", profile, "--out", str(out)]) == 0
    return json.loads((out / f"{dataset}.card.json").read_text(encoding="utf-8"))


def _type_means(db: Path, dataset: str, profile: str = "strict") -> dict:
    frame = views.type_means(views.Source.of(str(db)), Selection(dataset=dataset, profile=profile), all_conditions=True)
    return {(r.model, r.condition, r.type): (int(r.n), r.mean, r.ci_low, r.ci_high) for r in frame.itertuples()}


@pytest.mark.parametrize("dataset,profile", [("demo", "strict"), ("demo", "paper"), ("demo-vqa", "strict"),
                                             ("eduart2026", "strict")])
def test_export_card_then_import_card_reproduces_every_score_per_format(demo_db, tmp_path, dataset, profile):
    card = _export_card(demo_db, tmp_path / "out", dataset, profile)
    fresh = tmp_path / "fresh.duckdb"
    assert main(["import-card", str(tmp_path / "out" / f"{dataset}.card.json"), "--db", str(fresh)]) == 0
    before, after = _type_means(demo_db, dataset, profile), _type_means(fresh, dataset)
    assert len(before) == len(card["scores"]["rows"]) > 0
    assert after == before  # n, mean and interval of every model, condition and format, exactly
    flags = views.dataset_flags(views.Source.of(str(fresh)), dataset)
    assert flags.aggregate_only
    # the models come back with their family, provider and API model id
    stored = views.models(views.Source.of(str(fresh))).set_index("display_name")
    for model in card["models"]:
        row = stored.loc[model["model"]]
        assert (row["family"], row["provider"], row["api_model_id"]) == (
            model["family"], model["provider"], model["api_model_id"])
    # importing again replaces the rows: the same numbers, no duplicates
    assert main(["import-card", str(tmp_path / "out" / f"{dataset}.card.json"), "--db", str(fresh)]) == 0
    assert _type_means(fresh, dataset) == before


def test_card_says_what_it_holds(demo_db, tmp_path):
    card = _export_card(demo_db, tmp_path, "demo")
    items = views.VIEWS["items_by_format"].fn(views.Source.of(str(demo_db)), Selection(dataset="demo"))
    assert card["item_bank"]["size"] == int(items["items"].sum())
    assert len(card["item_bank"]["sha256"]) == 64
    assert {f["type"] for f in card["formats"]} == set(items["type"])
    assert {lang["language"] for lang in card["languages"]} == {"en", "it"}
    assert card["scoring"]["profile"] == "strict" and card["scoring"]["rule_sets"]
    assert "scoring code sha256:" in card["scoring"]["scorer_version"]
    assert card["conditions"] == ["default", "motivation"]
    for model in card["models"]:
        assert model["provider"] and model["asked_first"] and model["repeats"] >= 1 and model["sampling"]
    assert "95% Wilson" in card["scores"]["what"] and "n = items" in card["scores"]["what"]
    assert "95% t interval" in card["overall"]["what"]
    assert card["human_baseline"] and "people" in card["human_baseline"]["what"]
    assert {r["type"] for r in card["human_baseline"]["rows"]} >= {"all", "multiple_choice_radio"}
    assert card["errata"]["current"] and card["judge"] is None
    page = (tmp_path / "demo.card.html").read_text(encoding="utf-8")
    assert card["item_bank"]["sha256"] in page and "Human baseline" in page and "<script" not in page


def test_the_item_bank_counts_source_items_and_variants_apart(demo_db):
    from eduart_core.cards.build import build_card
    from eduart_core.store.items import load_items

    card = build_card(str(demo_db), "demo-robust", "strict")
    stored = load_items(Store(demo_db), "demo-robust")
    sources = stored[stored["variant"].isna()]
    assert card["item_bank"]["size"] == len(sources) == sum(f["items"] for f in card["formats"])
    assert sum(card["item_bank"]["variants"].values()) == len(stored) - len(sources) > 0
    lines = sorted(f"{i} {h}" for i, h in zip(sources["item_id"], sources["content_hash"]))
    assert card["item_bank"]["sha256"] == hashlib.sha256("\n".join(lines).encode()).hexdigest()


def test_the_page_escapes_text_from_data(demo_db, tmp_path):
    from eduart_core.cards.build import build_card
    from eduart_core.cards.page import render_page

    card = copy.deepcopy(build_card(str(demo_db), "demo", "strict"))
    card["models"][0]["model"] = "<script>alert(1)</script>"
    card["dataset"]["title"] = "<img src=x onerror=alert(1)>"
    page = render_page(card)
    assert "<script" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


@pytest.mark.slow
def test_a_judge_card_carries_the_calibration(demo_db, tmp_path):
    card = _export_card(demo_db, tmp_path, "demo-open", JUDGE)
    assert card["judge"]["profile"] == JUDGE and card["judge"]["calibration"]
    assert card["scoring"]["profile_version"] and card["scoring"]["warning"]  # not passed: the card says so
    assert main(["export-eee", "--db", str(demo_db), "--dataset", "demo-open", "--profile", JUDGE,
                 "--out", str(tmp_path / "eee")]) == 0
    validator = _validator()
    for path in (tmp_path / "eee").rglob("*.json"):
        log = json.loads(path.read_text(encoding="utf-8"))
        assert list(validator.iter_errors(log)) == []
        assert log["evaluation_results"][0]["metric_config"]["llm_scoring"]["judges"]


def _datasets(db: Path) -> list[str]:
    frame = views.datasets(views.Source.of(str(db)))
    return sorted(frame["dataset"])


@pytest.mark.slow
def test_export_eee_validates_for_every_demo_dataset(demo_db, tmp_path, capsys):
    validator = _validator()
    exported = set()
    for dataset in _datasets(demo_db):
        out = tmp_path / dataset
        code = main(["export-eee", "--db", str(demo_db), "--dataset", dataset, "--out", str(out)])
        if code != 0:  # a dataset without scores (extraction, per-task studies): one line, exit 2
            assert code == 2
            assert len(capsys.readouterr().err.strip().splitlines()) == 1
            continue
        files = sorted(out.rglob("*.json"))
        assert files
        for path in files:
            parts = path.relative_to(out).parts
            assert parts[0] == "data" and parts[1] == dataset and len(parts) == 5
            log = json.loads(path.read_text(encoding="utf-8"))
            errors = [e.message for e in validator.iter_errors(log)]
            assert errors == [], (path, errors[:3])
            for result in log["evaluation_results"]:
                assert 0.0 <= result["score_details"]["score"] <= 1.0
        exported.add(dataset)
    assert exported >= {"demo", "demo-gold", "demo-muse", "demo-open", "demo-robust", "demo-vqa", "eduart2026"}


def test_the_schema_check_can_fail(demo_db):
    """The kept schema really refuses a log missing what the schema requires."""
    from eduart_core.cards.build import build_card
    from eduart_core.cards.eee import eee_logs

    _, log = eee_logs(build_card(str(demo_db), "demo", "strict"))[0]
    broken = copy.deepcopy(log)
    del broken["model_info"]["additional_details"]
    broken["retrieved_timestamp"] = 1700000000
    messages = " ".join(e.message for e in _validator().iter_errors(broken))
    assert "additional_details" in messages and "is not of type 'string'" in messages


def test_export_eee_scores_equal_the_card(demo_db, tmp_path):
    card = _export_card(demo_db, tmp_path, "demo")
    assert main(["export-eee", "--db", str(demo_db), "--dataset", "demo", "--out", str(tmp_path / "eee")]) == 0
    found, validator = {}, _validator()
    for path in (tmp_path / "eee").rglob("*.json"):
        log = json.loads(path.read_text(encoding="utf-8"))
        assert list(validator.iter_errors(log)) == []
        for result in log["evaluation_results"]:
            details = result["metric_config"]["additional_details"]
            if "format" in details:
                interval = result["score_details"]["uncertainty"]["confidence_interval"]
                found[(log["model_info"]["name"], details["condition"], details["format"])] = (
                    result["score_details"]["uncertainty"]["num_samples"], result["score_details"]["score"],
                    interval["lower"], interval["upper"])
    assert found == {(r["model"], r["condition"], r["type"]): (r["n"], r["mean"], r["ci_low"], r["ci_high"])
                     for r in card["scores"]["rows"]}


@pytest.mark.parametrize("content,words", [
    ('{"card": "eduart-exam-card", "card_version": 1, "models": [', "not valid JSON"),
    ('{"card": "something else"}', "not an exam card"),
    ('{"card": "eduart-exam-card", "card_version": 99}', "card version 99"),
    ('{"card": "eduart-exam-card", "card_version": 1, "dataset": {"name": "x"}, "models": [{"model": "M", '
     '"model_key": "m"}], "scores": {"rows": [{"model": "M", "condition": "default", "type": "true_false", '
     '"n": 3, "mean": "high"}]}}', "scores.rows[0].mean: expected a number"),
    ('{"card": "eduart-exam-card", "card_version": 1, "dataset": {"name": "x"}, "models": [], '
     '"scores": {"rows": [{"model": "M", "condition": "default", "type": "true_false", "n": 3, "mean": 0.5}]}}',
     "not among the card's models"),
])
def test_a_broken_card_is_one_line_and_writes_nothing(tmp_path, capsys, content, words):
    card = tmp_path / "broken.card.json"
    card.write_text(content, encoding="utf-8")
    fresh = tmp_path / "fresh.duckdb"
    assert main(["import-card", str(card), "--db", str(fresh)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(card) in err[0] and words in err[0] and "Traceback" not in err[0]
    assert not fresh.exists()


def test_a_card_never_lands_on_a_dataset_with_answers(demo_copy, tmp_path, capsys):
    _export_card(demo_copy, tmp_path, "demo-vqa")
    assert main(["import-card", str(tmp_path / "demo-vqa.card.json"), "--db", str(demo_copy),
                 "--dataset", "demo"]) == 2
    assert "already holds items or runs" in capsys.readouterr().err
    assert main(["import-card", str(tmp_path / "demo-vqa.card.json"), "--db", str(demo_copy),
                 "--dataset", "vqa-card"]) == 0
    assert _type_means(demo_copy, "vqa-card") == _type_means(demo_copy, "demo-vqa")
    from eduart_core.store.team import load_events

    events = load_events(Store(demo_copy))
    imported = events[events["action"] == "card imported"]
    assert list(imported["target"]) == ["vqa-card"] and imported["actor_name"].iloc[0]


def test_export_card_refuses_unknown_dataset_and_profile(demo_db, tmp_path, capsys):
    assert main(["export-card", "--db", str(demo_db), "--dataset", "nope", "--out", str(tmp_path)]) == 2
    assert main(["export-card", "--db", str(demo_db), "--dataset", "demo", "--profile", "judge:x/y",
                 "--out", str(tmp_path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 2 and "nope" in lines[0] and "judge:x/y" in lines[1]


@pytest.mark.postgres
def test_import_card_into_postgresql(demo_db, tmp_path, pg_url):
    _export_card(demo_db, tmp_path, "demo")
    assert main(["import-card", str(tmp_path / "demo.card.json"), "--db", pg_url]) == 0
    assert _type_means(pg_url, "demo") == _type_means(demo_db, "demo")


@pytest.mark.postgres
@pytest.mark.slow
def test_export_card_reads_alike_from_postgresql(demo_db, tmp_path, pg_url):
    """The card's own store read (run dates, settings, repeats) and every section, on PostgreSQL."""
    from eduart_core.cards.build import build_card

    assert main(["store-copy", "--from", str(demo_db), "--to", pg_url, "--quiet"]) == 0
    ours, theirs = build_card(str(demo_db), "demo", "strict"), build_card(pg_url, "demo", "strict")
    for part in ("item_bank", "formats", "languages", "prompt_hashes", "conditions", "scores", "human_baseline"):
        assert ours[part] == theirs[part], part
    strip = ("asked_first", "asked_last")  # timestamps print alike up to the backends' text of a time
    assert [{k: v for k, v in m.items() if k not in strip} for m in ours["models"]] == \
           [{k: v for k, v in m.items() if k not in strip} for m in theirs["models"]]
