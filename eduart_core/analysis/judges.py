"""Calibrating model judges against blind human grading: agreement, severity, stability, order effects.

Why human-human agreement comes first: a judge can only be checked against a reference that is
itself reliable. Per cell (a judge, and a criterion, format or language), the graders' own
Krippendorff alpha (ordinal, bootstrap 95% interval) is computed first; where the graders do not
agree (alpha below the gate's ``min_human_alpha``), the row says so and reports nothing about the
judge. Otherwise the judge's marks are compared with the adjudicated human marks (the graders'
mark when they all agree, else the adjudicator's): alpha and quadratic-weighted kappa, both with
intervals from a bootstrap that resamples whole answers.

The judge's mark on a criterion is its mean over repeated requests (what its profile scores).

Severity: a many-facet Rasch model (PyPI ``mirt``, ``fit_mfrm``) per judge and cell, with the
answers as persons, the criteria as items, and the graders and that judge as levels of the rater
facet (the judge's first repetition: whole points), on one logit scale; another judge never moves
this one's severity. Severities are relative to the graders' mean (positive: marks lower than the
graders do). Criteria of more than one point are dichotomised at half marks when their maxima
differ (the rating-scale model needs one scale).

Stability and order effects: the run-to-run SD of a judge's marks over repeated requests (points
as a fraction of the criterion's maximum), the share of verdicts that change when the scoring
options are listed in reverse (position probe), and the mean change when the answer is padded with
words that add nothing (verbosity probe).

A judge passes where alpha >= ``min_alpha`` and the whole 95% interval of its severity lies within
±``max_severity`` (defaults in ``vocab``; the thresholds used are columns of every result row). Why
the interval and not the point estimate: a severity of +0.06 on 192 answers is as compatible with
+0.4 as with 0, and a gate that validates a judge must show the judge is close to the graders, not
merely fail to show it is far. The interval is that of the contrast with the graders' mean (its
variance c'Vc from the full covariance of the rater levels, see ``_recentred``).
"""
from __future__ import annotations

import logging
import warnings

import numpy as np
import pandas as pd

from ..vocab import (
    ADJUDICATE_ROLE,
    CHECK_METHOD,
    GRADE_ROLE,
    HUMAN_MIN_ALPHA,
    HUMAN_RATER,
    JUDGE_MAX_SEVERITY,
    JUDGE_METHOD,
    JUDGE_MIN_ALPHA,
    JUDGE_RATER,
    MAIN_PROBE,
    PADDED_PROBE,
    REORDERED_PROBE,
)
from .agreement_ordinal import N_BOOT, SEED, alpha_interval, weighted_kappa_interval
from .intervals import Z95

logger = logging.getLogger(__name__)

ANSWER_KEYS = ["item_id", "model", "condition"]
UNIT_KEYS = [*ANSWER_KEYS, "criterion"]
ALL = "all"
#: Breakdowns of the calibration (comma-separated in ``by``), besides the judge itself.
BREAKDOWNS = {"criterion": "criterion", "format": "type", "language": "language"}

CALIBRATION_COLUMNS = [
    "judge", "judge_name", "version", "simulated", "criterion", "type", "language", "n", "n_units", "n_graders",
    "human_alpha", "human_alpha_low", "human_alpha_high", "humans_agree", "n_settled", "n_pending",
    "alpha", "alpha_low", "alpha_high", "kappa", "kappa_low", "kappa_high", "exact_agreement",
    "severity", "severity_se", "severity_low", "severity_high", "run_sd", "n_repeated",
    "position_changed", "position_n", "verbosity_shift", "verbosity_changed", "verbosity_n", "unparsed",
    "min_alpha", "max_severity", "min_human_alpha", "passes", "reason",
]
SEVERITY_COLUMNS = ["rater", "kind", "severity", "severity_se", "severity_low", "severity_high", "n_ratings", "note"]
CONFUSION_COLUMNS = ["judge", "criterion", "human_points", "judge_points", "n", "share_of_human", "max_points"]


# ---------------------------------------------------------------- human grades

