"""Regression reference levels are a choice.

What a researcher relies on: on a published-layout import whose models come from the published
registry, the regression uses the published references (single-answer MCQ, no image, English,
Gemini 3.1 Flash Lite Preview), not the alphabetically first model; the references can be
switched in `show regression` (and on the page and in the report); the output names them; the
reference model has no row; other datasets get the documented median-ability rule.
"""
from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path

import pandas as pd
import pytest

from eduart_core import analysis
from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.importers.records import import_eduart
from eduart_core.store import Store
from eduart_core.text import plain
from tests.importers.test_ingest import ITEMS, RIGHT, WRONG, build_published_folder, models_csv, png_bytes

GEMINI, HAIKU, GPT = "Gemini 3.1 Flash Lite Preview", "Claude Haiku 4.5", "GPT-5.5"
#: Folder names of three published models (as in data/reference/models.csv) and who is right on item k.
PUBLISHED_DIRS = {
    "google_gemini-3.1-flash-lite-preview": (GEMINI, lambda k: (k * 7) % 10 < 5),
    "harvard_us.anthropic.claude-haiku-4-5-20251001-v1:0": (HAIKU, lambda k: (k * 3) % 10 < 4),
    "openai_gpt-5.5-2026-04-23": (GPT, lambda k: k % 10 < 8),
}
N_ITEMS = 30


def build_registry_folder(root: Path) -> Path:
    """A published-layout folder of 30 made-up items (the test_ingest records, both languages, some
    with an image) answered by three models of the published registry in both conditions."""
    meta = root / "dataset" / "metadata"
    meta.mkdir(parents=True)
    (root / "dataset" / "imgs").mkdir()
    (root / "dataset" / "imgs" / "0001.png").write_bytes(png_bytes())
    bases = list(ITEMS)
    for k in range(N_ITEMS):
        base = bases[k % len(bases)]
        record = dict(ITEMS[base], language="it" if (k // len(bases)) % 2 == 0 else "en")
        record["has_image"], record["image"] = (True, "imgs/0001.png") if k % 3 == 0 else (False, None)
        item_id = f"{k + 1:04d}"
        (meta / f"{item_id}.json").write_text(json.dumps(record), encoding="utf-8")
        for model_dir, (_, right) in PUBLISHED_DIRS.items():
            for condition in ("default", "motivation"):
                answer = RIGHT[base] if right(k + (condition == "motivation")) else WRONG[base]
                path = root / "answers" / model_dir / condition / f"{item_id}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps({"question_id": item_id, "question_type": record["type"],
                                            "model_name": model_dir, "prompt_condition": condition,
                                            "llm_answer": answer, "raw_response": json.dumps({"Answers": answer})}),
                                encoding="utf-8")
    return root


@pytest.fixture
def published_store(tmp_path) -> Path:
    store = Store(tmp_path / "pub" / "eduart.duckdb")
    import_eduart(store, build_registry_folder(tmp_path / "eduart"))  # the shipped models.csv
    return store.path


def show(db: Path, *args: str) -> list[dict]:
    from eduart_core import views

    views.clear_caches()
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(["show", "regression", "--dataset", "eduart", *args, "--db", str(db)]) == 0
    return json.loads(buffer.getvalue())


def test_published_import_defaults_to_the_published_reference(published_store):
    rows = show(published_store)
    models = [r["predictor"] for r in rows if r["factor"] == "model"]
    assert sorted(models) == [f"model:{HAIKU}", f"model:{GPT}"]  # the reference model has no row
    for r in rows:
        if r["factor"] == "model":
            assert r["reference"] == GEMINI and r["reference_rule"] == "published reference"
        if r["factor"] == "type":
            assert r["reference"] == "multiple_choice_radio"
    intercept = next(r for r in rows if r["predictor"] == "intercept")
    assert intercept["reference"] == (f"type=multiple_choice_radio; has_image=False; language=en; model={GEMINI}")
    assert HAIKU < GEMINI  # the alphabetically first model would have been Haiku: the old, wrong default


def test_the_reference_model_can_be_switched(published_store):
    default = {r["predictor"]: r for r in show(published_store)}
    switched = {r["predictor"]: r for r in show(published_store, "--option", f"ref_model={HAIKU}",
                                               "--option", "ref_language=it")}
    assert f"model:{HAIKU}" not in switched and f"model:{GEMINI}" in switched
    assert switched[f"model:{GEMINI}"]["reference"] == HAIKU
    assert switched[f"model:{GEMINI}"]["reference_rule"] == "chosen by the user"
    assert "language:en" in switched and "language:it" not in switched
    # the same model comparison read from the other side: the log-odds flip sign
    assert switched[f"model:{GEMINI}"]["beta"] == pytest.approx(-default[f"model:{HAIKU}"]["beta"], abs=1e-6)
    by_key = {r["predictor"]: r for r in show(published_store, "--option", "ref_model=claude-haiku-4.5")}
    assert by_key[f"model:{GEMINI}"]["beta"] == pytest.approx(switched[f"model:{GEMINI}"]["beta"], rel=1e-6)


