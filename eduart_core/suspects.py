"""The suspect-key queue: items the statistics flag as likely answer-key errors, for review.

Why: negative discrimination, a wrong option the stronger models agree on, an item whose answers
do not follow ability as the IRT model expects, or an item every model fails often means the key
is wrong, not the models. The queue brings those items to the
art historian, who sees the item, its key, every model's answer and rationale, and either
confirms the key (its current flags are cleared; the decision is kept) or corrects it (a new
item version: every stored response is re-scored and every analysis updates).

Flags come from the registered sources of ``analysis.keyflags`` (computed on read, so they never
go stale) and from flags other analyses stored with ``store.suspects.raise_flags``. A flag is tied
to the item version it was computed on; a confirmation clears the flags its reviewer saw on that
version (a new reason raised later enters the queue again).
"""
from __future__ import annotations

import copy
import logging

import pandas as pd

from .analysis.ctt import item_statistics
from .analysis.distractors import chosen_options
from .analysis.keyflags import FlagContext, key_flags, key_signal, option_shares
from .errors import UserError
from .formats import score_parts
from .scoring.item_writes import save_item_version
from .store import Store
from .store.items import get_item, item_history, load_items
from .store.scores import load_responses, load_scores
from .store.suspects import add_key_review, load_choices, load_key_reviews, load_suspect_inputs
from .team import KEY_REVIEW, Identity, as_identity
from .vocab import DEFAULT_PROFILE, HUMAN_KIND, OPTION_FORMATS

logger = logging.getLogger(__name__)

FLAG_FRAME_COLUMNS = ["item_id", "item_version", "source", "reason", "detail", "key"]
QUEUE_COLUMNS = ["item_id", "type", "version", "flags", "reasons", "sources", "details", "p", "r_pb", "n_examinees",
                 "signal", "evidence"]
KEY_REVIEW_ORIGIN = "key-review"


def _models_only(scores: pd.DataFrame) -> pd.DataFrame:
    """The long frame without people (kind human): key flags are about how the models answer, and the
    queue is the same whether or not people sat the exam."""
    if "kind" not in scores:
        return scores
    keep = (scores["kind"] != HUMAN_KIND).to_numpy()
    return scores if keep.all() else scores[keep]


def _context(choices: pd.DataFrame, items: pd.DataFrame, stats: pd.DataFrame | None = None,
             judge_marks: pd.DataFrame | None = None) -> FlagContext:
    choices = choices.assign(ids=pd.Series([chosen_options(a) for a in choices["answers"]], dtype=object,
                                           index=choices.index))
    keys = {str(i): set(chosen_options(r.get("answers"))) for i, r in zip(items["item_id"], items["record"])
            if isinstance(r, dict) and r.get("type") in OPTION_FORMATS}
    parts = {str(i): score_parts(r) for i, r in zip(items["item_id"], items["record"]) if isinstance(r, dict)}
    context = FlagContext(choices=choices, keys=keys, stats=stats, parts=parts)
    if judge_marks is not None:
        context.judge_marks = judge_marks
    return context


def judge_human_marks(store: Store, dataset: str) -> pd.DataFrame:
    """Judged answers with a settled human grade: item_id, judge, human (fractions of the criterion's
    maximum; each judge profile and criterion a row), for the judge-human disagreement signal."""
    from .analysis.judges import UNIT_KEYS, human_reference, judge_marks
    from .store.grades import load_grades
    from .store.judges import load_judgements

    empty = pd.DataFrame(columns=["item_id", "judge", "human"])
    grades = load_grades(store, dataset)
    if grades.empty:
        return empty
    reference = human_reference(grades)
    reference = reference[reference["settled"]]
    marks = judge_marks(load_judgements(store, dataset))
    if reference.empty or marks.empty:
        return empty
    both = marks.merge(reference[[*UNIT_KEYS, "human"]], on=UNIT_KEYS)
    both = both[both["max_points"].astype(float) > 0]
    top = both["max_points"].astype(float)
    return pd.DataFrame({"item_id": both["item_id"].astype(str), "judge": both["judge"].astype(float) / top,
                         "human": both["human"].astype(float) / top})