def latest_grades(grades: pd.DataFrame) -> pd.DataFrame:
    """The latest grade per answer, criterion, grader and role (grades are append-only)."""
    if grades.empty:
        return grades.copy()
    order = grades.sort_values(["graded_at", "grade_id"] if "grade_id" in grades else ["graded_at"])
    return order.drop_duplicates([*UNIT_KEYS, "grader", "role"], keep="last").reset_index(drop=True)


def human_reference(grades: pd.DataFrame) -> pd.DataFrame:
    """Per answer and criterion: graders, whether they agree, and the settled human mark.

    Settled = the graders' common mark when every grader gave the same, else the adjudicator's
    (latest) mark; pending when they disagree and no adjudicator has decided yet.
    """
    latest = latest_grades(grades)
    cols = [*UNIT_KEYS, "n_graders", "agree", "human", "adjudicated", "settled"]
    if latest.empty:
        return pd.DataFrame({c: pd.Series(dtype=bool if c in ("agree", "adjudicated", "settled") else
                                          float if c == "human" else object) for c in cols})
    blind = latest[latest["role"] == GRADE_ROLE]
    adjudicated = latest[latest["role"] == ADJUDICATE_ROLE].drop_duplicates(UNIT_KEYS, keep="last")
    summary = blind.groupby(UNIT_KEYS, observed=True)["points"].agg(["count", "min", "max"]).reset_index()
    summary = summary.merge(adjudicated[[*UNIT_KEYS, "points"]].rename(columns={"points": "adj"}), on=UNIT_KEYS,
                            how="left")
    agree = summary["min"] == summary["max"]
    human = np.where(summary["adj"].notna() & ~agree, summary["adj"], np.where(agree, summary["min"], np.nan))
    return pd.DataFrame({**{k: summary[k] for k in UNIT_KEYS}, "n_graders": summary["count"].astype(int),
                         "agree": agree.to_numpy(), "human": human,
                         "adjudicated": (summary["adj"].notna() & ~agree).to_numpy(),
                         "settled": ~np.isnan(human)})


# ---------------------------------------------------------------- judges' marks

def judge_marks(judgements: pd.DataFrame) -> pd.DataFrame:
    """Per judge profile, answer and criterion: the mean mark over repeats (main probe: what the
    profile scores), the mark of the first repetition (``first``: whole points, for the Rasch
    model), the run-to-run SD (as a fraction of the maximum) and how many repeats it rests on."""
    cols = ["profile", *UNIT_KEYS, "method", "max_points", "judge", "first", "sd", "n_repeats"]
    main = judgements[(judgements["probe"] == MAIN_PROBE) & judgements["points"].notna()]
    if main.empty:
        return pd.DataFrame(columns=cols)
    keys = ["profile", *UNIT_KEYS]
    main = main.sort_values([*keys, "repetition"]).assign(frac=lambda f: f["points"] / f["max_points"])
    grouped = main.groupby(keys, observed=True, sort=False)
    out = grouped.agg(method=("method", "first"), max_points=("max_points", "first"), judge=("points", "mean"),
                      first=("points", "first"), n_repeats=("points", "size")).reset_index()
    sd = grouped["frac"].std(ddof=1).reset_index(drop=True)
    out["sd"] = np.where(out["n_repeats"] > 1, sd.to_numpy(), np.nan)
    return out[cols]


def probe_effects(judgements: pd.DataFrame) -> pd.DataFrame:
    """Per profile, answer and criterion: the main verdict of the probed repetition next to the
    padded and the reordered ones (fractions of the maximum)."""
    ok = judgements[judgements["points"].notna()]
    probes = ok[ok["probe"].isin([PADDED_PROBE, REORDERED_PROBE])]
    if probes.empty:
        return pd.DataFrame(columns=["profile", *UNIT_KEYS, "probe", "main", "probed"])
    keys = ["profile", *UNIT_KEYS, "repetition"]
    main = ok[ok["probe"] == MAIN_PROBE].drop_duplicates(keys, keep="last")
    merged = probes.merge(main[[*keys, "points"]].rename(columns={"points": "main_points"}), on=keys)
    return pd.DataFrame({**{k: merged[k] for k in ["profile", *UNIT_KEYS, "probe"]},
                         "main": merged["main_points"] / merged["max_points"],
                         "probed": merged["points"] / merged["max_points"]})


