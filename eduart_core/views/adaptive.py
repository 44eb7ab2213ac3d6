"""Views of adaptive runs (`run --adaptive`): one run's trajectory, and the ranking on a bank version's scale.

A trajectory is read as stored (written from the run's journal and the frozen bank version): the
ability and its 95% interval (EAP +- 1.96 posterior SD) after each answer, the item chosen with
its format and difficulty, and the stopping point. The ranking puts adaptive runs beside the models
that answered every bank item, all on the same bank version's scale: a full-run model's ability is
the EAP of its stored answers to the bank's items, computed with the same frozen parameters and
prior as the adaptive runs (never the IRT views' own fit, whose scale is another one).
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from ..analysis.intervals import Z95
from ..errors import UserError
from ..selection import Selection
from ._base import EmptySelection, Source, cached


@cached(maxsize=8)
def _stored_runs(src: Source, dataset: str | None) -> pd.DataFrame:
    """The stored adaptive runs of a dataset (None: of every dataset), read once per data version:
    the Runs page lists them on every rerun, and no filter or profile changes them."""
    from ..store.adaptive import load_adaptive_runs

    return load_adaptive_runs(src.store, dataset)


def adaptive_runs(src: Source, sel: Selection) -> pd.DataFrame:
    """The adaptive runs of the dataset: bank version, rules, items asked, final ability and SE on the bank's scale, why it stopped."""
    frame = _stored_runs(src, sel.dataset)
    frame.attrs["caption"] = (f"{len(frame)} adaptive run(s) of {sel.dataset}; abilities in logits on the named bank "
                              "version's scale (EAP, SE = posterior SD).")
    return frame


def adaptive_trajectory(src: Source, sel: Selection, run: str = "") -> pd.DataFrame:
    """One adaptive run's trajectory (option run=ID): each item chosen (format, difficulty), the answer's level, the ability and its 95% interval after it, the stopping point."""
    from ..store.adaptive import load_trajectory

    runs = _stored_runs(src, None)
    if not run:
        known = ", ".join(runs["run_id"].astype(str)) or "none yet"
        raise UserError(f"name the adaptive run: --option run=ID (adaptive runs: {known})")
    header = runs[runs["run_id"].astype(str) == str(run)]
    if header.empty:
        known = ", ".join(runs["run_id"].astype(str)) or "none yet"
        raise UserError(f"no adaptive run {run!r} (adaptive runs: {known})")
    head = header.iloc[0]
    frame = load_trajectory(src.store, str(run))
    frame["ci_low"] = frame["ability"] - Z95 * frame["ability_se"]
    frame["ci_high"] = frame["ability"] + Z95 * frame["ability_se"]
    frame["bank_version"] = int(head["bank_version"])
    frame["stopped_here"] = frame["step"] == frame["step"].max() if len(frame) else []
    stop = {"target_se": "reached the target SE", "max_items": "reached the item cap",
            "bank_exhausted": "no item left"}.get(head["stop_reason"], "not finished (resume the launch)")
    frame.attrs.update({"run_id": str(run), "bank_version": int(head["bank_version"]), "rules": str(head["rules"]),
                        "target_se": float(head["target_se"]), "stop_reason": head["stop_reason"]})
    frame.attrs["caption"] = (
        f"Adaptive run {run} on {head['dataset']} bank version {int(head['bank_version'])}: {int(head['n_items'])} of "
        f"{int(head['n_bank'])} bank items answered"
        + (f" ({int(head['n_skipped'])} failed requests skipped)" if int(head["n_skipped"]) else "")
        + f"; final ability {float(head['ability']):+.2f} logit, SE {float(head['ability_se']):.2f} (target "
        f"{float(head['target_se']):.2f}); {stop}. Ability after each answer with its 95% interval "
        f"(EAP +- 1.96 posterior SD). Rules: {head['rules']}.")
    return frame


