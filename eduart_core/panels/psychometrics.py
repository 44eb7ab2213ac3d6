"""The panel of the Psychometrics page's classical test theory tab (and the report's Figure 1).

Examinees and the corrected total are the view's options (`views.item_statistics`); the caption
names the setting in words and says when it is the setting of a published table or figure.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .. import views
from ..charts import results as charts
from ..selection import Selection
from ._base import Shown, Words


def _load(src: views.Source, sel: Selection, frame: pd.DataFrame, options: Mapping[str, Any]) -> dict:
    """The test-level figures (mean p, n examinees) and the item texts (hovers)."""
    setting = {k: options[k] for k in ("examinees", "corrected") if k in options}
    return {"overall": views.reliability(src, sel, **setting).iloc[0], "texts": views.item_texts(src, sel.dataset),
            "setting": setting}


def _setting(shown: Shown) -> tuple[str, bool]:
    defaults = views.VIEWS["item_statistics"].options
    setting = {**defaults, **shown.extra["setting"]}
    return str(setting["examinees"]), bool(setting["corrected"])


def difficulty_words(shown: Shown) -> Words:
    """Each item's difficulty p against its discrimination r_pb, per format, with the format centres."""
    overall = shown.extra["overall"]
    n_ex = int(overall["n_examinees"])
    setting = views.setting_words(shown.sel, *_setting(shown))
    return Words(f"Each dot is an item: difficulty p (mean item score; right = easier) against discrimination r_pb; "
                 f"{setting}; {n_ex} examinees, {shown.scoring}. Dashed line r_pb = .30 (good), dotted .10 (poor), "
                 f"dash-dot the mean p ({overall['mean_p']:.2f}). The last panel shows each format's centre.",
                 f"difficulty p vs r_pb; {setting}", test="point-biserial correlation, Fisher-z 95% intervals in the table",
                 n=f"{n_ex} examinees, {len(shown.frame)} items")


def difficulty_figure(shown: Shown) -> go.Figure:
    return charts.figure_difficulty_discrimination(shown.frame, texts=shown.extra["texts"])
