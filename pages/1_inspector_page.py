"""Item inspector: browse items, see the gold answer and every model's answer marked right or wrong."""
from __future__ import annotations

import html
import re
from pathlib import Path

import streamlit as st

from eduart_core import analysis, display, views, vocab
from eduart_core import charts_psychometrics as figures
from eduart_core.errors import UserError
from pages import common

src, sel = common.page_start(
    "Item inspector", "Find suspicious items, check their answer key and see how every model answered.")
with common.guard():
    table = views.item_list(src, sel)

c1, c2 = st.columns([2, 3])
quick = c1.selectbox("Show", list(analysis.ITEM_FILTERS), format_func=analysis.ITEM_FILTERS.get, key="insp_quick")
search = c2.text_input("Search id or text", key="insp_search")
shown = analysis.filter_items(table, quick, search)
ids = list(shown["item_id"])

# Which item: click in the table > a jump from another page > the URL > the first of the list.
requested = st.session_state.pop("inspect_item", None) or st.query_params.get("item")
if requested:
    st.session_state["insp_current"] = str(requested)
current = st.session_state.get("insp_current")
if current not in set(table["item_id"]):
    current = ids[0] if ids else None

cols = ["item_id", "type", "language", "has_image", "p", "r_pb", "mean_score", "models_right", "n_models", "text"]
st.caption(f"{len(shown)} of {len(table)} items; p and r_pb over the selected models, condition "
           f"{sel.condition}, {common.scoring_label(sel)}. Click a row to open the item.")
event = st.dataframe(
    shown[cols].assign(type=shown["type"].map(vocab.format_label)), hide_index=True, width="stretch", height=280,
    key="insp_table", on_select="rerun", selection_mode="single-row",
    column_config={"p": st.column_config.NumberColumn("difficulty p", format="%.2f"),
                   "r_pb": st.column_config.NumberColumn("discrimination r_pb", format="%.2f"),
                   "mean_score": st.column_config.NumberColumn("mean score", format="%.2f"),
                   "text": st.column_config.TextColumn("text", width="large")})
if not common.presentation():
    common.table(shown[cols], "items", "Download this item list", essential=False, show=False)
rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
if rows:
    clicked = ids[rows[0]]
    if clicked != st.session_state.get("_insp_last_click"):
        st.session_state["_insp_last_click"] = clicked
        current = clicked

if current is None:
    st.warning("No item matches the current filters.")
    st.stop()
st.session_state["insp_current"] = current
if st.query_params.get("item") != current:
    st.query_params["item"] = current

prev_id, next_id = display.neighbours(ids, current)
b1, b2, b3 = st.columns([1, 1, 6])


def _go(target: str | None) -> None:
    if target:
        st.session_state["insp_current"] = target
        st.session_state["inspect_item"] = target


b1.button("◀ Previous", disabled=prev_id is None, on_click=_go, args=(prev_id,), key="insp_prev")
b2.button("Next ▶", disabled=next_id is None, on_click=_go, args=(next_id,), key="insp_next")
b3.markdown(f"Item **{current}**" + (f" ({ids.index(current) + 1} of {len(ids)} in this list)" if current in ids else
                                      " (outside the current list)"))

with common.guard():
    item = views.item_detail(src, sel.dataset, current)
    responses = views.item_responses(src, sel.dataset, current)
record = item.get("record") or {}
row = table[table["item_id"] == current].iloc[0] if (table["item_id"] == current).any() else None

