"""The key auditor's combined signal: how strongly the answers say an item's key is wrong (pure functions).

Why one number: each flag rule of `keyflags` looks at one symptom, and a wrong key usually shows
several at once (stronger examinees fail the item, choose one wrong option, and misfit the IRT
model); ranking by any one of them alone buries the items where two moderate symptoms agree.

Each signal is turned into standardized evidence ``z`` (a standard normal deviate: about N(0, 1)
when the key is right and the signal carries nothing, large and positive when it points at a
wrong key; 0 when the signal cannot be computed for the item):

- ``discrimination``: the corrected point-biserial r_pb, ``z = -atanh(r) * sqrt(n - 3)`` (Fisher z;
  positive when stronger examinees do worse on the item);
- ``distractor`` (single-answer option items): how much better a wrong option explains who chose
  what than the key does. Each examinee's ability is the logit of its mean over the *other* items
  (centred); if option t is the right answer, an examinee of ability theta knows it with the Rasch
  probability P = 1 / (1 + exp(b - theta)) and otherwise picks one of the other options at random.
  With the item's difficulty b profiled out (a grid over -4..4 logits), D = max over wrong options of
  log L(t) - log L(key), and ``z = sign(D) sqrt(2 |D|)`` (the signed root of the likelihood ratio).
  Positive when the stronger examinees agree on one wrong option. Items with several keyed options
  (checkboxes) use the largest point-biserial of a wrong option instead (`analysis.distractors`),
  ``z = atanh(r) * sqrt(n - 3)``. The random-guess part is an assumption (real distractors attract
  unevenly), and the simulated bank of `bench keys` is made under the same assumption;
- ``misfit``: the item's underfit p of the IRT item fit (`analysis.irt_fit`: the larger of infit and
  outfit t, Bonferroni over the two), ``z = Phi^-1(1 - p)``;
- ``judge_human``: on judged open answers with a settled human grade, the item's share of answers
  where the judge's mark (as a fraction of the maximum) and the human's differ by half the scale or
  more, against the share over every item: the binomial ``z = (k - n p0) / sqrt(n p0 (1 - p0))``
  (a wrong reference answer misleads the judge, which grades against it, but not the human).

The combination is Stouffer's: ``combined = sum(z) / sqrt(k)`` over the k signals computed for the
item. The signals are not independent (a wrong key moves the first three together), so
``combined`` is a ranking score, not a test; the flags of `keyflags` (with their own multiplicity
control) decide what enters the queue, and ``combined`` orders it. `bench keys` measures how well.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import ndtri

#: The signals, in the order they are shown.
SIGNALS = ("misfit", "distractor", "discrimination", "judge_human")
#: A signal is named among an item's reasons when its evidence points at a wrong key (z above this), so that
#: the words say what the combined signal adds up (each with its z: the reader sees which are weak).
REASON_Z = 0.0
#: Largest |r| used in Fisher's z (r = ±1 on a dozen examinees would give an infinite z).
R_CLIP = 0.995
#: Judge and human differ on an answer when their marks (fractions of the maximum) differ by at least this.
JUDGE_GAP = 0.5

EVIDENCE_COLUMNS = ["item_id", "signal", "z", "words"]
SIGNAL_COLUMNS = ["item_id", "combined", "n_signals", *[f"z_{s}" for s in SIGNALS], "evidence"]


def fisher_z(r, n) -> np.ndarray:
    """Fisher's z of correlations ``r`` on ``n`` pairs, scaled to a standard normal deviate (0 where undefined)."""
    r = np.clip(np.asarray(r, dtype=float), -R_CLIP, R_CLIP)
    n = np.asarray(n, dtype=float)
    z = np.arctanh(r) * np.sqrt(np.maximum(n - 3, 0))
    return np.where(np.isfinite(z), z, 0.0)


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows, columns=EVIDENCE_COLUMNS)


def discrimination_evidence(stats: pd.DataFrame) -> pd.DataFrame:
    """From `ctt.item_statistics` (corrected r_pb): items with an estimable r_pb."""
    d = stats[stats["r_pb"].notna()]
    z = -fisher_z(d["r_pb"], d["n_examinees"])
    return _frame([{"item_id": str(i), "signal": "discrimination", "z": float(v),
                    "words": f"discrimination r_pb {r:+.2f} (n {int(n)})"}
                   for i, v, r, n in zip(d["item_id"], z, d["r_pb"], d["n_examinees"])])


