"""EduArt Studio: `streamlit run app.py`.

Entry point and Overview page. It builds the demo store on first start, draws the global sidebar
(so every page shares the same selection and URL), and routes to the pages with ``st.navigation``.
In presentation mode only the story pages are offered, in story order.

Why the ``st.App`` at the end: Streamlit runs a page script only when a browser opens a session,
so nothing in it can speak when the server starts. `streamlit run app.py` finds the ``App`` and
serves this same file with it; the App's lifespan runs once at server start, before anyone can
connect, and says in the terminal when the studio listens beyond this machine without sign-in.
Each session still runs this file as ``__main__`` (``main``).
"""
from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import streamlit as st

from eduart_core import gcpause, links, panels, views, vocab
from eduart_core.analysis import humans as people_analysis
from eduart_core.charts import humans as people_charts
from eduart_core.errors import UserError
from eduart_core.pandas_mode import use_python_strings
from eduart_core.runner.recovery import recover_at_start
from eduart_core.text import plain
from pages.ui import (
    failures,
    first_start,
    header,
    icon,
    menu,
    navigate,
    notices,
    plots,
    query,
    sidebar,
    signin,
    store_handle,
    tables,
)


def overview() -> None:
    """Dataset at a glance, the leaderboard and the key findings."""
    src, sel = header.page_start(
        "EduArt Studio · Overview",
        "How well do multimodal language models answer art-history exam questions? "
        "This page sums up the dataset, ranks the models and lists the main findings.")
    fam = store_handle.families()
    features = views.study_features(src, sel.dataset)
    if features.reference:  # a published per-task table: its story is on the Tasks and dimensions page
        st.info("This dataset is a published per-task results table (aggregates only). Its scores, marks and "
                "consistency checks are on the Tasks and dimensions page.")
        st.page_link(navigate.page("tasks"), label="Open Tasks and dimensions", icon=":material/view_column:")
        return
    with failures.guard():
        board = views.leaderboard(src, sel)
        found = views.key_findings(src, sel)

    header.invalid_warning(src, sel)
    pres = query.presentation()
    if not pres:
        key_findings(found)

    if not pres:
        st.subheader("Leaderboard")
    with failures.guard():  # baselines are references: a dashed line each, never a bar or a rank
        drawn = panels.draw("leaderboard", src, sel)
    plots.panel(drawn, main=True)
    if pres:  # the story: the leaderboard, then models and people
        models_and_people(src, sel)
        return
    shown = board.assign(family=board["model"].map(fam))[
        ["tie_group", "rank", "rank_best", "rank_worst", "model", "family", "macro", "macro_ci_low", "macro_ci_high",
         "mcq", "mcq_ci_low", "mcq_ci_high", "micro", "n_items"]]
    tables.table(shown, "leaderboard", f"Leaderboard (percent; {header.scoring_label(sel)}, condition {sel.condition}; "
                 "rank: order of the averages, possible ranks and tie groups: what the paired tests carry)",
                 percent=("macro", "macro_ci_low", "macro_ci_high", "mcq", "mcq_ci_low", "mcq_ci_high", "micro"))
    models_and_people(src, sel)  # below the leaderboard's own table

    dataset_at_a_glance(src, sel, board)


def key_findings(found) -> None:
    """The findings as plain headlines, each with how we know one click away."""
    st.subheader("Key findings")
    for f in found:  # the plain headline; test, n, interval and correction one click away
        st.markdown(f"- **{plain(f.headline)}**")
        with st.expander("How we know"):
            st.caption(plain(f.how_we_know()))
    if not found:
        st.caption("Not enough data in the current selection for findings.")


