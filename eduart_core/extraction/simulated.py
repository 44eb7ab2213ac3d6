"""Simulated extractors and the offline extraction demo (labelled as simulated everywhere).

Why: the review page must work on a fresh clone without API keys or real exam captures. The demo
holds 14 original items (two per format, written for this project), renders each as an exam-page
screenshot, and plays two extraction rounds by two simulated extractors that make the mistakes
real vision models make: a dropped accent, a doubled space, a curly quote, a swapped option order,
a misread word, a wrong answer key, a missed statement. Round 2 (the "refined prompt") leaves only
accents and doubled spaces, as the published study reported.

The demo goes to its own dataset, ``demo-extraction``, so promoted gold items never mix with the
``demo`` dataset the simulated respondents are scored on.
"""
from __future__ import annotations

import copy
import json
from collections.abc import Callable

from ..store import Store
from ..vocab import (
    CHECK_TYPE,
    COMPLETION_CLOSED_TYPE,
    COMPLETION_OPEN_TYPE,
    DEMO_EXTRACTION_DATASET,
    EXTRACTION_KIND,
    MCQ_TYPE,
    POSITIONING_TYPE,
    SELECT_ERRORS_TYPE,
    TRUE_FALSE_TYPE,
)

DEMO_DATASET = DEMO_EXTRACTION_DATASET
DEMO_TITLE = "Extraction review demo (simulated extractors)"
EXTRACTOR_MODELS = {"A": "sim-extractor-a (simulated)", "B": "sim-extractor-b (simulated)"}


def _radio(title, instr, text, options, key, lang):
    choices = [{"id": chr(65 + i), "text": t} for i, t in enumerate(options)]
    return {"type": MCQ_TYPE, "language": lang, "question_title": title, "instructions": instr,
            "question_text": text, "choices": choices,
            "answers": [{"id": key, "description": options[ord(key) - 65]}]}


def _check(title, instr, text, options, keys, lang):
    rec = _radio(title, instr, text, options, keys[0], lang)
    rec["type"] = CHECK_TYPE
    rec["answers"] = [{"id": k, "description": options[ord(k) - 65]} for k in keys]
    return rec


def _tf(title, instr, statements, lang):
    return {"type": TRUE_FALSE_TYPE, "language": lang, "question_title": title, "instructions": instr,
            "question_text": None,
            "choices": [{"id": chr(65 + i), "text": s} for i, (s, _) in enumerate(statements)],
            "answers": [{"id": chr(65 + i), "text": "True" if v else "False"} for i, (_, v) in enumerate(statements)]}


def _blanks(kind, title, instr, text, choices, answers, lang):
    return {"type": kind, "language": lang, "question_title": title, "instructions": instr,
            "question_text": text, "choices": choices,
            "answers": [{"id": chr(65 + i), "description": a} for i, a in enumerate(answers)]}


def _errors(title, instr, text, pairs, lang):
    return {"type": SELECT_ERRORS_TYPE, "language": lang, "question_title": title, "instructions": instr,
            "question_text": text, "choices": None,
            "answers": [{"error": e, "correct": c} for e, c in pairs]}


