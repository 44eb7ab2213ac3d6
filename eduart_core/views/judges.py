"""Views of judge profiles and their calibration (Scoring profiles page, Judges section; the report).

Which answers count: the selection's (models, formats, languages, image filter, condition; baselines
only when switched in), as for every other view; the judges are every judge profile stored for the
dataset, whatever profile the selection scores with. The gate's thresholds are the dataset's (set
with ``judge-gate``; defaults in ``vocab``) unless the view's options give others, and every row
carries the thresholds it was judged by.

`profile_warning` is the one place that decides whether numbers under a judge profile need a
warning (its judge has not passed on this dataset): pages, exports, ``show`` and the report ask it.
"""
from __future__ import annotations

from typing import Any

import pandas as pd

from ..analysis import judges as judge_stats
from ..errors import UserError
from ..selection import Selection
from ..vocab import JUDGE_METHOD, is_judge_profile
from ._base import EmptySelection, Source, cached, score_table, selected_scores


@cached(maxsize=16)
def profile_choices(src: Source, dataset: str) -> tuple:
    """The profiles a dataset offers (built-in rules, then its judge profiles), as `profiles.ProfileInfo`."""
    from .. import profiles

    return tuple(profiles.available(src.store, dataset))


def profile_label(src: Source, sel: Selection) -> str:
    """'profile strict', or a judge profile with its version (captions, export subtitles)."""
    from .. import profiles

    info = profiles.find(list(profile_choices(src, sel.dataset)), sel.profile)
    return profiles.describe(info) if info is not None else f"profile {sel.profile}"


@cached(maxsize=16)
def _inputs(src: Source, dataset: str) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame, dict]:
    """(grades with max_points, judgements of current versions, judge profiles, rubrics by name)."""
    from ..judges.rubric import load_rubric
    from ..store.grades import load_grades
    from ..store.judges import load_judge_profiles, load_judgements

    stored = load_judge_profiles(src.store, dataset)
    judgements = load_judgements(src.store, dataset)
    grades = load_grades(src.store, dataset)
    rubrics = {}
    for name in sorted(set(stored["rubric"]) | set(grades["rubric"])):
        try:
            rubrics[name] = load_rubric(name)
        except UserError:
            continue  # a rubric file that is gone: its grades cannot be placed on a scale
    maxima = {(r, c.id): float(c.points) for r, rubric in rubrics.items() for c in rubric.criteria}
    grades = grades.assign(max_points=[maxima.get((r, c)) for r, c in zip(grades["rubric"], grades["criterion"])])
    grades = grades[grades["max_points"].notna()]
    return grades, judgements, stored, rubrics


def _answers(src: Source, sel: Selection, all_conditions: bool = False) -> pd.DataFrame:
    """The answers in the selection (item_id, model key, condition, type, language)."""
    table = score_table(src, sel.dataset, sel.reviewed)
    keys = table[["model", "condition", "item_id", "type", "language", "has_image", "model_key", "kind"]]
    chosen = sel.apply(keys, all_conditions=all_conditions)
    return pd.DataFrame({"item_id": chosen["item_id"].astype(str), "model": chosen["model_key"].astype(str),
                         "condition": chosen["condition"].astype(str), "type": chosen["type"].astype(str),
                         "language": chosen["language"].astype(str)})


def _float(value: Any, default: float, name: str) -> float:
    if value in (None, ""):
        return float(default)
    try:
        return float(value)
    except (TypeError, ValueError):
        raise UserError(f"option {name} takes a number, not {value!r}") from None


def _gate(src: Source, dataset: str, min_alpha: object = "", max_severity: object = "",
          min_human_alpha: object = "") -> dict:
    from ..store.judges import gate_settings

    stored = gate_settings(src.store, dataset)
    return {"min_alpha": _float(min_alpha, stored["min_alpha"], "min_alpha"),
            "max_severity": _float(max_severity, stored["max_severity"], "max_severity"),
            "min_human_alpha": _float(min_human_alpha, stored["min_human_alpha"], "min_human_alpha")}


def _no_judge(src: Source, dataset: str, advice: str = "") -> EmptySelection:
    """Why a judge view is empty for ``dataset``, naming the datasets a judge has scored (if any)."""
    from ..store.judges import load_judge_profiles

    others = sorted(set(load_judge_profiles(src.store)["dataset"].astype(str)) - {dataset})
    elsewhere = f"judges have scored {', '.join(others)} (--dataset)" if others else advice
    return EmptySelection(f"No judge has scored dataset '{dataset}' yet" + (f": {elsewhere}." if elsewhere else "."))


