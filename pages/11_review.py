"""Review studio: settle extraction discrepancies against the screenshot, blind double review and
adjudication, reviewer agreement, the suspect-key queue and the audit log.

Thin page: queues, states, decisions, promotion, agreement and key flags all come from
eduart_core (extraction.review, extraction.editors, extraction.stats, suspects). Actions run in
button callbacks, so the page always redraws from the store after a decision; each decision
carries the decision id the reviewer last saw (conflict detection). Messages after an action are
toasts (the layout does not jump); a problem with a field is shown inside that field's card.
Reading never writes: the demo extraction round is built by the demo builder, not here.
"""
from __future__ import annotations

import logging

import pandas as pd
import streamlit as st

from eduart_core import columns, queues, suspects, team, views
from eduart_core.analysis import keyflags
from eduart_core.errors import UserError
from eduart_core.extraction import CATEGORIES, display, editors, exchange, review
from eduart_core.extraction.consensus import ADJUDICATION, AWAITING, FLAGGED, OPEN, RESOLVED, canonical
from eduart_core.extraction.stats import AGREEMENT_CODING, NOT_COMPUTED, agreement_words, round_status_table
from eduart_core.text import plain
from eduart_core.views import StoreConflictError, StoreError
from eduart_core.vocab import PROFILES, format_label
from pages.ui import editor_widgets, menu, my_record, navigate, sidebar, signin, store_handle, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

logger = logging.getLogger(__name__)

SECTIONS = {"extraction": "Extraction review", "suspects": "Suspect keys", "agreement": "Agreement",
            "audit": "Audit log", "record": "My record"}
ROLE_LABELS = {review.REVIEW_ROLE: "Reviewer", review.ADJUDICATE_ROLE: "Adjudicator"}
STATE_LABELS = {OPEN: "open", AWAITING: "decided by you (blind review: the others' decisions stay hidden)",
                FLAGGED: "flagged",
                ADJUDICATION: "waiting for the adjudicator", RESOLVED: "resolved"}
INSPECTOR = menu.PAGES["inspector"].script
SHOT_SPLIT = [7, 3]  # screenshot : its tools; it opens readable (about 700 px wide on a 1440 px screen)

st.title("Review studio")
store = store_handle.store()
try:
    review.ensure_schema(store)
except StoreError as exc:
    st.error(f"Cannot open the store: {plain(exc)}")
    st.stop()


# ---------------------------------------------------------------- deep links to the inspector
def _go_inspector(item_id: str, dataset: str) -> None:
    """Button callback: choose the dataset in the sidebar, then open the item (next run)."""
    st.session_state["f_dataset"] = dataset
    st.session_state["inspect_item"] = str(item_id)
    st.session_state["_review_goto"] = (str(item_id), dataset)


goto = st.session_state.pop("_review_goto", None)
if goto:
    st.switch_page(INSPECTOR, query_params={"item": goto[0], "dataset": goto[1]})


def inspector_button(item_id: str, dataset: str, key: str, label: str | None = None) -> None:
    st.button(label or f"Open item {plain(item_id)} in the inspector", key=key, on_click=_go_inspector,
              args=(item_id, dataset), icon=":material/search:")
    st.caption(plain(f"Link: /inspector?item={item_id}&dataset={dataset}"))


# ---------------------------------------------------------------- who is reviewing
def _set_reviewer() -> None:
    name = (st.session_state.get("review_name") or "").strip()
    if name:
        st.session_state["reviewer"] = name


def _forget_reviewer() -> None:
    st.session_state.pop("reviewer", None)
    st.session_state["review_name"] = ""


signed_in = signin.signin_enabled()
who, role_box = st.columns([3, 2])
with who:
    if signed_in:  # the signed-in person: nothing to type, nothing to change
        st.markdown(f"Reviewing as **{plain(signin.identity().name)}**")
    elif not st.session_state.get("reviewer"):
        st.text_input("Your name (kept for this browser session and stored with every decision)", key="review_name",
                      on_change=_set_reviewer)
        st.caption(plain(team.NOT_SIGNED_IN.capitalize()))
    else:
        line = st.container(horizontal=True, vertical_alignment="center")
        line.markdown(f"Reviewing as **{plain(st.session_state['reviewer'])}** · {plain(team.NOT_SIGNED_IN)}")
        line.button("Change name", key="review_change_name", on_click=_forget_reviewer, type="tertiary")
actor = signin.identity()  # who acts: every write below passes it to the library, which checks the roles
reviewer = actor.key if actor is not None else ""
# the capacities this person's roles allow (single-machine mode: both)
capacities = [r for r, action in ((review.REVIEW_ROLE, team.DECIDE), (review.ADJUDICATE_ROLE, team.ADJUDICATE))
              if actor is None or actor.may(action)]
if capacities:
    if st.session_state.get("review_role") not in capacities:
        st.session_state["review_role"] = capacities[0]
    role = role_box.radio("Role", capacities, format_func=ROLE_LABELS.get, horizontal=True, key="review_role",
                          help="Adjudicators settle the fields on which independent reviewers disagree; they see "
                               "every decision.")
else:  # a researcher or admin who neither reviews nor adjudicates: reads, decides nothing
    role = review.ADJUDICATE_ROLE if actor.may(team.SEE_BLIND) else review.REVIEW_ROLE
    role_box.caption("Your roles do not include deciding fields: the queue is shown read-only.")
can_decide_any = bool(capacities) and actor is not None


if "review_section" not in st.session_state:
    wanted = st.query_params.get("section") or ("suspects" if st.query_params.get("suspect") else "extraction")
    st.session_state["review_section"] = wanted if wanted in SECTIONS else "extraction"
section = st.segmented_control("Work on", list(SECTIONS), format_func=SECTIONS.get, key="review_section",
                               required=True, label_visibility="collapsed")


def toast(text: str, icon: str = ":material/check_circle:") -> None:
    """Queue a toast for the next run; ``text`` is plain text (escaped once, when shown)."""
    st.session_state["review_toast"] = (text, icon)


pending_toast = st.session_state.pop("review_toast", None)
if pending_toast:
    st.toast(plain(pending_toast[0]), icon=pending_toast[1])


def one_line(exc: Exception) -> str:
    return f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}" if str(exc) else type(exc).__name__


