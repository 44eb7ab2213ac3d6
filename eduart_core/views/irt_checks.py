"""Views of the IRT tab's model checks: item fit, person fit (with invalid answers), the gain in
precision of the partial credit model over the 0.5 rule, and each answer's residual (the failure
explorer's "aberrant for this model" filter).

They read the one cached fit of `views.irt` (same selection, model and examinee options), so the
numbers agree with the item table, the abilities and the curves of the same tab.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis import answer_statuses
from ..analysis import irt_fit as fit_checks
from ..errors import UserError
from ..selection import Selection
from ..vocab import (
    IRT_AUTO,
    IRT_DEFAULT_EXAMINEES,
    IRT_INVALID_EXCLUDE,
    IRT_INVALID_INCLUDE,
    IRT_PCM,
    IRT_RASCH,
    IRT_SHORT_NAMES,
)
from ._base import EmptySelection, Source, cached, items
from .irt import _labelled, invalid_note, irt_default_model, irt_fit, irt_panel, resolve_model


@cached(maxsize=16)
def _item_fit(src: Source, sel: Selection, model: str, examinees: str, invalid: str) -> pd.DataFrame:
    return fit_checks.item_fit(irt_fit(src, sel, model, examinees, invalid))


def irt_item_fit(src: Source, sel: Selection, model: str = IRT_AUTO,
                 examinees: str = IRT_DEFAULT_EXAMINEES, invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """Per item: infit and outfit mean squares with t, S-X2 where the panel allows, and the misfit flag with its reason."""
    model = resolve_model(src, sel, model)
    table = _item_fit(src, sel, model, examinees, invalid)
    fit = irt_fit(src, sel, model, examinees, invalid)
    return _labelled(table, fit.n_examinees, **irt_panel(src, sel, model, examinees, invalid))


@cached(maxsize=4)
def _statuses(src: Source, dataset: str, profile: str) -> pd.DataFrame:
    """Every latest answer's status (ok, refused, unparseable, not an option) with its model and condition."""
    from ..store import studies as store_studies

    return answer_statuses(store_studies.load_answer_rows(src.store, dataset, profile), items(src, dataset))


@cached(maxsize=16)
def _person_fit(src: Source, sel: Selection, model: str, examinees: str, invalid: str) -> pd.DataFrame:
    fit = irt_fit(src, sel, model, examinees, invalid)
    table = fit_checks.person_fit(fit)
    statuses = _statuses(src, sel.dataset, sel.profile)
    statuses = statuses[statuses["item_id"].isin(set(fit.items["item_id"].astype(str)))]
    counts = fit_checks.invalid_counts(statuses)
    out = table.merge(counts, on=["model", "condition"], how="left")
    for column in ("n_answers", "n_refused", "n_unparseable", "n_not_an_option", "n_invalid"):
        out[column] = out[column].fillna(0).astype(int)
    out["invalid_warning"] = out["invalid_warning"].astype("boolean").fillna(False).astype(bool)
    out.attrs.update(table.attrs)
    return out


