"""Adaptive runs on both backends: a bank version stored with `store.banks.save_bank`, `run --adaptive`
against the loopback stub, the trajectory in the store equal to what the stub was asked (DuckDB and
PostgreSQL: migration 21's tables, one transaction per trajectory, replaced whole on resume)."""
from __future__ import annotations

import json

import pandas as pd
import pg_kit
from runner_items import fill_store
from stubs import StubServer

from eduart_core.bankdraft import BANK_ITEM_COLUMNS, BankDraft
from eduart_core.cli import main
from eduart_core.store.adaptive import load_adaptive_runs, load_trajectory, save_trajectory
from eduart_core.store.banks import save_bank

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL


def _answer(info) -> str:
    return json.dumps({"Answers": [{"id": "A", "text": "TRUE"}], "motivation": "Because it is so."})


def _bank(store, records: list[dict]) -> None:
    rows = []
    for k, r in enumerate(records):
        d = -2.0 + 4.0 * k / (len(records) - 1)
        rows.append({"item_id": r["item_id"], "type": r["type"], "in_bank": True, "left_out": None, "reason": None,
                     "n_examinees": 8, "p": 0.5, "family": "Rasch", "n_levels": 2, "difficulty": d,
                     "difficulty_se": 0.3, "discrimination": 1.0, "discrimination_se": None, "thresholds": [d],
                     "threshold_se": [0.3], "threshold_levels": ["0-1"], "at_bound": False, "disordered": False,
                     "infit": 1.0, "outfit": 1.0})
    draft = BankDraft(model="rasch", items=pd.DataFrame(rows)[BANK_ITEM_COLUMNS], examinees=["a", "b"], n_examinees=8,
                      log_likelihood=-100.0, latent_sd=1.0, converged=True, se_method="test", rule="test",
                      method="test")
    save_bank(store, "demo", draft, {"dataset": "demo"}, ["default"], {r["item_id"]: 1 for r in records},
              {"actor_name": "test"})


def test_adaptive_run_on_both_backends_stores_what_the_stub_was_asked(store):
    records = fill_store(store, 3)  # 21 items
    _bank(store, records)
    with StubServer(answer=_answer) as stub:
        assert main(["run", "--db", str(store.path), "--provider", "openai_compatible", "--base-url",
                     f"{stub.url}/v1", "--model-id", "stub", "--quiet", "--adaptive", "--bank", "1", "--target-se",
                     "0.6", "--max-items", "8", "--run-id", "both"]) == 0
        asked = [r.user_text for r in stub.requests]
    by_text = {}
    for r in records:
        hits = [t for t in asked if f"Exercise {r['item_id']}\n" in t]
        if hits:
            by_text[hits[0]] = r["item_id"]
    runs = load_adaptive_runs(store, "demo")
    assert len(runs) == 1 and int(runs["bank_version"].iloc[0]) == 1 and int(runs["n_bank"].iloc[0]) == 21
    steps = load_trajectory(store, runs["run_id"].iloc[0])
    assert list(steps["item_id"]) == [by_text[t] for t in asked] and 1 <= len(steps) <= 8
    assert steps["ability_se"].iloc[-1] < steps["ability_se"].iloc[0] < 1.0  # below the prior SD, narrowing
    header = runs.iloc[0].to_dict()
    save_trajectory(store, {k: header[k] for k in header if k != "updated_at"},
                    steps.drop(columns="run_id").to_dict("records"))  # written again: the same rows, once
    again = load_trajectory(store, runs["run_id"].iloc[0])
    assert again.equals(steps)