# ---------------------------------------------------------------- severity (many-facet Rasch)

def rater_severities(ratings: pd.DataFrame) -> pd.DataFrame:
    """Severity of every rater (logit, relative to the human graders' mean) from one many-facet
    Rasch model. ``ratings``: answer (any hashable key), criterion, rater, kind (human|judge),
    points, max_points."""
    from mirt.estimation import fit_mfrm
    from mirt.models import Facet, ManyFacetRaschModel, PolytomousMFRM

    empty = pd.DataFrame(columns=SEVERITY_COLUMNS)
    data = ratings.dropna(subset=["points"])
    if data.empty or (data["kind"] == HUMAN_RATER).sum() == 0:
        return empty
    maxima = data["max_points"].astype(float)
    binary = bool((maxima == 1).all()) or maxima.nunique() > 1
    values = (data["points"] / maxima >= 0.5).astype(float) if maxima.nunique() > 1 else data["points"].astype(float)
    data = data.assign(value=values.to_numpy())
    notes: dict[str, str] = {}
    for _ in range(4):  # raters with only extreme marks cannot be placed: drop them and fit again
        extreme = data.groupby("rater")["value"].agg(lambda s: s.nunique() < 2)
        for rater in extreme[extreme].index:
            notes[str(rater)] = "not estimable: every mark the same"
        data = data[~data["rater"].isin(extreme[extreme].index)]
        if data.empty or data["rater"].nunique() < 2 or (data["kind"] == HUMAN_RATER).sum() == 0:
            break
        answers = pd.Index(sorted(data["answer"].astype(str).unique()))
        criteria = pd.Index(sorted(data["criterion"].astype(str).unique()))
        raters = pd.Index(sorted(data["rater"].astype(str).unique()))
        pairs = data[["criterion", "rater"]].astype(str).drop_duplicates().sort_values(["criterion", "rater"])
        col = {(c, r): k for k, (c, r) in enumerate(zip(pairs["criterion"], pairs["rater"]))}
        x = np.full((len(answers), len(col)), np.nan)
        rows = answers.get_indexer(data["answer"].astype(str))
        cols = np.array([col[(c, r)] for c, r in zip(data["criterion"].astype(str), data["rater"].astype(str))])
        x[rows, cols] = data["value"].to_numpy()
        item_idx = criteria.get_indexer(pairs["criterion"])
        rater_idx = np.broadcast_to(raters.get_indexer(pairs["rater"]), x.shape)
        categories = 2 if binary else int(data["value"].max()) + 1
        try:
            model = (ManyFacetRaschModel(len(criteria), [Facet("rater", len(raters))]) if categories == 2 else
                     PolytomousMFRM(len(criteria), categories, [Facet("rater", len(raters))]))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = fit_mfrm(model, x, {"rater": rater_idx}, item_indices=item_idx)
        except Exception as exc:  # noqa: BLE001 - mirt's data and identification errors: say so, do not fail
            message = str(exc).splitlines()[0][:160]
            if categories > 2 and not binary:
                binary = True
                data = data.assign(value=(data["points"] / data["max_points"] >= 0.5).astype(float))
                continue
            logger.info("many-facet Rasch model not estimable: %s", message)
            out = empty.copy()
            out["rater"] = sorted(ratings["rater"].astype(str).unique())
            out["note"] = f"not estimable: {message}"
            return out
        kinds = data.drop_duplicates("rater").set_index(data.drop_duplicates("rater")["rater"].astype(str))["kind"]
        human = np.array([kinds.get(r) == HUMAN_RATER for r in raters])
        sev, se = _recentred(model, result, x, rater_idx, item_idx, human)
        counts = data.groupby(data["rater"].astype(str)).size()
        rows_out = [{"rater": r, "kind": kinds.get(r), "severity": float(s), "severity_se": float(e),
                     "severity_low": float(s - Z95 * e), "severity_high": float(s + Z95 * e),
                     "n_ratings": int(counts.get(r, 0)), "note": notes.get(r, "")}
                    for r, s, e in zip(raters, sev, se)]
        kinds_all = ratings.drop_duplicates("rater").set_index(ratings.drop_duplicates("rater")["rater"].astype(str))
        for rater, note in notes.items():
            rows_out.append({"rater": rater, "kind": kinds_all["kind"].get(rater), "severity": np.nan,
                             "severity_se": np.nan, "severity_low": np.nan, "severity_high": np.nan,
                             "n_ratings": int((ratings["rater"].astype(str) == rater).sum()), "note": note})
        return pd.DataFrame(rows_out, columns=SEVERITY_COLUMNS)
    out = pd.DataFrame([{"rater": r, "kind": None, "severity": np.nan, "severity_se": np.nan, "severity_low": np.nan,
                         "severity_high": np.nan, "n_ratings": 0, "note": notes.get(r, "not estimable")}
                        for r in sorted(ratings["rater"].astype(str).unique())], columns=SEVERITY_COLUMNS)
    return out


