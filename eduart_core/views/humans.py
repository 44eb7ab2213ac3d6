"""Views of the comparison of models and people (Overview, presentation mode, report) and of exam
sessions (the Sit-the-exam page).

The comparison always uses the answer-only condition (``default``): people answer without being
asked for a justification, so models are compared in the condition people sat. People come in
whatever the selection's ``humans`` switch says (the comparison switches them in itself); the
selection's model filter narrows the models only. The joint scale is the Psychometrics page's IRT
fit (`views.irt_abilities`, `views.irt_wright_map`, whichever model is the default there) over
models and people together, each model once (examinees = models of one condition).

No view here carries a name: people are their pseudonyms; names are for `humans.people.names`.
"""
from __future__ import annotations

import pandas as pd

from ..analysis import humans as people_analysis
from ..errors import UserError
from ..humans import story
from ..selection import Selection
from ..vocab import DEFAULT_CONDITION, EXAMINEES_MODELS, HUMAN_KIND
from ._base import EmptySelection, Source, cached, dataset_flags, human_models, scores

PERSON = "person"
MODEL = "model"


@cached(maxsize=8)
def _respondents(src: Source) -> pd.DataFrame:
    from ..store import humans as db

    return db.respondent_groups(src.store)


def _groups(src: Source) -> dict[str, str]:
    frame = _respondents(src)
    return dict(zip(frame["respondent"].astype(str), frame["human_group"].astype(str)))


def _simulated(src: Source, names: list[str]) -> bool:
    frame = _respondents(src)
    return bool(frame[frame["respondent"].isin(names)]["origin"].eq("simulated").any())


def comparison_selection(sel: Selection) -> Selection:
    """The selection the comparison reads: the answer-only condition (the one people sit)."""
    return sel.with_(condition=DEFAULT_CONDITION)


@cached(maxsize=16)
def _comparison(src: Source, sel: Selection) -> pd.DataFrame:
    """Model rows (the selection's models) and people rows (every person of the dataset) of the
    comparison; empty when the dataset has no people or only published aggregates."""
    if dataset_flags(src, sel.dataset).aggregate_only:
        return pd.DataFrame()
    names = human_models(src, sel.dataset)
    if not names:
        return pd.DataFrame()
    base = comparison_selection(sel)
    everything = scores(src, base.profile, base.dataset, base.reviewed)
    models = base.with_(humans=False).apply(everything)
    people = base.with_(humans=True, models=tuple(names)).apply(everything)
    people = people[(people["kind"] == HUMAN_KIND).to_numpy()]
    if people.empty or models.empty:
        return pd.DataFrame()
    return pd.concat([models, people], ignore_index=True)


@cached(maxsize=8)
def _panel(src: Source, sel: Selection) -> people_analysis.Panel:
    """The comparison's rows as score matrices, shared by the accuracy and the gap tables."""
    return people_analysis.panel(_comparison(src, sel), _groups(src))


def _label(frame: pd.DataFrame, src: Source, sel: Selection, rows: pd.DataFrame) -> pd.DataFrame:
    people = rows[(rows["kind"] == HUMAN_KIND).to_numpy()] if len(rows) else rows
    names = sorted(set(people["model"].astype(str))) if len(people) else []
    frame.attrs.update({"n_people": len(names), "n_items": int(people["item_id"].nunique()) if len(people) else 0,
                        "groups": sorted(set(_groups(src).get(n, "") for n in names) - {""}),
                        "simulated": _simulated(src, names),  # about the people (the models' banner is the page's)
                        "condition": DEFAULT_CONDITION})
    return frame


@cached(maxsize=16)
def human_accuracy(src: Source, sel: Selection) -> pd.DataFrame:
    """Per format x language (and per format, per language, all): each group of people with its two-way 95% interval beside each model's accuracy (Wilson 95%)."""
    rows = _comparison(src, sel)
    if rows.empty:
        return _label(pd.DataFrame(columns=people_analysis.ACCURACY_COLUMNS), src, sel, rows)
    return _label(people_analysis.accuracy_table(_panel(src, sel), _groups(src)), src, sel, rows)


@cached(maxsize=16)
def human_gap(src: Source, sel: Selection) -> pd.DataFrame:
    """Best model minus the median and the best person per group (all items, per format, per language), 95% paired t intervals on the items both answered (none where too few differ)."""
    rows = _comparison(src, sel)
    if rows.empty:
        frame = _label(pd.DataFrame(columns=people_analysis.GAP_COLUMNS), src, sel, rows)
        frame.attrs.update(headline="", sentences=[])
        return frame
    frame = _label(people_analysis.gap_table(_panel(src, sel), _groups(src)), src, sel, rows)
    frame.attrs.update(headline=story.headline(frame, simulated=frame.attrs["simulated"],
                                               level_with=_level_with(src, sel, frame)),
                       sentences=story.sentences(frame), method=people_analysis.GAP_INTERVAL_WORDS)
    return frame


