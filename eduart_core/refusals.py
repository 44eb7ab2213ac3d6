"""Recognising a refusal: a response that declines to answer instead of answering.

Why a module of its own: "the model refused" and "the model wrote something we cannot read" are
different failures (the first is a policy or capability statement, the second a formatting one),
and the invalid-answer analysis reports them apart. Only short, unambiguous phrases in English and
Italian count, and only when the response gave no readable answer, so a model that explains a
caveat and then answers is never counted as refusing.
"""
from __future__ import annotations

import re

_PHRASES = (
    r"i can(?:no|')t (?:answer|determine|tell|identify|see|help|assist|provide|comply)",
    r"i cannot", r"i am unable", r"i'm unable", r"i am not able", r"i'm not able",
    r"unable to (?:answer|determine|identify|see|view|process)",
    r"i won't", r"i will not (?:answer|provide)", r"i must decline", r"i decline",
    r"not able to (?:answer|determine|see)", r"cannot (?:answer|determine|be determined)",
    r"non (?:posso|sono in grado|riesco)", r"mi dispiace", r"preferisco non rispondere",
    r"as an ai", r"i'm sorry", r"i am sorry", r"sorry, (?:i|but)",
)
_REFUSAL = re.compile(r"(?:^|\b)(?:" + "|".join(_PHRASES) + r")", re.IGNORECASE)


def is_refusal(text: object) -> bool:
    """True when the text contains a refusal phrase ('I cannot determine this from the image')."""
    return isinstance(text, str) and bool(_REFUSAL.search(text))
