"""Every sentence follows its numbers, on every demo dataset, and a stakeholder can read it aloud.

What a user relies on:
- a star, an asterisk or a colour marks what the finding counts (the Holm-corrected test), and
  the caption says so;
- a direction ("raises", "beats", "do worse", "harder") or a leader is named only when the
  interval or the corrected test carries it; otherwise the sentence says the data do not tell
  (walked over every sentence generator on every demo dataset, and at an interval that holds
  zero for each generator);
- every headline is plain (no statistician's words), with the statistics one click away;
- a caption copied alone from a simulated dataset says "simulated";
- no sentence describes a dataset it does not fit (one format; published t-tests).
"""
from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from eduart_core import analysis, findings, item_notes, panels, views
from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.humans import story
from eduart_core.selection import Selection
from eduart_core.store import Store
from eduart_core.studies import words

ROOT = Path(__file__).resolve().parents[2]


def source(demo_db) -> views.Source:
    return views.Source.of(Store(demo_db))


def datasets(demo_db) -> list[str]:
    return views.analysable_datasets(source(demo_db))


def optional(fn, *args, **kwargs):
    """The view's answer, or None when it does not apply to the dataset (one-line UserError)."""
    try:
        return fn(*args, **kwargs)
    except UserError:
        return None


# ---------------------------------------------------------------- 1. stars mark what the finding counts

def _starred(fig) -> set[str]:
    delta = next(t for t in fig.data if t.name == "delta")
    return {str(y) for y, text in zip(delta.y, delta.text) if str(text).endswith("*")}


def test_stars_and_colours_mark_the_changes_the_finding_counts(demo_db):
    from eduart_core.charts.results import NOISE_COLOUR

    src = source(demo_db)
    checked = 0
    for dataset in datasets(demo_db):
        sel = Selection(dataset=dataset)
        effect = optional(views.motivation, src, sel)
        if effect is None or effect.empty:
            continue
        finding = findings.motivation_finding(effect)
        if finding is None:  # asked in one condition only: nothing to mark
            continue
        counted = set(effect.loc[effect["p_holm"] < 0.05, "model"].astype(str))
        for measure in ("macro", "micro"):
            if effect[f"default_{measure}"].isna().all():
                continue
            drawn = panels.draw("motivation_dumbbell", src, sel, measure=measure)
            assert _starred(drawn.figure) == counted, (dataset, measure)
            tested = int(effect["p_holm"].notna().sum())
            assert f"Holm-corrected p < .05 across {tested} models" in drawn.caption, drawn.caption
            assert "†" not in drawn.caption and "* p < .05" not in drawn.caption
            greys = {t.y[0] for t in drawn.figure.data if t.mode == "lines" and t.line.color == NOISE_COLOUR}
            assert greys == set(effect["model"].astype(str)) - counted, (dataset, measure)
        said = re.search(r"finds (\d+) models?|, (\d+) pooled", finding.detail)
        assert said and int(said.group(1) or said.group(2)) == len(counted), finding.detail
        checked += 1
    assert checked >= 2  # the demo (Wilcoxon) and the published aggregates (t-tests)


# ---------------------------------------------------------------- 2. directions only where the interval carries them