# ---------------------------------------------------------------- the item card
st.divider()
left, right = st.columns([2, 3])
with left:
    img = item.get("_image_path")
    picture = views.item_picture(src, sel.dataset, current)
    if picture.boxes:  # the boxes and regions the question points at, labelled; the gold option drawn thicker
        st.image(picture.image, caption="Image with the option boxes and regions the question refers to",
                 width="stretch")
    elif img and Path(img).exists():
        st.image(img, caption="Artwork (use the fullscreen button for full size)", width="stretch")
    elif record.get("has_image"):
        st.caption("This item has an image, but its file is missing from the store.")
    if picture.option_images:  # options that are images (a jigsaw's pieces), in option order
        cols = st.columns(len(picture.option_images))
        for col, (option, path) in zip(cols, picture.option_images):
            col.image(path, caption=f"Option {option}", width="stretch")
    if row is not None and row["p"] == row["p"]:
        p, r = row["p"], row["r_pb"]
        st.markdown(f"**Difficulty p = {p:.2f}**: {100 * p:.0f}% of the selected model answers score as right.")
        if r == r:
            quality = row["discrimination_category"]
            meaning = ("models that do well overall tend to get it right" if quality in ("good", "fair") else
                       "strong and weak models do about equally well" if r >= 0 else
                       "weaker models do better than strong ones; check the answer key")
            st.markdown(f"**Discrimination r_pb = {r:.2f}** ({quality}; 95% interval {row['r_pb_ci_low']:.2f} to "
                        f"{row['r_pb_ci_high']:.2f}): {meaning}.")
        else:
            st.markdown("**Discrimination r_pb**: not estimable (every model scored the same).")
    elif row is not None:
        st.caption("No model has answered this item yet in the selected condition.")
with right:
    st.markdown(f"#### {html.escape(str(record.get('question_title') or current))}")
    st.caption(f"{vocab.format_label(record.get('type', ''))} · {vocab.language_label(record.get('language'))}"
               f" · source {record.get('source') or '—'} · version {item.get('version', '—')}")
    if record.get("instructions"):
        st.markdown(f"*{record['instructions']}*")
    text = record.get("question_text") or ""
    if text:
        marked = re.sub(r"\[([A-Z])\]", r"**[\1]**", html.escape(text).replace("\n", "  \n"))
        st.markdown(marked)
    gold = record.get("answers") or []
    gold_ids = {str(a.get("id")).upper() for a in gold if isinstance(a, dict) and a.get("id")}
    choices = record.get("choices") or []
    itype = record.get("type")
    if itype in ("multiple_choice_radio", "multiple_choice_check"):
        for c in choices:
            is_gold = str(c.get("id")).upper() in gold_ids
            line = f"{c.get('id')}. {c.get('text')}"
            st.markdown(f":green-background[**{line}** (gold)]" if is_gold else line)
    elif itype == "true_false":
        verdict = {str(a.get("id")).upper(): a.get("text") for a in gold if isinstance(a, dict)}
        for c in choices:
            st.markdown(f"{c.get('id')}. {c.get('text')} → :green-background[**{verdict.get(str(c.get('id')).upper())}**]")
    elif itype == "positioning":
        st.markdown("**Word bank:** " + ", ".join(str(w) for w in choices))
        st.markdown("**Gold:** " + "; ".join(f"[{a.get('id')}] :green-background[{a.get('description')}]" for a in gold))
    elif itype == "completion_closed":
        golds = {str(a.get("id")).upper(): a.get("description") for a in gold if isinstance(a, dict)}
        for c in choices:
            opts = [f":green-background[**{o}**]" if o == golds.get(str(c.get("id")).upper()) else str(o)
                    for o in c.get("options", [])]
            st.markdown(f"[{c.get('id')}] " + " / ".join(opts))
    elif itype == "completion_open":
        st.markdown("**Gold:** " + "; ".join(f"[{a.get('id')}] :green-background[{a.get('description')}]"
                                             for a in gold if isinstance(a, dict)))
    elif itype == "select_errors":
        st.markdown("**Errors in the passage (gold):** " + "; ".join(
            f":red-background[{a.get('error')}] → :green-background[{a.get('correct')}]" for a in gold if isinstance(a, dict)))
    else:  # formats beyond EduArt's (numbers, parts, free text): the answer key in the format's own rows
        with common.guard():
            key = views.answer_key(src, sel, item=current)
        common.table(key[["element", "label", "text", "gold"]], "answer_key", "Answer key", essential=True)

if record.get("dialogue_id"):  # a turn of a dialogue: the whole conversation, as each model had it
    with st.expander(f"Dialogue {record['dialogue_id']}: this is turn {record.get('turn')}", expanded=False):
        with common.guard():
            turns = views.dialogue(src, sel, item=current)
        common.table(turns[["turn", "item_id", "question", "model", "answer", f"{sel.profile}_score"]],
                     "dialogue", "The dialogue turn by turn: each model's answers in the selected condition")

