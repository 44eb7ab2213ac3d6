"""What a fitted IRT model says: item and test information, item characteristic curves, the Wright
map, and a ranking of abilities that shows which examinees cannot be told apart.

Why curves per format: a format measures where its information peaks. If multiple choice is
saturated for strong models (the published finding), its information sits at low ability and
says little about the best models; the curves make that visible. Partial-credit items carry
information at each of their thresholds: the category curves show which score level informs
where.

Items come as the rows of `IrtFit.items`: a right/wrong item by its difficulty and
discrimination, a partial-credit item by its thresholds around its location (``difficulty``, the
mean of the thresholds), so moving the difficulty moves the whole item.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from ..vocab import format_rank
from .intervals import Z95
from .irt_levels import category_information, category_probabilities, item_information

#: Ability grid of every curve, in logits around the latent mean (0).
GRID_HALF_WIDTH = 5.0
GRID_POINTS = 101


def ability_grid(latent_sd: float = 1.0, points: int = GRID_POINTS) -> np.ndarray:
    """-5..5 latent SDs (at least -5..5 logits), where examinees and items can sit."""
    half = GRID_HALF_WIDTH * max(1.0, float(latent_sd))
    return np.linspace(-half, half, points)


def probability(theta: np.ndarray, difficulty: np.ndarray, discrimination: np.ndarray) -> np.ndarray:
    """P(right | theta) for each item (rows) at each ability (columns)."""
    a = np.asarray(discrimination, dtype=float)[:, None]
    return expit(a * (np.asarray(theta, dtype=float)[None, :] - np.asarray(difficulty, dtype=float)[:, None]))


def information(theta: np.ndarray, difficulty: np.ndarray, discrimination: np.ndarray) -> np.ndarray:
    """Fisher information a^2 P (1 - P) of each item (rows) at each ability (columns)."""
    p = probability(theta, difficulty, discrimination)
    a = np.asarray(discrimination, dtype=float)[:, None]
    return a * a * p * (1.0 - p)


def _fitted(items: pd.DataFrame) -> pd.DataFrame:
    return items[items["informative"].astype(bool) & items["difficulty"].notna()]


def _step_lists(items: pd.DataFrame) -> list[list[float]]:
    """Each item's thresholds, placed around its difficulty (one threshold: the difficulty itself)."""
    lists = items["thresholds"] if "thresholds" in items else pd.Series([[]] * len(items), index=items.index)
    out = []
    for steps, location in zip(lists, items["difficulty"].to_numpy(dtype=float)):
        steps = [float(v) for v in steps] if isinstance(steps, list | tuple | np.ndarray) and len(steps) > 1 else []
        out.append([v - float(np.mean(steps)) + location for v in steps] if steps else [location])
    return out


