"""Flags for likely answer-key errors, from item statistics (pure functions, a small registry).

Why: item statistics already point at keys that may be wrong, but a number on a chart leads
nowhere; these flags feed the suspect-key queue, where the art historian who can fix the key
sees them. Each flag names its source (which analysis) and a stable reason code, plus a detail
line with the numbers behind it. Sources are an explicit registry so that later analyses (IRT
misfit, distractor curves) add one entry and feed the same queue.

Built-in rules (EduArt reference, section 4):
- ``negative_discrimination``: corrected point-biserial r_pb < 0 over the (model, condition)
  examinees (its detail says that stronger examinees do worse only when the 95% interval is
  below zero, and otherwise that the data do not tell);
- ``all_fail``: every examinee's answer is wrong (score < 0.5);
- ``distractor:<id>``: on a multiple-choice item, a consensus-wrong option as the distractor
  analysis defines it (`analysis.distractors`): chosen by at least half of the upper half of the
  models (ranked by mean score, default condition).
- ``irt_misfit``: an item that underfits the default IRT model (the partial credit model when
  items give partial credit, else Rasch) over one examinee per model, its answers in the context's
  condition (the IRT views' default examinees, `vocab.IRT_DEFAULT_EXAMINEES`), by the item fit
  rule of `analysis.irt_fit` (the same fit and rule as `show irt_item_fit`): a mean square above 1.3
  and the item's fit p Benjamini-Hochberg adjusted across the fit's items below 0.05, so that chance
  flags (about one item in 40 by t > 2 alone) do not reach a person as suspects.
- ``judge_disagreement``: an open-answer item whose judged answers the judge and the settled human
  grade mark half the scale or more apart more often than over every judged item (one-sided exact
  binomial p, Benjamini-Hochberg at 5% across the judged items).

``key_signal`` ranks every item by the combined evidence of the signals (`analysis.keysignal`:
Stouffer's sum of per-signal standard normal deviates); the queue is ordered by it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pandas as pd

from ..errors import UserError
from ..item_notes import negative_discrimination_reason
from ..vocab import DEFAULT_CONDITION, IRT_PCM, IRT_RASCH, OPTION_FORMATS
from .ctt import item_statistics
from .distractors import consensus_wrong_items, distractor_analysis
from .irt_fit import UNDERFIT, item_fit
from .irt_pcm import fit_model, has_partial_credit

#: Each reason code in words (the suspect-key queue shows these; the code stays the stored value).
REASON_WORDS: dict[str, str] = {
    "negative_discrimination": "negative discrimination (r_pb below 0)",
    "all_fail": "every answer wrong",
    "irt_misfit": "misfits the IRT model (Benjamini-Hochberg, 5% false discovery rate across items)",
    "judge_disagreement": "the judge and the human graders disagree on its answers more than on other items "
                          "(Benjamini-Hochberg, 5% false discovery rate across items)",
}


def reason_words(code: str) -> str:
    """A reason code as a person reads it: ``distractor:B`` is "a wrong option (B) chosen by the strongest
    models"; a code without words (a reviewer's own) is shown as it was stored."""
    code = str(code).strip()
    if code.startswith("distractor:"):
        return f"a wrong option ({code.split(':', 1)[1]}) chosen by the strongest models"
    return REASON_WORDS.get(code, code)

FLAG_COLUMNS = ["item_id", "source", "reason", "detail"]


@dataclass
class FlagContext:
    """What flag sources may look at besides the long score frame."""

    #: one row per (model, condition, item_id) with ``ids``: the option ids the answer chose
    #: (``analysis.distractors.chosen_options``: entries marked FALSE are not chosen)
    choices: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["model", "condition", "item_id", "ids"]))
    #: item_id -> the gold option ids (multiple-choice items)
    keys: dict[str, set[str]] = field(default_factory=dict)
    condition: str = DEFAULT_CONDITION
    #: ``item_statistics(scores)`` when the caller computed it already (it is not cheap at scale)
    stats: pd.DataFrame | None = None
    #: item_id -> how many parts earn credit (`formats.score_parts`): the IRT misfit source reads
    #: score levels with it; empty means every item is right/wrong
    parts: dict[str, int] = field(default_factory=dict)
    #: judged open answers with a settled human grade: item_id, judge, human (marks as fractions of
    #: the maximum; `analysis.judges`): the judge-human disagreement source reads it
    judge_marks: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=["item_id", "judge", "human"]))
    #: intermediate tables the sources computed (stats, distractors, item_fit), kept so that the
    #: combined signal (`key_signal`) reuses them instead of fitting the IRT model twice
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)


FlagSource = Callable[[pd.DataFrame, FlagContext], pd.DataFrame]
FLAG_SOURCES: dict[str, FlagSource] = {}


