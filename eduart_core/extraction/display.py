"""HTML fragments and queue filters for the review page (no Streamlit here).

Why in the library: the page stays thin and these pieces are testable. An item is drawn as a
student would see it (title, instruction, text, options, blanks) plus its gold answers; every node
whose path differs between the two extractions is highlighted, and inside a differing string the
characters that differ are marked (difflib), so a reviewer spots a dropped accent at a glance.
"""
from __future__ import annotations

import difflib
import html
import json
import math
from collections.abc import Iterable
from typing import Any

import pandas as pd

HIGHLIGHT = "background:#fff3bf;border-radius:4px;padding:1px 3px;"
MARK_A = "background:#ffc9c9;text-decoration:none;"
MARK_B = "background:#b2f2bb;text-decoration:none;"


def _visible(text: str, newlines: bool = True) -> str:
    """Escape, and make invisible differences visible: doubled spaces, nbsp, line breaks."""
    out = html.escape(text).replace("\u00a0", "⍽")
    return out.replace("\n", "↵<br>" if newlines else "<br>")


def char_marks(a: str, b: str, newlines: bool = True) -> tuple[str, str]:
    """HTML of a and b with the characters that differ marked (deleted in a, inserted in b).

    ``newlines=False`` draws line breaks as breaks (for values shown one entry per line)."""
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    left, right = [], []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        sa, sb = a[i1:i2], b[j1:j2]
        if op == "equal":
            left.append(_visible(sa, newlines))
            right.append(_visible(sb, newlines))
            continue
        if sa:
            shown = sa.replace(" ", "·").replace("\t", "→")
            left.append(f'<mark style="{MARK_A}">{_visible(shown, newlines)}</mark>')
        if sb:
            shown = sb.replace(" ", "·").replace("\t", "→")
            right.append(f'<mark style="{MARK_B}">{_visible(shown, newlines)}</mark>')
    return "".join(left), "".join(right)


