"""How a view's frame reads as a table: one header and one rounding per column, on pages and in the report.

Why one rule: the same number must read the same in the leaderboard on a page, in its LaTeX download
and in the HTML report, and a header must be words ("Macro avg. (%)", "Items", "Format"), never the
frame's column name. Each column name has one `Column` (a label and a `Kind`) in `COLUMNS`; a view
whose column of that name means something else says so in `VIEW_COLUMNS` (the ``ci_low`` of the
ability table is in logits, not a fraction). A `Kind` fixes the scale and the decimals (a percent
has one decimal, a count none, a logit two, a p-value three), so every column of one kind is rounded
once, the same way, by `eduart_core.rounding`. Format ids become the format's display name from the
format registry (`vocab.format_label`); regression terms become words (`term_label`).

`table(frame, view=..., percent=...)` returns a `Table`: ``frame`` keeps the view's column names
(the `show` twin and the tests use them) with display numbers and words, ``columns`` holds each
column's label and kind, ``text()`` is every cell as printed (the report and the LaTeX download).
"""
from __future__ import annotations

import numbers
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .rounding import fmt, rounded
from .vocab import format_label, language_label

__all__ = ["COLUMNS", "COUNT", "FORMAT_COLUMNS", "KINDS", "LOGIT", "MEASURE", "MONEY", "PERCENT", "PIXELS", "P_VALUE",
           "STATISTIC", "TEXT", "VIEW_COLUMNS", "Column", "Kind", "Table", "column", "printf", "table", "term_label"]


@dataclass(frozen=True)
class Kind:
    """A kind of number: how it is scaled (fractions x 100) and how many decimals it shows."""

    name: str
    digits: int
    scale: float = 1.0
    #: what the header adds after the label, e.g. " (%)"
    suffix: str = ""

    @property
    def numeric(self) -> bool:
        return self.name != "text"


PERCENT = Kind("percent", 1, 100.0, " (%)")
COUNT = Kind("count", 0)
LOGIT = Kind("logit", 2)
STATISTIC = Kind("statistic", 2)
P_VALUE = Kind("p-value", 3)
MEASURE = Kind("measure", 1)
#: Image sizes: whole pixels, also for a mean or a median (no image is 1045.8 pixels wide).
PIXELS = Kind("pixels", 0)
MONEY = Kind("usd", 4)
TEXT = Kind("text", 0)
#: Every kind, by name (a test walks them).
KINDS = {k.name: k for k in (PERCENT, COUNT, LOGIT, STATISTIC, P_VALUE, MEASURE, PIXELS, MONEY, TEXT)}


@dataclass(frozen=True)
class Column:
    """The header and the kind of one column (kind None: a count for integers, a statistic for decimals)."""

    label: str
    kind: Kind | None = None


def _c(label: str, kind: Kind | None = None) -> Column:
    return Column(label, kind)


#: Columns whose values are answer-format ids, shown as the format's display name.
FORMAT_COLUMNS = frozenset({"type", "format", "best_type", "worst_type"})
#: Columns whose values are ids in words (underscores become spaces).
WORD_COLUMNS = frozenset({"flag", "flags", "status", "category", "difficulty_category", "discrimination_category",
                          "reasons", "method", "state"})

