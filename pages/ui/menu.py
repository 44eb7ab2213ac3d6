"""The app's pages: one entry each, in menu order (app.py builds the navigation from it).

Why a module of its own: app.py is a script (importing it runs the app), yet the tests, the
panels (`eduart_core.panels`, which name the page that draws them) and the docs test read the
list of pages. Everything that makes a page what it is sits in its one entry: URL path, file,
title, icon, menu group, story page or work, the roles that open it, and the rule that says when
it does not apply to a dataset. An explicit list: no file-system probing. The Overview is the one
page drawn by a function in app.py (``script`` None; its file is only an address).
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from eduart_core import views
from eduart_core.team import ADJUDICATOR, ADMIN, RESEARCHER, RESPONDENT, REVIEWER, ROLES, STORY_ROLES

RESULTS, ITEMS, WORK = "Results", "Items and statistics", "Work"

#: Who opens the pages that work on items and answers (inspector, review, grading) ...
_CURATORS = frozenset({REVIEWER, ADJUDICATOR, RESEARCHER, ADMIN})
#: ... and the statistics pages (psychometrics, scoring profiles).
_ANALYSTS = frozenset({ADJUDICATOR, RESEARCHER, ADMIN})


@dataclass(frozen=True)
class PageSpec:
    """One page: its key (the URL path), script, title, icon, menu group, whether it is a story page,
    the roles that open it and the rule saying when it does not apply to a dataset."""

    key: str
    #: the file Streamlit runs (None: drawn by app.py itself)
    script: str | None
    title: str
    icon: str
    group: str
    #: shown in presentation mode, in menu order
    story: bool = False
    #: who may open it (in team mode); the story pages are open to everyone but a respondent
    roles: frozenset[str] = STORY_ROLES
    #: when it does not apply to a dataset (a `views` page rule); None: it always applies
    rule: Callable | None = None
    #: the page's file in pages/ when it has no script of its own (the Overview's address)
    address: str | None = None

    @property
    def file(self) -> str:
        """The page's file in pages/: its script, or the address file of a page app.py draws."""
        return self.script or self.address or ""

    def opens_for(self, roles: Iterable[str]) -> bool:
        """Whether a person holding ``roles`` may open this page (nobody without a role)."""
        return bool(self.roles & set(roles))

    def not_applicable(self, features) -> str | None:
        """Why this page does not apply to the dataset of ``features`` (a `views.StudyFeatures`), or None."""
        return views.why_not(self.rule, features)


PAGES: dict[str, PageSpec] = {p.key: p for p in (
    PageSpec("overview", None, "Overview", ":material/home:", RESULTS, story=True, address="pages/01_overview.py"),
    PageSpec("tasks", "pages/02_tasks.py", "Tasks and dimensions", ":material/view_column:", RESULTS, story=True,
             rule=views.tasks_rule),
    PageSpec("formats", "pages/03_formats.py", "Formats", ":material/grid_on:", RESULTS, story=True,
             rule=views.formats_rule),
    PageSpec("motivation", "pages/04_motivation.py", "Motivation", ":material/chat:", RESULTS, story=True,
             rule=views.motivation_rule),
    PageSpec("images", "pages/05_images.py", "Images", ":material/image:", RESULTS, story=True,
             rule=views.images_rule),
    PageSpec("robustness", "pages/06_robustness.py", "Robustness", ":material/rotate_right:", RESULTS,
             rule=views.robustness_rule),
    PageSpec("inspector", "pages/07_inspector.py", "Item inspector", ":material/search:", ITEMS, roles=_CURATORS,
             rule=views.item_level_rule),
    PageSpec("psychometrics", "pages/08_psychometrics.py", "Psychometrics", ":material/scatter_plot:", ITEMS,
             roles=_ANALYSTS, rule=views.item_level_rule),
    PageSpec("profiles", "pages/09_profiles.py", "Scoring profiles", ":material/balance:", ITEMS, roles=_ANALYSTS,
             rule=views.item_level_rule),
    PageSpec("runs", "pages/10_runs.py", "Runs", ":material/rocket_launch:", WORK,
             roles=frozenset({RESEARCHER, ADMIN})),
    PageSpec("review", "pages/11_review.py", "Review studio", ":material/rate_review:", WORK, roles=_CURATORS),
    PageSpec("grading", "pages/12_grading.py", "Grade answers", ":material/grading:", WORK, roles=_CURATORS),
    PageSpec("exam", "pages/13_exam.py", "Sit the exam", ":material/edit_note:", WORK,
             roles=frozenset({RESPONDENT, RESEARCHER, ADMIN})),
    PageSpec("team", "pages/14_team.py", "Team", ":material/group:", WORK, roles=frozenset(ROLES)),
)}
#: The menu: its groups, each with its pages in order.
MENU: dict[str, tuple[str, ...]] = {group: tuple(k for k, p in PAGES.items() if p.group == group)
                                    for group in (RESULTS, ITEMS, WORK)}
#: The story pages of presentation mode, in order.
STORY: tuple[str, ...] = tuple(k for k, p in PAGES.items() if p.story)


def may_open(roles: Iterable[str], key: str | None) -> bool:
    """Whether ``roles`` open the page ``key``; a key no page has is read as a story page."""
    spec = PAGES.get(key or "")
    return spec.opens_for(roles) if spec else bool(STORY_ROLES & set(roles))


def not_applicable(key: str | None, features) -> str | None:
    """Why the page ``key`` does not apply to the dataset of ``features``, or None (also for no page)."""
    spec = PAGES.get(key or "")
    return spec.not_applicable(features) if spec else None
