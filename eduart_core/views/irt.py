"""Views of the Psychometrics page beyond CTT: IRT (items, abilities, curves, Wright map),
distractors, DIF between the conditions, and paired contrasts of parallel item forms.

Examinees are chosen as in CTT (`vocab.EXAMINEE_SETS`: the models of the selected condition, or
the model x condition pairs); DIF always uses the pairs (its groups are the conditions). Every
frame carries an ``n_examinees`` column: the panel size each number rests on, so a script that
reads `show` output sees it as the page does. The IRT fit is cached once per selection, model and
examinee set, and every IRT view reads that one fit.
"""
from __future__ import annotations

import pandas as pd

from ..analysis import irt as irt_analysis
from ..analysis.dif import DEFAULT_STRATA, dif_analysis
from ..analysis.distractors import distractor_analysis, option_keys
from ..analysis.irt_curves import ability_ranking, information_at, information_curves, item_curve, wright_map
from ..analysis.parallel import parallel_contrasts as paired_contrasts
from ..errors import UserError
from ..selection import Selection
from ..vocab import (
    DEFAULT_CONDITION,
    EXAMINEE_SETS,
    EXAMINEES_MODELS_CONDITIONS,
    IRT_MODELS,
    IRT_RASCH,
    MOTIVATION_CONDITION,
    OPTION_FORMATS,
)
from ._base import EmptySelection, Source, cached, items, selected_scores


def _examinee_rows(src: Source, sel: Selection, examinees: str) -> pd.DataFrame:
    if examinees not in EXAMINEE_SETS:
        raise UserError(f"unknown examinees {examinees!r}; use one of {', '.join(EXAMINEE_SETS)}")
    return selected_scores(src, sel, all_conditions=examinees == EXAMINEES_MODELS_CONDITIONS)


def _check_model(model: str) -> None:
    if model not in IRT_MODELS:
        raise UserError(f"unknown IRT model {model!r}; use one of {', '.join(IRT_MODELS)}")


def _labelled(frame: pd.DataFrame, panel_size: int, **extra: object) -> pd.DataFrame:
    """The frame with its panel size as a column (and attrs) for pages, reports and `show`."""
    out = frame.copy()
    out["panel_size"] = int(panel_size)
    out.attrs.update(frame.attrs)
    out.attrs.update(extra)
    out.attrs["n_examinees"] = int(panel_size)
    return out


@cached(maxsize=16)
def irt_fit(src: Source, sel: Selection, model: str = IRT_RASCH,
            examinees: str = EXAMINEES_MODELS_CONDITIONS) -> irt_analysis.IrtFit:
    """The fitted model behind every IRT view (not a table: the views below are its tables)."""
    _check_model(model)
    return irt_analysis.fit_irt(_examinee_rows(src, sel, examinees), model)


def irt_items(src: Source, sel: Selection, model: str = IRT_RASCH,
              examinees: str = EXAMINEES_MODELS_CONDITIONS) -> pd.DataFrame:
    """Per item: difficulty and SE, discrimination (2PL), information at the mean ability, status (options: model, examinees)."""
    fit = irt_fit(src, sel, model, examinees)
    mean_ability = float(fit.abilities["ability"].mean())
    frame = fit.items.assign(information_at_mean=information_at(fit.items, mean_ability))
    return _labelled(frame, fit.n_examinees, mean_ability=mean_ability, **_panel(fit))


def _panel(fit: irt_analysis.IrtFit) -> dict[str, object]:
    """The fit's provenance plus the sentence every IRT view is shown with."""
    return {**fit.panel(), "warning": irt_analysis.panel_warning(fit.n_examinees)}


def irt_abilities(src: Source, sel: Selection, model: str = IRT_RASCH,
                  examinees: str = EXAMINEES_MODELS_CONDITIONS) -> pd.DataFrame:
    """Examinee abilities (EAP) with 95% intervals, ranked, with the ranks each could hold and who it ties with."""
    fit = irt_fit(src, sel, model, examinees)
    return _labelled(ability_ranking(fit.abilities), fit.n_examinees, **_panel(fit))