def dataset_at_a_glance(src: views.Source, sel, board) -> None:
    """The dataset's items by format, language and image, their lengths and the images' sizes
    (for a published reference: its item and model counts only)."""
    st.subheader("The dataset at a glance")
    with failures.guard():
        by_format = views.items_by_format(src, sel)
    by_format = by_format.assign(format=by_format["type"].map(vocab.format_label))[["format", "items"]]
    if store_handle.flags(sel).aggregate_only:
        st.markdown(f"Published reference: **{int(by_format['items'].sum())} items** in {len(by_format)} formats, "
                    f"{board['model'].nunique()} models. Item-level details are not available for this dataset.")
        tables.table(by_format, "items_by_format", "Items by format (published)", essential=True)
        return
    with failures.guard():
        glance = views.dataset_glance(src, sel.dataset)
    cols = st.columns(4)
    cols[0].metric("Items", glance["n_items"])
    cols[1].metric("Models", board["model"].nunique())
    cols[2].metric("Items with an image", int(glance["by_image"].set_index("has_image")["items"].get(True, 0)))
    cols[3].metric("Distinct images", glance["distinct_images"])
    c1, c2, c3 = st.columns(3)
    with c1:
        tables.table(by_format, "items_by_format", "Items by format", essential=True)
    with c2:
        by_language = glance["by_language"].assign(language=lambda d: d["language"].map(vocab.language_label))
        tables.table(by_language, "items_by_language", "Items by language", essential=True)
    with c3:
        by_image = glance["by_image"].assign(image=lambda d: d["has_image"].map(
            {True: vocab.IMAGE_FILTERS[vocab.WITH_IMAGE], False: vocab.IMAGE_FILTERS[vocab.WITHOUT_IMAGE]}))
        tables.table(by_image[["image", "items"]], "items_by_image", "Items by image", essential=True)
    words, tokens = (glance["lengths"].iloc[i] for i in (0, 1))
    st.markdown(f"**Item length:** {words['mean']:.0f} words on average (median {words['median']:.0f}, "
                f"range {words['min']:.0f} to {words['max']:.0f}; stem plus options); "
                f"{tokens['mean']:.0f} {tokens['measure']} on average (median {tokens['median']:.0f}, "
                f"range {tokens['min']:.0f} to {tokens['max']:.0f}).")
    if len(glance["images"]):
        median = glance["image_summary"].set_index("statistic").loc["median"]
        tables.table(glance["image_summary"], "image_sizes",
                     f"Image width and height in whole pixels and file size (kB), {len(glance['images'])} distinct "
                     f"images; median width × height {median['width']:.0f} × {median['height']:.0f} px")


def models_and_people(src: views.Source, sel) -> None:
    """The "Models and people" section (also in presentation mode): people's accuracy beside the
    models', the gaps with their sentences, and (not presenting) the joint ranking and Wright map."""
    with failures.guard():
        gap = views.human_gap(src, sel)
        accuracy = views.human_accuracy(src, sel)
    if gap.empty:
        return
    st.subheader("Models and people")
    n = gap.attrs["n_people"]
    who = (f"{n} {'simulated ' if gap.attrs['simulated'] else ''}{'person' if n == 1 else 'people'} in "
           f"{len(gap.attrs['groups'])} group(s) ({', '.join(gap.attrs['groups'])})")
    caption = (f"Mean item score per format in the answer-only condition (the one people sit), "
               f"{header.scoring_label(sel)}; diamonds: models ({people_analysis.MODEL_INTERVAL_WORDS}), the best of "
               f"each format dark; dots: groups of people ({people_analysis.GROUP_INTERVAL_WORDS}); n = {who}, "
               f"{gap.attrs['n_items']} items.")
    if not query.presentation():  # presenting, the headline is the chart's story line
        st.markdown(f"**{plain(gap.attrs['headline'])}**")
    plots.chart(people_charts.figure_models_and_people(accuracy), "models_and_people", caption,
                 story=gap.attrs["headline"], main=True,
                 context=plots.context(sel.with_(condition=vocab.DEFAULT_CONDITION), "Models and people",
                                        "Mean item score (%)", test=people_analysis.GROUP_INTERVAL_WORDS,
                                        n=f"n = {who}, {gap.attrs['n_items']} items"))
    st.markdown("\n".join(f"- {plain(s)}" for s in gap.attrs["sentences"]))
    st.caption(plain(f"Each gap is the highest-scoring model (highest mean item score over the items) minus one person, on the "
                     f"items both answered; {people_analysis.GAP_INTERVAL_WORDS}. Median person: the lower middle "
                     "one for an even count."))
    if query.presentation():
        return
    tables.table(gap, "human_gap", "Best model minus the median and the best person (percentage points)",
                 percent=("best_model_mean", "median_person_mean", "gap_median", "gap_median_ci_low",
                          "gap_median_ci_high", "best_person_mean", "gap_best", "gap_best_ci_low", "gap_best_ci_high"))
    try:
        ranking, wright = views.human_ranking(src, sel), views.human_wright_map(src, sel)
    except (views.EmptySelection, UserError) as exc:  # too few examinees or items for a fit
        st.caption(plain(f"No joint ability scale: {exc}"))
        return
    panel = f"{ranking.attrs.get('irt_model', '')} fit over {ranking.attrs.get('n_examinees', len(ranking))} examinees"
    plots.chart(people_charts.figure_joint_ranking(ranking), "human_ranking",
                 f"Models and people on one ability scale ({panel}; answer-only condition): EAP abilities with 95% "
                 "intervals, best at the top. " + str(ranking.attrs.get("warning") or ""))
    plots.chart(people_charts.figure_joint_wright_map(wright), "human_wright_map",
                 f"Wright map of the same fit ({panel}): models and people by group on the left, item difficulties "
                 "per format on the right, one logit scale.")



