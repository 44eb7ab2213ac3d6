"""Repeats that count once: imported repeat indices, scores averaged over repeats, the cache per
repeat, stability statistics against a hand computation, and the demo's unstable simulated model.
Real CLI and real DuckDB stores."""
from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout

import pandas as pd
import pytest
from runner_items import fill_store
from stubs import StubServer

from eduart_core import analysis, views
from eduart_core.analysis.stability import item_stability, stability, unstable_model
from eduart_core.cli import main
from eduart_core.selection import Selection
from eduart_core.store import Store
from eduart_core.store.scores import load_repeat_scores, load_scores

RIGHT, WRONG = '{"Answers": [{"id": "A"}]}', '{"Answers": [{"id": "B"}]}'  # item 0001: radio, gold A


def _line(item: str = "0001", model: str = "my-vlm", raw: str = RIGHT, **extra) -> str:
    return json.dumps({"dataset": "demo", "item_id": item, "model": model, "condition": "default",
                       "raw_response": raw, **extra})


def _import(store: Store, path, capsys) -> tuple[int, str, str]:
    code = main(["import-responses", str(path), "--db", str(store.path)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# ---------------------------------------------------------------- import-responses: "repeat": k

def test_imported_repeats_are_stored_averaged_once_and_bad_repeat_values_are_named(store, tmp_path, capsys):
    fill_store(store)
    path = tmp_path / "repeats.jsonl"
    lines = [_line(raw=RIGHT), _line(raw=RIGHT, repeat=1), _line(raw=WRONG, repeat=2.0),  # 1.0-style whole floats pass
             _line(raw=RIGHT, repeat=-1), _line(raw=RIGHT, repeat=1.5), _line(raw=RIGHT, repeat="2"),
             _line(raw=RIGHT, repeat=True), _line(item="0001", model="other-vlm", raw=WRONG)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, out, err = _import(store, path, capsys)
    assert code == 2
    assert "8 line(s): 4 new response(s), 0 already stored, 4 skipped" in out
    named = err.splitlines()
    for number, words in ((4, "repeat must be a whole number >= 0, got -1"), (5, "got 1.5"),
                          (6, "got str '2'"), (7, "got bool True")):
        assert any(ln.startswith(f"  repeats.jsonl:{number}: ") and words in ln for ln in named), (number, err)

    scores = load_scores(store, "strict", dataset="demo").set_index(["model_key", "item_id"])
    assert len(scores) == 2  # one row per model x condition x item, not one per repeat
    mine = scores.loc[("my-vlm", "0001")]
    assert mine["score"] == pytest.approx(2 / 3) and mine["n_repeats"] == 3 and bool(mine["correct"])
    assert scores.loc[("other-vlm", "0001"), "n_repeats"] == 1
    each = load_repeat_scores(store, "strict", dataset="demo")
    assert sorted(each["repetition"]) == [0, 1, 2] and set(each["model_key"]) == {"my-vlm"}

    # the same file again adds nothing: the repeat index is part of the response's identity
    code, out, _ = _import(store, path, capsys)
    assert code == 2 and "0 new response(s), 4 already stored, 4 skipped" in out


def test_the_fast_read_path_averages_repeats_like_the_long_frame(store, tmp_path, capsys):
    from eduart_core.store.scores import load_score_table, long_scores

    fill_store(store)
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join([_line(raw=RIGHT), _line(raw=WRONG, repeat=1), _line(item="0002", raw=WRONG),
                               _line(model="b-vlm", raw=WRONG)]) + "\n", encoding="utf-8")
    assert _import(store, path, capsys)[0] == 0
    fast = long_scores(load_score_table(store, "demo"), "strict")
    slow = load_scores(store, "strict", "demo")
    assert list(fast.columns) == list(slow.columns)
    for column in ("model", "item_id", "score", "correct", "n_repeats"):
        assert fast[column].astype(object).tolist() == slow[column].astype(object).tolist(), column
    row = slow[(slow["model_key"] == "my-vlm") & (slow["item_id"] == "0001")].iloc[0]
    assert row["score"] == 0.5 and row["n_repeats"] == 2 and bool(row["correct"])  # right in half the repeats


def test_repeats_never_count_as_examinees_in_item_statistics(store, tmp_path, capsys):
    fill_store(store, 2)
    path = tmp_path / "r.jsonl"
    lines = []
    for model, answers in (("m-one", [RIGHT, WRONG, RIGHT]), ("m-two", [WRONG])):
        for k, raw in enumerate(answers):
            for item in ("0001", "0008"):  # two radio items (the second copy of the first)
                lines.append(_line(item=item, model=model, raw=raw, repeat=k))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _import(store, path, capsys)[0] == 0
    frame = load_scores(store, "strict", "demo")
    stats = analysis.item_statistics(frame)
    assert stats.attrs["n_examinees"] == 2  # two models, however many repeats
    assert set(stats["n_examinees"]) == {2}
    assert stats.set_index("item_id").loc["0001", "p"] == pytest.approx((2 / 3 + 0) / 2)


# ---------------------------------------------------------------- the cache never serves one repeat for another

def _answer(info) -> str:
    return json.dumps({"Answers": [{"id": "A", "text": "TRUE"}]})


def _adhoc(stub: StubServer, store: Store, *extra: str) -> int:
    return main(["run", "--db", str(store.path), "--provider", "openai_compatible", "--base-url",
                 f"{stub.url}/v1", "--model-id", "stub-model", "--quiet", "--backoff", "0.05", *extra])


@pytest.mark.slow
def test_each_repeat_is_asked_and_cached_under_its_own_key(store):
    from eduart_core.runner.launch import LaunchOptions, plan_launch

    records = fill_store(store)
    with StubServer(answer=_answer) as stub:
        assert _adhoc(stub, store, "--run-id", "main") == 0
        assert len(stub.requests) == len(records)
        assert _adhoc(stub, store, "--run-id", "again", "--repeat", "2") == 0
        assert len(stub.requests) == 3 * len(records)  # repeats 1 and 2 are new requests, never repeat 0's answer
        assert _adhoc(stub, store, "--run-id", "third", "--repeat", "2") == 0
        assert len(stub.requests) == 3 * len(records)  # each repeat's own answer is served from the cache
    options = LaunchOptions(adhoc={"provider": "openai_compatible", "model_id": "stub-model",
                                   "base_url": "http://127.0.0.1:9/v1"}, dataset="demo", launch_id="k", repeat=2)
    keys = {}
    for job in plan_launch(store, options).jobs:
        keys.setdefault(job.meta["item_id"], set()).add(job.payload["cache_key"])
    assert all(len(k) == 2 for k in keys.values())
    with store.connect(read_only=True) as con:
        params = {rep: json.loads(p) for rep, p in con.execute(
            "SELECT repetition, CAST(params AS TEXT) FROM runs WHERE run_id LIKE 'again%'").fetchall()}
    assert sorted(params) == [1, 2] and all(params[r]["repetition"] == r for r in params)
    assert all("temperature" in p and "seed" in p for p in params.values())  # sampling settings per run
    each = load_repeat_scores(store, "strict", "demo")
    assert sorted(each["repetition"].unique()) == [0, 1, 2]
    assert set(load_scores(store, "strict", "demo")["n_repeats"]) == {3}


# ---------------------------------------------------------------- stability against a hand computation

def _frame() -> pd.DataFrame:
    """Two models, three items (two formats), three repeats each; scores chosen to compute by hand."""
    rows = []
    table = {  # item: (type, [scores of repeats 0, 1, 2]) per model
        "flaky": {"i1": ("a", [1, 0, 1]), "i2": ("a", [0, 0, 0]), "i3": ("b", [1, 1, 0])},
        "solid": {"i1": ("a", [1, 1, 1]), "i2": ("a", [0, 0, 0]), "i3": ("b", [0.5, 0.5, 0.5])},
    }
    for model, items in table.items():
        for item, (kind, scores) in items.items():
            for rep, score in enumerate(scores):
                rows.append({"model": model, "condition": "default", "item_id": item, "type": kind,
                             "repetition": rep, "score": float(score), "correct": score >= 0.5})
    return pd.DataFrame(rows)


def test_stability_numbers_match_a_hand_computation():
    table = stability(_frame()).set_index("model")
    flaky, solid = table.loc["flaky"], table.loc["solid"]
    assert flaky["items"] == 3 and flaky["repeats"] == 3
    assert flaky["agree_share"] == pytest.approx(1 / 3) and solid["agree_share"] == 1.0
    assert flaky["flips"] == 2 and flaky["flip_rate"] == pytest.approx(2 / 3) and solid["flips"] == 0
    low, high = analysis.wilson_interval(2 / 3, 3)
    assert (flaky["flip_low"], flaky["flip_high"]) == pytest.approx((low, high))
    # macro per repeat: format a = mean(i1, i2), format b = i3; macro = (a + b) / 2
    macros = [((1 + 0) / 2 + 1) / 2, ((0 + 0) / 2 + 1) / 2, ((1 + 0) / 2 + 0) / 2]  # 0.75, 0.5, 0.25
    assert flaky["macro_sd"] == pytest.approx(pd.Series(macros).std(ddof=1))
    assert (flaky["macro_min"], flaky["macro_max"]) == (0.25, 0.75)
    # variance split: item means a: 2/3, 0 (s2 1/3, 0); b: 2/3 (s2 1/3); F = 2, K = 3
    between_a = pd.Series([2 / 3, 0.0]).var(ddof=1)
    total = between_a / (4 * 2) + 0.0  # format b has one item: no between-item variance
    repeats = ((1 / 3) / 3 + 0.0) / 2 / (4 * 2) + ((1 / 3) / 3) / (4 * 1)
    assert flaky["var_repeats"] == pytest.approx(repeats)
    assert flaky["var_items"] == pytest.approx(max(total - repeats, 0.0))
    assert solid["macro_sd"] == 0.0 and solid["var_repeats"] == 0.0
    items = item_stability(_frame())
    assert items.iloc[0]["flips"] == 1 and items.iloc[0]["item_id"] == "i1"  # ties by item id
    assert items.iloc[0]["flipped"] == "flaky (default)"


def test_no_model_is_named_unstable_when_the_test_does_not_carry_it():
    assert unstable_model(_frame(), "default") is None  # 2 flips against 0 on 3 items: p = 0.25


def test_an_unstable_model_is_named_when_the_paired_test_carries_it():
    rows = []
    for model, flips in (("jumpy", 30), ("calm", 2), ("steady", 1)):
        for k in range(40):
            for rep in range(3):
                right = not (k < flips and rep == 1)
                rows.append({"model": model, "condition": "default", "item_id": f"i{k:02d}", "type": "a",
                             "repetition": rep, "score": float(right), "correct": right})
    found = unstable_model(pd.DataFrame(rows), "default")
    assert found is not None and found["model"] == "jumpy" and found["rivals"] == 2
    assert found["flip_low"] > found["rival_max_rate"] and found["p_max"] < 0.05


# ---------------------------------------------------------------- the demo shows it

def _show(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["show", *args])
    return code, out.getvalue(), err.getvalue()


def test_the_demo_names_its_unstable_simulated_model(demo_db):
    src, sel = views.Source.of(str(demo_db)), Selection(dataset="demo")
    table = views.stability(src, sel).set_index("model")
    unstable = "Sim G (hedging guesser)"
    assert set(table["repeats"]) == {3} and set(table["items"]) == {44}
    assert table.loc[unstable, "flip_rate"] == table["flip_rate"].max()
    assert table.loc[unstable, "flip_low"] > table.drop(unstable)["flip_high"].max() - 0.2
    heads = [f.headline for f in views.key_findings(src, sel)]
    named = [h for h in heads if "changes its answers between repeated runs" in h]
    assert len(named) == 1 and unstable in named[0] and named[0].startswith("Simulated")
    # the leaderboard and the item statistics count each simulated model once
    scores = views.selected_scores(src, sel)
    assert not scores.duplicated(["model", "condition", "item_id"]).any()
    assert set(scores["n_repeats"]) == {1, 3}
    stats = views.item_statistics(src, sel)
    # examinees are model x condition pairs: 8 models x 2 conditions (repeats counted apart would give 32)
    assert stats["n_examinees"].max() == 2 * scores["model"].nunique() == 16


def test_show_stability_and_item_stability_say_what_they_hold(demo_db):
    code, out, _ = _show("stability", "--db", str(demo_db))
    rows = json.loads(out)
    assert code == 0 and {"flip_rate", "flip_low", "flip_high", "macro_sd", "var_items", "var_repeats",
                          "agree_share"} <= set(rows[0])
    assert all(r["flip_low"] - 1e-12 <= r["flip_rate"] <= r["flip_high"] + 1e-12 for r in rows)
    code, caption, _ = _show("stability", "--caption", "--db", str(demo_db))
    assert code == 0 and "simulated" in caption.lower()
    for words in ("44 items", "3 repeats", "Wilson", "Miller 2024", "Flip rate"):
        assert words in caption, words
    code, out, _ = _show("item_stability", "--option", "top=5", "--db", str(demo_db))
    items = json.loads(out)
    assert code == 0 and len(items) == 5 and items[0]["flips"] >= items[-1]["flips"]
    assert "Sim G (hedging guesser) (default)" in items[0]["flipped"]
    code, caption, _ = _show("item_stability", "--option", "top=5", "--caption", "--db", str(demo_db))
    assert code == 0 and "The 5 items that flip most" in caption and "simulated" in caption.lower()


def test_a_dataset_without_repeats_says_so_in_one_line(store, capsys):
    fill_store(store)
    assert main(["run", "--db", str(store.path), "--model", "chance", "--quiet"]) == 0
    capsys.readouterr()
    code, caption, _ = _show("stability", "--caption", "--baselines", "--db", str(store.path))
    assert code == 0 and "No examinee in this selection has repeats" in caption
    assert len(caption.strip().splitlines()) == 1
    code, out, _ = _show("stability", "--baselines", "--db", str(store.path))
    assert code == 0 and json.loads(out) == []


def test_a_profile_switch_reads_no_repeats_from_a_store_without_them(store, monkeypatch):
    """Whether examinees have repeats is read once per data version: the Overview's findings and the
    Runs page ask for the repeats of each profile, and a store without any needs no second read."""
    from eduart_core.store import scores as store_scores

    fill_store(store)
    assert main(["run", "--db", str(store.path), "--model", "chance", "--quiet"]) == 0
    asked, read = [], []
    real_examinees, real_scores = store_scores.repeat_examinees, store_scores.load_scores
    monkeypatch.setattr(store_scores, "repeat_examinees", lambda *a, **k: asked.append(a) or real_examinees(*a, **k))
    monkeypatch.setattr(store_scores, "load_scores", lambda *a, **k: read.append(a) or real_scores(*a, **k))
    views.clear_caches()
    src = views.Source.of(store)
    for profile in ("strict", "paper", "strict"):
        frame = views.repeat_scores(src, Selection(dataset="demo", profile=profile, baselines=True))
        assert frame.empty
    assert len(asked) == 1 and read == []
    views.clear_caches()