#: One header and kind per column name the views use.
COLUMNS: dict[str, Column] = {
    # who and what
    "model": _c("Model"), "family": _c("Family"), "condition": _c("Condition"), "type": _c("Format"),
    "format": _c("Format"), "language": _c("Language"), "item_id": _c("Item"), "examinee": _c("Examinee"),
    "category": _c("Category"), "flag": _c("Flag"), "flags": _c("Flags"),
    "status": _c("Status"), "reason": _c("Reason"), "note": _c("Note"), "option": _c("Option"),
    "option_text": _c("Option text"), "predictor": _c("Term"), "factor": _c("Factor"),
    "reference": _c("Reference levels"), "reference_rule": _c("Reference rule"), "tied_with": _c("Tied with"),
    "plausible_ranks": _c("Plausible ranks"), "se_method": _c("Standard errors"), "irt_model": _c("IRT model"),
    "difficulty_category": _c("Difficulty category"), "discrimination_category": _c("Discrimination category"),
    "best_type": _c("Best format"), "worst_type": _c("Worst format"), "parallel_of": _c("Parallel form"),
    "differs": _c("Differs in"), "dif_class": _c("DIF class"), "direction": _c("Direction"),
    "effect_name": _c("Effect measure"), "top_items_text": _c("Items most against the model"),
    "min_model": _c("Lowest model"), "max_model": _c("Highest model"), "text": _c("Text"), "dataset": _c("Dataset"),
    "round": _c("Round"), "statistic": _c("Statistic"), "measure": _c("Measure"), "has_image": _c("Image"),
    "is_key": _c("Key"), "aberrant": _c("Aberrant"), "informative": _c("Informative"), "disordered": _c("Disordered"),
    "thresholds_text": _c("Thresholds (levels: value (SE))"), "invalid_warning": _c("Invalid-answer warning"),
    "method": _c("Method"), "rule": _c("Rule"), "interval": _c("Interval"), "scope": _c("Scope"), "group": _c("Group"),
    "name": _c("Name"), "best_model": _c("Highest-scoring model"), "median_person": _c("Median person"),
    "best_person": _c("Best person"), "inspect": _c("Open"), "answer": _c("Answer"), "rationale": _c("Rationale"),
    "part": _c("Part"), "value": _c("Value"), "reviewer": _c("Reviewer"), "page_id": _c("Page"),
    "exercise": _c("Exercise"), "field_names": _c("Field names"), "promoted_version": _c("Promoted as version"),
    # fractions, shown as percent
    "macro": _c("Macro avg.", PERCENT), "micro": _c("Micro avg.", PERCENT), "mcq": _c("MCQ acc.", PERCENT),
    "mcq_ci_low": _c("MCQ 95% CI low", PERCENT), "mcq_ci_high": _c("MCQ 95% CI high", PERCENT),
    "macro_ci_low": _c("Macro 95% CI low", PERCENT), "macro_ci_high": _c("Macro 95% CI high", PERCENT),
    "mean": _c("Mean", PERCENT), "ci_low": _c("95% CI low", PERCENT), "ci_high": _c("95% CI high", PERCENT),
    "mcq_minus_macro": _c("MCQ minus macro", PERCENT), "best_mean": _c("Best mean", PERCENT),
    "worst_mean": _c("Worst mean", PERCENT), "spread": _c("Spread", PERCENT),
    "default_macro": _c("Default macro", PERCENT), "motivation_macro": _c("Motivation macro", PERCENT),
    "delta_macro": _c("Change, macro", PERCENT), "default_micro": _c("Default micro", PERCENT),
    "motivation_micro": _c("Motivation micro", PERCENT), "delta_micro": _c("Change, micro", PERCENT),
    "delta_micro_ci_low": _c("Change 95% CI low", PERCENT), "delta_micro_ci_high": _c("Change 95% CI high", PERCENT),
    "mean_delta": _c("Mean change", PERCENT), "min_delta": _c("Lowest change", PERCENT),
    "max_delta": _c("Highest change", PERCENT), "default_mean": _c("Default mean", PERCENT),
    "motivation_mean": _c("Motivation mean", PERCENT), "delta": _c("Difference", PERCENT),
    "mean_without": _c("Without image", PERCENT), "mean_with": _c("With image", PERCENT),
    "strict_mean": _c("Strict mean", PERCENT), "paper_mean": _c("Paper mean", PERCENT),
    "share": _c("Share", PERCENT), "share_upper": _c("Share, upper third", PERCENT),
    "share_lower": _c("Share, lower third", PERCENT), "chance": _c("Chance level", PERCENT),
    "invalid_rate": _c("Invalid answers", PERCENT), "identical_share": _c("Identical answers", PERCENT),
    "mean_item": _c("Mean, item", PERCENT), "mean_parallel": _c("Mean, parallel form", PERCENT),
    "mean_diff": _c("Mean difference", PERCENT), "p_reference": _c("Mean, reference", PERCENT),
    "p_focal": _c("Mean, focal", PERCENT), "accuracy": _c("Accuracy", PERCENT), "rate": _c("Rate", PERCENT),
    "percent": _c("Same choice", PERCENT), "value_percent": _c("Same value", PERCENT),
    "off_by_one_rate": _c("Off by one", PERCENT), "exact_rate": _c("Exact", PERCENT),
    "mean_score": _c("Mean score", PERCENT), "top_minus_weak": _c("Top minus weak", PERCENT),
    "score_strict": _c("Score, strict", PERCENT), "score_paper": _c("Score, paper", PERCENT),
    "difference": _c("Difference", PERCENT), "score": _c("Score", PERCENT),
    "item_p": _c("Item difficulty p", STATISTIC), "best_model_mean": _c("Best model mean", PERCENT),
    "median_person_mean": _c("Median person mean", PERCENT), "best_person_mean": _c("Best person mean", PERCENT),
    "gap_median": _c("Gap to median person", PERCENT), "gap_median_ci_low": _c("Gap to median 95% CI low", PERCENT),
    "gap_median_ci_high": _c("Gap to median 95% CI high", PERCENT), "gap_best": _c("Gap to best person", PERCENT),
    "gap_best_ci_low": _c("Gap to best 95% CI low", PERCENT), "gap_best_ci_high": _c("Gap to best 95% CI high", PERCENT),
    # counts
    "rank": _c("Rank", COUNT), "rank_best": _c("Best possible rank", COUNT),
    "rank_worst": _c("Worst possible rank", COUNT), "tie_group": _c("Tie group", COUNT),
    "n_common": _c("Items in paired tests", COUNT), "judge_graded": _c("Human-graded answers (judge correction)", COUNT), "n": _c("n", COUNT), "n_items": _c("Items", COUNT), "n_mcq": _c("MCQ items", COUNT),
    "n_types": _c("Formats", COUNT), "n_paired": _c("Paired items", COUNT), "n_models": _c("Models", COUNT),
    "n_examinees": _c("Examinees", COUNT), "examinees": _c("Examinees fitted", TEXT), "n_left_out": _c("Items left out", COUNT), "latent_sd": _c("Ability SD", LOGIT), "items": _c("Items", COUNT), "n_improved": _c("Improved", COUNT),
    "n_same": _c("Same", COUNT), "n_degraded": _c("Degraded", COUNT), "n_discordant": _c("Discordant", COUNT),
    "n_without": _c("Items without image", COUNT), "n_with": _c("Items with image", COUNT),
    "n_changed": _c("Scores changed", COUNT), "good": _c("Good", COUNT), "fair": _c("Fair", COUNT),
    "poor": _c("Poor", COUNT), "n_right": _c("Right", COUNT), "n_items_fitted": _c("Items fitted", COUNT),
    "n_levels": _c("Score levels", COUNT), "levels_observed": _c("Levels observed", COUNT),
    "n_answers": _c("Answers", COUNT), "n_invalid": _c("Invalid", COUNT), "n_chose": _c("Chose it", COUNT),
    "n_reference": _c("Reference examinees", COUNT), "n_focal": _c("Focal examinees", COUNT),
    "n_item_better": _c("Better on item", COUNT), "n_parallel_better": _c("Better on parallel form", COUNT),
    "n_tied": _c("Tied", COUNT), "models_right": _c("Models right", COUNT), "n_people": _c("People", COUNT),
    "units": _c("Fields", COUNT), "reviewers": _c("Reviewers", COUNT), "version": _c("Version", COUNT),
    "s_x2_df": _c("S-X2 df", COUNT), "df": _c("df", COUNT), "input_tokens": _c("Input tokens", COUNT),
    "output_tokens": _c("Output tokens", COUNT), "n_items_model": _c("Items (model)", COUNT),
    "n_items_median": _c("Items (median person)", COUNT), "n_profile_changes": _c("Profile changes", COUNT),
    "n_wrong_with_justification": _c("Wrong only with justification", COUNT), "n_items_best": _c("Items (best person)", COUNT), "answered": _c("Answered", COUNT), "errors": _c("Errors", COUNT),
    # logits and their standard errors
    "ability": _c("Ability (logits)", LOGIT), "ability_se": _c("Ability SE", LOGIT),
    "ability_sd": _c("Ability SD (fitted)", LOGIT), "difficulty": _c("Location (logits)", LOGIT),
    "difficulty_se": _c("Location SE", LOGIT), "discrimination": _c("Discrimination", LOGIT),
    "discrimination_se": _c("Discrimination SE", LOGIT), "location": _c("Location (logits)", LOGIT),
    "se": _c("SE", LOGIT), "theta": _c("Ability (logits)", LOGIT), "beta": _c("Coefficient (log odds)", LOGIT),
    "mean_ability_se": _c("Mean ability SE", LOGIT), "median_ability_se": _c("Median ability SE", LOGIT),
    "lz": _c("lz", LOGIT), "infit_t": _c("Infit t", LOGIT), "outfit_t": _c("Outfit t", LOGIT), "z": _c("z", LOGIT),
    # other statistics
    "r_pb": _c("r_pb", STATISTIC), "mean_r_pb": _c("Mean r_pb", STATISTIC), "odds_ratio": _c("Odds ratio", STATISTIC),
    "infit": _c("Infit", STATISTIC), "outfit": _c("Outfit", STATISTIC), "s_x2": _c("S-X2", STATISTIC),
    "information_at_mean": _c("Information at mean ability", STATISTIC), "effect": _c("Effect", STATISTIC),
    "mean_se_per_sd": _c("Mean SE per ability SD", STATISTIC), "se_gain": _c("SE gain", PERCENT),
    "se_gain_per_sd": _c("SE gain per ability SD", PERCENT), "rank_biserial": _c("Rank-biserial r", STATISTIC),
    "cohen_kappa": _c("Cohen's kappa", STATISTIC), "fleiss_kappa": _c("Fleiss' kappa", STATISTIC),
    "krippendorff_alpha": _c("Krippendorff's alpha", STATISTIC), "alpha_ci_low": _c("Alpha 95% CI low", STATISTIC),
    "alpha_ci_high": _c("Alpha 95% CI high", STATISTIC), "r_pb_ci_low": _c("r_pb 95% CI low", STATISTIC),
    "r_pb_ci_high": _c("r_pb 95% CI high", STATISTIC), "design_effect": _c("Design effect", STATISTIC),
    "mae": _c("Mean absolute error", STATISTIC),
    # p-values
    "p": _c("p", P_VALUE), "p_ttest": _c("p (paired t)", P_VALUE), "p_wilcoxon": _c("p (Wilcoxon)", P_VALUE),
    "p_mcnemar": _c("p (McNemar)", P_VALUE), "p_holm": _c("p (Holm)", P_VALUE), "lz_p": _c("p (lz)", P_VALUE),
    "s_x2_p": _c("p (S-X2)", P_VALUE), "p_sign": _c("p (sign test)", P_VALUE),
    "underfit_p": _c("p (underfit)", P_VALUE), "underfit_q": _c("q (underfit, BH)", P_VALUE),
    "overfit_p": _c("p (overfit)", P_VALUE), "overfit_q": _c("q (overfit, BH)", P_VALUE),
    # sizes and money
    "width": _c("Width (px)", PIXELS), "height": _c("Height (px)", PIXELS), "kb": _c("Size (kB)", MEASURE),
    "sd": _c("SD", MEASURE), "min": _c("Min", MEASURE), "median": _c("Median", MEASURE), "max": _c("Max", MEASURE),
    "latency_s": _c("Latency (s)", MEASURE), "cost_usd": _c("Cost (USD)", MONEY),
}

