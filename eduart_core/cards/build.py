"""`build_card`: one dataset's exam card as a JSON-ready dict (see `eduart_core.cards`).

Why JSON first: the page, the Every Eval Ever files and `import-card` all read this one dict, so the
three never disagree on a number. Numbers are kept unrounded (the page rounds when it draws).
"""
from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from .. import __version__, views
from ..errors import UserError
from ..selection import Selection
from . import sections
from .version import CARD_FORMAT, CARD_VERSION


def build_card(store_path: str, dataset: str, profile: str) -> dict[str, Any]:
    """The exam card of ``dataset`` under ``profile`` (every condition; real and simulated models, no
    baselines; people only as the human baseline). One-line `UserError` for an unknown dataset or profile,
    or a dataset without scores."""
    src = views.Source.of(store_path)
    flags = views.dataset_flags(src, dataset)
    if not flags.exists:
        raise UserError(f"no dataset {dataset!r} in the store (`python -m eduart_core stats` lists them)")
    if profile not in {p.name for p in views.profile_choices(src, dataset)}:
        raise UserError(f"dataset {dataset!r} has no scoring profile {profile!r}")
    sel = Selection(dataset=dataset, profile=profile)
    aggregate = flags.aggregate_only
    try:
        scores, shown = sections.scores(src, sel, aggregate)
    except UserError as exc:
        raise UserError(f"dataset {dataset!r} has no scores to put on a card: {exc}") from None
    conditions = sorted({row["condition"] for row in scores["rows"]})
    label = views.data_label(src, sel)
    models = sections.models(src, sel, shown)
    return {
        "card": CARD_FORMAT, "card_version": CARD_VERSION,
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "generator": f"eduart_core {__version__}",
        "dataset": {"name": dataset, "title": flags.title, "kind": flags.kind, "simulated": flags.simulated,
                    "aggregate_only": aggregate},
        "respondents": label.short() or ("published aggregates" if aggregate else "real models"),
        "item_bank": sections.item_bank(src, sel, aggregate),
        "formats": sections.formats(src, sel, aggregate),
        "languages": sections.languages(src, sel, aggregate),
        "prompt_hashes": sorted({h for m in models for h in m["prompt_hashes"]}),
        "scoring": sections.scoring(src, sel, aggregate),
        "conditions": conditions,
        "models": models,
        "scores": scores,
        "overall": sections.overall(src, sel, conditions, aggregate),
        "judge": sections.judge(src, sel),
        "human_baseline": sections.human_baseline(src, sel, aggregate),
        "errata": sections.errata(src, sel),
        "canary": sections.canary(src, sel),
    }