def distractor_evidence(table: pd.DataFrame) -> pd.DataFrame:
    """From `distractors.distractor_analysis`: per item, its wrong option with the largest point-biserial."""
    d = table[~table["is_key"].astype(bool) & table["r_pb"].notna()]
    if d.empty:
        return _frame([])
    top = d.sort_values(["item_id", "r_pb"], ascending=[True, False], kind="stable").drop_duplicates("item_id")
    z = fisher_z(top["r_pb"], top["n_examinees"])
    return _frame([{"item_id": str(i), "signal": "distractor", "z": float(v),
                    "words": f"wrong option {o}: point-biserial {r:+.2f} ({c} of {int(n)} chose it)"}
                   for i, v, o, c, n, r in zip(top["item_id"], z, top["option"], top["n_chose"], top["n_examinees"],
                                               top["r_pb"])])


#: The difficulty grid the key likelihood profiles over (logits).
B_GRID = np.linspace(-4.0, 4.0, 33)


def key_likelihood_evidence(scores: pd.DataFrame, choices: pd.DataFrame, keys: dict[str, set[str]]) -> pd.DataFrame:
    """Single-answer option items: the signed root likelihood ratio of the best wrong option against the key.

    ``scores``: the long frame of one examinee per model (model, item_id, score); ``choices``: model,
    item_id, ids (the options each answer chose); ``keys``: item_id -> keyed options."""
    single = {str(i): next(iter(k)) for i, k in keys.items() if len(k) == 1}
    d = scores[scores["item_id"].astype(str).isin(list(single))]
    if d.empty:
        return _frame([])
    totals = scores.groupby(scores["model"].astype(str), observed=True)["score"].agg(["sum", "count"])
    models = pd.Index(sorted(set(d["model"].astype(str))))
    items = pd.Index(sorted(set(d["item_id"].astype(str))))
    n_ex, n_items = len(models), len(items)
    e, i = models.get_indexer(d["model"].astype(str)), items.get_indexer(d["item_id"].astype(str))
    answered = np.zeros((n_ex, n_items), dtype=bool)
    answered[e, i] = True
    own = np.zeros((n_ex, n_items))
    own[e, i] = d["score"].to_numpy(dtype=float)
    total = totals["sum"].reindex(models).to_numpy(dtype=float)[:, None]
    count = totals["count"].reindex(models).to_numpy(dtype=float)[:, None]
    rest = (total - own + 0.5) / count  # mean over the other items, with a continuity half: never 0 or 1
    theta = np.log(rest / (1 - rest))
    n_answered = answered.sum(axis=0)
    theta = theta - (theta * answered).sum(axis=0) / np.maximum(n_answered, 1)  # centred per item

    c = choices[choices["item_id"].astype(str).isin(items) & choices["model"].astype(str).isin(models)]
    ce, ci = models.get_indexer(c["model"].astype(str)), items.get_indexer(c["item_id"].astype(str))
    chosen = [list(ids) for ids in c["ids"]]
    letters = pd.Index(sorted({str(o) for ids in chosen for o in ids} | set(single[t] for t in items)))
    key_code = letters.get_indexer([single[t] for t in items])
    present = np.zeros((len(letters), n_items), dtype=bool)
    present[key_code, np.arange(n_items)] = True
    picks = np.zeros((len(letters), n_items), dtype=int)  # how many answers chose each option
    code = np.full((n_ex, n_items), -1)
    index = {o: k for k, o in enumerate(letters)}
    for ex, it, ids in zip(ce.tolist(), ci.tolist(), chosen):
        if not answered[ex, it]:
            continue
        for o in set(ids):
            k = index[str(o)]
            present[k, it] = True
            picks[k, it] += 1
        if len(ids) == 1:
            code[ex, it] = index[str(ids[0])]
    n_options = present.sum(axis=0)
    loglik = np.full((len(letters), n_items), -np.inf)
    step = max(1, 2_000_000 // (n_ex * len(B_GRID)))
    for lo in range(0, n_items, step):  # examinee x item x difficulty, in chunks of about 2 million cells
        cut = slice(lo, lo + step)
        know = 1.0 / (1.0 + np.exp(B_GRID[None, None, :] - theta[:, cut, None]))
        other = (1.0 - know) / np.maximum(n_options[None, cut, None] - 1, 1)
        gain = np.log(know) - np.log(other)
        base = (np.log(other) * answered[:, cut, None]).sum(axis=0)
        for k in range(len(letters)):
            hit = ((code[:, cut] == k) & answered[:, cut]).astype(float)
            ll = (np.einsum("ei,eig->ig", hit, gain) + base).max(axis=1)  # the difficulty profiled out
            loglik[k, cut] = np.where(present[k, cut], ll, -np.inf)
    at_key = loglik[key_code, np.arange(n_items)]
    rivals = loglik.copy()
    rivals[key_code, np.arange(n_items)] = -np.inf
    best = rivals.argmax(axis=0)
    gain = rivals[best, np.arange(n_items)] - at_key
    rows = []
    for t, item_id in enumerate(items):
        if n_answered[t] < 3 or n_options[t] < 2 or not np.isfinite(gain[t]):
            continue
        g, option, key = float(gain[t]), letters[best[t]], single[item_id]
        rows.append({"item_id": item_id, "signal": "distractor", "z": float(np.sign(g) * np.sqrt(2 * abs(g))),
                     "words": f"wrong option {option} against key {key} as the right answer: likelihood ratio "
                              f"{np.exp(min(g, 700)):.3g} ({int(picks[best[t], t])} of {int(n_answered[t])} chose "
                              f"{option})"})
    return _frame(rows)


def misfit_evidence(fit_table: pd.DataFrame) -> pd.DataFrame:
    """From `irt_fit.item_fit`: the probit of each item's underfit p."""
    d = fit_table[np.isfinite(fit_table["underfit_p"].astype(float))]
    p = np.clip(d["underfit_p"].to_numpy(dtype=float), 1e-12, 1.0)
    z = np.maximum(ndtri(1.0 - p), -8.0)  # p = 1 (a clear overfit) is no evidence of a wrong key, not minus infinity
    return _frame([{"item_id": str(i), "signal": "misfit", "z": float(v),
                    "words": f"IRT fit: outfit {o:.2f}, infit {f:.2f}"}
                   for i, v, o, f in zip(d["item_id"], z, d["outfit"], d["infit"])])


def judge_disagreement(marks: pd.DataFrame) -> pd.DataFrame:
    """Per item: answers judged and settled by people (n), and how many the judge and the human marked
    at least `JUDGE_GAP` of the scale apart (k). ``marks``: item_id, judge, human (fractions of the maximum)."""
    if marks.empty:
        return pd.DataFrame(columns=["item_id", "n", "k"])
    apart = (marks["judge"].astype(float) - marks["human"].astype(float)).abs() >= JUDGE_GAP
    out = pd.DataFrame({"item_id": marks["item_id"].astype(str), "k": apart.astype(int)})
    return out.groupby("item_id").agg(n=("k", "size"), k=("k", "sum")).reset_index()


def judge_evidence(counts: pd.DataFrame) -> pd.DataFrame:
    """From `judge_disagreement`: the binomial z of each item's disagreements against the pooled share."""
    if counts.empty or counts["n"].sum() == 0:
        return _frame([])
    p0 = float(counts["k"].sum() / counts["n"].sum())
    p0 = min(max(p0, 0.5 / counts["n"].sum()), 1 - 0.5 / counts["n"].sum())  # a pooled 0 or 1 leaves no scale
    n, k = counts["n"].to_numpy(dtype=float), counts["k"].to_numpy(dtype=float)
    z = (k - n * p0) / np.sqrt(n * p0 * (1 - p0))
    return _frame([{"item_id": str(i), "signal": "judge_human", "z": float(v),
                    "words": f"judge and human graders marked {int(kk)} of {int(nn)} answers apart (over every "
                             f"judged item {p0:.0%})"}
                   for i, v, kk, nn in zip(counts["item_id"], z, k, n)])


def combine(evidence: pd.DataFrame, items: list[str] | None = None) -> pd.DataFrame:
    """Stouffer's combination per item, highest first: combined, the number of signals, each signal's z,
    and the signals above `REASON_Z` in words (strongest first). ``items``: every item to rank
    (an item without any signal gets combined 0)."""
    ids = sorted(set(items or []) | set(evidence["item_id"].astype(str)))
    if not ids:
        return pd.DataFrame(columns=SIGNAL_COLUMNS)
    wide = evidence.pivot_table(index="item_id", columns="signal", values="z", aggfunc="max").reindex(ids)
    for signal in SIGNALS:
        if signal not in wide:
            wide[signal] = np.nan
    z = wide[list(SIGNALS)].to_numpy(dtype=float)
    k = np.isfinite(z).sum(axis=1)
    combined = np.where(k > 0, np.nansum(z, axis=1) / np.sqrt(np.maximum(k, 1)), 0.0)
    strong = evidence[evidence["z"] > REASON_Z].sort_values("z", ascending=False, kind="stable")
    words = strong.groupby("item_id", sort=False).apply(
        lambda g: "; ".join(f"{w} (z {v:+.1f})" for w, v in zip(g["words"], g["z"])), include_groups=False)
    out = pd.DataFrame({"item_id": ids, "combined": combined, "n_signals": k.astype(int),
                        **{f"z_{s}": wide[s].to_numpy(dtype=float) for s in SIGNALS},
                        "evidence": [words.get(i, "") for i in ids]})
    return out.sort_values(["combined", "item_id"], ascending=[False, True], kind="stable").reset_index(drop=True)


__all__ = ["EVIDENCE_COLUMNS", "JUDGE_GAP", "REASON_Z", "SIGNALS", "SIGNAL_COLUMNS", "combine",
           "discrimination_evidence", "distractor_evidence", "fisher_z", "judge_disagreement", "judge_evidence",
           "key_likelihood_evidence", "misfit_evidence"]