def pages(visible, presenting: bool = False, home: str = "overview") -> dict:
    """The st.Page of every page; those not in ``visible`` are hidden from the menu but still open
    by link (a shared link to a hidden page then explains itself instead of "page not found").
    While presenting, a page outside the story keeps its URL but shows the way back to the story.
    ``home`` is the page the root opens (a respondent, who never sees results, lands on the exam)."""
    out = {}
    for key, spec in menu.PAGES.items():  # the URL path of a page is its key
        page = outside_story if presenting and not spec.story else (spec.script or overview)
        out[key] = st.Page(page, title=spec.title, icon=spec.icon, url_path=key, default=key == home,
                           visibility="visible" if key in visible else "hidden")
    return out


def outside_story() -> None:
    """Presentation mode shows the story pages only; a link to another page offers them instead."""
    st.title("Presentation mode")
    st.info("Presentation mode shows the story pages only. Turn it off in the sidebar to see this page.")
    row = st.container(horizontal=True)
    features = store_handle.dataset_features()
    for key in menu.STORY:  # the story pages the menu shows for this dataset
        if features is None or not menu.not_applicable(key, features):
            row.page_link(navigate.page(key), label=menu.PAGES[key].title, icon=menu.PAGES[key].icon)


def navigation():
    """The menu: built before anything can stop the script, so a deep link never falls back to
    Streamlit's automatic list of the pages/ folder (which would show helper modules as pages).

    Presentation mode (the toggle, or ``present=1`` in a shared link) shows only the story pages;
    pages that do not apply to the dataset (each page's rule in `pages.ui.menu.PAGES`) are hidden from the menu; a link to
    one opens the line that says why (`main`).

    The project's config keeps Streamlit's own sidebar list hidden (``client.showSidebarNavigation``),
    because a fresh server shows the pages/ folder's file names there until this menu exists; the
    option is turned on here, so that from now on the sidebar shows this menu and only this one.
    """
    st.set_option("client.showSidebarNavigation", True)
    features = store_handle.dataset_features()
    presenting = query.requested_presentation()
    visible = {k for k in menu.PAGES if (features is None or not menu.not_applicable(k, features))
               and (not presenting or k in menu.STORY) and signin.may_open(k)}
    home = "overview" if signin.may_open("overview") or not signin.may_open("exam") else "exam"
    current = pages(visible, presenting, home)
    navigate.register_pages(current)
    asked = navigate.requested_page_name()
    paths = {p.url_path for p in current.values()}  # the home page's is "" (the root)
    unknown = [unknown_page(asked)] if asked and asked not in paths and "/" not in asked else []
    who = signin.identity()
    if signin.signin_enabled() and (who is None or not who.roles):  # the sign-in gate shows nothing else
        return st.navigation(list(current.values()) + unknown, position="hidden")  # an unknown path: no dialog
    if store_handle.first_build_pending():  # no menu until the demo is built: then the one for its dataset, unchanged
        return st.navigation(list(current.values()) + unknown, position="hidden")
    if presenting:
        return st.navigation([current[k] for k in menu.STORY] + [current[k] for k in menu.PAGES if k not in menu.STORY]
                             + unknown)
    sections = {group: [current[k] for k in keys] for group, keys in menu.MENU.items()}
    if unknown:
        sections[menu.RESULTS] = [*sections[menu.RESULTS], *unknown]
    return st.navigation(sections)


