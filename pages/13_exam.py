"""Sit the exam: a respondent answers a sampled form item by item; a researcher sets up sessions and
watches them.

Thin page: forms, editors, timing, scoring and permissions are ``eduart_core.humans`` (sessions,
forms, people); tables come from the registered views. A respondent sees one item at a time without
its key, in the format's own editor, and never a model's answer, a key or a score. Every write is a
button callback that passes the acting identity; the library refuses what the roles do not allow.
"""
from __future__ import annotations

import time

import pandas as pd
import streamlit as st

from eduart_core import team, views
from eduart_core.errors import UserError
from eduart_core.humans import adaptive_exam, forms, people, sessions
from eduart_core.text import plain
from eduart_core.vocab import HUMAN_GROUPS, format_label, format_names, language_label
from pages.ui import editor_widgets, failures, fulltext, navigate, plots, sidebar, signin, store_handle, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

st.title("Sit the exam")
st.markdown("People sit the benchmark themselves: a respondent answers a sampled form item by item (never seeing "
            "a key, a score or a model's answer), so that people can be compared with the models on the Overview. "
            "Researchers set up the sessions and follow them here.")
src, sel = store_handle.source(), sidebar.current_selection()
path = store_handle.store_path()
signed_in = signin.signin_enabled()
SIT, RUN = "sit", "run"
SECTIONS = {SIT: "Sit the exam", RUN: "Sessions (researchers)"}


def _who() -> team.Identity | None:
    """Who acts here: the signed-in person, else the typed name (single-machine mode)."""
    if signed_in:
        return signin.identity()
    name = (st.session_state.get("exam_name") or "").strip()
    return team.local(name) if name else signin.identity()


def _fail(exc: Exception) -> None:
    st.session_state["exam_message"] = ("warning", str(exc))


def _actor() -> team.Identity:
    """The acting person, or one line asking for a name (single-machine mode)."""
    who = _who()
    if who is None:
        raise UserError("type your name first: it is stored with the session")
    return who


# ---------------------------------------------------------------- actions (callbacks)

def _begin(session_id: str) -> None:
    try:
        state = sessions.begin(path, session_id, _actor())
    except UserError as exc:
        _fail(exc)
        return
    st.session_state["exam_sitting"] = (state.session_id, state.respondent)
    st.session_state["exam_message"] = ("info", f"You sit this form as {state.respondent} (your pseudonym): "
                                                f"{state.answered} of {state.n_items} items answered so far.")
    store_handle.data_changed()


def _submit(session_id: str, respondent: str, item_id: str, prefix: str, skip: bool) -> None:
    question = sessions.current_question(path, session_id, respondent)
    if question is None:  # a second click after the last answer: nothing left to answer
        return
    values = None if skip else editor_widgets.editor_values(forms.answer_editor(question.record), prefix)
    try:
        sessions.answer(path, session_id, respondent, item_id, values, _actor())
    except UserError as exc:
        _fail(exc)
        return
    store_handle.data_changed()


def _pause(session_id: str, respondent: str, resume: bool) -> None:
    try:
        (sessions.resume if resume else sessions.pause)(path, session_id, respondent, _actor())
    except UserError as exc:
        _fail(exc)
    store_handle.data_changed()


def _leave() -> None:
    st.session_state.pop("exam_sitting", None)


def _create() -> None:
    try:
        limit = int(st.session_state.get("exam_limit") or 0)
        per_cell = st.session_state.get("exam_per_cell")
        if st.session_state.get("exam_adaptive"):  # one item at a time from a frozen bank (`humans.adaptive_exam`)
            cap = int(st.session_state.get("exam_max_items") or 0)
            adaptive_exam.create_adaptive_session(
                path, sel.dataset, group=st.session_state.get("exam_group") or "", actor=_actor(),
                bank=st.session_state.get("exam_bank"), target_se=float(st.session_state.get("exam_target_se")),
                max_items=cap or None, time_limit_s=limit or None, title=st.session_state.get("exam_title") or None,
                show_result=bool(st.session_state.get("exam_show_result")))
            st.session_state["exam_message"] = ("success", "Adaptive session open: respondents can start it now.")
            store_handle.data_changed()
            return
        sessions.create_session(
            path, sel.dataset, group=st.session_state.get("exam_group") or "", actor=_actor(),
            per_cell=2 if per_cell is None else int(per_cell), formats=st.session_state.get("exam_formats") or (),
            languages=st.session_state.get("exam_languages") or (), time_limit_s=limit or None,
            title=st.session_state.get("exam_title") or None)
    except UserError as exc:
        _fail(exc)
        return
    st.session_state["exam_message"] = ("success", "Session open: respondents can start it now.")
    store_handle.data_changed()