# ================================================================= extraction review
def extraction_section() -> None:
    try:
        state = current_state()
    except StoreError as exc:
        st.error(f"Cannot read the store: {plain(exc)}")
        return
    if state.pages.empty:
        st.info("No extracted pages yet. Run `python -m eduart_core extract --input DIR --extractor A=... "
                "--extractor B=...`, or build the demo with `python -m eduart_core demo` (it includes a simulated "
                "extraction round).")
        return
    if bool(state.pages["simulated"].any()):
        st.info("Demo data: these pages were rendered from original demo items and extracted by two **simulated** "
                "extractors (no model was called).")
    rounds_panel(state)
    queue_all = review.review_queue(state, reviewer=reviewer or None, role=role)
    if queue_all.empty:
        st.success("No page needs review: every extraction agreed or was auto-merged.")
        return
    rounds = sorted(int(r) for r in queue_all["round"].unique())
    if st.session_state.get("review_round") not in rounds:
        with_work = [int(r) for r in queue_all.loc[queue_all["mine"] > 0, "round"]]
        st.session_state["review_round"] = with_work[0] if with_work else rounds[0]
    c1, c2 = st.columns([1, 4])
    round_ = c1.selectbox("Round", rounds, key="review_round")
    queue = queue_all[queue_all["round"] == round_].reset_index(drop=True)
    needed = int(queue["needed"].iloc[0])
    done = int((queue["status"] == RESOLVED).sum())
    mine = int(queue["mine"].sum())
    mode = "single review" if needed == 1 else f"blind review: {needed} independent reviewers per page"
    who_for = "for you" if reviewer else "open"
    c2.progress(done / len(queue) if len(queue) else 1.0,
                text=f"{done} of {len(queue)} queued pages resolved · {mine} field(s) {who_for} · {mode}")
    if not reviewer:
        st.warning("Enter your name above to decide (it is stored with every decision).")
    queue_table(queue)
    current = st.session_state.get("review_current")
    if current not in [(p, int(r)) for p, r in zip(queue["page_id"], queue["round"])]:
        current = _handed(state, queue, round_) or review.next_page(queue, None) or (
            queue["page_id"].iloc[0], int(queue["round"].iloc[0]))
        st.session_state["review_current"] = current
    workbench(state, queue, current, needed)


def _queue_on() -> bool:
    """Whether "Next" hands out held pages here: a named person deciding as a reviewer, or settling as an
    adjudicator (their own queue: two adjudicators never hold one disputed page)."""
    needs = team.DECIDE if role == review.REVIEW_ROLE else team.ADJUDICATE
    return bool(reviewer) and actor is not None and actor.may(needs)


def _handed(state, queue, round_: int, after: str | None = None) -> tuple[str, int] | None:
    """The page the work queue holds for this person next (None: nothing has room, or no queue here)."""
    if not _queue_on():
        return None
    try:
        handed = queues.next_review_page(store, actor, round_, state=state, queue=queue, after=after, role=role)
    except (UserError, StoreError) as exc:
        logger.warning("no page held for %s: %s", reviewer, exc)
        toast(f"No page was held for you: {exc}", icon=":material/block:")
        return None
    return (handed.unit, round_) if handed else None


def _held_words(round_: int) -> str:
    """Why nothing was handed out, in counts only (a blind page's decisions stay hidden)."""
    waiting = queues.review_waiting(store, actor, round_, role=role)
    if waiting.elsewhere:
        return (f"Nothing else has room for you now: {waiting.elsewhere} page(s) that need you already have their "
                "reviewers or are held by others (a hold that runs out brings its page back).")
    return "Nothing else waits for you in this round."


def _take_next(round_: int, page_id: str) -> None:
    """Button callback ("Next", N): leave this page and hold the next one that needs you (from the round as
    it is now: its reviewers per page may have changed since the page was drawn)."""
    state = review.load_state(store, round_)
    target = _handed(state, review.review_queue(state, round=round_, reviewer=reviewer, role=role), round_,
                     after=page_id)
    if target and target[0] != page_id:
        st.session_state["review_current"] = target
        toast(f"Page {target[0]} is held for you for {queues.DEFAULT_HOLD_S / 60:.0f} minutes.")
    else:
        toast(_held_words(round_), icon=":material/hourglass_empty:")


def _skip(round_: int, page_id: str) -> None:
    """Button callback ("Skip", S): leave this page to others (it comes back to you last), hold the next."""
    state = review.load_state(store, round_)
    try:
        handed = queues.skip_review_page(store, actor, round_, page_id, state=state,
                                         queue=review.review_queue(state, round=round_, reviewer=reviewer, role=role),
                                         role=role)
    except (UserError, StoreError) as exc:
        toast(f"Not skipped: {exc}", icon=":material/block:")
        return
    if handed and handed.unit != page_id:
        st.session_state["review_current"] = (handed.unit, round_)
        toast(f"Skipped; page {handed.unit} is held for you.")
    else:
        toast("Skipped. " + _held_words(round_), icon=":material/hourglass_empty:")


def current_state() -> review.ReviewState:
    """The review tables as they are now. Right after a decision, the state read inside its write
    (fresh for that page); otherwise the last state read, while the store's data version shows
    that nothing changed since (one small query instead of reading every table again)."""
    fresh = st.session_state.pop("_review_fresh", None)
    if fresh is not None:
        st.session_state.pop("_review_seen", None)
        return fresh
    version = store.data_version()
    seen = st.session_state.get("_review_seen")
    if seen is not None and seen[0] == version:
        return seen[1]
    state = review.load_state(store)
    st.session_state["_review_seen"] = (version, state)
    return state


def rounds_panel(state: review.ReviewState) -> None:
    if not st.toggle("Show rounds: agreement of the extractors, reviewers per page, pages needing attention",
                     key="review_show_rounds"):
        return
    with st.container(border=True):
        outcomes = state.outcomes
        st.dataframe(round_status_table(outcomes), hide_index=True, width="stretch")
        by = st.radio("Discrepancies by", ["category", "field", "format"], horizontal=True, key="review_rounds_by")
        by_round = views.discrepancies(views.Source.of(store), sidebar.current_selection(), by=by)
        st.dataframe(by_round, width="stretch")
        st.caption("Counts of all discrepancies (auto-merged ones included) per round: a better prompt shows "
                   "fewer, and mostly harmless, categories.")
        st.markdown("**Independent reviewers per page**: 1 = single review; 2 or more = blind review (a reviewer "
                    "sees neither the other decisions nor which extractor produced which side; disagreements go "
                    "to an adjudicator).")
        pairs = sorted({(str(d), int(r)) for d, r in zip(outcomes["dataset"], outcomes["round"])})
        s1, s2, s3, s4 = st.columns([3, 1, 2, 1], vertical_alignment="bottom")
        choice = s1.selectbox("Dataset and round", pairs, format_func=lambda p: f"{p[0]} · round {p[1]}",
                              key="review_setting_round")
        may_set = actor is not None and actor.may(team.SET_ROUND)
        s2.number_input("Reviewers", 1, 9, value=state.reviewers_needed(*choice) if choice else 1,
                        key=f"review_setting_k::{choice}", disabled=not may_set)
        s3.checkbox("Blind adjudication", value=state.blind_adjudication(*choice) if choice else False,
                    key=f"review_setting_blind::{choice}", disabled=not may_set,
                    help="Adjudicators see the decisions as 'reviewer 1', 'reviewer 2' instead of names.")
        change = round_preview(state, choice) if may_set and choice else None
        confirm_key = f"review_setting_confirm::{choice}::{change.after}" if change is not None else ""
        if may_set:
            s4.button("Save", key="review_setting_save", on_click=_save_round, args=(choice,),
                      disabled=change is not None and change.changes and not st.session_state.get(confirm_key))
        else:
            s4.caption("Changing a round needs the admin role.")
        if change is not None and change.changes:  # warn before: what the new setting does to decisions made
            with st.container(border=True, key="review_setting_warning"):
                st.warning(plain(f"{change.after} reviewer(s) per page for {choice[0]} round {choice[1]} (now "
                                 f"{change.before}) changes decisions already made:"), icon=":material/warning:")
                for line in change.sentences():
                    st.markdown("- " + plain(line))
                st.checkbox("I understand: save the new setting anyway", key=confirm_key)
        done = st.session_state.get("review_round_changed")
        if done and done[0] == choice and done[1]:
            st.info(plain(f"Since the last change of {choice[0]} round {choice[1]}: " + " ".join(done[1])))
        attention = review.attention_pages(store)
        if not attention.empty:
            st.markdown(f"**{len(attention)} page(s) outside the queue need attention** (failed or not promoted)")
            st.dataframe(attention, hide_index=True, width="stretch")
        notes = views.paper_notes(views.Source.of(store))
        if not notes.empty:
            st.markdown(f"**{len(notes)} note(s) on PDF papers** (a question one extractor missed, keys without "
                        "a partner, pages an extractor failed on)")
            st.dataframe(notes, hide_index=True, width="stretch")


