"""Contamination probes: probe items (a hidden wrong option, the end of the question), the `probe` command
against a loopback stub, the demo's planted-leak model told apart from clean items, and accuracy before
and after a model's training cutoff."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from runner_items import fill_store
from stubs import StubServer

from eduart_core.analysis.contamination import period_accuracy, probe_auroc, probe_pairs, probe_summary
from eduart_core.cli import main
from eduart_core.contamination_demo import LEAK_NAME, leaked, probe_answer, source_answer
from eduart_core.probes import BLANK, PROBE_KINDS, complete_stem, mask_option
from eduart_core.robustness_demo import DEMO_ROBUST_DATASET, ROBUST_MODELS
from eduart_core.scoring import score_item
from eduart_core.store import Store
from eduart_core.store.items import load_items
from eduart_core.variants import VariantRefused

MCQ = {"item_id": "q1", "type": "multiple_choice_radio", "language": "en", "has_image": True, "image": "a.png",
       "question_text": "Which building of the fifteenth century has a dome raised without centering?",
       "instructions": "Choose one.",
       "choices": [{"id": "A", "text": "Florence Cathedral"}, {"id": "B", "text": "Pisa Baptistery"},
                   {"id": "C", "text": "Siena Cathedral"}, {"id": "D", "text": "San Marco in Venice"}],
       "answers": [{"id": "A"}]}


def test_mask_option_hides_a_wrong_option_and_scores_its_text():
    probe, = mask_option(MCQ)
    assert probe["item_id"] == "q1~mask_option" and probe["variant_of"] == "q1"
    assert probe["variant"] == {"kind": "mask_option", "hidden": "D"}
    assert probe["type"] == "completion_open" and not probe["has_image"] and probe["image"] is None
    text = probe["question_text"]
    assert "San Marco in Venice" not in text and f"D. [{BLANK}]" in text and text.count("[") == 1
    assert all(c["text"] in text for c in MCQ["choices"][:3]) and MCQ["question_text"] in text
    assert probe["instructions"] is None  # the source's "Choose one." is not the probe's
    said = lambda t: json.dumps({"Answers": [{"id": BLANK, "text": t}]})  # noqa: E731
    assert score_item(probe, said("San Marco in Venice")).score == 1.0
    assert score_item(probe, said("san marco, venice")).score == 1.0  # fuzzy matching, as completion_open
    assert score_item(probe, said("Pisa Baptistery")).score == 0.0


def test_complete_stem_asks_for_the_second_half():
    probe, = complete_stem(MCQ)
    words = MCQ["question_text"].split()
    assert probe["answers"] == [{"id": BLANK, "description": " ".join(words[len(words) // 2:])}]
    assert " ".join(words[:len(words) // 2]) in probe["question_text"]
    assert "centering" not in probe["question_text"]


@pytest.mark.parametrize("record, kind, reason", [
    ({**MCQ, "type": "completion_open", "choices": None}, mask_option, "applies to option items"),
    ({**MCQ, "choices": MCQ["choices"][:2]}, mask_option, "at least three options"),
    ({**MCQ, "question_text": "Who built it?"}, complete_stem, "at least 8 words"),
])
def test_a_probe_that_does_not_apply_says_why(record, kind, reason):
    with pytest.raises(VariantRefused, match=reason):
        kind(record)


def _answer(request) -> str:
    """The stub writes back the hidden option of the first probe it sees, and misses the others."""
    return json.dumps({"Answers": [{"id": BLANK, "text": "wood" if "fresco" in request.user_text else "no idea"}]})


def test_probe_command_makes_probes_once_and_asks_them_without_images(tmp_path, capsys, monkeypatch):
    store = Store(tmp_path / "s.duckdb")
    records = fill_store(store)
    db = str(store.path)
    options = [r for r in records if r["type"] in ("multiple_choice_radio", "multiple_choice_check")
               and len(r["choices"]) >= 3]
    assert main(["probe", "--db", db, "--dataset", "demo", "--kind", "bogus"]) == 2
    assert "unknown probe kind 'bogus'" in capsys.readouterr().err
    with StubServer(answer=_answer) as stub:
        registry = tmp_path / "models.toml"
        registry.write_text(f'[models.stubbed]\ndisplay_name = "Stubbed"\nprovider = "openai_compatible"\n'
                            f'api_model_id = "stub-model"\nbase_url = "{stub.url}/v1"\n')
        monkeypatch.setenv("EDUART_MODELS", str(registry))
        code = main(["probe", "--db", db, "--dataset", "demo", "--kind", "mask_option", "--model", "stubbed"])
        out = capsys.readouterr()
        assert code == 2  # the items without three options are named, the rest made and asked
        assert f"{len(options)} mask_option probe(s) made" in out.out and "not made" in out.err
        assert len(stub.requests) == len(options)
        assert all(r.image is None and not r.images for r in stub.requests)
        assert all("[Z]" in r.user_text for r in stub.requests)
    assert main(["probe", "--db", db, "--dataset", "demo", "--kind", "mask_option"]) == 2
    assert "0 mask_option probe(s) made" in capsys.readouterr().out  # nothing twice
    from eduart_core import views
    from eduart_core.selection import Selection

    views.clear_caches()
    table = views.contamination(views.Source.of(store), Selection(dataset="demo"))
    row = table.iloc[0]
    assert (row["model"], row["kind"], row["n_items"], row["n_hits"]) == ("Stubbed", "mask_option", len(options), 1)
    assert "TS-Guessing" in table.attrs["caption"]


def test_the_demo_leak_model_is_told_apart_and_the_others_hit_almost_nothing(demo_db):
    from eduart_core import views
    from eduart_core.selection import Selection

    views.clear_caches()
    src, sel = views.Source.of(Store(demo_db)), Selection(dataset=DEMO_ROBUST_DATASET)
    table = views.contamination(src, sel).set_index(["model", "kind"])
    assert set(table.index.get_level_values("kind")) == set(PROBE_KINDS)
    for kind in PROBE_KINDS:
        assert table.loc[(LEAK_NAME, kind), "n_hits"] >= 2
        for model in ROBUST_MODELS:
            assert table.loc[(model.display_name, kind), "hit_share"] < 0.1
    leak = table.loc[(LEAK_NAME, "mask_option")]
    assert leak["accuracy_hit"] == 1.0 and leak["accuracy_hit_low"] > leak["accuracy_miss_high"] - 0.5
    from eduart_core.views._base import items as item_frame
    from eduart_core.views._base import scores as score_frame

    pairs = probe_pairs(score_frame(src, sel.profile, sel.dataset, True, True), item_frame(src, sel.dataset),
                        ("mask_option",))
    mine = pairs[pairs["model"] == LEAK_NAME]
    truth = np.array([leaked(i) for i in mine["item_id"]])
    assert 0 < truth.sum() < len(truth)
    assert probe_auroc(truth, mine["hit"].to_numpy()) >= 0.80
    per_item = views.contamination_items(src, sel)
    assert set(per_item.loc[per_item["n_hits"] > 0, "models_hit"]) >= {LEAK_NAME}
    board = views.leaderboard(src, sel)
    assert LEAK_NAME in set(board["model"])
    items = load_items(Store(demo_db), DEMO_ROBUST_DATASET)
    assert not items.loc[items["variant"].isin(PROBE_KINDS), "record"].map(lambda r: r["has_image"]).any()
    invariance = views.invariance(src, sel)
    assert not invariance["kind"].isin(PROBE_KINDS).any()  # probes are not variants of the same question


def test_a_hidden_simulation_of_the_same_kind_separates_leaked_items():
    """Other seeds than the demo's: probe hits of the planted-leak model separate its seen items (AUROC >= 0.8)."""
    records = []
    for i in range(150):
        choices = [{"id": c, "text": f"option {c} number {i * 7 + k}"} for k, c in enumerate("ABCD")]
        records.append({**MCQ, "item_id": f"h{i:03d}", "choices": choices, "answers": [{"id": "ABCD"[i % 4]}],
                        "question_text": f"Question {i} about the painting on the wall of the chapel"})
    for seed in (21, 22, 23):
        rows, links = [], []
        for source in records:
            probe, = mask_option(source)
            seen = leaked(source["item_id"], seed)
            rows.append({"model": "leak", "condition": "default", "item_id": source["item_id"],
                         "correct": score_item(source, source_answer(source, seed, seen)).score == 1.0})
            rows.append({"model": "leak", "condition": "default", "item_id": probe["item_id"],
                         "correct": score_item(probe, probe_answer("leak", probe, seed, seen)).score == 1.0})
            links.append({"item_id": probe["item_id"], "variant_of": source["item_id"], "variant": "mask_option"})
        pairs = probe_pairs(pd.DataFrame(rows), pd.DataFrame(links), PROBE_KINDS)
        truth = np.array([leaked(i, seed) for i in pairs["item_id"]])
        assert probe_auroc(truth, pairs["hit"].to_numpy()) >= 0.80
        summary = probe_summary(pairs).iloc[0]
        assert summary["n_items"] == 150 and 0 < summary["hit_share"] < 0.3