def test_every_finding_on_every_demo_dataset_names_only_what_its_test_carries(demo_db):
    src = source(demo_db)
    for dataset in datasets(demo_db):
        sel = Selection(dataset=dataset)
        found = views.key_findings(src, sel)
        assert found, dataset
        text = " ".join(f.headline for f in found)
        assert "leads" not in text and "best" not in text, (dataset, text)
        board = optional(views.leaderboard, src, sel)
        effect = optional(views.motivation, src, sel)
        for f in found:
            if "too close to call" in f.headline:
                assert "within sampling noise: the interval includes 0" in f.detail
            if "scores highest" in f.headline:
                assert ("beyond sampling noise: the interval excludes 0" in f.detail
                        or "alone in the first tie group" in f.detail), f.detail
            if "cannot be told apart" in f.headline and board is not None and "tie_group" in board:
                first = board[board["tie_group"] == 1]["model"]
                assert all(str(m) in f.headline for m in first), f.headline
            if "justification" in f.headline and effect is not None:
                tested = effect[effect["p_holm"].notna()]
                sig = tested[tested["p_holm"] < 0.05]
                named = re.findall(r"(?:raises|lowers|changes) (?:the score of|it for) (\d+)", f.headline)
                assert sum(int(n) for n in named) == len(sig), (f.headline, len(sig))
                rest = len(tested) - len(sig)
                if len(sig) and rest:
                    assert (f"the other {rest} changed within noise" in f.headline
                            or "the other model changed within noise" in f.headline), f.headline
            if "image" in f.headline and ("harder" in f.headline or "less often" in f.headline):
                ci = re.search(r"95% CI (\d[\d.]*\d) to (\d[\d.]*\d)", f.detail)  # not a sentence's full stop
                if ci and "do not tell" not in f.headline:
                    assert float(ci.group(2)) < 1 or float(ci.group(1)) > 1, f
        means = optional(views.type_scores, src, sel) if board is not None else None
        if means is not None and "type" in means:
            if means["type"].nunique() == 1:
                assert "any format" not in " ".join(f.headline + f.detail for f in found), dataset


@pytest.mark.slow
def test_item_notes_and_suspect_reasons_say_the_data_do_not_tell_inside_the_interval(demo_db):
    from eduart_core.suspects import suspect_queue

    src = source(demo_db)
    walked = holds_zero = 0
    for dataset in datasets(demo_db):
        sel = Selection(dataset=dataset)
        stats = optional(views.item_statistics, src, sel)
        if stats is None:
            continue
        for row in stats.dropna(subset=["r_pb"]).itertuples(index=False):
            note = item_notes.discrimination_note(row.r_pb, row.r_pb_ci_low, row.r_pb_ci_high, row.n_examinees,
                                                  row.discrimination_category)
            walked += 1
            if pd.notna(row.r_pb_ci_low) and row.r_pb_ci_low <= 0 <= row.r_pb_ci_high:
                holds_zero += 1
                assert "do not tell" in note and f"{int(row.n_examinees)} examinees" in note, note
                assert "tend to get it right" not in note and "do worse" not in note, note
        queue = suspect_queue(Store(demo_db), dataset)
        for details in queue["details"]:
            for detail in details.split(" · "):
                ci = re.search(r"r_pb = (-?[\d.]+) \(95% CI (-?[\d.]+) to (-?[\d.]+)", detail)
                if ci and float(ci.group(3)) >= 0:
                    assert "do not tell" in detail and "stronger examinees do worse" not in detail, detail
    assert walked > 100 and holds_zero > 10


def test_the_people_sentences_name_a_direction_only_outside_the_interval(demo_db):
    src = source(demo_db)
    for dataset in datasets(demo_db):
        gap = optional(views.human_gap, src, Selection(dataset=dataset))
        if gap is None or gap.empty:
            continue
        headline = gap.attrs["headline"]
        overall = gap[(gap["scope"] == "all") & (gap["group"] != "all people")]
        for row in overall.itertuples(index=False):
            inside = not (row.gap_median_ci_low > 0 or row.gap_median_ci_high < 0)
            named = re.search(rf"(beats|trails) the median {re.escape(str(row.group))}\b", headline)
            assert bool(named) == (not inside), (headline, row)
        for sentence in gap.attrs["sentences"]:
            for ci in re.finditer(r"95% CI ([+-]?[\d.]+) to ([+-]?[\d.]+) points(, which holds zero)?", sentence):
                low, high = float(ci.group(1)), float(ci.group(2))
                assert bool(ci.group(3)) == (low <= 0 <= high), sentence


# ---------------------------------------------------------------- 2. each generator at an interval that holds zero

def test_leader_at_an_interval_that_holds_zero_names_no_leader():
    board = pd.DataFrame({"model": ["A", "B", "C"], "macro": [0.74, 0.73, 0.5], "n_items": [88] * 3})
    paired = {"model_a": "A", "model_b": "B", "ci_low": -0.05, "ci_high": 0.07, "diff_macro": 0.01, "n_items": 88,
              "n_a_better": 14, "n_b_better": 17, "n_boot": 2000}
    f = findings.leader_finding(board, paired)
    assert f.headline.startswith("A and B are too close to call") and "within sampling noise" in f.headline
    assert not any(w in f.headline for w in ("leads", "ahead", "highest", "best"))
    untested = findings.leader_finding(board, None)
    assert "leads" not in untested.headline and "cannot show" in untested.headline