def suspect_flags(store: Store, dataset: str, profile: str = DEFAULT_PROFILE, overrides: bool = True,
                  scores: pd.DataFrame | None = None, items: pd.DataFrame | None = None,
                  stats: pd.DataFrame | None = None, inputs: tuple | None = None) -> pd.DataFrame:
    """Every current flag of the dataset's current item versions, computed and stored.

    ``scores`` (the long frame of every model and condition), ``items`` (``load_items``),
    ``stats`` (their ``item_statistics``) and ``inputs`` (``load_suspect_inputs``) may be passed
    when the caller has them (cached views, the queue).
    """
    items = items if items is not None else load_items(store, dataset)
    versions = dict(zip(items["item_id"].astype(str), items["version"].astype(int)))
    scores = _models_only(scores if scores is not None else load_scores(store, profile, dataset, overrides=overrides))
    choices, stored, _ = inputs or load_suspect_inputs(store, dataset, OPTION_FORMATS, FlagContext().condition)
    choices = choices[choices["model"].isin(set(scores["model"]))]  # the examinees of the scores only
    context = _context(choices, items, stats, judge_human_marks(store, dataset))
    computed = key_flags(scores, context)
    computed["item_version"] = computed["item_id"].map(versions)
    current = pd.Series([versions.get(str(i)) == int(v) for i, v in zip(stored["item_id"], stored["item_version"])],
                        index=stored.index, dtype=bool)
    stored = stored.loc[current]
    flags = pd.concat([computed, stored[["item_id", "item_version", "source", "reason", "detail"]]],
                      ignore_index=True)
    flags = flags.dropna(subset=["item_version"])
    flags["item_version"] = flags["item_version"].astype(int)
    flags["key"] = flags["source"] + "|" + flags["reason"]
    out = flags.drop_duplicates(["item_id", "item_version", "key"]).reset_index(drop=True)[FLAG_FRAME_COLUMNS]
    out.attrs["signal"] = key_signal(scores, context, sorted(versions)) if len(scores) else None
    return out


def _cleared(reviews: pd.DataFrame) -> set[tuple[str, int, str]]:
    """(item_id, version, flag key) a reviewer confirmed."""
    out = set()
    for row in reviews[reviews["action"] == "confirm"].to_dict("records"):
        for key in row["flags"] or []:
            out.add((str(row["item_id"]), int(row["item_version"]), key))
    return out


