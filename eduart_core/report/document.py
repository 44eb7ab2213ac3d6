"""A self-contained HTML report for stakeholders: one file, plotly.js inline, opens offline.

It tells the same story as the dashboard's presentation mode (overview, findings, formats,
motivation, images) with the same panels (`eduart_core.panels`: figure, caption and numbers), so
a number and its caption in the report are the ones on screen for the same dataset and profile. A methods section names
every test and definition used, so a reader never has to guess what a percentage means.

Every string that comes from data (model, dataset and item names, findings built from them) is
escaped, in tables, text and figures (``exports.inert_figure``), and plotly.js is embedded, so
opening the report loads nothing from outside the file because of its content. The file is
written atomically: a failure (a full disk) leaves no partial report.
"""
from __future__ import annotations

import base64
import html
import io
import logging
from datetime import UTC, datetime

import pandas as pd
import plotly.io as pio

from .. import columns, findings, panels, views
from ..analysis import ranking
from ..analysis.intervals import WILSON_WORDS, Z95
from ..analysis.regression import not_estimable_text
from ..canary import NOTE, store_canary
from ..errors import UserError
from ..exports import inert_figure
from ..extraction.stats import AGREEMENT_CODING
from ..fileio import atomic_write, write_error
from ..selection import Selection
from ..store import Store
from ..vocab import (
    CONDITIONS,
    DEFAULT_CONDITION,
    DEFAULT_DATASET,
    DEFAULT_PROFILE,
    EXAMINEES_MODELS_CONDITIONS,
    format_label,
    ordered_formats,
)
from .humans import METHODS as PEOPLE_METHODS
from .humans import people_section
from .judges import JUDGE_METHODS, judges_section, warning_banner
from .studies import STUDY_METHODS, build_study_report, study_section

logger = logging.getLogger(__name__)
#: Width of the image thumbnails of the failure examples (pixels).
THUMBNAIL_PX = 220

#: The report's figures, in order: panel name -> the id of its <div> (Figure 1 is the first).
FIGURES = {"psychometrics": "fig-difficulty-discrimination", "format_heatmap": "fig-format-heatmap",
           "motivation_dumbbell": "fig-motivation", "image_dumbbell": "fig-images"}
FIGURE_IDS = tuple(FIGURES.values())
#: The item statistics of the report: the setting of the published Tables 6-7 (model x condition
#: pairs as examinees, corrected total).
REPORT_ITEM_SETTING = {"examinees": EXAMINEES_MODELS_CONDITIONS, "corrected": True}