_LOGIT_INTERVAL = {"ci_low": _c("95% CI low (logits)", LOGIT), "ci_high": _c("95% CI high (logits)", LOGIT)}
_DIFFICULTY_P = {"p": _c("Difficulty p", STATISTIC)}
#: Where a view's column of a shared name means something else than in `COLUMNS`.
VIEW_COLUMNS: dict[str, dict[str, Column]] = {
    "irt_abilities": _LOGIT_INTERVAL, "human_ranking": _LOGIT_INTERVAL,
    "regression": {"ci_low": _c("Odds ratio 95% CI low", STATISTIC), "ci_high": _c("Odds ratio 95% CI high", STATISTIC),
                   "se": _c("SE (log odds)", LOGIT)},
    "item_lengths": {"mean": _c("Mean", MEASURE)},
    "item_statistics": _DIFFICULTY_P, "irt_items": _DIFFICULTY_P, "items": _DIFFICULTY_P,
    "explorer_items": _DIFFICULTY_P, "suspect_keys": _DIFFICULTY_P, "irt_model_comparison": {"label": _c("IRT model")},
    "irt_wright_map": {"label": _c("Examinee or item"), "se": _c("SE", LOGIT)},
    "dif": {"statistic": _c("Test statistic", STATISTIC)},
    "my_agreement": {"share": _c("Agreed", PERCENT)},
    "my_severity": {**_LOGIT_INTERVAL, "severity": _c("Severity (logits)", LOGIT)},
    "my_gold": (_GOLD := {
        "accuracy": _c("Accuracy on gold", PERCENT), "acc_low": _c("Accuracy 95% CI low", PERCENT),
        "acc_high": _c("Accuracy 95% CI high", PERCENT), "others_accuracy": _c("Other graders' accuracy", PERCENT),
        "accuracy_p": _c("p (accuracy below the others', one-sided)", P_VALUE),
        "severity": _c("Severity against gold (logits)", LOGIT), "severity_se": _c("SE (logits)", LOGIT),
        "severity_low": _c("95% CI low (logits)", LOGIT), "severity_high": _c("95% CI high (logits)", LOGIT),
        "gold_answers": _c("Gold answers", COUNT), "n_marks": _c("Gold marks", COUNT), "correct": _c("Correct", COUNT),
        "others_marks": _c("Other graders' gold marks", COUNT), "n_differ": _c("Marks unlike the gold", COUNT)}),
    "gold_flags": _GOLD,
}


