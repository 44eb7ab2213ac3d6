"""Item inspector and failure explorer: find the items models fail on, see why, compare two models.

Thin page: the item list and its filters, the matrix, the card's words and the comparison come
from `eduart_core.views` (explorer and items views), `analysis.explorer` and `display`. Every string
from items, models and responses is drawn as text (`text.plain`), never as markup.
URL parameters (besides the sidebar's selection): item, open (<condition>:<model>), view,
filter, examinee (the aberrant filter's model), where (a filter expression over the score frame,
`eduart_core.filterexpr`), a, b, only. The page is a sequence of sections (`main` at the bottom), as the Review studio.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import streamlit as st

from eduart_core import analysis, columns, display, filterexpr, item_notes, links, overrides, team, views, vocab
from eduart_core.charts import explorer as explorer_charts
from eduart_core.charts import psychometrics as figures
from eduart_core.errors import UserError
from eduart_core.text import plain, truncate
from pages.ui import failures, fulltext, header, menu, navigate, notices, plots, signin, store_handle, tables

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

ITEMS_VIEW, COMPARE_VIEW = "items", "compare"
MODES = {ITEMS_VIEW: "Items and the failure matrix", COMPARE_VIEW: "Compare two models"}
ROWS_PER_PAGE = (25, 50, 100)
CARDS_PER_PAGE = 10
OVERVIEW_CHARS = 300  # an answer in the table of all answers; the opened response shows it in full
STATE_BADGES = {analysis.explorer.RIGHT: ":green-badge[✓ right]", analysis.explorer.PARTIAL: ":orange-badge[◆ partial]",
                analysis.explorer.WRONG: ":red-badge[✕ wrong]", analysis.explorer.MISSING: ":gray-badge[no answer]"}

src, sel = header.page_start(
    "Item inspector", "Find the items models fail on, see each answer marked against the key under both scoring "
    "profiles, and put two models side by side.")


@dataclass(frozen=True)
class Chosen:
    """What the item list settled on: the items, the one shown and the response opened (condition, model)."""

    every: pd.DataFrame
    table: pd.DataFrame
    ids: list[str]
    current: str
    opened: tuple[str, str] | None
    quick: str
    answers: pd.DataFrame | None = None  # the score rows the `where` expression keeps (None: no expression)


def _url_value(name: str) -> str | None:
    value = st.query_params.get(name)
    return str(value) if value else None


def _seed_from_url() -> None:
    """Deep links: the page's own parameters seed its widgets once per session."""
    if st.session_state.get("_insp_qp_loaded"):
        return
    st.session_state["_insp_qp_loaded"] = True
    if _url_value("view") in MODES:
        st.session_state["insp_view"] = _url_value("view")
    if _url_value("filter") in analysis.ITEM_FILTERS:
        st.session_state["insp_quick"] = _url_value("filter")
    if _url_value("where"):
        st.session_state["insp_where"] = _url_value("where")
    if _url_value("examinee"):
        st.session_state["insp_examinee"] = _url_value("examinee")
    if _url_value("only") in analysis.COMPARE_FILTERS:
        st.session_state["insp_only"] = _url_value("only")
    for side in ("a", "b"):
        if _url_value(side):
            st.session_state[f"_insp_url_{side}"] = _url_value(side)


def _set_url(**params: str | None) -> None:
    """Keep the page's parameters in the URL (None removes one), so the view can be shared."""
    for key, value in params.items():
        if value is None:
            if key in st.query_params:
                del st.query_params[key]
        elif st.query_params.get(key) != value:
            st.query_params[key] = value


def _score(value) -> str:
    return "—" if value is None or pd.isna(value) else f"{float(value):.2f}"


def _badge(score) -> str:
    return STATE_BADGES[analysis.cell_state(None if score is None else float(score))]