def register_flag_source(name: str, fn: FlagSource) -> FlagSource:
    """Add a source of key flags (``fn(scores, context) -> item_id, reason, detail`` rows)."""
    FLAG_SOURCES[name] = fn
    return fn


def statistics_flags(scores: pd.DataFrame, context: FlagContext) -> pd.DataFrame:
    """Negative discrimination and all-fail items over every (model, condition) examinee."""
    if scores.empty:
        return pd.DataFrame(columns=FLAG_COLUMNS[:1] + FLAG_COLUMNS[2:])
    stats = context.stats if context.stats is not None else item_statistics(scores, corrected=True)
    context.tables["stats"] = stats
    rows = []
    negative = stats[stats["r_pb"].notna() & (stats["r_pb"] < 0)]
    for row in negative.itertuples():
        rows.append({"item_id": row.item_id, "reason": "negative_discrimination",
                     "detail": negative_discrimination_reason(row.r_pb, row.r_pb_ci_low, row.r_pb_ci_high,
                                                              row.n_examinees)})
    right = scores.groupby("item_id")["correct"].agg(["sum", "size"])
    for item_id, n in right.index[(right["size"] >= 2) & (right["sum"] == 0)].to_series().map(right["size"]).items():
        rows.append({"item_id": item_id, "reason": "all_fail", "detail": f"all {int(n)} answers are wrong (score < 0.5)"})
    return pd.DataFrame(rows, columns=["item_id", "reason", "detail"])


def distractor_flags(scores: pd.DataFrame, context: FlagContext) -> pd.DataFrame:
    """Consensus-wrong options, by the distractor analysis' own rule (`analysis.distractors`): a
    wrong option chosen by at least half of the upper half of the examinees (the models, in the
    context's condition). One rule for the Psychometrics page and the queue."""
    empty = pd.DataFrame(columns=["item_id", "reason", "detail"])
    d = scores[scores["condition"] == context.condition]
    choices = context.choices[context.choices["condition"] == context.condition]
    types = d.drop_duplicates("item_id").set_index("item_id")["type"]
    choices = choices[choices["item_id"].map(types).isin(OPTION_FORMATS) & choices["item_id"].isin(list(context.keys))]
    if d.empty or choices.empty:
        return empty
    chosen: dict[str, set[str]] = {}
    for item_id, ids in zip(choices["item_id"], choices["ids"]):
        chosen.setdefault(str(item_id), set()).update(ids)
    keys = {str(item_id): (sorted(set(key) | chosen.get(str(item_id), set())), set(key))
            for item_id, key in context.keys.items() if str(item_id) in chosen}
    picked = choices[["model", "condition", "item_id", "ids"]].rename(columns={"ids": "answers"})
    table = distractor_analysis(d, picked, keys)
    context.tables["distractors"] = table
    hit = consensus_wrong_items(table)
    if hit.empty:
        return empty
    half = table.attrs["n_upper_half"]
    rows = [{"item_id": r.item_id, "reason": f"distractor:{r.option}",
             "detail": f"wrong option {r.option} chosen by at least half of the {half} strongest of "
                       f"{int(r.n_examinees)} models ({context.condition} condition; {int(r.n_chose)} chose it in "
                       f"all); key {', '.join(sorted(context.keys[r.item_id]))}"}
            for r in hit.itertuples()]
    return pd.DataFrame(rows, columns=["item_id", "reason", "detail"])


def irt_misfit_flags(scores: pd.DataFrame, context: FlagContext) -> pd.DataFrame:
    """Items that underfit the default IRT model over the models in the context's condition.

    One examinee per model: its answers in another condition are not an independent examinee, and
    counting them would make the misfit t too large. A panel too small to fit leaves no flag (the
    IRT tab says why)."""
    empty = pd.DataFrame(columns=["item_id", "reason", "detail"])
    scores = scores[scores["condition"] == context.condition] if "condition" in scores else scores
    if scores.empty:
        return empty
    model = IRT_PCM if has_partial_credit(context.parts) else IRT_RASCH
    try:
        table = item_fit(fit_model(scores, model, context.parts))
    except UserError:
        return empty
    context.tables["item_fit"] = table
    hit = table[table["flag"] == UNDERFIT]
    return pd.DataFrame({"item_id": hit["item_id"].astype(str), "reason": "irt_misfit",
                         "detail": hit["reason"] + f" (examinees: one per model, its answers in the {context.condition} "
                                                   "condition)"},
                        columns=["item_id", "reason", "detail"])


