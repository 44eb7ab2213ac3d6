"""A grading plan asked for a target interval width of 0, a negative or a non-finite width: one clear
line (exit 2 on the command line), nothing computed and nothing changed in the store."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from eduart_core.analysis import ppi
from eduart_core.cli import main
from eduart_core.errors import UserError
from tests.judge_fixtures import DATASET, written_store


def _answers() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    judge = rng.integers(0, 2, 40).astype(float)
    human = np.where(np.arange(40) < 12, judge, np.nan)
    return pd.DataFrame({"item_id": [f"i{k}" for k in range(40)], "model": "m", "condition": "default",
                         "type": "completion_open", "judge": judge, "human": human})


@pytest.mark.parametrize("width", [0.0, -0.1, float("nan"), float("inf")])
def test_the_analysis_refuses_a_target_width_that_is_not_a_positive_fraction(width):
    frame = _answers()
    before = frame.copy()
    with pytest.raises(UserError) as refused:
        ppi.grading_plan(frame, width)
    assert "\n" not in str(refused.value) and "target width must be a positive fraction" in str(refused.value)
    pd.testing.assert_frame_equal(frame, before)
    assert len(ppi.grading_plan(frame, 0.2))  # a positive width plans


@pytest.mark.parametrize("width", ["0", "-0.05"])
def test_show_grading_plan_with_a_width_of_0_or_less_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, width):
    store = written_store(tmp_path, monkeypatch)
    before = store.data_version()
    code = main(["show", "grading_plan", "--db", str(store.path), "--dataset", DATASET, "--option", f"width={width}"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "positive fraction" in err and f"not {width}" in err
    assert "Traceback" not in err and store.data_version() == before