@cached(maxsize=16)
def _calibration(src: Source, sel: Selection, by: str, gate: tuple, n_boot: int,
                 all_conditions: bool = False) -> pd.DataFrame:
    grades, judgements, stored, _ = _inputs(src, sel.dataset)
    if stored.empty:
        raise _no_judge(src, sel.dataset, "run `python -m eduart_core judge --judge MODEL --rubric NAME` first")
    answers = _answers(src, sel, all_conditions)
    parts = []
    for rubric, group in stored.groupby("rubric"):
        frame = judge_stats.calibration(grades[grades["rubric"] == rubric],
                                            judgements[judgements["profile"].isin(group["profile"])], answers, group,
                                            by=by, n_boot=n_boot, **dict(gate))
        parts.append(frame.assign(rubric=rubric))
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if out.empty:
        raise EmptySelection("No judged answer matches the current selection: widen the filters.")
    return out


def judge_calibration(src: Source, sel: Selection, by: str = "judge", min_alpha: str = "", max_severity: str = "",
                      min_human_alpha: str = "", n_boot: int = 1000) -> pd.DataFrame:
    """Each judge against blind human grades: n, human and judge alpha with 95% intervals, kappa, severity, probes, pass."""
    gate = _gate(src, sel.dataset, min_alpha, max_severity, min_human_alpha)
    return _calibration(src, sel, by, tuple(sorted(gate.items())), int(n_boot))


def judge_confusion(src: Source, sel: Selection, judge: str = "", criterion: str = "") -> pd.DataFrame:
    """Settled human mark x judge mark counts per judge and criterion (options judge, criterion)."""
    grades, judgements, stored, _ = _inputs(src, sel.dataset)
    if stored.empty:
        raise _no_judge(src, sel.dataset)
    answers = _answers(src, sel)
    parts = [judge_stats.confusion(grades[grades["rubric"] == rubric],
                                       judgements[judgements["profile"].isin(group["profile"])], answers)
             for rubric, group in stored.groupby("rubric")]
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=judge_stats.CONFUSION_COLUMNS)
    if judge:
        frame = frame[frame["judge"] == judge]
    if criterion:
        frame = frame[frame["criterion"] == criterion]
    if frame.empty:
        raise EmptySelection("No judged answer with a settled human grade matches the selection.")
    return frame.reset_index(drop=True)


@cached(maxsize=16)
def _severity(src: Source, sel: Selection, criterion: str) -> pd.DataFrame:
    grades, judgements, stored, rubrics = _inputs(src, sel.dataset)
    if stored.empty:
        raise _no_judge(src, sel.dataset)
    answers = _answers(src, sel)
    parts = []
    for rubric, group in stored.groupby("rubric"):
        chosen = judgements[judgements["profile"].isin(group["profile"])]
        criteria: set[str] | None
        if criterion:
            criteria = {criterion}
        else:
            criteria = {c.id for c in rubrics[rubric].criteria if c.method == JUDGE_METHOD} if rubric in rubrics \
                else None
        table = judge_stats.severity_table(grades[grades["rubric"] == rubric], chosen, answers, criteria)
        parts.append(table.assign(rubric=rubric))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
    if frame.empty:
        raise EmptySelection("No graded and judged answer matches the selection.")
    return frame


def judge_severity(src: Source, sel: Selection, criterion: str = "") -> pd.DataFrame:
    """Every grader's and judge's severity in logits (many-facet Rasch, relative to the graders' mean) with 95% intervals."""
    return _severity(src, sel, criterion)


def judge_profiles(src: Source, sel: Selection) -> pd.DataFrame:
    """The dataset's judge profiles: version, answers scored, who ran them, and whether the judge passed the gate."""
    _, _, stored, _ = _inputs(src, sel.dataset)
    if stored.empty:
        raise _no_judge(src, sel.dataset)
    verdicts = judge_gate(src, sel.dataset)
    out = stored[["profile", "judge_name", "version", "rubric", "n_scored", "simulated", "created_by",
                  "updated_at"]].copy()
    out["passes"] = [verdicts.get(p, (False, ""))[0] for p in out["profile"]]
    out["gate"] = [verdicts.get(p, (False, "not calibrated"))[1] for p in out["profile"]]
    return out.reset_index(drop=True)


def grading_progress(src: Source, sel: Selection) -> pd.DataFrame:
    """Human grading so far per rubric: answers graded, graders, criteria agreed, adjudicated, pending (counts only)."""
    grades, _, _, _ = _inputs(src, sel.dataset)
    answers = _answers(src, sel)
    frame = judge_stats.grading_summary(grades, answers)
    if frame.empty:
        raise EmptySelection(f"No human grades in dataset '{sel.dataset}' yet: import some with "
                             "`python -m eduart_core grades-import FILE.jsonl`.")
    return frame


# ---------------------------------------------------------------- the warning

@cached(maxsize=16)
def judge_gate(src: Source, dataset: str) -> dict[str, tuple[bool, str]]:
    """profile -> (passes, reason) on the whole dataset (every answer, every condition) with its gate."""
    sel = Selection(dataset=dataset, baselines=False)
    try:
        frame = _calibration(src, sel, "judge", tuple(sorted(_gate(src, dataset).items())), 1000, True)
    except EmptySelection:
        return {}
    return {str(r.judge): (bool(r.passes), str(r.reason)) for r in frame.itertuples(index=False)}