def rater_covariance(model, result, x: np.ndarray, rater_idx: np.ndarray, item_idx: np.ndarray) -> np.ndarray:
    """The full covariance matrix of the rater levels of a fitted many-facet Rasch model.

    Why: a severity relative to the graders' mean is a contrast c'b of the fitted levels, and its
    variance c'Vc needs the covariances, which ``fit_mfrm`` computes (inverse observed information,
    Louis' identity) but returns only as the diagonal (``facet_se``). The information is evaluated
    again at the estimates with mirt's own likelihood; a test checks that its diagonal equals
    ``facet_se`` (so a change inside mirt shows up as a failing test, not a silent wrong SE).
    """
    from mirt.estimation import mfrm_mml

    design = mfrm_mml._build_design(model, x, {"rater": rater_idx}, item_idx)
    pmap = mfrm_mml._parameter_map(model, design.n_categories, True)
    natural = np.zeros(len(pmap.offset))
    natural[pmap.items] = result.item_difficulty
    natural[pmap.facets[0]] = result.facet_parameters["rater"]
    if result.thresholds is not None:
        natural[pmap.thresholds] = np.ravel(result.thresholds)
    natural[-1] = np.log(result.sigma)
    likelihood = mfrm_mml._MarginalLikelihood(design, pmap, int(result.n_quadpts))
    covariance = mfrm_mml._natural_covariance(likelihood.information(pmap.free(natural)), pmap)
    return covariance[pmap.facets[0], pmap.facets[0]]


