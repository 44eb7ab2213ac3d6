"""Formats whose question_text holds blank markers [A], [B], ...: positioning, completion_closed,
completion_open. Each blank is scored on its own; the item score is the share of blanks right."""
from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from rapidfuzz import fuzz

import eduart_core.formats.common as common

from .. import paper
from ..text import norm_id, norm_strict
from ..vocab import COMPLETION_CLOSED_TYPE, COMPLETION_OPEN_TYPE, POSITIONING_TYPE
from .answer_words import BlankDisplay
from .base import AnswerFormat, ScoringOptions, StrictInput
from .common import Problems
from .levels import SHARE_RULE, share_levels
from .simulation import PRODUCTION, WRONG_WORDS, letters, misspell, pick, strip_accents

_BLANK = re.compile(r"\[([A-Z])\]")
_WORD = re.compile(r"\w{3,}", re.UNICODE)


def chance_blank_ids(item: Mapping[str, Any]) -> list[str]:
    """Blanks the chance model fills: markers of the text, else the gold ids."""
    ids = _BLANK.findall(item.get("question_text") or "")
    if not ids:
        ids = [a.get("id") for a in item.get("answers") or [] if isinstance(a, dict) and a.get("id")]
    return list(dict.fromkeys(ids))


def passage_words(item: Mapping[str, Any]) -> list[str]:
    """Words of the passage itself (what a chance answer to a free-text blank can guess)."""
    return _WORD.findall(_BLANK.sub(" ", item.get("question_text") or "")) or ["?"]


class BlankFormat(AnswerFormat):
    """Blank markers in question_text, one gold term per blank."""

    #: strict completion_open allows near misses (rapidfuzz ratio >= fuzzy_threshold)
    fuzzy = False
    level_rule = SHARE_RULE.format(k="k", parts="blanks")
    partial_credit = True
    #: a person fills each blank of the text (the key editor's blanks, started empty)
    respondent = {"fields": {"id": "id", "text": "description"}}
    blank_key = True
    answer_words = BlankDisplay()
    sim_reasons = "blanks"

    def sim_plan(self, record: Mapping[str, Any]) -> dict:
        return {"blanks": [(str(a["id"]).strip().upper(), str(a.get("description", "")))
                           for a in record.get("answers") or []]}

    def simulate_answers(self, plan: Any, p: float, draws: Any, model: Any, shared: random.Random) -> list[dict]:
        """Each blank: its term when known (`sim_known`), a guess otherwise (`sim_guess`)."""
        out = []
        golds = [g for _, g in plan.blanks]
        for bid, gold in plan.blanks:
            u, w, g = draws.next()
            text = self.sim_known(gold, g) if u < p else self.sim_guess(plan, bid, gold, golds, w, g)
            out.append({"id": bid, "text": text})
        return out

    def sim_known(self, gold: str, g: float) -> str:
        """What a respondent who knows the term writes."""
        return gold

    def sim_guess(self, plan: Any, bid: str, gold: str, golds: list[str], w: float, g: float) -> str:
        """What a respondent who does not know the term writes."""
        return gold

    def score_parts(self, record: Mapping[str, Any]) -> int:
        """Each blank earns credit on its own."""
        return max(1, len(self.gold(record)))

    def score_levels(self, scores, parts):
        return share_levels(scores, parts)

    def validate(self, rec: dict, out: Problems) -> None:
        qt, answers = rec["question_text"], rec["answers"]
        if not common.nonempty_str(qt):
            out.add("question_text", f"{self.name} needs a question_text with blank markers")
            counts: dict[str, int] = {}
        else:
            counts = common.marker_counts(qt)
            if not counts:
                out.add("question_text", "no blank markers like [A] found")
            for ident, n in counts.items():
                if n > 1:
                    out.add("question_text", f"blank marker [{ident}] occurs {n} times (must be once)")
        answer_ids = common.check_ids(answers, "answers", out)
        for i, a in enumerate(answers):
            if isinstance(a, dict) and not common.nonempty_str(a.get("description")):
                out.add(f"answers[{common.entry_label(a, i)}].description", "missing answer term")
        if isinstance(qt, str):
            for ident in answer_ids:
                if ident not in counts:
                    out.add(f"answers[{ident}]", f"blank [{ident}] has no marker in question_text")
            for ident in counts:
                if ident not in answer_ids:
                    out.add("question_text", f"blank marker [{ident}] has no answer")
        self.validate_choices(rec, answers, counts, out)

    def validate_choices(self, rec: dict, answers: list, counts: dict[str, int], out: Problems) -> None:
        """Per-format checks of `choices` (word bank, two options per blank, none)."""

    def score_strict(self, record, gold, given: StrictInput, options: ScoringOptions):
        if given.entries is None:
            return 0.0, common.missing_blanks(gold), given.error
        threshold = options.fuzzy_threshold if self.fuzzy else None
        by_id = common.grouped(given.entries)
        details = []
        for a in gold:
            ident = norm_id(a.get("id"))
            expected = common.gold_text(a)
            said = by_id.get(ident, [])
            forms = {norm_strict(s) for s in said}
            target = norm_strict(expected)
            detail = {"element": ident, "expected": expected,
                      "given": said[0] if len(said) == 1 else (said or None), "right": False}
            if len(forms) == 1 and target:
                form = next(iter(forms))
                if form == target:
                    detail["right"] = True
                elif threshold is not None and form:
                    similarity = fuzz.ratio(form, target)
                    detail["similarity"] = round(similarity, 1)
                    detail["right"] = similarity >= threshold
            details.append(detail)
        return common.share(details), details, None

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        """Share of gold ids whose normalised predicted text equals the gold's; no fuzzy matching."""
        given = paper.text_map(llm)
        details: list[dict[str, Any]] = []
        for ident, expected in paper.text_map(gold).items():
            said = given.get(ident)
            right = paper.norm(said or "") == paper.norm(expected)
            details.append({"element": ident, "expected": expected, "given": said, "right": right})
        return paper.share(sum(d["right"] for d in details), len(details)), details, self.paper_error(llm)

    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        return [{"element": norm_id(a.get("id")), "text": "", "gold": common.gold_text(a)}
                for a in self.gold(record)]