def round_preview(state: review.ReviewState, choice) -> review.RoundChange | None:
    """What saving the reviewers typed for ``choice`` would change (the library says; None: cannot tell)."""
    k = int(st.session_state.get(f"review_setting_k::{choice}") or 1)
    try:
        return review.round_change(state, choice[0], choice[1], k, viewer=actor)
    except (UserError, StoreError) as exc:
        logger.warning("cannot preview the round change: %s", exc)
        return None


def _save_round(choice) -> None:
    if not reviewer:
        toast("Enter your name first.", ":material/error:")
        return
    k = int(st.session_state.get(f"review_setting_k::{choice}") or 1)
    blind_names = bool(st.session_state.get(f"review_setting_blind::{choice}"))
    try:
        preview = review.round_change(store, choice[0], choice[1], k, viewer=actor)
        if preview.changes and not st.session_state.get(f"review_setting_confirm::{choice}::{k}"):
            toast("Not saved: confirm the change first (below the round settings).", ":material/error:")
            return
        change = review.set_reviewers(store, choice[0], choice[1], k, set_by=actor, blind_adjudication=blind_names)
    except (UserError, StoreError) as exc:
        toast(str(exc), ":material/error:")
        return
    st.session_state["review_round_changed"] = (choice, change.sentences())
    st.session_state.pop(f"review_setting_confirm::{choice}::{k}", None)
    toast(f"{choice[0]} round {choice[1]}: {k} reviewer(s) per page"
          + ("; adjudicators see no reviewer names." if blind_names else ".")
          + (f" {len(change.reopened)} page(s) reopened." if change.reopened else ""))


def queue_table(queue) -> None:
    with st.expander(f"Queue of round {int(queue['round'].iloc[0])}: {len(queue)} page(s)", expanded=False):
        f1, f2, f3 = st.columns(3)
        statuses = f1.multiselect("Status", [OPEN, FLAGGED, ADJUDICATION, RESOLVED], key="review_status")
        categories = f2.multiselect("Category", list(CATEGORIES), key="review_categories")
        formats = f3.multiselect("Format", sorted(queue["format"].dropna().unique()), key="review_formats",
                                 format_func=format_label)
        shown = display.filter_queue(queue, categories=categories, formats=formats, statuses=statuses)
        table = shown.assign(categories=shown["categories"].map(", ".join),
                             field_names=shown["field_names"].map(", ".join),
                             format=shown["format"].map(format_label))[
            ["page_id", "exercise", "format", "status", "fields", "resolved", "mine", "categories", "field_names",
             "promoted_version"]]
        readable = columns.table(table, view="review_queue")
        event = st.dataframe(readable.frame, hide_index=True, width="stretch", height=240, key="review_queue_table",
                             on_select="rerun", selection_mode="single-row",
                             column_config={**tables.display_config(readable),
                                            "mine": st.column_config.NumberColumn("Waiting for you")})
        rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
        if rows:
            picked = (shown["page_id"].iloc[rows[0]], int(shown["round"].iloc[rows[0]]))
            if picked != st.session_state.get("_review_last_pick"):
                st.session_state["_review_last_pick"] = picked
                st.session_state["review_current"] = picked
        st.caption("Click a row to open that page.")
        if int(queue["needed"].iloc[0]) > 1:
            st.caption("Blind round: no bulk accepts (each field is decided on its page).")
            return
        if role != review.REVIEW_ROLE or actor is None or not actor.may(team.BULK_ACCEPT):
            return
        b1, b2, b3 = st.columns([2, 1, 1], vertical_alignment="bottom")
        b1.selectbox("Bulk: accept one side for every open field of a category", list(CATEGORIES),
                     index=CATEGORIES.index("accents"), key="review_bulk_category")
        rnd = int(queue["round"].iloc[0])
        b2.button("Accept A across the queue", key="review_bulk_a", on_click=_bulk, args=("A", rnd, None))
        b3.button("Accept B across the queue", key="review_bulk_b", on_click=_bulk, args=("B", rnd, None))


def _bulk(side: str, round_: int, page_id: str | None) -> None:
    if not reviewer:
        toast("Enter your name first.", ":material/error:")
        return
    category = st.session_state.get("review_bulk_category")
    try:
        result = review.bulk_accept(store, actor, category, side=side, round=round_, page_id=page_id, role=role)
    except (UserError, StoreError) as exc:  # decisions made before the failure stay
        logger.warning("bulk accept stopped: %s", exc)
        toast(f"Bulk accept stopped: {one_line(exc)}", ":material/error:")
        return
    text = f"Accepted {side} for {result.decided} {category} field(s)"
    if result.promoted:
        text += f"; promoted {len(result.promoted)} page(s)"
    if result.conflicts:
        text += f"; {len(result.conflicts)} conflict(s) left alone"
    if result.rejected:
        text += (f"; {len(result.rejected)} left open because their page's fields would contradict each other "
                 f"({', '.join(result.rejected[:5])})")
    toast(text + ".")


# ---------------------------------------------------------------- one page: the workbench
def _go(target) -> None:
    if target:
        st.session_state["review_current"] = target


def workbench(state: review.ReviewState, queue, current: tuple[str, int], needed: int) -> None:
    """One page of a round: its header and the ways on, the outcome, the screenshot and the field cards."""
    st.session_state["_review_state"] = state  # what this reviewer saw: the next decision starts from it
    page_id, round_ = current
    fields = review.page_fields(state, page_id, round_, reviewer or None, role)
    keys = [(p, int(r)) for p, r in zip(queue["page_id"], queue["round"])]
    fmt = str(queue.iloc[keys.index(current)]["format"] or "")
    blind = needed > 1 and role == review.REVIEW_ROLE
    page_header(queue, current, fields, fmt)
    page_outcome(state, page_id, round_, fields, blind)
    page = state.pages[state.pages["page_id"] == page_id].iloc[0]
    paper = views.paper_question(views.Source.of(store), page_id, round_)
    order = review.shown_order(page_id, round_, reviewer, needed) if blind else "AB"
    shot, tools = st.columns(SHOT_SPLIT, gap="medium")  # the screenshot first, readable; the cards below
    with tools:
        zoom = st.select_slider("Zoom", [100, 150, 200, 300], value=100, key="review_zoom",
                                format_func=lambda z: f"{z}%",
                                help="Above 100% the screenshot scrolls inside its frame; at 100% the "
                                     "fullscreen button shows it whole.")
        show_items = st.toggle("Show both extractions as items", key="review_show_items")
    with shot:
        page_picture(page, paper, order, zoom)
    if paper is not None:
        candidate_images(paper, page_id, round_, fields, order)
    if show_items:
        both_extractions(page_id, round_, fields, blind, needed)
    with st.container():
        field_cards(state, page_id, round_, fields, fmt, blind, needed)
    page_history(state, page_id, round_, blind)


