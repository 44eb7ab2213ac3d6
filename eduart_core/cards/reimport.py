"""`import-card`: a card's per-format results stored as a published (aggregate-only) dataset.

Why as published aggregates: a card holds means, n and intervals, not answers, which is exactly what
the studio keeps for the paper's numbers (`store.reference`); stored the same way, the leaderboard,
the format heatmap and the motivation charts draw an imported card like any published result, and
every model's score per format comes back exactly as the card printed it (the JSON numbers are the
stored doubles). A broken card is one line naming the file and what is wrong; nothing is written.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from ..errors import UserError
from ..jsonsafe import BadInput, read_json
from ..store import Store
from ..vocab import CONDITIONS, FORMATS, MODEL_KIND, MODEL_KINDS, SIMULATED_KIND
from .version import CARD_FORMAT, CARD_VERSION


class CardRejected(UserError):
    """The file is not a card this studio can read (named with the reason)."""


def _number(value: Any, where: str, *, whole: bool = False) -> Any:
    if value is None and not whole:
        return None
    ok = isinstance(value, int) if whole else isinstance(value, (int, float))
    if not ok or isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
        raise CardRejected(f"{where}: expected {'a whole number' if whole else 'a number'}, found {value!r}")
    return value


def _section(card: dict[str, Any], key: str) -> dict[str, Any]:
    """One object of the card; a missing or malformed one reads as empty (its fields then say so)."""
    value = card.get(key)
    return value if isinstance(value, dict) else {}


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CardRejected(f"{where}: expected text, found {value!r}")
    return value


def _models(card: dict[str, Any]) -> list[dict[str, Any]]:
    models = card.get("models")
    if not isinstance(models, list):
        raise CardRejected("models: expected a list")
    out = []
    for k, m in enumerate(models):
        if not isinstance(m, dict):
            raise CardRejected(f"models[{k}]: expected an object")
        kind = m.get("kind") if m.get("kind") in MODEL_KINDS else (SIMULATED_KIND if m.get("simulated") else MODEL_KIND)
        out.append({"model": _text(m.get("model_key"), f"models[{k}].model_key"),
                    "display_name": _text(m.get("model"), f"models[{k}].model"),
                    "family": m.get("family") if isinstance(m.get("family"), str) else None,
                    "provider": m.get("provider") if isinstance(m.get("provider"), str) else None,
                    "api_model_id": m.get("api_model_id") if isinstance(m.get("api_model_id"), str) else None,
                    "simulated": bool(m.get("simulated")), "kind": kind})
    return out


def _rows(card: dict[str, Any], keys: dict[str, str]) -> list[list[Any]]:
    rows = (card.get("scores") or {}).get("rows") if isinstance(card.get("scores"), dict) else None
    if not isinstance(rows, list) or not rows:
        raise CardRejected("scores.rows: expected a non-empty list")
    out, seen = [], set()
    for k, r in enumerate(rows):
        where = f"scores.rows[{k}]"
        if not isinstance(r, dict):
            raise CardRejected(f"{where}: expected an object")
        model = _text(r.get("model"), f"{where}.model")
        if model not in keys:
            raise CardRejected(f"{where}: model {model!r} is not among the card's models")
        condition, kind = _text(r.get("condition"), f"{where}.condition"), _text(r.get("type"), f"{where}.type")
        if condition not in CONDITIONS or kind not in FORMATS:
            raise CardRejected(f"{where}: unknown condition {condition!r} or format {kind!r}")
        if (model, condition, kind) in seen:
            raise CardRejected(f"{where}: {model} / {condition} / {kind} appears twice")
        seen.add((model, condition, kind))
        out.append([keys[model], condition, kind, _number(r.get("n"), f"{where}.n", whole=True),
                    _number(r.get("mean"), f"{where}.mean"), _number(r.get("ci_low"), f"{where}.ci_low"),
                    _number(r.get("ci_high"), f"{where}.ci_high")])
    return out


def read_card(path: Path) -> dict[str, Any]:
    """The card in ``path``, checked to be an exam card of a version this studio reads."""
    try:
        card, _ = read_json(path)
    except BadInput as exc:
        raise CardRejected(f"{path}: {exc}") from None
    if not isinstance(card, dict) or card.get("card") != CARD_FORMAT:
        raise CardRejected(f"{path}: not an exam card (no \"card\": \"{CARD_FORMAT}\")")
    if card.get("card_version") != CARD_VERSION:
        raise CardRejected(f"{path}: card version {card.get('card_version')!r}; this studio reads version {CARD_VERSION}")
    return card


def import_card(store: Store, path: Path, actor: dict[str, Any], dataset: str | None = None) -> dict[str, Any]:
    """Store the card's results as the aggregate-only dataset ``dataset`` (default: the card's own name).

    A dataset that holds items or runs is refused (the card's numbers would mix with answers);
    importing again replaces the published rows. Returns the dataset, models and rows written."""
    from ..store.cards import dataset_state, save_published

    card = read_card(path)
    try:
        source = _section(card, "dataset")
        name = dataset or _text(source.get("name"), "dataset.name")
        models = _models(card)
        rows = _rows(card, {m["display_name"]: m["model"] for m in models})
    except CardRejected as exc:
        raise CardRejected(f"{path}: {exc}") from None
    state = dataset_state(store, name) if store.exists() else None
    if state is not None and (not state["aggregate_only"] or state["items"] or state["runs"]):
        raise UserError(f"dataset {name!r} already holds items or runs; import the card under another name "
                        "(--dataset NAME)")
    scoring = _section(card, "scoring")
    bank = _section(card, "item_bank")
    description = (f"Imported from an exam card made {card.get('generated_at')} by {card.get('generator')}: "
                   f"dataset {source.get('name')}, profile {scoring.get('profile')}, item bank sha256 "
                   f"{bank.get('sha256')}. Published aggregates: no item-level answers.")
    title = f"{source.get('title') or name} (exam card)"
    written = save_published(store, name, title, description, [m for m in models if m["display_name"] in
                                                               {r["model"] for r in card["scores"]["rows"]}],
                             rows, actor, str(path.name))
    return {"dataset": name, "models": len({r[0] for r in rows}), "rows": written}