class Positioning(BlankFormat):
    name = POSITIONING_TYPE
    profile_rules = "Both require the right term in each blank; they differ in how unreadable output is handled."
    site = {"body": "bank", "key": "blanks", "choices": "bank"}
    sim_skill = PRODUCTION
    synthetic_parts = 4
    synthetic_shift = -0.2
    sim_topic = {"it": "il posto giusto di ciascun termine", "en": "the right place for each term"}
    word_bank = True
    #: the review page's editor: which widget edits each field (plain data, see extraction.editors)
    editor = {"format": POSITIONING_TYPE, "fields": [
        {"path": "choices", "widget": "word_bank", "label": "Word bank"},
        {"path": "answers", "widget": "blanks", "label": "Term in each blank"},
    ]}

    def validate_choices(self, rec, answers, counts, out: Problems) -> None:
        choices = rec["choices"]
        if not isinstance(choices, list) or not choices:
            out.add("choices", "positioning needs a non-empty word bank (list of terms)")
            return
        bank = set()
        for i, term in enumerate(choices):
            if not common.nonempty_str(term):
                out.add(f"choices[{i}]", "word bank entries must be non-empty strings")
            else:
                bank.add(norm_strict(term))
        for i, a in enumerate(answers):
            if isinstance(a, dict) and common.nonempty_str(a.get("description")) \
                    and norm_strict(a["description"]) not in bank:
                out.add(f"answers[{common.entry_label(a, i)}].description",
                        f"term {a['description']!r} is not in the word bank")

    def choice_lines(self, record: Mapping[str, Any]) -> list[str]:
        choices = record.get("choices")
        if not isinstance(choices, list):
            return []
        return [f"{n}. {term}" for n, term in enumerate(choices, start=1)]

    def chance(self, record: Mapping[str, Any]) -> float | None:
        bank = [norm_strict(t) for t in record.get("choices") or []]
        gold = self.gold(record)
        if not bank or not gold:
            return None
        return sum(bank.count(norm_strict(common.gold_text(a))) / len(bank) for a in gold) / len(gold)

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        bank = [str(c) for c in record.get("choices") or []]
        return [{"id": b, "text": rng.choice(bank)} for b in chance_blank_ids(record)] if bank else []

    def screenshot_lines(self, record: Mapping[str, Any]) -> list[str]:
        return ["Termini:  " + "  ·  ".join(str(c) for c in record.get("choices") or [])]

    def sim_plan(self, record: Mapping[str, Any]) -> dict:
        return {**super().sim_plan(record), "bank": [str(term) for term in record.get("choices") or []]}

    def sim_guess(self, plan: Any, bid: str, gold: str, golds: list[str], w: float, g: float) -> str:
        """Another term of the word bank."""
        return pick(plan.bank or golds, w, gold) or gold

    def placeholder(self, tag: str, rng: random.Random) -> dict:
        ids = letters(3)
        terms = [f"term{tag}{i.lower()}" for i in ids]
        bank = terms + [f"distractor{tag}x", f"distractor{tag}y"]
        rng.shuffle(bank)
        return {"question_text": f"Synthetic item {tag}: place [A], then [B], and finally [C].", "choices": bank,
                "answers": [{"id": i, "description": t} for i, t in zip(ids, terms)]}


