"""The failure explorer (Item inspector): words per format, filters, the matrix, two models compared.

What a researcher relies on: "expected" and "given" read in the same words (TRUE/FALSE on both
sides of a true/false statement); both scoring profiles are shown side by side; every quick
filter keeps exactly the items its name promises; the matrix marks every model x condition; the
comparison of two models lists the items where they differ with both answers and justifications
and a test of the difference; search opens what it finds; links keep the selection.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from eduart_core import analysis, display, views
from eduart_core.scoring import score_item
from eduart_core.selection import Selection
from eduart_core.text import plain

TF = {"type": "true_false", "question_text": "Giotto", "language": "en", "has_image": False, "image": None,
      "choices": [{"id": "A", "text": "He painted in Padua."}, {"id": "B", "text": "He painted on canvas."}],
      "answers": [{"id": "A", "text": "True"}, {"id": "B", "text": "False"}]}
RADIO = {"type": "multiple_choice_radio", "question_text": "Where?", "language": "en", "has_image": False,
         "image": None, "choices": [{"id": "A", "text": "Florence"}, {"id": "B", "text": "The Gonzaga of Mantua"}],
         "answers": [{"id": "B", "description": "The Gonzaga of Mantua"}]}
CHECK = {**RADIO, "type": "multiple_choice_check", "answers": [{"id": "A", "description": "Florence"},
                                                               {"id": "B", "description": "The Gonzaga of Mantua"}]}


# ---------------------------------------------------------------- words per format

@pytest.mark.parametrize("profile", ["strict", "paper"])
def test_true_false_reads_true_false_on_both_sides(profile):
    scored = score_item(TF, '{"Answers": [{"id": "A", "text": "Vero"}, {"id": "B", "text": "TRUE"}]}', profile)
    rows = display.answer_rows(scored.details, TF)
    assert list(rows["expected"]) == ["TRUE", "FALSE"]
    assert list(rows["given"]) == ["TRUE", "TRUE"]
    assert list(rows["mark"]) == ["✓ right", "✗ wrong"]
    assert display.answer_summary(scored.details, TF) == "A TRUE, B TRUE"


def test_choices_read_the_option_text_and_check_boxes_read_selected():
    radio = display.answer_rows(score_item(RADIO, '{"Answers": [{"id": "a"}]}').details, RADIO)
    assert radio.iloc[0][["expected", "given"]].tolist() == ["B. The Gonzaga of Mantua", "A. Florence"]
    check = display.answer_rows(score_item(CHECK, '{"Answers": [{"id": "B"}]}').details, CHECK)
    assert set(check["expected"]) == {"selected"} and set(check["given"]) == {"selected", "not selected"}
    assert check["element"].tolist() == ["A. Florence", "B. The Gonzaga of Mantua"]  # never cut short


def test_both_profiles_side_by_side_keep_their_own_reading():
    raw = '{"Answers": [{"id": "B"}]} is my answer.'  # the published parser rejects prose after the JSON
    marks = display.profile_marks({p: score_item(RADIO, raw, p).details for p in ("strict", "paper")}, RADIO)
    assert list(marks.columns) == ["element", "expected", "given (strict)", "strict", "given (paper)", "paper"]
    row = marks.iloc[0]
    assert row["strict"] == "✓ right" and row["paper"] == "✗ wrong"
    assert row["given (strict)"] == "B. The Gonzaga of Mantua" and row["given (paper)"] == "—"


def test_card_marks_the_key_in_each_format():
    assert [r["gold"] for r in display.card(TF)["rows"]] == ["TRUE", "FALSE"]
    assert [r["gold"] for r in display.card(RADIO)["rows"]] == ["", display.CORRECT_OPTION]
    assert display.card(RADIO)["gold"] == "B. The Gonzaga of Mantua"
    blanks = {"type": "positioning", "question_text": "A [A]", "choices": ["cupola", "campanile"],
              "answers": [{"id": "A", "description": "cupola"}]}
    shown = display.card(blanks)
    assert shown["rows"][0]["gold"] == "cupola" and shown["extras"] == {"Word bank": "cupola, campanile"}
    errors = {"type": "select_errors", "question_text": "in Verona", "answers": [{"error": "Verona", "correct": "Padova"}]}
    assert display.card(errors)["gold"] == "Verona: error, correct: Padova"
    unknown = display.card({"type": "a_new_format", "answers": [{"id": "A", "description": "x"}]})
    assert unknown["rows"] == [] and unknown["gold"] == ""  # a format the registry does not know: no crash


# ---------------------------------------------------------------- filters and matrix (pure)

def _frames() -> dict[str, pd.DataFrame]:
    """3 models (m3 a baseline) x 2 conditions x 5 items with a known story per item."""
    story = {  # item: {model: (default score, motivation score)}
        "i1": {"m1": (0, 0), "m2": (0, 0), "m3": (0, 0)},        # all wrong
        "i2": {"m1": (1, 1), "m2": (0, 0), "m3": (0, 0)},        # models disagree
        "i3": {"m1": (1, 0), "m2": (1, 1), "m3": (0, 0)},        # m1 wrong only with justification
        "i4": {"m1": (0, 0), "m2": (0, 0), "m3": (1, 1)},        # only the baseline is right
        "i5": {"m1": (0.5, 0.5), "m2": (1, 1), "m3": (1, 1)},    # partial credit; paper differs below
    }
    rows = [{"model": m, "condition": c, "item_id": i, "type": "true_false", "language": "en", "has_image": False,
             "score": float(s[k])} for i, ms in story.items() for m, s in ms.items()
            for k, c in enumerate(("default", "motivation"))]
    strict = pd.DataFrame(rows)
    paper = strict.copy()
    paper.loc[(paper["item_id"] == "i5") & (paper["model"] == "m1"), "score"] = 1.0
    return {"strict": strict, "paper": paper}


def test_each_quick_filter_keeps_the_items_its_name_promises():
    frames = _frames()
    flags = analysis.item_flags(frames, "strict", "default", baselines=["m3"])
    table = flags.assign(r_pb=[np.nan, -0.3, 0.2, 0.1, 0.5], top_minus_weak=[0, 0.2, -0.1, 0, 0], text="")
    kept = {name: list(analysis.filter_items(table, name)["item_id"]) for name in analysis.ITEM_FILTERS}
    # right = full credit; the baseline m3 is a reference, not an examinee (counted apart)
    assert kept == {"all": ["i1", "i2", "i3", "i4", "i5"], "all_wrong": ["i1", "i4"], "disagree": ["i2", "i5"],
                    "wrong_with_justification": ["i3"], "profile_change": ["i5"], "negative_rpb": ["i2"],
                    "top_fail": ["i3"], "baseline_only_right": ["i4"],
                    "aberrant": []}  # needs an IRT fit and an examinee: `analysis.mark_unexpected` adds its column
    by_item = flags.set_index("item_id")
    assert by_item.loc["i5", "models_right"] == 1 and by_item.loc["i5", "n_models"] == 2  # 0.5 is partial
    counted = analysis.item_flags(frames, "strict", "default", baselines=["m3"], count_baselines=True)
    assert counted.set_index("item_id").loc["i4", ["models_right", "n_models"]].tolist() == [1, 3]
    without_baselines = analysis.item_flags(frames, "strict", "default")
    assert not without_baselines["baseline_only_right"].any()
    with pytest.raises(ValueError, match="unknown item filter"):
        analysis.filter_items(table, "nonsense")


def test_matrix_states_follow_the_score():
    frame = _frames()["strict"]
    matrix = analysis.failure_matrix(frame, items=["i5", "i1"])
    assert list(dict.fromkeys(matrix["item_id"])) == ["i5", "i1"]  # the page's order
    assert len(matrix) == 2 * 3 * 2
    by = matrix.set_index(["item_id", "model", "condition"])["state"]
    assert by["i5", "m1", "default"] == "partial" and by["i5", "m2", "default"] == "right"
    assert by["i1", "m3", "motivation"] == "wrong"
    assert analysis.cell_state(float("nan")) == "missing"


def test_two_models_compared_with_an_exact_test():
    frame = _frames()["strict"]
    frame = frame[frame["condition"] == "default"]
    cmp = analysis.compare_models(frame, "m1", "m2")
    assert dict(zip(cmp["item_id"], cmp["outcome"])) == {
        "i1": "both_wrong", "i2": "a_right_b_wrong", "i3": "both_right", "i4": "both_wrong", "i5": "both_right"}
    assert list(analysis.filter_comparison(cmp, "differ")["item_id"]) == ["i2", "i5"]
    assert list(analysis.filter_comparison(cmp, "a_right_b_wrong")["item_id"]) == ["i2"]
    assert analysis.filter_comparison(cmp, "b_right_a_wrong").empty
    summary = analysis.comparison_summary(cmp)
    assert (summary["a_right_b_wrong"], summary["b_right_a_wrong"], summary["n_differ"]) == (1, 0, 2)
    assert summary["p_mcnemar"] == pytest.approx(binomtest(0, 1, 0.5).pvalue)


# ---------------------------------------------------------------- views on the demo store

@pytest.fixture
def src(demo_db):
    views.clear_caches()
    return views.Source.of(str(demo_db))


def test_views_filter_and_mark_what_the_scores_say(src):
    sel = Selection()
    scores = views.selected_scores(src, sel)
    right = scores.assign(r=scores["score"] == 1).groupby("item_id")["r"].sum()  # right = full credit
    assert list(views.explorer_items(src, sel, filter="all_wrong")["item_id"]) == sorted(right[right == 0].index)
    both = views.selected_scores(src, sel, all_conditions=True)
    matrix = views.failure_matrix(src, sel)
    assert len(matrix) == len(both)
    merged = matrix.merge(both, on=["item_id", "model", "condition"], suffixes=("", "_long"))
    assert (merged["score"] == merged["score_long"]).all()
    assert set(merged.loc[merged["score"] == 1, "state"]) == {"right"}
    search = views.explorer_items(src, sel, search="Scrovegni")
    assert len(search) and all("scrovegni" in t.lower() for t in search["text"])


def test_profile_filter_keeps_the_items_whose_score_differs_between_profiles(src):
    sel = Selection()
    both = views.selected_scores(src, sel).merge(views.selected_scores(src, sel.with_(profile="paper")),
                                                 on=["model", "item_id"], suffixes=("_strict", "_paper"))
    differ = set(both.loc[(both["score_strict"] - both["score_paper"]).abs() > 1e-9, "item_id"])
    assert differ and set(views.explorer_items(src, sel, filter="profile_change")["item_id"]) == differ


def test_comparison_view_gives_both_answers_and_justifications(src):
    sel = Selection(condition="motivation")
    a, b = "Sim A (strong recogniser)", "Sim H (format-fragile)"
    shown = views.model_comparison(src, sel, a=a, b=b, only="a_right_b_wrong")
    assert len(shown) and set(shown["outcome"]) == {"a_right_b_wrong"}
    assert shown["answer_a"].str.len().gt(0).all() and shown["answer_b"].str.len().gt(0).all()
    assert shown["justification_a"].str.len().gt(0).all()  # asked for in the motivation condition
    summary = shown.attrs["summary"]
    assert summary["a_right_b_wrong"] == len(shown) and summary["n_items"] == 88


def test_baseline_filter_is_harmless_without_baselines(src):
    assert views.baseline_models(src, "demo") == []
    assert views.explorer_items(src, Selection(), filter="baseline_only_right").empty


def test_only_a_baseline_right_and_baselines_marked_in_the_matrix(chance_db):
    views.clear_caches()
    src, sel = views.Source.of(str(chance_db)), Selection(models=("Sim H (format-fragile)",))
    (chance,) = views.baseline_models(src, "demo")
    everyone = views.selected_scores(src, sel.with_(baselines=True, models=(*sel.models, chance)))
    full = everyone[everyone["score"] == 1]
    expected = sorted(set(full.loc[full["model"] == chance, "item_id"]) - set(full.loc[full["model"] != chance, "item_id"]))
    kept = views.explorer_items(src, sel, filter="baseline_only_right")
    assert expected and list(kept["item_id"]) == expected
    assert (kept["models_right"] == 0).all()  # the examinees' count leaves the baseline out
    matrix = views.failure_matrix(src, sel)
    assert chance in set(matrix["model"])  # a reference mark in the matrix, whatever the switch


# ---------------------------------------------------------------- the page (AppTest)

@pytest.fixture
def app(demo_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.pages.test_app_pages import ROOT

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)


def _inspector(app, **query):
    for key, value in query.items():
        app.query_params[key] = value
    app.run()
    app.switch_page("pages/07_inspector.py").run()
    assert not app.exception, app.exception[0].value
    return app


def _shows_item(app, item_id: str) -> bool:
    return any(f"Item **{plain(item_id)}**" in m.value for m in app.markdown)


def test_the_inspector_opens_on_the_first_item_the_filter_keeps(app, src):
    """On the list's first item, not on one further down (the demo's "All items" list used to open on
    its second item, demo-0002); a link whose item the chosen filter does not keep shows the list's
    first item and says which one was passed over."""
    every = views.explorer_items(src, Selection(dataset="demo"))
    _inspector(app)
    assert _shows_item(app, str(every["item_id"].iloc[0]))
    app.selectbox(key="insp_quick").set_value("all_wrong").run()
    kept = views.explorer_items(src, Selection(dataset="demo"), filter="all_wrong")
    assert _shows_item(app, str(kept["item_id"].iloc[0]))


@pytest.mark.slow
def test_a_link_to_an_item_its_filter_does_not_keep_opens_the_lists_first_item(app, src):
    kept = views.explorer_items(src, Selection(dataset="demo"), filter="all_wrong")
    outside = next(i for i in views.explorer_items(src, Selection(dataset="demo"))["item_id"] if i not in set(kept["item_id"]))
    _inspector(app, filter="all_wrong", item=outside)
    first = str(kept["item_id"].iloc[0])
    assert _shows_item(app, first) and not _shows_item(app, outside)
    assert any(f"Item {plain(outside)} is not in this list" in c.value and plain(first) in c.value for c in app.caption)
    assert app.query_params["item"] in (first, [first])


@pytest.mark.slow
def test_the_answers_heading_says_what_the_list_kept_and_what_right_means(app, src):
    """Under "No model fully right", "right" is full credit (score 1), as in the filter and the
    matrix: the heading says the item is one the list keeps and counts 0 right, the partial and
    the wrong answers apart (it used to count "5 of 8 right (score at least 0.5)" there)."""
    sel = Selection(dataset="demo")
    kept = views.explorer_items(src, sel, filter="all_wrong")
    _inspector(app, filter="all_wrong")
    first = str(kept["item_id"].iloc[0])
    answers = views.item_responses(src, "demo", first)
    every = answers[answers["is_latest"].astype(bool) & (answers["condition"] == sel.condition)]
    answers = every[every["repetition"].fillna(0) == 0]
    # a model answering in repeats counts by the mean of its repeats, as the list and the score frame do
    states = analysis.cell_states(every.groupby("model")[f"{sel.profile}_score"].mean()).value_counts()
    assert states.get("partial", 0) > 0  # the case that read as "right" before
    heading = next(m.value for m in app.markdown if "answers in condition" in m.value)
    assert f"One of the {len(kept)} items the list “No model fully right” keeps" in heading
    assert f"Of the **{len(answers)}** answers" in heading and "**0 are right** (full credit, score 1)" in heading
    assert f"{states.get('partial', 0)} partial" in heading and f"{states.get('wrong', 0)} wrong (score 0)" in heading
    assert "at least 0.5" not in heading


@pytest.mark.slow
def test_search_opens_the_item_it_finds(app, src):
    texts = views.item_texts(src, "demo")
    target, word = next((i, t.split()[-1].strip(".:?,")) for i, t in sorted(texts.items())[5:]
                        if sum(t.split()[-1].strip(".:?,") in x for x in texts.values()) == 1)
    _inspector(app)
    assert not _shows_item(app, target)
    app.text_input(key="insp_search").set_value(word).run()
    assert not app.exception
    assert _shows_item(app, target)
    assert app.query_params["item"] in (target, [target])


@pytest.mark.slow
def test_a_deep_link_opens_one_response_under_both_profiles(app, monkeypatch):
    monkeypatch.setenv("EDUART_MAX_SHOWN_CHARS", "20")
    _inspector(app, item="demo-0007", condition="motivation", open="motivation:Sim H (format-fragile)")
    assert _shows_item(app, "demo-0007")
    assert any(m.value.startswith("##### Sim H") and "motivation" in m.value for m in app.markdown)
    marks = [t for t in app.table if "given (strict)" in t.value.columns]
    assert marks and "given (paper)" in marks[0].value.columns
    share = [c.value for c in app.code if c.value.startswith("/inspector?")]
    assert share and all(f in share[0] for f in ("dataset=demo", "profile=strict", "condition=motivation",
                                                 "item=demo-0007", "open=motivation%3ASim+H"))
    assert app.get("download_button")  # the long justification: truncated, full text as a download
    assert any("Shown: the first" in c.value for c in app.caption)


@pytest.mark.slow
def test_compare_view_from_a_shared_link(app):
    a, b = "Sim A (strong recogniser)", "Sim H (format-fragile)"
    _inspector(app, view="compare", a=a, b=b, only="a_right_b_wrong")
    assert app.radio(key="insp_view").value == "compare"
    assert app.selectbox(key="insp_a").value == a and app.selectbox(key="insp_b").value == b
    assert any("A right, B wrong on" in m.value for m in app.markdown)
    assert any("**A**" in m.value for m in app.markdown) and any("**B**" in m.value for m in app.markdown)


@pytest.mark.slow
def test_profile_page_links_keep_the_profile_and_open_the_response(app):
    app.query_params["profile"] = "paper"
    app.run()
    app.switch_page("pages/09_profiles.py").run()
    assert not app.exception
    links = [v for df in app.dataframe if "inspect" in df.value for v in df.value["inspect"]]
    assert links and all("profile=paper" in u and "condition=default" in u and "open=" in u and "item=" in u
                         for u in links)


@pytest.mark.slow
def test_items_nobody_answered_can_be_browsed(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core.scoring.item_writes import upsert_items
    from eduart_core.store import Store
    from tests.pages.test_app_pages import ROOT

    db = tmp_path / "fresh" / "eduart.duckdb"
    upsert_items(Store(db), [{**RADIO, "item_id": "q1"}, {**TF, "item_id": "q2"}], dataset="items", origin="test")
    monkeypatch.setenv("EDUART_DB", str(db))
    views.clear_caches()
    app = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    _inspector(app, item="q2")
    assert _shows_item(app, "q2")
    assert any("No responses recorded" in i.value for i in app.info)
    assert any("TRUE" in m.value for m in app.markdown)  # the key of the true/false card


@pytest.mark.slow
def test_a_small_selection_is_one_line_on_every_page(app):
    from pages.ui import menu

    app.query_params.update({"dataset": "demo", "types": "select_errors", "lang": "en", "image": "with"})
    app.run()
    assert not app.exception
    for page in [spec.script for spec in menu.PAGES.values() if spec.script]:
        app.switch_page(page).run()
        assert not app.exception, (page, app.exception[0].value if app.exception else None)


def test_flags_are_the_same_on_the_views_encoded_keys_at_scale():
    """The views hand the explorer categorical keys (one encoded read per dataset); with more than
    127 items and no baseline the counts must not depend on that encoding."""
    items = [f"i{k:03d}" for k in range(200)]
    rows = [(m, c, i, ((k + len(m) + len(c)) % 3) / 2) for m in ("A", "B", "C") for c in ("default", "motivation")
            for k, i in enumerate(items)]
    frame = pd.DataFrame(rows, columns=["model", "condition", "item_id", "score"])
    plain = analysis.item_flags({"strict": frame, "paper": frame}, "strict", "default")
    encoded = frame.assign(**{c: pd.Categorical(frame[c], categories=pd.Index(sorted(frame[c].unique()), dtype=object))
                              for c in ("model", "condition", "item_id")})
    flags = analysis.item_flags({"strict": encoded, "paper": encoded}, "strict", "default")
    assert len(flags) == 200
    pd.testing.assert_frame_equal(flags, plain)


@pytest.mark.parametrize("count_baselines", [False, True])
def test_flags_counted_on_codes_equal_the_joins_they_replace(count_baselines):
    """The counts behind the inspector's filters, taken over an item x model grid (fast at 50 models x
    5,000 items), equal the joins and group-bys they replace, with baselines, partial and missing
    scores, items one profile lacks and categorical keys; a repeated key still goes the way of joins."""
    from eduart_core.analysis import explorer

    rng = np.random.default_rng(4)
    rows = [(m, c, f"i{i:03d}") for m in ("a", "b", "c", "chance") for c in ("default", "motivation")
            for i in range(60) if rng.random() > 0.1]
    base = pd.DataFrame(rows, columns=["model", "condition", "item_id"])
    strict = base.assign(score=rng.choice([0.0, 0.5, 1.0, np.nan], len(base), p=[0.4, 0.1, 0.45, 0.05]))
    paper = strict.assign(score=np.where(rng.random(len(base)) < 0.2, 1.0, strict["score"])).iloc[5:]
    encoded = {name: f.astype({"model": "category", "item_id": "category", "condition": "category"})
               for name, f in (("strict", strict), ("paper", paper))}
    for frames in ({"strict": strict, "paper": paper}, encoded, {"strict": strict}):
        for condition in ("default", "motivation"):
            got = analysis.item_flags(frames, "strict", condition, baselines=["chance"], count_baselines=count_baselines)
            want = explorer._item_flags_joined(frames, "strict", condition, ["chance"], count_baselines)
            pd.testing.assert_frame_equal(got, want)
            assert got.attrs == want.attrs
    repeated = {"strict": pd.concat([strict, strict.iloc[:3]])}
    pd.testing.assert_frame_equal(analysis.item_flags(repeated, "strict", "default"),
                                  explorer._item_flags_joined(repeated, "strict", "default"))