def _recentred(model, result, x: np.ndarray, rater_idx: np.ndarray, item_idx: np.ndarray,
               human: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Severities relative to the graders' mean and the standard errors of those contrasts.

    The levels come out of mirt centred on all raters; re-centring on the graders is the contrast
    C b with C = I - 1 w' (w: 1/H on the H graders, 0 elsewhere), so its covariance is C V C'. Keeping
    the SE of the uncentred level is wrong: with H graders and one judge the judge's contrast is
    (1 + 1/H) times its level, and the SE must grow by the same factor (3 graders: 4/3).
    """
    levels = np.asarray(result.facet_parameters["rater"], dtype=float)
    weights = human.astype(float) / human.sum()
    contrast = np.eye(len(levels)) - np.outer(np.ones(len(levels)), weights)
    try:
        covariance = rater_covariance(model, result, x, rater_idx, item_idx)
    except Exception as exc:  # noqa: BLE001 - mirt's private layout changed: the exact identity where it holds
        logger.info("full covariance of the rater levels not available (%s)", exc)
        raw = np.asarray(result.facet_se["rater"], dtype=float)
        others = int((~human).sum())
        if others == 0:  # graders alone: the levels already are the contrasts
            return contrast @ levels, raw
        # one rater beside the graders: its contrast is (1 + 1/H) times its level (the levels sum to 0);
        # the graders' own contrasts need the covariances, which are not available
        se = np.where(human, np.nan, raw * (1 + 1 / human.sum())) if others == 1 else np.full(len(levels), np.nan)
        return contrast @ levels, se
    return contrast @ levels, np.sqrt(np.maximum(np.diag(contrast @ covariance @ contrast.T), 0.0))


def _ratings(grades: pd.DataFrame, marks: pd.DataFrame) -> pd.DataFrame:
    """Long ratings for the Rasch model: every grader's blind mark and every judge's usual mark."""
    latest = latest_grades(grades)
    blind = latest[latest["role"] == GRADE_ROLE]
    humans = pd.DataFrame({"answer": _answer_key(blind), "criterion": blind["criterion"].astype(str),
                           "rater": blind["grader"].astype(str), "kind": HUMAN_RATER,
                           "points": blind["points"].astype(float), "max_points": blind["max_points"].astype(float)})
    judges = pd.DataFrame({"answer": _answer_key(marks), "criterion": marks["criterion"].astype(str),
                           "rater": marks["profile"].astype(str), "kind": JUDGE_RATER,
                           "points": marks["first"].astype(float), "max_points": marks["max_points"].astype(float)})
    return pd.concat([humans, judges], ignore_index=True)


def _answer_key(frame: pd.DataFrame) -> pd.Series:
    return frame["item_id"].astype(str) + "|" + frame["model"].astype(str) + "|" + frame["condition"].astype(str)


# ---------------------------------------------------------------- the calibration table

def _breakdown(by: str) -> list[str]:
    parts = [p.strip() for p in str(by or "").split(",") if p.strip() and p.strip() != "judge"]
    bad = [p for p in parts if p not in BREAKDOWNS]
    if bad:
        from ..errors import UserError

        raise UserError(f"by={','.join(bad)}: break the calibration down by judge (default), "
                        f"{', '.join(BREAKDOWNS)} (comma-separated)")
    return [BREAKDOWNS[p] for p in parts]


def calibration(grades: pd.DataFrame, judgements: pd.DataFrame, answers: pd.DataFrame, profiles: pd.DataFrame,
                *, by: str = "judge", min_alpha: float = JUDGE_MIN_ALPHA, max_severity: float = JUDGE_MAX_SEVERITY,
                min_human_alpha: float = HUMAN_MIN_ALPHA, n_boot: int = N_BOOT, seed: int = SEED) -> pd.DataFrame:
    """One row per judge (and per criterion, format or language with ``by``): see the module text.

    ``grades``: grade rows with ``max_points`` (the criterion's points); ``judgements``: the
    judgements of the profiles' current versions; ``answers``: item_id, model, condition, type,
    language of the answers in scope; ``profiles``: profile, judge_name, version, simulated.
    Without ``by`` the judge's own criteria are pooled (its marks on the rubric's checks are code,
    the same for every judge: they appear with ``by=criterion``).
    """
    groups = _breakdown(by)
    scope = answers[[*ANSWER_KEYS, "type", "language"]].drop_duplicates(ANSWER_KEYS)
    reference = human_reference(grades).merge(scope, on=ANSWER_KEYS)
    marks = judge_marks(judgements).merge(scope, on=ANSWER_KEYS)
    probes = probe_effects(judgements).merge(scope, on=ANSWER_KEYS)
    graded = latest_grades(grades).merge(scope, on=ANSWER_KEYS)
    unparsed = judgements[(judgements["probe"] == MAIN_PROBE) & judgements["error"].isna()
                          & judgements["points"].isna()].merge(scope, on=ANSWER_KEYS)
    method = judgements.drop_duplicates("criterion").set_index("criterion")["method"] if len(judgements) else {}
    rows = []
    info = profiles.set_index("profile") if len(profiles) else pd.DataFrame()
    for profile in sorted(marks["profile"].unique()) if len(marks) else []:
        mine = marks[marks["profile"] == profile]
        if "criterion" not in groups:
            mine = mine[mine["method"] == JUDGE_METHOD]
        cells = [((), mine)] if not groups else list(mine.groupby(groups, observed=True))
        for key, cell in cells:
            key = key if isinstance(key, tuple) else (key,)
            where = dict(zip(groups, key))
            crits = set(cell["criterion"])
            in_cell = _in(reference, where, crits)
            humans = _in(graded, where, crits)
            row = {"judge": profile, "judge_name": _get(info, profile, "judge_name", profile),
                   "version": _get(info, profile, "version", ""),
                   "simulated": bool(_get(info, profile, "simulated", False)),
                   "criterion": where.get("criterion", ALL), "type": where.get("type", ALL),
                   "language": where.get("language", ALL), "min_alpha": min_alpha, "max_severity": max_severity,
                   "min_human_alpha": min_human_alpha,
                   "unparsed": int(len(_in(unparsed[unparsed["profile"] == profile], where, crits)))}
            row.update(_human_agreement(humans, n_boot, seed))
            row["humans_agree"] = bool(np.isfinite(row["human_alpha"]) and row["human_alpha"] >= min_human_alpha)
            compared = cell.merge(in_cell.loc[in_cell["settled"].astype(bool), UNIT_KEYS], on=UNIT_KEYS)
            row["n"] = int(compared[ANSWER_KEYS].drop_duplicates().shape[0])
            row["n_units"] = int(len(compared))
            row["n_settled"] = int(in_cell["settled"].sum())
            row["n_pending"] = int((~in_cell["settled"].astype(bool)).sum())
            row.update(_stability(cell, _in(probes[probes["profile"] == profile], where, crits)))
            if not row["humans_agree"]:
                row.update(passes=False, reason=_human_reason(row, min_human_alpha))
                rows.append(row)
                continue
            row.update(_judge_agreement(cell, in_cell, n_boot, seed))
            # the judge beside the graders alone: another judge's marks never move this one's severity
            sev = rater_severities(_ratings(humans, cell))
            mine_sev = sev[sev["rater"] == profile]
            if len(mine_sev):
                r = mine_sev.iloc[0]
                row.update(severity=r["severity"], severity_se=r["severity_se"], severity_low=r["severity_low"],
                           severity_high=r["severity_high"], severity_note=r["note"])
            row.update(_gate(row, min_alpha, max_severity, method))
            rows.append(row)
    frame = pd.DataFrame(rows)
    for column in CALIBRATION_COLUMNS:
        if column not in frame:
            frame[column] = np.nan
    return frame[CALIBRATION_COLUMNS].reset_index(drop=True)


def _get(info: pd.DataFrame, profile: str, column: str, default):
    if len(info) and profile in info.index and column in info:
        value = info.at[profile, column]
        return default if value is None or (isinstance(value, float) and np.isnan(value)) else value
    return default


def _in(frame: pd.DataFrame, where: dict, criteria: set) -> pd.DataFrame:
    out = frame[frame["criterion"].isin(criteria)] if len(frame) else frame
    for column, value in where.items():
        if column != "criterion" and len(out):
            out = out[out[column] == value]
    return out


def _units(frame: pd.DataFrame) -> pd.Series:
    return _answer_key(frame) + "|" + frame["criterion"].astype(str)


def _human_agreement(graded: pd.DataFrame, n_boot: int, seed: int) -> dict:
    blind = graded[graded["role"] == GRADE_ROLE] if len(graded) else graded
    if blind.empty:
        return {"n_graders": 0, "human_alpha": np.nan, "human_alpha_low": np.nan, "human_alpha_high": np.nan}
    units = _units(blind)
    frac = blind["points"].astype(float) / blind["max_points"].astype(float)
    table = pd.DataFrame({"unit": units, "grader": blind["grader"].astype(str), "v": frac.to_numpy()})
    wide = table.pivot_table(index="grader", columns="unit", values="v", aggfunc="last")
    clusters = np.array([u.rsplit("|", 1)[0] for u in wide.columns])
    alpha, low, high = alpha_interval(wide.to_numpy(dtype=float), clusters=clusters, n_boot=n_boot, seed=seed)
    return {"n_graders": int(blind["grader"].nunique()), "human_alpha": alpha, "human_alpha_low": low,
            "human_alpha_high": high}


def _human_reason(row: dict, min_human_alpha: float) -> str:
    if not row["n_graders"]:
        return "no human grades for these answers yet: nothing to calibrate against"
    if not np.isfinite(row["human_alpha"]):
        return "no answer has two or more graders yet: human agreement unknown, nothing to calibrate against"
    return (f"the graders do not agree (alpha {row['human_alpha']:.2f} < {min_human_alpha:.2f}): no judge can be "
            "calibrated against them until they do")


def _judge_agreement(cell: pd.DataFrame, reference: pd.DataFrame, n_boot: int, seed: int) -> dict:
    both = cell.merge(reference.loc[reference["settled"].astype(bool), [*UNIT_KEYS, "human"]], on=UNIT_KEYS)
    if both.empty:
        return {"alpha": np.nan, "alpha_low": np.nan, "alpha_high": np.nan, "kappa": np.nan, "kappa_low": np.nan,
                "kappa_high": np.nan, "exact_agreement": np.nan}
    j = (both["judge"] / both["max_points"]).to_numpy(dtype=float)
    h = (both["human"] / both["max_points"]).to_numpy(dtype=float)
    clusters = _answer_key(both).to_numpy()
    alpha, alow, ahigh = alpha_interval(np.vstack([j, h]), clusters=clusters, n_boot=n_boot, seed=seed)
    kappa, klow, khigh = weighted_kappa_interval(j, h, clusters=clusters, n_boot=n_boot, seed=seed)
    return {"alpha": alpha, "alpha_low": alow, "alpha_high": ahigh, "kappa": kappa, "kappa_low": klow,
            "kappa_high": khigh, "exact_agreement": float(np.mean(j == h))}


def _stability(cell: pd.DataFrame, probes: pd.DataFrame) -> dict:
    repeated = cell[cell["n_repeats"] > 1]
    run_sd = float(np.sqrt(np.mean(repeated["sd"] ** 2))) if len(repeated) else np.nan
    out = {"run_sd": run_sd, "n_repeated": int(len(repeated))}
    pos = probes[probes["probe"] == REORDERED_PROBE] if len(probes) else probes
    pad = probes[probes["probe"] == PADDED_PROBE] if len(probes) else probes
    out["position_changed"] = float(np.mean(pos["probed"] != pos["main"])) if len(pos) else np.nan
    out["position_n"] = int(len(pos))
    out["verbosity_shift"] = float(np.mean(pad["probed"] - pad["main"])) if len(pad) else np.nan
    out["verbosity_changed"] = float(np.mean(pad["probed"] != pad["main"])) if len(pad) else np.nan
    out["verbosity_n"] = int(len(pad))
    return out


def _gate(row: dict, min_alpha: float, max_severity: float, method) -> dict:
    """Pass or fail, and every reason for a failure, in words with the numbers."""
    reasons = []
    alpha, severity = row.get("alpha"), row.get("severity")
    low, high = row.get("severity_low"), row.get("severity_high")
    if row.get("n_settled", 0) == 0 or alpha is None or not np.isfinite(alpha):
        reasons.append("no settled human grade to compare with")
    elif alpha < min_alpha:
        reasons.append(f"alpha {alpha:.2f} < {min_alpha:.2f} against the adjudicated human grades")
    if severity is None or not np.isfinite(severity):
        note = row.get("severity_note") or "not estimable"
        reasons.append(f"severity {note}")
    elif abs(severity) > max_severity:
        words = "more lenient" if severity < 0 else "more severe"
        reasons.append(f"severity {severity:+.2f} logit ({words} than the graders) beyond ±{max_severity:.2f}")
    elif low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        reasons.append(f"severity {severity:+.2f} logit has no 95% interval: not shown within ±{max_severity:.2f}")
    elif low < -max_severity or high > max_severity:
        reasons.append(f"severity {severity:+.2f} logit, but its 95% interval [{low:+.2f}, {high:+.2f}] reaches past "
                       f"±{max_severity:.2f}: not shown within the gate (more graded answers narrow it)")
    if row.get("criterion") not in (ALL, None) and isinstance(method, pd.Series) \
            and method.get(row["criterion"]) == CHECK_METHOD:
        reasons = [f"{r} (this criterion is a check: the rubric's code, not the judge)" for r in reasons]
    passes = not reasons
    return {"passes": passes, "reason": "passes: " + (f"alpha {alpha:.2f} >= {min_alpha:.2f}, severity "
                                                      f"{severity:+.2f} logit with its 95% interval [{low:+.2f}, "
                                                      f"{high:+.2f}] within ±{max_severity:.2f}")
            if passes else "; ".join(reasons)}


def severity_table(grades: pd.DataFrame, judgements: pd.DataFrame, answers: pd.DataFrame,
                   criteria: set[str] | None = None) -> pd.DataFrame:
    """Every grader's and judge's severity, relative to the graders' mean (the judges' own criteria
    by default): the graders from a model of the graders alone, each judge from a model of the
    graders and that judge (as in the calibration)."""
    scope = answers[[*ANSWER_KEYS, "type", "language"]].drop_duplicates(ANSWER_KEYS)
    marks = judge_marks(judgements).merge(scope, on=ANSWER_KEYS)
    if criteria is None:
        criteria = set(marks.loc[marks["method"] == JUDGE_METHOD, "criterion"])
    marks = marks[marks["criterion"].isin(criteria)]
    graded = latest_grades(grades).merge(scope, on=ANSWER_KEYS)
    graded = graded[graded["criterion"].isin(criteria)]
    parts = [rater_severities(_ratings(graded, marks.iloc[0:0]))]
    for _, mine in marks.groupby("profile"):
        table = rater_severities(_ratings(graded, mine))
        parts.append(table[table["kind"] == JUDGE_RATER])
    frame = pd.concat([p for p in parts if len(p)], ignore_index=True) if any(len(p) for p in parts) else parts[0]
    return frame.sort_values(["kind", "rater"]).reset_index(drop=True)


def confusion(grades: pd.DataFrame, judgements: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """Settled human mark x judge mark counts per judge and criterion (``share_of_human``: the row share)."""
    scope = answers[ANSWER_KEYS].drop_duplicates()
    reference = human_reference(grades).merge(scope, on=ANSWER_KEYS)
    marks = judge_marks(judgements).merge(scope, on=ANSWER_KEYS)
    both = marks.merge(reference.loc[reference["settled"].astype(bool), [*UNIT_KEYS, "human"]], on=UNIT_KEYS)
    if both.empty:
        return pd.DataFrame(columns=CONFUSION_COLUMNS)
    counts = both.groupby(["profile", "criterion", "human", "judge", "max_points"], observed=True).size()
    counts = counts.rename("n").reset_index()
    totals = counts.groupby(["profile", "criterion", "human"], observed=True)["n"].transform("sum")
    out = pd.DataFrame({"judge": counts["profile"], "criterion": counts["criterion"],
                        "human_points": counts["human"].astype(float), "judge_points": counts["judge"].astype(float),
                        "n": counts["n"].astype(int), "share_of_human": counts["n"] / totals,
                        "max_points": counts["max_points"].astype(float)})
    return out.sort_values(["judge", "criterion", "human_points", "judge_points"]).reset_index(drop=True)


def grading_summary(grades: pd.DataFrame, answers: pd.DataFrame) -> pd.DataFrame:
    """Per rubric: answers graded, graders, criteria marks agreed, adjudicated and still pending."""
    scope = answers[ANSWER_KEYS].drop_duplicates()
    graded = latest_grades(grades).merge(scope, on=ANSWER_KEYS) if len(grades) else grades
    cols = ["rubric", "answers_graded", "graders", "grades", "units", "agreed", "adjudicated", "pending",
            "simulated"]
    if graded.empty:
        return pd.DataFrame(columns=cols)
    rows = []
    for rubric, part in graded.groupby("rubric"):
        reference = human_reference(part)
        blind = part[part["role"] == GRADE_ROLE]
        rows.append({"rubric": rubric, "answers_graded": int(blind[ANSWER_KEYS].drop_duplicates().shape[0]),
                     "graders": int(blind["grader"].nunique()), "grades": int(len(blind)),
                     "units": int(len(reference)), "agreed": int(reference["agree"].sum()),
                     "adjudicated": int(reference["adjudicated"].sum()),
                     "pending": int((~reference["settled"]).sum()), "simulated": bool(part["simulated"].any())})
    return pd.DataFrame(rows, columns=cols)
