"""Score one model answer against one item's gold, under the `strict` or the `paper` profile.

Why two profiles: `paper` reproduces the published numbers bit for bit, flaws included (several
ids on a radio item still earn 1, an unparseable true/false answer earns the share of false
statements, open completion is exact match); `strict` is the corrected default. Keeping both
lets the product show how much the choice of rules moves each model.

Only `type`, `answers` and, where the format uses them, `choices` of the item are needed, so
defective imported records are still scored wherever the rules allow. Everything per call is
plain dict/set work with cached normalisations, because the store rescoring runs tens of
thousands of calls.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from rapidfuzz import fuzz

from eduart_core import paper
from eduart_core.answers import ParsedAnswer, StoredAnswer, parse_answer, parse_answer_paper
from eduart_core.items import Item, keyed_answers
from eduart_core.text import norm_id, norm_strict
from eduart_core.vocab import DEFAULT_PROFILE, EDUART_FORMATS, PAPER_PROFILE, PROFILES

__all__ = ["ItemScore", "score_item"]


_TRUE_WORDS = frozenset({"true", "vero", "t", "v", "1"})
_FALSE_WORDS = frozenset({"false", "falso", "f", "0"})
_VERDICT_MARKS = frozenset({"true", "false", "vero", "falso"})
_SELECTED_MARKS = frozenset({"true", "vero"})


@dataclass(frozen=True)
class ItemScore:
    """`score` in [0, 1]; `correct` is the binary outcome (score >= 0.5) used by the statistics.

    `details` has one dict per scored element: `element` (id or error), `expected`, `given`,
    `right`. `parse_error` is set when the answer could not be read as an `Answers` list.
    """

    score: float
    correct: bool
    details: list[dict] = field(default_factory=list)
    parse_error: str | None = None
    profile: str = DEFAULT_PROFILE


# ---------------------------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------------------------

def _gold_of(item: Item | Mapping[str, Any]) -> tuple[str, list[dict]]:
    """(type, gold answer entries) from an Item or a bare record dict."""
    if isinstance(item, Item):
        return item.type, [a for a in item.answers if isinstance(a, dict)]
    item_type = item.get("type")
    answers = keyed_answers(str(item_type), item.get("answers"))
    if not isinstance(answers, list):
        answers = []
    return str(item_type), [a for a in answers if isinstance(a, dict)]


def _entries(values: list) -> list[dict]:
    """Object entries with lower-cased keys (model output varies `ID`/`Text`)."""
    return [{(k.lower() if isinstance(k, str) else k): v for k, v in e.items()}
            for e in values if isinstance(e, dict)]


def _strict_prediction(answer: Any) -> tuple[list[dict] | None, str | None]:
    if isinstance(answer, ParsedAnswer):
        return (_entries(answer.answers) if answer.answers is not None else None), \
            (answer.parse_error if answer.answers is None else None)
    if isinstance(answer, list):
        return _entries(answer), None
    parsed = parse_answer(answer)
    if parsed.answers is None:
        return None, parsed.parse_error or "no Answers list"
    return parsed.answers, None


def _paper_llm_answer(answer: Any) -> Any:
    """The `llm_answer` the published step 2 scores (see `StoredAnswer` and `parse_answer_paper`)."""
    if isinstance(answer, StoredAnswer):
        return answer.value
    if isinstance(answer, ParsedAnswer):  # our lenient parse: its list, else nothing usable
        return answer.answers if answer.answers is not None else ""
    return parse_answer_paper(answer)


def _text(entry: Mapping[str, Any]) -> Any:
    """A blank's or verdict's predicted text: `text`, else `description`."""
    value = entry.get("text")
    return entry.get("description") if value is None else value


def _gold_text(entry: Mapping[str, Any]) -> Any:
    value = entry.get("description")
    return entry.get("text") if value is None else value


def _f1(predicted: set, gold: set) -> float:
    if not predicted and not gold:
        return 1.0
    if not predicted or not gold:
        return 0.0
    return 2 * len(predicted & gold) / (len(predicted) + len(gold))


def _selection_details(predicted: set[str], gold: set[str]) -> list[dict]:
    return [{"element": ident, "expected": ident in gold, "given": ident in predicted,
             "right": (ident in gold) == (ident in predicted)}
            for ident in sorted(predicted | gold)]


def _selected_ids(pred: list[dict], norm: Callable[[Any], str]) -> set[str]:
    """Check answers: when any entry carries a TRUE/FALSE mark, only TRUE/VERO entries count."""
    marked = any(norm(e.get("text")) in _VERDICT_MARKS for e in pred)
    return {norm_id(e.get("id")) for e in pred
            if norm_id(e.get("id")) and (not marked or norm(e.get("text")) in _SELECTED_MARKS)}


# ---------------------------------------------------------------------------------------------
# paper profile: the published rules, quirks included
# ---------------------------------------------------------------------------------------------

def _radio(gold: list[dict], pred: list[dict], *, only_one: bool) -> tuple[float, list[dict]]:
    """Strict gives the point only when the gold id is the one id given."""
    expected = norm_id(gold[0].get("id")) if gold else ""
    given = sorted({norm_id(e.get("id")) for e in pred} - {""})
    right = bool(expected) and (given == [expected] if only_one else expected in given)
    return float(right), [{"element": "answer", "expected": expected, "given": given,
                           "right": right}]


def _check(gold: list[dict], pred: list[dict], norm: Callable[[Any], str]) -> tuple[float, list[dict]]:
    gold_ids = {norm_id(a.get("id")) for a in gold} - {""}
    predicted = _selected_ids(pred, norm)
    return _f1(predicted, gold_ids), _selection_details(predicted, gold_ids)


def _paper_radio(gold: list[dict], llm: Any) -> tuple[float, list[dict]]:
    """1 when the (first) gold id is among the ids given: several options still earn 1."""
    expected = paper.gold_id(gold)
    given = sorted(set(paper.answer_ids(llm)))
    right = bool(expected) and expected in given
    return float(right), [{"element": "answer", "expected": expected,
                           "given": given if isinstance(llm, list) else None, "right": right}]


def _paper_check(gold: list[dict], llm: Any) -> tuple[float, list[dict]]:
    gold_ids = set(paper.answer_ids(gold))
    predicted = paper.checked_ids(llm)
    details = _selection_details(predicted, gold_ids)
    if not isinstance(llm, list):
        details = [{**d, "given": None} for d in details]
    return paper.f1(predicted, gold_ids), details


def _paper_true_false(gold: list[dict], llm: Any) -> tuple[float, list[dict]]:
    """Share of gold statements whose truth is matched; missing or unrecognised reads false."""
    given = paper.text_map(llm)
    details = []
    for ident, gold_text in paper.text_map(gold).items():
        expected = paper.norm(gold_text) in paper.TRUE_WORDS
        said = given.get(ident)
        verdict = paper.norm(said or "") in paper.TRUE_WORDS
        details.append({"element": ident, "expected": expected, "given": said,
                        "right": verdict == expected})
    return paper.share(sum(d["right"] for d in details), len(details)), details


def _paper_blanks(gold: list[dict], llm: Any) -> tuple[float, list[dict]]:
    """Share of gold ids whose normalised predicted text equals the gold's; no fuzzy matching."""
    given = paper.text_map(llm)
    details = []
    for ident, expected in paper.text_map(gold).items():
        said = given.get(ident)
        right = paper.norm(said or "") == paper.norm(expected)
        details.append({"element": ident, "expected": expected, "given": said, "right": right})
    return paper.share(sum(d["right"] for d in details), len(details)), details