def test_an_unknown_reference_is_one_line(published_store, capsys):
    from eduart_core import views

    views.clear_caches()
    code = main(["show", "regression", "--dataset", "eduart", "--option", "ref_model=Nobody", "--db",
                 str(published_store)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "reference model 'Nobody' is not in the data" in err[0]


def test_other_datasets_use_the_median_ability_model(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    import_eduart(store, build_published_folder(tmp_path / "eduart"), models_csv=models_csv(tmp_path / "m.csv"))
    rows = show(store.path)
    refs = {r["reference"] for r in rows if r["factor"] == "model"}
    rules = {r["reference_rule"] for r in rows if r["factor"] == "model"}
    frame = pd.DataFrame(show_scores(store.path))
    assert refs == {analysis.median_ability_model(frame)}
    assert rules == {analysis.regression.RULE_MEDIAN_MODEL}


def show_scores(db: Path) -> list[dict]:
    from eduart_core.store.scores import load_scores

    frame = load_scores(Store(db), dataset="eduart")
    return frame[frame["condition"] == "default"].to_dict(orient="records")


def _frame(shares: dict[str, float], n: int = 40) -> pd.DataFrame:
    rows = []
    for model, share in shares.items():
        right = int(round(share * n))
        for i in range(n):
            rows.append({"model": model, "condition": "default", "item_id": f"i{i:03d}",
                         "type": "multiple_choice_radio" if i % 2 else "true_false",
                         "language": "it" if i % 3 else "en", "has_image": i % 4 == 0,
                         "score": 1.0 if i < right else 0.0})
    return pd.DataFrame(rows)


def test_median_ability_model_is_the_middle_one_not_the_first_name():
    frame = _frame({"Alpha": 0.2, "Beta": 0.9, "Gamma": 0.5})
    assert analysis.median_ability_model(frame) == "Gamma"
    frame4 = _frame({"Alpha": 0.2, "Beta": 0.9, "Gamma": 0.5, "Delta": 0.7})
    assert analysis.median_ability_model(frame4) == "Gamma"  # even count: the lower middle one
    refs, rules = analysis.regression_references(frame)
    assert refs == {"type": "multiple_choice_radio", "has_image": False, "language": "en", "model": "Gamma"}
    fit = analysis.logistic_regression(frame, reference=refs, rules=rules)
    assert "model:Gamma" not in set(fit["predictor"]) and {"model:Alpha", "model:Beta"} <= set(fit["predictor"])
    assert fit.attrs["reference"]["model"] == "Gamma"


def test_requested_levels_win_and_bad_ones_are_named():
    frame = _frame({"Alpha": 0.2, "Beta": 0.9, "Gamma": 0.5})
    refs, rules = analysis.regression_references(
        frame, {"type": "true_false", "has_image": "with", "language": "it", "model": "Beta"})
    assert refs == {"type": "true_false", "has_image": True, "language": "it", "model": "Beta"}
    assert set(rules.values()) == {"chosen by the user"}
    fit = analysis.logistic_regression(frame, reference=refs, rules=rules)
    assert "has_image:False" in set(fit["predictor"]) and "type:multiple_choice_radio" in set(fit["predictor"])
    with pytest.raises(UserError, match="reference format 'positioning' is not in the data"):
        analysis.regression_references(frame, {"type": "positioning"})
    with pytest.raises(UserError, match="reference image must be"):
        analysis.regression_references(frame, {"has_image": "sometimes"})
    only_text = frame[~frame["has_image"]]
    with pytest.raises(UserError, match="no such items"):
        analysis.regression_references(only_text, {"has_image": "with"})


def test_published_reference_model_is_in_the_shipped_registry():
    from eduart_core.providers.registry import load_registry
    from eduart_core.vocab import PUBLISHED_REFERENCE_MODEL

    spec = load_registry()[PUBLISHED_REFERENCE_MODEL]
    assert spec.display_name == GEMINI


@pytest.mark.slow
def test_formats_page_names_and_switches_the_references(published_store, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views
    from tests.pages.test_app_pages import ROOT, assert_clean

    monkeypatch.setenv("EDUART_DB", str(published_store))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.query_params["dataset"] = "eduart"
    at.run()
    at.switch_page("pages/03_formats.py").run()
    assert_clean(at)
    captions = " ".join(c.value for c in at.caption)
    assert plain(f"model {GEMINI} [published reference]") in captions  # captions are text (markdown escaped)
    assert at.selectbox(key="reg_ref_model").value == GEMINI
    at.selectbox(key="reg_ref_model").set_value(HAIKU).run()
    assert_clean(at)
    captions = " ".join(c.value for c in at.caption)
    assert plain(f"model {HAIKU} [chosen by the user]") in captions


@pytest.mark.slow
def test_report_names_and_switches_the_references(published_store, tmp_path):
    from eduart_core.report import build_report

    text = build_report(str(published_store), dataset="eduart")
    assert f"model {GEMINI} [published reference]" in text
    text = build_report(str(published_store), dataset="eduart", reference={"ref_model": HAIKU})
    assert f"model {HAIKU} [chosen by the user]" in text
    out = tmp_path / "r.html"
    assert main(["report", "--db", str(published_store), "--dataset", "eduart", "--reference", "type=true_false",
                 "--out", str(out)]) == 0
    assert "True / false [chosen by the user]" in out.read_text(encoding="utf-8")
