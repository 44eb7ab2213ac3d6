"""Item banks: `bank` freezes the parameters of an IRT fit as numbered versions; `show bank` and
`show banks` read them; bad input is one line and stores nothing.

The demo's default-condition panel (8 simulated models, 88 items) is the bank's ground: a bank's
parameters must be those of a direct fit of the same answers, and an earlier version must never
change. The store functions run on both backends (``pg_kit``).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pg_kit
import pytest

from eduart_core import team
from eduart_core.analysis.bank import MIN_BANK_ITEMS, calibrate
from eduart_core.analysis.irt_pcm import fit_model
from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.selection import Selection
from eduart_core.store import Store
from eduart_core.store.banks import load_bank, load_bank_versions, save_bank
from eduart_core.store.runs import ensure_dataset

backend, store = pg_kit.backend, pg_kit.store  # the store tests here run on DuckDB and PostgreSQL

DEMO = "demo"


def _bank(db, *args: str) -> int:
    return main(["bank", "--db", str(db), "--dataset", DEMO, *args])


def _show(db, capsys, *args: str) -> list[dict]:
    assert main(["show", *args, "--db", str(db), "--dataset", DEMO]) == 0
    return json.loads(capsys.readouterr().out)


def _direct(db):
    """The bank's ingredients computed directly: the first fit, its item-fit flags and the score frame."""
    from eduart_core import views
    from eduart_core.views import irt as irt_views

    src = views.Source.of(Store(db))
    sel = Selection(dataset=DEMO)
    first = irt_views.irt_fit(src, sel, "pcm", "models")
    flags = views.irt_item_fit(src, sel, model="pcm", examinees="models")
    return first, flags, views.selected_scores(src, sel), irt_views.score_parts_of(src, DEMO)


def test_a_bank_holds_the_parameters_of_a_direct_fit_of_its_usable_items(demo_copy, capsys, monkeypatch):
    monkeypatch.setenv("EDUART_USER", "ada")
    assert _bank(demo_copy) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("demo: item bank version 1: ") and "PCM parameters from 8 examinees" in line

    header, items = load_bank(Store(demo_copy), DEMO)
    first, flags, rows, parts = _direct(demo_copy)
    # left out: no variance = the first fit's all-right / all-wrong items; misfit = the item-fit view's underfit flags
    no_variance = set(first.items.loc[first.items["status"].isin(["all_right", "all_wrong"]), "item_id"])
    misfit = set(flags.loc[flags["flag"] == "underfit", "item_id"])
    assert set(items.loc[items["left_out"] == "no_variance", "item_id"]) == no_variance and no_variance
    assert set(items.loc[items["left_out"] == "misfit", "item_id"]) == misfit
    assert items.loc[~items["in_bank"], "reason"].map(lambda r: isinstance(r, str) and len(r) > 10).all()
    assert len(items) == len(first.items) and int(header["n_items"]) == int(items["in_bank"].sum())

    kept = set(items.loc[items["in_bank"], "item_id"])
    direct = fit_model(rows[rows["item_id"].isin(kept)], "pcm", parts)
    expected = direct.items.set_index("item_id")
    got = items[items["in_bank"]].set_index("item_id")
    assert set(got.index) == set(expected.index[expected["status"] == "fitted"]) == kept
    for column in ("difficulty", "difficulty_se", "discrimination"):
        np.testing.assert_allclose(got[column].astype(float), expected.loc[got.index, column].astype(float),
                                   rtol=1e-9, atol=1e-12, err_msg=column)
    for item in got.index:
        np.testing.assert_allclose(got.at[item, "thresholds"], expected.at[item, "thresholds"], rtol=1e-9)
        np.testing.assert_allclose(got.at[item, "threshold_se"], expected.at[item, "threshold_se"], rtol=1e-9)
        assert got.at[item, "type"] == expected.at[item, "type"]
    assert math.isclose(float(header["log_likelihood"]), direct.log_likelihood, rel_tol=1e-9)
    assert header["irt_model"] == "pcm" and header["conditions"] == ["default"]
    assert int(header["n_examinees"]) == 8 and len(header["examinees"]) == 8
    assert all(" · " not in name for name in header["examinees"])  # one examinee per model, not per condition
    assert (header["actor_subject"], header["actor_name"]) == ("ada", "ada")  # the operator ($EDUART_USER)

    shown = _show(demo_copy, capsys, "bank")
    assert {r["bank_version"] for r in shown} == {1} and len(shown) == len(items)
    assert {r["panel_size"] for r in shown} == {8}
    assert main(["show", "bank", "--caption", "--db", str(demo_copy), "--dataset", DEMO]) == 0
    caption = capsys.readouterr().out
    assert f"Item bank version 1 of demo: {len(kept)} items with PCM parameters" in caption
    assert "8 examinees" in caption and "by ada" in caption


def _rows(db, version: int) -> tuple[str, str]:
    """Every stored value of one bank version, as text (byte for byte)."""
    import duckdb

    con = duckdb.connect(str(db), read_only=True)
    try:
        head = con.execute("SELECT * FROM bank_versions WHERE dataset = ? AND version = ?", [DEMO, version]).fetchall()
        body = con.execute("SELECT * FROM bank_items WHERE dataset = ? AND version = ? ORDER BY item_id",
                           [DEMO, version]).fetchall()
    finally:
        con.close()
    return repr(head), repr(body)