METHODS = [
    ("Item score", "Each answer is scored in [0, 1] under the chosen profile: <b>strict</b> (corrected rules, the "
     "default) or <b>paper</b> (the published scorer, reproduced exactly, quirks included). An answer counts as "
     "<i>correct</i> when its score is at least 0.5."),
    ("Format mean and macro average", "A model's format mean is the mean item score over the items of that format. "
     "The <b>macro average</b> is the unweighted mean of the seven format means; the <b>micro average</b> is the "
     "mean over all items pooled."),
    ("Wilson interval", "95% confidence intervals on a format mean (and on multiple-choice accuracy) use the Wilson "
     f"score interval with z = {Z95}, p = the mean item score and n = the number of items, as in the publication "
     "(one function computes every Wilson interval, also the ones the published reference lacks)."),
    ("Difficulty p", "Classical test theory: the mean item score of an item over the examinees (the proportion "
     "right when scores are 0/1). Categories: very easy p >= .90, easy .70-.90, medium .30-.70, hard .10-.30, very "
     "hard < .10. Counts of examinees who got an item <i>right</i> mean full credit (score = 1), over the same "
     "examinees as p."),
    ("Discrimination r_pb", "Pearson correlation between the item's scores and each examinee's mean over the other "
     "items (corrected) or over all items (uncorrected). Good >= .30, fair .10-.30, poor < .10. Items every "
     "examinee answers the same way have no r_pb (non-estimable). The publication used two settings: Tables 6-7 "
     "with model x condition pairs as examinees and the corrected total, Figure 1 with the models in the default "
     "condition and the uncorrected total; this report uses the Tables 6-7 setting."),
    ("Reliability", "KR-20 / Cronbach's alpha of the test over the examinees, with Feldt's 95% interval."),
    ("Item response models", "Abilities on one logit scale with one examinee per model (its answers in the "
     "report's condition: a model's two conditions are not independent examinees), by "
     "marginal maximum likelihood (PyPI mirt). The <b>partial credit model</b> (PCM) reads each format's score "
     "levels (blanks, statements or errors right; Rasch items for the formats judged as a whole); the "
     "<b>0.5 rule</b> (Rasch) reads every answer as right (score >= 0.5) or wrong. Abilities are EAP estimates "
     "with their posterior SDs as standard errors. The SE gain compares the two on the same examinees, also "
     "relative to each fit's ability SD (the two logit scales differ)."),
    ("Baselines", "Baseline models (such as the offline chance model) are references, not examinees: they are drawn "
     "as reference marks and left out of rankings, findings, item statistics, the regression and the motivation "
     "tests, unless the report is built with <code>--baselines</code>."),
    ("Ranking, intervals and tie groups", "Every leaderboard row carries its macro average's 95% interval: the "
     "cluster-robust variance of the macro (each item adds its deviation from its format mean, divided by the "
     "format's items and the number of formats; items showing one image form one cluster; small-sample factor "
     "G/(G - F)), t interval with G - F degrees of freedom (G clusters, F formats). " + ranking.REPEAT_WORDS.capitalize()
     + ". Every pair of models is compared on the items every model answered with a paired t test of the macro "
     "difference (the covariance of the cluster totals gives every pair's variance), Holm-corrected across all pairs "
     "(family-wise 5%). Possible ranks: best = 1 + models significantly above, worst = models - models "
     "significantly below. Tie groups: the highest model not yet grouped opens a group with every ungrouped model "
     "it is not separated from; a model is said to lead only when its first group holds it alone. Published "
     "aggregates: interval from the per-format binomial variances, no tests (no item answers). References: Miller "
     "(2024), Adding Error Bars to Evals; Holm (1979)."),
    ("Format versus model", "On the grid of model x format means, the sum of squares around the grand mean splits "
     "into a format part, a model part and a model-specific rest; the finding reports the shares (descriptive, one "
     "mean per cell)."),
    ("Motivation effect", "Every difference is motivation minus default on items answered in both conditions. "
     "Each model's change is tested with a Wilcoxon signed-rank test on the non-zero per-item differences (for "
     "the published aggregates: the published paired t-test on the pooled per-item scores), Holm-adjusted across "
     "models. The finding counts the changes with a Holm-corrected p < .05 and calls the rest changes within "
     "noise; the chart marks exactly those (* and colour; grey within noise). The paired t-test of the micro "
     "difference and McNemar's test on binarised scores are in the tables, uncorrected."),
    ("Regression", "Logistic regression correct ~ format + has_image + language + model with item-clustered "
     "standard errors. Each odds ratio compares with a reference level, named with the table: by default the "
     "published references (single-answer multiple choice, no image, English, Gemini 3.1 Flash Lite Preview) where "
     "the data have them; otherwise the first format in published order, items without an image, the first "
     "language alphabetically, and the median-ability model (the model whose share of correct answers is the "
     "median; the lower middle one for an even count). The reference model has no row of its own."),
    ("Image effect", "Raw: mean score on items without vs with an image per model (the two subsets differ in format "
     "and language). Adjusted: the has_image odds ratio of the regression above."),
    ("Reviewer agreement", "For extracted items reviewed by two or more people. " + AGREEMENT_CODING
     + " Percent: every reviewer made the same choice; value percent: every reviewer chose the same final value. "
     "Cohen's kappa (two reviewers) and Fleiss' kappa (statsmodels), Krippendorff's alpha for nominal data (the "
     "krippendorff package) with a percentile interval from 1,000 bootstrap resamples of the fields."),
    ("Reviewed score overrides", "A researcher may re-score one response by hand, with a reason; the computed score "
     "is kept, overrides are append-only and apply while the gold version they were made on is current."),
    ("Simulated and reference data", "Simulated respondents are generated by an item-response model and labelled "
     "as such; the published reference dataset holds only the per-format means from the EduArt publication."),
]