class CompletionClosed(BlankFormat):
    name = COMPLETION_CLOSED_TYPE
    profile_rules = ("Both require the right alternative in each blank; they differ in how unreadable "
                     "output is handled.")
    site = {"body": "select", "key": "blanks", "choices": "options"}
    sim_difficulty = 0.2
    synthetic_parts = 3
    synthetic_shift = -1.2
    sim_reasons = "choice"
    sim_topic = {"it": "l'alternativa giusta per ogni spazio", "en": "the right alternative for each blank"}
    #: the review page's editor: which widget edits each field (plain data, see extraction.editors)
    editor = {"format": COMPLETION_CLOSED_TYPE, "fields": [
        {"path": "choices", "widget": "alternatives", "label": "Alternatives per blank"},
        {"path": "answers", "widget": "blank_choice", "label": "Right alternative per blank"},
        {"path": "answers[*].description", "widget": "option_pick", "label": "Right alternative"},
    ]}

    def validate_choices(self, rec, answers, counts, out: Problems) -> None:
        choices = rec["choices"]
        if not isinstance(choices, list) or not choices:
            out.add("choices", "completion_closed needs one {id, options} entry per blank")
            return
        options_by_id: dict[str, Any] = {}
        for ident in common.check_ids(choices, "choices", out):
            options_by_id[ident] = next(c.get("options") for c in choices
                                        if isinstance(c, dict) and c.get("id") == ident)
        for ident, options in options_by_id.items():
            if not isinstance(options, list) or len(options) != 2 \
                    or not all(isinstance(o, str) for o in options):
                out.add(f"choices[{ident}].options", "each blank needs exactly 2 text options")
                options_by_id[ident] = []
            if counts and ident not in counts:
                out.add(f"choices[{ident}]", f"blank [{ident}] has no marker in question_text")
        for ident in counts:
            if ident not in options_by_id:
                out.add(f"choices[{ident}]", f"blank [{ident}] has no options")
        for a in answers:
            if not isinstance(a, dict) or not isinstance(a.get("id"), str):
                continue
            options = options_by_id.get(a["id"])
            if options and common.nonempty_str(a.get("description")) \
                    and norm_strict(a["description"]) not in {norm_strict(o) for o in options}:
                out.add(f"answers[{a['id']}].description",
                        f"{a['description']!r} is not one of the options {options}")

    def chance(self, record: Mapping[str, Any]) -> float | None:
        options = {norm_id(c.get("id")): [norm_strict(o) for o in c.get("options") or []]
                   for c in record.get("choices") or [] if isinstance(c, dict)}
        gold = self.gold(record)
        shares = [opts.count(norm_strict(common.gold_text(a))) / len(opts)
                  for a in gold for opts in [options.get(norm_id(a.get("id"))) or []] if opts]
        return sum(shares) / len(gold) if gold and shares else None

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        return [{"id": c["id"], "text": rng.choice(c.get("options") or [""])} for c in record.get("choices") or []]

    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        options = {norm_id(c.get("id")): c.get("options") or []
                   for c in record.get("choices") or [] if isinstance(c, dict)}
        return [{"element": norm_id(a.get("id")), "text": " / ".join(map(str, options.get(norm_id(a.get("id")), []))),
                 "gold": common.gold_text(a)} for a in self.gold(record)]

    def screenshot_lines(self, record: Mapping[str, Any]) -> list[str]:
        return [f"[{c.get('id')}]   {' / '.join(str(o) for o in c.get('options') or [])}"
                for c in record.get("choices") or [] if isinstance(c, dict)]

    def sim_plan(self, record: Mapping[str, Any]) -> dict:
        return {**super().sim_plan(record),
                "alternatives": {str(c["id"]).strip().upper(): [str(o) for o in c.get("options", [])]
                                 for c in record.get("choices") or []}}

    def sim_guess(self, plan: Any, bid: str, gold: str, golds: list[str], w: float, g: float) -> str:
        """One of the blank's two alternatives, by a coin."""
        alts = plan.alternatives.get(bid) or [gold]
        return gold if g < 0.5 else (pick(alts, w, gold) or gold)

    def placeholder(self, tag: str, rng: random.Random) -> dict:
        choices, answers = [], []
        for i in letters(2):
            opts = [f"right{tag}{i.lower()}", f"wrong{tag}{i.lower()}"]
            rng.shuffle(opts)
            choices.append({"id": i, "options": opts})
            answers.append({"id": i, "description": f"right{tag}{i.lower()}"})
        return {"question_text": f"Synthetic item {tag}: choose [A] and then [B].", "choices": choices,
                "answers": answers}


