"""Reviewer agreement codes each decision by what the reviewer chose among the candidates it faced.

Coded by value (the chosen value's canonical JSON), every field brings its own categories, chance
agreement is near zero and kappa and alpha come out close to the raw percentage. Coded by choice
(extractor A, extractor B whatever side each reviewer was shown, an edit with its value, a flag)
they correct for chance as intended. On the demo's round 1 with 11 doubly decided fields of which 8
agree, kappa and alpha must equal statsmodels' and the krippendorff package's on the by-choice table
built here from the decisions, and agreement on the final value is reported as its own percentage.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from eduart_core import views
from eduart_core.cli import main
from eduart_core.extraction import review
from eduart_core.extraction.stats import AGREEMENT_CODING
from eduart_core.store import Store
from eduart_core.store import extraction as db
from tests.review_fixtures import build_template, copy_store

DATASET = "demo-extraction"
# (Anna, Bruno) per queued field of round 1: 5 both A, 3 both B, 2 A/B, 1 B/A -> 8 of 11 agree
PAIRS = [("A", "A")] * 5 + [("B", "B")] * 3 + [("A", "B")] * 2 + [("B", "A")]


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    return build_template(tmp_path_factory.mktemp("by-choice-template"))


@pytest.fixture
def store_path(template, tmp_path):
    path = copy_store(template, tmp_path / "by-choice")
    review.set_reviewers(Store(path), DATASET, 1, 2)
    return path


def queued(store: Store) -> list[dict]:
    return db.load_discrepancies(store, round=1, queued_only=True).to_dict("records")


def import_lines(store_path, tmp_path, lines: list[dict]) -> None:
    path = tmp_path / "decisions.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    assert main(["review-import", str(path), "--db", str(store_path)]) == 0


def settle_round_one(store_path, tmp_path) -> None:
    """The adjudicator settles every field of round 1 still open: a blind round shows its agreement
    once settled (adjudications are not ratings, so the numbers stay the reviewers')."""
    state = review.load_state(Store(store_path), 1)
    lines = [{"dataset": DATASET, "page": f["page_id"], "round": 1, "field": f["path"], "reviewer": "Carla",
              "role": "adjudicate", "decision": "A"} for f in state.fields(round=1).to_dict("records")
             if not state.state(f["page_id"], 1, f["path"]).resolved]
    path = tmp_path / "settled.jsonl"
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), encoding="utf-8")
    assert main(["review-import", str(path), "--db", str(store_path)]) == 0


