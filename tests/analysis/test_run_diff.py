"""Runs against a baseline (`show run_diff`, `show run_diff_items`, the Runs page's Compare runs section).

What a researcher relies on: the regressions listed are exactly the items whose score went down
between the baseline and the run in `show scores`; the aggregate deltas are paired (over the items
both answered) and say a direction only when the interval carries it; the page's "regressions only"
toggle shows the same count, each row opens the item in the inspector with both answers; a wrong
baseline is one line.
"""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import numpy as np
import pandas as pd
import pytest

from eduart_core.analysis import run_diff as stats
from eduart_core.cli import main
from eduart_core.rerun_demo import DEMO_RERUN_DATASET, FIRST, OTHER, SECOND_NAME
from eduart_core.selection import Selection

ROOT = Path(__file__).resolve().parents[2]
BASE = FIRST.display_name


def show(db: Path, *args: str) -> list[dict]:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["show", *args, "--db", str(db), "--dataset", DEMO_RERUN_DATASET]) == 0
    return json.loads(buffer.getvalue())


def _frame(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=["model", "item_id", "type", "score"])


# ---------------------------------------------------------------- the statistics

def test_pairs_use_only_items_both_answered_and_changes_are_signed():
    frame = _frame([("B", "i1", "true_false", 1.0), ("B", "i2", "true_false", 0.0), ("B", "i3", "true_false", 1.0),
                    ("R", "i1", "true_false", 0.0), ("R", "i2", "true_false", 1.0), ("R", "i4", "true_false", 1.0)])
    pairs = stats.paired_pairs(frame, "B", "R")
    assert list(pairs["item_id"]) == ["i1", "i2"]
    changes = stats.run_item_changes(frame, "B", ["R"])
    assert dict(zip(changes["item_id"], changes["direction"])) == {"i1": "regression", "i2": "improvement"}
    assert list(stats.run_item_changes(frame, "B", ["R"], only="regressions")["item_id"]) == ["i1"]
    deltas = stats.run_deltas(frame, "B", ["R"]).set_index("scope")
    assert deltas.loc[stats.OVERALL, "n_items"] == 2 and deltas.loc[stats.OVERALL, "delta"] == 0.0


def test_words_claim_a_direction_only_when_the_interval_excludes_zero():
    rows = [("B", f"i{k}", "true_false", 1.0) for k in range(40)]
    rows += [("R", f"i{k}", "true_false", 0.0 if k < 30 else 1.0) for k in range(40)]  # 30 of 40 drop
    rows += [("N", f"i{k}", "true_false", 0.0 if k in (0, 1) else 1.0) for k in range(40)]  # 2 drop
    rows += [("N", f"j{k}", "true_false", 1.0) for k in range(3)]
    deltas = stats.run_deltas(_frame(rows), "B", ["R", "N"])
    overall = deltas[deltas["scope"] == stats.OVERALL].set_index("run")
    assert overall.loc["R", "ci_high"] < 0 and overall.loc["R", "change"].startswith("lower")
    assert overall.loc["N", "ci_low"] <= 0 <= overall.loc["N", "ci_high"]
    assert overall.loc["N", "change"] == "interval includes 0"
    for row in deltas.itertuples():  # never a direction the interval does not carry
        assert not row.change.startswith("higher") or row.ci_low > 0
        assert not row.change.startswith("lower") or row.ci_high < 0


def test_the_paired_interval_is_narrower_than_unpaired_when_items_are_shared():
    rng = np.random.default_rng(1)
    base = rng.random(200) < 0.6
    run = np.where(rng.random(200) < 0.9, base, ~base)  # mostly the same answers, a few flipped
    diff = run.astype(float) - base.astype(float)
    low, high = stats.paired_interval([diff])
    assert low <= diff.mean() <= high
    se_unpaired = np.sqrt(base.var() / 200 + run.var() / 200)
    assert high - low < 2 * 1.96 * se_unpaired


