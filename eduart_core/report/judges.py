"""The report's Judges section and its warning: judge profiles, their calibration, severities.

The same views and figures as the Scoring profiles page. The warning banner comes from
`views.profile_warning`, the one place that decides when numbers under a judge profile need one.
"""
from __future__ import annotations

import html
from collections.abc import Callable

from .. import views
from ..charts import judges as charts_judges
from ..selection import Selection

JUDGE_METHODS = [
    ("Judge profiles", "A model judge marks each judge criterion of a rubric on every answer the rubric applies to "
     "(one request per criterion, the scoring options listed in an order drawn per request and recorded); the "
     "rubric's checks (accepted names, a date within N years, a required term) are computed. An item's score is its "
     "points over the maximum of the criteria that apply. With repeated requests the mark is their mean. A profile "
     "<code>judge:JUDGE/RUBRIC</code> is versioned by the judge's model id, the prompt hash, the rubric hash and the "
     "temperature."),
    ("Judge calibration", "Against blind human grades: the graders' own agreement first (Krippendorff's alpha, "
     "ordinal, with a bootstrap 95% interval over answers); where they do not agree nothing is said about the judge. "
     "Otherwise the judge's marks against the adjudicated human marks (the graders' common mark, else the "
     "adjudicator's): alpha and quadratic-weighted kappa with bootstrap intervals; each judge's severity from a "
     "many-facet Rasch model (PyPI mirt) of the graders and that judge, relative to the graders' mean; run-to-run SD "
     "over repeats; the share of verdicts that change with the options reversed (position probe) and the mean "
     "change when the answer is padded (verbosity probe). A judge passes where alpha and |severity| meet the "
     "dataset's gate, recorded with every row."),
]


def warning_banner(src: views.Source, sel: Selection) -> str:
    """The report's banner for numbers under an uncalibrated judge profile ('' otherwise)."""
    warning = views.profile_warning(src, sel)
    return f"<p class='banner warn'>{html.escape(warning)}</p>" if warning else ""


def judges_section(src: views.Source, sel: Selection, figure: Callable[..., None], table: Callable[..., str],
                   number: int) -> list[str]:
    """HTML parts of the Judges section (an explanation when no judge has scored the dataset)."""
    parts = [f"<h2>{number}. Judges</h2>"]
    if not any(p.is_judge for p in views.profile_choices(src, sel.dataset)):
        parts.append("<p class='na'>No model judge has scored this dataset.</p>")
        return parts
    profiles = views.judge_profiles(src, sel)
    try:
        calibration = views.judge_calibration(src, sel)
        severity = views.judge_severity(src, sel)
    except views.EmptySelection as exc:
        parts.append(table(profiles[["profile", "version", "n_scored", "passes", "gate"]]))
        parts.append(f"<p class='na'>{html.escape(str(exc))}</p>")
        return parts
    parts.append(table(profiles[["profile", "judge_name", "version", "n_scored", "simulated", "passes", "gate"]]))
    gate = calibration.iloc[0]
    figure(charts_judges.figure_judge_calibration(calibration), "fig-judge-calibration",
           f"Judge calibration. Judge vs adjudicated human marks (filled) and the graders with each other (open), "
           f"Krippendorff's alpha with bootstrap 95% intervals; gate alpha >= {gate['min_alpha']:.2f} and the severity's "
           f"95% interval within ±{gate['max_severity']:.2f} logit; {int(calibration['passes'].sum())} of "
           f"{len(calibration)} judges pass.")
    parts.append(table(calibration[["judge", "n", "human_alpha", "alpha", "alpha_low", "alpha_high", "kappa",
                                    "severity", "severity_low", "severity_high", "run_sd", "position_changed",
                                    "verbosity_shift", "passes", "reason"]]))
    figure(charts_judges.figure_judge_severity(severity, max_severity=float(gate["max_severity"])),
           "fig-judge-severity",
           "Severity of every grader and judge (logit, many-facet Rasch, relative to the graders' mean, 95% "
           "intervals); the grey band is the gate: a judge passes only when its whole interval lies inside it.")
    return parts