def test_image_sentences_at_an_odds_ratio_interval_that_holds_one():
    reg = pd.DataFrame({"predictor": ["intercept", "has_image:True"], "odds_ratio": [1.0, 0.56],
                        "ci_low": [0.5, 0.30], "ci_high": [2.0, 1.07], "p": [0.5, 0.07]})
    reg.attrs.update(n_obs=704, n_items=88, n_models=8)
    for f in (findings.image_finding(reg), findings.image_adjusted_verdict(reg)):
        assert "do not tell" in f.headline and "88 items" in f.headline
        assert "less often" not in f.headline and "more often" not in f.headline
        assert "about half the odds" in f.detail and "(includes 1)" in f.detail
    clear = reg.assign(ci_high=[2.0, 0.9])
    f = findings.image_finding(clear)
    assert "less often" in f.headline and "about half the odds" in f.headline


def test_raw_image_comparisons_name_no_direction():
    effect = pd.DataFrame({"model": ["A", "B"], "mean_with": [0.6, 0.5], "mean_without": [0.55, 0.52],
                           "delta": [0.05, -0.02], "n_with": [34, 34], "n_without": [54, 54]})
    for f in (findings.image_raw_finding(effect), findings.image_finding(None, effect)):
        assert not any(w in f.headline for w in ("higher", "lower", "harder", "easier")), f.headline


def test_discrimination_words_at_an_interval_that_holds_zero():
    note = item_notes.discrimination_note(0.21, -0.58, 0.80, 8, "fair")
    assert note.startswith("r_pb = 0.21 (fair; 95% interval -0.58 to 0.80, 8 examinees): ")
    assert "do not tell" in note and "8 examinees" in note and "tend to get it right" not in note
    assert "tend to get it right" in item_notes.discrimination_note(0.6, 0.2, 0.85, 16, "good")
    assert "check the answer key" in item_notes.discrimination_note(-0.7, -0.9, -0.2, 16, "poor")
    assert "no interval" in item_notes.discrimination_note(0.3, float("nan"), float("nan"), 3, "good")
    reason = item_notes.negative_discrimination_reason(-0.06, -0.54, 0.45, 16)
    assert reason.startswith("r_pb = -0.06 (95% CI -0.54 to 0.45, 16 examinees): ")
    assert "do not tell" in reason and "stronger examinees do worse" not in reason
    assert item_notes.negative_discrimination_reason(-0.6, -0.85, -0.2, 30).endswith("stronger examinees do worse")


def test_negative_discrimination_flags_are_worded_from_their_interval():
    from eduart_core.analysis.keyflags import FlagContext, statistics_flags

    rng = np.random.default_rng(3)
    rows = []
    for m in range(6):  # six examinees: any r has a wide interval
        for i in range(10):
            rows.append({"model": f"M{m}", "condition": "default", "item_id": f"i{i}", "type": "true_false",
                         "score": float(rng.random() < 0.5), "correct": False})
    frame = pd.DataFrame(rows)
    frame["correct"] = frame["score"] >= 0.5
    stats = analysis.item_statistics(frame, corrected=True)
    flags = statistics_flags(frame, FlagContext(stats=stats))
    negative = flags[flags["reason"] == "negative_discrimination"]
    assert len(negative)
    for item_id, detail in zip(negative["item_id"], negative["detail"]):
        high = float(stats.set_index("item_id").loc[item_id, "r_pb_ci_high"])
        assert ("do not tell" in detail) == (high >= 0), detail