STYLE = """
body{font-family:Arial,Helvetica,sans-serif;max-width:1100px;margin:2rem auto;padding:0 1rem;color:#222;line-height:1.45}
h1{font-size:1.9rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.meta{color:#555}.banner{padding:.6rem .8rem;border-radius:6px}.sim{background:#fff4d6}.ref{background:#e6f0ff}.warn{background:#fde2dd;font-weight:600}
.tbl{border-collapse:collapse;font-size:.9rem;margin:.6rem 0}.tbl td,.tbl th{padding:.25rem .6rem;border-bottom:1px solid #eee;text-align:right}
.tbl td:nth-child(-n+2),.tbl th:nth-child(-n+2){text-align:left}figcaption{color:#444;font-size:.92rem}
.numbers{display:flex;gap:2rem;list-style:none;padding:0;font-size:1.1rem}.na{color:#777;font-style:italic}
dt{font-weight:bold;margin-top:.6rem}.example{margin:1rem 0 1.6rem 0;overflow:auto}
.thumb{float:right;margin:0 0 .5rem 1rem;border:1px solid #ddd;max-width:220px}.stem{white-space:pre-wrap}
.ex td,.ex th{text-align:left;vertical-align:top}.ex .why{color:#444;font-size:.85rem}.ok{color:#1a7f37}.ko{color:#b42318}
.prov td{text-align:left}"""


def _document(title: str, parts: list[str]) -> str:
    """The self-contained HTML page around the report's parts."""
    return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>"
            + "\n".join(parts) + "</body></html>")


def _table(frame: pd.DataFrame, percent: tuple = (), view: str | None = None) -> str:
    """A table as the pages show it: the headers, decimals and names of `eduart_core.columns`."""
    shown = columns.table(frame, view=view, percent=percent).text()
    return shown.to_html(index=False, classes="tbl", border=0, na_rep="—", escape=True)


def _review_section(src: views.Source, sel: Selection) -> list[str]:
    """Reviewer agreement on the extraction rounds, and how many scores a person overrode."""
    out = []
    agreement = views.review_agreement(src, sel, by="round")
    rounds = agreement[(agreement["round"] != "all") & (agreement["units"] > 0)] if len(agreement) else agreement
    if len(rounds):
        out.append("<p>Agreement between independent reviewers of the extracted items, over every field two or "
                   f"more reviewers decided. {html.escape(AGREEMENT_CODING)} Percent: every reviewer made the same "
                   "choice; value percent: every reviewer chose the same final value; Krippendorff's alpha with a "
                   "bootstrap 95% interval.</p>")
        out.append(_table(rounds[["dataset", "round", "units", "reviewers", "percent", "value_percent", "cohen_kappa",
                                  "fleiss_kappa", "krippendorff_alpha", "alpha_ci_low", "alpha_ci_high"]],
                          percent=("percent", "value_percent")))
    else:
        out.append("<p class='na'>No extracted field has been decided by two or more reviewers yet, so there is "
                   "no reviewer agreement to report.</p>")
    overrides = views.score_overrides(src, sel)
    applied = overrides[overrides["applied"] & (overrides["profile"] == sel.profile)] if len(overrides) else overrides
    if len(applied):
        uses = ("every number in this report uses them" if sel.reviewed
                else "this report uses the computed scores instead (built with --no-overrides)")
        out.append(f"<p>{len(applied)} response score(s) of this dataset carry a reviewed override (profile "
                   f"{html.escape(sel.profile)}); {uses}.</p>")
    else:
        out.append(f"<p>No response score of this dataset was overridden by a reviewer (profile "
                   f"{html.escape(sel.profile)}).</p>")
    return out