def test_auroc_matches_a_direct_count_of_pairs():
    rng = np.random.default_rng(3)
    truth = rng.random(60) < 0.3
    score = rng.integers(0, 3, 60).astype(float)
    pos, neg = score[truth], score[~truth]
    direct = np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])
    assert probe_auroc(truth, score) == pytest.approx(direct)


def test_accuracy_before_and_after_a_cutoff():
    scores = pd.DataFrame({"model": ["m"] * 6 + ["x"] * 2, "condition": "default",
                           "item_id": ["a", "b", "c", "d", "e", "f", "a", "b"],
                           "correct": [True, True, True, False, False, True, True, False]})
    published = {"a": "2023", "b": "2024-05", "c": "2024-06-30", "d": "2025-01", "e": "2025-02-01", "f": "2026"}
    table = period_accuracy(scores.assign(model_key=scores["model"]), published, {"m": "2024-06"}).set_index("period")
    assert table.loc["before cutoff", "n_items"] == 3 and table.loc["before cutoff", "accuracy"] == 1.0
    assert table.loc["after cutoff", "n_items"] == 3 and table.loc["after cutoff", "accuracy"] == pytest.approx(1 / 3)
    assert table.loc["after cutoff", "accuracy_low"] < 1 / 3 < table.loc["after cutoff", "accuracy_high"]
    assert set(table["model"]) == {"m"}  # a model without a cutoff is left out