def page_header(queue, current: tuple[str, int], fields, fmt: str) -> None:
    """The page's title, where it stands in the round, and the buttons to the previous, following,
    next or skipped page."""
    page_id, round_ = current
    keys = [(p, int(r)) for p, r in zip(queue["page_id"], queue["round"])]
    position = keys.index(current)
    row = queue.iloc[position]
    decided = int((~fields["mine"].astype(bool)).sum()) if reviewer else int((fields["state"] == RESOLVED).sum())

    st.divider()
    head, nav = st.columns([3, 2], vertical_alignment="center")
    head.subheader(plain(f"Page {page_id} · round {round_}"))
    head.caption(f"Page {position + 1} of {len(queue)} in this round · {format_label(fmt)} · "
                 f"{decided} of {len(fields)} field(s) decided" + (" by you" if reviewer else ""))
    after = review.next_page(queue, current)
    earlier = keys[position - 1] if position > 0 else None
    later = keys[position + 1] if position + 1 < len(keys) else None
    n1, n2, n3, n4 = nav.columns(4)
    n1.button("◀ Previous", key="review_prev", on_click=_go, args=(earlier,), disabled=earlier is None,
              width="stretch", help="The previous page of the round")
    n2.button("Following ▶", key="review_page_next", on_click=_go, args=(later,), disabled=later is None,
              width="stretch", help="The following page of the round (not held for you)")
    if _queue_on():
        n3.button("Next", key="review_next", on_click=_take_next, args=(round_, page_id), shortcut="N",
                  width="stretch", type="primary" if not int(row["mine"]) else "secondary",
                  help="Leave this page and hold the next page that needs you")
        n4.button("Skip", key="review_skip", on_click=_skip, args=(round_, page_id), shortcut="S", width="stretch",
                  help="Leave this page to others (it comes back to you last) and hold the next one")
        hold_line(round_, page_id)
    else:
        n3.button("Next", key="review_next", on_click=_go, args=(after,), disabled=after is None, shortcut="N",
                  width="stretch", help="The next page with fields waiting for you")


def page_outcome(state: review.ReviewState, page_id: str, round_: int, fields, blind: bool) -> None:
    """The settled page's promotion (with the way to the gold item) or why it was not promoted;
    nothing for a blind reviewer before every field is resolved."""
    outcome = state.outcomes[(state.outcomes["page_id"] == page_id) & (state.outcomes["round"] == round_)].iloc[0]
    if blind and not bool((fields["state"] == RESOLVED).all()):
        pass  # a blind reviewer learns nothing of the outcome of fields they decided
    elif outcome["promoted_version"] is not None and pd.notna(outcome["promoted_version"]):
        ok, link = st.columns([3, 2], vertical_alignment="center")
        ok.success(plain(f"Promoted to dataset {outcome['dataset']} as item {outcome['item_id']}, version "
                         f"{int(outcome['promoted_version'])}."))
        with link:
            inspector_button(outcome["item_id"], outcome["dataset"], key="review_open_gold",
                             label="Open the gold item and its version history")
    elif outcome["promotion_error"]:
        st.error(f"Resolved but not promoted: {plain(outcome['promotion_error'])}. Edit the field at fault.")


def page_picture(page, paper, order: str, zoom: int) -> None:
    """The exam paper's page, or the stored screenshot at the chosen zoom, or the line saying there is none."""
    if paper is not None:
        paper_pages(paper, order, zoom)
    elif page.get("image_hash"):
        try:
            paths = st.session_state.setdefault("_review_image_paths", {})  # a hash names its file for good
            key = (str(store.path), page["image_hash"])
            if key not in paths:
                paths[key] = views.image_file(views.Source.of(store), page["image_hash"])
            shot_file = paths[key]
            if zoom == 100:
                st.image(str(shot_file), width="stretch")
            else:
                st.html(display.zoomed_image_html(shot_file.read_bytes(), zoom))
        except (UserError, OSError) as exc:
            st.warning(f"Screenshot unavailable: {plain(exc)}")
    else:
        st.caption("No screenshot stored for this page.")


def field_cards(state: review.ReviewState, page_id: str, round_: int, fields, fmt: str, blind: bool,
                needed: int) -> None:
    """One card per field (the first waiting for this reviewer in focus), then the page's bulk accept."""
    focus = next((f["path"] for f in fields.to_dict("records") if f["mine"]), None)
    record = review.working_record(state, page_id, round_)
    for f in fields.to_dict("records"):
        field_card(state, page_id, round_, f, fmt, record, blind, focus == f["path"], needed)
    if role == review.REVIEW_ROLE and not blind and actor is not None and actor.may(team.BULK_ACCEPT):
        open_categories = sorted({f["category"] for f in fields.to_dict("records") if f["state"] != RESOLVED})
        if open_categories:
            with st.expander("Bulk on this page"):
                p1, p2, p3 = st.columns([2, 1, 1], vertical_alignment="bottom")
                p1.selectbox("Category", open_categories, key="review_page_bulk_category")
                p2.button("Accept A on this page", key="review_page_bulk_a", on_click=_bulk_page,
                          args=("A", round_, page_id))
                p3.button("Accept B on this page", key="review_page_bulk_b", on_click=_bulk_page,
                          args=("B", round_, page_id))


def _shown(true_labels: list[str], order: str) -> list[str]:
    """Extractor names as this reviewer sees them (a blind reviewer's A may be extractor B)."""
    return sorted("AB"[order.index(label)] for label in true_labels if label in order)


def paper_pages(paper, order: str, zoom: int) -> None:
    """The paper's page(s) of the question, each extractor's region framed (A red, B blue as shown)."""
    for pg in paper.pages:
        regions = {"AB"[order.index(k)]: v for k, v in pg["regions"].items() if k in order}
        st.caption(plain(f"Paper {paper.paper}, page {pg['page_no']}, question {paper.number}"
                         + (" · frames: red A, blue B" if regions else "")))
        if not pg["has_text"]:
            st.warning("No text was read from this page (it has no text layer): the extractors had the image only.")
        try:
            shown = views.marked_page_image(views.Source.of(store), pg["image_hash"], regions)
            if zoom == 100:
                st.image(shown, width="stretch")
            else:
                st.html(display.zoomed_image_html(shown, zoom))
        except (UserError, OSError) as exc:
            st.warning(f"Page image unavailable: {plain(exc)}")
    for text in paper.notes:
        st.info(plain(text))