def option_block_lines(choices: Any) -> list[str]:
    """`A:` then `  1. option` per option (completion_closed); `A (label):` when a part has a label."""
    if not isinstance(choices, list):
        return []
    lines: list[str] = []
    for c in choices:
        if not isinstance(c, dict):
            lines.append(str(c))
            continue
        label = f" ({c['label']})" if common.nonempty_str(c.get("label")) else ""
        lines.append(f"{c.get('id', '')}{label}:")
        lines.extend(f"  {n}. {opt}" for n, opt in enumerate(c.get("options") or [], start=1))
    return lines


class CompletionOpen(BlankFormat):
    name = COMPLETION_OPEN_TYPE
    profile_rules = "Strict accepts near-miss spellings (fuzzy match); paper requires an exact match."
    site = {"body": "text", "key": "blanks", "choices": None}
    sim_difficulty = 0.5
    sim_skill = PRODUCTION
    synthetic_parts = 3
    synthetic_shift = -0.3
    sim_topic = {"it": "i termini mancanti", "en": "the missing terms"}
    #: the review page's editor: which widget edits each field (plain data, see extraction.editors)
    editor = {"format": COMPLETION_OPEN_TYPE, "fields": [
        {"path": "answers", "widget": "blanks", "label": "Answer in each blank"},
    ]}
    fuzzy = True

    def validate_choices(self, rec, answers, counts, out: Problems) -> None:
        if rec["choices"] not in (None, []):
            out.add("choices", "completion_open must have null choices")
        if common.plain_list_key(rec) is not None:
            out.add("answers", "a plain list of strings (an older record form): the strict profile keys it A, B, "
                               "... in order; the published evaluator reads a key from object entries only, so "
                               "under the paper profile every answer to this item scores 0")

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        """As published: a key written as a plain list of strings gives the evaluator no gold, so 0."""
        if common.plain_list_key(record) is not None:
            return 0.0, [], self.paper_error(llm)
        return super().score_paper(record, gold, llm, options)

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        words = passage_words(record)
        return [{"id": b, "text": rng.choice(words)} for b in chance_blank_ids(record)]

    def sim_known(self, gold: str, g: float) -> str:
        """Right, but now and then sloppy: case and accents only."""
        return strip_accents(gold).lower() if g < 0.08 else gold

    def sim_guess(self, plan: Any, bid: str, gold: str, golds: list[str], w: float, g: float) -> str:
        """A slip (wrong under paper, often forgiven by strict's fuzzy match), or a plausible wrong term."""
        if g < 0.15:
            return misspell(gold, random.Random(w))
        pool = [x for x in golds if x != gold] + WRONG_WORDS.get(plan.language, WRONG_WORDS["en"])
        return pick(pool, w, gold) or misspell(gold, random.Random(w))

    def placeholder(self, tag: str, rng: random.Random) -> dict:
        return {"question_text": f"Synthetic item {tag}: write [A] and then [B].", "choices": None,
                "answers": [{"id": i, "description": f"answer{tag}{i.lower()}"} for i in letters(2)]}


POSITIONING = Positioning()
COMPLETION_CLOSED = CompletionClosed()
COMPLETION_OPEN = CompletionOpen()