def _thumbnail(path: str | None) -> str:
    """An <img> with the image scaled down and embedded (the report stays one offline file)."""
    if not path:
        return ""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im = im.convert("RGB")
            im.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX * 2))
            buffer = io.BytesIO()
            im.save(buffer, format="JPEG", quality=80)
    except (OSError, UnidentifiedImageError) as exc:
        logger.warning("report: image %s left out of the failure examples: %s", path, exc)
        return "<p class='na'>(image file missing)</p>"
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f"<img class='thumb' alt='item image' src='data:image/jpeg;base64,{data}'>"


def _gold(record: dict) -> str:
    """The answer key of a record in one line (every value escaped by the caller)."""
    parts = []
    for answer in record.get("answers") or []:
        if isinstance(answer, dict):
            if "error" in answer:
                parts.append(f"{answer.get('error')} → {answer.get('correct')}")
            else:
                value = answer.get("description") or answer.get("text") or ""
                parts.append(f"{answer.get('id', '')}: {value}".strip(": "))
        else:
            parts.append(str(answer))
    return "; ".join(parts) or "—"


def _failure_examples(src, sel: Selection) -> str:
    """The report's failure examples: per format, items that split the models, every answer
    (both conditions) marked right or wrong, and the model's justification. All text escaped."""
    try:
        examples = views.failure_examples(src, sel)
    except views.EmptySelection as exc:
        return f"<p class='na'>{html.escape(str(exc))}</p>"
    out = []
    for fmt in ordered_formats(examples["type"].unique()):
        out.append(f"<h3>{html.escape(format_label(fmt))}</h3>")
        of_format = examples[examples["type"] == fmt]
        for item_id in dict.fromkeys(of_format["item_id"]):
            rows = of_format[of_format["item_id"] == item_id]
            detail = views.item_detail(src, sel.dataset, item_id)
            record = detail.get("record") or {}
            first = rows.iloc[0]
            stem = " ".join(str(x) for x in (record.get("question_title"), record.get("instructions"),
                                             record.get("question_text")) if x)
            choices = "".join(f"<li>{html.escape(str(c.get('id')))}. {html.escape(str(c.get('text')))}</li>"
                              for c in record.get("choices") or [] if isinstance(c, dict) and c.get("text"))
            out.append("<div class='example'>" + _thumbnail(detail.get("_image_path"))
                       + f"<p><b>Item {html.escape(str(item_id))}</b> · {int(first['models_right'])} of "
                       f"{int(first['n_models'])} models right in condition {html.escape(sel.condition)}</p>"
                       + f"<p class='stem'>{html.escape(stem)}</p>"
                       + (f"<ul class='choices'>{choices}</ul>" if choices else "")
                       + f"<p>Answer key: <b>{html.escape(_gold(record))}</b></p>")
            head = "".join(f"<th>{html.escape(c)}</th>" for c in CONDITIONS)
            body = []
            for model, answers in rows.groupby("model", sort=True):
                cells = []
                for condition in CONDITIONS:
                    hit = answers[answers["condition"] == condition]
                    if hit.empty:
                        cells.append("<td>—</td>")
                        continue
                    a = hit.iloc[0]
                    right = a["correct"]
                    mark = ("" if right is None or pd.isna(right) else
                            "<span class='ok'>✓ right</span>" if bool(right) else "<span class='ko'>✗ wrong</span>")
                    cells.append(f"<td>{mark} {html.escape(str(a['answer']))}</td>")
                rationale = answers["rationale"].dropna()
                why = html.escape(str(rationale.iloc[0])) if len(rationale) else "—"
                body.append(f"<tr><td>{html.escape(str(model))}</td>{''.join(cells)}<td class='why'>{why}</td></tr>")
            out.append(f"<table class='tbl ex'><tr><th>model</th>{head}<th>justification (motivation)</th></tr>"
                       + "".join(body) + "</table></div>")
    return "".join(out)


