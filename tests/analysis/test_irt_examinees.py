"""Who the examinees of an IRT fit are.

What a researcher relies on: by default an IRT fit counts each model once, with its answers in the
selection's condition, and says which condition; a model's two conditions (two answer sets of one
examinee) are fitted as two examinees only when asked for, and the caption then says what that
costs. The default `show` output, the page's fit and the report rest on the same one-per-model panel.
"""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from eduart_core import views
from eduart_core.selection import Selection
from eduart_core.views.irt import mostly_invalid
from eduart_core.vocab import EXAMINEES_MODELS, EXAMINEES_MODELS_CONDITIONS, IRT_DEFAULT_EXAMINEES


def test_the_default_fit_has_one_examinee_per_model_and_names_the_condition(demo_db):
    src = views.Source.of(str(demo_db))
    assert IRT_DEFAULT_EXAMINEES == EXAMINEES_MODELS
    for condition in ("default", "motivation"):
        sel = Selection(condition=condition)
        models = set(views.selected_scores(src, sel)["model"]) - set(mostly_invalid(src, sel, EXAMINEES_MODELS)["model"])
        items = views.irt_items(src, sel)
        assert items.attrs["n_examinees"] == len(models) == 8 and (items["panel_size"] == len(models)).all()
        assert items.attrs["examinee_condition"] == condition
        assert items.attrs["examinee_note"] == f"one per model: its answers in the {condition} condition (the selection's)"
        abilities = views.irt_abilities(src, sel)
        people = abilities[abilities["row"] == "examinee"]
        assert sorted(people["examinee"]) == sorted(models) and set(people["condition"]) == {condition}
        for view in (views.irt_item_fit, views.irt_person_fit, views.irt_model_comparison):
            assert view(src, sel).attrs["n_examinees"] == len(models), view.__name__


def test_conditions_as_examinees_only_when_asked_for_and_then_said(demo_db):
    src, sel = views.Source.of(str(demo_db)), Selection()
    pairs = views.irt_items(src, sel, examinees=EXAMINEES_MODELS_CONDITIONS)
    assert pairs.attrs["n_examinees"] == 16 and pairs.attrs["examinee_condition"] is None
    assert "each model x condition pair, as asked for" in pairs.attrs["examinee_note"]
    assert "not independent" in pairs.attrs["examinee_note"]
    one = views.irt_items(src, sel).set_index("item_id")["difficulty_se"]
    two = pairs.set_index("item_id")["difficulty_se"]
    ratio = (two / one).dropna()
    # the pairs' SEs are smaller: each model's answers counted twice (about 1/sqrt(2) when they agree)
    assert len(ratio) > 50 and 0.6 < ratio.median() < 0.85


@pytest.mark.slow
def test_show_defaults_to_one_examinee_per_model(demo_db):
    out = subprocess.run([sys.executable, "-m", "eduart_core", "show", "irt_item_fit", "--db", str(demo_db)],
                         capture_output=True, text=True, check=True).stdout
    rows = json.loads(out)
    assert rows and {r["panel_size"] for r in rows} == {8}