def _full_abilities(src: Source, sel: Selection, setup, condition: str) -> pd.DataFrame:
    """Models that answered the bank's items in the bank's condition: EAP on the bank version's scale."""
    from ..formats import score_levels
    from ._base import selected_scores
    from .irt import score_parts_of

    scope = Selection(dataset=sel.dataset, condition=condition, profile=setup.profile)
    try:
        rows = selected_scores(src, scope)
    except EmptySelection:
        return pd.DataFrame(columns=["examinee", "kind", "n_items", "ability", "ability_se"])
    engine = setup.engine
    index = {str(i): k for k, i in enumerate(engine.bank.item_ids)}
    rows = rows[rows["item_id"].astype(str).isin(set(index))]
    parts = score_parts_of(src, sel.dataset)
    out = []
    for model, part in rows.groupby("model", sort=True):
        part = part.drop_duplicates("item_id")
        loglik = np.zeros(len(engine.grid))
        for item_id, fmt, score in zip(part["item_id"].astype(str), part["type"], part["score"].astype(float)):
            level = int(score_levels(str(fmt), np.array([score]), np.array([parts.get(item_id, 1)]))[0])
            k = index[item_id]
            loglik += engine.log_likelihood(k, engine.bank.code(k, level))
        theta, se = engine.estimate(loglik)
        out.append({"examinee": str(model), "kind": f"full, {len(part)} items", "n_items": len(part),
                    "ability": theta, "ability_se": se})
    return pd.DataFrame(out)


def adaptive_ranking(src: Source, sel: Selection, version: int = 0) -> pd.DataFrame:
    """Adaptive runs beside the models that answered every bank item, on one bank version's scale (option version=N; 0: the latest): ability, 95% interval, ranks and ties, each row marked "adaptive, n items" or "full, n items"."""
    from ..analysis.irt_curves import ability_ranking
    from ..runner.adaptive import prepare
    from ..store.banks import load_bank_versions

    versions = load_bank_versions(src.store, sel.dataset)
    if versions.empty:
        raise EmptySelection(f"{sel.dataset} has no item bank yet: nothing to rank adaptive runs on.")
    number = int(version or versions["version"].max())
    setup = prepare(src.store, sel.dataset, {"bank": number, "target_se": 0.30})
    head = versions[versions["version"].astype(int) == number].iloc[0]
    full = _full_abilities(src, sel, setup, (list(head["conditions"] or []) or [sel.condition])[0])
    runs = _stored_runs(src, sel.dataset)
    runs = runs[runs["bank_version"].astype(int) == number]
    adaptive = pd.DataFrame({"examinee": runs["run_id"].astype(str),
                             "kind": [f"adaptive, {int(n)} items" for n in runs["n_items"]],
                             "n_items": runs["n_items"].astype(int), "ability": runs["ability"].astype(float),
                             "ability_se": runs["ability_se"].astype(float)})
    both = pd.concat([f for f in (full, adaptive) if len(f)], ignore_index=True)
    if both.empty:
        raise EmptySelection(f"no model answered the items of {sel.dataset} bank version {number}.")
    out = ability_ranking(both)
    out["ci_low"] = out["ability"] - Z95 * out["ability_se"]
    out["ci_high"] = out["ability"] + Z95 * out["ability_se"]
    out["bank_version"] = number
    out.attrs["caption"] = (
        f"{len(adaptive)} adaptive run(s) and {len(full)} model(s) that answered the bank's items, on the scale of "
        f"{sel.dataset} bank version {number} (EAP with the bank's frozen parameters and prior; 95% interval = "
        f"EAP +- 1.96 posterior SD). Two examinees are told apart when their abilities differ by more than 1.96 SE of "
        f"the difference (no multiplicity correction); rank_best and rank_worst are the ranks each could hold.")
    return out


def adaptive_wright_map(src: Source, sel: Selection, version: int = 0) -> pd.DataFrame:
    """The bank version's Wright map: adaptive runs and exam respondents beside the full-run models (`adaptive_ranking`) and the bank's item locations and thresholds, on one logit scale (option version=N)."""
    from ..analysis.irt_curves import wright_map
    from ..store.banks import load_bank

    board = adaptive_ranking(src, sel, version)
    number = int(board["bank_version"].iloc[0])
    _, items = load_bank(src.store, sel.dataset, number)
    items = items[items["in_bank"].astype(bool)].assign(informative=True)
    out = wright_map(items, board[["examinee", "ability", "ability_se"]])
    kinds = dict(zip(board["examinee"].astype(str), board["kind"]))
    out["examinee_kind"] = [kinds.get(str(label)) if kind == "examinee" else None
                            for kind, label in zip(out["kind"], out["label"])]
    out["bank_version"] = number
    out.attrs["caption"] = (f"Wright map of {sel.dataset} bank version {number}: " + board.attrs["caption"]
                            + " Items at their frozen locations; partial-credit items also at their thresholds.")
    return out
