"""Blind human grading of model answers: rounds, the queue, grades, disagreements, adjudication.

Why blindness lives here and not on a page: a grader who knows which model wrote an answer, what
a judge gave it or what a colleague gave it grades differently, and a page can be bypassed. So
the functions a grading page calls hand out `GradingTask` objects that hold the item, its key and
the answer's words under an opaque token, and nothing else: no model, no condition, no judge
score, no other grader's marks. Another grader's marks are readable only once the answer is
settled (every criterion agreed by its graders or decided by an adjudicator), through
`answer_grades`, which refuses before that.

A round fixes which answers are graded (the latest answer of every examinee to every item the
rubric applies to, shuffled) and how many independent graders each needs (``graders``, k). An
answer goes to a grader only while fewer than k people have graded it; once its k graders are
done and they disagree on a criterion, it goes to an adjudicator, who must not be one of them.

Every function takes the acting person as a `team.Identity` (``team.local(name)`` in single-machine
mode; a plain name is refused) and checks the roles here, not on a page: grading needs `team.GRADE` (reviewer),
adjudicating `team.ADJUDICATE_GRADES` (adjudicator), starting a round or changing its k
`team.SET_GRADING_ROUND` (researcher, admin). A grader is known by the identity's subject, and every
grade row records who wrote it (``recorded_by`` and the identity columns). The functions take a
`Store`: a page or a command makes it once and passes it to every call.
"""
from __future__ import annotations

import hashlib
import json
import random
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..errors import UserError
from ..store import Store
from ..team import ADJUDICATE_GRADES, GRADE, SET_GRADING_ROUND, Identity, as_identity
from ..vocab import ADJUDICATE_ROLE, GOLD_CHECK_ROLE, GRADE_ROLE, GRADE_ROLES
from .prompts import answer_text, key_text, question_text
from .rubric import Criterion, Rubric, load_rubric


class BlindGradingError(UserError):
    """A request a blind grading round cannot grant (another grader's marks, a full answer, ...)."""


@dataclass(frozen=True)
class CriterionView:
    """What a grader is told about one criterion."""

    id: str
    label: str
    points: int
    allowed: tuple[int, ...]
    levels: dict[int, str]
    description: str

    @classmethod
    def of(cls, c: Criterion) -> CriterionView:
        return cls(c.id, c.label, c.points, c.allowed, dict(c.levels), c.prompt or c.description)


