"""Extraction review: settle the discrepancies between two extractions against the screenshot.

Thin page: the queue, decisions, promotion and statistics all come from eduart_core.extraction.
Actions run in button callbacks, so the page always redraws from the store after a decision, and
each decision carries the decision id the reviewer last saw for that field (conflict detection).
"""
from __future__ import annotations

import json

import streamlit as st

from eduart_core.errors import UserError
from eduart_core.extraction import CATEGORIES, display, review
from eduart_core.extraction.stats import discrepancy_table, review_progress, round_status_table
from eduart_core.store import Store, StoreError
from eduart_core.store import extraction as db
from eduart_core.store.items import image_path
from eduart_core.text import plain
from pages import common

st.title("Extraction review")
st.caption("Two models extracted each exam page; where they disagree, decide against the screenshot. "
           "Every decision is logged; the last decision on a page makes it a gold item.")

store = Store(common.store_path())
try:
    db.ensure_schema(store)
    if db.load_pages(store).empty:
        from eduart_core.extraction.simulated import ensure_extraction_demo

        with st.spinner("Adding the offline extraction demo to the demo store..."):
            ensure_extraction_demo(store)
    queue_all = review.review_queue(store)
    pages = db.load_pages(store)
except StoreError as exc:
    st.error(f"Cannot read the store: {plain(exc)}")
    st.stop()

if pages.empty:
    st.info("No extracted pages yet. Run `python -m eduart_core extract --input DIR --extractor A=... "
            "--extractor B=...` or build the demo with `python -m eduart_core demo`.")
    st.stop()
if bool(pages["simulated"].any()):
    st.info("Demo data: these pages were rendered from original demo items and extracted by two "
            "**simulated** extractors (no model was called).")

# ---------------------------------------------------------------- reviewer, asked once
def _set_reviewer() -> None:
    name = (st.session_state.get("review_name") or "").strip()
    if name:
        st.session_state["reviewer"] = name


if not st.session_state.get("reviewer"):
    st.text_input("Your name (stored with every decision)", key="review_name", on_change=_set_reviewer)
else:
    st.markdown(f"Reviewing as **{plain(st.session_state['reviewer'])}**.")
reviewer = st.session_state.get("reviewer", "")


def _flash(kind: str, text: str) -> None:
    st.session_state["review_flash"] = (kind, text)


def _decide(page_id: str, round_: int, path: str, action: str, seen_key: str,
            value_key: str | None = None, note_key: str | None = None, is_text: bool = True) -> None:
    """Button callback: one decision on one field."""
    if not reviewer:
        _flash("error", "Enter your name first.")
        return
    value = None
    if value_key is not None:
        raw = st.session_state.get(value_key, "")
        if is_text:
            value = raw
        else:
            try:
                value = json.loads(raw)
            except ValueError as exc:
                _flash("error", f"{plain(path)}: not valid JSON ({plain(exc.msg)}); nothing saved.")
                return
    note = st.session_state.get(note_key, "") if note_key else None
    try:
        result = review.decide(store, page_id, round_, path, action, reviewer, value=value, note=note or None,
                               based_on=st.session_state.get(seen_key))
    except review.ReviewConflict as exc:
        _flash("warning", f"Conflict: {plain(exc)}")
        return
    except review.EditRejected as exc:
        _flash("error", "Not saved, the item would be invalid: " + plain("; ".join(exc.problems)))
        return
    except (UserError, StoreError) as exc:
        _flash("error", plain(exc))
        return
    except Exception as exc:  # e.g. a write conflict with another session: one line, no traceback
        _flash("error", f"{plain(path)}: not saved ({type(exc).__name__}: {plain(str(exc).splitlines()[0][:200])}); "
                        "try again.")
        return
    text = f"{plain(path)}: {action.replace('_', ' ')} saved."
    if result.promoted_version is not None:
        text += f" Page resolved and promoted as gold (version {result.promoted_version})."
    elif result.promotion_error:
        text += f" Page resolved but not promoted: {plain(result.promotion_error)}"
    _flash("success", text)


def _bulk(category_key: str, side: str, round_: int | None, page_id: str | None) -> None:
    if not reviewer:
        _flash("error", "Enter your name first.")
        return
    category = st.session_state.get(category_key)
    try:
        result = review.bulk_accept(store, reviewer, category, side=side, round=round_, page_id=page_id)
    except Exception as exc:  # decisions made before the failure stay; report in one line
        _flash("error", f"Bulk accept stopped: {type(exc).__name__}: {plain(str(exc).splitlines()[0][:200])}")
        return
    text = f"Accepted {side} for {result.decided} {category} field(s)"
    if result.promoted:
        text += f"; promoted {len(result.promoted)} page(s)"
    if result.conflicts:
        text += f"; {len(result.conflicts)} conflict(s) left alone"
    _flash("success", text + ".")


