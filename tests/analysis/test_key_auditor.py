"""The key auditor, measured: the combined signal, the judge-human source, and recall on planted wrong keys."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eduart_core import suspects
from eduart_core.analysis import keysignal
from eduart_core.analysis.keyflags import FlagContext, judge_disagreement_flags, reason_words
from eduart_core.cli import main
from eduart_core.simulate.wrong_keys import audit, measure, planted_bank


def test_stouffer_combines_the_signals_an_item_has():
    evidence = pd.DataFrame([
        {"item_id": "a", "signal": "misfit", "z": 2.0, "words": "misfits"},
        {"item_id": "a", "signal": "distractor", "z": 2.0, "words": "option B"},
        {"item_id": "b", "signal": "discrimination", "z": 2.5, "words": "r_pb"},
        {"item_id": "c", "signal": "discrimination", "z": -1.0, "words": "r_pb"}])
    table = keysignal.combine(evidence, ["a", "b", "c", "d"]).set_index("item_id")
    assert table.loc["a", "combined"] == pytest.approx(4 / np.sqrt(2))
    assert table.loc["b", "combined"] == pytest.approx(2.5) and table.loc["d", "combined"] == 0
    assert list(table.index) == ["a", "b", "d", "c"]  # strongest first
    assert "misfits (z +2.0)" in table.loc["a", "evidence"] and table.loc["c", "evidence"] == ""
    assert table.loc["a", "n_signals"] == 2 and np.isnan(table.loc["b", "z_misfit"])


def test_fisher_z_is_a_standard_normal_deviate():
    assert keysignal.fisher_z(0.5, 28)[()] == pytest.approx(np.arctanh(0.5) * 5)
    assert keysignal.fisher_z(np.nan, 10)[()] == 0.0


def test_judge_human_disagreement_flags_the_item_the_judge_misreads():
    rows = []
    for item in range(10):
        for answer in range(20):
            apart = answer < (15 if item == 3 else 2)  # item i03: a reference answer that misleads the judge
            rows.append({"item_id": f"i{item:02d}", "judge": 1.0 if apart else 0.0, "human": 0.0})
    context = FlagContext(judge_marks=pd.DataFrame(rows))
    flags = judge_disagreement_flags(pd.DataFrame(), context)
    assert list(flags["item_id"]) == ["i03"] and "15 of 20 answers" in flags.iloc[0]["detail"]
    assert "disagree" in reason_words("judge_disagreement")
    z = keysignal.judge_evidence(context.tables["judge_human"]).set_index("item_id")["z"]
    assert z.idxmax() == "i03" and z["i03"] > 5 and abs(z["i00"]) < 1


def test_the_planted_bank_plants_what_it_says():
    bank = planted_bank(seed=1)
    assert len(bank.planted) == 15 and bank.scores["model"].nunique() == 12 and bank.scores["item_id"].nunique() == 300
    keyed = {i: next(iter(k)) for i, k in bank.keys.items()}
    # a planted key is never the option most chosen by those who know the item: it is scored against, as stored
    row = bank.scores[(bank.scores["item_id"] == sorted(bank.planted)[0])]
    assert set(row["score"]) <= {0.0, 1.0} and all(len(v) == 1 for v in keyed.values())


@pytest.mark.slow
def test_the_auditor_finds_planted_wrong_keys_far_above_chance():
    """Small everyday check (3 seeds): chance would find 10% of the planted keys in the top 10%."""
    result = measure(seeds=3)
    assert result["recall"] >= 0.5
    assert all(r["top"] == 30 and r["planted"] == 15 for r in result["runs"])


@pytest.mark.slow
def test_the_auditor_reaches_its_target_recall():
    """5% of 300 keys planted wrong, 12 examinees: recall >= 80% in the top 10%, median of 20 seeds."""
    result = measure(seeds=20)
    assert result["recall"] >= 0.80, result
    assert result["precision"] == pytest.approx(result["recall"] / 2)  # 15 planted, 30 in the top


def test_one_audit_reports_recall_and_precision():
    out = audit(planted_bank(seed=3))
    assert out["precision"] == pytest.approx(out["found"] / 30) and out["recall"] == pytest.approx(out["found"] / 15)


def test_bench_keys_prints_recall_precision_and_the_load(capsys):
    assert main(["bench", "keys", "--seeds", "1", "--items", "120"]) == 0
    out = capsys.readouterr().out
    assert "load average" in out and "recall median" in out and "precision median" in out and "6 planted" in out
    assert "each signal ranking alone" in out and "distractor" in out


def test_the_queue_puts_the_strongest_signal_first_with_its_evidence(tmp_path):
    from eduart_core.store import Store
    from tests.scoring.test_review_keys import DATASET, plant_keys

    store = plant_keys(Store(tmp_path / "s.duckdb"))
    queue = suspects.suspect_queue(store, DATASET)
    assert queue.iloc[0]["item_id"] == "k07"  # the miskeyed item: the strong models agree on A
    assert list(queue["signal"]) == sorted(queue["signal"], reverse=True)
    assert "wrong option A" in queue.iloc[0]["evidence"]
