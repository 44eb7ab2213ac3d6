"""Views of a rater's record ("My record" on the Review studio and the Grade answers pages).

Why the acting person is a keyword-only argument: a record is read as someone, and who may read
whose record is the library's rule (``records.rater_record``). Pages pass the signed-in person (or
the typed name) as ``who``; ``show`` has no such option (keyword-only arguments are not view
options) and reads as the command line's identity (``team.cli_identity``: the operator,
``$EDUART_USER`` or the login name), with ``--option rater=SUBJECT`` for someone else's record.
The record spans every dataset of the store: the selection does not narrow it.
"""
from __future__ import annotations

import pandas as pd

from ..selection import Selection
from ..team import Identity
from ._base import Source, cached


@cached(maxsize=16)
def _record(src: Source, who: Identity, rater: str):
    from ..records import rater_record

    return rater_record(src.store, who, rater or None)


def _read(src: Source, who: Identity | None, rater: str):
    if who is None:
        from ..team import cli_identity

        who = cli_identity(src.store)
    return _record(src, who, rater)


def _captioned(frame: pd.DataFrame, record, what: str) -> pd.DataFrame:
    frame.attrs["caption"] = (f"{what} of {record.rater}; settled units only"
                              + (" (simulated data)" if record.simulated else "") + ".")
    frame.attrs["simulated"] = record.simulated
    return frame


def my_record(src: Source, sel: Selection, rater: str = "", *, who: Identity | None = None) -> pd.DataFrame:
    """A rater's decisions and marks that adjudication overruled, with the adjudicated value and the adjudicator's note (option rater=<subject>; default: yourself)."""
    record = _read(src, who, rater)
    return _captioned(record.overruled, record, "Decisions and marks overruled by adjudication")


def my_agreement(src: Source, sel: Selection, rater: str = "", *, who: Identity | None = None) -> pd.DataFrame:
    """A rater's agreement with settled outcomes per source and week: n, agreed, the share with its 95% Wilson interval (option rater=<subject>)."""
    record = _read(src, who, rater)
    return _captioned(record.agreement, record, "Agreement with settled outcomes, per week")


def my_severity(src: Source, sel: Selection, rater: str = "", *, who: Identity | None = None) -> pd.DataFrame:
    """A grader's severity per rubric (logit, many-facet Rasch, 95% interval) once 30 settled answers are graded; below that, how many more (option rater=<subject>)."""
    record = _read(src, who, rater)
    return _captioned(record.severity, record, "Severity as a grader")


def my_gold(src: Source, sel: Selection, rater: str = "", *, who: Identity | None = None) -> pd.DataFrame:
    """A grader's accuracy on seeded gold answers (Wilson 95% interval, n), severity against the gold (95% interval) and the flag with its reason, and a reviewer's accuracy on seeded gold pages (rubric "extraction review") (option rater=<subject>; your own appear once the round is over)."""
    from ..analysis.gold import FLAG_RULE, REVIEW_FLAG_RULE

    record = _read(src, who, rater)
    frame = _captioned(record.gold.copy(), record, "Gold checks (seeded answers of known marks)")
    frame.attrs["caption"] = (frame.attrs["caption"][:-1] + f"; gold checks of a running round appear once it is over. "
                              f"{FLAG_RULE} {REVIEW_FLAG_RULE}")
    return frame


@cached(maxsize=8)
def _flags(src: Source, who: Identity):
    from ..extraction.review_gold import gold_table as review_gold_table
    from ..judges.gold import gold_table

    grading, review = gold_table(src.store, who), review_gold_table(src.store, who)
    return pd.concat([grading, review], ignore_index=True) if len(review) else grading


def gold_flags(src: Source, sel: Selection, *, who: Identity | None = None) -> pd.DataFrame:
    """Every grader's and reviewer's gold checks and flag (adjudicators and admins; live): accuracy on gold with its interval, severity against the gold (graders), flagged or not and why; reviewers' rows have rubric "extraction review"."""
    from ..analysis.gold import FLAG_RULE, REVIEW_FLAG_RULE

    if who is None:
        from ..team import SEE_RECORDS, cli_identity

        who = cli_identity(src.store)
        who.require(SEE_RECORDS)
    else:
        from ..team import SEE_RECORDS

        who.require(SEE_RECORDS)
    frame = _flags(src, who).copy()
    simulated = bool(frame["simulated"].astype(bool).any()) if len(frame) else False
    frame.attrs["caption"] = ("Gold checks of every grader and reviewer" + (" (simulated data)" if simulated else "")
                              + f". {FLAG_RULE} {REVIEW_FLAG_RULE}")
    frame.attrs["simulated"] = simulated
    return frame
