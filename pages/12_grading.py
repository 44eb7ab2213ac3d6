"""Grade answers: art historians mark open answers criterion by criterion, blind; adjudicators settle
the criteria graders disagree on; researchers start grading rounds.

Thin page: the queue, what a grader may see, the marks and the permissions are
``eduart_core.judges.grading``. A grader is shown the item, its key, the answer and the rubric's
criteria, all as plain text, and never the model that wrote the answer, a judge's verdict or another
grader's marks: the `GradingTask` the library hands out holds none of them. "Next" hands a grader, or an
adjudicator, the next answer that needs them and holds it for them (``eduart_core.queues``: two
adjudicators never hold one disputed answer). Every write is a button callback that passes the acting
identity; the library refuses what the roles do not allow and records who made each grade.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from eduart_core import queues, team
from eduart_core.errors import UserError
from eduart_core.judges import grading
from eduart_core.text import plain
from eduart_core.vocab import ADJUDICATE_ROLE, GRADE_ROLE, format_label, language_label
from pages.ui import failures, fulltext, my_record, navigate, sidebar, signin, store_handle

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

#: What the page is for, under its title.
PURPOSE = ("Art historians mark the open answers criterion by criterion against a rubric, blind: a grader never "
           "sees which model wrote an answer, a judge's verdict or another grader's marks. An adjudicator settles "
           "the criteria graders disagree on; researchers start the grading rounds.")
GRADE, ADJUDICATE = "grade", "adjudicate"
CAPACITIES = {GRADE: ("Grader", team.GRADE), ADJUDICATE: ("Adjudicator", team.ADJUDICATE_GRADES)}

st.title("Grade answers")
st.markdown(PURPOSE)
sel = sidebar.current_selection()
store = store_handle.store()
signed_in = signin.signin_enabled()


def _say(kind: str, text: str) -> None:
    """A message for the next run (plain text, escaped when shown)."""
    st.session_state["grading_message"] = (kind, text)


def _set_name() -> None:
    name = (st.session_state.get("grading_name") or "").strip()
    if name:
        st.session_state["reviewer"] = name  # the same typed name as the Review studio's


def _forget_name() -> None:
    st.session_state.pop("reviewer", None)
    st.session_state["grading_name"] = ""


# ---------------------------------------------------------------- actions (callbacks)

def _marks(token: str, criteria: list[str]) -> dict[str, float]:
    chosen = {c: st.session_state.get(f"grade::{token}::{c}") for c in criteria}
    return {c: v for c, v in chosen.items() if v is not None}


def _submit(token: str, criteria: list[str]) -> None:
    who = signin.identity()
    if who is None:
        _say("warning", "Type your name first: it is stored with every grade.")
        return
    marks = _marks(token, criteria)
    try:
        done = grading.submit_grades(store, token, who, marks, note=st.session_state.get(f"grade_note::{token}"))
    except UserError as exc:
        _say("warning", str(exc))
        return
    store_handle.data_changed()
    left = len(criteria) - len(marks)
    if done.complete:  # this answer is done for this person: its hold ends, the next one is held for them
        try:
            queues.finish_grading_answer(store, who, grading.open_answer(store, token, who))
            _hand(who, after=token)
        except UserError:
            st.session_state.pop("grading_held", None)
    _say("success", "Grades saved; the next answer is shown." if done.complete else
         f"Grades saved; {left} criterion(s) of this answer still to mark.")


@dataclass(frozen=True)
class _Lane:
    """One queue of the round on this page: graders' answers or adjudicators' disputed answers."""

    role: str
    held_key: str  # the session key remembering the unit held for this person
    noun: str
    open: Callable  # the library call that opens a unit for this role (checks the role and blindness)


GRADER = _Lane(GRADE_ROLE, "grading_held", "answer", grading.open_answer)
ADJUDICATOR = _Lane(ADJUDICATE_ROLE, "grading_adj_held", "disputed answer", grading.open_disputed)


def _hand(who, after: str | None = None, lane: _Lane = GRADER) -> str | None:
    """Hold the next unit of ``lane`` that needs ``who`` (leaving ``after``); remembers its token for this session."""
    handed = queues.next_grading_answer(store, sel.dataset, st.session_state.get("grading_rubric_now"), who,
                                        after=after, role=lane.role)
    st.session_state[lane.held_key] = handed.unit if handed else None
    return handed.unit if handed else None


def _next(token: str, lane: _Lane = GRADER) -> None:
    """Button callback ("Next", N): leave this unit to others and hold the next one."""
    try:
        got = _hand(signin.identity(), after=token, lane=lane)
    except UserError as exc:
        _say("warning", str(exc))
        return
    _say("info", f"The next {lane.noun} is held for you." if got and got != token else _nothing_words(lane.role))


def _skip(token: str, lane: _Lane = GRADER) -> None:
    """Button callback ("Skip", S): leave this unit (it comes back to you last) and hold the next one."""
    who = signin.identity()
    try:
        handed = queues.skip_grading_answer(store, who, lane.open(store, token, who))
    except UserError as exc:
        _say("warning", str(exc))
        return
    st.session_state[lane.held_key] = handed.unit if handed else None
    _say("info", f"Skipped; the next {lane.noun} is held for you." if handed and handed.unit != token
         else "Skipped. " + _nothing_words(lane.role))


def _nothing_words(role: str = GRADE_ROLE) -> str:
    """Why nothing else was handed out, in counts only (blind answers stay blind)."""
    waiting = queues.grading_waiting(store, sel.dataset, st.session_state.get("grading_rubric_now"),
                                     signin.identity(), role=role)
    if waiting.elsewhere and role == ADJUDICATE_ROLE:
        return (f"Nothing else has room for you now: {waiting.elsewhere} disputed answer(s) are held by other "
                "adjudicators (a hold that runs out brings its answer back).")
    if waiting.elsewhere:
        return (f"Nothing else has room for you now: {waiting.elsewhere} answer(s) already have their graders or "
                "are held by others (a hold that runs out brings its answer back).")
    return "Nothing else waits for you in this round."


def _decide(token: str, criteria: list[str]) -> None:
    """Button callback ("Save decision"): settle the disputed criteria; once none is left, the hold ends
    and the next disputed answer is held for this adjudicator."""
    who = signin.identity()
    if who is None:
        _say("warning", "Type your name first: it is stored with every decision.")
        return
    try:
        task = grading.open_disputed(store, token, who)
        done = grading.adjudicate(store, token, who, _marks(token, criteria),
                                  note=st.session_state.get(f"grade_note::{token}"))
    except UserError as exc:
        _say("warning", str(exc))
        return
    store_handle.data_changed()
    if done.disputed:
        _say("success", f"Decision saved; {len(done.disputed)} disputed criterion(s) of this answer still to decide.")
        return
    queues.finish_grading_answer(store, who, task)
    got = _hand(who, after=token, lane=ADJUDICATOR)
    _say("success", "Decision saved; the next disputed answer is held for you." if got else
         "Decision saved. " + _nothing_words(ADJUDICATE_ROLE))


def _graders() -> int:
    """The typed number of graders as it is (0 stays 0, so `grading` refuses it with its reason)."""
    value = st.session_state.get("grading_k")
    return 2 if value is None else int(value)


def _start_round(rubric: str) -> None:
    try:
        number = grading.start_round(store, sel.dataset, rubric, _graders(),
                                     signin.identity())
    except UserError as exc:
        _say("warning", str(exc))
        return
    store_handle.data_changed()
    _say("success", f"Round {number} of rubric {rubric} started.")


def _set_k(rubric: str) -> None:
    try:
        grading.set_graders(store, sel.dataset, rubric, _graders(), signin.identity())
    except UserError as exc:
        _say("warning", str(exc))
        return
    store_handle.data_changed()
    _say("success", "Graders per answer changed.")


# ---------------------------------------------------------------- who is grading

if signed_in:
    who = signin.identity()
    st.caption(plain(f"Grading as {who.label()}" if who else "Not signed in"))
elif not st.session_state.get("reviewer"):
    st.text_input("Your name (kept for this browser session and stored with every grade)", key="grading_name",
                  on_change=_set_name)
    st.caption(plain(team.NOT_SIGNED_IN.capitalize()))
else:
    line = st.container(horizontal=True, vertical_alignment="center")
    line.markdown(f"Grading as **{plain(st.session_state['reviewer'])}** · {plain(team.NOT_SIGNED_IN)}")
    line.button("Change name", key="grading_change_name", on_click=_forget_name, type="tertiary")
who = signin.identity()

message = st.session_state.pop("grading_message", None)
if message:
    getattr(st, message[0])(plain(message[1]))

with failures.guard():
    rounds = grading.current_rounds(store, sel.dataset)
may_set = who is not None and who.may(team.SET_GRADING_ROUND)


def settings(rubric: str | None, rubrics: list[str]) -> None:
    """Start a round or change its graders per answer (researchers and admins)."""
    if not may_set:
        return
    with st.expander("Round settings (researchers and admins)", expanded=rubric is None):
        c1, c2, c3, c4 = st.columns([2, 1, 1, 1], vertical_alignment="bottom")
        chosen = c1.selectbox("Rubric", rubrics, key="grading_new_rubric") if rubric is None else rubric
        if rubric is not None:
            c1.caption(plain(f"Rubric {rubric}"))
        c2.number_input("Graders per answer", value=2, step=1, key="grading_k",  # bounds: `grading` names them
                        help=f"Independent graders each answer needs (1 to {grading.MAX_GRADERS}); disagreements "
                             "go to an adjudicator.")
        c3.button("Start a new round", key="grading_start", on_click=_start_round, args=(chosen,),
                  disabled=chosen is None)
        if rubric is not None:
            c4.button("Change graders", key="grading_set_k", on_click=_set_k, args=(rubric,))


if rounds.empty:
    st.info(plain(f"No grading round on dataset {sel.dataset}. A researcher starts one here or with this command:"))
    st.code(f"python -m eduart_core grading-round --dataset {sel.dataset} --rubric NAME --graders K", language=None)
    with failures.guard():
        settings(None, grading.rubric_names())
    st.stop()

rubrics = list(rounds["rubric"])
rubric = st.selectbox("Rubric", rubrics, key="grading_rubric") if len(rubrics) > 1 else rubrics[0]
capacities = [c for c, (_label, action) in CAPACITIES.items() if who is None or who.may(action)]
if not capacities:
    st.caption("Your roles include neither grading nor adjudicating: the round's counts only.")
    role = None
elif len(capacities) > 1:
    role = st.radio("Work as", capacities, format_func=lambda c: CAPACITIES[c][0], horizontal=True,
                    key="grading_role", help="Adjudicators decide the criteria on which the graders of an answer "
                                             "disagree; they never adjudicate an answer they graded.")
else:
    role = capacities[0]

with failures.guard():
    progress = grading.round_progress(store, sel.dataset, rubric, who).iloc[0]
k = int(progress["graders_per_answer"])
mine = f" · {int(progress['mine'])} graded by you" if "mine" in progress and who is not None else ""
st.progress(int(progress["settled"]) / max(int(progress["answers"]), 1),
            text=plain(f"Round {int(progress['round'])} · {int(progress['answers'])} answers · {k} blind grader(s) "
                       f"each · {int(progress['settled'])} settled · {int(progress['disputed'])} disputed{mine}"))
settings(rubric, rubrics)


# ---------------------------------------------------------------- one answer

def item_panel(task: grading.GradingTask) -> None:
    """The item, its key and the answer, as plain text (never the model, a judge or other graders)."""
    language = language_label(task.language) if task.language else "language not given"
    st.caption(plain(f"Item {task.item_id} · {format_label(task.item_type)} · {language}"))
    image = None
    if task.image_hash:
        try:
            image = grading.task_image(store, task)
        except UserError as exc:
            st.caption(plain(f"Image unavailable: {exc}"))
    left, right = st.columns([3, 2]) if image else (st.container(), None)
    with left:
        st.markdown("**Question**")
        fulltext.long_text(task.question, f"grading_q_{task.token}")
        st.markdown("**Key**")
        fulltext.long_text(task.key, f"grading_k_{task.token}")
        st.markdown("**Answer to grade**")
        with st.container(border=True):
            fulltext.long_text(task.answer, f"grading_a_{task.token}")
    if right is not None:
        right.image(str(image), width="stretch")


def criterion_input(task: grading.GradingTask, c: grading.CriterionView, preset: float | None) -> None:
    st.markdown(f"**{plain(c.label)}** ({c.points} point{'s' if c.points != 1 else ''})")
    if c.description:
        st.caption(plain(c.description))
    options = list(c.allowed)
    index = options.index(int(preset)) if preset is not None and int(preset) in options else None
    st.radio(plain(f"Points for {c.label}"), options, index=index, horizontal=True,
             key=f"grade::{task.token}::{c.id}", label_visibility="collapsed",
             format_func=lambda p, c=c: plain(f"{p}: {c.levels[p]}" if c.levels.get(p) else str(p)))


def grade_section() -> None:
    if who is None:
        st.info("Type your name above to start grading.")
        return
    with failures.guard():
        task = held_task()
    if task is None:
        st.success("Nothing left for you in this round: every answer has its graders, or you graded it.")
        return
    st.subheader("Answer")
    item_panel(task)
    st.markdown("**Rubric**")
    with st.container(key="grading_criteria", border=True):
        for c in task.criteria:
            criterion_input(task, c, task.mine.get(c.id))
    st.text_area("Note (optional)", key=f"grade_note::{task.token}", max_chars=2000)
    criteria = [c.id for c in task.criteria]
    b1, b2, b3 = st.columns([2, 1, 1])
    b1.button("Save grades", key="grading_submit", type="primary", on_click=_submit, args=(task.token, criteria))
    if st.session_state.get("grading_held") == task.token:
        b2.button("Next", key="grading_next", on_click=_next, args=(task.token,), shortcut="N",
                  help="Leave this answer to others and hold the next one that needs you")
        b3.button("Skip", key="grading_skip", on_click=_skip, args=(task.token,), shortcut="S",
                  help="Leave this answer to others (it comes back to you last) and hold the next one")
        holder = queues.grading_waiting(store, sel.dataset, rubric, who)
        st.caption(plain(f"Held for you (a hold runs out after {queues.DEFAULT_HOLD_S / 60:.0f} minutes) · "
                         f"{max(holder.mine - 1, 0)} more answer(s) wait for you · Keys: N next · S skip (not while "
                         "typing in a field)"))
    st.caption("Blind round: you see neither the model that wrote this answer, nor a judge's verdict, nor the other "
               "graders' marks." if k > 1 else "You see neither the model that wrote this answer nor a judge's verdict.")


def held_task() -> grading.GradingTask | None:
    """The answer held for this person in this session, or the next one the queue holds for them."""
    token = st.session_state.get("grading_held")
    if token:
        try:
            task = grading.open_answer(store, token, who)
            if task.rubric == rubric and task.dataset == sel.dataset and set(task.mine) != {c.id for c in task.criteria}:
                return task
        except UserError:
            pass
    token = _hand(who)
    return grading.open_answer(store, token, who) if token else None


def adjudicate_section() -> None:
    if who is None:
        st.info("Type your name above to adjudicate.")
        return
    with failures.guard():
        task = held_disputed()
        waiting = queues.grading_waiting(store, sel.dataset, rubric, who, role=ADJUDICATE_ROLE)
    if task is None:
        st.success("No disputed answer waits for you (answers you graded go to another adjudicator)."
                   if not waiting.elsewhere else
                   f"No disputed answer has room for you now: {waiting.elsewhere} are held by other adjudicators "
                   "(a hold that runs out brings its answer back).")
        return
    st.subheader("Disputed answer")
    item_panel(task)
    with st.container(key="grading_disputed", border=True):
        for c in task.criteria:
            if c.id not in task.disputed:
                continue
            criterion_input(task, c, None)
            marks = ", ".join(f"{m:g}" for m in task.marks.get(c.id, ()))
            st.caption(plain(f"The graders gave: {marks} (unnamed)"))
    st.text_area("Note (optional)", key=f"grade_note::{task.token}", max_chars=2000)
    b1, b2, b3 = st.columns([2, 1, 1])
    b1.button("Save decision", key="grading_decide", type="primary", on_click=_decide,
              args=(task.token, list(task.disputed)))
    b2.button("Next", key="grading_adjudicate_next", on_click=_next, args=(task.token, ADJUDICATOR), shortcut="N",
              help="Leave this answer to other adjudicators and hold the next disputed one")
    b3.button("Skip", key="grading_adjudicate_skip", on_click=_skip, args=(task.token, ADJUDICATOR), shortcut="S",
              help="Leave this answer to other adjudicators (it comes back to you last) and hold the next one")
    holder = queues.grading_holder(store, who, task)
    held = (f"Held for you until {holder[1]:%H:%M} UTC" if holder and holder[0] == "you" else
            f"Another adjudicator holds this answer until {holder[1]:%H:%M} UTC: press Next for one of your own"
            if holder else "Not held: press Next to have the next disputed answer held for you")
    st.caption(plain(f"{held} · {waiting.mine - (waiting.held is not None)} more disputed answer(s) wait for you · "
                     "Keys: N next · S skip (not while typing in a field)"))


def held_disputed() -> grading.GradingTask | None:
    """The disputed answer held for this adjudicator in this session, or the next one the adjudicators'
    queue holds for them (one adjudicator per answer: another's held answer is never shown)."""
    token = st.session_state.get("grading_adj_held")
    if token:
        try:
            task = grading.open_disputed(store, token, who)
            if task.rubric == rubric and task.dataset == sel.dataset and \
                    (queues.grading_holder(store, who, task) or ("",))[0] == "you":
                return task
        except UserError:
            pass
    token = _hand(who, lane=ADJUDICATOR)
    return grading.open_disputed(store, token, who) if token else None


st.session_state["grading_rubric_now"] = rubric  # what the buttons' callbacks work on
if role == GRADE:
    grade_section()
elif role == ADJUDICATE:
    adjudicate_section()

with st.expander("My record: overruled marks, agreement, severity", expanded=False):
    my_record.my_record_section(who, "grading_record")
