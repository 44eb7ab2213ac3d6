"""Simulated respondents: reproducible texts that the real parser and scorer understand."""
from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from eduart_core.answers import parse_answer
from eduart_core.items import validate_item
from eduart_core.simulate import (
    PUBLISHED_MIX,
    SimModel,
    format_counts,
    make_models,
    plan_items,
    simulate_into_store,
    simulate_run,
    synthesise_items,
)
from eduart_core.simulate.formatting import RECOVERABLE
from eduart_core.simulate.placeholders import PLACEHOLDER_IMAGE
from eduart_core.vocab import CONDITIONS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def items() -> list[dict]:
    return synthesise_items(871, seed=3)


@pytest.fixture(scope="module")
def panel(items) -> dict:
    """12 models x 2 conditions on the published-size synthetic set, in memory."""
    plans = plan_items(items, 3)
    return {(m.key, c): simulate_run(m, plans, c, 3) for m in make_models(12, 3) for c in CONDITIONS}


def test_synthetic_items_are_valid_and_follow_the_published_mix(items):
    for record in items:
        validate_item(record, image_exists=lambda path: path == PLACEHOLDER_IMAGE)
    assert Counter(r["type"] for r in items) == Counter(PUBLISHED_MIX)
    assert len({r["item_id"] for r in items}) == 871
    share = sum(r["has_image"] for r in items) / len(items)
    assert 0.40 <= share <= 0.50
    assert {r["language"] for r in items} == {"it", "en"}
    small = format_counts(100)
    assert sum(small.values()) == 100 and all(n >= 5 for n in small.values())
    assert small["multiple_choice_radio"] > small["multiple_choice_check"] > small["select_errors"]


def test_same_seed_gives_the_same_texts_and_another_seed_does_not(items):
    models = make_models(8, 11)
    plans = plan_items(items[:200], 11)
    first = [r.raw_text for m in models for c in CONDITIONS for r in simulate_run(m, plans, c, 11)]
    again = [r.raw_text for m in make_models(8, 11) for c in CONDITIONS
             for r in simulate_run(m, plan_items(items[:200], 11), c, 11)]
    other = [r.raw_text for m in make_models(8, 12) for c in CONDITIONS
             for r in simulate_run(m, plan_items(items[:200], 12), c, 12)]
    assert first == again
    assert sum(a != b for a, b in zip(first, other)) > len(first) // 3


def test_response_texts_parse_with_the_intended_share_of_malformed_ones(panel):
    kinds = Counter()
    for responses in panel.values():
        for r in responses:
            kinds[r.kind] += 1
            parsed = parse_answer(r.raw_text)
            if r.kind in RECOVERABLE:  # fences, prose, {{ }}: the parser must recover the answer
                assert parsed.parse_error is None, r.raw_text
                assert parsed.answers == r.intended, r.raw_text
            elif r.kind == "bare":  # no JSON at all
                assert parsed.parse_error is not None and parsed.answers is None, r.raw_text
            elif r.kind == "truncated":  # at most the complete leading entries survive
                assert parsed.answers is None or parsed.answers == r.intended[:len(parsed.answers)]
    total = sum(kinds.values())
    malformed = total - kinds["clean"]
    assert 0.03 <= malformed / total <= 0.06
    assert {"fence", "prose", "double_brace", "truncated", "bare"} <= set(kinds)


def test_motivation_condition_adds_two_to_four_sentences_in_the_item_language(items, panel):
    language = {r["item_id"]: r["language"] for r in items}
    for (_model, condition), responses in panel.items():
        for r in responses:
            if condition == "default":
                assert r.motivation is None and "motivation" not in r.raw_text
                continue
            sentences = re.findall(r"[.!?](?:\s|$)", r.motivation)
            assert 2 <= len(sentences) <= 4, r.motivation
            if r.kind == "clean":
                assert parse_answer(r.raw_text).motivation == r.motivation
    # opening and reasoning sentences (the closing one may quote the answer, in any language)
    italian = [". ".join(r.motivation.split(". ")[:2]) for r in panel[("sim-a", "motivation")]
               if language[r.item_id] == "it"]
    english = [". ".join(r.motivation.split(". ")[:2]) for r in panel[("sim-a", "motivation")]
               if language[r.item_id] == "en"]
    english_words = re.compile(r"\b(the|of|is|my|to|and|I)\b")
    italian_words = re.compile(r"\b(il|la|le|gli|di|che|è|della|alla)\b", re.IGNORECASE)
    assert all(italian_words.search(m) and not english_words.search(m) for m in italian)
    assert all(english_words.search(m) and not italian_words.search(m) for m in english)
    assert len(set(italian)) > len(italian) * 0.5  # varied, not one canned sentence


