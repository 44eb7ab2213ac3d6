"""One logged harness sample (lm-evaluation-harness, lmms-eval) as an item record and an answer.

Why a module of its own: the harnesses log what each task's code made of a document, not a
question in a fixed shape, so the mapping onto our formats is a reading with rules, kept apart
from the file handling (``importers.harness``).

A sample becomes a ``multiple_choice_radio`` item when its options are found (the document's
``choices`` / ``options`` list, its ``A``, ``B``, ... fields, or the continuations of its
likelihood requests, which share one context) and the ``target`` names one of them (an index, a
letter or an option's text); the model's answer is then the option with the highest likelihood
(likelihood tasks) or the option its generated text names (``option_reading``); the text is the
raw response (``resps``), the same under every filter the harness applied. Any other
sample becomes an ``open_text`` item whose reference answers are the ``target`` text(s), the
generated text its answer. The question is the document's ``question`` (or ``query``,
``problem``, ``input``, ``text``, ``prompt``), else the prompt the harness sent. lmms-eval logs no
document, only the prompt (``input``): its option lines (``A. text``) are the options then.
"""
from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from ..text import norm_strict
from ..vocab import MCQ_TYPE, OPEN_TEXT_TYPE
from .option_reading import choice_answer, response_of

QUESTION_FIELDS = ("question", "query", "problem", "input", "text", "prompt", "sentence")
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class SampleProblem(ValueError):
    """Why one sample cannot become an item, in a few words."""


@dataclass(frozen=True)
class SampleItem:
    """A sample read: the item record and the answer to store (raw text, imported answer)."""

    record: dict
    raw_text: str
    llm_answer: list[dict] | None


def _pairs(arguments: Any) -> list[tuple[str, Any]]:
    """(context, continuation) of each request: lm-eval logs lists ``[ctx, cont]`` or, lately,
    ``{"gen_args_0": {"arg_0": ctx, "arg_1": cont}}``."""
    if isinstance(arguments, dict):
        arguments = [v for _, v in sorted(arguments.items()) if isinstance(v, dict)]
        arguments = [[a.get("arg_0"), a.get("arg_1")] for a in arguments]
    out = []
    for entry in arguments if isinstance(arguments, list) else []:
        if isinstance(entry, (list, tuple)) and entry and isinstance(entry[0], str):
            out.append((entry[0], entry[1] if len(entry) > 1 else None))
    return out


def _as_list(value: Any) -> list | None:
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            value = ast.literal_eval(value.strip())
        except (ValueError, SyntaxError):
            return None
    if isinstance(value, dict) and isinstance(value.get("text"), list):
        value = value["text"]
    return value if isinstance(value, list) else None


def _options(doc: dict, pairs: list[tuple[str, Any]]) -> list[str] | None:
    for name in ("choices", "options"):
        found = _as_list(doc.get(name))
        if found and len(found) >= 2 and all(isinstance(v, (str, int, float)) for v in found):
            return [str(v).strip() for v in found]
    columns = [str(doc[k]).strip() for k in LETTERS if doc.get(k) not in (None, "")]
    if len(columns) >= 2 and all(k in doc for k in LETTERS[:len(columns)]):
        return columns
    if len(pairs) >= 2 and len({ctx for ctx, _ in pairs}) == 1 and all(isinstance(c, str) for _, c in pairs):
        return [str(cont).strip() for _, cont in pairs]
    return None


_OPTION_LINE = re.compile(r"^\(?([A-Z])[.)]\s+(\S.*)$")


def _prompt_options(prompt: str) -> dict:
    """A document read from a prompt (lmms-eval logs no document): its option lines ``A. text``,
    ``B. text``, ... as fields ``A``, ``B``, ... when they run from A without a gap."""
    found: dict[str, str] = {}
    for line in prompt.splitlines():
        match = _OPTION_LINE.match(line.strip())
        if match and match.group(1) == LETTERS[len(found)]:
            found[match.group(1)] = match.group(2).strip()
    return found if len(found) >= 2 else {}


def _gold_index(target: Any, options: list[str], doc: dict, by_index: bool) -> int | None:
    """Index of the gold option: the target as an index, a letter or an option's text; else the
    document's ``answer`` / ``answerKey`` / ``label`` read the same way. ``by_index``: a likelihood
    sample, whose target is the index of an option (lm-eval writes it as text, ``"2"``), read as an
    index before it is compared with the options' texts (options "1", "2", ... would mislead)."""
    for value in (target, doc.get("answer"), doc.get("answerKey"), doc.get("label")):
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)) and float(value).is_integer() and 0 <= value < len(options):
            return int(value)
        if isinstance(value, str):
            text = value.strip()
            if by_index and text.isdigit() and int(text) < len(options):
                return int(text)
            same = [k for k, o in enumerate(options) if norm_strict(o) == norm_strict(text)]
            if len(same) == 1:
                return same[0]
            if len(text) == 1 and text.upper() in LETTERS[:len(options)]:
                return LETTERS.index(text.upper())
            if text.isdigit() and int(text) < len(options):
                return int(text)
    return None