def test_a_registry_cutoff_must_be_a_date(tmp_path):
    from eduart_core.errors import UserError
    from eduart_core.providers.registry import load_registry

    path = tmp_path / "models.toml"
    path.write_text('[models.m]\ndisplay_name = "M"\nprovider = "offline"\napi_model_id = "m"\ncutoff = "2025-06"\n')
    assert load_registry(path)["m"].cutoff == "2025-06"
    path.write_text('[models.m]\ndisplay_name = "M"\nprovider = "offline"\napi_model_id = "m"\ncutoff = "June"\n')
    with pytest.raises(UserError, match="cutoff must be a date as text"):
        load_registry(path)


def test_the_demo_period_view_reads_publication_years_and_a_cutoff_option(demo_db):
    from eduart_core import views
    from eduart_core.errors import UserError
    from eduart_core.selection import Selection

    views.clear_caches()
    src, sel = views.Source.of(Store(demo_db)), Selection(dataset=DEMO_ROBUST_DATASET)
    with pytest.raises(views.EmptySelection, match="No model has a training cutoff"):
        views.contamination_period(src, sel)
    table = views.contamination_period(src, sel, cutoff="2021")
    assert set(table["period"]) == {"before cutoff", "after cutoff"}
    assert table.groupby("model")["n_items"].sum().eq(74).all()  # every demo-robust source has a year
    with pytest.raises(UserError, match="option cutoff must be a date"):
        views.contamination_period(src, sel, cutoff="soon")
