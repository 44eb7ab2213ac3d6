"""The app's pages: one entry each, in menu order (app.py builds the navigation from it).

Why a module of its own: app.py is a script (importing it runs the app), yet the tests, the
panels (`eduart_core.panels`, which name the page that draws them) and the docs test read the
list of pages. An explicit list: no file-system probing. The Overview is the one page drawn by a
function in app.py (``script`` None).
"""
from __future__ import annotations

from dataclasses import dataclass

RESULTS, ITEMS, WORK = "Results", "Items and statistics", "Work"


@dataclass(frozen=True)
class PageSpec:
    """One page: its key (URL path), script, title, icon, menu group, and whether it is a story page."""

    key: str
    script: str | None
    title: str
    icon: str
    group: str
    #: shown in presentation mode, in menu order
    story: bool = False


PAGES: dict[str, PageSpec] = {p.key: p for p in (
    PageSpec("overview", None, "Overview", ":material/home:", RESULTS, story=True),
    PageSpec("tasks", "pages/9_tasks.py", "Tasks and dimensions", ":material/view_column:", RESULTS, story=True),
    PageSpec("formats", "pages/3_formats.py", "Formats", ":material/grid_on:", RESULTS, story=True),
    PageSpec("motivation", "pages/4_motivation.py", "Motivation", ":material/chat:", RESULTS, story=True),
    PageSpec("images", "pages/5_images.py", "Images", ":material/image:", RESULTS, story=True),
    PageSpec("robustness", "pages/13_robustness.py", "Robustness", ":material/rotate_right:", RESULTS),
    PageSpec("inspector", "pages/1_inspector.py", "Item inspector", ":material/search:", ITEMS),
    PageSpec("psychometrics", "pages/2_psychometrics.py", "Psychometrics", ":material/scatter_plot:", ITEMS),
    PageSpec("profiles", "pages/6_profiles.py", "Scoring profiles", ":material/balance:", ITEMS),
    PageSpec("runs", "pages/7_runs.py", "Runs", ":material/rocket_launch:", WORK),
    PageSpec("review", "pages/8_review.py", "Review studio", ":material/rate_review:", WORK),
    PageSpec("grading", "pages/12_grading.py", "Grade answers", ":material/grading:", WORK),
    PageSpec("exam", "pages/11_exam.py", "Sit the exam", ":material/edit_note:", WORK),
    PageSpec("team", "pages/10_team.py", "Team", ":material/group:", WORK),
)}
#: The menu: its groups, each with its pages in order.
MENU: dict[str, tuple[str, ...]] = {group: tuple(k for k, p in PAGES.items() if p.group == group)
                                    for group in (RESULTS, ITEMS, WORK)}
#: The story pages of presentation mode, in order.
STORY: tuple[str, ...] = tuple(k for k, p in PAGES.items() if p.story)