def _close(session_id: str) -> None:
    try:
        sessions.close_session(path, session_id, _actor())
    except UserError as exc:
        _fail(exc)
        return
    store_handle.data_changed()


# ---------------------------------------------------------------- who is here

if signed_in:
    who = signin.identity()
    st.caption(plain(f"Signed in as {who.label()}" if who else "Not signed in"))
else:
    st.text_input("Your name (single-machine mode: typed, not verified; stored with your answers, shown only to "
                  "researchers)", key="exam_name")
    who = _who()
message = st.session_state.pop("exam_message", None)
if message:
    getattr(st, message[0])(plain(message[1]))

allowed = [k for k, action in ((SIT, team.SIT_EXAM), (RUN, team.RUN_EXAMS)) if who is None or who.may(action)]
if not allowed:
    st.info("Your roles include neither sitting an exam nor running exam sessions.")
    st.stop()
if st.session_state.get("exam_section") not in allowed:
    st.session_state["exam_section"] = allowed[0]
section = st.segmented_control("Section", allowed, format_func=SECTIONS.get, key="exam_section", required=True,
                               label_visibility="collapsed") if len(allowed) > 1 else allowed[0]


# ---------------------------------------------------------------- the respondent

def question_view(session_id: str, respondent: str) -> None:
    state = sessions.sitting(path, session_id, respondent)
    question = sessions.current_question(path, session_id, respondent)
    if question is None:
        st.success(f"Thank you: you answered all {state.n_items} items of this form.")
        result = adaptive_exam.result_for(path, session_id, respondent)  # only when the organiser allows it
        if result:
            st.info(result)
        st.button("Back to the sessions", key="exam_leave", on_click=_leave)
        return
    left = adaptive_exam.about_left(path, session_id, respondent)
    if left is None:
        st.progress(state.answered / max(state.n_items, 1),
                    text=f"Item {question.position} of {question.n_items} · {format_label(question.record.get('type'))}")
    else:  # an adaptive form: its length depends on the answers
        st.progress(state.answered / max(state.answered + left, 1),
                    text=f"Item {question.position} · about {left} question{'s' if left != 1 else ''} left · "
                         f"{format_label(question.record.get('type'))}")
    if state.status == sessions.PAUSED:
        st.info("Paused: the clock of this item is stopped.")
        st.button("Resume", key="exam_resume", type="primary", on_click=_pause, args=(session_id, respondent, True))
        return
    record = question.record
    for part in ("question_title", "instructions"):
        if record.get(part):
            st.markdown(f"**{plain(record[part])}**" if part == "question_title" else plain(record[part]))
    if question.image_path:
        st.image(question.image_path, width=480)
    if record.get("question_text"):
        fulltext.long_text(record["question_text"], f"exam_{question.item_id}")
    editor = forms.answer_editor(record)
    if editor.help:
        st.caption(plain(editor.help))
    prefix = f"exam::{session_id}::{respondent}::{question.item_id}::"
    with st.container(key="exam_answer"):
        editor_widgets.draw_editor(editor, prefix)
    if question.time_limit_s:
        st.caption(f"Time on this item: {question.elapsed_s:.0f} s of {question.time_limit_s} s (an answer after the "
                   "limit is recorded as not answered).")
    else:
        st.caption(f"Time on this item: {question.elapsed_s:.0f} s (no limit).")
    row = st.container(horizontal=True)
    row.button("Submit answer", key="exam_submit", type="primary", on_click=_submit,
               args=(session_id, respondent, question.item_id, prefix, False))
    row.button("Skip", key="exam_skip", on_click=_submit, args=(session_id, respondent, question.item_id, prefix, True))
    row.button("Pause", key="exam_pause", on_click=_pause, args=(session_id, respondent, False))