# ================================================================ compare two models
def compare_models() -> None:
    """Pick A and B; list the items where they differ with both answers and justifications."""
    names = [m for m in views.models_with_data(src, sel.dataset) if not sel.models or m in sel.models]
    names += [b for b in views.baseline_models(src, sel.dataset) if b not in names]  # "A against chance"
    if len(names) < 2:
        st.info("Comparing needs two models with answers in this selection.")
        st.stop()
    for side, default in (("a", 0), ("b", 1)):
        wanted = st.session_state.pop(f"_insp_url_{side}", None)
        if wanted in names:
            st.session_state[f"insp_{side}"] = wanted
        if st.session_state.get(f"insp_{side}") not in names:
            st.session_state[f"insp_{side}"] = names[default]
    c1, c2, c3 = st.columns([2, 2, 3])
    a = c1.selectbox("Model A", names, key="insp_a")
    b = c2.selectbox("Model B", names, key="insp_b")
    only = c3.radio("Show", list(analysis.COMPARE_FILTERS), key="insp_only", horizontal=True,
                    format_func=lambda k: plain(analysis.COMPARE_FILTERS[k].format(a="A", b="B")))
    _set_url(view=COMPARE_VIEW, a=a, b=b, only=only)
    if a == b:
        st.warning("Choose two different models.")
        st.stop()
    with failures.guard():
        shown = views.model_comparison(src, sel, a=a, b=b, only=only)
    st.markdown(comparison_words(shown.attrs.get("summary", {})))
    st.caption(f"A = {plain(a)} · B = {plain(b)}")
    if shown.empty:
        st.info("No item in this list.")
        return
    table = shown.assign(format=shown["type"].map(vocab.format_label))[
        ["item_id", "format", "score_a", "score_b", "state_a", "state_b", "answer_a", "answer_b"]]
    tables.table(table.rename(columns={"score_a": "A score", "score_b": "B score", "state_a": "A", "state_b": "B",
                                       "answer_a": "A answered", "answer_b": "B answered"}),
                 "compare_models", f"{len(shown)} items: {analysis.COMPARE_FILTERS[only].format(a='A', b='B')}",
                 essential=True, height=min(400, 36 + 35 * len(shown)))
    pages = max(1, -(-len(shown) // CARDS_PER_PAGE))
    page = st.number_input(f"Page (of {pages}, {CARDS_PER_PAGE} items each)", 1, pages, 1, key="insp_cmp_page")
    comparison_cards(shown.iloc[(page - 1) * CARDS_PER_PAGE: page * CARDS_PER_PAGE], a, b)


def comparison_words(s: dict) -> str:
    """The paired counts of A against B on the items both answered, with the exact McNemar test."""
    p = s.get("p_mcnemar")
    return (
        f"On the **{s.get('n_items', 0)} items** both answered (condition {sel.condition}, profile {sel.profile}; right "
        f"= score ≥ 0.5): **A right, B wrong on {s.get('a_right_b_wrong', 0)}**, **B right, A wrong on "
        f"{s.get('b_right_a_wrong', 0)}**, both right on {s.get('both_right', 0)}, both wrong on "
        f"{s.get('both_wrong', 0)}; the scores differ on {s.get('n_differ', 0)} items. Mean score A "
        f"{_score(s.get('mean_a'))}, B {_score(s.get('mean_b'))}"
        + (f"; exact McNemar test on the {s['a_right_b_wrong'] + s['b_right_a_wrong']} discordant items "
           + ("p < 0.001." if p < 0.001 else f"p = {p:.3f}.") if p is not None
           else "; the two never disagree on right and wrong."))


def comparison_cards(rows: pd.DataFrame, a: str, b: str) -> None:
    """One card per item of this page: the key, both answers and justifications, and a button to open the item."""
    titles = views.item_texts(src, sel.dataset)
    for row in rows.itertuples():
        with st.container(border=True):
            top, button = st.columns([5, 1])
            top.markdown(f"**{plain(row.item_id)}** · {vocab.format_label(row.type)} · "
                         f"{plain(str(titles.get(row.item_id, ''))[:160])}")
            top.caption("Key: " + plain(row.gold))
            button.button("Open item", key=f"insp_cmp_open_{row.item_id}", on_click=_open_item,
                          args=(row.item_id, navigate.response_param(sel.condition, a)))
            left, right = st.columns(2)
            for col, name, side in ((left, a, "a"), (right, b, "b")):
                with col:
                    st.markdown(f"{_badge(getattr(row, f'score_{side}'))} **{side.upper()}** · score "
                                f"{_score(getattr(row, f'score_{side}'))} · {plain(name)}")
                    st.markdown("**Answer:**")
                    fulltext.long_text(getattr(row, f"answer_{side}"), f"cmp_{row.item_id}_{side}_answer")
                    reason = getattr(row, f"justification_{side}")
                    if reason:
                        st.markdown("**Justification:**")
                        fulltext.long_text(reason, f"cmp_{row.item_id}_{side}_justification")
                    elif sel.condition == vocab.DEFAULT_CONDITION:
                        st.caption("No justification is asked for in the default condition.")


def _open_item(item_id: str, open_value: str | None = None) -> None:
    """Button callback: show one item (and optionally one response) in the items view."""
    st.session_state["insp_view"] = ITEMS_VIEW
    st.session_state["inspect_item"] = item_id
    st.session_state["_insp_open"] = open_value


# ================================================================ the item list and the matrix
def where_section() -> tuple[str, pd.DataFrame | None]:
    """The filter expression over the score frame: the score rows it keeps (None when there is none or it
    is invalid; a mistake is one line under the field and the page goes on unfiltered)."""
    where = st.text_input("Filter answers (expression)", key="insp_where",
                          placeholder='e.g. score < 0.5 and format == "completion_open" and has_image and model ~ "Sim"',
                          help="Keeps the items with at least one answer the expression keeps, and those answers. "
                               "Columns of the score frame (`show scores`): model, condition, item_id, format, language, "
                               "has_image, score (the selected profile), correct, family, kind, ...; == != < <= > >=, "
                               "and, or, not, parentheses, in [..], not in [..], ~ \"regex\". The link carries it.").strip()
    _set_url(where=where or None)
    if not where:
        return "", None
    try:
        kept = filterexpr.apply(views.scores(src, sel, all_conditions=True), where)
    except filterexpr.FilterError as exc:
        st.error(f"Filter not applied: {plain(exc)}")
        return where, None
    except views.EmptySelection:
        kept = pd.DataFrame(columns=["item_id", "condition", "model"])
    st.caption(f"The expression keeps {len(kept)} answers (score rows, both conditions, {header.scoring_label(sel)}) "
               f"on {kept['item_id'].nunique()} items.")
    return where, kept[["item_id", "condition", "model"]]


def item_list_section() -> Chosen:
    """The filters, the failure matrix and the item list; which item and which response are open."""
    quick, search, per_page, examinee = list_filters()
    where, answers = where_section()
    with failures.guard():
        every = views.item_list(src, sel)
        table = views.explorer_items(src, sel, filter=quick, search=search, examinee=examinee)
    if answers is not None:
        table = table[table["item_id"].isin(set(answers["item_id"]))].reset_index(drop=True)
    ids = list(table["item_id"])
    _set_url(filter=quick if quick != analysis.EVERY_ITEM else None, examinee=examinee or None)
    if quick == analysis.ABERRANT:
        st.caption(f"Items where {plain(table.attrs.get('examinee', examinee))}'s answer was unexpected under the "
                   f"{vocab.IRT_SHORT_NAMES.get(table.attrs.get('irt_model'), 'IRT')} model fitted to "
                   f"{table.attrs.get('n_examinees', 0)} models in condition {sel.condition}, most surprising first "
                   f"({plain(table.attrs.get('residual_rule', ''))}).")
    baselines = views.baseline_models(src, sel.dataset)
    if quick == analysis.BASELINE_ONLY and not baselines:
        st.caption(f"No model of kind '{vocab.BASELINE_KIND}' in this store, so no item is right for a baseline only.")

    current, opened, changed, passed_over, where = chosen_item(every, ids, quick, search, where, answers)
    pages = matrix_pages(ids, current, changed, per_page)
    st.caption(f"{len(ids)} of {len(every)} items ({plain(analysis.ITEM_FILTERS[quick].lower())}"
               + (f", matching “{plain(search)}”" if search else "")
               + (f", with an answer the expression “{plain(where)}” keeps" if answers is not None else "") + f"); condition {sel.condition} for the counts, "
               f"{header.scoring_label(sel)}.")
    if passed_over:
        st.caption(f"Item {plain(passed_over)} is not in this list ({plain(analysis.ITEM_FILTERS[quick].lower())}"
                   + (f", expression “{plain(where)}”" if answers is not None else "")
                   + f"): showing {plain(current)}, the first item the list keeps.")
    if ids:
        failure_matrix(ids, per_page, pages, quick, search, examinee, baselines)
        item_list_table(table, ids, quick)
    return Chosen(every, table, ids, current, opened, quick, answers)


def list_filters() -> tuple[str, str, int, str]:
    """The list's filter, search and rows per page, and whose answers 'aberrant' reads."""
    c1, c2, c3 = st.columns([3, 3, 1])
    quick = c1.selectbox("Show", list(analysis.ITEM_FILTERS), format_func=analysis.ITEM_FILTERS.get, key="insp_quick",
                         help="Counts over the selected models: right means full credit (score 1) in the selected "
                              "profile and condition; 'wrong only with justification' compares the two conditions, "
                              "'score changes' the two profiles; baselines (such as chance) are counted apart.")
    search = c2.text_input("Search id or text (opens the first match)", key="insp_search").strip()
    per_page = c3.selectbox("Rows", ROWS_PER_PAGE, key="insp_rows")
    examinee = ""
    if quick == analysis.ABERRANT:  # whose answers: a model of the selected condition
        choices = [m for m in views.models_with_data(src, sel.dataset) if not sel.models or m in sel.models]
        if st.session_state.get("insp_examinee") not in choices:
            st.session_state.pop("insp_examinee", None)
        unset = {} if "insp_examinee" in st.session_state else {"index": None}
        examinee = st.selectbox("Aberrant for", choices, key="insp_examinee", placeholder="the model with the lowest lz",
                                **unset) or ""
    return quick, search, per_page, examinee


def chosen_item(every, ids: list[str], quick: str, search: str, where, answers):
    """(current item, opened response, whether the list changed, a linked item the list passed over, and
    ``where`` as the caption then names it)."""
    # Which item and which response: a click in the matrix or the table > a jump from another page
    # or a button > the URL (when the filter keeps it) > what was open > the first item of the list.
    current = st.session_state.get("insp_current")
    opened = navigate.parse_response_param(st.session_state.get("insp_open"))
    url_item, url_open = _url_value("item"), _url_value("open")
    jumped = st.session_state.pop("inspect_item", None)
    linked = None if jumped else (url_item if url_item != current else None)
    passed_over = None  # a linked item this filter does not keep: the list's first item is shown instead
    if linked and ids and linked not in ids and (quick != analysis.EVERY_ITEM or answers is not None) and not search:
        passed_over, linked = linked, None
    requested = jumped or linked
    if requested:
        current = str(requested)
    if "_insp_open" in st.session_state:
        opened = navigate.parse_response_param(st.session_state.pop("_insp_open"))
    elif url_open and url_open != st.session_state.get("insp_open"):
        opened = navigate.parse_response_param(url_open)
    changed = (quick, search, where) != st.session_state.get("_insp_list_key")
    if changed:
        st.session_state["_insp_list_key"] = (quick, search, where)
        if search and ids:  # the search opens what it finds
            current = ids[0]
        elif ids and current not in ids and not requested:
            current = ids[0]  # the first item the filter keeps
    cells = [p.get("customdata") for p in plots.selected_points(st.session_state.get("chart_failure_matrix"))]
    cells = [c for c in cells if isinstance(c, list) and len(c) >= 3]
    cell_clicked = bool(cells) and cells[0][:3] != st.session_state.get("_insp_last_cell")
    if cell_clicked:
        st.session_state["_insp_last_cell"] = cells[0][:3]
        current, opened = str(cells[0][0]), (str(cells[0][2]), str(cells[0][1]))
    rows = list(((st.session_state.get("insp_table") or {}).get("selection") or {}).get("rows") or [])
    if rows and rows[0] < len(ids) and ids[rows[0]] != st.session_state.get("_insp_last_row"):
        st.session_state["_insp_last_row"] = ids[rows[0]]
        current = ids[rows[0]]
    if passed_over:
        current = ids[0]
    if current not in set(every["item_id"]):
        current = ids[0] if ids else None
        if requested and current is not None:  # a link to an item the selection does not hold: say so
            where = f"dataset {sel.dataset}" + ("" if sel == sel.with_(types=(), languages=(), image=vocab.ALL_ITEMS)
                                                else " under the current filters")
            notices.link_notice(links.shown_instead("item", requested, f"item {current}", where=where))
    if current is None:
        st.warning("No item matches the current filters: choose another filter or clear the search.")
        st.stop()
    if current != st.session_state.get("insp_current"):
        opened = opened if requested or cell_clicked else None  # Next keeps the same model open
    st.session_state["insp_current"] = current
    st.session_state["insp_open"] = navigate.response_param(*opened) if opened else None
    _set_url(item=current, open=navigate.response_param(*opened) if opened else None)
    return current, opened, changed, passed_over, where


def matrix_pages(ids: list[str], current, changed: bool, per_page: int) -> int:
    """The matrix's page count; the page shown is the one holding the current item (a jump lands on it)."""
    # The page of the matrix that holds the current item (a jump lands on the right page).
    pages = max(1, -(-len(ids) // per_page))
    if current in ids and (changed or st.session_state.get("_insp_page_for") != current):
        st.session_state["insp_page"] = ids.index(current) // per_page + 1
    st.session_state["_insp_page_for"] = current
    if st.session_state.get("insp_page", 1) > pages:
        st.session_state["insp_page"] = 1
    return pages


def failure_matrix(ids: list[str], per_page: int, pages: int, quick: str, search: str, examinee: str,
                   baselines) -> None:
    """One page of the failure matrix: items by model and condition; a click opens that response."""
    page = st.number_input(f"Matrix page (of {pages}, {per_page} items each)", 1, pages, key="insp_page")
    page_ids = ids[(page - 1) * per_page: page * per_page]
    with failures.guard():
        matrix = views.failure_matrix(src, sel, filter=quick, search=search, examinee=examinee)
    models = [m for m in views.models_with_data(src, sel.dataset) if not sel.models or m in sel.models]
    if matrix.empty or not models:
        st.info("No model has answered these items yet: the item card below shows the question and its key.")
    else:
        fam = store_handle.families()
        models = sorted(models, key=lambda m: (fam.get(m, "Other"), m)) + [b for b in baselines if b not in models]
        fig = explorer_charts.figure_failure_matrix(matrix[matrix["item_id"].isin(page_ids)], page_ids, models,
                                                    texts=views.item_texts(src, sel.dataset), profile=sel.profile,
                                                    baselines=baselines)
        plots.chart(fig, "failure_matrix", f"Rows: items {(page - 1) * per_page + 1}-"
                     f"{(page - 1) * per_page + len(page_ids)} of this list; columns: model and condition; "
                     f"{header.scoring_label(sel)}. ● right = score 1, ◆ partial = some credit, ✕ wrong = 0, ○ no "
                     "answer recorded; the score is in the hover; baselines (references, not examinees) come last. "
                     "Click a mark to open that response below.",
                     on_select="rerun")


def item_list_table(table, ids: list[str], quick: str) -> None:
    """The item list with its statistics, folded; a click on a row opens the item."""
    with st.expander(f"The item list with its statistics ({len(ids)} items)", expanded=False):
        cols = ["item_id", "type", "language", "has_image", "p", "r_pb", "mean_score", "models_right", "n_models",
                "n_wrong_with_justification", *(["n_profile_changes"] if quick == analysis.PROFILE_CHANGE else []),
                "text"]
        shown = columns.table(table[cols], view="explorer_items")
        st.dataframe(shown.frame, hide_index=True, width="stretch", height=280, key="insp_table", on_select="rerun",
                     selection_mode="single-row", column_config={**tables.display_config(shown), "text":
                                                                 st.column_config.TextColumn("Text", width="large")})
        st.caption(f"p and r_pb over the selected models in condition {sel.condition}, {header.scoring_label(sel)}. "
                   "Click a row to open the item.")
        tables.table(table[cols], "items", "Download this item list", show=False)


# ================================================================ the item card
def _go(target: str | None) -> None:
    if target:
        st.session_state["inspect_item"] = target


def card_section(chosen: Chosen) -> tuple[dict, pd.DataFrame, dict]:
    """Previous / next, the share link, the image with the item's statistics, and the item with its key."""
    every, ids, current, opened = chosen.every, chosen.ids, chosen.current, chosen.opened
    card_header(ids, current, opened)

    with failures.guard():
        item = views.item_detail(src, sel.dataset, current)
        responses = views.item_responses(src, sel.dataset, current, humans=sel.humans)
    record = item.get("record") or {}
    row = every[every["item_id"] == current].iloc[0] if (every["item_id"] == current).any() else None

    left, right = st.columns([2, 3])
    with left:
        item_picture(item, record, current, row)
    with right:
        item_text(item, record, current)
    return item, responses, record


def card_header(ids: list[str], current: str, opened) -> None:
    """Previous / next, where the item stands in the list, and the share link."""
    prev_id, next_id = display.neighbours(ids, current)
    st.divider()
    b1, b2, b3, b4 = st.columns([1, 1, 5, 1])
    b1.button("◀ Previous", disabled=prev_id is None, on_click=_go, args=(prev_id,), key="insp_prev")
    b2.button("Next ▶", disabled=next_id is None, on_click=_go, args=(next_id,), key="insp_next")
    b3.markdown(f"Item **{plain(current)}**" + (f" ({ids.index(current) + 1} of {len(ids)} in this list)"
                                                if current in ids else " (outside the current list)"))
    with b4.popover("Link", icon=":material/link:"):
        st.caption("This item (and the open response) with the dataset, profile, condition and models:")
        st.code(navigate.inspector_link(current, sel, model=opened[1] if opened else None,
                                      condition=opened[0] if opened else None,
                                      where=_url_value("where")), language=None, wrap_lines=True)


def item_picture(item: dict, record: dict, current: str, row) -> None:
    """The image (with the boxes the question points at), image options, and the item's difficulty and discrimination."""
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
    if row is not None and pd.notna(row["p"]):
        p, r = row["p"], row["r_pb"]
        st.markdown(f"**Difficulty p = {p:.2f}**: the selected models' answers earn {100 * p:.0f}% of the full "
                    "score on average.")
        if pd.notna(r):  # a direction only when the interval excludes zero (`item_notes`)
            note = item_notes.discrimination_note(r, row["r_pb_ci_low"], row["r_pb_ci_high"],
                                                  row.get("n_examinees"), row["discrimination_category"])
            st.markdown(f"**Discrimination** {plain(note)}")
        else:
            st.markdown("**Discrimination r_pb**: not estimable (every model scored the same).")
    else:
        st.caption("No model has answered this item yet in the selected condition.")


def item_text(item: dict, record: dict, current: str) -> None:
    """The item as the models read it, with its key in green."""
    shown_card = display.card(record)
    st.markdown(f"#### {plain(shown_card['question_title'] or current)}")
    st.caption(f"{plain(vocab.format_label(str(record.get('type', ''))))} · "
               f"{plain(vocab.language_label(record.get('language')))} · source {plain(record.get('source') or '—')}"
               f" · version {plain(item.get('version', '—'))}"
               + (f" · chance level {100 * shown_card['chance']:.0f}%" if shown_card.get("chance") is not None else ""))
    if shown_card["instructions"]:
        st.markdown(f"*{plain(shown_card['instructions'])}*")
    if shown_card["question_text"]:  # blank markers [A] in bold, the rest as written
        st.markdown(re.sub(r"\\\[([A-Z]{1,2})\\\]", r"**\\[\1\\]**", plain(shown_card["question_text"])))
    for label, extra in shown_card["extras"].items():
        st.markdown(f"**{plain(label)}:** {plain(extra)}")
    lines = []
    for r_ in shown_card["rows"]:  # the key in green: a marked option, or the right word after an arrow
        gold, choice = r_.get("gold"), r_.get("gold") == display.CORRECT_OPTION
        head = f"**{plain(r_['element'])}.**" if r_["element"] else ""
        body = plain(r_["text"]) if r_["text"] else ""
        key = f" → :green-background[**{plain(gold)}**]" if gold and not choice else ""
        lines.append(f"{head} {body}{key}" + (" :green-badge[✓ correct]" if choice else ""))
    if lines:
        st.markdown("  \n".join(lines))
    if not shown_card["rows"]:
        st.caption("No answer key recorded for this item.")


def dialogue_section(record: dict, current: str) -> None:
    """A turn of a dialogue: the whole conversation, as each model had it."""
    if record.get("dialogue_id"):
        with st.expander(f"Dialogue {plain(record['dialogue_id'])}: this is turn {plain(record.get('turn'))}",
                         expanded=False):
            with failures.guard():
                turns = views.dialogue(src, sel, item=current)
            tables.table(turns[["turn", "item_id", "question", "model", "answer", f"{sel.profile}_score"]],
                         "dialogue", "The dialogue turn by turn: each model's answers in the selected condition")


def variants_section(current: str) -> None:
    """The item's variants (rotations, changed or missing images): images side by side, and who flips."""
    try:
        table = views.item_variants(src, sel, item=current)
    except views.EmptySelection:
        return
    if table.empty:
        return
    with st.expander(f"Variants of this item ({len(table)}): does the answer survive them?", expanded=False):
        pictures = table[table["image_path"].notna() & table["kind"].isin(["grayscale", "crop", "downscale", "mirror"])]
        if not pictures.empty:
            cols = st.columns(min(len(pictures), 5))
            for col, (kind, parameter, path) in zip(cols, zip(pictures["kind"], pictures["parameter"],
                                                              pictures["image_path"])):
                if Path(path).exists():
                    col.image(path, caption=f"{kind} {parameter}".strip(), width="stretch")
        tables.table(table.drop(columns=["image_path"]), "item_variants",
                     "The item's variants; per model, whether its answer to the variant is scored differently from its "
                     "answer to this item (True: it flips; empty: not answered)")


# ================================================================ review studio links
def _open_suspect_queue(item_id: str, dataset: str) -> None:
    st.session_state["review_section"] = "suspects"
    st.session_state["review_suspect_item"] = item_id
    st.session_state["_inspgoto_review"] = (item_id, dataset)


def review_section(item: dict, current: str) -> None:
    """Version history, and a link to the suspect-key queue when this item's key is flagged."""
    goto_review = st.session_state.pop("_inspgoto_review", None)
    if goto_review:
        st.switch_page(menu.PAGES["review"].script, query_params={"suspect": goto_review[0], "dataset": goto_review[1]})
    review_box = st.expander(f"Review: version history and key checks (version {item.get('version', '—')})",
                             key="insp_review", on_change="rerun")  # read when opened (the key checks are not free)
    if review_box.open:
        with review_box:
            try:
                history = views.item_history(src, sel, item=current)
                st.dataframe(history, hide_index=True, width="stretch")
                flags = views.suspect_keys(src, sel)
                flags = flags[flags["item_id"] == current]
            except (views.StoreError, UserError, KeyError, ValueError) as exc:  # the card above stays usable: one line
                st.caption(f"Review details unavailable: {type(exc).__name__}: {plain(str(exc).splitlines()[0][:160])}")
                flags = None
            if flags is not None and len(flags):
                st.warning("This item is in the suspect-key queue: " + plain(flags["reasons"].iloc[0]) + ".")
                st.button("Open it in the suspect-key queue", key="insp_open_suspect", on_click=_open_suspect_queue,
                          args=(current, sel.dataset), icon=":material/rule:")
            elif flags is not None:
                st.caption("No open key flag for this item.")


# ================================================================ item response curve (IRT)
def irt_curve_section(current: str) -> None:
    """The item's characteristic curve under the Rasch model (fitted when the box is opened)."""
    st.divider()
    irt_box = st.expander("Item response curve (Rasch model)", expanded=False, key="insp_irt", on_change="rerun")  # fitted when opened
    if irt_box.open:
        with irt_box:
            try:
                curve = views.irt_item_curve(src, sel, item=current, model=vocab.IRT_RASCH)
                fitted = views.irt_items(src, sel, model=vocab.IRT_RASCH)
            except UserError as exc:  # a panel too small or an item outside the selection: one line, page goes on
                st.caption(f"No curve: {plain(exc)}")
            else:
                row = fitted[fitted["item_id"] == current]
                n_ex = int(curve.attrs["n_examinees"])
                status = curve.attrs.get("status", "")
                if row.empty or status != "fitted":
                    st.caption(f"No curve: {status.replace('_', ' ') or 'not answered'} among the {n_ex} examinees, so the "
                               "item carries no information on the ability scale (no finite difficulty).")
                else:
                    b, se = float(row["difficulty"].iloc[0]), float(row["difficulty_se"].iloc[0])
                    plots.chart(figures.figure_item_curve(curve), "item_curve",
                                 f"Chance of a right answer along the ability scale (logits) under the Rasch model fitted "
                                 f"to {n_ex} examinees ({curve.attrs['examinee_note']}), with the item's information (dotted). "
                                 f"Difficulty {b:.2f} (SE {se:.2f}): the ability at which the chance is 50%. "
                                 f"{curve.attrs['rule'].capitalize()}.", height=300)


# ================================================================ the answers
def _choose_response() -> None:
    st.session_state["_insp_open"] = st.session_state.get("insp_response") or None


def _answers_heading(every: pd.DataFrame, chosen: Chosen) -> str:
    """What the list kept and how this item's answers split, with "right" as the filters and the
    matrix mean it: full credit (score 1), a model's repeats averaged first (as the list and the
    score frame do); partial credit and score 0 are counted apart."""
    quick, current = chosen.quick, chosen.current
    here = every[every["condition"] == sel.condition]
    references = set() if sel.baselines else set(views.baseline_models(src, sel.dataset))
    per_model = here[~here["model"].isin(references)].groupby("model", sort=False)
    counted = per_model[f"{sel.profile}_score"].mean()
    repeated = int((per_model.size() > 1).sum())
    states = analysis.explorer.cell_states(counted).value_counts()
    right, partial, wrong = (int(states.get(k, 0)) for k in (analysis.explorer.RIGHT, analysis.explorer.PARTIAL,
                                                             analysis.explorer.WRONG))
    missing = int(states.get(analysis.explorer.MISSING, 0))
    if quick == analysis.EVERY_ITEM:
        kept = ""
    elif current in chosen.ids:
        kept = (f"One of the {len(chosen.ids)} items the list “{plain(analysis.ITEM_FILTERS[quick])}” keeps. ")
    else:
        kept = f"Not one of the items the list “{plain(analysis.ITEM_FILTERS[quick])}” keeps. "
    return (kept + f"Of the **{len(counted)}** answers in condition {sel.condition} under the {sel.profile} profile, "
            f"**{right} {'is' if right == 1 else 'are'} right** (full credit, score 1), {partial} partial "
            f"(0 < score < 1) and {wrong} wrong (score 0)" + (f"; {missing} not scored" if missing else "")
            + (f"; {repeated} model{'s' if repeated != 1 else ''} answered in repeats, counted by the mean of "
               "their repeats (the list below shows the first)" if repeated else "")
            + (f"; baselines ({', '.join(sorted(map(plain, set(here['model']) & references)))}) are counted apart"
               if set(here["model"]) & references else "") + ".")


def answers_section(opened: tuple[str, str] | None, responses: pd.DataFrame, record: dict,
                    chosen: Chosen) -> pd.DataFrame:
    """Every model's latest answer, both profiles side by side; the opened response marked part by part."""
    current = chosen.current
    st.divider()
    st.subheader("How each model answered")
    prof = sel.profile
    every = item_answers(responses, chosen)
    latest = every[every["repetition"].fillna(0) == 0] if not every.empty else every
    if latest.empty:
        st.info("No responses recorded for this item yet.")
        st.stop()
    st.markdown(_answers_heading(every, chosen) + " Both profiles are shown side by side; open a response to see "
                "each part marked.")

    options = {navigate.response_param(r.condition, r.model): f"{r.model} · {r.condition}"
               for r in latest.sort_values(["model", "condition"]).itertuples()}
    if opened and navigate.response_param(*opened) in options:
        st.session_state["insp_response"] = navigate.response_param(*opened)
    elif st.session_state.get("insp_response") not in options:
        st.session_state["insp_response"] = ""
    st.selectbox("Open a response", ["", *options], key="insp_response", on_change=_choose_response,
                 format_func=lambda k: options.get(k, "(choose a model and condition, or click the matrix)"))

    if opened:
        hit = latest[(latest["condition"] == opened[0]) & (latest["model"] == opened[1])]
        if hit.empty:
            st.caption(f"{plain(opened[1])} has no answer to this item in condition {opened[0]}.")
        else:
            opened_response(hit.iloc[0], record, current)

    overview = pd.DataFrame([{  # rows as dicts: a judge profile's column names are no identifiers
        "model": plain(r["model"]), "condition": r["condition"],
        **{p_: f"{_badge(r[f'{p_}_score'])} {_score(r[f'{p_}_score'])}" for p_ in vocab.PROFILES},
        "answer": plain(truncate(display.answer_summary(r[f"{prof}_details"], record), OVERVIEW_CHARS)[0]),
    } for r in latest.sort_values(["model", "condition"]).to_dict("records")])
    st.table(overview.rename(columns={"answer": f"answer ({prof} reading)"}), hide_index=True)
    return latest


def item_answers(responses: pd.DataFrame, chosen: Chosen) -> pd.DataFrame:
    """The item's latest answers of the selected models, only those the filter expression keeps."""
    current = chosen.current
    every = responses
    if not every.empty:
        every = every[every["is_latest"].astype(bool)]
        if sel.models:
            every = every[every["model"].isin(sel.models)]
    if chosen.answers is not None and not every.empty:  # the answers the filter expression keeps
        keep = chosen.answers[chosen.answers["item_id"] == current]
        pairs = set(zip(keep["condition"], keep["model"]))
        every = every[[pair in pairs for pair in zip(every["condition"], every["model"])]]
        st.caption(f"Showing the {len(pairs)} answers (model and condition) of this item the filter expression keeps.")
        if every.empty:
            st.info("The filter expression keeps none of this item's answers.")
            st.stop()
    return every


def opened_response(r, record: dict, current: str) -> None:
    """One model's response: both profiles' scores, the answer part by part, the justification and the raw text."""
    prof = sel.profile
    with st.container(border=True):
        st.markdown(f"##### {plain(r['model'])} · {r['condition']}")
        st.markdown("  ·  ".join(f"{p_}: {_badge(r.get(f'{p_}_score'))} **{_score(r.get(f'{p_}_score'))}**"
                                 for p_ in vocab.PROFILES))
        if r.get("error"):
            st.caption("The request failed: " + plain(r["error"]))
        if r.get("parse_error"):
            st.caption("Could not read the answer as asked: " + plain(r["parse_error"]))
        st.markdown(f"**Answer ({prof} reading):**")
        fulltext.long_text(display.answer_summary(r.get(f"{prof}_details"), record), f"answer_{current}_{r['condition']}")
        marks = display.profile_marks({p_: r.get(f"{p_}_details") for p_ in vocab.PROFILES}, record)
        if len(marks):
            cells = marks.map(lambda v: plain(v) if v not in display.MARKS.values() else v)
            for p_ in vocab.PROFILES:
                if p_ in cells:
                    cells[p_] = marks[p_].map({display.MARKS[True]: ":green-badge[✓ right]",
                                               display.MARKS[False]: ":red-badge[✕ wrong]"}).fillna("")
            st.table(cells, hide_index=True)
        if r.get("motivation"):
            st.markdown("**Justification:**")
            fulltext.long_text(r["motivation"], f"justification_{current}_{r['condition']}")
        with st.expander("Raw response"):
            fulltext.long_text(r.get("raw_text") or "", f"raw_{current}_{r['condition']}", code=True)


# ================================================================ human score override
# The domain module checks the acting person's roles and records them (eduart_core.overrides).
def _save_override(options: dict) -> None:
    actor = signin.identity()
    who = "" if actor is not None else (st.session_state.get("ovr_name") or "").strip()
    choice = st.session_state.get("ovr_response")
    profiles = vocab.PROFILES if st.session_state.get("ovr_all_profiles") else (sel.profile,)
    try:
        overrides.add_override(store_handle.store(), options[choice], st.session_state.get("ovr_score"),
                               st.session_state.get("ovr_reason", ""), actor or team.local(who), profiles)
    except (UserError, views.StoreError) as exc:
        st.session_state["ovrmessage"] = ("error", plain(exc))
        return
    if who:
        st.session_state["reviewer"] = who
    st.session_state["ovrmessage"] = ("success", plain(f"Override saved for {choice} ({', '.join(profiles)})."))


def override_section(latest: pd.DataFrame, current: str) -> None:
    """A researcher re-scores one response with a reason (append-only: the computed score is kept, and
    every statistic uses the override while "With reviewed overrides" is on)."""
    prof = sel.profile
    st.divider()
    with st.expander("Override a score (human review)", expanded=False):
        options = {f"{r['model']} · {r['condition']} · computed {r.get(f'{prof}_score', float('nan')):.2f}":
                    int(r["response_id"]) for r in latest.to_dict("records")}
        message = st.session_state.pop("ovrmessage", None)
        if message:
            getattr(st, message[0])(message[1])
        actor = signin.identity()
        if actor is not None and not actor.may(team.OVERRIDE_SCORE):
            st.caption("Overriding a score needs the researcher role.")
        else:
            with st.form("ovr_form", clear_on_submit=False):
                st.selectbox("Response", list(options), key="ovr_response")
                st.number_input("Score it deserves (0 to 1)", 0.0, 1.0, 1.0, step=0.05, key="ovr_score")
                st.checkbox("For both scoring profiles", value=True, key="ovr_all_profiles")
                st.text_input("Reason (required; kept with the override)", key="ovr_reason")
                if actor is None:  # single-machine mode: a typed name
                    st.text_input("Your name", key="ovr_name")
                st.form_submit_button("Save override", on_click=_save_override, args=(options,))
        made = views.score_overrides(src, sel, item=current)
        if len(made):
            st.dataframe(made[["model", "condition", "profile", "original_score", "score", "reason", "reviewer",
                               "actor_subject", "item_version", "created_at", "applied"]], hide_index=True,
                         width="stretch")
        st.caption("Overrides are append-only and apply while the gold version they were made on is current; every "
                   "statistic uses them while \"With reviewed overrides\" is on in the sidebar (the default).")


def main() -> None:
    _seed_from_url()
    header.invalid_warning(src, sel)
    mode = st.radio("View", list(MODES), format_func=MODES.get, horizontal=True, key="insp_view",
                    label_visibility="collapsed")
    if mode == COMPARE_VIEW:
        compare_models()
        st.stop()
    _set_url(view=None, a=None, b=None, only=None)
    chosen = item_list_section()
    item, responses, record = card_section(chosen)
    dialogue_section(record, chosen.current)
    variants_section(chosen.current)
    review_section(item, chosen.current)
    irt_curve_section(chosen.current)
    latest = answers_section(chosen.opened, responses, record, chosen)
    override_section(latest, chosen.current)


main()
