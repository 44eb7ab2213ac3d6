"""Views of the Psychometrics page: item statistics (CTT), the published Tables 6-7, reliability.

Examinees are either the models in the selected condition (published Figure 1, uncorrected total)
or the model x condition pairs (published Tables 6-7, corrected total): the option names them.
"""
from __future__ import annotations

import pandas as pd

from .. import analysis
from ..errors import UserError
from ..selection import Selection
from ..vocab import EXAMINEE_SETS, EXAMINEES_MODELS, EXAMINEES_MODELS_CONDITIONS
from ._base import Source, cached, selected_scores


def _examinee_rows(src: Source, sel: Selection, examinees: str) -> pd.DataFrame:
    if examinees not in EXAMINEE_SETS:
        raise UserError(f"unknown examinees {examinees!r}; use one of {', '.join(EXAMINEE_SETS)}")
    return selected_scores(src, sel, all_conditions=examinees == EXAMINEES_MODELS_CONDITIONS)


@cached()
def _psychometrics(src: Source, sel: Selection, examinees: str, corrected: bool) -> tuple[pd.DataFrame, dict]:
    frame = _examinee_rows(src, sel, examinees)
    stats = analysis.item_statistics(frame, corrected=corrected)
    summary = analysis.item_statistics_summary(frame, corrected=corrected, stats_frame=stats)
    return stats, summary


def item_statistics(src: Source, sel: Selection, examinees: str = EXAMINEES_MODELS_CONDITIONS,
                    corrected: bool = True) -> pd.DataFrame:
    """Difficulty p and discrimination r_pb (Fisher-z 95%) per item (options: examinees, corrected)."""
    return _psychometrics(src, sel, examinees, corrected)[0]


def difficulty_categories(src: Source, sel: Selection, examinees: str = EXAMINEES_MODELS_CONDITIONS,
                          corrected: bool = True) -> pd.DataFrame:
    """Items per difficulty category (published Table 6)."""
    return _psychometrics(src, sel, examinees, corrected)[1]["difficulty"]


def discrimination_by_format(src: Source, sel: Selection, examinees: str = EXAMINEES_MODELS_CONDITIONS,
                             corrected: bool = True) -> pd.DataFrame:
    """Mean r_pb and good/fair/poor counts per format, last row all formats (published Table 7)."""
    return _psychometrics(src, sel, examinees, corrected)[1]["discrimination"]


def reliability(src: Source, sel: Selection, examinees: str = EXAMINEES_MODELS_CONDITIONS,
                corrected: bool = True) -> pd.DataFrame:
    """Test-level figures: mean p and r_pb, non-estimable items, KR-20/alpha with Feldt's 95% interval."""
    return _psychometrics(src, sel, examinees, corrected)[1]["overall"]


def examinee_setting(examinees: str) -> str:
    """The words for an examinee set (for captions)."""
    return EXAMINEE_SETS.get(examinees, examinees)


__all__ = ["EXAMINEES_MODELS", "difficulty_categories", "discrimination_by_format", "examinee_setting",
           "item_statistics", "reliability"]