def by_choice_table(lines: list[dict]) -> tuple[np.ndarray, list[str]]:
    """Raters x units codes from the file itself: A, B, 'edit <value JSON>' or 'flag'."""
    def code(line: dict) -> str:
        if line["decision"] == "edit":
            return "edit " + json.dumps(line["value"], sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return line["decision"]
    units: dict[tuple, dict[str, str]] = {}
    for line in lines:
        units.setdefault((line["page"], line["field"]), {})[line["reviewer"]] = code(line)
    categories = sorted({c for unit in units.values() for c in unit.values()})
    table = np.array([[categories.index(unit[r]) for unit in units.values()] for r in ("Anna", "Bruno")])
    return table, categories


def libraries(table: np.ndarray, n_categories: int) -> dict:
    import krippendorff
    from statsmodels.stats.inter_rater import cohens_kappa, to_table

    return {"cohen": cohens_kappa(to_table(table.T, bins=n_categories)[0]).kappa,
            "alpha": krippendorff.alpha(reliability_data=table.astype(float), level_of_measurement="nominal")}


def test_demo_round_one_equals_the_libraries_on_the_by_choice_table(store_path, tmp_path, capsys):
    store = Store(store_path)
    fields = queued(store)
    assert len(fields) == len(PAIRS) == 11
    lines = [{"dataset": DATASET, "page": f["page_id"], "round": 1, "field": f["path"], "reviewer": who,
              "decision": choice} for f, pair in zip(fields, PAIRS) for who, choice in zip(("Anna", "Bruno"), pair)]
    import_lines(store_path, tmp_path, lines)
    settle_round_one(store_path, tmp_path)
    table, categories = by_choice_table(lines)
    expected = libraries(table, len(categories))
    assert expected["cohen"] == pytest.approx(26 / 59) and round(expected["alpha"], 3) == 0.462  # the 0.441, 0.462
    capsys.readouterr()
    assert main(["review-status", "--json", "--db", str(store_path)]) == 0
    got = next(r for r in json.loads(capsys.readouterr().out)["rounds"] if r["round"] == 1)["agreement"]
    assert got["units"] == 11
    assert got["cohen_kappa"] == pytest.approx(expected["cohen"], abs=1e-12)
    assert got["krippendorff_alpha"] == pytest.approx(expected["alpha"], abs=1e-12)
    assert got["percent"] == pytest.approx(8 / 11) and got["value_percent"] == pytest.approx(8 / 11)
    row = views.review_agreement(views.Source.of(store), None, by="round").iloc[0]
    assert row["cohen_kappa"] == pytest.approx(expected["cohen"], abs=1e-12)
    assert row["krippendorff_alpha"] == pytest.approx(expected["alpha"], abs=1e-12)
    assert row["value_percent"] == pytest.approx(8 / 11)


def test_edits_agree_when_their_values_are_equal_and_a_flag_is_a_choice(store_path, tmp_path, capsys):
    store = Store(store_path)
    fields = {f["path"] + "@" + f["page_id"]: f for f in queued(store)}
    text = [f for f in fields.values() if isinstance(f["value_a"], str)][:4]
    assert len(text) == 4
    base = [{"dataset": DATASET, "page": f["page_id"], "round": 1, "field": f["path"]} for f in text]
    lines = [
        base[0] | {"reviewer": "Anna", "decision": "edit", "value": "Same typed text"},   # two edits, equal values
        base[0] | {"reviewer": "Bruno", "decision": "edit", "value": "Same typed text"},
        base[1] | {"reviewer": "Anna", "decision": "edit", "value": "One text"},          # two edits, different
        base[1] | {"reviewer": "Bruno", "decision": "edit", "value": "Another text"},
        base[2] | {"reviewer": "Anna", "decision": "edit", "value": text[2]["value_a"]},  # A's value typed: by
        base[2] | {"reviewer": "Bruno", "decision": "A"},                                 # choice a disagreement
        base[3] | {"reviewer": "Anna", "decision": "flag", "note": "which accent?"},     # a flag is a choice
        base[3] | {"reviewer": "Bruno", "decision": "B"},
    ]
    import_lines(store_path, tmp_path, lines)
    settle_round_one(store_path, tmp_path)
    table, categories = by_choice_table(lines)
    expected = libraries(table, len(categories))
    capsys.readouterr()
    assert main(["review-status", "--json", "--db", str(store_path)]) == 0
    got = next(r for r in json.loads(capsys.readouterr().out)["rounds"] if r["round"] == 1)["agreement"]
    assert got["units"] == 4
    assert got["percent"] == pytest.approx(1 / 4)         # by choice: only the two equal edits
    assert got["value_percent"] == pytest.approx(2 / 4)   # final value: equal edits, and A's value typed
    assert got["cohen_kappa"] == pytest.approx(expected["cohen"], abs=1e-12)
    assert got["krippendorff_alpha"] == pytest.approx(expected["alpha"], abs=1e-12)


def test_the_coding_is_stated_where_the_numbers_are_shown():
    assert "extractor A" in AGREEMENT_CODING and "shown" in AGREEMENT_CODING and "edit" in AGREEMENT_CODING
    assert "flag" in AGREEMENT_CODING and "final value" in AGREEMENT_CODING
    assert "by choice" in views.VIEWS["review_agreement"].summary  # `show --list` says it too
