"""The fast read path: pooled read connections that never keep another process from
writing, the data version from the file signature, the latest answer marked when written, both
profiles read once with encoded keys, the dataset scope of the sidebar, and the one rounding."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pandas as pd
import pg_kit
import pytest
from scipy import stats

from eduart_core import exports, rounding, views
from eduart_core.analysis.motivation import paired_t_p, wilcoxon_p
from eduart_core.scoring.item_writes import upsert_items
from eduart_core.scoring.responses import add_responses
from eduart_core.store import Store, release_readers
from eduart_core.store.runs import create_run, ensure_dataset, ensure_model
from eduart_core.store.scores import load_responses, load_score_table, load_scores, long_scores
from eduart_core.vocab import EXTRACTION_KIND

RADIO = {"item_id": "r1", "type": "multiple_choice_radio", "question_text": "Which pigment is made up here?",
         "choices": [{"id": "A", "text": "red"}, {"id": "B", "text": "green"}],
         "answers": [{"id": "B", "description": "green"}], "language": "en", "has_image": False, "image": None}
RADIO2 = {**RADIO, "item_id": "r2"}


def _answer(*ids: str) -> str:
    return json.dumps({"Answers": [{"id": i} for i in ids]})


@pytest.fixture
def filled(store):
    return _fill(store)


def _fill(store: Store) -> Store:
    upsert_items(store, [RADIO, RADIO2], "ds", origin="test")
    ensure_model(store, "m1", "Model One", "Acme", "offline", "m1-api")
    ensure_model(store, "m2", "Model Two", "Acme", "offline", "m2-api")
    for model in ("m1", "m2"):
        for condition in ("default", "motivation"):
            create_run(store, f"{model}-{condition}", "ds", model, condition, "live")
    return store


def _write_in_other_process(path, timeout_s: float = 5.0) -> subprocess.CompletedProcess:
    code = textwrap.dedent(f"""
        from eduart_core.store import Store
        with Store({str(path)!r}, lock_timeout_s={timeout_s}).transaction() as con:
            con.execute("SELECT 1")
        print("wrote")
    """)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)


def test_a_read_here_never_keeps_another_process_from_writing(filled):
    before = Store(filled.path).data_version()
    with Store(filled.path).connect(read_only=True) as con:
        con.execute("SELECT count(*) FROM items").fetchone()
    result = _write_in_other_process(filled.path)  # the pooled reader closes when idle
    assert result.returncode == 0 and "wrote" in result.stdout, result.stderr
    assert Store(filled.path).data_version() == before + 1  # seen at once: the file signature changed


def test_a_write_here_closes_the_pooled_reader_first(filled):
    with filled.connect(read_only=True) as con:
        con.execute("SELECT 1").fetchone()
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("B")}])  # no lock clash
    assert len(load_scores(filled, dataset="ds")) == 1


def test_data_version_is_cached_until_the_file_changes(filled):
    store = Store(filled.path)
    first = store.data_version()
    release_readers(store.path)
    assert store.data_version() == first  # unchanged file: answered from its signature
    with store.transaction():
        pass
    assert store.data_version() == first + 1


def test_only_the_latest_answer_is_marked(filled):
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("A")}])
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("B")}])
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": None, "error": "timeout"}])
    create_run(filled, "m1-default-again", "ds", "m1", "default", "live")  # a later run of the same key
    add_responses(filled, "m1-default-again", [{"item_id": "r2", "raw_text": _answer("B")}])
    with filled.connect(read_only=True) as con:
        rows = con.execute("SELECT item_id, raw_text, error, is_latest FROM responses ORDER BY response_id").fetchall()
    marked = [(item, raw) for item, raw, _, latest in rows if latest]
    assert marked == [("r1", _answer("B")), ("r2", _answer("B"))]  # a failed request is not an answer
    table = load_score_table(filled, "ds")
    assert sorted(table["item_id"].astype(str)) == ["r1", "r2"] and table["score_strict"].tolist() == [1.0, 1.0]


def test_the_inspector_marks_the_answer_the_statistics_use_when_the_newest_request_failed(filled):
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("B")}])
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": None, "error": "timeout"}])
    responses = load_responses(filled, "ds", "r1")
    latest = responses[responses["is_latest"]]
    assert latest["raw_text"].tolist() == [_answer("B")] and latest["error"].tolist() == [None]
    assert load_scores(filled, "strict", "ds")["score"].tolist() == [1.0]  # the same answer


def test_both_profiles_in_one_read_equal_the_long_frame(filled):
    rows = {"m1-default": ("A", "B"), "m1-motivation": ("B", "AB"), "m2-default": ("B", "B"),
            "m2-motivation": ("A", "A")}
    for run_id, (first, second) in rows.items():
        add_responses(filled, run_id, [{"item_id": "r1", "raw_text": _answer(*first)},
                                       {"item_id": "r2", "raw_text": _answer(*second)}])
    table = load_score_table(filled, "ds")
    assert isinstance(table["model"].dtype, pd.CategoricalDtype)  # keys encoded once per load
    for profile in ("strict", "paper"):
        fast, slow = long_scores(table, profile), load_scores(filled, profile, "ds")
        assert list(fast.columns) == list(slow.columns)
        def values(frame, column):
            return [None if pd.isna(v) else v for v in frame[column].astype(object)]

        for column in slow.columns:
            assert values(fast, column) == values(slow, column), column
        assert fast.attrs["embedding_models"] == slow.attrs["embedding_models"]
    # "AB" on a radio item: paper still gives the point, strict does not
    assert long_scores(table, "paper")["score"].sum() > long_scores(table, "strict")["score"].sum()


def test_a_store_from_before_the_marker_reads_the_same(filled, tmp_path):
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("A")}])
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("B")}])
    expected = load_scores(filled, "strict", "ds")
    release_readers(filled.path)
    import duckdb

    con = duckdb.connect(str(filled.path))  # the responses table as written by an older version
    con.execute("CREATE TABLE old_responses AS SELECT * EXCLUDE (is_latest) FROM responses")
    con.execute("DROP INDEX responses_run")
    con.execute("DROP TABLE responses")
    con.execute("ALTER TABLE old_responses RENAME TO responses")
    con.execute("DELETE FROM schema_version WHERE version = 3")
    con.close()
    table = load_score_table(Store(filled.path), "ds")  # read-only: never migrates, falls back
    assert long_scores(table, "strict")["score"].tolist() == expected["score"].tolist()


def test_the_analysis_selector_offers_only_datasets_with_results(filled):
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("B")}])
    ensure_dataset(filled, "extracted", "Extracted pages", EXTRACTION_KIND)
    upsert_items(filled, [{**RADIO, "item_id": "x1"}], "extracted", origin="review")
    upsert_items(filled, [{**RADIO, "item_id": "n1"}], "unanswered", origin="test")
    src = views.Source.of(filled)
    assert views.analysable_datasets(src) == ["ds"]
    scope = views.dataset_filters(src, "ds")
    assert "English" in scope["languages"].reason and not scope["languages"].applies
    assert scope["image"].reason == "No item has an image." and scope["image"].value == "all"
    assert scope["condition"].value == "default"  # only default answers so far


@pytest.mark.parametrize("value,digits,signed,text", [
    (-0.04, 1, False, "0.0"), (-0.04, 1, True, "0.0"), (-0.06, 1, False, "-0.1"), (0.05, 0, True, "0"),
    (12.345, 1, True, "+12.3"), (float("nan"), 1, False, "—"), (None, 1, False, "—")])
def test_numbers_never_read_minus_zero(value, digits, signed, text):
    assert rounding.fmt(value, digits, signed=signed) == text


def test_one_rounding_for_labels_tables_and_exports():
    fractions = pd.Series([0.72449, -0.0004, 0.5])
    table = exports.display_frame(pd.DataFrame({"macro": fractions}), percent=("macro",))
    assert table["macro"].tolist() == list(rounding.percent(fractions))
    assert [rounding.fmt_percent(f) for f in fractions] == ["72.4", "0.0", "50.0"]
    assert str(table["macro"].iloc[1]) == "0.0"


def test_latex_has_booktabs_readable_headers_one_decimal_caption_and_label():
    frame = exports.display_frame(pd.DataFrame({"model": ["A & B_c"], "macro": [0.7245], "n_items": [871],
                                                "p_ttest": [0.01234]}), percent=("macro",))
    latex = exports.table_latex(frame, caption="Leaderboard (50% chance)", label="leaderboard_demo_strict_default",
                                percent_columns=("macro",)).decode()
    assert r"\toprule" in latex and r"\midrule" in latex and r"\bottomrule" in latex
    assert r"\caption{Leaderboard (50\% chance)}" in latex and r"\label{tab:leaderboard_demo_strict_default}" in latex
    assert r"Model & Macro avg. (\%) & Items & p (paired t) \\" in latex
    assert r"A \& B\_c & 72.4 & 871 & 0.012 \\" in latex
    assert exports.file_stem("leaderboard", "my data", "strict", "default") == "leaderboard_my-data_strict_default"


def test_exported_chart_names_its_context():
    import plotly.graph_objects as go

    ctx = exports.ChartContext("Leaderboard", "Macro average (%)", test="Wilson 95% interval", n="n = 88 items",
                               dataset="demo", profile="strict", condition="default",
                               data_label="simulated respondents")
    fig = exports.with_context(go.Figure(go.Bar(x=[1], y=["<b>m</b>"])).update_layout(height=300), ctx)
    assert fig.layout.title.text == "<b>Leaderboard</b>"
    subtitle = fig.layout.title.subtitle.text
    for words in ("Macro average (%)", "Wilson", "n = 88 items", "profile strict", "condition default",
                  "SIMULATED RESPONDENTS"):
        assert words in subtitle
    assert fig.layout.height > 300


def test_fast_paired_tests_equal_scipy():
    rng = np.random.default_rng(5)
    warnings.simplefilter("ignore")
    for n in (3, 40, 300, 2000):
        a = rng.integers(0, 3, n) / 2
        b = rng.integers(0, 3, n) / 2
        diff = b - a
        nonzero = diff[diff != 0]
        if len(nonzero):
            assert wilcoxon_p(nonzero) == pytest.approx(stats.wilcoxon(nonzero).pvalue, abs=1e-12)
        assert paired_t_p(a, b) == pytest.approx(stats.ttest_rel(b, a).pvalue, abs=1e-12, nan_ok=True)


def test_pooled_reader_closes_soon_after_use(filled):
    from eduart_core.store import duckdb_file as core

    with filled.connect(read_only=True) as con:
        con.execute("SELECT 1").fetchone()
    assert str(filled.path) in core._POOL._anchors
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and str(filled.path) in core._POOL._anchors:
        time.sleep(0.05)
    assert str(filled.path) not in core._POOL._anchors


def test_few_tied_differences_get_scipys_exact_p_without_its_permutation_machinery(monkeypatch):
    """Up to 13 tied differences scipy enumerates every sign flip through `permutation_test` (about
    0.1 s a call, for every model on a cold Overview); the studio enumerates them itself, same p."""
    rng = np.random.default_rng(11)
    # every size up to 13, more draws where scipy's reference is cheap (its time doubles with each item)
    sizes = [n for n in range(2, 14) for _ in range(4 if n <= 9 else 1)]
    samples = [rng.choice([-1.0, -0.5, 0.5, 1.0, 0.25], n) for n in sizes]
    samples.append(np.array([0.5, 0.5, -0.5, 1.0, 1.0, 1.0, -1.0, 0.5, 0.5, 0.5, 1.0, 1.0, 0.5]))
    expected = [float(stats.wilcoxon(d).pvalue) for d in samples]

    def refuse(*args, **kwargs):
        raise AssertionError("scipy's permutation test ran")

    monkeypatch.setattr(stats, "permutation_test", refuse)
    for d, p in zip(samples, expected):
        assert wilcoxon_p(d) == pytest.approx(p, abs=1e-12)


def test_the_inspectors_item_reads_happen_once_per_data_version(filled, monkeypatch):
    """The inspector asks for the item, its picture, its responses and its overrides on every rerun
    (a filter change, a click): the store is read once per data version, and again after a write."""
    from eduart_core.selection import Selection
    from eduart_core.store import items as store_items
    from eduart_core.store import overrides as store_overrides
    from eduart_core.store import scores as store_scores

    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("B")}])
    reads: list[str] = []
    for module, name in ((store_items, "get_item"), (store_scores, "load_responses"),
                         (store_overrides, "load_overrides")):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, _real=real, _name=name, **k: reads.append(_name) or _real(*a, **k))
    views.clear_caches()

    def rerun(src, sel):
        return (views.item_detail(src, "ds", "r1"), views.item_picture(src, "ds", "r1"),
                views.item_responses(src, "ds", "r1"), views.score_overrides(src, sel, item="r1"))

    src = views.Source.of(filled)
    first = rerun(src, Selection(dataset="ds"))
    assert first[0]["item_id"] == "r1" and len(first[2]) == 1
    once = len(reads)
    for sel in (Selection(dataset="ds", models=("Model One",)), Selection(dataset="ds", profile="paper")):
        again = rerun(src, sel)
        assert again[0] == first[0] and again[1] == first[1]
        pd.testing.assert_frame_equal(again[2], first[2])
    assert len(reads) == once  # reruns and filter changes read nothing
    add_responses(filled, "m2-default", [{"item_id": "r1", "raw_text": _answer("A")}])
    after = rerun(views.Source.of(filled), Selection(dataset="ds"))
    assert len(after[2]) == 2 and len(reads) == 2 * once


def _rows(frame: pd.DataFrame) -> list[tuple]:
    """Rows sorted by model and item, a missing value as None (an all-empty column reads as None, not NaN)."""
    frame = frame.sort_values(["model", "item_id"]).astype(object)
    return [tuple(None if pd.isna(v) else v for v in row) for row in frame.itertuples(index=False)]


def _given(got) -> pd.DataFrame:
    """The answer rows a `DistinctAnswers` stands for: each distinct answer once per examinee that gave it."""
    rows = got.answers.loc[got.answers.index.repeat(got.counts)].reset_index(drop=True)
    who = got.examinees.iloc[got.given_by].reset_index(drop=True)
    return pd.concat([who, rows], axis=1)


@pytest.fixture(params=pg_kit.BACKENDS)
def filled_on_both(request, store_path) -> Store:
    """``filled`` on DuckDB and on PostgreSQL (the grouping is SQL of both dialects)."""
    return _fill(Store(request.getfixturevalue("pg_url")) if request.param == pg_kit.POSTGRES else Store(store_path))


def test_distinct_answers_stand_for_every_answer_row_once_and_one_condition_is_that_conditions_rows(filled_on_both):
    """The invalid-answer warnings classify each distinct answer once: the groups, expanded by who
    gave them, are exactly the answer rows (the latest answer chosen within a condition), and one
    condition's groups are that condition's rows with the other left out."""
    from eduart_core.store.studies import load_answer_rows, load_distinct_answers

    filled = filled_on_both

    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("A")}])
    add_responses(filled, "m1-default", [{"item_id": "r1", "raw_text": _answer("B")}])
    add_responses(filled, "m2-default", [{"item_id": "r1", "raw_text": _answer("B")}])  # the same answer as m1's
    add_responses(filled, "m1-motivation", [{"item_id": "r1", "raw_text": _answer("A")},
                                            {"item_id": "r2", "raw_text": "I cannot tell"}])
    add_responses(filled, "m2-motivation", [{"item_id": "r2", "raw_text": _answer("B")}])
    every = load_answer_rows(filled, "ds", None)
    columns = list(every.columns)
    grouped = load_distinct_answers(filled, "ds")
    assert len(grouped.answers) < len(every)  # a repeated answer is one group
    assert sorted(_rows(_given(grouped)[columns]), key=repr) == sorted(_rows(every), key=repr)
    for condition in ("default", "motivation"):
        one = _given(load_distinct_answers(filled, "ds", condition))[columns]
        assert set(one["condition"]) == {condition}
        assert sorted(_rows(one), key=repr) == sorted(_rows(every[every["condition"] == condition]), key=repr)
        assert len(one)
