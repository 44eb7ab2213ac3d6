"""An exam card's results in the Every Eval Ever schema (PyPI `every-eval-ever`, schema 0.3.0).

Why one file per model: an Every Eval Ever log describes one model's evaluation (`model_info` is one
object), and its datastore lays files out as ``data/<benchmark>/<developer>/<model>/<uuid>.json``; we
write the same layout so a folder of our logs can be copied into theirs. Each format x condition is
one result (mean item score, 0-1, with the card's 95% interval and n), and each condition's macro
average one more; a judge profile adds the judge as `llm_scoring`. The schema's free-form slots
(``additional_details``) hold strings only, so everything else the card knows goes there as text.
"""
from __future__ import annotations

import re
import time
import uuid
from typing import Any

from ..vocab import CLOSED_ACCESS, OPEN_ACCESS, format_label

#: The Every Eval Ever schema version these logs follow (the copy kept under tests/exports/data names it).
EEE_SCHEMA_VERSION = "0.3.0"
METRIC = {"metric_id": "eduart.mean_item_score", "metric_name": "Mean item score", "metric_kind": "accuracy",
          "metric_unit": "proportion", "lower_is_better": False, "score_type": "continuous", "min_score": 0.0,
          "max_score": 1.0}
#: Providers whose models run on someone else's servers (the schema's deployment_type).
EXTERNAL_PROVIDERS = {"openai", "openai_compatible", "gemini", "bedrock"}


