"""What an answer format declares, and the defaults most formats share.

Why a class with defaults: every format must answer the same questions (is this record valid,
how is it shown to a model, which JSON is asked for, how is a reply parsed and scored under each
profile, what is its chance level, how does the inspector show it, how does the review page edit
it). A subclass overrides only what differs, so a new format is one module and one line in the
registry (`eduart_core.formats.REGISTRY`), never an edit in every room that handles items.

Records are plain dicts in the canonical shape of `items.normalise_record`; nothing here mutates
them. Scorers receive the gold entries and either the strict parse (`StrictInput`) or the
published `llm_answer` (`paper` profile), and return a `Scored`.
"""
from __future__ import annotations

import random
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import eduart_core.formats.common as common

from ..answers import ParsedAnswer, StoredAnswer, parse_answer, parse_answer_paper
from ..paper import unparsed_error
from ..refusals import is_refusal
from ..vocab import FORMATS, PAPER_PROFILE, FormatInfo
from .answer_words import FormatDisplay
from .common import Problems
from .levels import WHOLE_RULE, whole_levels
from .visual import bbox_text, regions_lines

__all__ = ["OPTIONS_CHECK", "OPTION_CHECK", "TEXT_CHECK", "AnswerFormat", "ScoringOptions", "Scored", "StrictInput", "strict_input"]

#: How the answer-quality analysis reads an answer (`AnswerFormat.answer_check`): it names one listed
#: option (the chosen option is reported), it ticks listed options, or its answer text is judged
#: (`AnswerFormat.reads_answer`).
OPTION_CHECK, OPTIONS_CHECK, TEXT_CHECK = "option", "options", "text"

_ANSWERS_KEY = re.compile(r"""["']answers["']\s*:""", re.IGNORECASE)


@dataclass(frozen=True)
class ScoringOptions:
    """Knobs of the scorers: fuzzy threshold (strict completion_open), similarity service (open_text)."""

    fuzzy_threshold: float = 90
    similarity: Any = None  # eduart_core.embeddings.Similarity (scoring.score_item gives the process default)


@dataclass(frozen=True)
class Scored:
    """One format scorer's result: score in [0, 1], per-element details, why unparseable."""

    score: float
    details: list[dict] = field(default_factory=list)
    parse_error: str | None = None
    #: the rule set that produced the score (`<format>/<version>`, + embedding model for open text)
    scorer: str | None = None


@dataclass(frozen=True)
class StrictInput:
    """The lenient parse a strict scorer works on: entries (None when unusable), error, raw text."""

    entries: list[dict] | None
    error: str | None
    raw: str | None = None
    free_form: bool = False


def _raw_text(answer: Any) -> str | None:
    if isinstance(answer, bytes):
        return answer.decode("utf-8", errors="replace")
    return answer if isinstance(answer, str) else None


def strict_input(answer: Any) -> StrictInput:
    """Entries with lower-cased keys from whatever form the answer arrived in."""
    if isinstance(answer, StoredAnswer):
        answer = answer.value
    if isinstance(answer, ParsedAnswer):
        free = "free_form" in answer.repairs
        if answer.answers is None:
            return StrictInput(None, answer.parse_error)
        # our parser already keeps object entries only, keys lower-cased (answers._clean_entries)
        return StrictInput(answer.answers, None, free_form=free)
    if isinstance(answer, list):
        return StrictInput(common.entries(answer), None)
    parsed = parse_answer(answer)
    if parsed.answers is None:
        return StrictInput(None, parsed.parse_error or "no Answers list", _raw_text(answer))
    return StrictInput(parsed.answers, None, _raw_text(answer))


def paper_llm_answer(answer: Any) -> Any:
    """The `llm_answer` the published step 2 scores (a `StoredAnswer` is taken as stored)."""
    if isinstance(answer, StoredAnswer):
        return answer.value
    if isinstance(answer, ParsedAnswer):  # our lenient parse: its list, else nothing usable
        return answer.answers if answer.answers is not None else ""
    return parse_answer_paper(answer)


def looks_free_form(raw: str) -> bool:
    """A reply that never tried to be the asked-for JSON: no Answers key, not starting as JSON."""
    text = raw.strip()
    if text.startswith("```"):
        text = text.strip("`").strip()
        if text[:4].lower() == "json":
            text = text[4:].strip()
    return bool(text) and not _ANSWERS_KEY.search(text) and text[:1] not in "{["


