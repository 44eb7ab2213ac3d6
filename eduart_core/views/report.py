"""Views of the HTML report: failure examples and the provenance block (both have `show` twins).

Failure examples are the items on which the models split most evenly, a few per format, with
every model's answer in each condition and, when it gave one, its written justification. The
provenance block lists what a reader needs to reproduce the numbers: store versions, profile,
scoring code fingerprint, prompt hashes and API model ids, and when the report was made.
"""
from __future__ import annotations

import hashlib
import importlib
import inspect
import pkgutil
from datetime import UTC, datetime

import pandas as pd

from .. import __version__, analysis, display
from ..selection import Selection
from ..vocab import HUMAN_KIND, MOTIVATION_CONDITION
from ._base import EmptySelection, Source, cached, dataset_flags, human_models, store_name
from .items import item_table
from .labels import data_label

#: Modules whose source decides a score (parsing, normalisation, the published evaluator, the
#: scoring stage's rules for a stored or rescored response, and every module of the format
#: registry): their hash is the scoring code version a report names.
SCORER_MODULES = ("eduart_core.answers", "eduart_core.text", "eduart_core.scoring", "eduart_core.scoring.context",
                  "eduart_core.scoring.responses", "eduart_core.scoring.rescore", "eduart_core.paper")
EXAMPLE_COLUMNS = ["type", "item_id", "models_right", "n_models", "model", "condition", "correct", "score",
                   "answer", "rationale"]


def _scoring_modules() -> list[str]:
    names = list(SCORER_MODULES)
    try:
        package = importlib.import_module("eduart_core.formats")
        names += sorted(f"eduart_core.formats.{m.name}" for m in pkgutil.iter_modules(package.__path__))
    except ImportError:  # a build without the format registry: the listed modules decide alone
        pass
    return names


def scorer_fingerprint() -> str:
    """sha256 (first 12 hex digits) of the scoring code, plus the package version."""
    digest = hashlib.sha256()
    for name in _scoring_modules():
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        digest.update(inspect.getsource(module).encode("utf-8"))
    return f"eduart_core {__version__}, scoring code sha256:{digest.hexdigest()[:12]}"


def _given(details, labels: dict[str, str]) -> str:
    """A scored answer in one line: each element with what the model gave."""
    rows = display.answer_rows(details if isinstance(details, list) else None, labels)
    if rows.empty:
        return "—"
    parts = []
    for element, given in zip(rows["element"], rows["given"]):
        parts.append(f"{element}: {given}" if element else str(given))
    return "; ".join(parts)


@cached()
def failure_examples(src: Source, sel: Selection, per_format: int = 2) -> pd.DataFrame:
    """Items where the models disagree (closest to half right), a few per format, with each model's
    answer in both conditions and its justification (option: per_format)."""
    from ..store import items as store_items
    from ..store import scores as store_scores

    table = item_table(src, sel)
    chosen = analysis.disagreement_examples(table, per_format=per_format)
    if chosen.empty:
        raise EmptySelection("No item splits the models in the current selection.")
    rows = []
    profile = sel.profile
    for item in chosen.itertuples():
        record = store_items.get_item(src.store, sel.dataset, item.item_id).get("record") or {}
        labels = {str(c.get("id")): str(c.get("text")) for c in record.get("choices") or []
                  if isinstance(c, dict) and c.get("text")}
        answers = store_scores.load_responses(src.store, sel.dataset, item.item_id, extra_profiles=(profile,))
        answers = answers[answers["is_latest"] & (answers["repetition"] == 0)]
        if not sel.humans:  # people's answers only when people are switched in
            answers = answers[answers["kind"] != HUMAN_KIND]
        if sel.models:
            answers = answers[answers["model"].isin(sel.models)]
        for answer in answers.to_dict("records"):  # by key: a judge profile's name is no identifier
            score = answer[f"{profile}_score"]
            rows.append({"type": item.type, "item_id": item.item_id, "models_right": int(item.models_right),
                         "n_models": int(item.n_models), "model": answer["model"], "condition": answer["condition"],
                         "correct": bool(answer[f"{profile}_correct"]) if pd.notna(score) else None,
                         "score": score, "answer": _given(answer[f"{profile}_details"], labels),
                         "rationale": answer["motivation"] if answer["condition"] == MOTIVATION_CONDITION else None})
    frame = pd.DataFrame(rows, columns=EXAMPLE_COLUMNS)
    order = {iid: k for k, iid in enumerate(chosen["item_id"])}
    return frame.sort_values(["item_id", "model", "condition"], key=lambda c: c.map(order) if c.name == "item_id"
                             else c).reset_index(drop=True)


def _profile_version(src: Source, sel: Selection) -> str | None:
    """What a judge profile's scores come from (None for the built-in profiles)."""
    from .judges import profile_choices

    found = next((p for p in profile_choices(src, sel.dataset) if p.name == sel.profile), None)
    return found.version if found is not None else None


def provenance(src: Source, sel: Selection) -> pd.DataFrame:
    """What the numbers were made from: store versions, profile, scorer, and per model and condition
    the API model id and prompt hashes (one row per fact)."""
    from ..store import catalog

    versions = catalog.store_versions(src.store)
    flags = dataset_flags(src, sel.dataset)
    facts = [
        ("store", "name", store_name(src.path)),  # the name, never a folder of this machine
        ("store", "schema version", str(versions["schema_version"])),
        ("store", "data version", str(versions["data_version"])),
        ("selection", "dataset", f"{sel.dataset} ({flags.kind or 'dataset'}"
                                  + (", simulated" if flags.simulated else "")
                                  + (", published aggregates" if flags.aggregate_only else "") + ")"),
        ("selection", "profile", "published scores" if flags.aggregate_only else sel.profile),
        *([("selection", "profile version", _profile_version(src, sel))] if _profile_version(src, sel) else []),
        ("selection", "condition", sel.condition),
        ("selection", "respondents", data_label(src, sel).short() or "real models"),
        ("scoring", "scoring code", scorer_fingerprint()),
        *[("scoring", f"rule sets ({profile})", ", ".join(rules) or "—")
          for profile, rules in catalog.scorer_rule_sets(src.store, sel.dataset).items()],
        ("report", "generated", datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")),
    ]
    people = set(human_models(src, sel.dataset))
    if people and sel.humans:
        facts.append(("people", "respondents", f"{len(people)} people by pseudonym (model kind human), answer-only "
                                               "condition"))
    for run in catalog.run_provenance(src.store, sel.dataset).itertuples():
        if run.model in people:  # people are summed up in one line above, never listed
            continue
        facts.append(("model", f"{run.model} · {run.condition}",
                      f"API id {run.api_model_id or '—'} ({run.provider or '—'}); prompt {run.prompt_hashes}; "
                      f"{run.runs} run(s), {run.origin}"))
    return pd.DataFrame(facts, columns=["part", "name", "value"])
