"""`views.point_board` (the Formats page's order) is the leaderboard's point columns, without its tests."""
from __future__ import annotations

import pandas as pd
import pytest

from eduart_core import views
from eduart_core.selection import Selection
from eduart_core.views.results import POINT_COLUMNS


@pytest.mark.parametrize("condition", ["default", "motivation"])
def test_the_point_board_is_the_leaderboards_point_columns(demo_db, condition):
    src = views.Source.of(str(demo_db))
    sel = Selection(condition=condition)
    views.clear_caches()
    board = views.point_board(src, sel).reset_index(drop=True)
    expected = views.leaderboard(src, sel)[POINT_COLUMNS].reset_index(drop=True)
    pd.testing.assert_frame_equal(board, expected, check_dtype=False)