@dataclass(frozen=True)
class GradingTask:
    """One answer as a grader sees it: the item, the key and the words, under an opaque token.

    It deliberately has no model, condition, judge score or other grader's marks; ``mine`` holds
    only this grader's own marks so far (or, for an adjudicator, ``disputed`` the criteria to
    decide and ``marks`` the graders' marks on them, unnamed).
    """

    token: str
    dataset: str
    rubric: str
    round: int
    item_id: str
    item_type: str
    language: str | None
    question: str
    key: str
    answer: str
    image_hash: str | None
    criteria: tuple[CriterionView, ...]
    mine: dict[str, float] = field(default_factory=dict)
    role: str = GRADE_ROLE
    disputed: tuple[str, ...] = ()
    marks: dict[str, tuple[float, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Submitted:
    token: str
    added: int
    complete: bool       # this grader has marked every criterion of the answer
    settled: bool        # the answer is settled (agreed or adjudicated on every criterion)
    disputed: tuple[str, ...]


Actor = Identity


def _acting(who: Actor, action: str, what: str) -> Identity:
    """The identity acting, once its roles allow ``action`` (a plain name is refused: it holds no role)."""
    if who is not None and not isinstance(who, Identity):
        raise TypeError(f"{what} must be an Identity (team.identity.local(name) on a single machine), "
                        f"not {type(who).__name__} {who!r}")
    actor = as_identity(who)
    actor.require(action)
    return actor


# ---------------------------------------------------------------- rounds

def start_round(store: Store, dataset: str, rubric: str, graders: int, set_by: Actor,
                models: list[str] | tuple[str, ...] = (), conditions: list[str] | tuple[str, ...] = (),
                seed: int | None = None, seed_gold: float = 0.0, gold: list[str] | tuple[str, ...] | None = None) -> int:
    """A new grading round over the latest answers the rubric applies to; returns its number.

    ``seed_gold`` (0-1): the share of the round's answers that are seeded gold, settled answers of
    earlier rounds served again under fresh tokens and shuffled among the rest (1: a round of gold
    only); ``gold``: the tokens of the settled answers to seed from (default: every settled answer
    of the rubric). See ``judges.gold``."""
    from ..store.gold import save_gold_round_con
    from ..store.grades import create_round_con
    from .gold import check_rate, seed_pool
    from .launch import judged_answers

    actor = _acting(set_by, SET_GRADING_ROUND, "who sets the round")
    _check_graders(graders)
    rate = check_rate(seed_gold)
    rules = load_rubric(rubric)
    pool = seed_pool(store, dataset, rules, gold) if rate > 0 or gold else []
    if rate > 0 and not pool:
        raise UserError(f"no settled answer of rubric {rules.name} on dataset {dataset} to seed as gold yet: settle "
                        "some (two agreeing graders or an adjudicator) first, or start the round without seeding")
    answers, _ = judged_answers(store, dataset, rules, models, conditions)
    rng = random.Random(seed if seed is not None else secrets.randbits(64))
    order = list(range(len(answers)))
    rng.shuffle(order)
    rows = [{"token": secrets.token_hex(8), "item_id": answers.at[k, "item_id"], "model": answers.at[k, "model_key"],
             "condition": answers.at[k, "condition"], "response_id": int(answers.at[k, "response_id"]),
             "position": position} for position, k in enumerate(order)]
    seeds: list[tuple[str, str | None]] = []
    if rate > 0:
        rows, seeds = _seeded(rows, pool, rate, rng)
    with store.transaction() as con:
        number = create_round_con(con, dataset, rules.name, int(graders), actor.columns(), rows)
        if rate > 0:
            save_gold_round_con(con, dataset, rules.name, number, rate, len(pool), seeds, actor.columns())
        return number


def _seeded(rows: list[dict], pool: list[dict], rate: float, rng: random.Random) -> tuple[list[dict], list]:
    """The round's answers with gold answers mixed in (about ``rate`` of all), every position
    shuffled again: the serving order says nothing about which answers are seeded."""
    wanted = len(pool) if rate >= 1 else round(rate * len(rows) / (1 - rate))
    chosen = rng.sample(pool, min(len(pool), wanted))
    seeded = [{"token": secrets.token_hex(8), "item_id": g["item_id"], "model": g["model"],
               "condition": g["condition"], "response_id": int(g["response_id"]), "position": 0} for g in chosen]
    served = ([] if rate >= 1 else rows) + seeded
    rng.shuffle(served)
    for position, row in enumerate(served):
        row["position"] = position
    return served, [(row["token"], g["token"]) for row, g in zip(seeded, chosen)]


#: Most independent graders one answer may need (as reviewers per page of an extraction round).
MAX_GRADERS = 9


def _check_graders(graders: int) -> None:
    if isinstance(graders, bool) or not isinstance(graders, int) or not 1 <= graders <= MAX_GRADERS:
        raise UserError(f"graders per answer must be a whole number from 1 to {MAX_GRADERS}, not {graders!r}")


def set_graders(store: Store, dataset: str, rubric: str, graders: int, set_by: Actor) -> None:
    """Change k (independent graders per answer) of the current round."""
    from ..store.grades import latest_round_con, set_round_graders_con

    actor = _acting(set_by, SET_GRADING_ROUND, "who sets the round")
    _check_graders(graders)
    with store.transaction() as con:
        current = latest_round_con(con, dataset, rubric)
        if current is None:
            raise UserError(f"no grading round for rubric {rubric} on dataset {dataset}: start one first")
        set_round_graders_con(con, dataset, rubric, current[0], int(graders), actor.columns())


def current_rounds(store: Store, dataset: str) -> pd.DataFrame:
    """The newest grading round of every rubric of ``dataset`` (rubric, round, graders, set_by, set_at):
    what a grading page offers to work on. Counts only, no answers."""
    from ..store.grades import current_rounds_con

    with store.connect(read_only=True) as con:
        return current_rounds_con(con, dataset)


@dataclass
class _Round:
    """Everything the queue needs, read once: the round, its answers and the latest grades."""

    dataset: str
    rubric: Rubric
    number: int
    k: int
    answers: pd.DataFrame
    grades: pd.DataFrame   # latest per answer, criterion, grader, role
    by_answer: dict = field(default_factory=dict)   # (item_id, model, condition) -> its rows of ``grades``
    seeded: frozenset = frozenset()   # tokens of the round's seeded gold answers
    checks: dict = field(default_factory=dict)   # answer key -> this round's gold checks (as blind grades)
    gold_makers: dict = field(default_factory=dict)   # answer key -> who graded or adjudicated the gold


def _load_round(store: Store, dataset: str, rubric: str) -> _Round:
    from ..analysis.judges import latest_grades
    from ..store.gold import seeds_con
    from ..store.grades import latest_round_con, load_grades_con, round_answers_con

    rules = load_rubric(rubric)
    with store.connect(read_only=True) as con:
        current = latest_round_con(con, dataset, rules.name)
        if current is None:
            raise UserError(f"no grading round for rubric {rules.name} on dataset {dataset}: start one first")
        answers = round_answers_con(con, dataset, rules.name, current[0])
        seeded = frozenset(seeds_con(con, dataset, rules.name, current[0])["token"].astype(str))
        grades = load_grades_con(con, dataset, rules.name, gold_checks=bool(seeded))
    latest = latest_grades(grades)
    keys = ["item_id", "model", "condition"]
    if seeded and len(latest):
        is_check = latest["role"] == GOLD_CHECK_ROLE
        mine = latest[is_check & (pd.to_numeric(latest["round"], errors="coerce") == current[0])]
        checks = {key: part.assign(role=GRADE_ROLE) for key, part in mine.groupby(keys, sort=False)}
        latest = latest[latest["role"].isin(GRADE_ROLES)].reset_index(drop=True)
        makers = {key: set(part["grader"].astype(str)) for key, part in latest.groupby(keys, sort=False)}
    else:
        checks, makers = {}, {}
    by_answer = {key: part for key, part in latest.groupby(keys, sort=False)} if len(latest) else {}
    return _Round(dataset, rules, current[0], current[1], answers, latest, by_answer, seeded, checks, makers)


def _criteria_for(rules: Rubric, item_id: str) -> list[Criterion]:
    return [c for c in rules.criteria if rules.applies(c, item_id)]


def _answer_grades(state: _Round, answer: dict) -> pd.DataFrame:
    """The answer's latest grades; of a seeded gold answer, this round's gold checks (as blind grades),
    so the queue treats it exactly like the others."""
    key = (answer["item_id"], answer["model"], answer["condition"])
    if str(answer["token"]) in state.seeded:
        return state.checks.get(key, state.grades.iloc[0:0])
    return state.by_answer.get(key, state.grades.iloc[0:0])


def _gold_maker(state: _Round, answer: dict, grader: str) -> bool:
    """Whether ``grader`` graded or adjudicated the gold of this seeded answer (they would know it, and
    be checked against their own marks): it is never served to them."""
    key = (answer["item_id"], answer["model"], answer["condition"])
    return str(answer["token"]) in state.seeded and grader in state.gold_makers.get(key, ())


@dataclass(frozen=True)
class _Status:
    graders: tuple[str, ...]        # everyone who graded (blind) any criterion of the answer
    complete: tuple[str, ...]       # those who graded every criterion
    disputed: tuple[str, ...]       # criteria where the k graders disagree and no adjudicator decided
    settled: bool


def _status(state: _Round, answer: dict) -> _Status:
    rows = _answer_grades(state, answer)
    criteria = [c.id for c in _criteria_for(state.rubric, answer["item_id"])]
    blind = rows[rows["role"] == GRADE_ROLE] if len(rows) else rows
    adjudicated = set(rows.loc[rows["role"] == ADJUDICATE_ROLE, "criterion"]) if len(rows) else set()
    graders = tuple(sorted(set(blind["grader"]))) if len(blind) else ()
    done = blind.groupby("grader")["criterion"].agg(lambda s: set(s) >= set(criteria)) if len(blind) else pd.Series()
    complete = tuple(sorted(g for g, ok in done.items() if ok))
    disputed, settled = [], len(complete) >= state.k
    if str(answer["token"]) in state.seeded:  # the gold decides a seeded answer: nothing to adjudicate
        return _Status(graders, complete, (), settled)
    for c in criteria:
        marks = blind.loc[(blind["criterion"] == c) & blind["grader"].isin(complete), "points"] if len(blind) else []
        if len(marks) >= state.k and len(set(marks)) > 1 and c not in adjudicated:
            disputed.append(c)
    return _Status(graders, complete, tuple(disputed), settled and not disputed)


def _task(store: Store, state: _Round, answer: dict, role: str = GRADE_ROLE, mine: dict | None = None,
          disputed: tuple[str, ...] = (), marks: dict | None = None) -> GradingTask:
    from ..store.grades import item_image_con, item_record_con, response_texts_con

    with store.connect(read_only=True) as con:
        found = item_record_con(con, state.dataset, answer["item_id"])
        texts = response_texts_con(con, [int(answer["response_id"])])
        image = item_image_con(con, state.dataset, answer["item_id"])
    if found is None:
        raise UserError(f"item {answer['item_id']} is no longer in dataset {state.dataset}")
    record = {**json.loads(found[1]), "item_id": answer["item_id"]}
    raw, parsed = texts.get(int(answer["response_id"]), (None, None))
    words = answer_text(json.loads(parsed) if parsed else None, raw)
    criteria = tuple(CriterionView.of(c) for c in _criteria_for(state.rubric, answer["item_id"]))
    return GradingTask(token=str(answer["token"]), dataset=state.dataset, rubric=state.rubric.name,
                       round=state.number, item_id=str(answer["item_id"]), item_type=str(record.get("type")),
                       language=record.get("language"), question=question_text(record), key=key_text(record),
                       answer=words, image_hash=image, criteria=criteria,
                       mine=dict(mine or {}), role=role, disputed=disputed, marks=dict(marks or {}))


def _mine(state: _Round, answer: dict, grader: str, role: str = GRADE_ROLE) -> dict[str, float]:
    rows = _answer_grades(state, answer)
    if rows.empty:
        return {}
    own = rows[(rows["grader"] == grader) & (rows["role"] == role)]
    return {str(c): float(p) for c, p in zip(own["criterion"], own["points"])}


# ---------------------------------------------------------------- the queue

def next_answer(store: Store, dataset: str, rubric: str, grader: Actor) -> GradingTask | None:
    """The next answer for ``grader``: one they began and did not finish, else the first (in the
    round's shuffled order) that still needs a grader and that they have not graded. None when
    there is nothing left for them."""
    key = _acting(grader, GRADE, "the grader").key
    state = _load_round(store, dataset, rubric)
    waiting = None
    for answer in state.answers.to_dict("records"):
        status = _status(state, answer)
        if key in status.graders and key not in status.complete:
            return _task(store, state, answer, mine=_mine(state, answer, key))
        if waiting is None and key not in status.graders and len(status.graders) < state.k \
                and not _gold_maker(state, answer, key):
            waiting = answer
    return _task(store, state, waiting) if waiting is not None else None


def grader_queue(store: Store, dataset: str, rubric: str, grader: Actor) -> tuple[int, int, list[tuple]]:
    """(round, k, [(token, graders, began, open)]) of every answer of the current round, in the round's
    order: ``open`` when it is still open to ``grader`` (they began it and did not finish: ``began``;
    or they have not graded it and it has fewer than k graders). ``graders``: who graded any
    criterion of it (a work queue counts them against the k places; it never shows them)."""
    key = _acting(grader, GRADE, "the grader").key
    state = _load_round(store, dataset, rubric)
    out = []
    for answer in state.answers.to_dict("records"):
        status = _status(state, answer)
        began = key in status.graders and key not in status.complete
        is_open = began or (key not in status.graders and len(status.graders) < state.k)
        out.append((str(answer["token"]), status.graders, began, is_open))
    return state.number, state.k, out


def open_answer(store: Store, token: str, grader: Actor) -> GradingTask:
    """An answer of the current round by its token, for a grader who graded it or may still."""
    key = _acting(grader, GRADE, "the grader").key
    state, answer = _round_of(store, token)
    status = _status(state, answer)
    if key not in status.graders and (len(status.graders) >= state.k or _gold_maker(state, answer, key)):
        raise BlindGradingError("this answer has all its graders already")
    return _task(store, state, answer, mine=_mine(state, answer, key))


def _round_of(store: Store, token: str) -> tuple[_Round, dict]:
    from ..store.grades import round_answer_con

    with store.connect(read_only=True) as con:
        answer = round_answer_con(con, token)
    if answer is None:
        raise UserError("no answer with this token in any grading round")
    state = _load_round(store, answer["dataset"], answer["rubric"])
    if int(answer["round"]) != state.number:
        raise BlindGradingError(f"this answer belongs to round {answer['round']}, not to the current round "
                                f"{state.number}")
    return state, answer


def _validated(state: _Round, answer: dict, points: dict, only: tuple[str, ...] | None = None) -> list[tuple]:
    allowed = {c.id: c for c in _criteria_for(state.rubric, answer["item_id"])}
    if not points:
        raise UserError("no marks given")
    out = []
    for criterion, value in points.items():
        c = allowed.get(str(criterion))
        if c is None:
            raise UserError(f"criterion {criterion!r} does not apply to this answer "
                            f"(criteria: {', '.join(allowed)})")
        if only is not None and c.id not in only:
            raise BlindGradingError(f"criterion {c.id} is not disputed: an adjudicator decides disputed criteria only")
        if isinstance(value, bool) or not isinstance(value, int | float) or float(value) not in c.allowed:
            raise UserError(f"criterion {c.id}: {value!r} is not one of {', '.join(map(str, c.allowed))} points")
        out.append((c, float(value)))
    return out


def _row(state: _Round, answer: dict, actor: Identity, role: str, criterion: Criterion, value: float,
         note: str | None, source: str) -> dict:
    stamp = time.time()
    person = actor.key
    key = hashlib.sha256(json.dumps([state.dataset, answer["item_id"], answer["model"], answer["condition"],
                                     state.rubric.name, criterion.id, person, role, value, stamp,
                                     secrets.token_hex(4)]).encode()).hexdigest()
    return {"grade_key": key, "dataset": state.dataset, "item_id": answer["item_id"], "model": answer["model"],
            "condition": answer["condition"], "rubric": state.rubric.name, "rubric_hash": state.rubric.hash,
            "criterion": criterion.id, "grader": person, "role": role, "points": value,
            "response_id": int(answer["response_id"]), "round": state.number, "source": source, "simulated": False,
            "note": note, "recorded_by": person, **actor.columns()}


def submit_grades(store: Store, token: str, grader: Actor, points: dict[str, int], note: str | None = None,
                  source: str = "page") -> Submitted:
    """Record a grader's blind marks on some or all criteria of one answer (latest mark counts).

    Refused: an answer that already has its k graders (and this grader is not one of them), and a
    settled answer (a change then goes through adjudication)."""
    from ..store.grades import add_grades_con

    actor = _acting(grader, GRADE, "the grader")
    key = actor.key
    state, answer = _round_of(store, token)
    status = _status(state, answer)
    if key not in status.graders and (len(status.graders) >= state.k or _gold_maker(state, answer, key)):
        raise BlindGradingError("this answer has all its graders already")
    if status.settled:
        raise BlindGradingError("this answer is settled; a change goes through an adjudicator")
    marks = _validated(state, answer, points)
    role = GOLD_CHECK_ROLE if str(token) in state.seeded else GRADE_ROLE  # a check of the grader, never gold
    rows = [_row(state, answer, actor, role, c, v, _note(note), source) for c, v in marks]
    with store.transaction() as con:
        added = add_grades_con(con, rows)
    after = _load_round(store, state.dataset, state.rubric.name)
    new = _status(after, answer)
    return Submitted(str(token), added, key in new.complete, new.settled, new.disputed)


def adjudication_queue(store: Store, dataset: str, rubric: str, adjudicator: Actor) -> list[GradingTask]:
    """Answers whose k graders disagree on a criterion no adjudicator has decided, for someone who
    graded none of them. Each task names the disputed criteria and the graders' marks (unnamed)."""
    key = _acting(adjudicator, ADJUDICATE_GRADES, "the adjudicator").key
    state = _load_round(store, dataset, rubric)
    out = []
    for answer in state.answers.to_dict("records"):
        status = _status(state, answer)
        if status.disputed and key not in status.graders:
            out.append(_disputed_task(store, state, answer, status))
    return out


def disputed_queue(store: Store, dataset: str, rubric: str, adjudicator: Actor) -> tuple[int, list[tuple[str, bool]]]:
    """(round, [(token, open)]) of every answer of the current round, in the round's order: ``open`` when
    it waits for ``adjudicator`` (its graders disagree on a criterion nobody decided yet, and they graded
    none of it). Tokens only: a work queue hands them out; the marks come with `open_disputed`, to an
    adjudicator alone."""
    key = _acting(adjudicator, ADJUDICATE_GRADES, "the adjudicator").key
    state = _load_round(store, dataset, rubric)
    out = []
    for answer in state.answers.to_dict("records"):
        status = _status(state, answer)
        out.append((str(answer["token"]), bool(status.disputed) and key not in status.graders))
    return state.number, out


def open_disputed(store: Store, token: str, adjudicator: Actor) -> GradingTask:
    """A disputed answer of the current round by its token, for an adjudicator who graded none of it: the
    disputed criteria and the graders' marks on them (unnamed)."""
    key = _acting(adjudicator, ADJUDICATE_GRADES, "the adjudicator").key
    state, answer, status = _disputed_for(store, token, key)
    return _disputed_task(store, state, answer, status)


def _disputed_for(store: Store, token: str, key: str) -> tuple[_Round, dict, _Status]:
    """The answer behind ``token`` with its status, when the adjudicator ``key`` may decide it: refused
    when they graded it (blindness) or when nothing of it is disputed."""
    state, answer = _round_of(store, token)
    status = _status(state, answer)
    if key in status.graders:
        raise BlindGradingError("you graded this answer: another person adjudicates it")
    if not status.disputed:
        raise BlindGradingError("this answer has no disputed criterion to adjudicate")
    return state, answer, status


def _disputed_task(store: Store, state: _Round, answer: dict, status: _Status) -> GradingTask:
    rows = _answer_grades(state, answer)
    blind = rows[(rows["role"] == GRADE_ROLE) & rows["grader"].isin(status.complete)]
    marks = {c: tuple(sorted(float(p) for p in blind.loc[blind["criterion"] == c, "points"])) for c in status.disputed}
    return _task(store, state, answer, role=ADJUDICATE_ROLE, disputed=status.disputed, marks=marks)


def adjudicate(store: Store, token: str, adjudicator: Actor, points: dict[str, int], note: str | None = None,
               source: str = "page") -> Submitted:
    """Decide the disputed criteria of an answer (an adjudicator who graded it may not)."""
    from ..store.grades import add_grades_con

    actor = _acting(adjudicator, ADJUDICATE_GRADES, "the adjudicator")
    state, answer, status = _disputed_for(store, token, actor.key)
    marks = _validated(state, answer, points, only=status.disputed)
    rows = [_row(state, answer, actor, ADJUDICATE_ROLE, c, v, _note(note), source) for c, v in marks]
    with store.transaction() as con:
        added = add_grades_con(con, rows)
    new = _status(_load_round(store, state.dataset, state.rubric.name), answer)
    return Submitted(str(token), added, True, new.settled, new.disputed)


def answer_grades(store: Store, token: str, viewer: Actor) -> pd.DataFrame:
    """The marks on an answer a person may see: everyone's once it is settled, before that only
    the viewer's own (the blindness rule in one place, whatever the viewer's roles).
    ``attrs["settled"]`` says which."""
    key = as_identity(viewer).key
    state, answer = _round_of(store, token)
    status = _status(state, answer)
    rows = _answer_grades(state, answer)
    columns = ["criterion", "grader", "role", "points", "graded_at"]
    shown = rows if status.settled else rows[rows["grader"] == key] if len(rows) else rows
    out = shown[columns].reset_index(drop=True) if len(shown) else pd.DataFrame(columns=columns)
    out.attrs["settled"] = status.settled
    return out


def settled_grades(store: Store) -> pd.DataFrame:
    """The latest grades (graders' and adjudicators') of every answer that is settled in the current
    round of its dataset and rubric, with the answer's round ``token``, its serving ``position`` in
    the round (``round_number``) and the criterion's ``max_points``: the only marks a rater's record
    may show (an unsettled answer's marks stay blind, the rule of `answer_grades`). Rubrics whose
    file is gone are left out: their marks have no scale."""
    from ..store.grades import load_grades

    grades = load_grades(store)
    columns = [*grades.columns, "token", "position", "round_number", "max_points"]
    parts = []
    for (dataset, rubric), _part in grades.groupby(["dataset", "rubric"], sort=True):
        try:
            state = _load_round(store, str(dataset), str(rubric))
        except UserError:
            continue  # no round for these grades, or the rubric file is gone
        maxima = {c.id: float(c.points) for c in state.rubric.criteria}
        for answer in state.answers.to_dict("records"):
            if str(answer["token"]) not in state.seeded and _status(state, answer).settled:
                rows = _answer_grades(state, answer)
                parts.append(rows.assign(token=str(answer["token"]), position=int(answer["position"]),
                                         round_number=state.number, max_points=rows["criterion"].map(maxima)))
    if not parts:
        return pd.DataFrame(columns=columns)
    return pd.concat(parts, ignore_index=True)


def round_progress(store: Store, dataset: str, rubric: str, grader: Actor | None = None) -> pd.DataFrame:
    """Counts of the current round (no model, no marks): answers, graded by k, disputed, settled;
    with ``grader``, also how many answers that person has graded in full (``mine``)."""
    state = _load_round(store, dataset, rubric)
    statuses = [_status(state, a) for a in state.answers.to_dict("records")]
    return pd.DataFrame([{
        "dataset": dataset, "rubric": state.rubric.name, "round": state.number, "graders_per_answer": state.k,
        "answers": len(statuses), "started": sum(1 for s in statuses if s.graders),
        "fully_graded": sum(1 for s in statuses if len(s.complete) >= state.k),
        "disputed": sum(1 for s in statuses if s.disputed), "settled": sum(1 for s in statuses if s.settled),
        **({"mine": sum(1 for s in statuses if as_identity(grader).key in s.complete)} if grader is not None else {})}])


def rubric_names() -> list[str]:
    """The rubrics a round can be started with (the rubric folder's files)."""
    from .rubric import load_rubrics

    return [r.name for r in load_rubrics()]


def task_image(store: Store, task: GradingTask) -> Path | None:
    """The file of the item's image (None when the item has none)."""
    from ..store.items import image_path

    return image_path(store, task.image_hash) if task.image_hash else None


def _note(note: str | None) -> str | None:
    """A grader's note: stripped, empty as None, at most 2,000 characters."""
    text = (note or "").strip()
    if len(text) > 2000:
        raise UserError("a note holds at most 2,000 characters")
    return text or None