def candidate_images(paper, page_id: str, round_: int, fields, order: str) -> None:
    """The images embedded on the question's pages, which extractor attached each, attach/detach."""
    if not paper.candidates:
        st.caption("The question's pages embed no images.")
        return
    image_field = next((f for f in fields.to_dict("records") if f["path"] == "image"), None)
    may = image_field is not None and can_decide_any and (
        image_field["state"] == ADJUDICATION if role == review.ADJUDICATE_ROLE
        else image_field["state"] in (OPEN, FLAGGED, AWAITING))
    with st.container(border=True):
        st.markdown("**Images of the paper on these pages**")
        boxes = st.columns(min(4, len(paper.candidates)))
        for index, cand in enumerate(paper.candidates):
            with boxes[index % len(boxes)]:
                try:
                    st.image(str(views.image_file(views.Source.of(store), cand["image_hash"])), width="stretch")
                except (UserError, OSError) as exc:
                    st.warning(f"Image unavailable: {plain(exc)}")
                by = _shown(cand["attached_by"], order)
                st.caption(plain(f"{cand['label']} (page {cand['page_no']}) · "
                                 + (f"attached by {' and '.join(by)}" if by else "attached by neither")))
                if may:
                    st.button("Attach", key=f"attach::{page_id}|{round_}|{cand['label']}", on_click=_attach,
                              args=(page_id, round_, cand["image_hash"], image_field))
        if may:
            st.button("Detach the image", key=f"detach::{page_id}|{round_}", on_click=_attach,
                      args=(page_id, round_, None, image_field))


def _attach(page_id: str, round_: int, image_hash: str | None, image_field: dict) -> None:
    order = image_field["order"]
    action = (review.true_action("A", order) if image_hash == image_field["a"]
              else review.true_action("B", order) if image_hash == image_field["b"] else review.EDIT)
    _apply(page_id, round_, "image", action, image_field["decision_id"], order, value=image_hash,
           verb="image attached" if image_hash else "image detached")


def hold_line(round_: int, page_id: str) -> None:
    """Who holds this page (you, or another reviewer, never named) and the keys of the frequent actions."""
    try:
        holder = queues.review_holder(store, actor, round_, page_id, role=role)
    except StoreError:
        holder = None
    if holder and holder[0] == "you":
        held = f"Held for you until {holder[1]:%H:%M} UTC"
    elif holder:
        other = "adjudicator" if role == review.ADJUDICATE_ROLE else "reviewer"
        held = f"Another {other} holds this page until {holder[1]:%H:%M} UTC: press Next for a page of your own"
    else:
        held = "Not held: press Next to have the next page that needs you held for you"
    st.caption(plain(held) + " · Keys: A accept A · B accept B · N next · S skip (not while typing in a field)")


def _bulk_page(side: str, round_: int, page_id: str) -> None:
    st.session_state["review_bulk_category"] = st.session_state.get("review_page_bulk_category")
    _bulk(side, round_, page_id)


def both_extractions(page_id: str, round_: int, fields, blind: bool, needed: int) -> None:
    with st.container(border=True):
        extractions = views.page_extractions(views.Source.of(store), page_id, round_)
        diffs = [{"path": f["path"], "category": f["category"], "a": f["a"], "b": f["b"]}
                 for f in fields.to_dict("records")]
        order = review.shown_order(page_id, round_, reviewer, needed) if blind else "AB"
        for shown, extractor in zip("AB", order):
            row = extractions.loc[extractor] if extractor in extractions.index else None
            model = "" if blind else f" · {row['model'] if row is not None else 'missing'}"
            st.markdown(f"**Extraction {shown}**{plain(model)}")
            if row is not None and row["error"]:
                st.error(f"Extraction failed: {plain(row['error'])}")
            st.html(display.item_html(row["record"] if row is not None else None, diffs, shown))


def field_card(state, page_id: str, round_: int, f: dict, fmt: str, record: dict, blind: bool, focus: bool,
               needed: int) -> None:
    """One field of a page: both extractions side by side with their differences, and what this
    reviewer may decide on it."""
    path = f["path"]
    base = f"{page_id}|{round_}|{path}"
    with st.container(border=True, key=f"card::{base}"):
        field_sides(f, fmt, blind)
        if role == review.ADJUDICATE_ROLE:
            adjudication_panel(state, page_id, round_, path, fmt)
        error = st.session_state.pop(f"card_error::{base}", None)
        if error:
            st.error(plain(error))
        if not _may_decide(f, blind, base):
            if f["state"] == ADJUDICATION and role == review.REVIEW_ROLE:
                st.caption("Reviewers disagree here: the adjudicator decides (switch the role to Adjudicator).")
            return
        decision_buttons(state, page_id, round_, f, fmt, focus, base)
        if st.session_state.get(f"edit_open::{base}"):
            edit_panel(state, page_id, round_, f, fmt, record, base)


def field_sides(f: dict, fmt: str, blind: bool) -> None:
    """The field's label and state, then A, B and their differences (a blind reviewer sees no names)."""
    path = f["path"]
    label = editors.field_label(path, fmt)
    status = STATE_LABELS.get(f["state"], f["state"])
    if f["state"] == RESOLVED and f["how"] == "agreement":
        status = f"resolved: {f['votes']} reviewers agreed"
    elif f["state"] == RESOLVED and f["reviewer"] and not blind:
        status = f"resolved by {f['reviewer']}"
    elif f["state"] == FLAGGED and f["reviewer"]:
        status = f"flagged by {f['reviewer']}"
    elif blind and f["state"] == OPEN and f["votes"]:
        status = "open"
    st.markdown(f"**{plain(label)}** · `{f['category']}` · {plain(status)}"
                + (f" · note: {plain(f['note'])}" if f["note"] else ""))
    ca, cb, cd = st.columns(3)
    ca.caption("A")
    ca.text(editors.describe(f["a"], path, fmt))
    cb.caption("B")
    cb.text(editors.describe(f["b"], path, fmt))
    da, db_ = display.diff_view(f["a"], f["b"], path, fmt)
    cd.caption("Differences (A above, B below; · marks a space)")
    cd.html(f"<div style='line-height:1.5'>{da}<hr style='margin:4px 0'>{db_}</div>")


def _may_decide(f: dict, blind: bool, base: str) -> bool:
    """Whether this reviewer decides the field now: a blind reviewer's own decision is shown and
    stands unless they choose to change it, as does a settled field."""
    mine = blind and f["my_action"]
    if mine:
        st.markdown(f"**Your decision: {plain(_your_decision(f))}.** You can change it until every reviewer "
                    "has decided.")
    if not can_decide_any:
        return False
    if role == review.ADJUDICATE_ROLE:
        return f["state"] == ADJUDICATION
    if mine:  # decided by this reviewer: their decision stands unless they change it
        return f["state"] in (OPEN, AWAITING) and st.toggle("Change my decision", key=f"change::{base}")
    if blind:
        return f["state"] in (OPEN, AWAITING)
    return f["state"] in (OPEN, FLAGGED) or (
        f["state"] == RESOLVED and st.toggle("Change this decision", key=f"change::{base}"))