# ---------------------------------------------------------------- review studio links (issue 12)
# Version history, and a link to the suspect-key queue when this item's key is flagged. Kept as
# one separate block: everything comes from eduart_core (views.suspect_keys, store.items).
def _open_suspect_queue(item_id: str, dataset: str) -> None:
    st.session_state["review_section"] = "suspects"
    st.session_state["review_suspect_item"] = item_id
    st.session_state["_insp_goto_review"] = (item_id, dataset)


_goto_review = st.session_state.pop("_insp_goto_review", None)
if _goto_review:
    st.switch_page("pages/8_review_page.py", query_params={"suspect": _goto_review[0], "dataset": _goto_review[1]})
with st.expander(f"Review: version history and key checks (version {item.get('version', '—')})"):
    from eduart_core.errors import UserError as _UserError
    from eduart_core.store import Store as _Store
    from eduart_core.store import StoreError as _StoreError
    from eduart_core.store.items import item_history

    try:
        _history = item_history(_Store(common.store_path()), sel.dataset, current)
        st.dataframe(_history[["version", "is_current", "origin", "note", "created_at"]], hide_index=True,
                     width="stretch")
        _flags = views.suspect_keys(src, sel)
        _flags = _flags[_flags["item_id"] == current]
    except (_StoreError, _UserError, KeyError, ValueError) as exc:  # the card above stays usable: one line
        st.caption(f"Review details unavailable: {type(exc).__name__}: {str(exc).splitlines()[0][:160]}")
        _flags = None
    if _flags is not None and len(_flags):
        st.warning("This item is in the suspect-key queue: " + str(_flags["reasons"].iloc[0]) + ".")
        st.button("Open it in the suspect-key queue", key="insp_open_suspect", on_click=_open_suspect_queue,
                  args=(current, sel.dataset), icon=":material/rule:")
    elif _flags is not None:
        st.caption("No open key flag for this item.")
# ---------------------------------------------------------------- item response curve (IRT)
st.divider()
irt_box = st.expander("Item response curve (Rasch model)", expanded=True, key="insp_irt", on_change="rerun")
if irt_box.open:
    with irt_box:
        try:
            curve = views.irt_item_curve(src, sel, item=current)
            fitted = views.irt_items(src, sel)
        except UserError as exc:  # a panel too small or an item outside the selection: one line, page goes on
            st.caption(f"No curve: {exc}")
        else:
            row = fitted[fitted["item_id"] == current]
            n_ex = int(curve.attrs["n_examinees"])
            status = curve.attrs.get("status", "")
            if row.empty or status != "fitted":
                st.caption(f"No curve: {status.replace('_', ' ') or 'not answered'} among the {n_ex} examinees, so the "
                           "item carries no information on the ability scale (no finite difficulty).")
            else:
                b, se = float(row["difficulty"].iloc[0]), float(row["difficulty_se"].iloc[0])
                common.chart(figures.figure_item_curve(curve), "item_curve",
                             f"Chance of a right answer along the ability scale (logits) under the Rasch model fitted "
                             f"to {n_ex} examinees (model x condition pairs), with the item's information (dotted). "
                             f"Difficulty {b:.2f} (SE {se:.2f}): the ability at which the chance is 50%. "
                             f"{curve.attrs['rule'].capitalize()}.", height=300)

# ---------------------------------------------------------------- every model's answer
st.divider()
st.subheader("How each model answered")
if responses is None or responses.empty:
    st.info("No responses recorded for this item.")
    st.stop()
prof = sel.profile
option_text = ({str(c.get("id")): str(c.get("text")) for c in choices if isinstance(c, dict) and c.get("text")}
               if itype in ("multiple_choice_radio", "multiple_choice_check", "true_false") else {})
latest = responses[responses["is_latest"]] if "is_latest" in responses else responses
if sel.models:
    latest = latest[latest["model"].isin(sel.models)]
