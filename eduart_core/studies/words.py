"""The study results in plain words: the consistency checks and the per-task table as sentences.

Why separate from the analyses: the page, its presentation mode and the report all tell the same
story ("the Overall column cannot be rebuilt from the others for 13 of 14 models"), and the
sentences are built only from the rows the analyses return, never from new numbers.
"""
from __future__ import annotations

import pandas as pd

from ..vocab import OVERALL_COLUMN, VERDICT_FLAG, VERDICT_NOT_APPLICABLE, VERDICT_NOTE, VERDICT_OK, VERDICT_PROBLEM

#: Order in which verdicts are told (the most serious first).
VERDICT_ORDER = (VERDICT_PROBLEM, VERDICT_FLAG, VERDICT_NOTE, VERDICT_OK, VERDICT_NOT_APPLICABLE)


def _is_summary(subject: object) -> bool:
    """Summary rows speak of the whole table ('all 14 models', 'Table 2 rows (plain mean ...)')."""
    text = str(subject)
    return text.startswith("all ") or (text.endswith(")") and "(" in text and not text.startswith("rows "))


def summaries(checks: pd.DataFrame) -> pd.DataFrame:
    """Per check: its summary rows when it has any, else its individual rows (a name, a column, a claim)."""
    keep = []
    for _, g in checks.groupby("check", sort=False):
        summary = g.loc[g["subject"].map(_is_summary)]
        keep.append(summary if len(summary) else g)
    return pd.concat(keep) if keep else checks


def checks_in_words(checks: pd.DataFrame, *, limit: int = 12, summary_only: bool = False) -> list[tuple[str, str]]:
    """(verdict, sentence) pairs, most serious first; ``summary_only`` tells each check once (reports)."""
    if checks.empty:
        return []
    if summary_only:
        checks = summaries(checks)
    rank = {v: i for i, v in enumerate(VERDICT_ORDER)}
    ordered = checks.assign(_r=checks["verdict"].map(rank).fillna(len(rank))).sort_values("_r", kind="stable")
    out = []
    for row in ordered.itertuples(index=False):
        if row.verdict in (VERDICT_OK, VERDICT_NOT_APPLICABLE):
            continue
        out.append((str(row.verdict), str(row.detail)))
        if len(out) >= limit:
            break
    return out


def checks_headline(checks: pd.DataFrame) -> str:
    """One sentence: how many checks found a problem, and the first of them."""
    if checks.empty:
        return "No consistency checks could run on this table."
    problems = checks.loc[checks["verdict"].isin([VERDICT_PROBLEM, VERDICT_FLAG])]
    kinds = problems["check"].nunique()
    total = checks.loc[checks["verdict"] != VERDICT_NOT_APPLICABLE, "check"].nunique()
    if not len(problems):
        return f"The table passes all {total} applicable consistency checks."
    first = problems.iloc[0]
    return f"{kinds} of {total} applicable checks find a problem; first: {first['detail']}"


def leader_sentence(scores: pd.DataFrame) -> str | None:
    """'Sim Aurora Pro has the highest overall score, 66.1% (no test says ...); the median model is below
    chance in Jigsaw Puzzle.' No model is said to lead: the overall column has no paired test here, and
    how the overall was aggregated is the caption's to say."""
    models = scores.loc[~scores["is_median"]]
    overall = models.loc[models["column"] == OVERALL_COLUMN].sort_values("score", ascending=False)
    parts = []
    if len(overall):
        top = overall.iloc[0]
        parts.append(f"{top['model']} has the highest overall score, {100 * top['score']:.1f}% (no test says whether "
                     "the gap to the next model is more than chance)")
    med_below = scores.loc[scores["is_median"] & scores["below_chance"].astype(bool), "column"]
    if len(med_below):
        parts.append("the median model is below chance in " + ", ".join(map(str, med_below)))
    return "; ".join(parts) + "." if parts else None
