"""An exam card as one self-contained HTML page (no scripts, no outside links).

Why HTML rather than Markdown: names of models, datasets, judges and errata come from data, and
HTML escaping (`html.escape` on every value) is the one complete way to keep them text; the page
opens offline in any browser. Scores are printed as percentages with one decimal (`rounding`); the
exact fractions are in the card's JSON beside it.
"""
from __future__ import annotations

import html
import json
from typing import Any

from ..rounding import fmt, fmt_percent

STYLE = ("body{font-family:system-ui,sans-serif;max-width:70em;margin:2em auto;padding:0 1em;color:#222}"
         "table{border-collapse:collapse;margin:.5em 0 1.5em}td,th{border:1px solid #ccc;padding:.2em .5em;"
         "text-align:left}td.n{text-align:right}p.what{color:#555;font-size:.9em}")


def _text(value: Any) -> str:
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, (list, tuple)):
        return html.escape(", ".join(json.dumps(v, ensure_ascii=False, sort_keys=True) if isinstance(v, dict)
                                     else str(v) for v in value))
    if isinstance(value, dict):
        return html.escape(json.dumps(value, ensure_ascii=False, sort_keys=True))
    return html.escape(str(value))


def _cell(column: str, value: Any) -> str:
    if isinstance(value, float) and column in PERCENT_COLUMNS:
        return f"<td class='n'>{html.escape(fmt_percent(value))}</td>"
    if isinstance(value, float):
        return f"<td class='n'>{html.escape(fmt(value, 3))}</td>"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"<td class='n'>{value}</td>"
    return f"<td>{_text(value)}</td>"


#: Columns holding fractions, printed as percentages.
PERCENT_COLUMNS = {"mean", "ci_low", "ci_high", "macro", "macro_ci_low", "macro_ci_high", "micro"}


def table(rows: list[dict[str, Any]], columns: list[str] | None = None) -> str:
    """Rows of a card section as an HTML table (every value escaped); "none" when there are none."""
    if not rows:
        return "<p>none</p>"
    columns = columns or list(rows[0])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(_cell(c, r.get(c)) for c in columns) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _facts(pairs: list[tuple[str, Any]]) -> str:
    return table([{"fact": name, "value": _text(value) if not isinstance(value, (int, float)) else value}
                  for name, value in pairs])


def _section(title: str, what: str | None, body: str) -> str:
    words = f"<p class='what'>{html.escape(what)}</p>" if what else ""
    return f"<h2>{html.escape(title)}</h2>{words}{body}"


def _model_rows(card: dict[str, Any]) -> list[dict[str, Any]]:
    keep = ["model", "kind", "provider", "api_model_id", "asked_first", "asked_last", "conditions", "repeats", "runs",
            "sampling", "prompt_hashes"]
    return [{k: m.get(k) for k in keep} for m in card["models"]]


def render_page(card: dict[str, Any]) -> str:
    """The card as an HTML document (UTF-8 text)."""
    data, bank, scoring = card["dataset"], card["item_bank"], card["scoring"]
    parts = [f"<h1>Exam card: {_text(data['title'])}</h1>",
             f"<p>Dataset {_text(data['name'])} ({_text(data['kind'])}); respondents: {_text(card['respondents'])}; "
             f"made {_text(card['generated_at'])} by {_text(card['generator'])}.</p>"]
    if scoring.get("warning"):
        parts.append(f"<p><strong>{_text(scoring['warning'])}</strong></p>")
    parts.append(_section("Item bank", bank["hash_of"], _facts([
        ("items", bank["size"]), ("sha256", bank["sha256"]), ("variant items by kind", bank.get("variants")),
        ("frozen bank versions", [v.get("version") for v in bank["frozen_versions"]])])))
    parts.append(_section("Formats", "items per format", table(card["formats"])))
    parts.append(_section("Languages", "items per language", table(card["languages"])))
    parts.append(_section("Scoring", "profile, its version, and the code that scored the answers", _facts([
        ("profile", scoring["profile"]), ("profile version", scoring["profile_version"]),
        ("scorer version", scoring["scorer_version"]), ("rule sets", scoring["rule_sets"]),
        ("prompt hashes", card["prompt_hashes"])])))
    parts.append(_section("Models", "provider, API model id, when asked (first start, last finish, UTC), "
                                    "repeats (distinct repetitions), runs, sampling settings", table(_model_rows(card))))
    parts.append(_section("Overall", card["overall"]["what"] + "; shown in percent", table(card["overall"]["rows"])))
    parts.append(_section("Scores per format", card["scores"]["what"] + "; shown in percent",
                          table(card["scores"]["rows"])))
    if card.get("judge"):
        judge = card["judge"]
        parts.append(_section(f"Judge calibration: {judge['profile']}", judge.get("what") or judge.get("note"),
                              table(judge["calibration"])))
    if card.get("human_baseline"):
        parts.append(_section("Human baseline", card["human_baseline"]["what"] + "; shown in percent",
                              table(card["human_baseline"]["rows"])))
    errata = card["errata"]
    parts.append(_section("Errata", f"scores computed under: {errata['current']}", table(errata["releases"])))
    canary = card.get("canary")
    parts.append(_section("Canary", "the store's canary line, carried by every export of its items",
                          f"<p><code>{_text(canary['line'])}</code></p>" if canary else
                          "<p>no item export has made a canary for this store yet</p>"))
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>Exam card: {_text(data['name'])}</title><style>{STYLE}</style></head><body>"
            + "".join(parts) + "</body></html>\n")