n_right = int(latest[f"{prof}_correct"].fillna(False).astype(bool).sum())
st.markdown(f"**{n_right} of {len(latest)}** model answers are right under the {prof} profile "
            "(score at least 0.5). Each answer below is broken into its parts, each marked right or wrong.")
for model, sub in latest.groupby("model", sort=True):
    st.markdown(f"**{model}**")
    cols = st.columns(2)
    for col, cond in zip(cols, vocab.CONDITIONS):
        r = sub[sub["condition"] == cond]
        with col:
            if r.empty:
                st.caption(f"{cond}: no answer recorded")
                continue
            r = r.iloc[0]
            score = r.get(f"{prof}_score")
            right = bool(r.get(f"{prof}_correct"))
            st.markdown(f"{':green-badge[:material/check: right]' if right else ':red-badge[:material/close: wrong]'} *{cond}* · score **{'—' if score is None or score != score else f'{score:.2f}'}**"
                        f" ({prof})" + (f" · could not parse: {r['parse_error']}" if r.get("parse_error") else ""))
            marks = display.answer_rows(r.get(f"{prof}_details"), option_text)
            if len(marks):
                st.dataframe(marks, hide_index=True, width="stretch", key=f"marks_{model}_{cond}",
                             column_config={"mark": st.column_config.TextColumn("right?", width="small")})
            if r.get("motivation"):
                st.markdown(f"> **Motivation:** {r['motivation']}")
            with st.expander("Raw response"):
                st.code(str(r.get("raw_text") or ""), language=None)

# ---------------------------------------------------------------- human score override (issue 12)
# A researcher re-scores one response with a reason. Append-only: the computed score is kept and
# every statistic uses the override while "with reviewed overrides" is on. Separate block; the
# store does the work (store.overrides).
def _save_override(options: dict) -> None:
    from eduart_core.errors import UserError
    from eduart_core.store import Store, StoreError
    from eduart_core.store.overrides import add_override

    who = (st.session_state.get("reviewer") or st.session_state.get("ovr_name") or "").strip()
    choice = st.session_state.get("ovr_response")
    profiles = vocab.PROFILES if st.session_state.get("ovr_all_profiles") else (prof,)
    try:
        add_override(Store(common.store_path()), options[choice], st.session_state.get("ovr_score"),
                     st.session_state.get("ovr_reason", ""), who, profiles)
    except (UserError, StoreError) as exc:
        st.session_state["ovr_message"] = ("error", str(exc))
        return
    if who:
        st.session_state["reviewer"] = who
    st.session_state["ovr_message"] = ("success", f"Override saved for {choice} ({', '.join(profiles)}).")


st.divider()
with st.expander("Override a score (human review)", expanded=False):
    from eduart_core.store import Store as _OStore
    from eduart_core.store.overrides import load_overrides

    _options = {f"{r['model']} · {r['condition']} · computed {r.get(f'{prof}_score', float('nan')):.2f}":
                int(r["response_id"]) for r in latest.to_dict("records")}
    _message = st.session_state.pop("ovr_message", None)
    if _message:
        getattr(st, _message[0])(_message[1])
    with st.form("ovr_form", clear_on_submit=False):
        st.selectbox("Response", list(_options), key="ovr_response")
        st.number_input("Score it deserves (0 to 1)", 0.0, 1.0, 1.0, step=0.05, key="ovr_score")
        st.checkbox("For both scoring profiles", value=True, key="ovr_all_profiles")
        st.text_input("Reason (required; kept with the override)", key="ovr_reason")
        if not st.session_state.get("reviewer"):
            st.text_input("Your name", key="ovr_name")
        st.form_submit_button("Save override", on_click=_save_override, args=(_options,))
    _overrides = load_overrides(_OStore(common.store_path()), sel.dataset, current)
    if len(_overrides):
        st.dataframe(_overrides[["model", "condition", "profile", "original_score", "score", "reason", "reviewer",
                                 "item_version", "created_at", "applied"]], hide_index=True, width="stretch")
    st.caption("Overrides are append-only and apply while the gold version they were made on is current; every "
               "statistic uses them under \"with reviewed overrides\" (on by default).")
