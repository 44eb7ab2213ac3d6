"""Every word of a finding follows from its test, on every shipped dataset.

`show findings` exits 0 on each dataset the demo builder ships that the analysis pages offer
(`views.analysable_datasets`, the dataset picker's list), prints no "nan", and says "simulated"
wherever simulated respondents answered; the published per-task tables get findings from their
printed numbers. The multiple-choice sentence ranks by the leaderboard and says only what the
overlap of the Wilson intervals shows (no "no longer": no change was measured); the motivation
sentence names what its Wilcoxon test tests, in the direction of the signed ranks; a model that
answered no item differently is named and not counted.
"""
from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from eduart_core import analysis, findings, views
from eduart_core.analysis.motivation import holm
from eduart_core.cli import main
from eduart_core.store import Store
from eduart_core.studies.references import STUDY_REFERENCES


def show(*args: str) -> tuple[int, list[dict]]:
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        code = main(["show", *args])
    return code, (json.loads(buffer.getvalue()) if code == 0 else [])


def shipped(demo_db) -> list[str]:
    return views.analysable_datasets(views.Source.of(Store(demo_db)))


@pytest.mark.slow
def test_findings_on_every_shipped_dataset(demo_db):
    names = shipped(demo_db)
    assert {ref.dataset for ref in STUDY_REFERENCES} <= set(names)  # the published tables are among them
    src = views.Source.of(Store(demo_db))
    for dataset in names:
        code, rows = show("findings", "--dataset", dataset, "--db", str(demo_db))
        assert code == 0, dataset
        assert rows, dataset
        text = json.dumps(rows)
        assert not re.search(r"\bnan\b", text, re.IGNORECASE), (dataset, text)
        assert "no longer" not in text
        for row in rows:
            assert row["test"] and row["n"] and row["n_unit"], (dataset, row)
        if views.dataset_flags(src, dataset).simulated:
            assert all(row["headline"].startswith("Simulated respondents: ") for row in rows), (dataset, rows)
        else:
            assert not any("simulated" in row["headline"].lower() for row in rows), (dataset, rows)


def test_published_tables_speak_from_their_printed_numbers(demo_db):
    for ref in STUDY_REFERENCES:
        _, rows = show("findings", "--dataset", ref.dataset, "--db", str(demo_db))
        _, checks = show("consistency_checks", "--dataset", ref.dataset, "--db", str(demo_db))
        verdicts = pd.DataFrame(checks)
        applicable = verdicts[verdicts["verdict"] != "not applicable"]
        problems = applicable[applicable["verdict"].isin(["inconsistent", "flag"])]["check"].nunique()
        told = next(r for r in rows if "consistency checks" in r["headline"])
        total = applicable["check"].nunique()
        assert told["n"] == total and (f"{problems} of {total}" in told["headline"] if problems
                                       else f"all {total}" in told["headline"])
        _, scores = show("dimension_scores", "--dataset", ref.dataset, "--db", str(demo_db))
        cells = pd.DataFrame(scores)
        cells = cells[~cells["is_median"] & (cells["column"] != "Overall")]
        best = cells.groupby("column")["score"].max()
        hardest = next(r for r in rows if r["headline"].startswith("In "))
        assert hardest["headline"].startswith(f"In {best.idxmin()} ") and f"{100 * best.min():.1f}%" in hardest["headline"]


@pytest.mark.slow
def test_the_groups_sentence_follows_the_leaderboards_tie_groups(demo_db):
    """The paired (Holm) tie groups replace the unpaired multiple-choice overlap sentence."""
    checked = 0
    for dataset in shipped(demo_db):
        code, board = show("leaderboard", "--dataset", dataset, "--db", str(demo_db))
        if code != 0:
            continue  # a published per-task table has no leaderboard
        _, rows = show("findings", "--dataset", dataset, "--db", str(demo_db))
        assert not [r for r in rows if "the leaderboard's top" in r["headline"]], dataset
        b = pd.DataFrame(board)
        said = [r for r in rows if "groups that the data can tell apart" in r["headline"]
                or "The data cannot order" in r["headline"]]
        if b["tie_group"].isna().all() or len(b) < 3:
            assert not said, (dataset, said)  # published aggregates: no pairs to test, no groups claimed
            continue
        (row,) = said
        n_groups = int(b["tie_group"].max())
        assert (f"into {n_groups} groups" in row["headline"]) == (n_groups > 1), (dataset, row)
        assert "Holm" in row["test"] and "paired t test" in row["test"]
        for _, r in b.iterrows():
            assert f"{r['model']} {int(r['rank_best'])}-{int(r['rank_worst'])}" in row["detail"]
        checked += 1
    assert checked >= 1


