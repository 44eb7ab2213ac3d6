"""Figure builders, findings and exports on synthetic frames: the numbers drawn are the analysis numbers."""
from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

from eduart_core import analysis, display, exports, findings, rounding
from eduart_core.charts import results as charts
from eduart_core.simulate.score_frames import synthetic_scores


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    return synthetic_scores(6, 140, seed=3)


def test_leaderboard_bars_are_macro_percent_with_family_colours(frame):
    macro = analysis.macro_scores(frame[frame["condition"] == "default"])  # charts draw one condition
    fams = {m: ("OpenAI" if i % 2 else "Google") for i, m in enumerate(sorted(frame["model"].unique()))}
    fig = charts.figure_leaderboard(macro, families=fams)
    bar = fig.data[0]
    expected = macro[macro["condition"] == "default"].set_index("model")["macro"]
    names = [c[0] for c in bar.customdata]
    for model, x, colour, label in zip(names, bar.x, bar.marker.color, bar.text):
        assert x == pytest.approx(round(100 * expected[model], 1))
        assert label == rounding.fmt_percent(expected[model])
        assert colour == charts.FAMILY_COLOURS[fams[model]]
    assert list(bar.x) == sorted(bar.x)  # best model on top
    assert list(fig.layout.yaxis.ticktext) == names


def test_leaderboard_labels_and_markers_sit_in_separate_lanes(frame):
    """A value label lives in the bar's lane, the diamond and its interval in the lane below."""
    macro = analysis.macro_scores(frame[frame["condition"] == "default"])
    fig = charts.figure_leaderboard(macro)
    bar = fig.data[0]
    mcq = next(t for t in fig.data if t.name and t.name.startswith("Multiple choice"))
    half = bar.width / 2
    for y_bar, y_mark in zip(bar.y, mcq.y):
        assert y_bar - half > y_mark + 0.05  # the bar lane ends above the marker row


def test_legends_match_the_marks(frame):
    macro = analysis.macro_scores(frame[frame["condition"] == "default"])
    fams = {m: ("OpenAI" if i % 2 else "Google") for i, m in enumerate(sorted(frame["model"].unique()))}
    fig = charts.figure_leaderboard(macro, families=fams)
    legend = {t.name: t for t in fig.data if t.showlegend is not False}
    assert {"OpenAI", "Google"} <= set(legend)
    for family in ("OpenAI", "Google"):
        assert legend[family].marker.color == charts.FAMILY_COLOURS[family]
    assert fig.data[0].showlegend is False  # the multi-coloured bars have no single swatch
    effect = analysis.motivation_effect(frame)
    dumbbell = charts.figure_motivation_dumbbell(effect)
    for trace in dumbbell.data:
        if trace.showlegend is False or trace.mode != "markers":
            continue
        assert isinstance(trace.marker.color, str)  # one colour per legend entry
        if "higher" in trace.name:
            assert trace.marker.color == charts.HIGHER_COLOUR
        if "lower" in trace.name:
            assert trace.marker.color == charts.LOWER_COLOUR


def test_no_label_reads_minus_zero():
    frame = pd.DataFrame({"model": ["a", "a", "b", "b"], "type": ["true_false", "positioning"] * 2,
                          "delta": [-0.003, 0.0004, -0.0, 0.2]})
    fig = charts.figure_delta_heatmap(frame)
    texts = [t for row in fig.data[0].text for t in row]
    assert "-0.0" not in texts and "-0" not in texts
    assert "0.0" in texts and "+20.0" in texts
    assert rounding.fmt(-0.04) == "0.0" and rounding.fmt(-0.04, signed=True) == "0.0"
    assert rounding.fmt(-0.06) == "-0.1"


def test_unknown_family_gets_the_neutral_colour():
    assert charts.family_colour("Nobody") == charts.OTHER_COLOUR
    assert charts.family_colour("openai") == charts.FAMILY_COLOURS["OpenAI"]


def test_heatmap_is_sorted_by_macro_and_labels_cells(frame):
    one = frame[frame["condition"] == "default"]  # charts draw one condition
    ts, macro = analysis.type_scores(one), analysis.macro_scores(one)
    fig = charts.figure_format_heatmap(ts, macro=macro)
    heat = fig.data[0]
    order = macro[macro["condition"] == "default"].sort_values("macro")["model"].tolist()
    assert list(heat.y) == order
    assert heat.zmin == 0 and heat.zmax == 100
    assert heat.text[0][0] == rounding.fmt(heat.z[0][0])