def test_a_second_bank_is_version_2_and_leaves_version_1_unchanged(demo_copy, capsys):
    assert _bank(demo_copy) == 0
    before = _rows(demo_copy, 1)
    assert _bank(demo_copy, "--model", "rasch", "--condition", "motivation") == 0
    assert "item bank version 2" in capsys.readouterr().out
    assert _rows(demo_copy, 1) == before
    versions = _show(demo_copy, capsys, "banks")
    assert [(r["version"], r["irt_model"], r["conditions"]) for r in versions] == [
        (1, "pcm", ["default"]), (2, "rasch", ["motivation"])]
    second = _show(demo_copy, capsys, "bank", "--option", "version=2")
    assert {r["bank_version"] for r in second} == {2} and {r["irt_model"] for r in second} == {"rasch"}
    assert {r["bank_version"] for r in _show(demo_copy, capsys, "bank")} == {2}  # the latest by default
    assert {r["bank_version"] for r in _show(demo_copy, capsys, "bank", "--option", "version=1")} == {1}


def _one_line_error(capsys, needle: str) -> None:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0] and "Traceback" not in captured.err, captured.err


def test_fewer_than_20_usable_items_is_one_line_and_stores_nothing(demo_copy, capsys):
    store_ = Store(demo_copy)
    with store_.connect():
        pass  # migrated, so the data version below is the one a refused bank must leave
    before = store_.data_version()
    assert _bank(demo_copy, "--types", "true_false") == 2  # 12 items
    _one_line_error(capsys, f"a bank needs at least {MIN_BANK_ITEMS} usable items; this selection has 12")
    assert store_.data_version() == before and load_bank_versions(store_, DEMO).empty


def test_unknown_versions_datasets_and_banks_are_one_line(demo_copy, capsys):
    assert main(["bank", "--db", str(demo_copy), "--dataset", "no-such-set"]) == 2
    _one_line_error(capsys, "no dataset 'no-such-set'")
    assert main(["show", "bank", "--db", str(demo_copy), "--dataset", DEMO]) == 2
    _one_line_error(capsys, "dataset 'demo' has no item bank yet")
    assert _bank(demo_copy) == 0
    capsys.readouterr()
    assert main(["show", "bank", "--db", str(demo_copy), "--dataset", DEMO, "--option", "version=7"]) == 2
    _one_line_error(capsys, "dataset 'demo' has no bank version 7 (versions: 1)")
    assert main(["show", "bank", "--db", str(demo_copy), "--dataset", DEMO, "--option", "version=two"]) == 2
    _one_line_error(capsys, "whole number")


def test_a_bank_needs_the_researcher_or_admin_role(demo_copy):
    from eduart_core.banks import freeze_bank

    presenter = team.Identity("p1", "https://idp.test", "Pat", None, frozenset({team.PRESENTER}), signed_in=True)
    with pytest.raises(team.PermissionDenied, match="may not freeze an item bank"):
        freeze_bank(Store(demo_copy), Selection(dataset=DEMO), "auto", presenter)
    assert load_bank_versions(Store(demo_copy), DEMO).empty
    researcher = team.Identity("r1", "https://idp.test", "Rae", None, frozenset({team.RESEARCHER}), signed_in=True)
    frozen = freeze_bank(Store(demo_copy), Selection(dataset=DEMO), "rasch", researcher)
    header, _ = load_bank(Store(demo_copy), DEMO, frozen.version)
    assert (header["actor_subject"], header["actor_provider"]) == ("r1", "https://idp.test")


@pytest.fixture(scope="module")
def demo_draft(demo_db):
    """A calibrated (not stored) bank of the demo, from the read-only session store."""
    first, _, rows, parts = _direct(demo_db)
    return calibrate(rows, first, lambda frame: fit_model(frame, "pcm", parts))


def test_the_store_keeps_bank_versions_on_both_backends(store, demo_draft):
    ensure_dataset(store, DEMO, "Demo", "demo", simulated=True)
    actor = {"actor_subject": "s1", "actor_provider": "https://idp.test", "actor_name": "Sam"}
    selection = Selection(dataset=DEMO).to_query(full=True)
    assert save_bank(store, DEMO, demo_draft, selection, ["default"], {}, actor) == 1
    assert save_bank(store, DEMO, demo_draft, selection, ["default"], {}, actor) == 2
    header, items = load_bank(store, DEMO, 1)
    assert (int(header["n_items"]), header["actor_name"], header["examinees"]) == (
        demo_draft.n_items, "Sam", demo_draft.examinees)
    want = demo_draft.items.set_index("item_id")
    got = items.set_index("item_id")
    assert list(got.index) == list(want.index)
    inside = want.index[want["in_bank"]]
    np.testing.assert_allclose(got.loc[inside, "difficulty"].astype(float), want.loc[inside, "difficulty"], rtol=1e-12)
    assert [list(map(float, v)) for v in got.loc[inside, "thresholds"]] == [
        [float(x) for x in v] for v in want.loc[inside, "thresholds"]]
    assert pd.isna(got.loc[want.index[~want["in_bank"]], "difficulty"]).all()
    assert list(load_bank_versions(store, DEMO)["version"]) == [1, 2]

    small = demo_draft.items.head(MIN_BANK_ITEMS - 1)
    from dataclasses import replace

    with pytest.raises(UserError, match="at least 20 usable items"):
        save_bank(store, DEMO, replace(demo_draft, items=small), selection, ["default"], {}, actor)
    with pytest.raises(UserError, match="unknown dataset"):
        save_bank(store, "nowhere", demo_draft, selection, ["default"], {}, actor)
    assert list(load_bank_versions(store, DEMO)["version"]) == [1, 2]