def unknown_page(asked: str):
    """A hidden page at a path no page has: it says so in one line on the home page (instead of
    Streamlit's "Page not found" dialog) and opens the home page."""
    def go_home() -> None:
        home = next(key for key in ("overview", "exam") if navigate.page(key).url_path == "")
        if asked != home:  # the home page's own name is a path to it, not a mistake
            notices.link_notice(links.shown_instead("page", asked, f"the {menu.PAGES[home].title}"), page_key=home)
        st.switch_page(navigate.page(home))

    return st.Page(go_home, title="Page not found", url_path=asked, visibility="hidden")


def main() -> None:
    use_python_strings()  # text columns as Python strings: most page changes are many small steps (pandas_mode)
    gcpause.settle_imports()  # the code's objects out of the cycle collector's full passes (see gcpause)
    st.set_page_config(page_title="EduArt Studio", page_icon=icon.page_icon(), layout="wide")  # a local icon
    nav = navigation()
    signin.warn_if_exposed()
    if not signin.gate():  # team mode: sign in first; a person without a role sees one line
        return
    if first_start.ensure_store():  # built on this first start: draw the menu of the demo's dataset
        st.rerun()
    recover_at_start(store_handle.store_path())  # explicit step: store runs left waiting for ingest (once per process)
    first_start.import_notices()  # an import left unfinished: one line on every page
    first_start.warm_up()
    signin.who_line()
    sidebar.sidebar()
    navigate.follow_page_request()
    key = nav.url_path if nav.url_path in menu.PAGES else None
    notices.link_notices(navigate.page_key(nav))
    if not signin.may_open(key):  # a link to a page this person's roles do not reach
        st.title(nav.title)
        st.info("Your roles do not include this page.")
        st.page_link(navigate.page("overview"), label="Overview", icon=":material/home:")
        return
    features = store_handle.dataset_features()
    why = menu.not_applicable(key, features) if key and features else None
    if why:  # a link to a page the menu hides for this dataset: say why instead of drawing an empty page
        st.title(nav.title)
        st.info(plain(why))
        st.page_link(navigate.page("overview"), label="Overview", icon=":material/home:")
        return
    with navigate.inside_app():
        nav.run()


@asynccontextmanager
async def server_started(_app) -> AsyncIterator[None]:
    """Once, as the server starts: the exposure warning in the terminal (module docstring)."""
    signin.warn_if_exposed()
    yield


def serve_our_menu_only() -> None:
    """From the server's start on, every session runs this file itself, never the pages/ folder's menu.

    Why: Streamlit decides once per process whether to serve the ``pages`` folder next to the main
    script as a menu of file names (its pre-``st.navigation`` mode), and leaves that mode only when
    a script calls ``st.navigation``, which flips ``PagesManager.uses_pages_directory`` to False.
    So the very first request of a fresh server still ran in the folder mode: a link to a path no
    file has (``/nosuchpage``) got Streamlit's "Page not found" dialog before this menu could answer,
    and the file names were sent as a (hidden) menu. The app takes the same switch that
    ``st.navigation`` takes, as the server starts, so the first request is answered as every later one.
    Should a Streamlit release drop the attribute, `pages.navigate.through_app` still hands a page file
    that runs alone to this script (the state before this switch).
    """
    from streamlit.runtime.pages_manager import PagesManager

    if hasattr(PagesManager, "uses_pages_directory"):
        PagesManager.uses_pages_directory = False


if __name__ == "__main__":  # a browser session: Streamlit runs this file as the page script
    main()
else:  # `streamlit run app.py` imports this file once and serves it through this App
    serve_our_menu_only()
    app = st.App(__file__, lifespan=server_started)
