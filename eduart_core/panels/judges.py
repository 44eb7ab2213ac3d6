"""The panel of the Scoring profiles page's Judges section: judge-corrected scores.

The words say, per model, how much the human-graded slice moved the judge's macro score, and
claim a direction only where the shift's 95% interval excludes 0 (`analysis.ppi.shift_sentence`).
"""
from __future__ import annotations

import plotly.graph_objects as go

from ..analysis.ppi import MACRO, shift_sentence
from ..charts import judges as charts
from ._base import Shown, Words


def corrected_words(shown: Shown) -> Words:
    """Judge-only vs corrected macro score per model (prediction-powered inference) with 95% intervals."""
    frame = shown.frame
    macro = frame[frame["format"] == MACRO]
    judges = sorted(macro["judge"].unique())
    n_human, n_judge = int(macro["n_human"].sum()), int(macro["n_judge"].sum())
    caption = ("Judge only: the mean of the judge's marks over every answer. Corrected: that mean plus the mean "
               "difference human - judge on the human-graded answers (prediction-powered inference, Angelopoulos "
               "et al. 2023), with a normal 95% interval from both variances; macro = unweighted mean of the "
               f"formats; condition {shown.sel.condition}; n = {n_human} human-graded of {n_judge} judged answers. ")
    sentences = []
    for judge in judges:
        rows = macro[macro["judge"] == judge]
        prefix = f"{judge}: " if len(judges) > 1 else ""
        sentences.append(prefix + " ".join(shift_sentence(r) for _, r in rows.iterrows()))
    caption += " ".join(sentences)
    return Words(caption, "macro score, judge only and corrected (%)",
                 test="prediction-powered inference, normal 95% intervals",
                 n=f"{n_human} human-graded of {n_judge} judged answers")


def corrected_figure(shown: Shown) -> go.Figure:
    return charts.figure_judge_corrected(shown.frame)