def slug(text: Any) -> str:
    """A path part: letters, digits, '.', '_' and '-' kept, anything else '-'."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text or "unknown")).strip("-.") or "unknown"


def _strings(values: dict[str, Any]) -> dict[str, str]:
    """An ``additional_details`` object: the set values, as strings."""
    return {k: v if isinstance(v, str) else str(v) for k, v in values.items() if v not in (None, "", [])}


def model_info(model: dict[str, Any]) -> dict[str, Any]:
    """The schema's `model_info` for one card model (the store's key and kind kept as details)."""
    provider = model.get("provider")
    access: Any = model.get("access")
    return {
        "name": model["model"],
        "id": f"{slug(provider)}/{model.get('api_model_id') or model['model_key']}" if provider else model["model_key"],
        **({"developer": model["family"]} if model.get("family") else {}),
        **({"inference_platform": provider} if provider else {}),
        "additional_details": {
            "deployment_type": "externally_managed" if provider in EXTERNAL_PROVIDERS else "unknown",
            "model_availability": {OPEN_ACCESS: "open_weights", CLOSED_ACCESS: "closed_weights"}.get(access, "unknown"),
            **_strings({"eduart_model_key": model["model_key"], "eduart_kind": model.get("kind"),
                        "simulated": str(bool(model.get("simulated"))).lower(),
                        "asked_first": model.get("asked_first"), "asked_last": model.get("asked_last"),
                        "repeats": model.get("repeats")}),
        },
    }


def _generation(model: dict[str, Any]) -> dict[str, Any] | None:
    """Temperature and max tokens when every run of the model used the same ones; all settings as details."""
    settings = model.get("sampling") or []
    args: dict[str, Any] = {}
    if len(settings) == 1:
        one = settings[0]
        if isinstance(one.get("temperature"), (int, float)) and not isinstance(one.get("temperature"), bool):
            args["temperature"] = one["temperature"]
        if isinstance(one.get("max_output_tokens"), int) and one["max_output_tokens"] >= 1:
            args["max_tokens"] = one["max_output_tokens"]
    details = _strings({"sampling": "; ".join(str(s) for s in settings),
                        "prompt_hashes": ", ".join(model.get("prompt_hashes") or [])})
    if not args and not details:
        return None
    return {**({"generation_args": args} if args else {}), **({"additional_details": details} if details else {})}


def _judging(card: dict[str, Any]) -> dict[str, Any] | None:
    judge = card.get("judge")
    if not judge:
        return None
    row: dict[str, Any] = next(iter(judge.get("calibration") or []), {})
    return {"judges": [{"model_info": {"name": str(judge.get("judge") or judge["profile"]), "id": judge["profile"],
                                       "additional_details": {"deployment_type": "unknown",
                                                              "model_availability": "unknown"}}}],
            "input_prompt": f"rubric judge, version: {judge.get('version')}",
            "additional_details": _strings({k: v for k, v in row.items() if not isinstance(v, (dict, list))})}


def _result(card: dict[str, Any], rid: str, name: str, score: float, low: Any, high: Any, n: Any, method: str,
            details: dict[str, Any]) -> dict[str, Any]:
    dataset, bank = card["dataset"], card["item_bank"]
    uncertainty: dict[str, Any] = {}
    if isinstance(low, (int, float)) and isinstance(high, (int, float)):
        uncertainty["confidence_interval"] = {"lower": low, "upper": high, "confidence_level": 0.95, "method": method}
    if isinstance(n, int):
        uncertainty["num_samples"] = n
    metric = {**METRIC, "evaluation_description": f"{name}; {method}",
              "additional_details": _strings({"profile": card["scoring"]["profile"],
                                              "profile_version": card["scoring"]["profile_version"],
                                              "scorer_version": card["scoring"]["scorer_version"], **details})}
    judging = _judging(card)
    if judging:
        metric["llm_scoring"] = judging
    source = {"dataset_name": dataset["name"], "source_type": "other",
              "additional_details": _strings({"title": dataset["title"], "item_bank_sha256": bank["sha256"],
                                              "items": bank["size"], "errata": card["errata"]["current"],
                                              "canary": (card.get("canary") or {}).get("line")})}
    return {"evaluation_result_id": rid, "evaluation_name": name, "source_data": source, "metric_config": metric,
            "score_details": {"score": score, **({"uncertainty": uncertainty} if uncertainty else {})}}


def _results(card: dict[str, Any], model: str) -> list[dict[str, Any]]:
    name = card["dataset"]["name"]
    out = []
    for row in card["overall"]["rows"]:
        if row["model"] == model and isinstance(row.get("macro"), (int, float)):
            out.append(_result(card, f"{name}/{row['condition']}/macro", f"{name} macro average ({row['condition']})",
                               row["macro"], row.get("macro_ci_low"), row.get("macro_ci_high"), row.get("n_items"),
                               card["overall"]["what"], {"condition": row["condition"], "n_types": row.get("n_types")}))
    for row in card["scores"]["rows"]:
        if row["model"] == model and isinstance(row.get("mean"), (int, float)):
            out.append(_result(card, f"{name}/{row['condition']}/{row['type']}",
                               f"{name} {format_label(row['type'])} ({row['condition']})", row["mean"], row.get("ci_low"),
                               row.get("ci_high"), row.get("n"), card["scores"]["what"],
                               {"condition": row["condition"], "format": row["type"]}))
    return out


def eee_logs(card: dict[str, Any], retrieved: float | None = None) -> list[tuple[str, dict[str, Any]]]:
    """(relative path, Every Eval Ever log) per model of the card that has at least one score."""
    stamp = str(int(retrieved if retrieved is not None else time.time()))
    dataset = card["dataset"]
    out = []
    for model in card["models"]:
        results = _results(card, model["model"])
        if not results:
            continue
        info = model_info(model)
        log = {
            "schema_version": EEE_SCHEMA_VERSION,
            "evaluation_id": f"{dataset['name']}/{info['id']}/{stamp}",
            "retrieved_timestamp": stamp,
            **({"evaluation_timestamp": model["asked_first"]} if model.get("asked_first") else {}),
            "source_metadata": {
                "source_name": dataset["title"],
                "source_type": "documentation" if dataset["aggregate_only"] else "evaluation_run",
                "source_organization_name": "EduArt Studio",
                "evaluator_relationship": "third_party",
                "additional_details": _strings({"respondents": card["respondents"], "card_format": card["card"],
                                                "card_version": card["card_version"]}),
            },
            "eval_library": {"name": "eduart_core", "version": card["generator"].split()[-1],
                             "additional_details": _strings({"scorer_version": card["scoring"]["scorer_version"]})},
            "model_info": info,
            "evaluation_results": [dict(r, **({"generation_config": g} if (g := _generation(model)) else {}))
                                   for r in results],
        }
        path = f"data/{slug(dataset['name'])}/{slug(model.get('family') or model.get('provider'))}/" \
               f"{slug(model['model_key'])}/{uuid.uuid4()}.json"
        out.append((path, log))
    return out