flash = st.session_state.pop("review_flash", None)
if flash:
    getattr(st, flash[0])(flash[1])  # data in it (paths, errors) went through plain() when it was composed

# ---------------------------------------------------------------- rounds side by side
with st.expander("Rounds: agreement and discrepancies per round", expanded=False):
    outcomes = db.load_outcomes(store)
    discrepancies = db.load_discrepancies(store)
    st.dataframe(round_status_table(outcomes), hide_index=True, width="stretch")
    by = st.radio("Discrepancies by", ["category", "field", "format"], horizontal=True, key="review_rounds_by")
    ran = sorted(int(r) for r in outcomes["round"].unique()) if not outcomes.empty else []
    by_round = discrepancy_table(discrepancies, by=by, rounds=ran)
    st.dataframe(by_round, width="stretch")
    if not by_round.empty and len(by_round.columns):
        st.bar_chart(by_round, stack=False, horizontal=True)
    st.caption("Counts of all discrepancies (auto-merged ones included) per round: a better prompt shows "
               "fewer, and mostly harmless, categories.")

# ---------------------------------------------------------------- queue
st.subheader("Queue")
attention = review.attention_pages(store)
if not attention.empty:
    with st.expander(f"{len(attention)} page(s) outside the queue need attention (failed or not promoted)"):
        st.dataframe(attention, hide_index=True, width="stretch")
        st.caption("A failed extraction is kept with its error and raw reply; run the same `extract` "
                   "command again to retry it.")
if queue_all.empty:
    st.success("No page needs review: every extraction agreed or was auto-merged.")
    st.stop()
rounds = sorted(int(r) for r in queue_all["round"].unique())
c1, c2, c3 = st.columns(3)
round_choice = c1.selectbox("Round", ["all"] + rounds, key="review_round")
statuses = c2.multiselect("Status", ["open", "flagged", "resolved"], default=["open", "flagged"],
                          key="review_status")
categories = c3.multiselect("Category", list(CATEGORIES), key="review_categories")
c4, c5, c6 = st.columns(3)
field_names = sorted({f for fs in queue_all["field_names"] for f in fs})
fields = c4.multiselect("Field", field_names, key="review_fields")
formats = c5.multiselect("Format", sorted(queue_all["format"].dropna().unique()), key="review_formats")
exercises = c6.multiselect("Exercise", sorted(queue_all["exercise"].dropna().unique()), key="review_exercises")

queue_round = queue_all if round_choice == "all" else queue_all[queue_all["round"] == round_choice]
done, total = review_progress(queue_round)
st.progress(done / total if total else 1.0, text=f"{done} of {total} pages resolved")
queue = display.filter_queue(queue_round, categories=categories, fields=fields, formats=formats,
                             exercises=exercises, statuses=statuses)
shown = queue.assign(categories=queue["categories"].map(", ".join), field_names=queue["field_names"].map(", ".join))
st.dataframe(shown, hide_index=True, width="stretch", height=240)

b1, b2, b3 = st.columns([2, 1, 1])
b1.selectbox("Bulk: category", list(CATEGORIES), index=CATEGORIES.index("accents"), key="review_bulk_category")
round_arg = None if round_choice == "all" else int(round_choice)
b2.button("Accept A across the queue", key="review_bulk_a", on_click=_bulk,
          args=("review_bulk_category", "A", round_arg, None))
b3.button("Accept B across the queue", key="review_bulk_b", on_click=_bulk,
          args=("review_bulk_category", "B", round_arg, None))

if queue.empty:
    st.info("No page matches the filters.")
    st.stop()

# ---------------------------------------------------------------- one page
labels = {f"{r.page_id} · round {r.round}": (r.page_id, int(r.round)) for r in queue.itertuples()}
chosen = st.selectbox("Page", list(labels), key="review_page")
page_id, round_ = labels[chosen]
page = db.get_page(store, page_id)
extractions = db.load_extractions(store, page_id=page_id, round=round_).set_index("extractor")
fields_frame = review.page_fields(store, page_id, round_)
all_diffs = db.load_discrepancies(store, round=round_, page_id=page_id)
diff_dicts = [{"path": r["path"], "category": r["category"], "a": r["value_a"], "b": r["value_b"]}
              for r in all_diffs.to_dict("records")]