def test_the_overall_interval_is_the_within_format_bootstrap_of_the_macro_difference():
    """Counts drawn over the distinct differences give the same bootstrap as resampling items one by one
    (`analysis.paired_macro_difference`, an independent implementation): the intervals agree closely."""
    from eduart_core.analysis import paired_macro_difference

    rng = np.random.default_rng(7)
    rows = []
    for fmt, n, p_base, p_run in (("true_false", 120, 0.7, 0.6), ("completion_open", 60, 0.5, 0.5),
                                  ("multiple_choice_radio", 30, 0.8, 0.9)):
        for k in range(n):
            rows += [("B", f"{fmt}{k}", fmt, float(rng.random() < p_base)),
                     ("R", f"{fmt}{k}", fmt, float(rng.random() < p_run))]
    frame = _frame(rows)
    ours = stats.run_deltas(frame, "B", ["R"], n_boot=20000).set_index("scope").loc[stats.OVERALL]
    theirs = paired_macro_difference(frame, "R", "B", n_boot=20000)
    assert ours["delta"] == pytest.approx(theirs["diff_macro"])
    assert ours["ci_low"] == pytest.approx(theirs["ci_low"], abs=0.01)
    assert ours["ci_high"] == pytest.approx(theirs["ci_high"], abs=0.01)


def test_unknown_filter_is_one_line():
    from eduart_core.errors import UserError

    with pytest.raises(UserError, match="unknown item filter"):
        stats.run_item_changes(_frame([("B", "i", "true_false", 1.0)]), "B", ["R"], only="worse")


# ---------------------------------------------------------------- on the demo store

@pytest.fixture(scope="module")
def direct(demo_db) -> pd.DataFrame:
    """Baseline and second run side by side, straight from `show scores` (default condition, strict)."""
    rows = pd.DataFrame(show(demo_db, "scores"))
    rows = rows[rows["condition"] == "default"]
    base = rows[rows["model"] == BASE].set_index("item_id")["score"]
    run = rows[rows["model"] == SECOND_NAME].set_index("item_id")["score"]
    both = pd.concat({"base": base, "run": run}, axis=1).dropna()
    return both


def test_regressions_listed_equal_a_direct_computation_from_show_scores(demo_db, direct):
    expected = sorted(direct.index[direct["run"] < direct["base"]])
    listed = show(demo_db, "run_diff_items", "--models", SECOND_NAME, "--option", f"baseline={BASE}",
                  "--option", "only=regressions")
    assert sorted(r["item_id"] for r in listed) == expected and expected
    assert {r["run"] for r in listed} == {SECOND_NAME}
    improved = show(demo_db, "run_diff_items", "--models", SECOND_NAME, "--option", f"baseline={BASE}",
                    "--option", "only=improvements")
    assert sorted(r["item_id"] for r in improved) == sorted(direct.index[direct["run"] > direct["base"]])
    for r in listed:
        assert r["change"] == pytest.approx(direct.loc[r["item_id"], "run"] - direct.loc[r["item_id"], "base"])


def test_the_second_run_regresses_on_open_completion_and_says_so(demo_db, direct):
    deltas = pd.DataFrame(show(demo_db, "run_diff", "--option", f"baseline={BASE}"))
    assert set(deltas["run"]) == {SECOND_NAME, OTHER.display_name}
    mine = deltas[deltas["run"] == SECOND_NAME].set_index("scope")
    overall = mine.loc[stats.OVERALL]
    assert overall["n_items"] == len(direct)
    assert overall["n_regressed"] == int((direct["run"] < direct["base"]).sum())
    open_row = mine[mine["type"] == "completion_open"].iloc[0]
    assert open_row["delta"] < 0 and open_row["ci_high"] < 0 and open_row["change"].startswith("lower")
    assert all(not c.startswith("higher") or lo > 0 for c, lo in zip(deltas["change"], deltas["ci_low"]))