def test_motivation_dumbbell_colours_and_labels_follow_the_delta_and_the_corrected_test(frame):
    effect = analysis.motivation_effect(frame)
    fig = charts.figure_motivation_dumbbell(effect)
    by_model = effect.set_index("model")
    lines = [t for t in fig.data if t.mode == "lines"]
    for line in lines:
        left, right = line.x
        carried = by_model.loc[line.y[0], "p_holm"] < 0.05  # what the motivation finding counts
        assert line.line.color == ((charts.HIGHER_COLOUR if right >= left else charts.LOWER_COLOUR) if carried
                                   else charts.NOISE_COLOUR)
    default = next(t for t in fig.data if t.name == "default")
    assert default.marker.symbol == "circle-open"
    delta = next(t for t in fig.data if t.name == "delta")
    label_of = dict(zip(delta.y, delta.text))
    shown = exports.display_frame(effect, percent=("delta_macro",)).set_index("model")["delta_macro"]
    for line in lines:
        model = line.y[0]
        mark = charts.significance_mark(by_model.loc[model, "p_holm"])
        # the label is the table's rounded delta (not the difference of two rounded ends)
        assert label_of[model] == rounding.fmt(shown[model], signed=True) + mark


def test_significance_marks():
    assert charts.significance_mark(0.01) == "*"
    assert charts.significance_mark(0.07) == ""  # the finding counts p < .05 after Holm, nothing else
    assert charts.significance_mark(0.2) == ""
    assert charts.significance_mark(float("nan")) == ""


def test_scatter_has_a_panel_per_format_plus_centroids_and_item_ids(frame):
    stats = analysis.item_statistics(frame)
    fig = charts.figure_difficulty_discrimination(stats)
    titles = [a.text for a in fig.layout.annotations]
    assert "Format centroids" in titles
    assert len([t for t in titles if t != "Format centroids"]) == stats["type"].nunique()
    ids = {i for t in fig.data if t.customdata is not None for i in t.customdata}
    assert ids == set(stats.dropna(subset=["r_pb"])["item_id"])
    hlines = [s for s in fig.layout.shapes if s.y0 == s.y1]
    assert {0.3, 0.1} <= {round(s.y0, 2) for s in hlines}


def test_forest_plot_leaves_out_the_intercept(frame):
    reg = analysis.logistic_regression(frame)
    fig = charts.figure_forest(reg)
    assert len(fig.data[0].x) == (reg["predictor"] != "intercept").sum()
    assert fig.layout.xaxis.type == "log"


def test_findings_name_tests_and_numbers(frame):
    board = analysis.macro_scores(frame)
    board = board[board["condition"] == "default"]
    one = frame[frame["condition"] == "default"]
    found = findings.key_findings(board, analysis.type_scores(one), analysis.motivation_effect(frame),
                                  analysis.logistic_regression(frame, cluster="item"), analysis.image_effect(frame))
    assert 3 <= len(found) <= 6
    assert all(f.test for f in found)
    top = board.sort_values("macro").iloc[-1]
    assert top["model"] in found[0].headline and f"{100 * top['macro']:.1f}%" in found[0].headline


def test_item_filters_and_neighbours():
    table = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "models_right": [0, 2, 4, 1], "n_models": [4] * 4,
                          "r_pb": [np.nan, -0.2, 0.5, 0.1], "top_minus_weak": [0, -0.5, 0.2, 0.1],
                          "text": ["Giotto", "Masaccio", "Piero", "Raffaello"]})
    assert list(analysis.filter_items(table, "all_wrong")["item_id"]) == ["a"]
    assert list(analysis.filter_items(table, "disagree")["item_id"]) == ["b", "d"]
    assert list(analysis.filter_items(table, "negative_rpb")["item_id"]) == ["b"]
    assert list(analysis.filter_items(table, "top_fail")["item_id"]) == ["b"]
    assert list(analysis.filter_items(table, "all", "piero")["item_id"]) == ["c"]
    assert display.neighbours(["a", "b", "c"], "a") == (None, "b")
    assert display.neighbours(["a", "b", "c"], "c") == ("b", None)


