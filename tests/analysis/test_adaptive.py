"""Adaptive runs on a frozen item bank: the engine (EAP, next item, content balance, stop), its simulated
accuracy, `run --adaptive` against a loopback stub (trajectory = what the stub was asked, resumable after
kill -9), the trajectory and ranking views, and bad input (one line, nothing asked).

Simulated numbers are simulated: post-hoc simulation (`analysis.adaptive_sim`), each examinee answers the
whole bank once and the adaptive test reads its answers from that row.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from stubs import StubServer

from eduart_core.analysis.adaptive import (
    BALANCE_FORMATS,
    Bank,
    Engine,
    check_target,
    run_simulated,
    simulate_levels,
)
from eduart_core.analysis.adaptive_sim import efficiency, simulated_bank, tie_study
from eduart_core.analysis.irt_levels import eap_abilities, item_information
from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.store import Store
from eduart_core.store.adaptive import load_adaptive_runs, load_trajectory

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def engine() -> Engine:
    return Engine(simulated_bank(200, seed=0), balance=BALANCE_FORMATS)


def test_eap_and_se_equal_an_independent_grid(engine):
    bank = engine.bank
    rng = np.random.default_rng(4)
    levels = simulate_levels(bank, np.array([0.7]), rng)[0]
    session = run_simulated(engine, levels, 0.30, None, "eap")
    codes = np.full((1, len(bank)), -1)
    for s in session.steps:
        codes[0, session.index[s.item_id]] = s.code
    theta, sd, _, _ = eap_abilities(codes, bank.slope, bank.steps, bank.latent_sd)
    assert session.estimate[0] == pytest.approx(theta[0], abs=2e-3)
    assert session.estimate[1] == pytest.approx(sd[0], abs=2e-3)


def test_next_item_is_the_most_informative_at_the_eap(engine):
    bank = engine.bank
    plain = Engine(bank, randomesque_k=1)
    asked = np.zeros(len(bank), dtype=bool)
    asked[:30] = True
    for theta in (-1.3, 0.0, 0.42, 2.1):
        chosen = plain.choose(theta, asked)
        exact = item_information(np.array([theta]), bank.slope, bank.steps)[:, 0]
        exact[asked] = -1
        assert exact[chosen] >= exact.max() - 1e-3
        assert not asked[chosen]


def test_content_balance_keeps_formats_near_the_bank_shares(engine):
    levels = simulate_levels(engine.bank, np.array([0.0]), np.random.default_rng(2))[0]
    session = run_simulated(engine, levels, 0.05, 40, "balance")
    assert len(session.steps) == 40
    for name, share in engine.targets.items():
        assert abs(session.counts.get(name, 0) - share * 40) <= 1.0


def test_stops_at_the_target_se_or_the_cap(engine):
    levels = simulate_levels(engine.bank, np.array([0.3]), np.random.default_rng(3))[0]
    done = run_simulated(engine, levels, 0.30, None, "stop")
    assert done.steps[-1].se <= 0.30 < done.steps[-2].se and done.stop_reason() == "target_se"
    capped = run_simulated(engine, levels, 0.05, 12, "cap")
    assert len(capped.steps) == 12 and capped.stop_reason() == "max_items"
    with pytest.raises(ValueError):
        capped.record(capped.steps[0].item_id, 1)  # an item is never entered twice


def test_ten_simulated_examinees_reach_the_target_with_few_items(engine):
    found = efficiency(engine, 10, 0.30, seed=3)
    assert found.reached == 10 and found.share_items <= 0.25


def test_bad_input_is_one_line():
    with pytest.raises(UserError, match="positive number"):
        check_target(0)
    with pytest.raises(UserError, match="positive number"):
        check_target(-0.3)
    rows = pd.DataFrame({"item_id": [f"i{k}" for k in range(19)], "type": "true_false", "in_bank": True,
                         "difficulty": 0.0, "discrimination": 1.0, "thresholds": [[0.0]] * 19,
                         "threshold_levels": [["0-1"]] * 19})
    with pytest.raises(UserError, match="19 usable items; an adaptive run needs at least 20"):
        Bank.from_items(rows, 1.0)


@pytest.mark.slow
def test_done_means_on_a_simulated_bank_of_200(engine):
    """30 examinees to SE 0.30: the target reached with at most 25% of the items; Spearman with the full exam.

    At SE 0.30 with abilities of SD 1 the correlation with the full exam is bounded by about
    sqrt(1 / (1 + 0.09)) = 0.958 (the adaptive error alone), so a 30-examinee panel's Spearman
    falls below 0.95 in roughly half of panels; over 20 panels the median and the mean are asserted
    near that bound (measured 0.945 and 0.942), and at target 0.25 (16% of the items) the mean >= 0.95."""
    panels = [efficiency(engine, 30, 0.30, seed=s) for s in range(20)]
    assert all(p.reached == 30 for p in panels)
    assert max(p.share_items for p in panels) <= 0.25
    assert np.median([p.spearman for p in panels]) >= 0.94 and np.mean([p.spearman for p in panels]) >= 0.935
    tighter = [efficiency(engine, 30, 0.25, seed=s) for s in range(10)]
    assert np.mean([p.spearman for p in tighter]) >= 0.95 and max(p.share_items for p in tighter) <= 0.25
    ties = tie_study(engine, 20, simulations=100)
    assert ties.groups_kept >= 90  # Holm-corrected tie groups, as on the leaderboard (measured 98 of 100)
    # uncorrected pairwise tests: measured 74-75 (stated in the guide); fewer than the 80-86 of a selection that
    # needed more items to reach the SE (with the cap at 20 it asked the whole 20 more often)
    assert ties.groups_kept_uncorrected >= 70


# ---------------------------------------------------------------- runs against the loopback stub

def _answer(info) -> str:
    return json.dumps({"Answers": [{"id": "A", "text": "TRUE"}], "motivation": "Because it is so."})


def _freeze(db: Path) -> None:
    assert main(["bank", "--db", str(db), "--dataset", "demo"]) == 0


def _texts(db: Path, run_id: str) -> dict[str, str]:
    """user text -> item id of the launch's requests (planned again, nothing asked)."""
    from eduart_core.runner.launch import LaunchOptions, plan_launch

    opts = LaunchOptions(adhoc={"provider": "openai_compatible", "model_id": "stub", "base_url": "http://x/v1"},
                         dataset="demo", launch_id=run_id, text_only=True,
                         adaptive={"bank": 1, "target_se": 0.3, "max_items": None, "balance": "formats"})
    plan = plan_launch(Store(db), opts)
    return {job.payload["request"].user_text: job.meta["item_id"] for job in plan.jobs}


