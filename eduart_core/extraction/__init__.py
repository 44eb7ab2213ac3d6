"""Two-extractor pipeline: field-level comparison with categories, auto-merge, review decisions.

The public entry points are re-exported here; the store side lives in ``store/extraction.py``.
"""
from .compare import COMPARED_FIELDS, FieldDiff, category_counts, compare_records, top_field
from .merge import DEFAULT_IGNORABLE, MergeResult, merge_records
from .normalise import CATEGORIES, TEXT_CATEGORIES, text_category

__all__ = ["CATEGORIES", "COMPARED_FIELDS", "DEFAULT_IGNORABLE", "FieldDiff", "MergeResult",
           "TEXT_CATEGORIES", "category_counts", "compare_records", "merge_records", "text_category",
           "top_field"]