def irt_person_fit(src: Source, sel: Selection, model: str = IRT_AUTO,
                   examinees: str = IRT_DEFAULT_EXAMINEES, invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """Per examinee: lz (Zh), infit and outfit, the aberrant flag, the items that contribute most, and its invalid answers (warning above 5%)."""
    model = resolve_model(src, sel, model)
    table = _person_fit(src, sel, model, examinees, invalid)
    fit = irt_fit(src, sel, model, examinees, invalid)
    return _labelled(table, fit.n_examinees, invalid_rule=f"invalid: no option named, unreadable or refused; warning "
                                                          f"above {fit_checks.INVALID_WARN_ABOVE:.0%} of an "
                                                          "examinee's answers", **irt_panel(src, sel, model, examinees, invalid))


@cached(maxsize=8)
def irt_model_comparison(src: Source, sel: Selection, examinees: str = IRT_DEFAULT_EXAMINEES,
                         invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """The partial credit model against the 0.5 rule (Rasch) on the same examinees: ability SEs, fitted ability SD, SE gain."""
    models = [IRT_PCM, IRT_RASCH] if irt_default_model(src, sel) == IRT_PCM else [IRT_RASCH]
    rows = []
    for model in models:
        fit = irt_fit(src, sel, model, examinees, invalid)
        se = fit.abilities["ability_se"].dropna()
        rows.append({"model": model, "label": IRT_SHORT_NAMES[model], "n_examinees": fit.n_examinees,
                     "n_items_fitted": fit.n_items_fitted, "ability_sd": fit.latent_sd,
                     "mean_ability_se": float(se.mean()), "median_ability_se": float(se.median()),
                     "mean_se_per_sd": float(se.mean() / fit.latent_sd), "se_method": fit.se_method,
                     "rule": fit.rule})
    table = pd.DataFrame(rows)
    sentence = ("No item of this dataset earns partial credit: the partial credit model is the Rasch model here, "
                "so there is no gain to state.")
    if len(table) == 2:
        pcm, rasch = table.iloc[0], table.iloc[1]
        raw = 1 - pcm["mean_ability_se"] / rasch["mean_ability_se"]
        rel = 1 - pcm["mean_se_per_sd"] / rasch["mean_se_per_sd"]
        sentence = (f"Reading partial credit: mean ability SE {pcm['mean_ability_se']:.3f} logits under the PCM vs "
                    f"{rasch['mean_ability_se']:.3f} under the 0.5 rule (Rasch), {abs(raw):.0%} "
                    f"{'smaller' if raw >= 0 else 'larger'}. The two scales differ (fitted ability SD "
                    f"{pcm['ability_sd']:.2f} vs {rasch['ability_sd']:.2f} logits); relative to each fit's ability "
                    f"SD the SEs are {pcm['mean_se_per_sd']:.3f} vs {rasch['mean_se_per_sd']:.3f}, {abs(rel):.0%} "
                    f"{'smaller' if rel >= 0 else 'larger'} (the comparison that does not depend on the unit); "
                    f"{int(pcm['n_examinees'])} examinees.")
        table["se_gain"] = [raw, np.nan]
        table["se_gain_per_sd"] = [rel, np.nan]
    else:
        table["se_gain"] = np.nan
        table["se_gain_per_sd"] = np.nan
    table.attrs["sentence"] = sentence
    return _labelled(table, int(table["n_examinees"].max()))


def irt_residuals(src: Source, sel: Selection, examinee: str = "", model: str = IRT_AUTO,
                  examinees: str = IRT_DEFAULT_EXAMINEES, invalid: str = IRT_INVALID_EXCLUDE) -> pd.DataFrame:
    """Each answer of one examinee (option examinee=<model>; the most aberrant by default): level, expected level, z, unexpected."""
    model = resolve_model(src, sel, model)
    fit = irt_fit(src, sel, model, examinees, invalid)
    table = fit_checks.residuals(fit)
    if not examinee:
        people = _person_fit(src, sel, model, examinees, invalid)
        if people.empty:
            raise EmptySelection("No examinee in this selection.")
        examinee = str(people.sort_values("lz", kind="stable")["examinee"].iloc[0])
    mine = table[(table["examinee"] == examinee) | (table["model"] == examinee)]
    if mine.empty:
        if examinee in invalid_note(src, sel, examinees, invalid)["left_out"]:
            raise UserError(f"{examinee} is left out of the IRT fit for mostly invalid answers "
                            f"(option invalid={IRT_INVALID_INCLUDE} keeps it)")
        known = ", ".join(sorted(set(table["examinee"])))
        raise UserError(f"no examinee {examinee!r} in this fit; examinees: {known}")
    return _labelled(mine.reset_index(drop=True), fit.n_examinees, examinee=examinee,
                     residual_rule=fit_checks.RESIDUAL_RULE, **irt_panel(src, sel, model, examinees, invalid))


__all__ = ["irt_item_fit", "irt_model_comparison", "irt_person_fit", "irt_residuals"]
