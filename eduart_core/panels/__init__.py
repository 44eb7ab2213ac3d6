"""Panels: the story figures, each one record drawn alike by the pages, the report and `show --caption`.

A panel names its view, its figure builder and its words (caption and export context, built from
the selection and the view's frame). `PANELS` is the one listing; a page draws a panel with
``panels.draw(name, src, sel, **options)`` (and ``pages.common.panel``), the report the same way,
and ``python -m eduart_core show VIEW --caption`` prints the caption of the panel that draws VIEW.
Interactive pages (inspector, review, runs) keep their own figures: those are tools, not a story.
To add a panel: its words and figure functions in the module of its page, one `Panel` line below.
"""
from __future__ import annotations

from typing import Any

from .. import views
from ..errors import UserError
from ..selection import Selection
from . import judges, psychometrics, results, stability
from ._base import Drawn, Panel, Shown, Words, context, data_label, scoring_label, simulated_selection

_PANELS = (
    Panel("leaderboard", "leaderboard", "overview", "Leaderboard", results.leaderboard_words,
          results.leaderboard_figure, load=results._load_leaderboard),
    Panel("format_heatmap", "type_scores", "formats", "Scores by format", results.heatmap_words,
          results.heatmap_figure, load=results._load_heatmap),
    Panel("format_spread", "format_spread", "formats", "Best minus worst format", results.spread_words,
          results.spread_figure, load=results._load_spread),
    Panel("mcq_language", "mcq_by_language", "formats", "Multiple choice by language", results.language_words,
          results.language_figure),
    Panel("forest", "regression", "formats", "What predicts a correct answer?", results.forest_words,
          results.forest_figure),
    Panel("motivation_dumbbell", "motivation", "motivation", "Asking for a justification", results.motivation_words,
          results.motivation_figure, figure_options={"measure": "macro"},
          hint="Click a model to list the items that changed most."),
    Panel("motivation_heatmap", "motivation_by_model_type", "motivation", "Motivation by format",
          results.motivation_heatmap_words, results.motivation_heatmap_figure),
    Panel("image_dumbbell", "image_effect", "images", "Items with and without an image", results.image_words,
          results.image_figure),
    Panel("profile_impact", "profile_impact", "profiles", "Paper vs strict scoring", results.profile_words,
          results.profile_figure),
    Panel("psychometrics", "item_statistics", "psychometrics", "Item difficulty and discrimination",
          psychometrics.difficulty_words, psychometrics.difficulty_figure, load=psychometrics._load,
          hint="Click a dot to open the item."),
    Panel("judge_corrected", "judge_corrected", "profiles", "Judge-corrected scores", judges.corrected_words,
          judges.corrected_figure),
    Panel("stability", "stability", "runs", "Stability over repeats", stability.stability_words,
          stability.stability_figure, load=stability._load_stability),
    Panel("item_stability", "item_stability", "runs", "Items that flip between repeats", stability.item_stability_words,
          stability.item_stability_figure),
)
PANELS: dict[str, Panel] = {panel.name: panel for panel in _PANELS}


def panel(name: str) -> Panel:
    """The panel registered under ``name``; a one-line error naming the known ones."""
    if name not in PANELS:
        raise UserError(f"unknown panel {name!r}; panels: {', '.join(PANELS)}")
    return PANELS[name]


def for_view(view: str) -> Panel:
    """The panel that draws ``view`` (`show VIEW --caption`); a one-line error when no panel draws it."""
    found = [p for p in PANELS.values() if p.view == view]
    if not found:
        drawn = ", ".join(p.view for p in PANELS.values())
        raise UserError(f"view {view!r} is not drawn as a story figure, so it has no caption (views with one: {drawn})")
    return found[0]


def draw(name: str, src: views.Source, sel: Selection, **options: Any) -> Drawn:
    """One panel with its figure, caption and export context for a selection."""
    return panel(name).draw(src, sel, **options)


__all__ = ["PANELS", "Drawn", "Panel", "Shown", "Words", "context", "data_label", "draw", "for_view", "panel",
           "scoring_label", "simulated_selection"]
