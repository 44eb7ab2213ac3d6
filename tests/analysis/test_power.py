"""Power before spending: the items-needed formula against an independent simulation, `show power`
on the demo, and the Runs page's plan form and stop-early checkbox."""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from eduart_core.analysis.power import items_for_difference, items_for_interval, macro_variance_factor, power_table
from eduart_core.cli import main

SHARES = np.array([0.4, 0.3, 0.2, 0.1])
# per format: P(diff = +1), P(diff = -1); format mean differences 0.02, 0.08, 0.05, 0.05 -> macro 0.05
PROBS = [(0.17, 0.15), (0.20, 0.12), (0.25, 0.20), (0.10, 0.05)]


def _diffs(rng, counts):
    return [rng.choice([1.0, -1.0, 0.0], size=int(n), p=[p, q, 1 - p - q]) for n, (p, q) in zip(counts, PROBS)]


def test_the_items_needed_give_eighty_percent_power_in_an_independent_simulation():
    """n from a large pilot; then 2,000 fresh experiments of n items, each tested with the paired
    macro z-test at 5%: the share that detects the true 5-point macro difference is 80% +/- 4."""
    rng = np.random.default_rng(5)
    pilot = _diffs(rng, SHARES * 20_000)
    factor, n_formats = macro_variance_factor(pd.Series(np.concatenate(pilot)),
                                              pd.Series(np.repeat(np.arange(4), [len(p) for p in pilot])))
    assert n_formats == 4
    n = items_for_difference(factor, 0.05)
    counts = np.maximum(2, np.round(SHARES * n)).astype(int)
    hits = 0
    for _ in range(2000):
        parts = _diffs(rng, counts)
        macro = np.mean([p.mean() for p in parts])
        se = np.sqrt(sum(p.var(ddof=1) / len(p) for p in parts)) / 4
        hits += abs(macro / se) > 1.959964
    assert 0.76 <= hits / 2000 <= 0.84, (n, hits / 2000)


def test_the_interval_plan_gives_the_asked_half_width():
    rng = np.random.default_rng(2)
    scores = rng.random(4000) < 0.7
    formats = pd.Series(np.repeat(["a", "b"], 2000))
    factor, _ = macro_variance_factor(pd.Series(scores.astype(float)), formats)
    n = items_for_interval(factor, 0.03)
    assert abs(1.96 * np.sqrt(factor / n) - 0.03) < 0.0005  # the half-width at n items is w


def test_the_table_pairs_models_on_the_items_both_answered():
    frame = pd.DataFrame({"model": ["A"] * 6 + ["B"] * 5, "item_id": [*"123456", *"12345"],
                          "type": ["x", "x", "x", "y", "y", "y", "x", "x", "x", "y", "y"],
                          "score": [1, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0]})
    table = power_table(frame, d_points=10, w_points=5)
    pair, new = table.iloc[0], table.iloc[1]
    assert (pair.model_a, pair.model_b, pair.pilot_items, pair.formats) == ("A", "B", 5, 2)
    assert pair.pilot_macro_diff == pytest.approx(100 * np.mean([1 / 3, 0.0]), abs=0.01)
    assert pair.items_needed > 0 and new.model_a == "(a new model)" and new.items_needed > 0


def _show(db, *args, capsys):
    code = main(["show", "power", "--db", str(db), *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_show_power_on_the_demo_lists_every_pair_and_its_caption_says_what_it_holds(demo_db, capsys):
    code, out, _ = _show(demo_db, "--format", "json", capsys=capsys)
    rows = json.loads(out)
    assert code == 0 and len(rows) == 8 * 7 // 2 + 1  # every pair of the 8 simulated models, and a new model
    assert {"items_needed", "pilot_items", "sd_paired_diff", "pilot_enough"} <= set(rows[0])
    assert all(r["items_needed"] >= 2 for r in rows)
    code, out, _ = _show(demo_db, "--caption", "--option", "d=10", capsys=capsys)
    assert code == 0 and "pilot of 88 items" in out and "80% power" in out and "by 10 points" in out
    assert out.startswith("Simulated") and "paired" in out
    code, _, err = _show(demo_db, "--option", "a=Sim A (strong recogniser)", "--option", "b=Nobody", capsys=capsys)
    assert code == 2 and "no model 'Nobody'" in err and len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_the_runs_page_plans_from_the_pilot_and_prices_the_plan(demo_copy, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.pages.test_runs_page import PAGE, ROOT

    monkeypatch.setenv("EDUART_DB", str(demo_copy))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    at.number_input(key="runs_power_d").set_value(30.0).run()
    assert not at.exception, [e.value for e in at.exception]
    table = next(d.value for d in at.dataframe if "items_needed" in d.value.columns)
    assert len(table) == 2 and table["model_a"].iloc[0] == at.selectbox(key="runs_power_a").value
    captions = "\n".join(c.value for c in at.caption)
    assert "pilot of 88 items" in captions
    assert "Turn on 'Price these sample sizes'" in captions and "cost about" not in captions  # priced when asked
    at.toggle(key="runs_power_price").set_value(True).run()
    assert not at.exception, [e.value for e in at.exception]
    captions = "\n".join(c.value for c in at.caption)
    assert "cost about" in captions or "more than the" in captions
    assert "Turn on 'Price these sample sizes'" not in captions
