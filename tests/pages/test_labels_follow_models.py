"""Labels follow the models, not the dataset: after a real model (an OpenAI-compatible server, here
a stub on 127.0.0.1 driven through the real SDK) or the chance baseline runs on the demo, the page
banner, export subtitles, findings and the report name each model by its kind (simulated, real,
baseline) instead of calling everything "Simulated respondents"; and the counts agree (the
motivation sentence counts the same models as its test)."""
from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from eduart_core import exports, views
from eduart_core.cli import main
from eduart_core.selection import Selection
from eduart_core.store import Store
from eduart_core.vocab import BASELINE_KIND, SIMULATED_KIND
from tests.stubs import StubServer

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def real_db(demo_db, tmp_path_factory) -> Path:
    """The demo after an OpenAI-compatible model answered every item in both conditions."""
    path = tmp_path_factory.mktemp("real-on-demo") / "eduart.duckdb"
    shutil.copy(demo_db, path)
    shutil.copytree(Store(demo_db).images_dir, Store(path).images_dir)
    with StubServer() as stub:  # answers "A" to everything, in both conditions alike
        assert main(["run", "--db", str(path), "--provider", "openai_compatible", "--base-url", f"{stub.url}/v1",
                     "--model-id", "stub-model", "--condition", "both", "--quiet", "--backoff", "0.05"]) == 0
    return path


def kinds(db: Path) -> dict[str, list[str]]:
    """Display names of the models with data in the demo, by kind (from the catalog)."""
    src = views.Source.of(Store(db))
    table = views.models(src)
    kind = dict(zip(table["display_name"], table["kind"]))
    out: dict[str, list[str]] = {}
    for name in views.models_with_data(src, "demo", baselines=True):
        out.setdefault(kind[name], []).append(name)
    return out


def test_a_real_model_on_the_demo_is_labelled_real(real_db):
    views.clear_caches()
    by_kind = kinds(real_db)
    real = [n for k, names in by_kind.items() if k not in (SIMULATED_KIND, BASELINE_KIND) for n in names]
    simulated = by_kind[SIMULATED_KIND]
    assert len(real) == 1 and len(simulated) == 8
    label = views.data_label(views.Source.of(Store(real_db)), Selection(dataset="demo"))
    short = label.short()
    assert short == f"{len(simulated)} simulated respondents, 1 real model ({real[0]})"
    subtitle = exports.ChartContext("Leaderboard", "Macro average (%)", dataset="demo", data_label=short).subtitle()
    assert f"{len(simulated)} SIMULATED RESPONDENTS, 1 REAL MODEL" in subtitle
    banner = label.banner()
    assert f"{len(simulated)} of the {len(simulated) + 1} models here are simulated" in banner and real[0] in banner
    only_real = views.data_label(views.Source.of(Store(real_db)), Selection(dataset="demo", models=(real[0],)))
    assert only_real.short() is None and only_real.banner() is None  # the real model alone is not simulated


@pytest.mark.slow  # builds a report
def test_findings_and_report_count_the_same_models(real_db):
    from eduart_core.report import build_report

    views.clear_caches()
    by_kind = kinds(real_db)
    real = [n for k, names in by_kind.items() if k not in (SIMULATED_KIND, BASELINE_KIND) for n in names][0]
    found = views.key_findings(views.Source.of(Store(real_db)), Selection(dataset="demo"))
    assert all(f.headline.startswith("8 of 9 models simulated: ") for f in found)
    motivation = next(f for f in found if "justification" in f.headline)
    counted = re.search(r"of (\d+) models", motivation.headline.split(": ", 1)[1]).group(1)
    tested = re.search(r"across (\d+) models", motivation.detail).group(1)
    assert counted == tested == "8"  # the stub answered alike in both conditions: named, not counted
    assert f"not counted ({real})" in motivation.detail
    text = build_report(str(real_db), dataset="demo")
    banner = re.search(r"<p class='banner sim'>(.*?)</p>", text).group(1)
    assert "8 of the 9 models here are simulated" in banner and real in banner
    assert "these answers come from simulated models" not in banner
    assert "respondents</td><td>8 simulated respondents, 1 real model" in text  # provenance says it too


def test_the_chance_baseline_is_labelled_a_baseline(chance_db):
    views.clear_caches()
    src = views.Source.of(Store(chance_db))
    (chance,) = kinds(chance_db)[BASELINE_KIND]
    label = views.data_label(src, Selection(dataset="demo"))
    assert label.short() == f"8 simulated respondents, 1 baseline as reference ({chance})"
    assert label.banner().startswith("Simulated respondents: these answers come from simulated models")
    counted = views.data_label(src, Selection(dataset="demo", baselines=True))
    assert counted.short() == f"8 simulated respondents, 1 baseline counted as examinee ({chance})"
    assert "8 of the 9 models here are simulated" in counted.banner() and f"1 baseline ({chance})" in counted.banner()
    found = views.key_findings(src, Selection(dataset="demo"))  # the baseline is a reference, not an examinee
    assert all(f.headline.startswith("Simulated respondents: ") for f in found)


@pytest.mark.slow  # an AppTest page
def test_the_page_banner_names_the_kinds(real_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("EDUART_DB", str(real_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, at.exception[0].value
    warnings = " ".join(w.value for w in at.warning)
    assert "8 of the 9 models here are simulated" in warnings
    assert "these answers come from simulated models, not real ones" not in warnings
