"""Turning an intended answer into the text a model would send back, accidents included.

Why accidents: real responses arrive in markdown fences, wrapped in prose, with doubled braces,
cut off, or with no JSON at all. The demo must exercise the parser and both scoring profiles the
way real runs do, so a small per-model share of responses is written in one of these shapes.
"""
from __future__ import annotations

import json
import random

from ..formats import AnswerFormat, find_format

# Shares of each accident among malformed responses (they sum to 1).
MALFORMED_KINDS: list[tuple[str, float]] = [
    ("fence", 0.35), ("prose", 0.25), ("double_brace", 0.15), ("truncated", 0.17), ("bare", 0.08),
]
# Kinds whose JSON is intact: the parser must recover exactly the intended answers.
RECOVERABLE = {"clean", "fence", "prose", "double_brace"}

_PROSE = {
    "it": [("Ecco la mia risposta:\n", "\nSpero sia corretta."),
           ("Risposta in formato JSON:\n", ""),
           ("Dopo aver letto il testo, rispondo così.\n", "\nFine della risposta.")],
    "en": [("Here is my answer:\n", "\nI hope this helps."),
           ("Answer in JSON format:\n", ""),
           ("After reading the text carefully, my answer is:\n", "\nLet me know if you need more.")],
}
_BARE = {
    "it": ["La risposta corretta è {first}.", "Risposta: {first}", "Non sono sicuro, forse {first}."],
    "en": ["The correct answer is {first}.", "Answer: {first}", "I am not sure, probably {first}."],
}

_OPEN = {  # {what}: what the format asks for; {title}: the exercise title, when there is one
    "it": ["La domanda chiede di individuare {what}.", "Il compito è individuare {what}.",
           "Per rispondere bisogna individuare {what}.", "Qui occorre riconoscere {what}."],
    "en": ["The question asks for {what}.", "The task is to find {what}.",
           "To answer, I need to identify {what}.", "Here I have to recognise {what}."],
}
_OPEN_TITLED = {
    "it": ["L'esercizio «{title}» chiede di individuare {what}.",
           "In questo esercizio su «{title}» bisogna trovare {what}."],
    "en": ["The exercise “{title}” asks for {what}.",
           "In this exercise on “{title}” I have to find {what}."],
}
_REASON = {  # per group of formats (`AnswerFormat.sim_reasons`), so the reasoning fits what the item asks
    "choice": {
        "it": ["Ho confrontato ogni opzione con ciò che so del periodo e dell'artista.",
               "Alcune alternative sono plausibili, ma solo una è coerente con la cronologia.",
               "Ho escluso le opzioni che confondono bottega, committenza e luogo.",
               "Il contesto storico restringe molto le possibilità."],
        "en": ["I compared each option with what I know of the period and the artist.",
               "Several alternatives sound plausible, but only one fits the chronology.",
               "I ruled out the options that confuse workshop, patron and place.",
               "The historical context narrows the possibilities considerably."],
    },
    "verdict": {
        "it": ["Ho controllato ogni affermazione su date, luoghi e attribuzioni.",
               "Alcune affermazioni scambiano l'artista o la tecnica, e quindi sono false.",
               "Le affermazioni vere corrispondono a fatti ben documentati."],
        "en": ["I checked each statement against dates, places and attributions.",
               "Some statements swap the artist or the technique, so they are false.",
               "The true statements match well-documented facts."],
    },
    "blanks": {
        "it": ["Ho verificato che ogni termine si accordi con la frase in cui compare.",
               "Il lessico tecnico del testo indica con chiarezza i termini mancanti.",
               "Ho scelto i termini in base al senso e alla cronologia del brano."],
        "en": ["I checked that every term agrees with the sentence it appears in.",
               "The technical vocabulary of the text points clearly to the missing terms.",
               "I chose the terms from the sense and the chronology of the passage."],
    },
    "errors": {
        "it": ["Ho riletto il brano cercando date, luoghi e nomi incoerenti.",
               "Alcuni dettagli del testo non corrispondono a quanto è documentato.",
               "Ho segnalato solo le parole che contraddicono fatti noti."],
        "en": ["I reread the passage looking for inconsistent dates, places and names.",
               "Some details of the text do not match what is documented.",
               "I flagged only the words that contradict known facts."],
    },
}
_IMAGE = {
    "it": ["Anche l'immagine aiuta: la composizione e la disposizione delle figure sono un indizio.",
           "Osservando l'immagine, la struttura dello spazio conferma la scelta."],
    "en": ["The image helps too: the composition and the placement of the figures are a clue.",
           "Looking at the image, the structure of the space confirms the choice."],
}
_CLOSE = {
    "it": ["Per questo la mia risposta è {answer}.", "Ne segue la risposta {answer}.",
           "Sono abbastanza sicuro della risposta {answer}.", "Concludo quindi con {answer}."],
    "en": ["That is why my answer is {answer}.", "Hence the answer {answer}.",
           "I am fairly confident in the answer {answer}.", "So I conclude with {answer}."],
}
def motivation_text(language: str, item_type: str, title: str, has_image: bool,
                    answers: list[dict], rng: random.Random) -> str:
    """A 2-4 sentence motivation in the item's language, varied across items."""
    lang = language if language in _OPEN else "en"
    fmt = find_format(item_type) or AnswerFormat()
    what = fmt.sim_topic[lang]
    title = (title or "").strip().rstrip(".")
    summary = ", ".join(str(a.get("text", a.get("id", ""))) for a in answers[:3]) or "-"
    openers = _OPEN_TITLED[lang] if title and rng.random() < 0.4 else _OPEN[lang]
    sentences = [rng.choice(openers).format(what=what, title=title)]
    sentences.append(rng.choice(_REASON[fmt.sim_reasons][lang]))
    if has_image and rng.random() < 0.6:
        sentences.append(rng.choice(_IMAGE[lang]))
    if len(sentences) < 4 and rng.random() < 0.6:
        sentences.append(rng.choice(_CLOSE[lang]).format(answer=summary))
    return " ".join(sentences)


def pick_kind(malformed_rate: float, rng: random.Random) -> str:
    """'clean' most of the time, else one of the accident kinds by their shares."""
    if rng.random() >= malformed_rate:
        return "clean"
    x = rng.random()
    for kind, share in MALFORMED_KINDS:
        if x < share:
            return kind
        x -= share
    return MALFORMED_KINDS[-1][0]


def render_response(answers: list[dict], motivation: str | None, kind: str, language: str,
                    indent: bool, rng: random.Random) -> str:
    """The raw response text for one item in the requested shape."""
    payload: dict = {"Answers": answers}
    if motivation is not None:
        payload["motivation"] = motivation
    body = json.dumps(payload, ensure_ascii=False, indent=2 if indent else None)
    lang = language if language in _PROSE else "en"
    if kind == "clean":
        return body
    if kind == "fence":
        return f"```json\n{body}\n```"
    if kind == "prose":
        before, after = rng.choice(_PROSE[lang])
        return f"{before}{body}{after}"
    if kind == "double_brace":
        return "{" + body + "}"
    if kind == "truncated":
        cut = max(12, int(len(body) * (0.3 + 0.6 * rng.random())))
        return body[:min(cut, len(body) - 2)]
    if kind == "bare":
        first = str(answers[0].get("text", answers[0].get("id"))) if answers else "?"
        return rng.choice(_BARE[lang]).format(first=first)
    raise ValueError(f"unknown response kind {kind!r}")