def column(name: str, view: str | None = None, *, dtype=None, percent: bool = False) -> Column:
    """The header and kind of column ``name`` (of ``view``), with the kind's unit in the header.

    An unknown column reads as its name in words (underscores become spaces, first letter upper case)
    and gets its kind from ``dtype`` (integers count, decimals are statistics, the rest is text);
    ``percent`` says the values are fractions whatever the name."""
    spec = VIEW_COLUMNS.get(view or "", {}).get(name) or COLUMNS.get(name)
    if spec is None:
        words = str(name).replace("_", " ").strip()
        spec = Column(words[:1].upper() + words[1:])
    kind = PERCENT if percent else spec.kind or _kind_of(dtype)
    label = spec.label if spec.label.endswith(kind.suffix) else spec.label + kind.suffix
    return Column(label, kind)


def _kind_of(dtype) -> Kind:
    if dtype is None or pd.api.types.is_bool_dtype(dtype):
        return TEXT
    if pd.api.types.is_integer_dtype(dtype):
        return COUNT
    if pd.api.types.is_float_dtype(dtype):
        return STATISTIC
    return TEXT


_TERM = re.compile(r"^(?P<factor>[A-Za-z_]+)[:=](?P<level>.*)$")
_FACTORS = {"type": "Format", "language": "Language", "model": "Model", "has_image": "Image"}