def _ability_precision(src, sel: Selection) -> str:
    """The SE gain of the partial credit model over the 0.5 rule, in one sentence (or why there is none)."""
    try:
        comparison = views.irt_model_comparison(src, sel)  # one examinee per model, the selection's condition
    except UserError as exc:
        return f"<p class='na'>Ability precision: not available ({html.escape(str(exc))}).</p>"
    return f"<p><b>Ability precision.</b> {html.escape(comparison.attrs['sentence'])}</p>"


def _provenance(src, sel: Selection) -> str:
    facts = views.provenance(src, sel)
    rows = "".join(f"<tr><td>{html.escape(str(r.part))}</td><td>{html.escape(str(r.name))}</td>"
                   f"<td>{html.escape(str(r.value))}</td></tr>" for r in facts.itertuples())
    return f"<table class='tbl prov'><tr><th>part</th><th>name</th><th>value</th></tr>{rows}</table>"


def _figure(fig, div_id: str, first: bool) -> str:
    return pio.to_html(inert_figure(fig), include_plotlyjs=True if first else False, include_mathjax=False,
                       full_html=False, div_id=div_id, config={"displaylogo": False, "responsive": True})


_AGGREGATE_BANNER = ("<p class='banner ref'>Published reference (aggregate only): item-level figures are not "
                     "available for this dataset.</p>")


def _meta(sel: Selection, src: views.Source | None = None) -> str:
    scope = "".join(f" · {html.escape(part)}" for part in sel.scope())  # the narrowing filters, in words
    label = views.profile_label(src, sel).removeprefix("profile ") if src is not None else sel.profile
    keys = f" · keys: {html.escape(views.errata_label(src, sel))}" if src is not None else ""  # the errata release
    return (f"<p class='meta'>Dataset <b>{html.escape(sel.dataset)}</b> · scoring profile "
            f"<b>{html.escape(label)}</b> · condition <b>{html.escape(sel.condition)}</b>{scope}{keys} · "
            f"generated {datetime.now(UTC):%Y-%m-%d %H:%M} UTC</p>")