def test_people_words_at_an_interval_that_holds_zero():
    assert story.versus(0.037, -0.034, 0.113).startswith("not told apart from them (3.7 points between them")
    assert "holds zero" in story.versus(0.037, -0.034, 0.113)
    assert story.versus(0.198, 0.105, 0.291).startswith("19.8 points above them")
    assert "too few items" in story.versus(0.05, float("nan"), float("nan"), 3)
    gaps = pd.DataFrame([
        {"scope": "all", "group": "expert", "type": "all", "language": "all", "n_people": 8, "n_items": 40,
         "best_model": "M", "median_person_mean": 0.8, "gap_median": -0.03, "gap_median_ci_low": -0.1,
         "gap_median_ci_high": 0.04, "n_items_median": 40, "best_person_mean": 0.9, "gap_best": -0.1,
         "gap_best_ci_low": -0.2, "gap_best_ci_high": -0.02, "n_items_best": 40, "best_model_mean": 0.77}])
    head = story.headline(gaps, simulated=False)
    assert "cannot be told apart from the median expert (3.0 points apart on 40 items)" in head
    assert "trails the best expert by 10.0 points" in head and "beats" not in head


def test_hardest_format_on_a_dataset_with_one_format():
    tm = pd.DataFrame({"model": ["A", "B"], "type": ["open_text"] * 2, "mean": [0.56, 0.4], "n": [24, 24],
                       "ci_low": [0.37, 0.2], "ci_high": [0.74, 0.6]})
    f = findings.hardest_format_finding(tm)
    assert "the only format here" in f.headline
    assert "any format" not in f.headline + f.detail and "lowest" not in f.headline + f.detail
    two = pd.concat([tm, tm.assign(type="true_false", mean=[0.9, 0.8])])
    f = findings.hardest_format_finding(two)
    assert "against up to 90.0% on true / false" in f.headline and "lowest top score of the 2 formats" in f.detail


def test_study_leader_and_hardest_column_say_what_a_printed_table_allows():
    scores = pd.DataFrame({"model": ["A", "B", "A", "B"], "column": ["overall", "overall", "Task", "Task"],
                           "score": [0.71, 0.67, 0.66, 0.6], "is_median": False, "n": [None, None, 100, 100],
                           "ci_low": [None, None, 0.56, 0.5], "ci_high": [None, None, 0.75, 0.69],
                           "aggregation": "as printed", "interval": "Wilson"})
    lead = findings.study_leader_finding(scores)
    assert "leads" not in lead.headline and "cannot show" in lead.headline
    hardest = findings.study_hardest_finding(scores)
    assert "any column" not in hardest.detail and "lowest" not in hardest.detail


def test_odds_ratios_read_in_words():
    assert findings.odds_words(0.56) == "about half the odds"
    assert findings.odds_words(0.33) == "about a third of the odds"
    assert findings.odds_words(2.1) == "about twice the odds"
    assert findings.odds_words(1.04) == "about the same odds"
    assert findings.odds_words(1.5) == "about 1.5 times the odds"


# ---------------------------------------------------------------- 3. plain headlines, statistics one click away

@pytest.mark.slow
def test_no_headline_uses_a_statisticians_word(demo_db):
    src = source(demo_db)
    for dataset in datasets(demo_db):
        sel = Selection(dataset=dataset)
        heads = [f.headline for f in views.key_findings(src, sel)]
        for name in panels.PANELS:
            drawn = optional(panels.PANELS[name].describe, src, sel)
            if drawn is not None and drawn.story:
                heads.append(drawn.story)
        gap = optional(views.human_gap, src, sel)
        if gap is not None and not gap.empty:
            heads.append(gap.attrs["headline"])
        scores = optional(views.dimension_scores, src, sel)
        if scores is not None:  # the Tasks and dimensions page's headline
            heads.append(words.leader_sentence(scores) or "")
        for head in heads:
            assert not findings.statistician_words(head), (dataset, head, findings.statistician_words(head))
        for f in views.key_findings(src, sel):  # the detail is one click away, with the method and n
            assert f.test in f.how_we_know() and f.detail in f.how_we_know()


# ---------------------------------------------------------------- 23. captions travel alone

def _show(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["show", *args])
    return code, out.getvalue()


