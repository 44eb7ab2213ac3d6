"""Views of the Psychometrics page: item statistics (CTT), the published Tables 6-7, reliability.

Examinees are either the models in the selected condition or the model x condition pairs, and
r_pb uses the corrected (item left out) or uncorrected total: options name both. The publication
used two of the four combinations (Tables 6-7: model x condition pairs, corrected; Figure 1:
models in the default condition, uncorrected); `published_setting` says which one, if any, the
current setting reproduces, so a caption says "as published" only then. Difficulty p is the mean
item score (the proportion right when scores are 0/1); "right" in counts means full credit
(score = 1), over the same examinees as p. Baseline models are never examinees unless the
selection switches them in.
"""
from __future__ import annotations

import pandas as pd

from .. import analysis
from ..errors import UserError
from ..selection import Selection
from ..vocab import EXAMINEE_SETS, EXAMINEES_MODELS, EXAMINEES_MODELS_CONDITIONS, PUBLISHED_ITEM_SETTINGS
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
    """Difficulty p (mean item score: the proportion right when scores are 0/1) and discrimination r_pb (Fisher-z 95%) per item (options: examinees, corrected)."""
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


def published_setting(sel: Selection, examinees: str, corrected: bool) -> str | None:
    """'Tables 6-7' or 'Figure 1' when the setting is the publication's, else None.

    Tables 6-7: model x condition pairs, corrected total (any selected condition: both are used);
    Figure 1: models in the default condition, uncorrected total.
    """
    for name, setting in PUBLISHED_ITEM_SETTINGS.items():
        if setting["examinees"] == examinees and setting["corrected"] == bool(corrected) and \
                setting["condition"] in (None, sel.condition):
            return name
    return None


def setting_words(sel: Selection, examinees: str, corrected: bool) -> str:
    """The setting in words for captions, ending with the published setting it matches (if any)."""
    who = (EXAMINEE_SETS[EXAMINEES_MODELS_CONDITIONS] if examinees == EXAMINEES_MODELS_CONDITIONS
           else f"models in the {sel.condition} condition")
    total = "corrected total (item left out)" if corrected else "uncorrected total (item included)"
    name = published_setting(sel, examinees, corrected)
    words = f"examinees: {who.lower()}; r_pb with the {total}"
    if name:
        return words + f"; the setting of the published {name} (as published)"
    return words + "; not a published setting (Tables 6-7: model x condition pairs, corrected; " \
                   "Figure 1: models in the default condition, uncorrected)"


__all__ = ["EXAMINEES_MODELS", "difficulty_categories", "discrimination_by_format", "examinee_setting",
           "item_statistics", "published_setting", "reliability", "setting_words"]