def _paper_select_errors(gold: list[dict], llm: Any) -> tuple[float, list[dict]]:
    """F1 of normalised errors: a list gives one per object entry, a string is one prediction."""
    gold_set = {paper.norm(a.get("error")) for a in gold if a.get("error")}
    if isinstance(llm, list):
        predicted = {paper.norm(paper.truthy_text(e, ("text", "error", "description")))
                     for e in llm if isinstance(e, dict)}
    elif isinstance(llm, str):
        predicted = {paper.norm(llm)}
    else:
        predicted = set()
    details = [{"element": g, "expected": g, "given": g if g in predicted else None,
                "right": g in predicted} for g in sorted(gold_set)]
    details += [{"element": "extra", "expected": None, "given": p, "right": False}
                for p in sorted(predicted - gold_set)]
    return paper.f1(predicted, gold_set), details


_PAPER_SCORERS: dict[str, Callable[[list[dict], Any], tuple[float, list[dict]]]] = {
    "multiple_choice_radio": _paper_radio,
    "multiple_choice_check": _paper_check,
    "true_false": _paper_true_false,
    "positioning": _paper_blanks,
    "completion_closed": _paper_blanks,
    "completion_open": _paper_blanks,
    "select_errors": _paper_select_errors,
}


def _score_paper(item_type: str, gold: list[dict], answer: Any) -> tuple[float, list, str | None]:
    """Published step 1 (unless the answer is a stored llm_answer), then step 2."""
    llm = _paper_llm_answer(answer)
    score, details = _PAPER_SCORERS[item_type](gold, llm)
    return score, details, paper.unparsed_error(llm)