def test_answer_marks_render_selection_and_blanks():
    check = {"type": "multiple_choice_check", "choices": [{"id": "A", "text": "volta"}]}
    rows = display.answer_rows([{"element": "A", "expected": True, "given": False, "right": False}], check)
    assert rows.iloc[0].tolist() == ["✗ wrong", "A. volta", "selected", "not selected"]
    blanks = {"type": "completion_open"}
    rows = display.answer_rows([{"element": "B", "expected": "volta", "given": None, "right": False},
                                {"element": "C", "expected": "1480", "given": "1480", "right": True}], blanks)
    assert list(rows["mark"]) == ["✗ wrong", "✓ right"]
    assert list(rows["given"]) == ["—", "1480"]


def test_tables_export_as_csv_and_latex():
    table = pd.DataFrame({"model": ["GPT_5 & co"], "macro": [0.8123]})
    assert exports.table_csv(table).decode().splitlines() == ["model,macro", "GPT_5 & co,0.8123"]
    tex = exports.table_latex(exports.display_frame(table), caption="Scores 100%").decode()
    assert r"Model & Macro avg. (\%) \\" in tex and r"GPT\_5 \& co & 81.2 \\" in tex
    assert r"\caption{Scores 100\%}" in tex and r"\toprule" in tex


def test_png_and_svg_export_or_clear_fallback(frame):
    fig = charts.figure_leaderboard(analysis.macro_scores(frame))
    if not exports.static_export_available():
        assert exports.figure_image(fig, "png") is None
        assert "camera icon" in exports.NO_BROWSER_MESSAGE
        if os.environ.get("EDUART_REQUIRE_BROWSER") == "1":
            pytest.fail("EDUART_REQUIRE_BROWSER=1 but kaleido found no browser")
        return
    png = exports.figure_image(fig, "png")
    svg = exports.figure_image(fig, "svg")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert b"<svg" in svg[:500]
    with pytest.raises(ValueError):
        exports.figure_image(fig, "gif")


def test_answer_marks_name_the_option_text():
    record = {"type": "multiple_choice_radio",
              "choices": [{"id": "B", "text": "De prospectiva pingendi"}, {"id": "C", "text": "De pictura"}]}
    rows = display.answer_rows([{"element": "answer", "expected": "B", "given": "C", "right": False}], record)
    assert rows.iloc[0]["expected"] == "B. De prospectiva pingendi"
    assert rows.iloc[0]["given"] == "C. De pictura"


def missing_titles(spec: dict) -> list[str]:
    """What a figure (its JSON) lacks: a title, and a title for each cartesian axis that shows values."""
    layout = spec.get("layout", {})
    title = layout.get("title")
    text = title.get("text") if isinstance(title, dict) else title
    out = [] if str(text or "").strip() else ["no title"]
    for name, axis in layout.items():
        if not (name.startswith("xaxis") or name.startswith("yaxis")) or axis.get("visible") is False:
            continue
        if axis.get("showticklabels") is False and not axis.get("ticktext"):
            continue  # an axis that shows no values (a lane, a spacer) needs no name
        words = axis.get("title", {})
        words = words.get("text") if isinstance(words, dict) else words
        if not str(words or "").strip():
            out.append(f"{name} has no title")
    return out


def test_every_story_panel_has_a_title_and_axis_titles_on_every_demo_dataset(demo_db):
    """Page, report and export draw the same figure: each panel's title and axis names are in it."""
    from eduart_core import panels, views
    from eduart_core.errors import UserError
    from eduart_core.selection import Selection
    from eduart_core.vocab import DEFAULT_DATASET, STUDY_DEMO_DATASETS

    src = views.Source.of(str(demo_db))
    drawn, wrong = 0, {}
    for dataset in (DEFAULT_DATASET, *STUDY_DEMO_DATASETS):
        for name in panels.PANELS:
            try:
                fig = panels.draw(name, src, Selection(dataset=dataset)).figure
            except (views.EmptySelection, views.ItemLevelUnavailable, UserError):
                continue
            if fig is None:
                continue
            drawn += 1
            problems = missing_titles(fig.to_plotly_json())
            if problems:
                wrong[f"{name} on {dataset}"] = problems
    assert drawn >= len(panels.PANELS)
    assert not wrong, wrong
