"""Views of the Psychometrics page beyond CTT: IRT (items, abilities, curves, Wright map),
distractors, DIF between the conditions, and paired contrasts of parallel item forms.

Examinees are chosen as in CTT (`vocab.EXAMINEE_SETS`: the models of the selected condition, or
the model x condition pairs); the IRT views default to one examinee per model in the selection's
condition (`vocab.IRT_DEFAULT_EXAMINEES`: a model's answers in two conditions are not two independent
examinees, and counting both makes item SEs too small) and say which condition in
``examinee_note``; the pairs only when asked for. DIF always uses the pairs (its groups are the conditions). Every
frame carries a ``panel_size`` column: the panel size each number rests on, so a script that
reads `show` output sees it as the page does; the IRT frames also carry ``irt_model`` and
``se_method`` columns. The IRT model option defaults to ``auto``: the
partial credit model for a dataset with partial-credit formats (each item's part count comes from
its format, `formats.score_parts`), else Rasch. The IRT fit is cached once per selection, model
and examinee set, and every IRT view (here and in `views.irt_checks`) reads that one fit.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ..analysis import irt as irt_analysis
from ..analysis.dif import DEFAULT_STRATA, dif_analysis
from ..analysis.distractors import distractor_analysis, option_keys, option_texts
from ..analysis.irt_curves import (
    ability_ranking,
    category_information_curves,
    information_at,
    information_curves,
    item_curve,
    wright_map,
)
from ..analysis.irt_pcm import fit_model, has_partial_credit
from ..analysis.parallel import parallel_contrasts as paired_contrasts
from ..errors import UserError
from ..formats import score_parts
from ..selection import Selection
from ..vocab import (
    DEFAULT_CONDITION,
    EXAMINEE_SETS,
    EXAMINEES_MODELS_CONDITIONS,
    IRT_AUTO,
    IRT_DEFAULT_EXAMINEES,
    IRT_INVALID_CHOICES,
    IRT_INVALID_EXCLUDE,
    IRT_INVALID_INCLUDE,
    IRT_MODELS,
    IRT_PCM,
    IRT_RASCH,
    IRT_SHORT_NAMES,
    MOTIVATION_CONDITION,
    OPTION_FORMATS,
)
from ._base import EmptySelection, Source, cached, items, selected_scores

#: The ``row`` of an examinee in `irt_abilities`, and of its closing summary row.
EXAMINEE_ROW, SUMMARY_ROW = "examinee", "summary"


def _examinee_rows(src: Source, sel: Selection, examinees: str) -> pd.DataFrame:
    if examinees not in EXAMINEE_SETS:
        raise UserError(f"unknown examinees {examinees!r}; use one of {', '.join(EXAMINEE_SETS)}")
    return selected_scores(src, sel, all_conditions=examinees == EXAMINEES_MODELS_CONDITIONS)


def _check_model(model: str) -> None:
    if model != IRT_AUTO and model not in IRT_MODELS:
        raise UserError(f"unknown IRT model {model!r}; use one of {', '.join([IRT_AUTO, *IRT_MODELS])}")


#: Provenance of an IRT fit that every row carries as a column (beside ``panel_size``), so a row of
#: `show` output read alone still says which model and which standard errors it comes from.
ROW_PROVENANCE = ("irt_model", "se_method")


def _labelled(frame: pd.DataFrame, panel_size: int, **extra: object) -> pd.DataFrame:
    """The frame with its panel size (and, for an IRT fit, `ROW_PROVENANCE`) as columns, and attrs, for
    pages, reports and `show`."""
    out = frame.copy()
    out["panel_size"] = int(panel_size)
    for name in ROW_PROVENANCE:
        if name in extra and name not in out.columns:
            out[name] = extra[name]
    out.attrs.update(frame.attrs)
    out.attrs.update(extra)
    out.attrs["n_examinees"] = int(panel_size)
    return out


@cached(maxsize=8)
def score_parts_of(src: Source, dataset: str) -> dict[str, int]:
    """item_id -> how many parts earn credit on their own (its format's `score_parts`)."""
    catalogue = items(src, dataset)
    return {str(i): score_parts(r) for i, r in zip(catalogue["item_id"], catalogue["record"]) if isinstance(r, dict)}


def irt_default_model(src: Source, sel: Selection) -> str:
    """The model ``auto`` stands for: the PCM when the dataset has partial-credit items, else Rasch."""
    return IRT_PCM if has_partial_credit(score_parts_of(src, sel.dataset)) else IRT_RASCH


def resolve_model(src: Source, sel: Selection, model: str) -> str:
    """The model a ``model`` option names (``auto``: `irt_default_model`)."""
    _check_model(model)
    return irt_default_model(src, sel) if model == IRT_AUTO else model


def _check_invalid(invalid: str) -> None:
    if invalid not in IRT_INVALID_CHOICES:
        raise UserError(f"unknown invalid {invalid!r}; use one of {', '.join(IRT_INVALID_CHOICES)}")


def mostly_invalid(src: Source, sel: Selection, examinees: str) -> pd.DataFrame:
    """The models above the leave-out share of invalid answers, over the conditions the examinee set covers
    (rows of `views.invalid_answers`)."""
    from .studies import invalid_answers

    table = invalid_answers(src, sel, all_conditions=examinees == EXAMINEES_MODELS_CONDITIONS)
    return table[table["irt_left_out"]].reset_index(drop=True)


@cached(maxsize=16)
def _fit(src: Source, sel: Selection, model: str, examinees: str, invalid: str) -> irt_analysis.IrtFit:
    rows = _examinee_rows(src, sel, examinees)
    if invalid == IRT_INVALID_EXCLUDE:
        left = set(mostly_invalid(src, sel, examinees)["model"])
        rows = rows[~rows["model"].isin(left)]
        if rows.empty:
            raise EmptySelection("Every model in the selection gives mostly invalid answers, so none is left for the "
                                 "IRT fit: include invalid answers to fit them anyway.")
    return fit_model(rows, model, score_parts_of(src, sel.dataset))


def irt_fit(src: Source, sel: Selection, model: str = IRT_AUTO, examinees: str = IRT_DEFAULT_EXAMINEES,
            invalid: str = IRT_INVALID_EXCLUDE) -> irt_analysis.IrtFit:
    """The fitted model behind every IRT view (not a table: the views below are its tables).

    ``invalid``: `vocab.IRT_INVALID_EXCLUDE` leaves out the models whose answers are mostly invalid
    (`mostly_invalid`): their ability would measure their output format and stretch the scale.
    """
    _check_invalid(invalid)
    return _fit(src, sel, resolve_model(src, sel, model), examinees, invalid)


def invalid_note(src: Source, sel: Selection, examinees: str, invalid: str) -> dict[str, Any]:
    """Which models the fit leaves out (or keeps) for their invalid answers, the rule, and one sentence saying so."""
    from ..analysis.answer_quality import INVALID_RULE

    mostly = mostly_invalid(src, sel, examinees)
    names = [str(m) for m in mostly["model"]]
    detail = "; ".join(mostly["sentence"])
    if not names:
        sentence = ""
    elif invalid == IRT_INVALID_EXCLUDE:
        sentence = (f"Left out of the fit for mostly invalid answers: {detail}. Rule: {INVALID_RULE} "
                    f"(option invalid={IRT_INVALID_INCLUDE} keeps them).")
    else:
        sentence = (f"Kept in the fit although their answers are mostly invalid (their abilities measure their "
                    f"output format): {detail}.")
    return {"invalid": invalid, "left_out": names if invalid == IRT_INVALID_EXCLUDE else [],
            "mostly_invalid": names, "leave_out_rule": INVALID_RULE, "invalid_note": sentence}


def examinee_note(sel: Selection, examinees: str) -> str:
    """Who the examinees of a fit are, in words, naming the condition whose answers were used."""
    if examinees == EXAMINEES_MODELS_CONDITIONS:
        return ("each model x condition pair, as asked for: a model counts once per condition, and its answer sets "
                "are not independent examinees, so item standard errors treat them as if they were")
    return f"one per model: its answers in the {sel.condition} condition (the selection's)"


def irt_panel(src: Source, sel: Selection, model: str = IRT_AUTO, examinees: str = IRT_DEFAULT_EXAMINEES,
              invalid: str = IRT_INVALID_EXCLUDE) -> dict[str, object]:
    """The fit's provenance plus the sentences every IRT view is shown with (model, panel and who its examinees are,
    SE method, why this model, the models left out for invalid answers)."""
    fit = irt_fit(src, sel, model, examinees, invalid)
    label = IRT_MODELS[fit.model]
    chosen = (f"{IRT_SHORT_NAMES[fit.model]}: the default for this dataset "
              + ("(it has partial-credit formats)" if fit.model == IRT_PCM else "(no item earns partial credit)")
              if model == IRT_AUTO else f"{IRT_SHORT_NAMES[fit.model]}: chosen")
    return {**fit.panel(), "model_label": label, "model_choice": chosen, "requested_model": model,
            "examinees": examinees,
            "examinee_condition": None if examinees == EXAMINEES_MODELS_CONDITIONS else sel.condition,
            "examinee_note": examinee_note(sel, examinees),
            "warning": irt_analysis.panel_warning(fit.n_examinees, fit.model),
            **invalid_note(src, sel, examinees, invalid)}


def irt_items(src: Source, sel: Selection, model: str = IRT_AUTO,
              examinees: str = IRT_DEFAULT_EXAMINEES, invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """Per item: difficulty (location) and SE, discrimination (2PL, GPCM), thresholds with SEs, information at the mean ability, status (options: model, examinees)."""
    fit = irt_fit(src, sel, model, examinees, invalid)
    mean_ability = float(fit.abilities["ability"].mean())
    frame = fit.items.assign(information_at_mean=information_at(fit.items, mean_ability))
    return _labelled(frame, fit.n_examinees, mean_ability=mean_ability, **irt_panel(src, sel, model, examinees, invalid))


def irt_abilities(src: Source, sel: Selection, model: str = IRT_AUTO,
                  examinees: str = IRT_DEFAULT_EXAMINEES, invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """Examinee abilities (EAP) with SEs and 95% intervals, ranked (ranks each could hold, ties); a last summary row gives the fitted ability SD.

    The summary row (``row`` = "summary") holds the mean ability, the mean SE and, in
    ``ability_sd``, the spread of abilities the model estimated (the SD of the latent distribution).
    """
    fit = irt_fit(src, sel, model, examinees, invalid)
    ranked = ability_ranking(fit.abilities).assign(row=EXAMINEE_ROW, ability_sd=np.nan)
    summary = {"row": SUMMARY_ROW, "examinee": f"All {len(ranked)} examinees", "ability": ranked["ability"].mean(),
               "ability_se": ranked["ability_se"].mean(), "ability_sd": fit.latent_sd}
    frame = pd.concat([ranked, pd.DataFrame([summary])], ignore_index=True)
    for column in ("rank", "rank_best", "rank_worst", "n_tied", "n_right", "n_items"):
        frame[column] = frame[column].astype("Int64")
    return _labelled(frame, fit.n_examinees, mean_ability_se=float(ranked["ability_se"].mean()),
                     sd_of_estimates=float(ranked["ability"].std(ddof=1)) if len(ranked) > 1 else float("nan"),
                     **irt_panel(src, sel, model, examinees, invalid))


def irt_information(src: Source, sel: Selection, model: str = IRT_AUTO,
                    examinees: str = IRT_DEFAULT_EXAMINEES, invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """Test information along the ability scale per format and for all items (information curves)."""
    fit = irt_fit(src, sel, model, examinees, invalid)
    return _labelled(information_curves(fit.items, fit.latent_sd), fit.n_examinees, **irt_panel(src, sel, model, examinees, invalid))


def irt_category_information(src: Source, sel: Selection, model: str = IRT_AUTO,
                             examinees: str = IRT_DEFAULT_EXAMINEES, invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """Per format and score level: the information carried through that level along the ability scale (category information)."""
    fit = irt_fit(src, sel, model, examinees, invalid)
    return _labelled(category_information_curves(fit.items, fit.latent_sd), fit.n_examinees,
                     **irt_panel(src, sel, model, examinees, invalid))


def irt_wright_map(src: Source, sel: Selection, model: str = IRT_AUTO,
                   examinees: str = IRT_DEFAULT_EXAMINEES, invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """Examinee abilities, item locations and category thresholds on one logit scale (Wright map)."""
    fit = irt_fit(src, sel, model, examinees, invalid)
    return _labelled(wright_map(fit.items, fit.abilities), fit.n_examinees, **irt_panel(src, sel, model, examinees, invalid))


def irt_item_curve(src: Source, sel: Selection, item: str = "", model: str = IRT_AUTO,
                   examinees: str = IRT_DEFAULT_EXAMINEES, invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """One item's characteristic curve, level probabilities (partial credit) and information (option item=<id>; the first fitted item by default)."""
    fit = irt_fit(src, sel, model, examinees, invalid)
    fitted = fit.items[fit.items["informative"]]
    if not item:
        if fitted.empty:
            raise EmptySelection("No item carries information in this selection.")
        item = str(fitted["item_id"].iloc[0])
    row = fit.items[fit.items["item_id"].astype(str) == str(item)]
    if row.empty:
        raise EmptySelection(f"No item {item!r} in the selection.")
    curve = item_curve(fit.items, item, fit.latent_sd)
    return _labelled(curve, fit.n_examinees, status=str(row["status"].iloc[0]), **irt_panel(src, sel, model, examinees, invalid))


@cached(maxsize=8)
def _choices(src: Source, dataset: str) -> pd.DataFrame:
    from ..store.choices import load_choices

    return load_choices(src.store, dataset, OPTION_FORMATS)


@cached(maxsize=16)
def distractors(src: Source, sel: Selection, examinees: str = EXAMINEES_MODELS_CONDITIONS) -> pd.DataFrame:
    """One row per option item and option (with its text): shares (all, upper and lower third), r_pb, flag (consensus_wrong, positive_distractor, non_functional)."""
    scores = _examinee_rows(src, sel, examinees)
    catalogue = items(src, sel.dataset)
    records = [(r.item_id, r.record) for r in catalogue.itertuples() if r.type in OPTION_FORMATS]
    table = distractor_analysis(scores, _choices(src, sel.dataset), option_keys(records))
    texts = option_texts(records)
    table.insert(table.columns.get_loc("option") + 1, "option_text",
                 [texts.get((str(i), str(o)), "") for i, o in zip(table["item_id"], table["option"])])
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


__all__ = ["EXAMINEE_ROW", "SUMMARY_ROW", "dif", "distractors", "irt_abilities",
           "examinee_note", "irt_category_information", "irt_default_model", "irt_fit", "irt_information", "irt_item_curve", "irt_items",
           "invalid_note", "irt_panel", "irt_wright_map", "mostly_invalid", "parallel_contrasts", "resolve_model", "score_parts_of"]