def test_a_model_without_motivation_shift_answers_the_same_in_both_conditions(panel):
    model = make_models(12, 3)[1]
    assert model.motivation_shift == 0.0
    default = [r.intended for r in panel[(model.key, "default")]]
    motivation = [r.intended for r in panel[(model.key, "motivation")]]
    assert default == motivation


def test_answers_use_the_schema_of_each_format(items, panel):
    by_id = {r["item_id"]: r for r in items}
    for r in panel[("sim-b", "default")]:
        record = by_id[r.item_id]
        if record["type"].startswith("multiple_choice"):
            assert all(set(a) == {"id"} for a in r.intended)
            assert {a["id"] for a in r.intended} <= {c["id"] for c in record["choices"]}
        elif record["type"] == "true_false":
            assert [a["id"] for a in r.intended] == [c["id"] for c in record["choices"]]
            assert {a["text"] for a in r.intended} <= {"TRUE", "FALSE"}
        elif record["type"] == "select_errors":
            assert all(a["text"] for a in r.intended)
        else:
            assert [a["id"] for a in r.intended] == [a["id"] for a in record["answers"]]


def _strict_means(store, dataset="syn") -> dict[str, float]:
    from eduart_core.store.scores import load_scores

    frame = load_scores(store, "strict", dataset=dataset)
    return frame.groupby("model")["score"].mean().to_dict()


def test_scores_follow_the_abilities_given(store):
    from eduart_core.simulate import add_synthetic_items

    add_synthetic_items(store, "syn", 500, seed=7)
    abilities = [-1.5, -0.5, 0.5, 1.5]
    models = [SimModel(key=f"sim-t{i}", display_name=f"Sim T{i} (ability {a})", ability=a)
              for i, a in enumerate(abilities)]
    result = simulate_into_store(store, "syn", models, seed=7, conditions=["default"])
    assert result["responses"] == 4 * 500
    means = _strict_means(store)
    ordered = [means[m.display_name] for m in models]
    assert all(b - a > 0.04 for a, b in zip(ordered, ordered[1:])), ordered


@pytest.mark.slow
def test_archetypes_show_their_patterns_after_real_scoring(store):
    from eduart_core.simulate import add_synthetic_items
    from eduart_core.store.scores import load_scores

    add_synthetic_items(store, "syn", 600, seed=5)
    models = make_models(8, 5)
    simulate_into_store(store, "syn", models, seed=5)
    frame = load_scores(store, "strict", dataset="syn")
    overall = frame[frame.condition == "default"].groupby("model")["score"].mean()
    names = {m.key: m.display_name for m in models}
    assert overall[names["sim-a"]] > overall[names["sim-g"]] > overall[names["sim-h"]] - 0.02
    by_cond = frame.groupby(["model", "condition"])["score"].mean()
    talker = names["sim-e"]
    assert by_cond[(talker, "motivation")] < by_cond[(talker, "default")] - 0.03
    recogniser = frame[frame.model == names["sim-a"]].groupby("type")["score"].mean()
    assert recogniser["multiple_choice_radio"] > recogniser["completion_open"] + 0.15
    blind = frame[frame.model == names["sim-d"]].groupby("has_image")["score"].mean()
    assert blind[False] > blind[True] + 0.1


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eduart_core", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # CLI subprocesses
def test_simulate_cli_synthesises_items_and_is_idempotent(store_path):
    done = _cli("simulate", "--models", "3", "--items", "60", "--seed", "4", "--db", str(store_path))
    assert done.returncode == 0, done.stderr
    assert "360 responses" in done.stdout  # 3 models x 2 conditions x 60 items
    again = _cli("simulate", "--models", "3", "--items", "60", "--seed", "4", "--db", str(store_path))
    assert again.returncode == 0, again.stderr
    assert "6 already present" in again.stdout
    stats = json.loads(_cli("stats", "--json", "--db", str(store_path)).stdout)
    assert stats["items"] == 60 and stats["runs"] == 6 and stats["responses"] == 360
    assert stats["simulated_models"] == 3
    assert stats["datasets"]["synthetic-60-s4"]["simulated"] is True


@pytest.mark.slow  # CLI subprocesses
def test_simulate_cli_rejects_bad_input_in_one_line(store_path):
    done = _cli("simulate", "--models", "0", "--items", "10", "--db", str(store_path))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "--models" in done.stderr
    missing = _cli("simulate", "--models", "2", "--dataset", "nope", "--db", str(store_path))
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
