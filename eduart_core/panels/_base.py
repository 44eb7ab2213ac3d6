"""A panel: one story figure as a record (its view, figure builder, caption and export context).

Why: the Overview, Formats, Motivation, Images, Scoring profiles and Psychometrics pages, the
HTML report and ``show VIEW --caption`` draw the same figures. Writing each caption once, from
the selection and the view's frame, keeps a number, its test and its n worded alike wherever
the figure appears. A panel loads its view (and any frame it needs besides: baseline marks,
the order of the models, the findings that give the presentation headline) through `views`,
so a panel holds no SQL and no statistics.
"""
from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from .. import views
from ..errors import UserError
from ..exports import ChartContext
from ..selection import Selection


@dataclass(frozen=True)
class Shown:
    """What a panel's builder gets: the selection, the view's frame, what else it loaded, the options."""

    src: views.Source
    sel: Selection
    frame: pd.DataFrame
    options: Mapping[str, Any]
    extra: Mapping[str, Any]

    @property
    def aggregate_only(self) -> bool:
        return views.dataset_flags(self.src, self.sel.dataset).aggregate_only

    @property
    def scoring(self) -> str:
        """'profile strict' / 'profile paper', or 'published scores' for aggregate-only data."""
        return scoring_label(self.src, self.sel)

    @property
    def families(self) -> dict[str, str]:
        return views.family_map(self.src)


@dataclass(frozen=True)
class Words:
    """A panel's text: the caption under the figure and the export context's parts."""

    caption: str
    statistic: str
    test: str | None = None
    n: str | None = None
    #: the plain-language headline of presentation mode (a finding), None when there is none
    story: str | None = None


@dataclass(frozen=True)
class Drawn:
    """One panel drawn for one selection: what the page, the report and `show --caption` share."""

    panel: Panel
    frame: pd.DataFrame
    caption: str
    context: ChartContext
    story: str | None
    figure: go.Figure | None = None


Loader = Callable[[views.Source, Selection, pd.DataFrame, Mapping[str, Any]], Mapping[str, Any]]


def _nothing(src: views.Source, sel: Selection, frame: pd.DataFrame, options: Mapping[str, Any]) -> dict:
    return {}


@dataclass(frozen=True)
class Panel:
    """A story figure: the view it draws, how it is drawn and worded, where it appears."""

    #: chart key and file stem on the page ("format_heatmap")
    name: str
    #: the registered view (`views.VIEWS`) whose frame the figure draws
    view: str
    #: the page that draws it (`pages.ui.menu` key)
    page: str
    #: the export title (`exports.ChartContext.title`)
    title: str
    words: Callable[[Shown], Words]
    figure: Callable[[Shown], go.Figure]
    #: other frames the figure or the words need, loaded through views
    load: Loader = _nothing
    #: options of the figure itself (not of the view), with their defaults
    figure_options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    #: what a click on the figure does, appended to the caption on a page where the figure is clickable
    hint: str | None = None

    @property
    def summary(self) -> str:
        return (inspect.getdoc(self.words) or "").splitlines()[0]

    @property
    def view_options(self) -> dict[str, object]:
        return views.VIEWS[self.view].options

    @property
    def options(self) -> dict[str, object]:
        """Every option the panel takes: its view's and its figure's, with their defaults."""
        return {**self.view_options, **self.figure_options}

    def _shown(self, src: views.Source, sel: Selection, options: Mapping[str, Any]) -> Shown:
        unknown = sorted(set(options) - set(self.options))
        if unknown:
            allowed = ", ".join(self.options) or "none"
            raise UserError(f"panel {self.name!r} has no option {', '.join(unknown)} (options: {allowed})")
        view_options = {k: v for k, v in options.items() if k in self.view_options}
        frame = views.run_view(self.view, src, sel, **view_options)
        given = {**self.figure_options, **options}
        return Shown(src, sel, frame, MappingProxyType(given), MappingProxyType(dict(self.load(src, sel, frame, given))))

    def describe(self, src: views.Source, sel: Selection, **options: Any) -> Drawn:
        """The frame, caption and export context, without building the figure (`show --caption`)."""
        shown = self._shown(src, sel, options)
        return self._drawn(shown, None)

    def draw(self, src: views.Source, sel: Selection, **options: Any) -> Drawn:
        """The panel with its figure (pages and the report)."""
        shown = self._shown(src, sel, options)
        return self._drawn(shown, self.figure(shown))

    def _drawn(self, shown: Shown, figure: go.Figure | None) -> Drawn:
        words = self.words(shown)
        # a caption travels alone (copied into a slide): it says itself when simulated models answered
        caption = views.data_label(shown.src, shown.sel).finding_prefix() + words.caption
        return Drawn(self, shown.frame, caption, context(shown.src, shown.sel, self.title, words), words.story, figure)


def scoring_label(src: views.Source, sel: Selection) -> str:
    """'profile strict' / 'profile paper', or 'published scores' for aggregate-only data."""
    return "published scores" if views.dataset_flags(src, sel.dataset).aggregate_only else f"profile {sel.profile}"


def simulated_selection(src: views.Source, sel: Selection) -> bool:
    """True when the numbers come (partly) from simulated respondents (by each model's kind)."""
    return views.data_label(src, sel).any_simulated


def data_label(src: views.Source, sel: Selection) -> str | None:
    """The label an exported chart carries: the models' kinds (`labels.DataLabel.short`), or none."""
    return views.data_label(src, sel).short()


def context(src: views.Source, sel: Selection, title: str, words: Words) -> ChartContext:
    """The context an exported chart carries, with the selection's dataset, profile and condition."""
    aggregate = views.dataset_flags(src, sel.dataset).aggregate_only
    return ChartContext(title=title, statistic=words.statistic, test=words.test, n=words.n, dataset=sel.dataset,
                        profile="published scores" if aggregate else sel.profile, condition=sel.condition,
                        data_label=data_label(src, sel))