def build_report(store_path: str, selection: Selection | None = None, *, profile: str = DEFAULT_PROFILE,
                 dataset: str = DEFAULT_DATASET, condition: str = DEFAULT_CONDITION, reference: dict | None = None,
                 baselines: bool = False) -> str:
    """The report as one HTML string (no external URLs; plotly.js embedded once).

    ``selection`` is what the report covers (the CLI's selection flags, as `show` takes them); without
    it, ``dataset``, ``profile``, ``condition`` and ``baselines`` build one. ``reference`` holds
    regression reference options of the `regression` view (ref_model, ref_type, ref_language,
    ref_image); with ``baselines`` set, baseline models count as examinees.
    """
    src = views.Source.of(Store(store_path))
    sel = selection or Selection(dataset=dataset, profile=profile, condition=condition, baselines=baselines)
    dataset, profile, baselines = sel.dataset, sel.profile, sel.baselines
    flags = views.dataset_flags(src, dataset)
    if not flags.exists:
        names = ", ".join(views.datasets(src)["dataset"]) or "none"
        raise UserError(f"no dataset {dataset!r} in {src.path} (available: {names})")
    features = views.study_features(src, dataset)
    if features.reference:  # a published per-task table: its own report (no formats, conditions, items)
        return build_study_report(
            src, sel, f"EduArt Studio report: {flags.title}", _meta(sel),
            [_AGGREGATE_BANNER], _figure, _table, METHODS[-1:], _document)
    fam = views.family_map(src)
    board = views.leaderboard(src, sel)
    type_means = views.type_scores(src, sel)
    effect = views.motivation(src, sel)
    found = views.key_findings(src, sel)
    image = stats = discrimination = overall = reg = None
    base = views.baselines(src, sel) if not baselines else None
    if not flags.aggregate_only:
        reg = views.regression(src, sel, clustered=True, **(reference or {}))
        stats = panels.draw("psychometrics", src, sel, **REPORT_ITEM_SETTING)
        discrimination = views.discrimination_by_format(src, sel, **REPORT_ITEM_SETTING)
        overall = views.reliability(src, sel, **REPORT_ITEM_SETTING).iloc[0]
        image = panels.draw("image_dumbbell", src, sel)

    parts: list[str] = []
    first = True

    def figure(fig, div_id: str, caption: str) -> None:
        nonlocal first
        parts.append(f"<figure>{_figure(fig, div_id, first)}<figcaption>{html.escape(caption)}</figcaption></figure>")
        first = False

    def panel(drawn: panels.Drawn) -> None:
        """A story figure with the caption it has on its page (`panels`), numbered."""
        number = list(FIGURES).index(drawn.panel.name) + 1
        figure(drawn.figure, FIGURES[drawn.panel.name], f"Figure {number}. {drawn.caption}")

    title = f"EduArt Studio report: {flags.title}"
    parts.append(f"<h1>{html.escape(title)}</h1>")
    parts.append(_meta(sel, src))
    parts.append(warning_banner(src, sel))
    simulated = views.data_label(src, sel).banner()  # per model kind: a real model on the demo is not simulated
    if simulated:
        parts.append(f"<p class='banner sim'>{html.escape(simulated)}</p>")
    if flags.aggregate_only:
        parts.append(_AGGREGATE_BANNER)

    n_items = int(board["n_items"].max()) if "n_items" in board and len(board) else 0
    parts.append("<h2>Overview</h2><ul class='numbers'>"
                 f"<li><b>{n_items}</b> items</li><li><b>{board['model'].nunique()}</b> models</li>"
                 f"<li>highest macro average <b>{100 * board['macro'].max():.1f}%</b></li>"
                 f"<li>median macro average <b>{100 * board['macro'].median():.1f}%</b></li>"
                 + (f"<li><b>{int((board['tie_group'] == 1).sum())}</b> model(s) in the first tie group (cannot be "
                    "told apart from the highest)</li>" if board["tie_group"].notna().any() else "")
                 + "</ul>")
    if base is not None and len(base):
        parts.append("<p>Baselines (references, not ranked): " + "; ".join(
            f"{html.escape(str(r.model))} macro average {100 * r.macro:.1f}%" for r in base.itertuples(index=False))
            + ".</p>")
    parts.append("<h2>Key findings</h2><ol class='findings'>" + "".join(finding_item(f) for f in found) + "</ol>")
    parts.append("<h2>Leaderboard</h2>")
    lb = board.assign(family=board["model"].map(fam))[
        ["tie_group", "rank", "rank_best", "rank_worst", "model", "family", "macro", "macro_ci_low", "macro_ci_high",
         "mcq", "mcq_ci_low", "mcq_ci_high", "micro", "n_items"]]
    parts.append(_table(lb, percent=("macro", "macro_ci_low", "macro_ci_high", "mcq", "mcq_ci_low", "mcq_ci_high",
                                     "micro")))
    people_section(src, sel, parts, figure, _table)

    parts.append("<h2>1. Item difficulty and discrimination</h2>")
    if stats is not None:
        panel(stats)
        parts.append(_table(discrimination, view="discrimination_by_format"))
        o = overall
        parts.append(f"<p>Mean p {o['mean_p']:.2f} (SD {o['sd_p']:.2f}); mean r_pb {o['mean_r_pb']:.2f}; "
                     f"{int(o['n_not_estimable'])} non-estimable items ({int(o['n_all_right'])} right for all, "
                     f"{int(o['n_all_wrong'])} for none); {int(o['n_examinees'])} examinees.</p>")
        parts.append(_ability_precision(src, sel))
    else:
        parts.append("<p class='na'>Not available: this dataset has no item-level data.</p>")

    parts.append("<h2>2. Scores by format</h2>")
    panel(panels.draw("format_heatmap", src, sel))
    tm = type_means[["model", "type", "n", "mean", "ci_low", "ci_high"]]
    parts.append(f"<details><summary>Format means with {WILSON_WORDS}</summary>"
                 + _table(tm, percent=("mean", "ci_low", "ci_high")) + "</details>")

    parts.append("<h2>3. Asking for a justification (motivation)</h2>")
    if not flags.aggregate_only and features.conditions < 2:
        parts.append("<p class='na'>Not available: this dataset was asked in one prompt condition only.</p>")
    else:
        panel(panels.draw("motivation_dumbbell", src, sel, measure="macro"))
        cols = [c for c in ("model", "default_macro", "motivation_macro", "delta_macro", "delta_micro", "p_ttest",
                            "p_wilcoxon", "n_improved", "n_same", "n_degraded") if c in effect]
        parts.append(_table(effect[cols], percent=("default_macro", "motivation_macro", "delta_macro",
                                                   "delta_micro")))

    parts.append("<h2>4. Items with and without an image</h2>")
    if image is not None:
        panel(image)
    else:
        parts.append("<p class='na'>Not available: this dataset has no item-level data.</p>")

    parts.append("<h2>5. What predicts a correct answer</h2>")
    if reg is not None:
        parts.append(f"<p>Logistic regression correct ~ format + image + language + model, item-clustered standard "
                     f"errors, n = {reg.attrs.get('n_obs')} model x item rows. "
                     f"{html.escape(findings.regression_reference_text(reg))}. "
                     f"{html.escape(not_estimable_text(reg))}</p>")
        parts.append(_table(reg[["predictor", "odds_ratio", "ci_low", "ci_high", "p", "reference"]], view="regression"))
    else:
        parts.append("<p class='na'>Not available: this dataset has no item-level data.</p>")

    parts.append("<h2>6. Failure examples</h2>")
    if flags.aggregate_only:
        parts.append("<p class='na'>Not available: this dataset has no item-level data.</p>")
    else:
        parts.append("<p>Items on which the models split most evenly (some right, some wrong), a few per format, "
                     f"scored with the {html.escape(profile)} profile. Answers and justifications are shown as the "
                     "models wrote them.</p>")
        parts.append(_failure_examples(src, sel))
        parts.append(_canary_mark(store_path))

    parts.append("<h2>7. Reviewing the gold</h2>")
    parts.extend(_review_section(src, sel))

    judged = any(p.is_judge for p in views.profile_choices(src, dataset))
    if judged:
        parts.extend(judges_section(src, sel, figure, _table, 8))
    if features.groupings:
        parts.extend(study_section(src, sel, figure, _table, 9 if judged else 8))
    methods = METHODS + PEOPLE_METHODS + (JUDGE_METHODS if judged else []) + (STUDY_METHODS if features.groupings else [])
    parts.append("<h2>Methods</h2><dl>" + "".join(f"<dt>{html.escape(name)}</dt><dd>{text}</dd>"
                                                   for name, text in methods) + "</dl>")
    parts.append("<h2>Provenance</h2>")
    parts.append(_provenance(src, sel))
    return _document(title, parts)


def _canary_mark(store_path: str) -> str:
    """The store's canary beside the items the report shows (`eduart_core.canary`): a comment line and
    a visible sentence, so the report's exam items can be traced in a corpus or a model's output."""
    line = store_canary(Store(store_path))
    return (f"<!-- {html.escape(line)} -->"
            f"<p class='meta canary'>{html.escape(NOTE)} Canary: <code>{html.escape(line)}</code></p>")


def finding_item(f: findings.Finding) -> str:
    """One key finding as a list item: the plain headline, and its statistics one click away ("How we know")."""
    return (f"<li><b>{html.escape(f.headline)}</b><details><summary>How we know</summary>"
            f"<p>{html.escape(f.how_we_know())}</p></details></li>")


def write_report(store_path: str, out: str, **options) -> int:
    """Write the report to ``out``; returns its size in bytes."""
    from pathlib import Path

    text = build_report(store_path, **options)  # views raise one-line UserErrors
    target = Path(out)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise write_error(target.parent, exc) from None
    return atomic_write(target, text)
