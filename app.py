"""EduArt Studio: `streamlit run app.py`.

Entry point and Overview page. It builds the demo store on first start, draws the global sidebar
(so every page shares the same filters and URL), and routes to the pages with ``st.navigation``.
In presentation mode only the story pages are offered, in story order.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from eduart_core import charts, findings, vocab
from pages import common

st.set_page_config(page_title="EduArt Studio", page_icon=":material/palette:", layout="wide")


def overview() -> None:
    """Dataset at a glance, the leaderboard and the key findings."""
    filters = common.current_filters()
    common.header("EduArt Studio · Overview",
                  "How well do multimodal language models answer art-history exam questions? "
                  "This page sums up the dataset, ranks the models and lists the main findings.", filters)
    fam = common.families()
    with common.guard():
        board = common.view("leaderboard", filters)
        type_means = common.view("type_means", filters)
    aggregate = common.views.dataset_flags(common.store_path(), common.data_version(), filters.dataset)["aggregate_only"]
    effect = regression = image = None
    try:
        effect = common.view("motivation", filters)
        if not aggregate:
            image = common.view("image_effect", filters)
            regression = common.view("regression", filters, clustered=True)
    except (common.EmptySelection, common.ItemLevelUnavailable, ValueError, KeyError):
        pass
    except Exception:  # a finding that cannot be computed is left out, the page still renders
        pass

    st.subheader("Key findings")
    found = findings.key_findings(board, type_means, effect, regression, image, filters.condition)
    for f in found:
        st.markdown(f"- **{f.headline}** {f.detail} _Test: {f.test}._")
    if not found:
        st.caption("Not enough data in the current selection for findings.")

    st.subheader("Leaderboard")
    n_items = int(board["n_items"].max()) if "n_items" in board else 0
    caption = (f"Macro average (bars: unweighted mean of the 7 format means) and multiple-choice accuracy "
               f"(diamonds, 95% Wilson interval) per model; condition {filters.condition}, "
               f"{common.scoring_label(filters)}, n = {n_items} items. Colours show the model family.")
    lead = findings.leader_finding(board)
    common.chart(charts.figure_leaderboard(board, families=fam, condition=filters.condition), "leaderboard", caption,
                 story=lead.headline if lead else None)
    shown = board.assign(family=board["model"].map(fam))[
        ["rank", "model", "family", "macro", "mcq", "mcq_ci_low", "mcq_ci_high", "micro", "n_items"]]
    common.table(shown, "leaderboard", f"Leaderboard (percent; {common.scoring_label(filters)}, condition {filters.condition})",
                 essential=False, percent=("macro", "mcq", "mcq_ci_low", "mcq_ci_high", "micro"))

    st.subheader("The dataset at a glance")
    if aggregate:
        counts, n_models = common.views.reference_items_by_format(type_means, filters.condition)
        st.markdown(f"Published reference: **{int(counts.sum())} items** in {len(counts)} formats, "
                    f"{n_models} models. Item-level details are not available for this dataset.")
        common.table(pd.DataFrame({"format": [vocab.format_label(t) for t in counts.index], "items": counts.values}),
                     "items_by_format", "Items by format (published)", essential=True)
        return
    with common.guard():
        glance = common.plain("overview_items", filters.dataset)
    cols = st.columns(4)
    cols[0].metric("Items", glance["n_items"])
    cols[1].metric("Models", board["model"].nunique())
    cols[2].metric("Items with an image", int(glance["by_image"].set_index("has_image")["items"].get(True, 0)))
    cols[3].metric("Distinct images", glance["distinct_images"])
    c1, c2, c3 = st.columns(3)
    with c1:
        bt = glance["by_type"].set_index("type").reindex(
            vocab.ordered_formats(glance["by_type"]["type"])).reset_index()
        bt = bt.assign(format=bt["type"].map(vocab.format_label))[["format", "items"]]
        common.table(bt, "items_by_format", "Items by format", essential=True)
    with c2:
        bl = glance["by_language"].assign(language=lambda d: d["language"].map(lambda x: vocab.language_label(x)))
        common.table(bl, "items_by_language", "Items by language", essential=True)
    with c3:
        bi = glance["by_image"].assign(image=lambda d: d["has_image"].map(
            {True: vocab.IMAGE_FILTERS[vocab.WITH_IMAGE], False: vocab.IMAGE_FILTERS[vocab.WITHOUT_IMAGE]}))
        common.table(bi[["image", "items"]], "items_by_image", "Items by image", essential=True)
    words = glance["words"]
    st.markdown(f"**Item length:** {words['mean']:.0f} words on average (median {words['50%']:.0f}, "
                f"range {words['min']:.0f} to {words['max']:.0f}; stem plus options); "
                f"{glance['tokens']['mean']:.0f} tokens on average (median {glance['tokens']['50%']:.0f}, "
                f"range {glance['tokens']['min']:.0f} to {glance['tokens']['max']:.0f}; {glance['token_method']}).")
    if len(glance["images"]):
        common.table(glance["image_summary"], "image_sizes",
                     f"Image width and height (pixels) and file size (kB), {len(glance['images'])} distinct images")


PAGES = {
    "overview": st.Page(overview, title="Overview", icon=":material/home:", url_path="overview", default=True),
    "inspector": st.Page("pages/1_inspector_page.py", title="Item inspector", icon=":material/search:", url_path="inspector"),
    "psychometrics": st.Page("pages/2_psychometrics_page.py", title="Psychometrics", icon=":material/scatter_plot:", url_path="psychometrics"),
    "formats": st.Page("pages/3_formats_page.py", title="Formats", icon=":material/grid_on:", url_path="formats"),
    "motivation": st.Page("pages/4_motivation_page.py", title="Motivation", icon=":material/chat:", url_path="motivation"),
    "images": st.Page("pages/5_images_page.py", title="Images", icon=":material/image:", url_path="images"),
    "profiles": st.Page("pages/6_profiles_page.py", title="Scoring profiles", icon=":material/balance:", url_path="profiles"),
}


def _optional_pages() -> list:
    """Pages owned by other rooms (runs, review) appear when their files exist."""
    out = []
    for path, title, icon, url in (("pages/7_runs_page.py", "Runs", ":material/rocket_launch:", "runs"),
                                   ("pages/8_review_page.py", "Extraction review", ":material/rate_review:", "review")):
        if (common.ROOT / path).exists():
            out.append(st.Page(path, title=title, icon=icon, url_path=url))
    return out


def navigation() -> st.navigation:
    """The menu: built before anything can stop the script, so a deep link never falls back to
    Streamlit's automatic list of the pages/ folder (which would show helper modules as pages)."""
    if common.presentation():
        return st.navigation([PAGES[k] for k in ("overview", "formats", "motivation", "images")])
    work = _optional_pages()
    return st.navigation({
        "Results": [PAGES[k] for k in ("overview", "formats", "motivation", "images")],
        "Items and statistics": [PAGES[k] for k in ("inspector", "psychometrics", "profiles")],
        **({"Work": work} if work else {}),
    })


def main() -> None:
    nav = navigation()
    common.ensure_store()
    common.sidebar()
    nav.run()


main()
