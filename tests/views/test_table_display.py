"""Tables read in words with one rounding per kind of number, on pages and in the report.

Walks every registered view on the demo store (`views.VIEWS`), puts its frame through the one rule
(`eduart_core.columns`) the pages and the report use, and checks what a reader sees: headers are words
(no column ids), format ids appear as the format's display name, each kind of number shows its own
fixed decimals; the distractor table lists options with their text and one flag column, regression
terms are labels, and the forest plot's log axis labels only 1-2-5 values.
"""
from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from eduart_core import columns, views, vocab
from eduart_core.errors import UserError
from eduart_core.selection import Selection

ROOT = Path(__file__).resolve().parents[2]
#: Statistic symbols written as the field writes them (the pages explain r_pb in words).
SYMBOLS = ("r_pb",)
FORMAT_IDS = set(vocab.FORMATS)


def _plain(header: str) -> str:
    for symbol in SYMBOLS:
        header = header.replace(symbol, "")
    return header


@pytest.fixture(scope="module")
def shown(demo_db) -> dict[str, columns.Table]:
    """Every view that runs on the demo store without options, as its table."""
    src, sel = views.Source.of(str(demo_db)), Selection()
    out = {}
    for name, spec in views.VIEWS.items():
        try:
            frame = spec.fn(src, sel)
        except UserError:  # needs an option (an item, a model) or does not apply to the demo
            continue
        out[name] = columns.table(frame, view=name)
    return out


def test_the_walk_covers_the_page_tables(shown):
    assert len(shown) > 40
    assert {"leaderboard", "regression", "distractors", "irt_items", "image_sizes"} <= set(shown)


def test_every_header_is_words_not_a_column_id(shown):
    bad = {(name, label) for name, t in shown.items() for label in t.labels.values()
           if "_" in _plain(label) or label in FORMAT_IDS}
    assert bad == set()
    assert shown["leaderboard"].labels["macro"] == "Macro avg. (%)"
    assert shown["leaderboard"].labels["n_items"] == "Items"
    assert shown["type_scores"].labels["type"] == "Format"


def test_format_ids_show_as_the_format_registry_names(shown):
    found = {(name, c) for name, t in shown.items() for c in t.frame.columns
             if not pd.api.types.is_numeric_dtype(t.frame[c])
             and any(isinstance(v, str) and v in FORMAT_IDS for v in t.frame[c].tolist())}
    assert found == set()
    formats = set(shown["type_scores"].frame["type"])
    assert formats <= {vocab.format_label(f) for f in vocab.FORMATS} and len(formats) == 7


def test_each_kind_of_number_shows_one_rounding(shown):
    """Within a kind, every printed number has the kind's decimals: no 79 beside 79.3, no 1045.833."""
    wrong = []
    for name, t in shown.items():
        text = t.text()
        for column, spec in t.columns.items():
            if not spec.kind.numeric or not pd.api.types.is_numeric_dtype(t.frame[column]) \
                    or pd.api.types.is_bool_dtype(t.frame[column]):
                continue
            pattern = re.compile(r"-?\d+" + (rf"\.\d{{{spec.kind.digits}}}" if spec.kind.digits else ""))
            cells = [c for c in text[spec.label].head(200) if c != "—"]
            wrong += [(name, column, c) for c in cells if not pattern.fullmatch(c)]
    assert wrong == []
    assert shown["image_sizes"].text()["Size (kB)"].iloc[0].count(".") == 1
    sizes = shown["image_sizes"].text()  # whole pixels, also for the mean: "1046", never "1045.8" or "600.0"
    assert all(re.fullmatch(r"\d+", c) for c in [*sizes["Width (px)"], *sizes["Height (px)"]])
    percents = [t.text()[s.label] for t in shown.values() for s in t.columns.values() if s.kind is columns.PERCENT]
    assert percents and all(re.fullmatch(r"-?\d+\.\d", c) for col in percents for c in col.head(50) if c != "—")
    assert shown["leaderboard"].text()["Rank"].iloc[0] == "1"


def test_a_page_number_column_gets_the_kind_of_its_rounding():
    assert columns.printf(columns.PERCENT) == "%.1f" and columns.printf(columns.COUNT) == "%.0f"
    assert columns.column("macro").kind is columns.PERCENT
    assert columns.column("ci_low", "irt_abilities").kind is columns.LOGIT
    assert columns.column("some_new_share", percent=True).label == "Some new share (%)"