outcome = db.get_outcome(store, page_id, round_)

st.subheader(f"Page {plain(page_id)} (round {round_})")
if outcome.get("promoted_version") is not None:
    st.success(f"Promoted to dataset **{plain(page['dataset'])}** as item **{plain(page['item_id'])}**, "
               f"version {outcome['promoted_version']} (see its history in the item inspector).")
elif outcome.get("promotion_error"):
    st.error(f"Resolved but not promoted: {plain(outcome['promotion_error'])}. Edit the field at fault.")

zoom = st.slider("Screenshot zoom (px wide)", 400, 1600, 900, step=100, key="review_zoom")
if page.get("image_hash"):
    try:
        st.image(str(image_path(store, page["image_hash"])), width=zoom)
    except UserError as exc:
        st.warning(plain(exc))

left, right = st.columns(2)
for column, side in ((left, "A"), (right, "B")):
    row = extractions.loc[side] if side in extractions.index else None
    with column:
        st.markdown(f"**Extraction {side}** · {plain(row['model']) if row is not None else 'missing'}")
        if row is not None and row["validation_errors"]:
            st.warning("Fails item validation: " + plain("; ".join(row["validation_errors"])))
        if row is not None and row["error"]:
            st.error(f"Extraction failed: {plain(row['error'])}")
        st.html(display.item_html(row["record"] if row is not None else None, diff_dicts, side))

st.markdown("#### Fields to decide")
open_categories = sorted(set(fields_frame.loc[fields_frame["state"] != "resolved", "category"]))
if open_categories:
    p1, p2, p3 = st.columns([2, 1, 1])
    p1.selectbox("Bulk on this page: category", open_categories, key="review_page_bulk_category")
    p2.button("Accept A on this page", key="review_page_bulk_a", on_click=_bulk,
              args=("review_page_bulk_category", "A", round_, page_id))
    p3.button("Accept B on this page", key="review_page_bulk_b", on_click=_bulk,
              args=("review_page_bulk_category", "B", round_, page_id))

for field in fields_frame.to_dict("records"):
    path = field["path"]
    base = f"{page_id}|{round_}|{path}"
    seen_key = f"seen::{base}"
    st.session_state[seen_key] = field["decision_id"]  # what this reviewer sees now
    with st.container(border=True):
        state = field["state"] + (f" by {field['reviewer']}" if field["reviewer"] else "")
        st.markdown(f"**{plain(path)}** · {plain(field['category'])} · {plain(state)}"
                    + (f" · note: {plain(field['note'])}" if field["note"] else ""))
        a_html, b_html = display.diff_pair_html(field["a"], field["b"])
        fa, fb = st.columns(2)
        fa.html(f"<div><small>A</small><br>{a_html}</div>")
        fb.html(f"<div><small>B</small><br>{b_html}</div>")
        k1, k2, k3 = st.columns([1, 1, 3])
        k1.button("Accept A", key=f"accept_a::{base}", on_click=_decide,
                  args=(page_id, round_, path, "accept_a", seen_key))
        k2.button("Accept B", key=f"accept_b::{base}", on_click=_decide,
                  args=(page_id, round_, path, "accept_b", seen_key))
        with k3.expander("Edit or flag"):
            is_text = isinstance(field["a"], str) or isinstance(field["b"], str)
            current = next((v for v in (field["value"], field["a"], field["b"]) if v is not None), "")
            st.text_area("Correct value" + ("" if is_text else " (JSON)"), display.value_text(current),
                         key=f"edit_value::{base}")
            st.button("Save edit", key=f"edit::{base}", on_click=_decide,
                      args=(page_id, round_, path, "edit", seen_key, f"edit_value::{base}", None, is_text))
            st.text_input("Note for a colleague", key=f"flag_note::{base}")
            st.button("Flag", key=f"flag::{base}", on_click=_decide,
                      args=(page_id, round_, path, "flag", seen_key, None, f"flag_note::{base}"))

st.markdown("#### History of this page")
history = db.load_decisions(store, page_id=page_id)
if history.empty:
    st.caption("No decision yet.")
else:
    shown_history = history[["decided_at", "round", "reviewer", "path", "action", "previous_value",
                             "new_value", "note"]]
    st.dataframe(shown_history.assign(previous_value=shown_history["previous_value"].map(display.value_text),
                                      new_value=shown_history["new_value"].map(display.value_text)),
                 hide_index=True, width="stretch")