def decision_buttons(state, page_id: str, round_: int, f: dict, fmt: str, focus: bool, base: str) -> None:
    """Accept A or B (only the sides that keep the page consistent, the others with the reason), Edit and Flag."""
    path = f["path"]
    refused = review.refused_choices(state, page_id, round_, path, reviewer or None, role)
    offered = [side for side in "AB" if review.true_action(side, f["order"]) not in refused]
    if len(offered) < 2:  # said before the click: which side would leave the page contradictory, and why
        reasons = "; ".join(f"Accept {side} is not offered: with it "
                            + refused[review.true_action(side, f["order"])].reasons(fmt)
                            for side in "AB" if side not in offered)
        st.info(plain(f"{reasons}. " + ("Edit this field, or change the other field first."
                                        if not offered else "")), icon=":material/block:")
    b1, b2, b3, b4 = st.columns([1, 1, 1, 1])
    for box, side in ((b1, "A"), (b2, "B")):
        if side in offered:
            box.button(f"Accept {side}", key=f"accept_{side.lower()}::{base}", on_click=_accept,
                       shortcut=side if focus else None,
                       args=(page_id, round_, path, side, f["order"], f["decision_id"]),
                       type="primary" if focus else "secondary")
    b3.toggle("Edit", key=f"edit_open::{base}")
    with b4.popover("Flag", icon=":material/flag:"):
        st.text_input("Note for a colleague", key=f"flag_note::{base}")
        st.button("Flag this field", key=f"flag::{base}", on_click=_flag,
                  args=(page_id, round_, path, f["order"], f["decision_id"]))


def _your_decision(f: dict) -> str:
    """A blind reviewer's own decision on a field, in the sides as they were shown."""
    if f["my_action"] == review.FLAG:
        return "flagged"
    shown = _shown_choice(f["my_action"], f["order"])
    return f"Accept {shown}" if shown else "an edit"


def _shown_choice(action: str, order: str) -> str | None:
    """Which side (as shown to this reviewer) a stored accept_a/accept_b corresponds to."""
    for side in "AB":
        if review.true_action(side, order) == action:
            return side
    return None


def adjudication_panel(state, page_id: str, round_: int, path: str, fmt: str) -> None:
    st_field = state.state(page_id, round_, path)
    rows = []
    for d in review.field_decisions(state, page_id, round_, path, review.ADJUDICATE_ROLE):
        rows.append({"reviewer": d["reviewer"], "role": d["role"] or review.REVIEW_ROLE,
                     "decision": exchange.LABELS.get(d["action"], d["action"]),
                     "value": editors.describe(d["new_value"], path, fmt) if d["action"] != review.FLAG else "",
                     "note": d["note"], "A shown first": d["shown_order"] != "BA", "conflict": bool(d["conflict"]),
                     "decided_at": d["decided_at"]})
    if rows:
        st.caption("Every decision on this field (A and B are the extractors themselves):")
        st.dataframe(rows, hide_index=True, width="stretch")
    elif st_field.state != ADJUDICATION:
        st.caption("No decision yet.")


def _accept(page_id: str, round_: int, path: str, shown_side: str, order: str, based_on) -> None:
    _apply(page_id, round_, path, review.true_action(shown_side, order), based_on, order, verb=f"accepted {shown_side}")


def _flag(page_id: str, round_: int, path: str, order: str, based_on) -> None:
    note = st.session_state.get(f"flag_note::{page_id}|{round_}|{path}", "")
    _apply(page_id, round_, path, review.FLAG, based_on, order, note=note, verb="flagged")


def _page_format(page_id: str, round_: int) -> str:
    """The answer format of a queued page (for the item's words in messages)."""
    state = st.session_state.get("_review_state")
    fields = state.fields(page_id, round_) if state is not None else None
    return "" if fields is None or fields.empty else str(fields["format"].iloc[0] or "")


def _apply(page_id: str, round_: int, path: str, action: str, based_on, order: str, value=None, note=None,
           verb: str = "edit saved") -> bool:
    """Button callback: one decision on one field; problems go into the field's card."""
    base = f"{page_id}|{round_}|{path}"
    if actor is None:
        st.session_state[f"card_error::{base}"] = "Enter your name first (at the top of the page)."
        return False
    try:
        result = review.decide(store, page_id, round_, path, action, actor, value=value, note=note or None,
                               based_on=None if based_on is None or pd.isna(based_on) else int(based_on),
                               role=role, order=order, state=st.session_state.get("_review_state"))
    except review.ReviewConflict as exc:
        st.session_state[f"card_error::{base}"] = f"Conflict: {exc}"
        return False
    except review.EditRejected as exc:
        st.session_state[f"card_error::{base}"] = "Not saved, the item would be invalid: " + "; ".join(exc.problems)
        return False
    except review.PageRejected as exc:  # the page as a whole: one message, on the card just decided
        what = verb if verb.startswith("accepted") else "your edit"
        st.session_state[f"card_error::{base}"] = exc.message(_page_format(page_id, round_), what)
        return False
    except StoreConflictError as exc:  # a write conflict with another session: one line, no traceback
        logger.warning("decision on %s not saved: %s", base, exc)
        st.session_state[f"card_error::{base}"] = f"Not saved ({one_line(exc)})."
        return False
    except (UserError, StoreError) as exc:
        st.session_state[f"card_error::{base}"] = str(exc)
        return False
    after = result.after
    blind = role == review.REVIEW_ROLE and after is not None and after.reviewers_needed(
        after.dataset_of(page_id) or "", round_) > 1
    text = f"{editors.field_label(path, _page_format(page_id, round_))}: {verb}."
    outcome = review.decision_message(result, blind)
    if outcome:
        text += " " + outcome
    st.session_state.pop(f"edit_open::{base}", None)
    st.session_state.pop(f"change::{base}", None)
    st.session_state["_review_fresh"] = result.after
    queue = review.review_queue(result.after or store, round=round_, reviewer=reviewer, role=role)
    here = queue[(queue["page_id"] == page_id) & (queue["round"] == round_)]
    if here.empty or int(here["mine"].iloc[0]) == 0:
        if _queue_on():  # the page is done for this person: its hold ends, the next page is held for them
            queues.finish_review_page(store, actor, round_, page_id, role=role)
            target = _handed(result.after, queue, round_, after=page_id)
        else:
            target = review.next_page(queue, (page_id, round_))
        if target:
            st.session_state["review_current"] = target
            text += f" Opened the next page, {target[0]}."
        else:
            text += " Nothing else waits for you in this round."
    toast(text)
    return True


def edit_panel(state, page_id: str, round_: int, f: dict, fmt: str, record: dict, base: str) -> None:
    path = f["path"]
    starts = {"A": f["a"], "B": f["b"]}
    if role == review.ADJUDICATE_ROLE:
        votes = {}
        for d in review.field_decisions(state, page_id, round_, path, review.ADJUDICATE_ROLE):
            if (d.get("role") or review.REVIEW_ROLE) == review.REVIEW_ROLE and d["action"] != review.FLAG:
                votes[d["reviewer"]] = d["new_value"]
        for name, value in votes.items():
            starts[f"{name}'s value"] = value
    start = st.radio("Start from", list(starts), horizontal=True, key=f"edit_from::{base}")
    other = f["b"] if start == "A" else f["a"]
    editor = editors.editor_for(fmt, path, starts[start], record, other)
    if editor.help:
        st.caption(editor.help)
    if any(c.marked for c in editor.controls):
        st.caption("≠ marks what differs from the other extraction.")
    prefix = f"ed::{base}::{start}::"
    editor_widgets.draw_editor(editor, prefix)
    st.button("Save edit", key=f"edit::{base}", on_click=_save_edit,
              args=(page_id, round_, path, editor, prefix, f["a"], f["b"], f["order"], f["decision_id"]))


