"""Psychometrics say what their numbers are.

What a reader relies on: p is described as the mean item score; "right" counts use full credit over
the same examinees as p; "as published" appears only in the publication's own settings (Tables
6-7: model x condition pairs, corrected; Figure 1: models in the default condition, uncorrected);
one Wilson function, with its z stated.
"""
from __future__ import annotations

import io
import re
import tokenize
from pathlib import Path

import pandas as pd
import pytest

from eduart_core import analysis, views
from eduart_core.selection import Selection
from eduart_core.vocab import (
    EXAMINEES_MODELS,
    EXAMINEES_MODELS_CONDITIONS,
    MOTIVATION_CONDITION,
    PUBLISHED_FIGURE_SETTING,
    PUBLISHED_TABLES_SETTING,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("condition, examinees, corrected, expected", [
    ("default", EXAMINEES_MODELS, False, PUBLISHED_FIGURE_SETTING),
    (MOTIVATION_CONDITION, EXAMINEES_MODELS, False, None),      # Figure 1 used the default condition
    ("default", EXAMINEES_MODELS, True, None),
    ("default", EXAMINEES_MODELS_CONDITIONS, True, PUBLISHED_TABLES_SETTING),
    (MOTIVATION_CONDITION, EXAMINEES_MODELS_CONDITIONS, True, PUBLISHED_TABLES_SETTING),  # both conditions anyway
    ("default", EXAMINEES_MODELS_CONDITIONS, False, None),
])
def test_published_setting_only_when_it_matches(condition, examinees, corrected, expected):
    sel = Selection(condition=condition)
    assert views.published_setting(sel, examinees, corrected) == expected
    words = views.setting_words(sel, examinees, corrected)
    assert ("as published" in words) == (expected is not None)


def test_models_right_means_full_credit_over_the_same_examinees_as_p():
    rows = []
    for model in ("A", "B", "C"):
        for item, score in (("all_full", 1.0), ("all_half", 0.5), ("mixed", 1.0 if model == "A" else 0.0)):
            rows.append({"model": model, "condition": "default", "item_id": item, "type": "true_false",
                         "language": "en", "has_image": False, "score": score})
    frame = pd.DataFrame(rows)
    table = analysis.item_overview(frame, analysis.item_statistics(frame)).set_index("item_id")
    assert table.loc["all_full", "models_right"] == 3 and table.loc["all_full", "p"] == 1.0
    assert table.loc["all_half", "models_right"] == 0 and table.loc["all_half", "p"] == 0.5  # partial is not right
    assert table.loc["mixed", "models_right"] == 1 and table.loc["mixed", "n_models"] == 3
    assert (table["models_right"] == table["n_models"]).eq(table["p"] == 1.0).all()


@pytest.mark.slow
def test_psychometrics_page_captions_follow_the_setting(demo_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.pages.test_app_pages import assert_clean
    from tests.reading import as_read

    monkeypatch.setenv("EDUART_DB", str(demo_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180).run()
    at.switch_page("pages/08_psychometrics.py").run()
    assert_clean(at)

    def text() -> str:
        return as_read(" ".join([m.value for m in at.markdown] + [c.value for c in at.caption]))

    assert "mean item score" in text() and "share of examinees who get an item right" not in text()
    assert "published Figure 1 (as published)" in text()  # default: models, default condition, uncorrected
    assert "Table 6, as published" not in text()
    at.radio(key="psy_examinees").set_value(EXAMINEES_MODELS_CONDITIONS).run()
    at.toggle(key="psy_corrected").set_value(True).run()
    assert_clean(at)
    assert "published Tables 6-7 (as published)" in text() and "Table 6, as published" in text()
    at.toggle(key="psy_corrected").set_value(False).run()
    assert_clean(at)
    assert "as published" not in text() and "not a published setting" in text()
    assert "full credit" in text()


def test_one_wilson_function_and_its_z_is_stated():
    """No module computes a Wilson interval itself: only analysis.intervals holds the formula."""
    package = ROOT / "eduart_core"
    home = package / "analysis" / "intervals.py"
    patterns = [r"proportion_ci\(", r"method\s*=\s*['\"]wilson", r"def \w*wilson", r"z\s*\*\s*z\s*/"]
    offenders = []
    for path in [*package.rglob("*.py"), ROOT / "app.py", *(ROOT / "pages").rglob("*.py")]:
        if path == home:
            continue
        text = path.read_text(encoding="utf-8")
        offenders += [f"{path.relative_to(ROOT)}: {p}" for p in patterns if re.search(p, text)]
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        offenders += [f"{path.relative_to(ROOT)}: the number 1.96 in code (use intervals.Z95)"
                      for t in tokens if t.type == tokenize.NUMBER and t.string == "1.96"]
    assert offenders == []
    assert analysis.Z95 == 1.96 and "z = 1.96" in analysis.WILSON_WORDS
    low, high = analysis.wilson_interval(0.957, 370)
    assert (round(100 * low, 1), round(100 * high, 1)) == (93.1, 97.3)  # the publication's check
