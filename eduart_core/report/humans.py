"""The report's "Models and people" section: the Overview's comparison, as HTML.

The same views and figure functions as the Overview (`views.human_gap`, `views.human_accuracy`, the
joint ranking and Wright map), so the report says the numbers and sentences the page says. Every
string from data is escaped (`html.escape` here, `exports.inert_figure` in the figures).
"""
from __future__ import annotations

import html
from collections.abc import Callable

from .. import views
from ..analysis import humans as people_analysis
from ..charts import humans as people_charts
from ..errors import UserError
from ..selection import Selection

METHODS = [
    ("Models and people", "People (respondents of the exam page, imported exam results, or the demo's simulated "
     "panel) are stored under pseudonyms and compared with the models in the answer-only condition, the one they sit. "
     "A model's accuracy per format and language is its mean item score with the Wilson interval; a group's is the "
     "mean over its members' answers with a Wilson interval at the effective sample size of people and items as "
     "crossed samples (cluster-robust design effect, at least 1; it errs wide). Each gap is the highest-scoring model of "
     "the scope (highest mean item score; not an order the tests carry, see the tie groups) minus the group's median person (the lower middle one for an even count) or "
     f"its best person, on the items both answered, with a {people_analysis.GAP_INTERVAL_WORDS}. One ability scale: "
     "the default IRT model fitted to models and people together (each model once). Outside this section people "
     "are left out of every statistic unless the report is built with <code>--humans</code>."),
]

PERCENT = ("best_model_mean", "median_person_mean", "gap_median", "gap_median_ci_low", "gap_median_ci_high",
           "best_person_mean", "gap_best", "gap_best_ci_low", "gap_best_ci_high")


def people_section(src: views.Source, sel: Selection, parts: list[str], figure: Callable[[object, str, str], None],
                   table: Callable[..., str]) -> None:
    """Append the section to the report's ``parts`` (nothing when the dataset has no people);
    ``figure`` appends a figure to the same parts."""
    gap = views.human_gap(src, sel)
    if gap.empty:
        return
    accuracy = views.human_accuracy(src, sel)
    parts.append("<h2>Models and people</h2>")
    parts.append(f"<p><b>{html.escape(gap.attrs['headline'])}</b></p>")
    if gap.attrs.get("simulated"):
        parts.append("<p class='banner sim'>Simulated people: the demo's panel of students and experts is generated "
                     "by an item-response model, not a real class.</p>")
    parts.append("<ul>" + "".join(f"<li>{html.escape(s)}</li>" for s in gap.attrs["sentences"]) + "</ul>")
    figure(people_charts.figure_models_and_people(accuracy), "fig-models-and-people",
           f"Mean item score per format (answer-only condition): models as diamonds "
           f"({people_analysis.MODEL_INTERVAL_WORDS}), groups of people as dots "
           f"({people_analysis.GROUP_INTERVAL_WORDS}); n = {gap.attrs['n_people']} people, "
           f"{gap.attrs['n_items']} items.")
    overall = gap[gap["scope"] == people_analysis.ALL]
    parts.append(table(overall.drop(columns=["scope", "type", "language"]), percent=PERCENT))
    try:
        ranking, wright = views.human_ranking(src, sel), views.human_wright_map(src, sel)
    except UserError as exc:
        parts.append(f"<p class='na'>No joint ability scale: {html.escape(str(exc))}</p>")
        return
    figure(people_charts.figure_joint_ranking(ranking), "fig-human-ranking",
           f"Models and people on one ability scale ({ranking.attrs.get('irt_model', '')}, "
           f"{ranking.attrs.get('n_examinees', len(ranking))} examinees): EAP abilities with 95% intervals.")
    figure(people_charts.figure_joint_wright_map(wright), "fig-human-wright-map",
           "Wright map of the same fit: models and people by group, item difficulties per format.")


__all__ = ["METHODS", "people_section"]