def _save_edit(page_id: str, round_: int, path: str, editor: editors.Editor, prefix: str, a, b, order: str,
               based_on) -> None:
    base = f"{page_id}|{round_}|{path}"
    values = {c.key: st.session_state[prefix + c.key] for c in editor.controls if prefix + c.key in st.session_state}
    problems = editor.problems(values)
    if problems:
        st.session_state[f"card_error::{base}"] = "Not saved: " + "; ".join(problems)
        return
    value = editor.decode(values)
    canon = canonical(value)
    for side, side_value in (("A", a), ("B", b)):  # a value equal to one side is that side's decision
        if canon == canonical(side_value):
            _apply(page_id, round_, path, review.true_action(side, order), based_on, order,
                   verb=f"the edit equals {side}, saved as Accept {side}")
            return
    _apply(page_id, round_, path, review.EDIT, based_on, order, value=value)


def page_history(state, page_id: str, round_: int, blind: bool) -> None:
    with st.expander("History of this page", expanded=False):
        fields = state.fields(page_id, round_)
        fmt = str(fields["format"].iloc[0] or "") if not fields.empty else ""
        decisions = [d for p in fields["path"] for d in review.field_decisions(state, page_id, round_, p, role,
                                                                                reviewer)]
        if blind:
            st.caption("Blind review: only your own decisions are shown; A and B are the sides as you were shown "
                       "them.")
        else:
            st.caption("A and B are the extractors themselves.")
        if not decisions:
            st.caption("No decision yet.")
            return
        st.dataframe(display.history_table(decisions, fmt, as_shown=blind), hide_index=True, width="stretch")


# ================================================================= suspect keys
def suspects_section() -> None:
    filters = sidebar.current_selection()
    dataset, profile = filters.dataset, filters.profile
    st.markdown(f"Items of dataset **{plain(dataset)}** whose statistics suggest a wrong answer key "
                f"(profile {profile}, with reviewed score overrides): negative discrimination, a wrong option "
                "chosen by at least half of the stronger half of the models, or an item every model fails. "
                "Confirm the key, or correct it: a correction is a new item version and every stored answer is "
                "re-scored.")
    try:  # the store's version right now (a key corrected a moment ago must leave the queue at once)
        queue = views.suspect_keys(views.Source.of(store), filters)
    except (StoreError, UserError) as exc:
        st.info(f"No item statistics for dataset {plain(dataset)}: {plain(exc)}")
        return
    st.caption(plain(f"Scores computed under: {views.errata_label(views.Source.of(store), filters)}. Corrected keys "
                     f"are published as an errata release: python -m eduart_core errata --dataset {dataset} --name "
                     "NAME, then errata apply (see the README)."))
    requested = st.session_state.pop("review_suspect_item", None) or st.query_params.get("suspect")
    if requested:
        st.session_state["suspect_current"] = str(requested)
    if queue.empty:
        st.success("No item is flagged: every key in this dataset looks consistent with the answers.")
        return
    why = [", ".join(keyflags.reason_words(r) for r in str(rs).split(", ")) for rs in queue["reasons"]]
    shown = queue.assign(type=queue["type"].map(format_label), reasons=why)[["item_id", "type", "signal", "reasons", "p",
                                                                           "r_pb", "n_examinees", "sources"]]
    event = st.dataframe(shown, hide_index=True, width="stretch", height=240, key="suspect_table", on_select="rerun",
                         selection_mode="single-row",
                         column_config={"item_id": "Item", "type": "Format", "reasons": "Why flagged",
                                        "n_examinees": "Examinees", "sources": "Flagged by",
                                        "signal": st.column_config.NumberColumn("Combined signal", format="%.1f"),
                                        "p": st.column_config.NumberColumn("difficulty p", format="%.2f"),
                                        "r_pb": st.column_config.NumberColumn("r_pb", format="%.2f")})
    st.caption(f"{len(queue)} flagged item(s), the strongest combined signal first (Stouffer's sum of the "
               "standardized evidence of IRT misfit, a wrong option the stronger models agree on, negative "
               "discrimination and judge-human disagreement; a ranking score, not a test); p and corrected r_pb over "
               f"{int(queue['n_examinees'].max())} model x condition examinees. Click a row to review an item.")
    rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
    if rows and queue["item_id"].iloc[rows[0]] != st.session_state.get("_suspect_last_pick"):
        st.session_state["_suspect_last_pick"] = queue["item_id"].iloc[rows[0]]
        st.session_state["suspect_current"] = queue["item_id"].iloc[rows[0]]
    current = st.session_state.get("suspect_current")
    if current not in set(queue["item_id"]):
        if current:
            st.caption(f"Item {plain(current)} is not in the queue (its key was reviewed, or it is not flagged).")
        current = queue["item_id"].iloc[0]
    flagged = queue[queue["item_id"] == current].iloc[0]
    suspect_detail(dataset, current, list(flagged["flags"]), flagged)


def suspect_detail(dataset: str, item_id: str, flags: list[str], flagged) -> None:
    """One flagged item: why it is flagged, its text and key, every model's answer, and the ways to
    confirm or correct its key."""
    detail = suspects.suspect_detail(store, dataset, item_id)
    item, record = detail["item"], detail["item"]["record"]
    fmt = record.get("type", "")
    st.divider()
    head, link = st.columns([3, 2], vertical_alignment="center")
    head.subheader(plain(f"Item {item_id} · version {item['version']}"))
    words = ", ".join(keyflags.reason_words(r) for r in str(flagged["reasons"]).split(", "))
    head.caption(plain(f"{format_label(fmt)} · flagged: {words}"))
    with link:
        inspector_button(item_id, dataset, key="suspect_open_inspector")
    for line in str(flagged["details"]).split(" · "):
        st.markdown(f"- {plain(line)}")
    if str(flagged.get("evidence") or ""):
        st.caption(plain(f"Combined signal {float(flagged['signal']):+.1f}: " + str(flagged["evidence"])))
    suspect_item(detail, record, fmt)
    key_review(dataset, item_id, flags, item, record, fmt)
    if len(detail["reviews"]):
        st.caption("Earlier key reviews of this item")
        st.dataframe(detail["reviews"], hide_index=True, width="stretch")


def suspect_item(detail: dict, record: dict, fmt: str) -> None:
    """The item's text and current key, how often each option was chosen, and every model's answer."""
    left, right = st.columns([3, 2])
    with left:
        if record.get("question_title"):
            st.markdown(f"**{plain(record['question_title'])}**")
        if record.get("instructions"):
            st.text(record["instructions"])
        if record.get("question_text"):
            st.text(record["question_text"])
        if record.get("choices"):
            st.caption(editors.field_label("choices", fmt))
            st.text(editors.describe(record["choices"], "choices", fmt))
        st.caption("Current key")
        st.text(editors.describe(record.get("answers"), "answers", fmt))
    with right:
        if len(detail["options"]):
            st.caption("How many answers chose each option")
            st.dataframe(detail["options"], hide_index=True, width="stretch")
    st.markdown("**Every model's answer** (rationale in the motivation condition)")
    answers = detail["answers"].rename(columns={"chosen": "chose", "motivation": "rationale",
                                                **{f"{p}_score": p for p in PROFILES}})
    st.dataframe(answers[["model", "condition", "chose", *PROFILES, "rationale", "raw_text"]], hide_index=True,
                 width="stretch", column_config={"rationale": st.column_config.TextColumn(width="large")})