def test_the_distractor_table_lists_each_option_with_its_text(shown, demo_db):
    from eduart_core.store import Store
    from eduart_core.store.items import load_items

    distractors = shown["distractors"].frame
    first = distractors.iloc[0]
    catalogue = load_items(Store(str(demo_db)), "demo")
    record = catalogue.set_index("item_id").loc[first["item_id"], "record"]
    texts = {c["id"]: c["text"] for c in record["choices"]}
    assert first["option_text"] == texts[first["option"]] and first["option_text"]


def test_regression_terms_are_labels(shown):
    terms = list(shown["regression"].frame["predictor"])
    assert "Intercept" in terms
    assert f"Format: {vocab.format_label(vocab.COMPLETION_OPEN_TYPE)}" in terms
    assert not [t for t in terms if ":" in t and "_" in t.split(":")[1] or "[T." in t or t.startswith("type")]
    assert columns.term_label("has_image:True") == "Image: with an image"
    assert columns.term_label("language:it") == "Language: Italian"
    refs = set(shown["regression"].frame["reference"])
    assert vocab.format_label(vocab.MCQ_TYPE) in refs and not refs & FORMAT_IDS


def test_log_axes_label_1_2_5_values_only(demo_db):
    from eduart_core.charts.psychometrics import figure_item_fit
    from eduart_core.charts.results import figure_forest, log_ticks

    reg = views.regression(views.Source.of(str(demo_db)), Selection())
    axis = figure_forest(reg).layout.xaxis
    assert axis.type == "log" and axis.tickmode == "array"
    assert all(float(f"{v:.0e}".split("e")[0]) in (1, 2, 5) for v in axis.tickvals)
    assert list(axis.ticktext) == [f"{v:g}" for v in axis.tickvals]
    assert min(axis.tickvals) <= reg["ci_low"].min() * 1.5 and 1.0 in axis.tickvals
    fit = figure_item_fit(views.irt_item_fit(views.Source.of(str(demo_db)), Selection()))
    for axis in (fit.layout.xaxis, fit.layout.yaxis):
        assert axis.type == "log" and axis.tickmode == "array"
        assert all(float(f"{v:.0e}".split("e")[0]) in (1, 2, 5) for v in axis.tickvals)
    wide = log_ticks([0.001, 50.0])
    assert wide["tickvals"] == [0.001, 0.01, 0.1, 1.0, 10.0, 100.0][:len(wide["tickvals"])]


def test_the_report_tables_follow_the_same_rule(demo_db):
    from eduart_core.report import build_report

    text = build_report(str(demo_db))
    headers = re.findall(r"<th>([^<]*)</th>", text)
    cells = re.findall(r"<td>([^<]*)</td>", text)
    assert "Macro avg. (%)" in headers and "Term" in headers
    assert [h for h in headers if "_" in _plain(h)] == []
    assert not set(cells) & FORMAT_IDS
    assert "Format: Completion (open)" in cells
    board = text.split("<h2>Leaderboard</h2>")[1].split("</table>")[0]
    numbers = [c for c in re.findall(r"<td>([^<]*)</td>", board) if re.fullmatch(r"-?[\d.]+", c)]
    assert numbers and all(re.fullmatch(r"\d+|\d+\.\d", c) for c in numbers)


@pytest.mark.slow
def test_page_tables_show_the_rule_s_headers_and_decimals(demo_db, monkeypatch):
    """The Overview and Formats pages: every table's headers are words and each number column is
    printed with its kind's decimals (the leaderboard's 79.0 beside 79.3, never 79)."""
    import json

    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    drawn = list(at.dataframe)
    at.switch_page("pages/03_formats.py").run()
    assert not at.exception
    drawn += list(at.dataframe)
    configs = [json.loads(d.proto.columns) for d in drawn]
    assert len(configs) >= 4
    labels = [spec.get("label", name) for config in configs for name, spec in config.items()
              if not name.startswith("_")]  # Streamlit's own entries (the hidden index)
    assert [label for label in labels if "_" in _plain(label)] == []
    board = configs[0]
    assert board["macro"]["label"] == "Macro avg. (%)"
    assert board["macro"]["type_config"]["format"] == columns.printf(columns.PERCENT) == "%.1f"
    assert board["n_items"]["type_config"]["format"] == "%.0f"
    regression = next(c for c, d in zip(configs, drawn) if "predictor" in d.value.columns)
    assert regression["odds_ratio"]["type_config"]["format"] == columns.printf(columns.STATISTIC)
    assert regression["p"]["type_config"]["format"] == columns.printf(columns.P_VALUE)