class AnswerFormat:
    """Base class of every answer format. Subclasses set `name` and override what differs."""

    #: the format name (a key of `vocab.FORMATS`)
    name: str = ""
    #: version of this format's scoring rules (recorded with every score)
    version: str = "1"
    #: single-part formats read a reply without parsable JSON as the answer text itself
    single_part: bool = False
    #: the scorer compares sentence embeddings (open text): the store prepares a similarity service
    uses_embeddings: bool = False
    #: slot for the review page's editor (plain-data field specs; the review room fills the
    #: EduArt formats, new formats ship theirs)
    editor: Any = None
    #: how a person answers this format on the exam page (plain data, read by
    #: ``eduart_core.humans.forms``): the editor ``path`` of the answer (default ``answers``: the
    #: answer-key editor of ``editor``), an optional ``widget`` and ``label``, ``fields`` (answer entry
    #: field -> field of the decoded key value), ``rows`` and ``row`` (empty rows to offer) and ``parts_from``
    #: (a record field whose ids start the answer). The answer is the key's shape, filled by the person.
    respondent: Any = None
    #: the words the review editors use for this format's parts: a row of ``choices`` ("option",
    #: "statement"), an entry of the answer key ("key", "statement"), an indexed key entry
    #: ("error"; None: "#n")
    row_word: str = "option"
    key_word: str = "key"
    entry_word: str | None = None
    #: the answer key holds one entry per blank marker of the text (its ids are blanks)
    blank_key: bool = False
    #: ``choices`` is a word bank the blanks are filled from (an editor offers its terms)
    word_bank: bool = False
    #: how the inspector puts this format's key and a scored answer into words (the same words for
    #: "expected" and "given"; the plain words read values as written)
    answer_words: FormatDisplay = FormatDisplay()
    #: the file of this format's prompt rules; None: ``prompts/formats/<name>.md`` of the prompts folder
    #: in use (a format registered from outside the package names its own file)
    prompt_path: str | None = None

    # ---------------------------------------------------------------- names
    @property
    def info(self) -> FormatInfo:
        return FORMATS[self.name]

    @property
    def label(self) -> str:
        return self.info.label

    # ---------------------------------------------------------------- records
    def gold(self, record: Mapping[str, Any]) -> list[dict]:
        """The gold answer objects (old variants keyed first)."""
        return common.gold_entries(record)

    def normalise(self, record: dict) -> dict:
        """Fix older variants of this format's record in place (common fixes are done already)."""
        return record

    def validate(self, record: dict, out: Problems) -> None:
        """Add this format's problems with the record (common fields are checked elsewhere)."""

    def key_line(self, entry: Mapping[str, Any]) -> str:
        """One entry of the answer key in words, as plain text (review cards): ``[A] Monet``."""
        value = entry.get("description") or entry.get("text")
        return f"[{entry.get('id')}] {'' if value is None else value}"

    # ---------------------------------------------------------------- prompts
    def choice_lines(self, record: Mapping[str, Any]) -> list[str]:
        """The lines that show the options to a model (`A. text`, ...).

        The published layout: `A. text` per option; a list of plain strings numbered `1. term`;
        `{id, options}` entries as `A:` then `  1. option`. Box options add their coordinates,
        image options say `(image A)` (the images travel with the request, labelled).
        """
        choices = record.get("choices")
        if not isinstance(choices, list) or not choices:
            return []
        if all(isinstance(c, str) for c in choices):
            return [f"{n}. {term}" for n, term in enumerate(choices, start=1)]
        lines: list[str] = []
        for c in choices:
            if not isinstance(c, dict):
                lines.append(str(c))
            elif "options" in c and "text" not in c:
                lines.append(f"{c.get('id', '')}:")
                lines.extend(f"  {n}. {opt}" for n, opt in enumerate(c.get("options") or [], start=1))
            elif c.get("bbox") is None and not c.get("image"):
                lines.append(f"{c.get('id', '')}. {c.get('text', '')}")
            else:
                parts = [str(c["text"])] if c.get("text") not in (None, "") else []
                if c.get("bbox") is not None:
                    parts.insert(0, f"[{bbox_text(c['bbox'])}]")
                if c.get("image"):
                    parts.append(f"(image {c.get('id', '')})")
                lines.append(f"{c.get('id', '')}. {' '.join(parts)}")
        return lines

    def render(self, record: Mapping[str, Any]) -> str:
        """Model-ready text: question_text, blank line, option lines (+ regions when present)."""
        qt = record.get("question_text")
        parts = []
        if qt:
            parts.append(str(qt))
        regions = regions_lines(record.get("regions"))
        if regions:
            parts.append("\n".join(regions))
        lines = self.choice_lines(record)
        if lines:
            parts.append("\n".join(lines))
        return "\n\n".join(parts)

    def entry_schema(self, record: Mapping[str, Any] | None = None) -> dict:
        """JSON schema of one `Answers` entry."""
        return {"type": "object", "properties": {"id": {"type": "string"}, "text": {"type": "string"}},
                "required": ["id", "text"]}

    def option_images(self, record: Mapping[str, Any]) -> list[tuple[str, str]]:
        """(option id, image path) of options that are images, in option order."""
        choices = record.get("choices")
        if not isinstance(choices, list):
            return []
        return [(str(c.get("id")), str(c["image"])) for c in choices
                if isinstance(c, dict) and common.nonempty_str(c.get("image"))]

    # ---------------------------------------------------------------- parsing and scoring
    def parse(self, raw: Any) -> ParsedAnswer:
        """The lenient parse stored with a response (single-part formats fall back to free text)."""
        parsed = parse_answer(raw)
        if parsed.answers is None and self.single_part and isinstance(raw, str) and looks_free_form(raw):
            return ParsedAnswer([{"text": raw.strip()}], None, None, ("free_form",))
        return parsed

    def scorer_id(self, options: ScoringOptions) -> str:
        return f"{self.name}/{self.version}"

    def score(self, record: Mapping[str, Any], answer: Any, profile: str, options: ScoringOptions) -> Scored:
        gold = self.gold(record)
        if profile == PAPER_PROFILE:
            llm = paper_llm_answer(answer)
            score, details, error = self.score_paper(record, gold, llm, options)
        else:
            given = answer
            if self.single_part and isinstance(answer, (str, bytes)):
                given = self.parse(_raw_text(answer))
            score, details, error = self.score_strict(record, gold, strict_input(given), options)
        return Scored(score, details, error, self.scorer_id(options))

    def score_strict(self, record: Mapping[str, Any], gold: list[dict], given: StrictInput,
                     options: ScoringOptions) -> tuple[float, list[dict], str | None]:
        raise NotImplementedError

    def score_paper(self, record: Mapping[str, Any], gold: list[dict], llm: Any,
                    options: ScoringOptions) -> tuple[float, list[dict], str | None]:
        raise NotImplementedError

    def paper_error(self, llm: Any) -> str | None:
        return unparsed_error(llm)

    def embedding_texts(self, record: Mapping[str, Any], answers: list[tuple[str, Any]]) -> list[str]:
        """Texts this format needs embedded to score these (profile, answer) pairs (open text only)."""
        return []

    #: how the two scoring profiles differ on this format, in words (the Scoring profiles page)
    profile_rules: str = "The two scorers differ on these responses."

    # ---------------------------------------------------------------- demo simulation
    #: mean difficulty of a simulated item on the logit scale (calibrated so the demo's archetypes
    #: land near the published ranges: multiple choice easy, select the errors hard)
    sim_difficulty: float = 0.0
    #: which skill of a simulated archetype the format draws on (`simulation.RECOGNITION`,
    #: `simulation.PRODUCTION`; None: the archetype's overall ability only)
    sim_skill: str | None = None
    #: synthetic score frames (`simulate.score_frames`): the parts of a partial-credit item, and the
    #: shift of the format's mean logit
    synthetic_parts: int = 1
    synthetic_shift: float = 0.0
    #: a simulated motivation: the group of reasons it gives (`simulate.formatting`), and what the
    #: item asks for, per language
    sim_reasons: str = "choice"
    sim_topic: Mapping[str, str] = {"it": "l'opzione corretta", "en": "the correct option"}

    def sim_plan(self, record: Mapping[str, Any]) -> dict:
        """What a simulated respondent needs of an item of this format (fields of
        `simulate.responder.ItemPlan`: option and gold ids, statements, blanks, alternatives, bank, errors)."""
        return {}

    def simulate_answers(self, plan: Any, p: float, draws: Any, model: Any, shared: random.Random) -> list[dict]:
        """The Answers list a simulated respondent means to give: each element known with
        probability ``p``, guessed otherwise, every uniform taken from ``draws`` (or ``shared``)."""
        return []

    def study_answer(self, record: Mapping[str, Any], p: float, model: Any,
                     rng: random.Random) -> tuple[list[dict], bool] | None:
        """A simulated study respondent's Answers list and whether it is right by intent
        (`studies.respondents`: known with probability ``p``, else a tempting wrong answer as the
        model's `lure_weight` says); None: the study demos do not simulate this format."""
        return None

    def study_invalid(self, record: Mapping[str, Any]) -> str | None:
        """The raw reply of a study respondent naming something that is no answer of the item (an
        option that does not exist, two numbers); None: this format has no such reply."""
        return None

    def placeholder(self, tag: str, rng: random.Random) -> dict:
        """The format's fields of a made-up placeholder item (`simulate.placeholders`; "Synthetic
        item 0042 ..."): question_text, choices, answers. Empty for a format without placeholders."""
        return {}

    # ---------------------------------------------------------------- the local exercise site
    #: how the offline exercise site (`eduart_core.capture.site_pages`, `capture.site_items`) shows and
    #: keys a question of this format, as plain data; None: the site has no page for it. Keys: ``body``
    #: (the answering part: "choices" with ``input`` radio or checkbox, "statements", "bank", "select",
    #: "text", "words"), ``key`` (how the question's key becomes the record's: "options", "statements",
    #: "blanks", "errors"), ``choices`` (blanks: "bank", "options" or None) and ``label`` (the solution's words).
    site: Mapping[str, Any] | None = None

    # ---------------------------------------------------------------- exam-page screenshot
    def screenshot_lines(self, record: Mapping[str, Any]) -> list[str]:
        """The lines under the question text of a rendered exam page (the offline review demo's
        screenshots, `extraction.pages_render`): how a student sees the options, never the key."""
        return []

    # ---------------------------------------------------------------- answer quality
    #: how the invalid-answer analysis reads this format's answers (`OPTION_CHECK`, `OPTIONS_CHECK`,
    #: `TEXT_CHECK`); None: readable when the parser found a non-empty answer list naming the item's ids
    answer_check: str | None = None

    def reads_answer(self, text: str) -> bool:
        """A `TEXT_CHECK` format: does this answer text give an answer (else refused or unparseable)?
        Any text does, unless it declines to give one."""
        text = text.strip()
        return bool(text) and not is_refusal(text)

    # ---------------------------------------------------------------- chance
    def chance(self, record: Mapping[str, Any]) -> float | None:
        """Expected strict score of the offline chance baseline's answer; None when undefined."""
        return None

    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        """One random answer in this format's output schema (the offline `chance` model)."""
        return []

    # ---------------------------------------------------------------- score levels (IRT)
    #: how a score maps to this format's score levels, in words (the IRT pages state it)
    level_rule: str = WHOLE_RULE
    #: the format gives credit per part (blank, statement, error): `score_parts` counts them
    partial_credit: bool = False

    def score_parts(self, record: Mapping[str, Any]) -> int:
        """How many parts of the item earn credit on their own: it has parts + 1 score levels.

        Formats judged as a whole (one option, a number, a free text, all parts or nothing) have one
        part, so two levels; partial-credit formats count their blanks, statements or errors.
        """
        return 1

    def score_levels(self, scores: np.ndarray, parts: np.ndarray) -> np.ndarray:
        """The level (0..parts) of each score in [0, 1], by `level_rule` (vectorised, one part count per score)."""
        return whole_levels(scores, parts)

    # ---------------------------------------------------------------- inspector
    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        """Rows the inspector lists: element, text, gold (value or True/False), extras."""
        return []

    def gold_summary(self, record: Mapping[str, Any]) -> str:
        """One line naming the gold answer (for tables and captions)."""
        return "; ".join(f"{r['element']}: {r['gold']}" for r in self.display_rows(record)
                         if r.get("gold") not in (None, False))