def item_parameters(items: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """(slope, steps items x max steps, NaN-padded) of item rows, for `analysis.irt_levels`."""
    lists = _step_lists(items)
    width = max([len(v) for v in lists] + [1])
    steps = np.full((len(lists), width), np.nan)
    for row, values in enumerate(lists):
        steps[row, :len(values)] = values
    return items["discrimination"].to_numpy(dtype=float), steps


def information_at(items: pd.DataFrame, theta: float) -> np.ndarray:
    """Each item's information at one ability (NaN for non-informative items)."""
    out = np.full(len(items), np.nan)
    ok = (items["informative"].astype(bool) & items["difficulty"].notna()).to_numpy()
    if ok.any():
        out[ok] = item_information(np.array([theta]), *item_parameters(items[ok]))[:, 0]
    return out


def information_curves(items: pd.DataFrame, latent_sd: float = 1.0) -> pd.DataFrame:
    """Test information per format and for all items along the ability scale.

    Columns: type ("all" for the whole test), theta, information (sum over the format's items,
    every score level counted: a^2 Var(X | theta) per item), information_per_item (the same divided
    by its item count, so formats of different sizes compare), n_items, se_theta (1 / sqrt(information):
    the measurement error an examinee at that ability would have on those items alone).
    """
    fitted = _fitted(items)
    grid = ability_grid(latent_sd)
    rows = []
    groups = [(t, g) for t, g in fitted.groupby("type", sort=False)]
    groups.sort(key=lambda tg: format_rank(tg[0]))
    for name, group in [*groups, ("all", fitted)]:
        if group.empty:
            continue
        info = item_information(grid, *item_parameters(group)).sum(axis=0)
        with np.errstate(divide="ignore"):
            se = np.where(info > 0, 1.0 / np.sqrt(info), np.nan)
        rows.append(pd.DataFrame({"type": name, "theta": grid, "information": info,
                                  "information_per_item": info / len(group), "n_items": len(group),
                                  "se_theta": se}))
    if not rows:
        return pd.DataFrame(columns=["type", "theta", "information", "information_per_item", "n_items", "se_theta"])
    return pd.concat(rows, ignore_index=True)


def _levels(items: pd.DataFrame) -> list[list[int]]:
    """The observed score level of each category of each item (0, 1 for a right/wrong item)."""
    names = items["threshold_levels"] if "threshold_levels" in items else pd.Series([[]] * len(items),
                                                                                    index=items.index)
    out = []
    for steps in names:
        if isinstance(steps, list | tuple | np.ndarray) and len(steps):
            out.append([int(str(steps[0]).split("-")[0])] + [int(str(s).split("-")[1]) for s in steps])
        else:
            out.append([0, 1])
    return out


def category_information_curves(items: pd.DataFrame, latent_sd: float = 1.0) -> pd.DataFrame:
    """Per format and score level: the information its items carry through that level along the ability scale.

    Each category's share of an item's information is P(level | theta) I(theta) (`irt_levels.
    category_information`); summed over a format's items per level (and divided by their count),
    the shares add up to the format's curve in `information_curves`. Columns: type, level, theta,
    information, information_per_item, n_items.
    """
    fitted = _fitted(items)
    grid = ability_grid(latent_sd)
    columns = ["type", "level", "theta", "information", "information_per_item", "n_items"]
    rows = []
    groups = sorted(((t, g) for t, g in fitted.groupby("type", sort=False)), key=lambda tg: format_rank(tg[0]))
    for name, group in groups:
        shares = category_information(grid, *item_parameters(group))            # items x points x categories
        by_level: dict[int, np.ndarray] = {}
        for row, levels in enumerate(_levels(group)):
            for code, level in enumerate(levels[: shares.shape[2]]):
                by_level[level] = by_level.get(level, 0.0) + shares[row, :, code]
        for level in sorted(by_level):
            rows.append(pd.DataFrame({"type": name, "level": level, "theta": grid, "information": by_level[level],
                                      "information_per_item": by_level[level] / len(group),
                                      "n_items": len(group)}))
    return pd.concat(rows, ignore_index=True)[columns] if rows else pd.DataFrame(columns=columns)


def item_curve(items: pd.DataFrame, item_id: str, latent_sd: float = 1.0) -> pd.DataFrame:
    """The item characteristic curve (and information) of one item: theta, p_right, information.

    For a partial-credit item p_right is the expected share of full credit (expected level /
    highest level), and columns ``p_level_<k>`` give each observed level's probability. Empty for
    an unknown or non-informative item (its status says why)."""
    row = _fitted(items)
    row = row[row["item_id"].astype(str) == str(item_id)]
    if row.empty:
        return pd.DataFrame(columns=["item_id", "theta", "p_right", "information"])
    grid = ability_grid(latent_sd)
    slope, steps = item_parameters(row)
    p = category_probabilities(grid, slope, steps)[0]                            # points x categories
    levels = _levels(row)[0]
    top = max(int(row["n_levels"].iloc[0]) - 1 if "n_levels" in row else levels[-1], 1)
    out = pd.DataFrame({"item_id": str(item_id), "theta": grid,
                        "p_right": p[:, : len(levels)] @ np.array(levels, dtype=float) / top,
                        "information": item_information(grid, slope, steps)[0]})
    if len(levels) > 2:
        for code, level in enumerate(levels):
            out[f"p_level_{level}"] = p[:, code]
    return out


def wright_map(items: pd.DataFrame, abilities: pd.DataFrame) -> pd.DataFrame:
    """Examinees, items and thresholds on one logit scale: kind (examinee | item | threshold), label,
    type, location, se. A threshold is where a partial-credit item's level and the one below are
    equally likely (right/wrong items have none besides their difficulty)."""
    people = abilities.dropna(subset=["ability"])
    fitted = _fitted(items)
    ex = pd.DataFrame({"kind": "examinee", "label": people["examinee"].astype(str), "type": None,
                       "location": people["ability"], "se": people["ability_se"]})
    it = pd.DataFrame({"kind": "item", "label": fitted["item_id"].astype(str), "type": fitted["type"],
                       "location": fitted["difficulty"], "se": fitted["difficulty_se"]})
    rows = []
    ses = fitted["threshold_se"] if "threshold_se" in fitted else pd.Series([[]] * len(fitted), index=fitted.index)
    names = fitted["threshold_levels"] if "threshold_levels" in fitted else ses
    for item_id, kind, steps, se, name in zip(fitted["item_id"].astype(str), fitted["type"], _step_lists(fitted),
                                              ses, names):
        if len(steps) > 1:
            for k, value in enumerate(steps):
                rows.append({"kind": "threshold", "label": f"{item_id} {name[k] if k < len(name) else k + 1}",
                             "type": kind, "location": value,
                             "se": float(se[k]) if isinstance(se, list) and k < len(se) else np.nan})
    th = pd.DataFrame(rows, columns=["kind", "label", "type", "location", "se"])
    return pd.concat([f for f in (ex, it, th) if len(f)], ignore_index=True) if len(th) else \
        pd.concat([ex, it], ignore_index=True)


def ability_ranking(abilities: pd.DataFrame, z: float = Z95) -> pd.DataFrame:
    """Abilities ranked, with the ranks each examinee could plausibly hold and who it is tied with.

    Two examinees are told apart when their abilities differ by more than z times the SE of the
    difference (sqrt(se_i^2 + se_j^2)), pairwise at 95% without a multiplicity correction.
    rank_best = 1 + examinees clearly above; rank_worst = count of examinees not clearly below
    (itself included); tied_with lists the others it cannot be told apart from.
    """
    a = abilities.dropna(subset=["ability"]).sort_values("ability", ascending=False, kind="stable")
    a = a.reset_index(drop=True)
    theta = a["ability"].to_numpy(dtype=float)
    se = a["ability_se"].to_numpy(dtype=float)
    diff = theta[:, None] - theta[None, :]
    with np.errstate(invalid="ignore"):
        sep = np.abs(diff) > z * np.sqrt(se[:, None] ** 2 + se[None, :] ** 2)
    above = (sep & (diff < 0)).sum(axis=1)
    below = (sep & (diff > 0)).sum(axis=1)
    labels = a["examinee"].astype(str).to_numpy()
    tied = [[labels[j] for j in range(len(a)) if j != i and not sep[i, j]] for i in range(len(a))]
    return a.assign(rank=np.arange(1, len(a) + 1), rank_best=1 + above, rank_worst=len(a) - below,
                    n_tied=[len(t) for t in tied], tied_with=["; ".join(t) for t in tied])


__all__ = ["ability_grid", "ability_ranking", "category_information_curves", "information", "information_at",
           "information_curves", "item_curve", "item_parameters", "probability", "wright_map"]
