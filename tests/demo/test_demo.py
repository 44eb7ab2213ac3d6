"""The built-in demo store and the published reference dataset."""
from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from eduart_core.analysis import published_type_means, wilson_interval
from eduart_core.store.reference import (
    REFERENCE_DIR,
    load_reference,
    read_reference_motivation,
    read_reference_type_scores,
)

ROOT = Path(__file__).resolve().parents[2]
PUBLISHED = Path("/work/shared/reference")


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "eduart_core", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


# ------------------------------------------------------------------ reference dataset

def test_wilson_interval_matches_the_published_check():
    low, high = wilson_interval(0.957, 370)
    assert (round(low * 100, 1), round(high * 100, 1)) == (93.1, 97.3)


def test_reference_loads_the_published_figures_as_fractions_and_is_idempotent(store):
    from eduart_core.store.scores import list_datasets, list_models

    first = load_reference(store)
    again = load_reference(store)
    assert first == again == {"models": 12, "type_scores": 168, "motivation": 12}
    stored = read_reference_type_scores(store)
    assert stored["ci_low"].notna().sum() == 84  # printed for the default condition only
    scores = published_type_means(stored)  # the analysis fills the rest with its Wilson interval
    assert len(scores) == 168 and scores["model"].nunique() == 12
    assert list(scores.columns) == ["model", "family", "condition", "type", "n", "mean", "ci_low", "ci_high"]
    gpt = scores[(scores.model == "GPT-5.5") & (scores.condition == "default")
                 & (scores.type == "multiple_choice_radio")].iloc[0]
    assert (gpt.n, gpt["mean"], gpt.ci_low, gpt.ci_high) == (370, pytest.approx(0.951),
                                                               pytest.approx(0.924), pytest.approx(0.969))
    assert scores["mean"].between(0, 1).all()
    assert (scores.ci_low <= scores["mean"]).all() and (scores["mean"] <= scores.ci_high).all()
    assert set(scores.family) == {"Google", "OpenAI", "Anthropic", "Mistral", "Qwen"}

    motivation = read_reference_motivation(store)
    assert len(motivation) == 12
    lite = motivation[motivation.model == "Gemini 3.1 Flash Lite Preview"].iloc[0]
    assert lite.delta_micro == pytest.approx(-0.128) and lite.n_improved == 44 and lite.n_degraded == 198
    assert (motivation.n_improved + motivation.n_same + motivation.n_degraded == motivation.n_paired).all()

    datasets = list_datasets(store).set_index("dataset")
    assert datasets.loc["eduart2026", "aggregate_only"] and datasets.loc["eduart2026", "kind"] == "reference"
    models = list_models(store)
    assert len(models) == 12 and not models.simulated.any()


def test_reference_keys_match_the_shipped_model_registry():
    from eduart_core.providers.registry import load_registry

    registry = load_registry()
    with (REFERENCE_DIR / "models.csv").open(newline="") as handle:
        for row in csv.DictReader(handle):
            spec = registry[row["model"]]
            assert (spec.display_name, spec.api_model_id) == (row["display_name"], row["api_model_id"])


@pytest.mark.skipif(not PUBLISHED.exists(), reason="published source tables not present on this machine")
def test_shipped_figures_equal_the_published_tables():
    def rows(path: Path) -> list[dict]:
        with path.open(newline="") as handle:
            return list(csv.DictReader(handle))

    source = rows(PUBLISHED / "eduart2026_published_type_scores.csv")
    shipped = rows(REFERENCE_DIR / "type_scores.csv")
    assert [(r["display_name"], r["condition"], r["type"], r["n"], r["mean_pct"], r["wilson_ci_low_pct"],
             r["wilson_ci_high_pct"]) for r in source] == \
           [(r["display_name"], r["condition"], r["type"], r["n"], r["mean_pct"], r["ci_low_pct"],
             r["ci_high_pct"]) for r in shipped]
    source = rows(PUBLISHED / "eduart2026_published_motivation_overall.csv")
    shipped = rows(REFERENCE_DIR / "motivation_overall.csv")
    assert [r["diff_pp"] for r in source] == [r["diff_pp"] for r in shipped]
    assert [r["display_name"] for r in source] == [r["display_name"] for r in shipped]


