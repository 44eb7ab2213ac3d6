"""Text columns as Python strings (`eduart_core.pandas_mode`): what the studio's processes rely on.

The app, the CLI and this suite hold pandas' ``str`` columns as Python strings because the pages'
many small steps are faster that way. A user relies on two things: the numbers are the ones
pandas' own default (Arrow strings) gives, and every entry point computes under the same setting,
so the page, `show` and a test print one table.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Views whose frames carry text columns built by the analysis (names, formats, words).
VIEWS = ("leaderboard", "motivation", "type_scores", "regression", "format_spread")


def _frames(src, sel) -> dict:
    from eduart_core import views

    views.clear_caches()
    return {name: views.run_view(name, src, sel) for name in VIEWS} | {
        "findings": [f.headline for f in views.key_findings(src, sel)]}


def test_python_strings_give_the_numbers_and_words_of_pandas_default(demo_db):
    from eduart_core import views
    from eduart_core.pandas_mode import STRING_STORAGE
    from eduart_core.selection import Selection

    assert pd.get_option("mode.string_storage") == STRING_STORAGE  # the suite runs as the app does (conftest)
    src, sel = views.Source.of(str(demo_db)), Selection(dataset="demo")
    ours = _frames(src, sel)
    with pd.option_context("mode.string_storage", "pyarrow"):
        default = _frames(src, sel)
    views.clear_caches()
    # the two runs held text differently (else this test compares a setting with itself)
    assert ours["leaderboard"]["model"].dtype.storage == "python"
    assert default["leaderboard"]["model"].dtype.storage == "pyarrow"
    assert ours.pop("findings") == default.pop("findings")
    for name, frame in ours.items():
        # the same values, column names and missing values; only the storage of a text column differs
        pd.testing.assert_frame_equal(frame.astype(object), default[name].astype(object), check_column_type=False,
                                      check_index_type=False, obj=name)


@pytest.mark.slow
def test_the_command_line_computes_under_the_same_setting(tmp_path):
    script = ("import pandas as pd\nfrom eduart_core import cli\n"
              f"cli.main(['stats', '--db', {str(tmp_path / 'none.duckdb')!r}])\n"
              "print(pd.get_option('mode.string_storage'))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "python", done.stderr