# ---------------------------------------------------------------------------------------------
# strict profile: the corrected default
# ---------------------------------------------------------------------------------------------

def _grouped(pred: list[dict]) -> dict[str, list]:
    """Predicted texts per id; several different texts for one id make that element wrong."""
    out: dict[str, list] = {}
    for e in pred:
        ident = norm_id(e.get("id"))
        if ident:
            out.setdefault(ident, []).append(_text(e))
    return out


def _verdict(value: Any) -> bool | None:
    word = norm_strict(value)
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    return None


def _strict_true_false(gold: list[dict], pred: list[dict]) -> tuple[float, list[dict]]:
    given = _grouped(pred)
    details = []
    for a in gold:
        ident = norm_id(a.get("id"))
        expected = _verdict(a.get("text"))
        said = given.get(ident, [])
        verdicts = {_verdict(s) for s in said}
        verdict = verdicts.pop() if len(verdicts) == 1 else None
        details.append({"element": ident, "expected": expected,
                        "given": said[0] if len(said) == 1 else (said or None),
                        "right": expected is not None and verdict == expected})
    return _share(details), details


def _strict_blanks(gold: list[dict], pred: list[dict], fuzzy_threshold: float | None
                   ) -> tuple[float, list[dict]]:
    given = _grouped(pred)
    details = []
    for a in gold:
        ident = norm_id(a.get("id"))
        expected = _gold_text(a)
        said = given.get(ident, [])
        forms = {norm_strict(s) for s in said}
        target = norm_strict(expected)
        detail = {"element": ident, "expected": expected,
                  "given": said[0] if len(said) == 1 else (said or None), "right": False}
        if len(forms) == 1 and target:
            form = next(iter(forms))
            if form == target:
                detail["right"] = True
            elif fuzzy_threshold is not None and form:
                similarity = fuzz.ratio(form, target)
                detail["similarity"] = round(similarity, 1)
                detail["right"] = similarity >= fuzzy_threshold
        details.append(detail)
    return _share(details), details


def _span_target(span: str, golds: list[str]) -> str | None:
    """The gold error a predicted span stands for, under the span rule, or None."""
    if span in golds:
        return span
    padded = f" {span} "
    inside = [g for g in golds if f" {g} " in padded]
    if len(inside) != 1:
        return None
    if len(span.split()) - len(inside[0].split()) > 3:
        return None
    return inside[0]