def test_a_run_id_names_the_baseline_and_a_wrong_one_is_one_line(demo_db, capsys):
    run_id = f"sim:{DEMO_RERUN_DATASET}:{FIRST.key}:default:s4545"
    by_id = show(demo_db, "run_diff", "--option", f"baseline={run_id}")
    assert by_id == show(demo_db, "run_diff", "--option", f"baseline={FIRST.key}")
    assert main(["show", "run_diff", "--db", str(demo_db), "--dataset", DEMO_RERUN_DATASET,
                 "--option", "baseline=Sim Nobody"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no baseline 'Sim Nobody'" in err[0] and BASE in err[0]
    assert main(["show", "run_diff", "--db", str(demo_db), "--dataset", DEMO_RERUN_DATASET]) == 2
    assert "choose a baseline" in capsys.readouterr().err
    assert main(["show", "run_diff", "--db", str(demo_db), "--dataset", DEMO_RERUN_DATASET, "--models", "Sim Nobody",
                 "--option", f"baseline={BASE}"]) == 2
    assert "no model 'Sim Nobody'" in capsys.readouterr().err


# ---------------------------------------------------------------- the page

def test_only_a_per_item_change_is_coloured_red_down_green_up():
    from pages.ui import compare_runs

    assert compare_runs._colour(-1.0) == compare_runs.RED and compare_runs._colour(0.5) == compare_runs.GREEN
    assert compare_runs._colour(0.0) == "" and compare_runs._colour(float("nan")) == ""
    source = (ROOT / "pages" / "ui" / "compare_runs.py").read_text(encoding="utf-8")
    assert source.count(".style.map(") == 1 and 'subset=["change"]' in source  # the aggregate table has no colour


@pytest.mark.slow
def test_runs_page_regressions_toggle_shows_the_same_count(demo_db, direct, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["dataset"] = DEMO_RERUN_DATASET
    at.run()
    at.switch_page("pages/10_runs.py").run()
    assert not at.exception, at.exception[0].value
    at.selectbox(key="rundiff_baseline").set_value(BASE).run()
    at.multiselect(key="rundiff_runs").set_value([SECOND_NAME]).run()
    assert not at.exception, at.exception[0].value
    changed = int(((direct["run"] - direct["base"]).abs() > 1e-9).sum())
    assert any(m.value == f"**{changed} item(s) changed**" for m in at.markdown)
    at.toggle(key="rundiff_regressions").set_value(True).run()
    regressions = int((direct["run"] < direct["base"]).sum())
    assert any(m.value == f"**{regressions} regression(s)**" for m in at.markdown)
    table = next(d for d in at.dataframe if "open" in d.value.columns and "direction" in d.value.columns)
    assert len(table.value) == regressions and set(table.value["direction"]) == {"regression"}
    link = urlparse(table.value["open"].iloc[0])
    query = parse_qs(link.query)
    assert link.path == "/inspector" and set(query["models"]) == {BASE, SECOND_NAME}
    assert query["open"] == [f"default:{SECOND_NAME}"] and query["item"][0] in set(direct.index)


@pytest.mark.slow
def test_runs_page_sets_the_first_few_runs_against_a_new_baseline_and_says_so(demo_db, monkeypatch):
    """Each run compared costs a paired bootstrap per format: a new baseline is set against the first
    `DEFAULT_RUNS` other runs (a caption says how to add more), while `show run_diff` compares every run."""
    from streamlit.testing.v1 import AppTest

    from eduart_core import views
    from pages.ui import compare_runs

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/10_runs.py").run()
    assert not at.exception, at.exception[0].value
    baseline = at.selectbox(key="rundiff_baseline").value
    others = [o for o in at.selectbox(key="rundiff_baseline").options if o != baseline]
    assert len(others) > compare_runs.DEFAULT_RUNS
    picked = list(at.multiselect(key="rundiff_runs").value)
    assert picked == others[:compare_runs.DEFAULT_RUNS]
    assert any(f"first {compare_runs.DEFAULT_RUNS} of the {len(others)} other runs" in c.value for c in at.caption)
    table = next(d for d in at.dataframe if "scope" in d.value.columns)
    assert list(dict.fromkeys(table.value["run"])) == picked
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["show", "run_diff", "--db", str(demo_db), "--option", f"baseline={baseline}"]) == 0
    assert {row["run"] for row in json.loads(buffer.getvalue())} == set(others)


@pytest.mark.slow
def test_runs_page_draws_the_largest_drops_first_up_to_its_row_limit_and_says_so(demo_db, monkeypatch):
    """The per-item table is drawn again on every rerun: the page shows the first `SHOWN_ROWS` rows
    (the largest drops first) with a caption, and the download keeps every row."""
    from streamlit.testing.v1 import AppTest

    from eduart_core import views
    from pages.ui import compare_runs

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    monkeypatch.setattr(compare_runs, "SHOWN_ROWS", 3)
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    at.switch_page("pages/10_runs.py").run()
    assert not at.exception, at.exception[0].value
    table = next(d.value for d in at.dataframe if "open" in d.value.columns and "direction" in d.value.columns)
    everything = views.run_diff_items(views.Source.of(str(demo_db)), Selection(
        models=tuple(at.multiselect(key="rundiff_runs").value)), baseline=at.selectbox(key="rundiff_baseline").value)
    assert len(everything) > 3 and len(table) == 3
    assert table["change"].tolist() == everything["change"].head(3).tolist()
    assert any(c.value.startswith(f"Showing the first 3 of {len(everything)} rows") for c in at.caption)