def irt_information(src: Source, sel: Selection, model: str = IRT_RASCH,
                    examinees: str = EXAMINEES_MODELS_CONDITIONS) -> pd.DataFrame:
    """Test information along the ability scale per format and for all items (information curves)."""
    fit = irt_fit(src, sel, model, examinees)
    return _labelled(information_curves(fit.items, fit.latent_sd), fit.n_examinees, **_panel(fit))


def irt_wright_map(src: Source, sel: Selection, model: str = IRT_RASCH,
                   examinees: str = EXAMINEES_MODELS_CONDITIONS) -> pd.DataFrame:
    """Examinee abilities and item difficulties on one logit scale (Wright map)."""
    fit = irt_fit(src, sel, model, examinees)
    return _labelled(wright_map(fit.items, fit.abilities), fit.n_examinees, **_panel(fit))


def irt_item_curve(src: Source, sel: Selection, item: str = "", model: str = IRT_RASCH,
                   examinees: str = EXAMINEES_MODELS_CONDITIONS) -> pd.DataFrame:
    """One item's characteristic curve and information (option item=<id>; the first fitted item by default)."""
    fit = irt_fit(src, sel, model, examinees)
    fitted = fit.items[fit.items["informative"]]
    if not item:
        if fitted.empty:
            raise EmptySelection("No item carries information in this selection.")
        item = str(fitted["item_id"].iloc[0])
    row = fit.items[fit.items["item_id"].astype(str) == str(item)]
    if row.empty:
        raise EmptySelection(f"No item {item!r} in the selection.")
    curve = item_curve(fit.items, item, fit.latent_sd)
    return _labelled(curve, fit.n_examinees, status=str(row["status"].iloc[0]), **_panel(fit))


@cached(maxsize=8)
def _choices(src: Source, dataset: str) -> pd.DataFrame:
    from ..store.choices import load_choices

    return load_choices(src.store, dataset, OPTION_FORMATS)


@cached(maxsize=16)
def distractors(src: Source, sel: Selection, examinees: str = EXAMINEES_MODELS_CONDITIONS) -> pd.DataFrame:
    """One row per option item and option: shares (all, upper and lower third), r_pb, flag (consensus_wrong, positive_distractor, non_functional)."""
    scores = _examinee_rows(src, sel, examinees)
    catalogue = items(src, sel.dataset)
    keys = option_keys((r.item_id, r.record) for r in catalogue.itertuples() if r.type in OPTION_FORMATS)
    table = distractor_analysis(scores, _choices(src, sel.dataset), keys)
    return _labelled(table, table.attrs["n_examinees"])


@cached(maxsize=16)
def dif(src: Source, sel: Selection, strata: int = DEFAULT_STRATA) -> pd.DataFrame:
    """DIF between the conditions per item: Mantel-Haenszel (ETS A/B/C) and logistic regression (uniform, non-uniform; change in R2)."""
    scores = selected_scores(src, sel, all_conditions=True)
    table = dif_analysis(scores, reference=DEFAULT_CONDITION, focal=MOTIVATION_CONDITION, strata=strata)
    if table.attrs["n_reference"] == 0 or table.attrs["n_focal"] == 0:
        raise EmptySelection("DIF compares the two conditions: the selection needs answers in both.")
    return _labelled(table, table.attrs["n_examinees"])


@cached(maxsize=16)
def parallel_contrasts(src: Source, sel: Selection, examinees: str = EXAMINEES_MODELS_CONDITIONS) -> pd.DataFrame:
    """Pairs of parallel item forms (parallel_of): within-model score differences, t interval, sign test."""
    scores = _examinee_rows(src, sel, examinees)
    table = paired_contrasts(scores, items(src, sel.dataset))
    return _labelled(table, table.attrs["n_examinees"])


__all__ = ["dif", "distractors", "irt_abilities", "irt_fit", "irt_information", "irt_item_curve", "irt_items",
           "irt_wright_map", "parallel_contrasts"]