def sit_section() -> None:
    sitting = st.session_state.get("exam_sitting")
    if sitting:
        question_view(*sitting)
        return
    if who is None:
        st.info("Type your name above to start.")
        return
    with failures.guard():
        listed = views.exam_sessions(src, sel, every=True)
    open_ = listed[listed["status"] == sessions.OPEN]
    if open_.empty:
        st.info("No exam session is open. A researcher opens one in the Sessions section.")
        return
    titles = dict(zip(open_["session_id"], open_["title"]))
    chosen = st.selectbox("Session", list(titles), format_func=lambda s: f"{titles[s]} ({s})", key="exam_session")
    row = open_[open_["session_id"] == chosen].iloc[0]
    limit = f"{int(row['time_limit_s'])} s per item" if pd.notna(row["time_limit_s"]) else "no time limit"
    st.caption(plain(f"Up to {int(row['per_cell'])} item(s) per format and language, {limit}. You see one item at a "
                     "time; you may pause and come back with the same name; answers and scores are not shown."))
    st.button("Start or resume", key="exam_begin", type="primary", on_click=_begin, args=(chosen,))


# ---------------------------------------------------------------- the researcher

def run_section() -> None:
    st.subheader(f"Open a session on {sel.dataset}")
    with st.form("exam_new", border=True):
        c1, c2, c3 = st.columns(3)
        c1.text_input("Group", value=HUMAN_GROUPS[0], key="exam_group",
                      help="Every respondent of the session joins this group (" + ", ".join(HUMAN_GROUPS) + ", ...).")
        # No widget bounds: Streamlit drops an out-of-range entry without a word; `create_session` names it.
        c2.number_input("Items per format and language", value=2, step=1, key="exam_per_cell",
                        help=f"1 to {sessions.MAX_PER_CELL}.")
        c3.number_input("Time limit per item (seconds, 0 = none)", value=0, step=30, key="exam_limit",
                        help=f"0 to {sessions.MAX_TIME_LIMIT_S} (a day).")
        c4, c5 = st.columns(2)
        c4.multiselect("Formats (empty = all)", list(format_names()), format_func=format_label, key="exam_formats")
        c5.multiselect("Languages (empty = all)", views.languages(src, sel.dataset), format_func=language_label,
                       key="exam_languages")
        st.text_input("Title (optional)", key="exam_title")
        a1, a2, a3, a4 = st.columns(4)
        a1.toggle("Adaptive (item bank)", key="exam_adaptive",
                  help="Each respondent gets the most informative item at their current ability from a frozen item "
                       "bank (`bank` command) until the SE target: the models' scale, fewer questions. Items per "
                       "format, formats and languages do not apply.")
        a2.number_input("Bank version", value=1, step=1, key="exam_bank")
        a3.number_input("Target SE (logits)", value=0.30, step=0.05, key="exam_target_se")
        a4.number_input("At most items (0 = no cap)", value=0, step=5, key="exam_max_items")
        st.toggle("Adaptive: show each respondent their ability at the end", key="exam_show_result",
                  help="Off: respondents see no result (you see every respondent on the bank's Wright map below).")
        st.form_submit_button("Open session", on_click=_create, type="primary")
    with failures.guard():
        listed = views.exam_sessions(src, sel)
    if listed.empty:
        st.caption("No session on this dataset yet.")
        return
    tables.table(listed, "exam_sessions", f"Exam sessions on {sel.dataset}")
    for row in listed[listed["status"] == sessions.OPEN].itertuples(index=False):
        st.button(f"Close {row.session_id}", key=f"exam_close_{row.session_id}", on_click=_close,
                  args=(row.session_id,))
    chosen = st.selectbox("Watch", list(listed["session_id"]), key="exam_watch",
                          format_func=lambda s: f"{s} · {listed.set_index('session_id').loc[s, 'title']}")
    with failures.guard():
        progress = views.exam_progress(src, sel, session=chosen)
    if who is not None and who.may(team.RUN_EXAMS):  # names for researchers and admins only
        names = people.names(path, who, chosen)
        progress = progress.assign(name=progress["respondent"].map(names))
    tables.table(progress, "exam_progress", f"Respondents of {chosen} (updated {time.strftime('%H:%M:%S')})")
    st.button("Refresh", key="exam_refresh")
    try:  # respondents of adaptive sessions stand on the bank's scale beside the models (organisers only)
        board = views.adaptive_ranking(src, sel)
    except UserError:
        board = pd.DataFrame()
    if len(board) and board["kind"].str.startswith("adaptive").any():
        from eduart_core.charts.psychometrics import figure_wright_map

        wright = views.adaptive_wright_map(src, sel)
        plots.chart(figure_wright_map(wright, title="Respondents and models on the item bank's scale"),
                     "adaptive_wright_map", wright.attrs.get("caption", ""))
        tables.table(board, "adaptive_ranking", board.attrs.get("caption", ""))


if section == SIT:
    sit_section()
else:
    run_section()