def _args(db: Path, stub, *extra: str) -> list[str]:
    return ["run", "--db", str(db), "--provider", "openai_compatible", "--base-url", f"{stub.url}/v1",
            "--model-id", "stub", "--text-only", "--quiet", "--backoff", "0.05", "--adaptive", "--bank", "1",
            "--content-balance", "formats", "--run-id", "ad", *extra]


@pytest.mark.slow
def test_adaptive_run_stores_what_the_stub_was_asked(demo_copy, capsys):
    _freeze(demo_copy)
    capsys.readouterr()
    assert main(["run", "--db", str(demo_copy), "--model", "chance", "--adaptive", "--bank", "1", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "expected" in out and "simulated, 200 examinees" in out and "of 67" in out
    with StubServer(answer=_answer) as stub:
        assert main(_args(demo_copy, stub)) == 0
        asked = [r.user_text for r in stub.requests]
    texts = _texts(demo_copy, "ad")
    store = Store(demo_copy)
    runs = load_adaptive_runs(store, "demo")
    assert len(runs) == 1 and runs["bank_version"].iloc[0] == 1
    steps = load_trajectory(store, runs["run_id"].iloc[0])
    assert list(steps["item_id"]) == [texts[t] for t in asked]
    assert len(set(steps["item_id"])) == len(steps) < 67
    assert runs["stop_reason"].iloc[0] in ("target_se", "bank_exhausted")
    out = capsys.readouterr().out
    assert "bank items, ability" in out and "show adaptive_trajectory" in out
    assert main(["show", "adaptive_trajectory", "--db", str(demo_copy), "--option",
                 f"run={runs['run_id'].iloc[0]}", "--caption"]) == 0
    assert "Adaptive run" in capsys.readouterr().out
    assert main(["show", "adaptive_ranking", "--db", str(demo_copy), "--dataset", "demo"]) == 0
    kinds = {r["kind"] for r in json.loads(capsys.readouterr().out)}
    assert f"adaptive, {len(steps)} items" in kinds and "full, 67 items" in kinds
    from eduart_core import views
    from eduart_core.charts.adaptive import figure_adaptive_trajectory
    from eduart_core.selection import Selection

    frame = views.adaptive_trajectory(views.Source.of(str(demo_copy)), Selection(dataset="demo"),
                                      run=runs["run_id"].iloc[0])
    assert (frame["ci_low"] < frame["ability"]).all() and (frame["ability"] < frame["ci_high"]).all()
    assert frame["ability_se"].iloc[-1] == pytest.approx(runs["ability_se"].iloc[0])
    fig = figure_adaptive_trajectory(frame)
    assert sum(len(t.x) for t in fig.data if t.mode == "markers") == len(steps)  # every chosen item drawn
    assert any("stop:" in a.text for a in fig.layout.annotations)


def test_bad_adaptive_input_asks_nothing(demo_copy, capsys):
    with StubServer(answer=_answer) as stub:
        for extra, words in ((["--target-se", "0"], "positive number"), (["--target-se", "-1"], "positive number"),
                             ([], "has no item bank yet")):
            assert main(_args(demo_copy, stub, *extra)) == 2
            err = capsys.readouterr().err.strip().splitlines()
            assert len(err) == 1 and words in err[0]
        _freeze(demo_copy)
        args = _args(demo_copy, stub)
        args[args.index("--bank") + 1] = "7"
        assert main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "no bank version 7 (versions: 1)" in err[0]
        assert main(["run", "--db", str(demo_copy), "--model", "chance", "--bank", "1"]) == 2
        assert "belong to --adaptive" in capsys.readouterr().err
        assert stub.requests == []
    assert load_adaptive_runs(Store(demo_copy), "demo").empty


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "eduart_core", *args]


@pytest.mark.slow  # a real kill
def test_kill_9_then_resume_asks_no_answered_item_again(demo_copy):
    _freeze(demo_copy)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    store = Store(demo_copy)
    with StubServer(latency_s=0.4, answer=_answer) as stub:
        args = _args(demo_copy, stub, "--target-se", "0.2")
        proc = subprocess.Popen(_cli(*args), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 240
        journal = None
        while time.monotonic() < deadline:
            found = list(store.runs_dir.glob("ad__*/responses.jsonl"))
            if found and found[0].read_text().count("\n") >= 4:
                journal = found[0]
                break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert journal is not None
        before = [json.loads(ln)["item_id"] for ln in journal.read_text().splitlines() if ln.strip()]
        done = subprocess.run(_cli(*args), env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        asked = [r.user_text for r in stub.requests]
    texts = _texts(demo_copy, "ad")
    items = [texts[t] for t in asked]
    steps = load_trajectory(store, load_adaptive_runs(store, "demo")["run_id"].iloc[0])
    trajectory = list(steps["item_id"])
    assert trajectory[:len(before)] == before  # the first session's answers, in order
    assert len(set(trajectory)) == len(trajectory)
    # every answered item was asked once; only a request in flight at the kill was asked again (right after)
    collapsed = [i for k, i in enumerate(items) if k == 0 or items[k - 1] != i]
    assert collapsed == trajectory
    assert len(items) - len(trajectory) <= 1


@pytest.mark.slow  # a page run (AppTest)
def test_runs_page_draws_the_trajectory_and_the_ranking(demo_copy, monkeypatch):
    from streamlit.testing.v1 import AppTest

    _freeze(demo_copy)
    assert main(["run", "--db", str(demo_copy), "--model", "chance", "--adaptive", "--bank", "1", "--run-id", "pg",
                 "--quiet"]) == 0
    monkeypatch.setenv("EDUART_DB", str(demo_copy))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "pages" / "10_runs.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert "Adaptive runs" in [h.value for h in at.subheader]
    frames = [d.value for d in at.dataframe]
    assert any("stopped_here" in f.columns for f in frames)       # the trajectory table
    board = next(f for f in frames if "tied_with" in f.columns and "n_items" in f.columns)
    assert len(board) == 9                                        # 8 full-run models and the adaptive run
