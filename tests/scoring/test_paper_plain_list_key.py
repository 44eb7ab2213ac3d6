"""A `completion_open` key written as a plain list of strings (an older record form).

The formats reference: `strict` accepts it keyed A, B, ... in order; the published evaluator builds
its gold map from object entries only, so under `paper` such an item scores 0 for every answer; and
the item is flagged as a data issue (under both profiles: the flag belongs to the item) with the
reason. Checked on the scorer, on the import of a published folder, after a re-score, and after a
reviewer corrects the key (the corrected key is an object list: the flag and the zero go away).
"""
from __future__ import annotations

import json
from pathlib import Path

from eduart_core.answers import StoredAnswer
from eduart_core.importers.records import import_eduart
from eduart_core.items import check_item
from eduart_core.scoring import score_item
from eduart_core.scoring.rescore import rescore
from eduart_core.store.items import load_items
from eduart_core.store.scores import load_scores
from eduart_core.team.identity import local

PLAIN = {"type": "completion_open", "question_text": "La tecnica del [A] e lo [B] furono inventati qui.",
         "choices": None, "answers": ["chiaroscuro", "sfumato"], "language": "it",
         "source": "made-up/1", "has_image": False, "image": None}
RIGHT = [{"id": "A", "text": "chiaroscuro"}, {"id": "B", "text": "sfumato"}]
HALF = [{"id": "A", "text": "chiaroscuro"}, {"id": "B", "text": "affresco"}]


def test_scorer_strict_keys_the_list_paper_scores_zero():
    raw = json.dumps({"Answers": RIGHT})
    assert score_item(PLAIN, raw, "strict").score == 1.0
    assert score_item(PLAIN, json.dumps({"Answers": HALF}), "strict").score == 0.5
    for answer in (raw, StoredAnswer(RIGHT), StoredAnswer(HALF), StoredAnswer("chiaroscuro")):
        assert score_item(PLAIN, answer, "paper").score == 0.0
    # the canonical (stored) record scores the same way: normalising does not lose the published form
    canonical = check_item({**PLAIN, "item_id": "0001"})[0]
    assert score_item(canonical, raw, "strict").score == 1.0
    assert score_item(canonical, StoredAnswer(RIGHT), "paper").score == 0.0
    assert score_item(check_item(canonical)[0], StoredAnswer(RIGHT), "paper").score == 0.0


def test_the_item_is_a_data_issue_with_the_reason():
    for record in (PLAIN, check_item({**PLAIN, "item_id": "0001"})[0]):
        problems = check_item({**record, "item_id": "0001"})[1]
        assert len(problems) == 1, problems
        text = problems[0]
        assert "field answers" in text and "plain list of strings" in text
        assert "strict" in text and "paper" in text and "0" in text
    objects = {**PLAIN, "answers": [{"id": "A", "description": "chiaroscuro"}, {"id": "B", "description": "sfumato"}]}
    assert check_item({**objects, "item_id": "0002"})[1] == []
    assert score_item(objects, StoredAnswer(RIGHT), "paper").score == 1.0


def _folder(root: Path) -> Path:
    meta = root / "dataset" / "metadata"
    meta.mkdir(parents=True)
    (meta / "0001.json").write_text(json.dumps(PLAIN), encoding="utf-8")
    for model, answer in (("acme_right-1", RIGHT), ("acme_half-2", HALF)):
        folder = root / "answers" / model / "default"
        folder.mkdir(parents=True)
        body = {"question_id": "0001", "raw_response": json.dumps({"Answers": answer}), "llm_answer": answer}
        (folder / "0001.json").write_text(json.dumps(body), encoding="utf-8")
    return root


def _scores(store, profile: str) -> dict[str, float]:
    frame = load_scores(store, profile, dataset="pub")
    return dict(zip(frame["model"], frame["score"]))


def test_through_the_store_import_rescore_and_key_correction(store, tmp_path):
    from eduart_core.suspects import correct_key

    report = import_eduart(store, _folder(tmp_path / "pub"), dataset="pub")
    assert list(report.invalid) == ["0001"] and "plain list of strings" in report.invalid["0001"][0]
    items = load_items(store, "pub").set_index("item_id")
    assert bool(items.loc["0001", "data_issue"])
    for _ in range(2):  # as imported, and after rescoring from the stored record
        assert sorted(_scores(store, "strict").values()) == [0.5, 1.0]
        assert set(_scores(store, "paper").values()) == {0.0}
        rescore(store)
    corrected = [{"id": "A", "description": "chiaroscuro"}, {"id": "B", "description": "affresco"}]
    correct_key(store, "pub", "0001", corrected, local("Anna"), ["suspect"], note="B is affresco on the page")
    items = load_items(store, "pub").set_index("item_id")
    assert not bool(items.loc["0001", "data_issue"])
    assert sorted(_scores(store, "paper").values()) == [0.5, 1.0]  # an object key: scored as published
