"""Auto-merge: pages whose two extractions differ only in ignorable ways skip the review queue.

Why: in the published study most pages agreed, and reviewers should only see the rest. Which
categories are ignorable is a project setting (default whitespace and typography); the merged
value of an ignored difference takes the normalised form, so the gold text is clean whichever
extractor had the stray space or curly quote.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .compare import FieldDiff, compare_records
from .normalise import TEXT_CATEGORIES, norm_typography, norm_whitespace
from .paths import set_at

DEFAULT_IGNORABLE: tuple[str, ...] = ("whitespace", "typography")
MERGE_STATUSES = ("agreed", "auto_merged", "queued", "failed")


@dataclass
class MergeResult:
    """Outcome for one page: status, the merged record (None when queued/failed), all diffs."""

    status: str
    record: dict | None
    diffs: list[FieldDiff] = field(default_factory=list)
    open_diffs: list[FieldDiff] = field(default_factory=list)


def clean_text(text: str) -> str:
    """The normalised form an auto-merged string takes (whitespace and typography)."""
    return norm_typography(norm_whitespace(text))


def merge_records(a: dict | None, b: dict | None,
                  ignorable: tuple[str, ...] | list[str] = DEFAULT_IGNORABLE) -> MergeResult:
    """Compare two extractions and merge them when every difference is ignorable.

    A missing extraction (failed or unparseable) gives ``failed``: there is nothing to compare.
    """
    unknown = [c for c in ignorable if c not in TEXT_CATEGORIES + ("order",)]
    if unknown:
        raise ValueError(f"cannot ignore category {unknown[0]!r}")
    if a is None or b is None:
        return MergeResult("failed", None)
    diffs = compare_records(a, b)
    if not diffs:
        return MergeResult("agreed", dict(a), diffs, [])
    open_diffs = [d for d in diffs if d.category not in ignorable]
    if open_diffs:
        return MergeResult("queued", None, diffs, open_diffs)
    merged = dict(a)
    for diff in diffs:
        value = diff.a
        if isinstance(value, str):
            value = clean_text(value)
        merged = set_at(merged, diff.path, value)
    return MergeResult("auto_merged", merged, diffs, [])