def _level_with(src: Source, sel: Selection, gaps: pd.DataFrame) -> list[str]:
    """The models the leaderboard (answer-only condition) cannot tell from the highest-scoring model of
    the gaps: its tie group, less itself; empty when it is alone or the leaderboard has no groups."""
    from .results import leaderboard

    overall = gaps[gaps["scope"] == people_analysis.ALL]
    if overall.empty:
        return []
    best = str(overall["best_model"].iloc[0])
    try:
        board = leaderboard(src, comparison_selection(sel).with_(humans=False))
    except (EmptySelection, UserError):
        return []
    if "tie_group" not in board or board["tie_group"].isna().all() or best not in set(board["model"]):
        return []
    group = board.loc[board["model"] == best, "tie_group"].iloc[0]
    return [str(m) for m in board.loc[(board["tie_group"] == group) & (board["model"] != best), "model"]]


def _joint_selection(src: Source, sel: Selection) -> Selection:
    names = human_models(src, sel.dataset)
    chosen = (*sel.models, *names) if sel.models else ()
    return comparison_selection(sel).with_(humans=True, models=chosen)


def _who(frame: pd.DataFrame, column: str, src: Source) -> pd.DataFrame:
    groups = _groups(src)
    people = frame[column].astype(str).map(groups)
    return frame.assign(examinee_kind=people.notna().map({True: PERSON, False: MODEL}),
                        group=people.fillna(people_analysis.MODELS))


def human_ranking(src: Source, sel: Selection) -> pd.DataFrame:
    """Models and people on one ability scale (the default IRT model, answer-only condition): abilities with 95% intervals, ranks and ties."""
    from .irt import SUMMARY_ROW, irt_abilities

    if not human_models(src, sel.dataset):
        raise EmptySelection("No person has answered items of this dataset: nothing to put on one scale.")
    frame = irt_abilities(src, _joint_selection(src, sel), examinees=EXAMINEES_MODELS)
    if "row" in frame:  # a ranking of examinees: the fit's summary row stays in irt_abilities
        frame = frame[frame["row"] != SUMMARY_ROW]
    out = _who(frame, "model", src)
    out.attrs.update(frame.attrs)
    return out


def human_wright_map(src: Source, sel: Selection) -> pd.DataFrame:
    """Models, people and items on one logit scale (the Wright map of the joint fit)."""
    from .irt import irt_wright_map

    if not human_models(src, sel.dataset):
        raise EmptySelection("No person has answered items of this dataset: nothing to put on one scale.")
    frame = irt_wright_map(src, _joint_selection(src, sel), examinees=EXAMINEES_MODELS)
    out = _who(frame, "label", src)
    items = (out["kind"] == "item").to_numpy()
    out.loc[items, "examinee_kind"], out.loc[items, "group"] = None, None
    out.attrs.update(frame.attrs)
    return out


# ---------------------------------------------------------------- exam sessions

@cached(maxsize=8)
def exam_sessions(src: Source, sel: Selection, every: bool = False) -> pd.DataFrame:
    """Exam sessions of the dataset (option every=true: of every dataset): group, items per format and language, time limit, status, respondents started and finished."""
    from ..store import humans as db

    sessions = db.load_sessions(src.store, None if every else sel.dataset)
    progress = db.session_progress(src.store)
    counts = progress.groupby("session_id").agg(
        respondents=("respondent", "size"),
        finished=("status", lambda s: int((s == "finished").sum())),
        answers=("n_answered", "sum")) if len(progress) else pd.DataFrame(columns=["respondents", "finished", "answers"])
    out = sessions.join(counts, on="session_id")
    for column in ("respondents", "finished", "answers"):
        out[column] = pd.to_numeric(out[column], errors="coerce").fillna(0).astype(int)
    keep = ["session_id", "title", "dataset", "human_group", "per_cell", "formats", "languages", "time_limit_s",
            "status", "respondents", "finished", "answers", "actor_name", "created_at", "closed_at"]
    return out[keep].reset_index(drop=True)


@cached(maxsize=8)
def exam_progress(src: Source, sel: Selection, session: str = "") -> pd.DataFrame:
    """Per respondent (by pseudonym) of a session (option session=<id>; every session of the dataset by default): status, items answered, timed out, time."""
    from ..store import humans as db

    progress = db.session_progress(src.store, session or None)
    sessions = db.load_sessions(src.store, sel.dataset)
    progress = progress[progress["session_id"].isin(set(sessions["session_id"]))]
    return progress.reset_index(drop=True)


__all__ = ["comparison_selection", "exam_progress", "exam_sessions", "human_accuracy", "human_gap",
           "human_ranking", "human_wright_map"]