def _question(doc: dict, pairs: list[tuple[str, Any]]) -> str | None:
    for name in QUESTION_FIELDS:
        if isinstance(doc.get(name), str) and doc[name].strip():
            return doc[name].strip()
    return pairs[0][0].strip() if pairs and pairs[0][0].strip() else None


def _first_text(value: Any) -> str | None:
    """The first string in a (nested) list of responses."""
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def _generated(sample: dict) -> str | None:
    """The text the model generated: the raw response (one answer, whatever the harness's filters
    extracted from it, so that the lines of one document under two filters are one answer), else
    the filtered one."""
    text = _first_text(sample.get("resps"))
    return text if text is not None else _first_text(sample.get("filtered_resps"))


def _number(value: Any) -> float | None:
    if isinstance(value, str):  # lm-eval writes every response as text: "-1.25"
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _likelihoods(filtered: Any, n: int) -> list[float] | None:
    """Per option the log-likelihood the harness logged: ``[ll, is_greedy]`` or ``ll``, as numbers
    or, as lm-eval writes them, as text (``["-1.25", "False"]``, ``"(-1.25, False)"``)."""
    if not isinstance(filtered, list) or len(filtered) != n:
        return None
    out = []
    for entry in filtered:
        if isinstance(entry, str) and entry.strip().startswith("("):
            try:
                entry = list(ast.literal_eval(entry.strip()))
            except (ValueError, SyntaxError, TypeError):
                return None
        value = _number(entry[0] if isinstance(entry, list) and entry else entry)
        if value is None:
            return None
        out.append(value)
    return out


def _references(target: Any) -> list[str]:
    """The target text(s); lmms-eval logs a list of answers as its Python text (``"['a', 'b']"``)."""
    values = _as_list(target) or [target]
    return [str(v).strip() for v in values if isinstance(v, (str, int, float)) and not isinstance(v, bool)
            and str(v).strip()]


def read_sample(sample: dict, item_id: str, task: str, harness: str, language: str) -> SampleItem:
    """The item and the answer of one logged sample (module doc), or SampleProblem."""
    doc = sample.get("doc")
    pairs = _pairs(sample.get("arguments"))
    if not isinstance(doc, dict):
        if not isinstance(sample.get("input"), str):
            raise SampleProblem("no doc (the document of the sample; lmms-eval logs its prompt as 'input' instead)")
        doc, pairs = _prompt_options(sample["input"]), [(sample["input"], None)]
    question = _question(doc, pairs)
    if not question:
        raise SampleProblem("no question text in doc and no prompt in arguments")
    base = {"item_id": item_id, "question_text": question, "language": language, "task": task,
            "source": f"{harness}/{task}/{sample.get('doc_id')}", "has_image": False, "image": None,
            "tags": {"harness": harness, "harness_task": task}}
    options = _options(doc, pairs)
    likelihoods = _likelihoods(sample.get("filtered_resps"), len(options)) if options else None
    gold = _gold_index(sample.get("target"), options, doc, likelihoods is not None) if options else None
    if options and gold is not None:
        choices = [{"id": LETTERS[k], "text": text} for k, text in enumerate(options[:len(LETTERS)])]
        record = {**base, "type": MCQ_TYPE, "choices": choices,
                  "answers": [{"id": LETTERS[gold], "description": options[gold]}]}
        if likelihoods is not None:
            best = max(range(len(likelihoods)), key=likelihoods.__getitem__)
            return SampleItem(record, *choice_answer(LETTERS[best], loglikelihoods=likelihoods))
        text = _generated(sample)
        if text is None:
            raise SampleProblem("resps and filtered_resps hold neither likelihoods per option nor a generated text")
        raw, answer = response_of(text, choices)
        return SampleItem(record, raw, answer)
    references = _references(sample.get("target"))
    if not references:
        raise SampleProblem("no options with a gold among them, and no target text to compare an answer with")
    text = _generated(sample)
    if text is None:
        raise SampleProblem("no generated text in filtered_resps or resps")
    record = {**base, "type": OPEN_TEXT_TYPE, "choices": None, "answers": [{"id": "A", "references": references}]}
    return SampleItem(record, text, None)


def doc_fingerprint(doc: dict) -> str:
    """The document as compact JSON (to tell two documents logged under one id apart)."""
    return json.dumps(doc, sort_keys=True, ensure_ascii=False, default=str)