@pytest.mark.slow
def test_every_caption_on_a_simulated_dataset_says_simulated(demo_db):
    src = source(demo_db)
    shown = 0
    for dataset in datasets(demo_db):
        if not views.dataset_flags(src, dataset).simulated:
            continue
        for panel in panels.PANELS.values():
            code, text = _show(panel.view, "--caption", "--dataset", dataset, "--db", str(demo_db))
            if code != 0:  # the view does not apply to this dataset (one line on stderr)
                continue
            shown += 1
            assert "simulated" in text.lower(), (dataset, panel.name, text)
    assert shown >= 30


# ---------------------------------------------------------------- 24. sentences that fit their dataset

def test_the_published_motivation_caption_names_the_test_its_finding_uses(demo_db):
    src = source(demo_db)
    sel = Selection(dataset="eduart2026")
    effect = views.motivation(src, sel)
    finding = findings.motivation_finding(effect)
    for measure in ("macro", "micro"):
        caption = panels.draw("motivation_dumbbell", src, sel, measure=measure).caption
        assert "no per-item test" not in caption
        assert "published paired t-test" in caption and "Holm-corrected" in caption
        assert "paired t-test" in finding.test and "published" in finding.test and "Holm" in finding.test
    assert "simulated" not in caption.lower()


# ---------------------------------------------------------------- 3. the page and presentation mode

@pytest.fixture
def app(demo_db, monkeypatch):
    """A fresh AppTest session of the studio on the demo store."""
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    return AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)


@pytest.mark.slow
def test_the_overview_shows_plain_headlines_with_how_we_know_one_click_away(app, demo_db):
    from eduart_core.text import plain

    app.run()
    assert not app.exception
    found = views.key_findings(source(demo_db), Selection())
    texts = [m.value for m in app.markdown]
    for f in found:
        assert f"- **{plain(f.headline)}**" in texts  # the headline alone, no numbers behind it
    known = [e for e in app.expander if e.label == "How we know"]
    assert len(known) == len(found)
    for f, box in zip(found, known):
        inside = " ".join(c.value for c in box.caption)
        assert plain(f.test) in inside and plain(f.detail) in inside
    assert not any(c.value.startswith("Test:") for c in app.caption)


@pytest.mark.slow
def test_presentation_puts_the_chart_statistics_under_how_we_know(app):
    app.query_params["present"] = "1"
    app.run()
    app.switch_page("pages/04_motivation.py").run()
    assert not app.exception
    known = [e for e in app.expander if e.label == "How we know"]
    assert len(known) == 1
    assert "Holm-corrected p < .05" in known[0].caption[0].value.replace("\\", "")  # plain() escapes markdown
    outside = [c.value for c in app.main.caption if "Holm-corrected" in c.value.replace("\\", "")]
    assert len(outside) == 1  # the caption is drawn once, inside the expander


def test_dif_names_a_direction_only_where_its_test_finds_one(demo_db):
    src = source(demo_db)
    table = views.dif(src, Selection())
    judged = table.dropna(subset=["p", "direction"])
    assert len(judged) and (judged["p"] >= 0.05).any()
    for row in judged.itertuples(index=False):
        named = any(w in row.direction for w in ("harder", "easier", "falls behind", "catches up"))
        assert named == (row.p < 0.05), row


def test_report_invalid_answer_sentence_at_overlapping_intervals():
    from eduart_core.report.studies import invalid_sentence

    close = pd.DataFrame({"model": ["A", "B"], "rate": [0.12, 0.10], "n": [100, 100], "ci_low": [0.07, 0.055],
                          "ci_high": [0.20, 0.175]})
    said = invalid_sentence(close)
    assert "gives the most" not in said and "do not tell" in said and "B" in said
    apart = close.assign(rate=[0.4, 0.05], ci_low=[0.31, 0.02], ci_high=[0.5, 0.11])
    assert invalid_sentence(apart).startswith("A gives the most invalid answers")


def test_the_tasks_headline_names_no_leader():
    scores = pd.DataFrame({"model": ["A", "B"], "column": ["overall"] * 2, "score": [0.71, 0.70], "is_median": False,
                           "below_chance": False, "aggregation": "micro: mean over all items pooled"})
    said = words.leader_sentence(scores)
    assert "leads" not in said and "no test says" in said and not findings.statistician_words(said)