def value_text(value: Any) -> str:
    """A value as the editor shows it: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=1)


def diff_pair_html(a: Any, b: Any) -> tuple[str, str]:
    """Both sides of one field difference, with character marks when both are strings."""
    if isinstance(a, str) and isinstance(b, str):
        return char_marks(a, b)
    if a is None or b is None:
        return (_visible(value_text(a)) if a is not None else "<i>(missing)</i>",
                _visible(value_text(b)) if b is not None else "<i>(missing)</i>")
    return char_marks(value_text(a), value_text(b))


def _leaf(value: Any, path: str, diffs: dict[str, dict], side: str) -> str:
    diff = diffs.get(path)
    if diff is None:
        return _visible(value_text(value)) if value is not None else ""
    if isinstance(diff["a"], str) and isinstance(diff["b"], str):
        marked = char_marks(diff["a"], diff["b"])[0 if side == "A" else 1]
    else:
        marked = _visible(value_text(value)) if value is not None else "<i>(missing)</i>"
    return f'<span style="{HIGHLIGHT}" title="{html.escape(path)} · {diff["category"]}">{marked}</span>'


def _block(inner: str, path: str, diffs: dict[str, dict]) -> str:
    if path in diffs:
        return (f'<div style="{HIGHLIGHT}" title="{html.escape(path)} · {diffs[path]["category"]}">'
                f'<small>{html.escape(path)} · {diffs[path]["category"]}</small><br>{inner}</div>')
    return inner


def _choices_html(record: dict, diffs: dict[str, dict], side: str) -> str:
    choices = record.get("choices")
    if not isinstance(choices, list) or not choices:
        return ""
    lines = []
    for index, choice in enumerate(choices):
        if isinstance(choice, dict):
            ident = str(choice.get("id"))
            if "options" in choice:
                options = choice.get("options") or []
                opts_path = f"choices[{ident}].options"
                shown = " / ".join(_leaf(o, f"{opts_path}[{i}]", diffs, side) for i, o in enumerate(options))
                lines.append(f"[{html.escape(ident)}] " + _block(shown, opts_path, diffs))
            else:
                lines.append(f"<b>{html.escape(ident)}.</b> " + _leaf(choice.get("text"), f"choices[{ident}].text",
                                                                     diffs, side))
        else:
            lines.append(f"{index + 1}. " + _leaf(choice, f"choices[{index}]", diffs, side))
    return _block("<br>".join(lines), "choices", diffs)


def _answers_html(record: dict, diffs: dict[str, dict], side: str) -> str:
    answers = record.get("answers")
    if not isinstance(answers, list):
        return _block(_visible(value_text(answers)), "answers", diffs)
    lines = []
    for index, answer in enumerate(answers):
        if not isinstance(answer, dict):
            lines.append(_leaf(answer, f"answers[{index}]", diffs, side))
            continue
        if "id" in answer:
            ident = str(answer["id"])
            parts = [f"{html.escape(str(k))}: " + _leaf(v, f"answers[{ident}].{k}", diffs, side)
                     for k, v in answer.items() if k != "id"]
            lines.append(f"<b>{html.escape(ident)}</b> → " + "; ".join(parts))
        else:
            parts = [f"{html.escape(str(k))}: " + _leaf(v, f"answers[{index}].{k}", diffs, side)
                     for k, v in answer.items()]
            lines.append("; ".join(parts))
    return _block("<br>".join(lines), "answers", diffs)


def item_html(record: dict | None, diffs: Iterable[dict], side: str) -> str:
    """One extraction drawn as an item, differing fields highlighted, characters marked."""
    if record is None:
        return "<i>No record: this extraction failed.</i>"
    by_path = {d["path"]: d for d in diffs}
    rows = [f"<small>type: {_leaf(record.get('type'), 'type', by_path, side)} · "
            f"language: {_leaf(record.get('language'), 'language', by_path, side)}</small>"]
    for field, tag in (("question_title", "b"), ("instructions", "i"), ("question_text", "span")):
        value = record.get(field)
        if value is not None or field in by_path:
            rows.append(f"<{tag}>{_leaf(value, field, by_path, side)}</{tag}>")
    choices = _choices_html(record, by_path, side)
    if choices:
        rows.append(choices)
    rows.append("<b>Gold:</b><br>" + _answers_html(record, by_path, side))
    return '<div style="line-height:1.6">' + "<br>".join(rows) + "</div>"


def filter_queue(queue: pd.DataFrame, *, categories: list[str] | None = None, fields: list[str] | None = None,
                 formats: list[str] | None = None, exercises: list[str] | None = None,
                 statuses: list[str] | None = None) -> pd.DataFrame:
    """Queue rows matching every given filter (a page matches a category if any field has it)."""
    if queue.empty:
        return queue
    keep = pd.Series(True, index=queue.index)
    if categories:
        keep &= queue["categories"].map(lambda cs: bool(set(cs) & set(categories)))
    if fields:
        keep &= queue["field_names"].map(lambda fs: bool(set(fs) & set(fields)))
    if formats:
        keep &= queue["format"].isin(formats)
    if exercises:
        keep &= queue["exercise"].isin(exercises)
    if statuses:
        keep &= queue["status"].isin(statuses)
    return queue[keep]



def diff_view(a: Any, b: Any, path: str, format_name: str) -> tuple[str, str]:
    """Both sides of a field in the item's words, differing characters marked and invisible
    ones made visible (the one place where whitespace is shown)."""
    from .editors import describe

    if a is None and b is None:
        return "<i>(absent)</i>", "<i>(absent)</i>"
    text_a, text_b = describe(a, path, format_name), describe(b, path, format_name)
    return char_marks(text_a, text_b, newlines=isinstance(a, str) and isinstance(b, str))


def zoomed_image_html(data: bytes, percent: int, max_height: str = "75vh") -> str:
    """A screenshot at ``percent`` of the column width inside a frame that scrolls both ways
    (an inline data URI: nothing is fetched from elsewhere)."""
    import base64

    kind = "jpeg" if data[:3] == b"\xff\xd8\xff" else "png"
    encoded = base64.b64encode(data).decode("ascii")
    return (f'<div style="overflow:auto;max-height:{max_height};border:1px solid #ddd;border-radius:4px">'
            f'<img alt="page screenshot" src="data:image/{kind};base64,{encoded}" '
            f'style="width:{int(percent)}%;max-width:none;display:block"></div>')


# --- decisions and agreement in the item's words (history, audit, agreement tables) ------------

def decision_words(action: str, shown_order: str | None = None, as_shown: bool = False) -> str:
    """A decision as a reviewer says it: "accepted A", "accepted B", "edited", "flagged".

    A and B name the extractors themselves; ``as_shown`` names the side the reviewer was shown
    instead (a blind reviewer reading their own decisions, ``shown_order`` "BA": A and B swapped)."""
    from .consensus import ACCEPT_A, ACCEPT_B, EDIT, FLAG

    if action in (ACCEPT_A, ACCEPT_B):
        side = "A" if action == ACCEPT_A else "B"
        if as_shown and shown_order == "BA":
            side = "B" if side == "A" else "A"
        return f"accepted {side}"
    return {EDIT: "edited", FLAG: "flagged"}.get(action, str(action))


def _value_words(value: Any, path: str, format_name: str) -> str:
    from .editors import describe

    if isinstance(value, float) and math.isnan(value):  # NaN: a flag's missing value in a frame
        value = None
    return "" if value is None else describe(value, path, format_name)


ROLE_WORDS = {"review": "reviewer", "adjudicate": "adjudicator"}
SOURCE_WORDS = {"page": "review page", "bulk": "bulk accept", "import": "imported file", "cli": "command line"}
HISTORY_COLUMNS = ["When", "Who", "As", "Field", "Decision", "Value", "Previous value", "Note", "Conflict"]


def _when(stamp: Any) -> str:
    if stamp is None or (isinstance(stamp, float) and math.isnan(stamp)):
        return ""
    try:
        return pd.Timestamp(stamp).strftime("%Y-%m-%d %H:%M:%S")
    except (ValueError, TypeError):
        return str(stamp)


def history_table(decisions: list[dict], format_name: str, as_shown: bool = False) -> pd.DataFrame:
    """Decisions on one page as the history shows them: the card's field names, "accepted B",
    the values as the editors show them, the value before the decision, plain words throughout.

    ``as_shown``: name the sides as the reviewer was shown them (a blind reviewer's own history)."""
    from .editors import field_label

    rows = []
    for d in sorted(decisions, key=lambda d: int(d["decision_id"])):
        path = d["path"]
        flagged = d["action"] == "flag"
        rows.append({"When": _when(d.get("decided_at")), "Who": str(d.get("reviewer") or ""),
                     "As": ROLE_WORDS.get(d.get("role") or "review", str(d.get("role"))),
                     "Field": field_label(path, format_name),
                     "Decision": decision_words(d["action"], d.get("shown_order"), as_shown),
                     "Value": "" if flagged else _value_words(d.get("new_value"), path, format_name),
                     "Previous value": _value_words(d.get("previous_value"), path, format_name),
                     "Note": str(d.get("note") or ""),
                     "Conflict": "yes: goes to the adjudicator" if _truthy(d.get("conflict")) else ""})
    return pd.DataFrame(rows, columns=HISTORY_COLUMNS)


def _truthy(value: Any) -> bool:
    return bool(value) and not (isinstance(value, float) and math.isnan(value))


AUDIT_COLUMNS = ["When", "Dataset", "Page", "Round", "Who", "As", "Field", "Decision", "Value", "Previous value",
                 "Note", "From", "Conflict"]


def audit_table(rows: list[dict]) -> pd.DataFrame:
    """The audit log of review decisions in words: one row per decision (``rows`` carry the
    stored decision plus ``dataset``, ``format`` and ``own_blind`` (a blind reviewer's own
    decision, whose sides are named as they were shown))."""
    from .editors import field_label

    out = []
    for d in rows:
        path, fmt = d["path"], str(d.get("format") or "")
        words = decision_words(d["action"], d.get("shown_order"))
        shown = decision_words(d["action"], d.get("shown_order"), as_shown=True)
        if d.get("own_blind") and shown != words:
            words += f" (shown to you as {shown.removeprefix('accepted ')})"
        out.append({"When": _when(d.get("decided_at")), "Dataset": str(d.get("dataset") or ""),
                    "Page": str(d["page_id"]), "Round": str(int(d["round"])), "Who": str(d.get("reviewer") or ""),
                    "As": ROLE_WORDS.get(d.get("role") or "review", str(d.get("role"))),
                    "Field": field_label(path, fmt), "Decision": words,
                    "Value": "" if d["action"] == "flag" else _value_words(d.get("new_value"), path, fmt),
                    "Previous value": _value_words(d.get("previous_value"), path, fmt),
                    "Note": str(d.get("note") or ""),
                    "From": SOURCE_WORDS.get(d.get("source") or "page", str(d.get("source"))),
                    "Conflict": "yes: goes to the adjudicator" if _truthy(d.get("conflict")) else ""})
    return pd.DataFrame(out, columns=AUDIT_COLUMNS)