def judge_disagreement_flags(scores: pd.DataFrame, context: FlagContext) -> pd.DataFrame:
    """Open-answer items on which the judge and the human graders disagree more often than on the other
    items (`keysignal.judge_disagreement`): one-sided exact binomial p against the pooled share,
    Benjamini-Hochberg adjusted across the judged items (5% false discovery rate). A wrong reference
    answer misleads the judge, which grades against it, and not the people, who know better."""
    from scipy.stats import binomtest

    from .irt_fit import bh_adjust
    from .keysignal import judge_disagreement

    empty = pd.DataFrame(columns=["item_id", "reason", "detail"])
    counts = judge_disagreement(context.judge_marks)
    context.tables["judge_human"] = counts
    if counts.empty or counts["n"].sum() == 0 or counts["k"].sum() == 0:
        return empty
    p0 = float(counts["k"].sum() / counts["n"].sum())
    p = [binomtest(int(k), int(n), p0, alternative="greater").pvalue if p0 < 1 else 1.0
         for k, n in zip(counts["k"], counts["n"])]
    q = bh_adjust(pd.Series(p, dtype=float).to_numpy())
    hit = counts.assign(p=p, q=q)
    hit = hit[hit["q"] < JUDGE_FDR]
    return pd.DataFrame({"item_id": hit["item_id"].astype(str), "reason": "judge_disagreement",
                         "detail": [f"judge and human graders disagree on {int(k)} of {int(n)} answers (over every "
                                    f"judged item {p0:.0%}; binomial p {pp:.3g}, Benjamini-Hochberg q {qq:.3g})"
                                    for k, n, pp, qq in zip(hit["k"], hit["n"], hit["p"], hit["q"])]},
                        columns=["item_id", "reason", "detail"])


#: The false discovery rate of the judge-human disagreement flags.
JUDGE_FDR = 0.05

register_flag_source("item_statistics", statistics_flags)
register_flag_source("distractors", distractor_flags)
register_flag_source("irt_fit", irt_misfit_flags)
register_flag_source("judge_human", judge_disagreement_flags)


def key_signal(scores: pd.DataFrame, context: FlagContext, items: list[str] | None = None) -> pd.DataFrame:
    """The combined signal of every item (`keysignal.combine`), highest first, from the tables the flag
    sources left in ``context.tables`` (each computed here when a source has not run)."""
    from . import keysignal as ks

    if "distractors" not in context.tables:
        distractor_flags(scores, context)
    if "item_fit" not in context.tables:
        irt_misfit_flags(scores, context)
    if "judge_human" not in context.tables:
        judge_disagreement_flags(scores, context)
    t = context.tables
    # discrimination over one examinee per model (its answers in the context's condition), as the other signals:
    # a model's two conditions are not two independent examinees, and counting both would inflate z
    own = scores[scores["condition"] == context.condition] if "condition" in scores else scores
    single = ks.key_likelihood_evidence(own, context.choices[context.choices["condition"] == context.condition]
                                        if "condition" in context.choices else context.choices, context.keys)
    several = ks.distractor_evidence(t["distractors"]) if "distractors" in t else None
    if several is not None and len(single):  # the point-biserial only where the likelihood does not apply
        several = several[~several["item_id"].isin(set(single["item_id"]))]
    parts = [ks.discrimination_evidence(item_statistics(own, corrected=True)) if len(own) else None,
             single, several,
             ks.misfit_evidence(t["item_fit"]) if "item_fit" in t else None,
             ks.judge_evidence(t["judge_human"]) if "judge_human" in t else None]
    parts = [p for p in parts if p is not None and len(p)]
    evidence = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=ks.EVIDENCE_COLUMNS)
    every = items if items is not None else sorted(set(scores["item_id"].astype(str)))
    return ks.combine(evidence, every)


def key_flags(scores: pd.DataFrame, context: FlagContext, sources: list[str] | None = None) -> pd.DataFrame:
    """Every flag of every registered source (or of ``sources``): item_id, source, reason, detail."""
    frames = []
    for name in sources or list(FLAG_SOURCES):
        found = FLAG_SOURCES[name](scores, context)
        if len(found):
            frames.append(found.assign(source=name))
    if not frames:
        return pd.DataFrame(columns=FLAG_COLUMNS)
    out = pd.concat(frames, ignore_index=True)[FLAG_COLUMNS]
    return out.sort_values(["item_id", "source", "reason"], kind="stable").reset_index(drop=True)


def option_shares(choices: pd.DataFrame, item_id: str) -> pd.DataFrame:
    """How many answers chose each option of one item, per condition (for the reviewer)."""
    c = choices[choices["item_id"] == item_id]
    rows = [(cond, ident) for cond, ids in zip(c["condition"], c["ids"]) for ident in set(ids)]
    if not rows:
        return pd.DataFrame(columns=["condition", "option", "answers"])
    frame = pd.DataFrame(rows, columns=["condition", "option"])
    return frame.groupby(["condition", "option"]).size().rename("answers").reset_index()


__all__ = ["FLAG_COLUMNS", "FLAG_SOURCES", "FlagContext", "distractor_flags", "irt_misfit_flags",
           "judge_disagreement_flags", "key_flags", "key_signal", "option_shares", "register_flag_source",
           "statistics_flags"]