def _level_words(factor: str, level: str) -> str:
    if factor == "type":
        return format_label(level)
    if factor == "language":
        return language_label(level)
    if factor == "has_image":
        return {"True": "with an image", "False": "without an image"}.get(level, level)
    return level


def term_label(term: str) -> str:
    """A regression term in words: ``type:completion_open`` reads "Format: Completion (open)",
    ``has_image:True`` "Image: with an image", ``intercept`` "Intercept"."""
    text = str(term)
    if text == "intercept":
        return "Intercept"
    match = _TERM.match(text)
    if not match:
        return text
    factor, level = match["factor"], match["level"]
    return f"{_FACTORS.get(factor, factor.replace('_', ' ').capitalize())}: {_level_words(factor, level)}"


def _reference_words(text: str, factor: str) -> str:
    """The reference level(s) of a regression row in words: "type=...; language=en" for the intercept,
    the level of the row's own factor otherwise."""
    if "=" not in text and factor in _FACTORS:
        return _level_words(factor, text)
    return "; ".join(term_label(part.strip()) for part in str(text).split(";") if part.strip())


def _words(value) -> object:
    if isinstance(value, str):
        return value.replace("_", " ")
    return value


def _format_words(value) -> object:
    if isinstance(value, str):
        return "All formats" if value == "all" else format_label(value)
    return value


