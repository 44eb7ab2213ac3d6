"""EduArt Studio: `streamlit run app.py`.

Entry point and Overview page. It builds the demo store on first start, draws the global sidebar
(so every page shares the same selection and URL), and routes to the pages with ``st.navigation``.
In presentation mode only the story pages are offered, in story order.
"""
from __future__ import annotations

from pathlib import Path

import streamlit as st

from eduart_core import charts, findings, views, vocab
from eduart_core.runner.recovery import recover_at_start
from pages import common

#: A local favicon: a Material icon or an emoji here makes every page fetch its icon from a CDN.
ICON = Path(__file__).resolve().parent / "assets" / "icon.png"
st.set_page_config(page_title="EduArt Studio", page_icon=str(ICON), layout="wide")


def overview() -> None:
    """Dataset at a glance, the leaderboard and the key findings."""
    src, sel = common.page_start(
        "EduArt Studio · Overview",
        "How well do multimodal language models answer art-history exam questions? "
        "This page sums up the dataset, ranks the models and lists the main findings.")
    fam = common.families()
    with common.guard():
        board = views.leaderboard(src, sel)
        found = views.key_findings(src, sel)

    pres = common.presentation()
    if not pres:
        st.subheader("Key findings")
        for f in found:
            st.markdown(f"- **{common.md_text(f.headline)}** {common.md_text(f.detail)}")
            st.caption(f"{f.test}")
        if not found:
            st.caption("Not enough data in the current selection for findings.")

    if not pres:
        st.subheader("Leaderboard")
    n_items = int(board["n_items"].max()) if "n_items" in board else 0
    caption = (f"Macro average (bars, labelled: unweighted mean of the format means) and multiple-choice accuracy "
               f"(diamonds below each bar, 95% Wilson interval) per model; condition {sel.condition}, "
               f"{common.scoring_label(sel)}, n = {n_items} items. Colours show the model family.")
    lead = findings.leader_finding(board)
    common.chart(charts.figure_leaderboard(board, families=fam), "leaderboard", caption,
                 story=lead.headline if lead else None, main=True,
                 context=common.context(sel, "Leaderboard", "Macro average and multiple-choice accuracy (%)",
                                        test="Wilson 95% interval on multiple choice", n=f"n = {n_items} items"))
    if pres:
        return
    shown = board.assign(family=board["model"].map(fam))[
        ["rank", "model", "family", "macro", "mcq", "mcq_ci_low", "mcq_ci_high", "micro", "n_items"]]
    common.table(shown, "leaderboard", f"Leaderboard (percent; {common.scoring_label(sel)}, condition {sel.condition})",
                 percent=("macro", "mcq", "mcq_ci_low", "mcq_ci_high", "micro"))

    st.subheader("The dataset at a glance")
    with common.guard():
        by_format = views.items_by_format(src, sel)
    by_format = by_format.assign(format=by_format["type"].map(vocab.format_label))[["format", "items"]]
    if common.flags(sel).aggregate_only:
        st.markdown(f"Published reference: **{int(by_format['items'].sum())} items** in {len(by_format)} formats, "
                    f"{board['model'].nunique()} models. Item-level details are not available for this dataset.")
        common.table(by_format, "items_by_format", "Items by format (published)", essential=True)
        return
    with common.guard():
        glance = views.dataset_glance(src, sel.dataset)
    cols = st.columns(4)
    cols[0].metric("Items", glance["n_items"])
    cols[1].metric("Models", board["model"].nunique())
    cols[2].metric("Items with an image", int(glance["by_image"].set_index("has_image")["items"].get(True, 0)))
    cols[3].metric("Distinct images", glance["distinct_images"])
    c1, c2, c3 = st.columns(3)
    with c1:
        common.table(by_format, "items_by_format", "Items by format", essential=True)
    with c2:
        by_language = glance["by_language"].assign(language=lambda d: d["language"].map(vocab.language_label))
        common.table(by_language, "items_by_language", "Items by language", essential=True)
    with c3:
        by_image = glance["by_image"].assign(image=lambda d: d["has_image"].map(
            {True: vocab.IMAGE_FILTERS[vocab.WITH_IMAGE], False: vocab.IMAGE_FILTERS[vocab.WITHOUT_IMAGE]}))
        common.table(by_image[["image", "items"]], "items_by_image", "Items by image", essential=True)
    words, tokens = (glance["lengths"].iloc[i] for i in (0, 1))
    st.markdown(f"**Item length:** {words['mean']:.0f} words on average (median {words['median']:.0f}, "
                f"range {words['min']:.0f} to {words['max']:.0f}; stem plus options); "
                f"{tokens['mean']:.0f} {tokens['measure']} on average (median {tokens['median']:.0f}, "
                f"range {tokens['min']:.0f} to {tokens['max']:.0f}).")
    if len(glance["images"]):
        common.table(glance["image_summary"], "image_sizes",
                     f"Image width and height (pixels) and file size (kB), {len(glance['images'])} distinct images")


#: Every page of the app, in menu order within its group (an explicit list: no file-system probing).
PAGES = {
    "overview": st.Page(overview, title="Overview", icon=":material/home:", url_path="overview", default=True),
    "inspector": st.Page("pages/1_inspector_page.py", title="Item inspector", icon=":material/search:",
                         url_path="inspector"),
    "psychometrics": st.Page("pages/2_psychometrics_page.py", title="Psychometrics",
                             icon=":material/scatter_plot:", url_path="psychometrics"),
    "formats": st.Page("pages/3_formats_page.py", title="Formats", icon=":material/grid_on:", url_path="formats"),
    "motivation": st.Page("pages/4_motivation_page.py", title="Motivation", icon=":material/chat:",
                          url_path="motivation"),
    "images": st.Page("pages/5_images_page.py", title="Images", icon=":material/image:", url_path="images"),
    "profiles": st.Page("pages/6_profiles_page.py", title="Scoring profiles", icon=":material/balance:",
                        url_path="profiles"),
    "runs": st.Page("pages/7_runs_page.py", title="Runs", icon=":material/rocket_launch:", url_path="runs"),
    "review": st.Page("pages/8_review_page.py", title="Extraction review", icon=":material/rate_review:",
                      url_path="review"),
}
MENU = {
    "Results": ("overview", "formats", "motivation", "images"),
    "Items and statistics": ("inspector", "psychometrics", "profiles"),
    "Work": ("runs", "review"),
}
STORY = ("overview", "formats", "motivation", "images")
#: Pages that need item-level data: hidden for a dataset of published aggregates.
ITEM_LEVEL = ("inspector", "psychometrics", "images", "profiles")


def navigation():
    """The menu: built before anything can stop the script, so a deep link never falls back to
    Streamlit's automatic list of the pages/ folder (which would show helper modules as pages).

    Presentation mode (the toggle, or ``present=1`` in a shared link) offers only the story pages;
    pages that do not apply to the dataset (item-level pages for published aggregates) are left out.
    """
    item_level = common.requested_item_level()
    keep = [k for k in PAGES if item_level or k not in ITEM_LEVEL]
    if common.requested_presentation():
        return st.navigation([PAGES[k] for k in STORY if k in keep])
    return st.navigation({group: [PAGES[k] for k in keys if k in keep] for group, keys in MENU.items()})


def main() -> None:
    common.register_pages(PAGES)
    nav = navigation()
    common.ensure_store()
    recover_at_start(common.store_path())  # explicit step: store runs left waiting for ingest (once per process)
    common.warm_up()
    common.sidebar()
    common.follow_page_request()
    nav.run()


main()