def test_the_demo_motivation_sentence_names_its_test(demo_db):
    _, rows = show("findings", "--db", str(demo_db))
    row = next(r for r in rows if "justification" in r["headline"])
    assert row["test"].startswith("Wilcoxon signed-rank test")
    assert "pooled" not in row["detail"]
    _, effect = show("motivation", "--db", str(demo_db))
    e = pd.DataFrame(effect)
    sig = e[e["p_holm"] < 0.05]
    assert f"finds {len(sig)} model" in row["detail"]
    if len(sig):
        assert (f"({int((sig['rank_biserial'] > 0).sum())} towards rises, "
                f"{int((sig['rank_biserial'] < 0).sum())} towards drops" in row["detail"])


def test_rank_biserial_is_the_signed_rank_effect():
    rng = np.random.default_rng(4)
    rows = []
    for i in range(60):
        a = float(rng.integers(0, 2))
        b = a if rng.random() < 0.5 else float(rng.random())
        rows += [{"model": "M", "condition": "default", "item_id": f"i{i}", "type": "t", "score": a},
                 {"model": "M", "condition": "motivation", "item_id": f"i{i}", "type": "t", "score": b}]
    effect = analysis.motivation_effect(pd.DataFrame(rows)).iloc[0]
    d = np.array([r["score"] for r in rows[1::2]]) - np.array([r["score"] for r in rows[::2]])
    d = d[np.abs(d) > 1e-9]
    ranks = stats.rankdata(np.abs(d))
    expected = (ranks[d > 0].sum() - ranks[d < 0].sum()) / ranks.sum()
    assert effect["rank_biserial"] == pytest.approx(expected)
    assert effect["p_wilcoxon"] == pytest.approx(stats.wilcoxon(d).pvalue)


def _effect(deltas, p, idle=()) -> pd.DataFrame:
    p = np.asarray(p, dtype=float)
    frame = pd.DataFrame({"model": [f"M{i}" for i in range(len(deltas))], "delta_macro": deltas, "delta_micro": deltas,
                          "n_paired": 100, "p_wilcoxon": p, "rank_biserial": np.sign(deltas),
                          "n_improved": [5] * len(deltas), "n_degraded": [3] * len(deltas)})
    for i in idle:  # answered every item alike: no difference to test
        frame.loc[i, ["delta_macro", "delta_micro", "n_improved", "n_degraded"]] = [0.0, 0.0, 0, 0]
        frame.loc[i, ["p_wilcoxon", "rank_biserial"]] = np.nan
    ok = frame["p_wilcoxon"].notna().to_numpy()
    frame["p_holm"] = np.nan
    frame.loc[ok, "p_holm"] = holm(frame.loc[ok, "p_wilcoxon"].to_numpy())
    return frame


def test_a_model_that_answered_nothing_differently_is_not_counted():
    f = findings.motivation_finding(_effect([0.05, -0.02, 0.0], [0.001, 0.5, np.nan], idle=[2]))
    assert f.headline == ("Asking for a justification raises the score of 1 of 2 models beyond chance; the other "
                          "model changed within noise.")
    assert "across 2 models" in f.detail and "across 2 models" in f.test
    assert "1 model scored every paired item the same in both conditions and is not counted (M2)" in f.detail
    assert "unchanged" not in f.headline and "lowers" not in f.headline  # M1's drop is within noise
    nothing = findings.motivation_finding(_effect([0.0], [np.nan], idle=[0]))
    assert "changed no model's score" in nothing.headline
