"""The Psychometrics page's tabs (CTT, IRT, Distractors, DIF) and the inspector's item curve, under
AppTest on the demo store: each tab renders its charts, says how many examinees it rests on, and
draws the numbers of its named view."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
PAGE = "pages/08_psychometrics.py"
#: A page shows logits and mean squares with two decimals (eduart_core.columns): the view's number within half a step.
SHOWN = 0.5e-2 + 1e-9


@pytest.fixture
def app(demo_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page(PAGE).run()
    return at


def open_tab(at, label: str):
    at.session_state["psy_tab"] = label
    at.run()
    assert not at.exception, at.exception[0].value
    assert not at.error
    return at


def specs(at) -> list[dict]:
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def numbers(value) -> np.ndarray:
    import base64

    if isinstance(value, dict) and "bdata" in value:
        return np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"])).astype(float)
    return np.asarray(value, dtype=float)


def test_ctt_tab_is_first_and_unchanged(app):
    assert [t.label for t in app.tabs] == ["CTT", "IRT", "Distractors", "DIF"]
    assert len(app.get("plotly_chart")) == 1  # only the open tab computes and draws
    assert any("difficulty p" in c.value for c in app.caption)


def test_irt_tab_draws_the_fit_and_states_the_panel(app, demo_db):
    from eduart_core import views
    from eduart_core.selection import Selection

    open_tab(app, "IRT")
    # Wright map, abilities, information, information per score level, item fit, person fit
    assert len(app.get("plotly_chart")) == 6
    assert any("8 examinees" in w.value and "exploratory" in w.value for w in app.warning)
    ranking = views.irt_abilities(views.Source.of(str(demo_db)), Selection(), examinees="models")
    ranking = ranking[ranking["row"] == "examinee"]
    abilities = specs(app)[1]["data"][0]
    assert sorted(numbers(abilities["x"]).round(6)) == sorted(ranking["ability"].round(6))
    app.radio(key="psy_irt_model").set_value("2pl").run()
    assert not app.exception
    assert any("2PL" in c.value for c in app.caption)


def _shown(at, column: str, without: str | None = None):
    """The page table (as drawn) that has ``column`` (and not ``without``)."""
    for frame in at.dataframe:
        value = frame.value
        if column in value.columns and (without is None or without not in value.columns):
            return value
    raise AssertionError(f"no table with column {column}")


def test_irt_tab_defaults_to_partial_credit_and_draws_the_show_views(app, demo_db):
    from eduart_core import views
    from eduart_core.selection import Selection

    open_tab(app, "IRT")
    assert app.radio(key="psy_irt_model").value == "pcm"
    assert any("Partial credit (PCM" in c.value and "default for this dataset" in c.value for c in app.caption)
    src, sel, options = views.Source.of(str(demo_db)), Selection(), {"examinees": "models"}
    comparison = views.irt_model_comparison(src, sel, **options)
    assert any(i.value == comparison.attrs["sentence"] for i in app.info) and "0.5 rule" in comparison.attrs["sentence"]
    abilities = views.irt_abilities(src, sel, **options)
    shown = _shown(app, "plausible_ranks")
    assert list(shown["examinee"]) == list(abilities["examinee"])
    assert np.allclose(shown["ability"], abilities["ability"], atol=SHOWN)
    assert np.allclose(shown["ability_se"], abilities["ability_se"], atol=SHOWN)
    assert shown["ability_sd"].iloc[-1] == pytest.approx(abilities.attrs["latent_sd"], abs=SHOWN)
    fit = views.irt_item_fit(src, sel, **options)
    flagged = fit[fit["flag"].notna()]
    shown = _shown(app, "outfit_t", without="lz")
    # the drawn table is the flagged rows of the view, with their BH q (the demo's 8 examinees flag none
    # once chance flags are controlled; tests/analysis/test_irt_fit_fdr.py plants one that is)
    assert list(shown["item_id"]) == list(flagged["item_id"]) and "underfit_q" in shown.columns
    assert any(f"{len(flagged[flagged['flag'] == 'underfit'])} item(s) underfit" in c.value
               and "Benjamini-Hochberg" in c.value for c in app.caption)
    assert np.allclose(shown["outfit"], flagged["outfit"], atol=SHOWN)
    assert np.allclose(shown["infit_t"], flagged["infit_t"], atol=SHOWN)
    people = views.irt_person_fit(src, sel, **options)
    shown = _shown(app, "lz")
    assert list(shown["examinee"]) == list(people["examinee"])
    assert np.allclose(shown["lz"], people["lz"], atol=SHOWN) and list(shown["aberrant"]) == list(people["aberrant"])
    assert list(shown["n_invalid"]) == list(people["n_invalid"])
    items = views.irt_items(src, sel, **options)
    shown = _shown(app, "thresholds_text")
    assert list(shown["item_id"]) == list(items["item_id"])
    assert np.allclose(shown["difficulty"].astype(float), items["difficulty"].astype(float), atol=SHOWN, equal_nan=True)


def test_the_suspect_key_queue_shows_the_misfit_flags_with_their_reasons(demo_db):
    from eduart_core import views
    from eduart_core.selection import Selection

    src, sel = views.Source.of(str(demo_db)), Selection()
    queue = views.suspect_keys(src, sel)
    misfit = queue[queue["sources"].str.contains("irt_fit")]
    assert misfit["reasons"].str.contains("irt_misfit").all()
    assert misfit["details"].str.contains("outfit").all() and misfit["details"].str.contains("PCM").all()
    fit = views.irt_item_fit(src, sel)  # the same fit and rule: one examinee per model, default condition
    assert fit.attrs["examinee_condition"] == "default" and fit.attrs["n_examinees"] == 8
    assert set(misfit["item_id"]) == set(fit.loc[fit["flag"] == "underfit", "item_id"])
    # the model x condition pairs count each model twice: a flag of theirs alone does not reach the queue
    pairs = views.irt_item_fit(src, sel, examinees="models_conditions")
    only_pairs = set(pairs.loc[pairs["flag"] == "underfit", "item_id"]) - set(fit.loc[fit["flag"] == "underfit", "item_id"])
    assert pairs.attrs["n_examinees"] == 16 and only_pairs and not only_pairs & set(misfit["item_id"])


def test_distractor_and_dif_tabs_name_their_examinees(app):
    open_tab(app, "Distractors")
    assert any("8 examinees" in c.value for c in app.caption)
    assert len(app.get("plotly_chart")) == 1
    open_tab(app, "DIF")
    assert any("reference 'answer only' (8 examinees), focal 'answer + justification' (8)" in c.value
               for c in app.caption)
    assert any("confounded with source" in c.value for c in app.caption)
    assert len(app.get("plotly_chart")) == 2  # DIF per item, parallel forms


def test_inspector_shows_the_item_curve(app, demo_db):
    from eduart_core import views
    from eduart_core.selection import Selection

    items = views.irt_items(views.Source.of(str(demo_db)), Selection())
    fitted = items[items["informative"]]["item_id"].iloc[0]
    app.switch_page("pages/07_inspector.py")
    app.query_params["item"] = fitted
    app.session_state["insp_irt"] = True  # the curve is fitted when its section is opened
    app.run()
    assert not app.exception
    # one examinee per model, its answers in the selection's condition (not 16 model x condition pairs)
    assert any("Difficulty" in c.value and "fitted to 8 examinees" in c.value and "one per model" in c.value
               and "in the default condition" in c.value for c in app.caption)
    curve = [s for s in specs(app) if any(t.get("name") == "P(right)" for t in s["data"])]
    assert curve


def test_the_report_states_the_se_gain_over_the_half_rule(demo_db):
    import html

    from eduart_core import views
    from eduart_core.report import build_report
    from eduart_core.selection import Selection

    comparison = views.irt_model_comparison(views.Source.of(str(demo_db)), Selection())
    sentence = comparison.attrs["sentence"]
    assert "PCM" in sentence and "0.5 rule" in sentence and f"{int(comparison['n_examinees'].max())} examinees" in sentence
    assert "8 examinees" in sentence  # one per model (the demo's 8), not one per model x condition pair
    assert f"<b>Ability precision.</b> {html.escape(sentence)}" in build_report(str(demo_db))


def test_the_distractor_table_reads_in_words_with_one_flag_column(app):
    """Options with their text, one flag column, formats by name, headers as words (the page's column labels)."""
    from eduart_core import vocab

    open_tab(app, "Distractors")
    element = next(d for d in app.dataframe if "option_text" in d.value.columns)
    shown = element.value
    assert len({"flag", "flags"} & set(shown.columns)) == 1
    assert shown["option_text"].astype(str).str.len().gt(0).all()
    assert set(shown["type"]) <= {vocab.format_label(f) for f in vocab.OPTION_FORMATS}
    labels = {name: spec.get("label") for name, spec in json.loads(element.proto.columns).items()}
    assert labels["option_text"] == "Option text" and labels["share"] == "Share (%)"
    assert not [label for label in labels.values() if label and "_" in label.replace("r_pb", "")]