def profile_warning(src: Source, sel: Selection) -> str | None:
    """The warning numbers under the selected profile must carry, or None (built-in profiles, passed judges)."""
    if not is_judge_profile(sel.profile):
        return None
    passes, reason = judge_gate(src, sel.dataset).get(sel.profile, (False, "no human grades to calibrate it "
                                                                             "against yet"))
    if passes:
        return None
    return (f"Judge not calibrated: {sel.profile} has not passed calibration against blind human grades on dataset "
            f"{sel.dataset} ({reason}). Numbers under this profile are not validated.")


# ---------------------------------------------------------------- judge-corrected scores (PPI)

def _judge_profiles_for(src: Source, sel: Selection, judge: str) -> list[str]:
    """The judge profiles a corrected table covers: the option, else the selected judge profile, else all."""
    _, _, stored, _ = _inputs(src, sel.dataset)
    if stored.empty:
        raise _no_judge(src, sel.dataset)
    known = sorted(stored["profile"].astype(str))
    chosen = judge or (sel.profile if is_judge_profile(sel.profile) else "")
    if chosen and chosen not in known:
        raise UserError(f"judge {chosen!r} has not scored dataset {sel.dataset}; judges: {', '.join(known)}")
    return [chosen] if chosen else known


@cached(maxsize=16)
def _corrected_answers(src: Source, sel: Selection, profile: str) -> pd.DataFrame:
    """One row per answer the profile scored in the selection: model (display name), condition, type,
    judge (the profile's score) and human (the settled human score on the same criteria, NaN if not graded)."""
    from ..analysis import ppi

    grades, judgements, stored, _ = _inputs(src, sel.dataset)
    scored = selected_scores(src, sel.with_(profile=profile))
    rubric = str(stored.loc[stored["profile"] == profile, "rubric"].iloc[0])
    humans = ppi.human_scores(grades[grades["rubric"] == rubric], judgements[judgements["profile"] == profile])
    keys = pd.DataFrame({"item_id": scored["item_id"].astype(str), "model": scored["model_key"].astype(str),
                         "condition": scored["condition"].astype(str)})
    merged = keys.merge(humans, on=["item_id", "model", "condition"], how="left")
    judge = scored["score"].to_numpy(dtype=float)
    # the residual pairs the human score with the profile's own score of that answer (the leaderboard's number)
    return pd.DataFrame({"item_id": keys["item_id"].to_numpy(), "model": scored["model"].astype(str).to_numpy(),
                         "condition": keys["condition"].to_numpy(),
                         "type": scored["type"].astype(str).to_numpy(), "judge": judge,
                         "human": merged["human"].to_numpy(dtype=float)})


def corrected_cells(src: Source, sel: Selection, profile: str) -> pd.DataFrame:
    """Per model, condition and format under one judge profile: the judge-only and corrected means with
    their variances (``analysis.ppi.corrected_cells``): what a leaderboard under a judge profile reads."""
    from ..analysis import ppi

    return ppi.corrected_cells(_corrected_answers(src, sel, profile))


def judge_corrected(src: Source, sel: Selection, judge: str = "") -> pd.DataFrame:
    """Judge-corrected scores (prediction-powered inference): judge only vs corrected with 95% intervals per model and format."""
    from ..analysis import ppi

    parts = []
    for profile in _judge_profiles_for(src, sel, judge):
        table = ppi.judge_corrected(_corrected_answers(src, sel, profile))
        parts.append(table.assign(judge=profile))
    frame = pd.concat(parts, ignore_index=True)
    frame = frame[["judge", *[c for c in frame.columns if c != "judge"]]]
    if frame["condition"].nunique() == 1:
        frame = frame.drop(columns="condition")
    return frame.reset_index(drop=True)


def grading_plan(src: Source, sel: Selection, width: str = "0.10", judge: str = "", answers: str = "") -> pd.DataFrame:
    """Which answers to grade next: per model and format, how many to grade for a corrected macro interval of full width `width`."""
    from ..analysis import ppi

    target = _float(width, 0.10, "width")
    if target <= 0:
        raise UserError(f"option width is the full width of the 95% interval the corrected scores should reach, a "
                        f"positive fraction (0.10 = 10 percentage points), not {width}")
    parts = []
    for profile in _judge_profiles_for(src, sel, judge):
        frame = _corrected_answers(src, sel, profile)
        plan = ppi.grading_plan(frame, target)
        if str(answers).lower() in ("yes", "true", "1"):
            drawn = ppi.draw_answers(frame, plan)
            parts.append(pd.DataFrame({"judge": profile, "model": drawn["model"], "condition": drawn["condition"],
                                       "format": drawn["type"], "item_id": drawn["item_id"]}))
        else:
            parts.append(plan.assign(judge=profile))
    frame = pd.concat(parts, ignore_index=True)
    frame = frame[["judge", *[c for c in frame.columns if c != "judge"]]]
    if frame.empty:
        raise EmptySelection("Nothing to grade next: the plan reaches the target with the answers already graded.")
    return frame.reset_index(drop=True)