@dataclass
class Table:
    """A frame as a reader sees it: the view's column names, display values, a `Column` per column."""

    frame: pd.DataFrame
    columns: dict[str, Column] = field(default_factory=dict)

    @property
    def labels(self) -> dict[str, str]:
        return {name: spec.label for name, spec in self.columns.items()}

    def cell(self, name: str, value) -> str:
        """One value as printed (the column's decimals; missing is a dash; yes/no for booleans)."""
        kind = self.columns[name].kind or TEXT
        if value is None or value is pd.NA or (isinstance(value, float) and pd.isna(value)):
            return "—"
        if isinstance(value, bool | np.bool_):
            return "yes" if value else "no"
        if kind.numeric and isinstance(value, numbers.Number):
            return fmt(value, kind.digits)
        return str(value)

    def text(self) -> pd.DataFrame:
        """Every cell as printed, under the readable headers (report and LaTeX)."""
        data = {self.columns[c].label: [self.cell(c, v) for v in self.frame[c].tolist()] for c in self.frame.columns}
        return pd.DataFrame(data, columns=[self.columns[c].label for c in self.frame.columns])


def table(frame: pd.DataFrame, view: str | None = None, percent: Iterable[str] = ()) -> Table:
    """The table of ``frame`` (a frame of ``view``): fractions as percentages, every number rounded
    by its kind, format ids as the formats' names, ids in words, regression terms as labels.

    ``percent`` names columns holding fractions beyond those `COLUMNS` knows (a page's own column)."""
    marked = set(percent)
    shown = frame.copy()
    specs: dict[str, Column] = {}
    for name in shown.columns:
        spec = column(name, view, dtype=shown[name].dtype, percent=name in marked)
        specs[name] = spec
        values = shown[name]
        if name in FORMAT_COLUMNS and not pd.api.types.is_numeric_dtype(values):
            shown[name] = values.map(_format_words)
        elif name in WORD_COLUMNS and not pd.api.types.is_numeric_dtype(values):
            shown[name] = values.map(_words)
        elif name == "predictor" and view == "regression":
            shown[name] = values.map(lambda v: term_label(v) if isinstance(v, str) else v)
        elif name == "factor" and view == "regression":
            shown[name] = values.map(lambda v: _FACTORS.get(v, str(v).replace("_", " ").capitalize()))
        elif name == "reference" and view == "regression":
            factors = frame["factor"] if "factor" in frame else \
                frame.get("predictor", pd.Series("", index=frame.index)).astype(str).str.split(":").str[0]
            shown[name] = [_reference_words(v, f) if isinstance(v, str) else v for v, f in zip(values, factors)]
        elif spec.kind is not None and spec.kind.numeric and pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
            shown[name] = _rounded(values, spec.kind)
    return Table(shown, specs)


def _rounded(values: pd.Series, kind: Kind) -> pd.Series:
    """Values x the kind's scale, rounded to its decimals (integers stay integers)."""
    if pd.api.types.is_integer_dtype(values) and kind.scale == 1.0:
        return values
    numbers = rounded(values.to_numpy(dtype=float, na_value=float("nan")) * kind.scale, kind.digits)
    return pd.Series(numbers, index=values.index, name=values.name)


def printf(kind: Kind) -> str:
    """The printf pattern of a kind (the page's number columns use it, e.g. "%.1f")."""
    return f"%.{kind.digits}f"