def _strict_select_errors(gold: list[dict], pred: list[dict]) -> tuple[float, list[dict]]:
    golds = sorted({norm_strict(a.get("error")) for a in gold} - {""})
    spans: dict[str, Any] = {}
    for e in pred:
        value = e.get("text")
        if value is None:
            value = e.get("error")
        if value is None:
            value = e.get("description")
        form = norm_strict(value)
        if form:
            spans.setdefault(form, value)
    matched: dict[str, Any] = {}  # gold -> the first span that found it
    extra: list[Any] = []
    for form, original in spans.items():
        target = _span_target(form, golds)
        if target is not None and target not in matched:
            matched[target] = original
        else:
            extra.append(original)
    details = [{"element": g, "expected": g, "given": matched.get(g), "right": g in matched}
               for g in golds]
    details += [{"element": "extra", "expected": None, "given": x, "right": False} for x in extra]
    if not golds and not spans:
        return 1.0, details
    if not golds or not spans:
        return 0.0, details
    return 2 * len(matched) / (len(golds) + len(spans)), details


def _score_strict(item_type: str, gold: list[dict], answer: Any, fuzzy_threshold: float
                  ) -> tuple[float, list, str | None]:
    pred, error = _strict_prediction(answer)
    if pred is None:
        return 0.0, _missing_details(item_type, gold), error
    if item_type == "multiple_choice_radio":
        score, details = _radio(gold, pred, only_one=True)
    elif item_type == "multiple_choice_check":
        score, details = _check(gold, pred, norm_strict)
    elif item_type == "true_false":
        score, details = _strict_true_false(gold, pred)
    elif item_type == "select_errors":
        score, details = _strict_select_errors(gold, pred)
    else:
        threshold = fuzzy_threshold if item_type == "completion_open" else None
        score, details = _strict_blanks(gold, pred, threshold)
    return score, details, None


# ---------------------------------------------------------------------------------------------
# Shared helpers and the entry point
# ---------------------------------------------------------------------------------------------

def _share(details: list[dict]) -> float:
    return sum(d["right"] for d in details) / len(details) if details else 0.0


def _missing_details(item_type: str, gold: list[dict]) -> list[dict]:
    """Details of an unparseable answer: every gold element expected, nothing given."""
    if item_type == "select_errors":
        return [{"element": a.get("error"), "expected": a.get("error"), "given": None,
                 "right": False} for a in gold]
    if item_type == "multiple_choice_radio":
        return [{"element": "answer", "expected": norm_id(gold[0].get("id")) if gold else "",
                 "given": None, "right": False}]
    if item_type == "multiple_choice_check":
        return [{"element": norm_id(a.get("id")), "expected": True, "given": None,
                 "right": False} for a in gold]
    if item_type == "true_false":
        return [{"element": norm_id(a.get("id")), "expected": _verdict(a.get("text")),
                 "given": None, "right": False} for a in gold]
    return [{"element": norm_id(a.get("id")), "expected": _gold_text(a), "given": None,
             "right": False} for a in gold]


def score_item(item: Item | Mapping[str, Any], answer: Any, profile: str = DEFAULT_PROFILE, *,
               fuzzy_threshold: float = 90) -> ItemScore:
    """Score `answer` (raw response string, dict with `Answers`, the Answers list, or a
    `ParsedAnswer`) against `item` (an `Item` or a record dict) under `profile`.

    Under `paper`, a string is a raw response (published step 1 parses it, then step 2
    scores); an imported `llm_answer` is passed as `StoredAnswer(value)` and scored exactly as
    stored, never re-parsed (a bare list is taken as an `llm_answer` too). Raises ValueError
    only for an unknown profile or item type (a programming or data error, never a model's).
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown scoring profile {profile!r}; use one of {', '.join(PROFILES)}")
    item_type, gold = _gold_of(item)
    if item_type not in EDUART_FORMATS:
        raise ValueError(f"cannot score an item of unknown type {item_type!r}")
    if profile == PAPER_PROFILE:
        score, details, error = _score_paper(item_type, gold, answer)
    else:
        score, details, error = _score_strict(item_type, gold, answer, fuzzy_threshold)
    return ItemScore(score=score, correct=score >= 0.5, details=details, parse_error=error,
                     profile=profile)