# ------------------------------------------------------------------ demo store

@pytest.mark.slow  # a full demo build, in a subprocess
def test_demo_command_on_an_empty_folder_builds_the_expected_store(tmp_path):
    db = tmp_path / "fresh" / "eduart.duckdb"
    built = _cli("demo", "--db", str(db))
    assert built.returncode == 0, built.stderr
    assert "demo: done" in built.stdout and "simulated Sim A" in built.stdout  # progress lines
    done = _cli("stats", "--json", "--db", str(db))
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    demo = stats["datasets"]["demo"]
    assert demo["items"] >= 70 and len(demo["items_by_type"]) == 7
    assert set(demo["items_by_language"]) == {"it", "en"}
    assert demo["items_with_image"] >= 25 and demo["simulated"] is True
    assert demo["models"] >= 8 + 24 and demo["runs"] >= 16 + 24  # the models, and the simulated panel of people
    people = 24  # one run each, a sampled form of the items
    assert demo["items"] * (demo["runs"] - people) < demo["responses"] < demo["runs"] * demo["items"]
    assert stats["simulated_models"] >= 8
    assert stats["models"] - stats["simulated_models"] >= 12
    assert stats["datasets"]["eduart2026"]["aggregate_only"] is True
    assert stats["reference_models"] == 12 and stats["datasets"]["eduart2026"]["models"] == 12
    assert sorted(p.name for p in db.parent.iterdir()) == ["eduart.duckdb", "eduart_images", "eduart_runs"]
    # the only journals are the simulated judges' (they mark the written answers through the runner)
    assert [p.name for p in (db.parent / "eduart_runs").iterdir()] == ["_judges"]


def test_demo_runs_cover_both_conditions_and_both_profiles(demo_db):
    from eduart_core.store import Store
    from eduart_core.store.scores import load_scores

    store = Store(demo_db)  # built by the demo builder (once per session, see demo_kit)
    for profile in ("strict", "paper"):
        frame = load_scores(store, profile, dataset="demo")
        frame = frame[frame["kind"] != "human"]  # the simulated panel of people sits in the answer-only condition
        per_model = frame.groupby("model")["condition"].nunique()
        assert len(per_model) == 8 and (per_model == 2).all()
        assert frame["simulated"].all() and set(frame["family"]) == {"Simulated"}
        assert all(name.startswith("Sim ") for name in per_model.index)
        means = frame.groupby("model")["score"].mean()
        assert means.max() - means.min() > 0.1  # the archetypes differ visibly


@pytest.mark.slow  # demo builds
def test_extra_builders_force_rebuild_and_first_start(tmp_path, monkeypatch):
    import eduart_core.demo as demo
    from eduart_core.store import Store
    from eduart_core.store.runs import ensure_dataset
    from eduart_core.store.scores import list_datasets, stats

    calls: list[Path] = []

    def extraction_demo(store: Store, say) -> dict:
        calls.append(store.path)
        ensure_dataset(store, "extraction-demo", "Extraction demo", "demo", simulated=True)
        return {}

    builders = (*demo.DEMO_BUILDERS[:2], extraction_demo)  # the benchmark, the reference and this one
    db = tmp_path / "first" / "eduart.duckdb"
    lines: list[str] = []
    assert demo.ensure_demo(db, progress=lines.append, builders=builders) is True
    assert len(calls) == 1 and lines and lines[-1].startswith("demo: done")
    assert "extraction-demo" in set(list_datasets(Store(db)).dataset)  # built in a temp file, moved in place
    before = stats(Store(db))
    assert demo.ensure_demo(db, builders=builders) is False  # an existing store is never rebuilt on start
    demo.build_demo(Store(db), builders=builders)  # without --force: adds the demo again, duplicating nothing
    assert stats(Store(db)) == before and len(calls) == 2

    def broken(store: Store, say) -> dict:
        raise RuntimeError("builder failed")

    with pytest.raises(RuntimeError):
        demo.build_demo(Store(db), force=True, builders=(*builders, broken))
    after = stats(Store(db))
    assert after == before  # a failed rebuild leaves the old store as it was
    assert sorted(p.name for p in db.parent.iterdir()) == ["eduart.duckdb", "eduart_images"]