def suspect_queue(store: Store, dataset: str, profile: str = DEFAULT_PROFILE, overrides: bool = True,
                  scores: pd.DataFrame | None = None, items: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per flagged item still waiting for a key review, with its flags and statistics
    (``scores``/``items``: the frames when the caller has them; see ``suspect_flags``)."""
    scores = _models_only(scores if scores is not None else load_scores(store, profile, dataset, overrides=overrides))
    if scores.empty:
        return pd.DataFrame(columns=QUEUE_COLUMNS)
    stats = item_statistics(scores, corrected=True)
    inputs = load_suspect_inputs(store, dataset, OPTION_FORMATS, FlagContext().condition)
    flags = suspect_flags(store, dataset, profile, overrides, scores=scores, items=items, stats=stats, inputs=inputs)
    signal = flags.attrs.pop("signal", None)
    cleared = _cleared(inputs[2])
    keep = pd.Series([(str(i), int(v), k) not in cleared
                      for i, v, k in zip(flags["item_id"], flags["item_version"], flags["key"])],
                     index=flags.index, dtype=bool)
    flags = flags.loc[keep]
    if flags.empty:
        return pd.DataFrame(columns=QUEUE_COLUMNS)
    signal = signal.set_index("item_id") if signal is not None else pd.DataFrame(columns=["combined", "evidence"])
    stats = stats.set_index("item_id")
    rows = []
    for item_id, group in flags.groupby("item_id", sort=True):
        st = stats.loc[item_id] if item_id in stats.index else None
        rows.append({"item_id": item_id, "type": st["type"] if st is not None else None,
                     "version": int(group["item_version"].iloc[0]), "flags": list(group["key"]),
                     "reasons": ", ".join(group["reason"]), "sources": ", ".join(sorted(set(group["source"]))),
                     "details": " · ".join(group["detail"].fillna("")),
                     "p": float(st["p"]) if st is not None else None,
                     "r_pb": float(st["r_pb"]) if st is not None and pd.notna(st["r_pb"]) else None,
                     "n_examinees": int(st["n_examinees"]) if st is not None else 0,
                     "signal": float(signal.at[item_id, "combined"]) if item_id in signal.index else None,
                     "evidence": str(signal.at[item_id, "evidence"]) if item_id in signal.index else ""})
    queue = pd.DataFrame(rows, columns=QUEUE_COLUMNS)
    # the strongest combined evidence first (`analysis.keysignal`); ties and items without a signal by item_id
    order = queue["signal"].astype(float).fillna(float("-inf"))
    return queue.assign(_o=-order).sort_values(["_o", "item_id"], kind="stable").drop(columns="_o").reset_index(
        drop=True)


def item_flags(store: Store, dataset: str, item_id: str, profile: str = DEFAULT_PROFILE) -> pd.DataFrame:
    """The open flags of one item (the inspector links to the queue when there are any)."""
    queue = suspect_queue(store, dataset, profile)
    return queue[queue["item_id"] == str(item_id)]


def suspect_detail(store: Store, dataset: str, item_id: str) -> dict:
    """What the reviewer needs: the item, its history, every model's answer and rationale, the
    option counts, and the earlier key reviews."""
    item = get_item(store, dataset, item_id)
    responses = load_responses(store, dataset, item_id)
    latest = responses[responses["is_latest"]] if "is_latest" in responses else responses
    latest = _models_only(latest)
    answers = latest[["model", "condition", "raw_text", "parsed_answers", "motivation", "strict_score", "paper_score",
                      "parse_error"]].copy()
    answers["chosen"] = [", ".join(chosen_options(a)) for a in answers["parsed_answers"]]
    choices = load_choices(store, dataset, item_id=str(item_id))
    choices = choices[choices["model"].isin(set(responses["model"]) - set(
        responses.loc[responses["kind"] == HUMAN_KIND, "model"]))] if "kind" in responses else choices
    choices = choices.assign(ids=pd.Series([chosen_options(a) for a in choices["answers"]], dtype=object,
                                           index=choices.index))
    return {"item": item, "answers": answers.reset_index(drop=True), "options": option_shares(choices, str(item_id)),
            "history": item_history(store, dataset, item_id), "reviews": load_key_reviews(store, dataset, item_id)}


def _actor(reviewer: Identity, doing: str) -> Identity:
    actor = as_identity(reviewer)
    actor.require(KEY_REVIEW)
    return actor


def confirm_key(store: Store, dataset: str, item_id: str, reviewer: Identity, flags: list[str],
                note: str | None = None) -> int:
    """The key is right: clear the flags the reviewer saw on the current version; keep the decision.
    ``reviewer`` is the acting identity (``team.local(name)`` in single-machine mode)."""
    actor = _actor(reviewer, "confirming")
    version = int(get_item(store, dataset, item_id)["version"])
    return add_key_review(store, dataset, item_id, version, "confirm", actor.name, (note or "").strip() or None,
                          flags, actor=actor.columns())


def correct_key(store: Store, dataset: str, item_id: str, answers: list, reviewer: Identity, flags: list[str],
                note: str | None = None) -> tuple[int, int]:
    """Save the corrected key as a new item version (re-scoring every stored response of the item)
    and record the review; returns (new version, responses re-scored)."""
    from .items import check_item

    actor = _actor(reviewer, "correcting")
    name = actor.name
    item = get_item(store, dataset, item_id)
    record = copy.deepcopy(item["record"])
    if check_item(record)[0]["answers"] == check_item({**record, "answers": answers})[0]["answers"]:
        raise UserError(f"item {item_id}: the key is unchanged; confirm it instead")
    record["answers"] = answers
    record["item_id"] = str(item_id)
    problems = check_item(record)[1]
    if problems:
        raise UserError("; ".join(problems))
    text = f"key corrected by {name}" + (f": {(note or '').strip()}" if (note or "").strip() else "")
    version = save_item_version(store, dataset, record, origin=KEY_REVIEW_ORIGIN, note=text)
    add_key_review(store, dataset, item_id, int(item["version"]), "correct", name, (note or "").strip() or None,
                   flags, new_version=version, actor=actor.columns())
    rescored = int(len(load_responses(store, dataset, item_id)))
    logger.info("item %s/%s: key corrected by %s (version %d, %d responses re-scored)", dataset, item_id, name,
                version, rescored)
    return version, rescored