def key_review(dataset: str, item_id: str, flags: list[str], item: dict, record: dict, fmt: str) -> None:
    """Confirm the key, or correct it with the format's editor (a new item version); both need the role."""
    error = st.session_state.pop("suspect_error", None)
    if error:
        st.error(plain(error))
    may_key = actor is not None and actor.may(team.KEY_REVIEW)
    confirm, correct = st.columns(2)
    with confirm.container(border=True):
        st.markdown("**The key is right**")
        st.text_input("Note (optional)", key=f"suspect_confirm_note::{item_id}")
        st.button("Confirm the key", key=f"suspect_confirm::{item_id}", on_click=_confirm_key,
                  args=(dataset, item_id, flags), disabled=not may_key)
    with correct.container(border=True):
        st.markdown("**Correct the key**")
        editor = editors.editor_for(fmt, "answers", record.get("answers"), record)
        prefix = f"suspect_ed::{item_id}::{item['version']}::"
        for control in editor.controls:
            editor_widgets.draw_control(st, control, prefix + control.key)
        st.text_input("Why (kept with the new version)", key=f"suspect_correct_note::{item_id}")
        st.button("Save the corrected key", key=f"suspect_correct::{item_id}", on_click=_correct_key,
                  args=(dataset, item_id, flags, editor, prefix), disabled=not may_key, type="primary")
    if actor is None:
        st.caption("Enter your name at the top of the page to confirm or correct a key.")
    elif not may_key:
        st.caption("Confirming or correcting a key needs the researcher or adjudicator role.")


def _confirm_key(dataset: str, item_id: str, flags: list[str]) -> None:
    try:
        suspects.confirm_key(store, dataset, item_id, actor, flags,
                             note=st.session_state.get(f"suspect_confirm_note::{item_id}"))
    except (UserError, StoreError) as exc:
        st.session_state["suspect_error"] = str(exc)
        return
    st.session_state.pop("suspect_current", None)
    toast(f"Key of item {item_id} confirmed; its flags are cleared.")


def _correct_key(dataset: str, item_id: str, flags: list[str], editor: editors.Editor, prefix: str) -> None:
    values = {c.key: st.session_state[prefix + c.key] for c in editor.controls if prefix + c.key in st.session_state}
    problems = editor.problems(values)
    if problems:
        st.session_state["suspect_error"] = "Not saved: " + "; ".join(problems)
        return
    try:
        version, rescored = suspects.correct_key(store, dataset, item_id, editor.decode(values), actor, flags,
                                                 note=st.session_state.get(f"suspect_correct_note::{item_id}"))
    except (UserError, StoreError) as exc:
        st.session_state["suspect_error"] = str(exc)
        return
    toast(f"Item {item_id}: key corrected as version {version}; {rescored} stored answer(s) "
          "re-scored.")


# ================================================================= agreement
def agreement_section() -> None:
    st.markdown("How often independent reviewers agreed, over every field two or more reviewers decided. "
                + AGREEMENT_CODING + " **Same choice by all reviewers**: share of fields on which every reviewer "
                "made the same choice (with three reviewers, one dissent makes a field disagree); **same final value "
                "by all reviewers**: share on which they all chose the same final value. "
                "**Cohen's kappa** (only with exactly two reviewers) and **Fleiss' kappa** (statsmodels; fields "
                "with the most common number of reviewers) correct for chance agreement. **Krippendorff's alpha** "
                "(nominal, the krippendorff package) allows any number of reviewers and missing decisions; its 95% "
                "interval comes from 1,000 bootstrap resamples of the fields.")
    unsettled = exchange.unsettled_blind_rounds(store)
    if unsettled:  # for every role: a number on an open blind round tells whether the others chose differently
        st.info("Blind rounds under way (" + plain(", ".join(f"{d} round {r}" for d, r in unsettled))
                + "): their agreement appears here once every field of the round is settled.",
                icon=":material/visibility_off:")
    src = views.Source.of(store)
    for title, by in (("per dataset and round", "round"), ("per field", "field"), ("per format", "format")):
        table = views.review_agreement(src, sidebar.current_selection(), by=by)
        if table.empty or not int(table["units"].max() or 0):
            st.caption("No field has been decided by two or more reviewers yet.")
            break
        tables.table(agreement_words(table), f"agreement_{by}", f"Reviewer agreement {title}", essential=True,
                     show=True)
    else:
        st.caption(f"{NOT_COMPUTED} : not defined here (Cohen's kappa needs exactly two reviewers; a kappa or alpha "
                   "needs decisions that vary). `show review_agreement` gives the same numbers unrounded.")


# ================================================================= audit log
def audit_section() -> None:
    st.markdown("Every review decision, oldest first. A reviewer has one decision per field: a change of mind "
                "replaces it, and this log keeps every version; conflicts are kept for the adjudicator.")
    if actor is None:
        st.caption("Enter your name at the top of the page to see the review decisions.")
        records = []
    else:
        records = exchange.export_records(store, viewer=actor, role=role)
    if any(needed > 1 for needed in review.load_state(store).needed.values()) and role == review.REVIEW_ROLE:
        st.caption("Blind rounds: only your own decisions are shown (the download holds the same).")
    if records:
        import json

        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
        st.download_button("Download as JSONL (the review-import format)", text, file_name="review-decisions.jsonl",
                           mime="application/jsonl", key="audit_download", on_click="ignore",
                           icon=":material/download:")
        st.caption("A and B are the extractors themselves; values are shown as the editors show them.")
        st.dataframe(display.audit_table(exchange.visible_decisions(store, viewer=actor, role=role)),
                     hide_index=True, width="stretch", height=360)
    else:
        st.caption("No review decision yet.")
    filters = sidebar.current_selection()
    st.markdown(f"**Who changed rounds, keys, scores, runs and roles** (keys and scores: dataset "
                f"{plain(filters.dataset)}; `show audit_log`)")
    log = views.audit_log(views.Source.of(store), filters)
    if log.empty:
        st.caption("Nothing recorded yet.")
    else:
        st.dataframe(log, hide_index=True, width="stretch")
    st.markdown(f"**Human score overrides** (dataset {plain(filters.dataset)})")
    overrides = views.score_overrides(views.Source.of(store), filters)
    if overrides.empty:
        st.caption("No score override yet. Overrides are made in the item inspector.")
    else:
        st.dataframe(overrides, hide_index=True, width="stretch")


# ================================================================= my record
def record_section() -> None:
    st.markdown("Where an adjudicator overruled your decisions (with the settled value and the note), how often "
                "settled outcomes kept your decisions week by week, and your severity as a grader.")
    my_record.my_record_section(actor, "review_record")


{"extraction": extraction_section, "suspects": suspects_section, "agreement": agreement_section,
 "audit": audit_section, "record": record_section}[section]()
