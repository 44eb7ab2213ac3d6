"""Contamination probes: questions about an item that a model which never saw it should fail.

Why probes are items: a probe is asked by an ordinary run, cached and journalled like any item, and
scored by the ordinary scorer, so a model's probe answers sit beside its answers to the source
items in the score frame (`analysis.contamination` reads both). A probe is a linked item of the
same dataset, ``variant_of`` its source and ``variant`` its kind, as the variants of
`eduart_core.variants` are (their scores stay out of the leaderboard and item statistics); its id
is ``<item_id>~<kind>``. It is a one-blank ``completion_open`` item without the image (the probe
asks for the text, not the picture), so the studio's fuzzy text matching scores it against the
hidden text.

Kinds:
- ``mask_option``: the stem and every option but one wrong option, which is shown as a blank; the
  model is asked for the hidden option's text. A wrong option cannot be worked out from knowing the
  subject, only from having seen the item (the "TS-Guessing" probe of Deng et al., 2024).
- ``complete_stem``: the first half of the question's words; the model is asked for the rest.
"""
from __future__ import annotations

import re
from collections.abc import Callable

from .errors import UserError
from .variants import CHUNK_ITEMS, VariantRefused, VariantReport, _linked, make_variants, variant_id
from .vocab import COMPLETION_OPEN_TYPE, OPTION_FORMATS

PROBE_KINDS: tuple[str, ...] = ("mask_option", "complete_stem")
#: The blank of a probe (a letter no option list of the studio uses as a label).
BLANK = "Z"
#: A stem shorter than this many words has no second half worth asking for.
MIN_STEM_WORDS = 8
PROBE_REFERENCE = ("option masking after the \"TS-Guessing\" probe of Deng et al., 2024 (a wrong option of a "
                   "multiple-choice item hidden, its text asked for); stem completion (the second half of the "
                   "question asked for)")
_MARKER = re.compile(r"\[[A-Z]\]")

MASK_INTRO = ("This is a question from an exam, with the text of one of its options hidden by a blank. "
              "Write the exact text of the hidden option.")
STEM_INTRO = ("This is the beginning of a question from an exam, ending in a blank. Write the exact words "
              "that complete the question.")


def check_probe_kind(kind: str) -> str:
    """The kind, or one line naming the probe kinds."""
    if kind not in PROBE_KINDS:
        raise UserError(f"unknown probe kind {kind!r} (kinds: {', '.join(PROBE_KINDS)})")
    return kind


def _plain(text: object) -> str:
    """Item text as a probe shows it: blank markers of the source read as a plain gap."""
    return _MARKER.sub("___", str(text or "")).strip()


def _probe(record: dict, kind: str, question: str, hidden: str, variant: dict) -> dict:
    rec = _linked(record, variant_id(record["item_id"], kind), {"kind": kind, **variant})
    rec["type"] = COMPLETION_OPEN_TYPE
    rec["question_text"] = question
    rec["choices"] = None
    rec["answers"] = [{"id": BLANK, "description": hidden}]
    rec["instructions"] = None  # the source's instructions are about answering it, not about the probe
    rec["has_image"], rec["image"] = False, None
    for name in ("image_attributes", "regions"):
        rec.pop(name, None)
    return rec


def mask_option(record: dict) -> list[dict]:
    """The stem and the options with the last wrong option hidden (its label kept, its text a blank)."""
    if record.get("type") not in OPTION_FORMATS:
        raise VariantRefused(f"mask_option applies to option items ({', '.join(OPTION_FORMATS)}), "
                             f"not {record.get('type')}")
    choices = record.get("choices")
    if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
        raise VariantRefused("mask_option needs a list of options")
    keys = {str(a.get("id")) for a in record.get("answers") or [] if isinstance(a, dict)}
    wrong = [c for c in choices if str(c.get("id")) not in keys and str(c.get("text") or "").strip()]
    if not wrong or len(choices) < 3:
        raise VariantRefused("mask_option needs at least three options, one of them a wrong option with text")
    hidden = wrong[-1]
    lines = [MASK_INTRO, "", _plain(record.get("question_text")), ""]
    for c in choices:
        text = f"[{BLANK}]" if c is hidden else _plain(c.get("text"))
        lines.append(f"{c.get('id')}. {text}")
    return [_probe(record, "mask_option", "\n".join(lines), str(hidden["text"]).strip(),
                   {"hidden": str(hidden.get("id"))})]


def complete_stem(record: dict) -> list[dict]:
    """The first half of the question's words; the rest is the hidden text."""
    words = _plain(record.get("question_text")).split()
    if len(words) < MIN_STEM_WORDS:
        raise VariantRefused(f"complete_stem needs a question of at least {MIN_STEM_WORDS} words "
                             f"(this one has {len(words)})")
    half = len(words) // 2
    question = f"{STEM_INTRO}\n\n{' '.join(words[:half])} [{BLANK}]"
    return [_probe(record, "complete_stem", question, " ".join(words[half:]), {"shown_words": half})]


BUILDERS: dict[str, Callable[[dict], list[dict]]] = {"mask_option": mask_option, "complete_stem": complete_stem}


def probe_records(record: dict, kind: str) -> list[dict]:
    """The probe items of one source record (VariantRefused with the reason when the kind does not apply)."""
    if record.get("dialogue_id"):
        raise VariantRefused("a dialogue turn is asked within its dialogue; it is not probed on its own")
    return BUILDERS[check_probe_kind(kind)](record)


def make_probes(store, dataset: str, kind: str, items_filter: str | None = None, *, origin: str | None = None,
                note: str | None = None, say: Callable[[str], None] | None = None) -> VariantReport:
    """Write the ``kind`` probe of each (source) item of ``dataset`` that ``items_filter`` selects; an item
    the kind does not apply to is named with the reason, the rest is made. Making them twice writes
    nothing the second time. Chunks of `CHUNK_ITEMS` per transaction."""
    check_probe_kind(kind)
    return make_variants(store, dataset, kind, items_filter, origin=origin or f"probe:{kind}", note=note, say=say,
                         build=probe_records)


__all__ = ["BLANK", "BUILDERS", "CHUNK_ITEMS", "PROBE_KINDS", "PROBE_REFERENCE", "check_probe_kind", "complete_stem",
           "make_probes", "mask_option", "probe_records"]