def demo_truth() -> list[dict]:
    """The 14 true records of the demo pages (original text; facts of general art history)."""
    items = [
        _radio("La Cappella degli Scrovegni", "Scegli la risposta corretta.",
               "In quale città si trova la cappella affrescata da Giotto per Enrico Scrovegni?",
               ["Firenze", "Padova", "Assisi", "Roma"], "B", "it"),
        _radio("Gothic architecture", "Choose the correct answer.",
               "Which structural element let Gothic cathedrals raise taller walls with larger windows?",
               ["The flying buttress", "The barrel vault", "Post and lintel", "The dome on pendentives"], "A", "en"),
        _check("Il Barocco romano", "Indica tutte le risposte corrette.",
               "Quali di questi artisti sono protagonisti del Barocco a Roma?",
               ["Gian Lorenzo Bernini", "Francesco Borromini", "Piero della Francesca", "Pietro da Cortona"],
               ["A", "B", "D"], "it"),
        _check("Impressionism", "Select all correct answers.",
               "Which of these painters showed work at the first Impressionist exhibition of 1874?",
               ["Claude Monet", "Edgar Degas", "Vincent van Gogh", "Berthe Morisot"], ["A", "B", "D"], "en"),
        _tf("Il Pantheon", "Indica se le affermazioni sono vere o false.",
            [("La cupola ha un'apertura centrale, l'oculo.", True),
             ("Il pronao è sorretto da colonne doriche.", False),
             ("L'edificio fu consacrato come chiesa nel VII secolo.", True)], "it"),
        _tf("Michelangelo's David", "Mark each statement true or false.",
            [("The statue is carved from a single block of marble.", True),
             ("It was first placed inside the Sistine Chapel.", False),
             ("David is shown before the fight with Goliath.", True)], "en"),
        _blanks(POSITIONING_TYPE, "La basilica paleocristiana", "Inserisci i termini al posto giusto.",
                "La basilica è preceduta da un [A]; l'interno è diviso in [B] e termina con l'[C].",
                ["quadriportico", "navate", "abside", "cupola", "transetto"],
                ["quadriportico", "navate", "abside"], "it"),
        _blanks(POSITIONING_TYPE, "The Greek temple", "Drag each term to its place.",
                "The inner room of a Greek temple is the [A], surrounded by a row of columns called the [B].",
                ["cella", "peristyle", "nave", "apse"], ["cella", "peristyle"], "en"),
        _blanks(COMPLETION_CLOSED_TYPE, "La prospettiva", "Scegli il termine corretto.",
                "Masaccio dipinse la Trinità in [A] usando la prospettiva [B].",
                [{"id": "A", "options": ["Santa Maria Novella", "San Marco"]},
                 {"id": "B", "options": ["lineare", "aerea"]}], ["Santa Maria Novella", "lineare"], "it"),
        _blanks(COMPLETION_CLOSED_TYPE, "Renaissance sculpture", "Choose the correct term.",
                "Donatello's bronze David was cast in the [A] century and shows the hero [B].",
                [{"id": "A", "options": ["fifteenth", "seventeenth"]}, {"id": "B", "options": ["nude", "in armour"]}],
                ["fifteenth", "nude"], "en"),
        _blanks(COMPLETION_OPEN_TYPE, "L'arte romanica", "Completa il testo.",
                "Il Duomo di [A] fu iniziato da Lanfranco nel 1099; le sculture della facciata sono di [B].",
                None, ["Modena", "Wiligelmo"], "it"),
        _blanks(COMPLETION_OPEN_TYPE, "The Dutch Golden Age", "Complete the text.",
                "Rembrandt's 'The Night Watch' hangs in the [A] in [B].", None, ["Rijksmuseum", "Amsterdam"], "en"),
        _errors("Caravaggio", "Trova gli errori nel testo.",
                "Caravaggio nacque a Venezia e dipinse la Vocazione di san Matteo per San Pietro dei Francesi a Roma.",
                [("Venezia", "Milano"), ("Pietro", "Luigi")], "it"),
        _errors("The Parthenon", "Find the errors in the text.",
                "The Parthenon stands on the Palatine in Athens and was dedicated to Apollo.",
                [("Palatine", "Acropolis"), ("Apollo", "Athena")], "en"),
    ]
    for index, record in enumerate(items):
        record.update(exercise=index // 2 + 1, question=index % 2 + 1, has_image=False, image=None)
    return items


def page_id_of(record: dict) -> str:
    return f"ex{int(record['exercise']):02d}/q{int(record['question']):02d}"


# --- perturbations: each returns a changed copy ----------------------------------------------

Perturb = Callable[[dict], dict]


def _replace(path_field: str, old: str, new: str) -> Perturb:
    def apply(record: dict) -> dict:
        out = copy.deepcopy(record)
        out[path_field] = out[path_field].replace(old, new, 1)
        return out
    return apply


def _choice_text(index: int, old: str, new: str) -> Perturb:
    def apply(record: dict) -> dict:
        out = copy.deepcopy(record)
        out["choices"][index]["text"] = out["choices"][index]["text"].replace(old, new, 1)
        return out
    return apply


def _wrong_key(new_key: str) -> Perturb:
    def apply(record: dict) -> dict:
        out = copy.deepcopy(record)
        text = next(c["text"] for c in out["choices"] if c["id"] == new_key)
        out["answers"] = [{"id": new_key, "description": text}]
        return out
    return apply


def _missed_statement(record: dict) -> dict:
    out = copy.deepcopy(record)
    out["choices"] = out["choices"][:-1]
    out["answers"] = out["answers"][:-1]
    return out


def _swap(field: str, i: int, j: int) -> Perturb:
    def apply(record: dict) -> dict:
        out = copy.deepcopy(record)
        out[field][i], out[field][j] = out[field][j], out[field][i]
        return out
    return apply


def _closed_option(blank: int, old: str, new: str) -> Perturb:
    def apply(record: dict) -> dict:
        out = copy.deepcopy(record)
        out["choices"][blank]["options"] = [new if o == old else o for o in out["choices"][blank]["options"]]
        return out
    return apply


def _drop_last_answer(record: dict) -> dict:
    out = copy.deepcopy(record)
    out["answers"] = out["answers"][:-1]
    return out


# (page index, extractor, perturbation, what it imitates)
ROUND_PLANS: dict[int, list[tuple[int, str, Perturb, str]]] = {
    1: [
        (0, "B", _replace("question_text", "città", "citta'"), "dropped accent"),
        (0, "A", _replace("question_text", "cappella affrescata", "cappella  affrescata"), "doubled space"),
        (1, "B", _wrong_key("B"), "wrong answer key"),
        (3, "B", _choice_text(0, "Claude Monet", "Claude monet"), "case"),
        (4, "A", _choice_text(0, "un'apertura", "un\u2019apertura"), "curly quote"),
        (4, "B", _missed_statement, "missed statement"),
        (5, "A", _choice_text(1, "Chapel.", "Chapel. "), "trailing space"),
        (6, "B", _swap("choices", 0, 2), "swapped option order"),
        (8, "B", _closed_option(0, "Santa Maria Novella", "Santa Maria Novela"), "misread word"),
        (9, "A", _replace("question_text", "was cast", "was  cast"), "doubled space"),
        (10, "B", _replace("question_text", "facciata sono", "facciata, sono"), "punctuation"),
        (11, "A", _replace("question_text", "'The Night Watch'", "\u2018The Night Watch\u2019"), "curly quote"),
        (12, "B", _swap("answers", 0, 1), "swapped order"),
        (12, "A", _replace("question_text", "Vocazione", "Vocazlone"), "misread word"),
        (13, "B", _drop_last_answer, "missed error"),
    ],
    2: [
        (0, "B", _replace("question_text", "città", "citta"), "dropped accent"),
        (4, "A", _choice_text(1, "è sorretto", "e' sorretto"), "accent as apostrophe"),
        (8, "A", _replace("question_text", "usando la", "usando  la"), "doubled space"),
        (10, "B", _replace("question_text", "Lanfranco nel", "Lanfranco  nel"), "doubled space"),
    ],
}


#: The demo store's third round: the refined prompt run again on the pages round 2 disputed, reviewed
#: blind and still in progress.
BLIND_ROUND = 3
BLIND_ROUND_PLAN = ROUND_PLANS[2]


def simulated_extractions(round: int, plan: list | None = None) -> list[tuple[dict, dict, dict]]:
    """(truth, record A, record B) per demo page for one round (``plan``: its perturbations; default
    the round's own in ``ROUND_PLANS``)."""
    truth = demo_truth()
    out = []
    for index, record in enumerate(truth):
        sides = {"A": {k: v for k, v in record.items() if k not in ("exercise", "question")},
                 "B": {k: v for k, v in record.items() if k not in ("exercise", "question")}}
        for page, side, perturb, _ in (ROUND_PLANS.get(round, []) if plan is None else plan):
            if page == index:
                sides[side] = perturb(sides[side])
        out.append((record, sides["A"], sides["B"]))
    return out


def build_extraction_demo(store: Store) -> dict:
    """Pages, screenshots, two simulated rounds and their comparisons in ``demo-extraction``."""
    from ..store import extraction as db
    from ..store.items import add_image
    from ..store.runs import ensure_dataset
    from .pages_render import page_text, render_page

    ensure_dataset(store, DEMO_DATASET, DEMO_TITLE, EXTRACTION_KIND, simulated=True,
                   description="Exam pages rendered from original demo items; both extractors are simulated.")
    pages = []
    for record in demo_truth():
        image_hash = add_image(store, render_page(record), f"{page_id_of(record).replace('/', '-')}.png")
        pages.append({"page_id": page_id_of(record), "dataset": DEMO_DATASET,
                      "item_id": f"x{int(record['exercise']):02d}{int(record['question']):02d}",
                      "exercise": f"ex{int(record['exercise']):02d}", "question": f"q{int(record['question']):02d}",
                      "image_hash": image_hash, "page_text": page_text(record), "text_source": "txt",
                      "simulated": True})
    db.save_pages(store, pages)
    statuses: dict[int, dict[str, int]] = {}
    for round in sorted(ROUND_PLANS):
        statuses[round] = _extraction_round(store, round, ROUND_PLANS[round])
    return {"pages": len(pages), "rounds": statuses}


def _extraction_round(store: Store, round: int, plan: list, only_planned: bool = False) -> dict[str, int]:
    """One simulated round: both extractions of every page (``only_planned``: of the pages its plan
    perturbs), compared (agreeing pages promoted)."""
    from ..store import extraction as db
    from .review import record_comparisons

    rows = []
    planned = {page for page, *_ in plan}
    triples = [t for index, t in enumerate(simulated_extractions(round, plan)) if not only_planned or index in planned]
    for (truth, a, b) in triples:
        for side, rec in (("A", a), ("B", b)):
            rows.append({"page_id": page_id_of(truth), "round": round, "extractor": side,
                         "model": EXTRACTOR_MODELS[side], "prompt_hash": f"simulated-round-{round}",
                         "raw_response": json.dumps(rec, ensure_ascii=False), "record": rec})
    db.save_extractions(store, rows)
    statuses: dict[str, int] = {}
    for result in record_comparisons(store, round, [(page_id_of(t), a, b) for (t, a, b) in triples]).values():
        statuses[result.status] = statuses.get(result.status, 0) + 1
    return statuses


SIM_REVIEWERS = ("sim-reviewer-1 (simulated)", "sim-reviewer-2 (simulated)")
SIM_ADJUDICATOR = "sim-adjudicator (simulated)"
SIM_LEAD = "demo builder (simulated)"
LEFT_FOR_YOU = "ex01/q01"  # the blind round's page no simulated reviewer decided: a new user's to try


def simulate_review(store: Store) -> dict:
    """Simulated reviewers on the demo's extraction rounds, so that agreement shows on first start:
    round 2 is reviewed blind by two simulated reviewers, who disagree on one field, which the
    simulated adjudicator settles (a settled round); round 3 (the refined prompt again, on the pages
    round 2 disputed) is blind
    and in progress: one simulated reviewer decided every page but one, and each field waits for a
    second reviewer. Round 1 stays open for single review. Every name says "(simulated)"; the
    decisions go in as one import (one transaction), so running it again adds nothing."""
    from ..store import extraction as db
    from ..team import local
    from .exchange import import_lines
    from .review import load_state

    _extraction_round(store, BLIND_ROUND, BLIND_ROUND_PLAN, only_planned=True)
    lead = local(SIM_LEAD)
    state = load_state(store)
    for rnd in (2, BLIND_ROUND):  # no decision yet in either: nothing for the change to re-read
        if state.reviewers_needed(DEMO_DATASET, rnd) != 2:
            db.set_round_reviewers(store, DEMO_DATASET, rnd, 2, lead.name, actor=lead.columns())
    truth = {page_id_of(r): r for r in demo_truth()}
    fields = state.fields(round=2).to_dict("records")
    dissent = (fields[0]["page_id"], fields[0]["path"]) if fields else None  # the second reviewer differs here
    lines = []
    for row in fields:
        right = _true_side(row, truth[row["page_id"]])
        other = "B" if right == "A" else "A"
        differs = (row["page_id"], row["path"]) == dissent
        lines += [_line(row, 2, SIM_REVIEWERS[0], right), _line(row, 2, SIM_REVIEWERS[1], other if differs else right)]
        if differs:
            lines.append(_line(row, 2, SIM_ADJUDICATOR, right, "adjudicate"))
    lines += [_line(row, BLIND_ROUND, SIM_REVIEWERS[0], _true_side(row, truth[row["page_id"]]))
              for row in state.fields(round=BLIND_ROUND).to_dict("records") if row["page_id"] != LEFT_FOR_YOU]
    result = import_lines(store, lines, source_name="simulated", actor=lead)
    return {"simulated_review_decisions": result.imported}


def _line(row: dict, rnd: int, who: str, side: str, role: str = "review") -> str:
    return json.dumps({"dataset": DEMO_DATASET, "page": row["page_id"], "round": rnd, "field": row["path"],
                       "reviewer": who, "decision": side, "role": role, "note": "simulated reviewer (demo)"},
                      ensure_ascii=False)


def _true_side(row: dict, truth: dict) -> str:
    """The extractor ("A" or "B") whose value at the field equals the true record (A when neither does)."""
    from .consensus import canonical
    from .paths import get_at

    right = canonical(get_at(truth, row["path"]))
    return "B" if canonical(row["value_b"]) == right and canonical(row["value_a"]) != right else "A"
