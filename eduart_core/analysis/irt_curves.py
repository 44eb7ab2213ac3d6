"""What a fitted IRT model says: item and test information, item characteristic curves, the Wright
map, and a ranking of abilities that shows which examinees cannot be told apart.

Why curves per format: a format measures where its information peaks. If multiple choice is
saturated for strong models (the published finding), its information sits at low ability and
says little about the best models; the curves make that visible.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.special import expit

from ..vocab import format_rank
from .intervals import Z95

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


def information_at(items: pd.DataFrame, theta: float) -> np.ndarray:
    """Each item's information at one ability (NaN for non-informative items)."""
    out = np.full(len(items), np.nan)
    ok = (items["informative"].astype(bool) & items["difficulty"].notna()).to_numpy()
    if ok.any():
        out[ok] = information(np.array([theta]), items.loc[ok, "difficulty"].to_numpy(),
                              items.loc[ok, "discrimination"].to_numpy())[:, 0]
    return out


def information_curves(items: pd.DataFrame, latent_sd: float = 1.0) -> pd.DataFrame:
    """Test information per format and for all items along the ability scale.

    Columns: type ("all" for the whole test), theta, information (sum over the format's items),
    information_per_item (the same divided by its item count, so formats of different sizes
    compare), n_items, se_theta (1 / sqrt(information): the measurement error an examinee at
    that ability would have on those items alone).
    """
    fitted = _fitted(items)
    grid = ability_grid(latent_sd)
    rows = []
    groups = [(t, g) for t, g in fitted.groupby("type", sort=False)]
    groups.sort(key=lambda tg: format_rank(tg[0]))
    for name, group in [*groups, ("all", fitted)]:
        if group.empty:
            continue
        info = information(grid, group["difficulty"].to_numpy(), group["discrimination"].to_numpy()).sum(axis=0)
        with np.errstate(divide="ignore"):
            se = np.where(info > 0, 1.0 / np.sqrt(info), np.nan)
        rows.append(pd.DataFrame({"type": name, "theta": grid, "information": info,
                                  "information_per_item": info / len(group), "n_items": len(group),
                                  "se_theta": se}))
    if not rows:
        return pd.DataFrame(columns=["type", "theta", "information", "information_per_item", "n_items", "se_theta"])
    return pd.concat(rows, ignore_index=True)


def item_curve(items: pd.DataFrame, item_id: str, latent_sd: float = 1.0) -> pd.DataFrame:
    """The item characteristic curve (and information) of one item: theta, p_right, information.

    Empty for an unknown or non-informative item (its status says why)."""
    row = _fitted(items)
    row = row[row["item_id"].astype(str) == str(item_id)]
    if row.empty:
        return pd.DataFrame(columns=["item_id", "theta", "p_right", "information"])
    grid = ability_grid(latent_sd)
    b, a = row["difficulty"].to_numpy(), row["discrimination"].to_numpy()
    return pd.DataFrame({"item_id": str(item_id), "theta": grid, "p_right": probability(grid, b, a)[0],
                         "information": information(grid, b, a)[0]})


def wright_map(items: pd.DataFrame, abilities: pd.DataFrame) -> pd.DataFrame:
    """Examinees and items on one logit scale: kind (examinee | item), label, type, location, se."""
    people = abilities.dropna(subset=["ability"])
    fitted = _fitted(items)
    ex = pd.DataFrame({"kind": "examinee", "label": people["examinee"].astype(str), "type": None,
                       "location": people["ability"], "se": people["ability_se"]})
    it = pd.DataFrame({"kind": "item", "label": fitted["item_id"].astype(str), "type": fitted["type"],
                       "location": fitted["difficulty"], "se": fitted["difficulty_se"]})
    return pd.concat([ex, it], ignore_index=True)


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


__all__ = ["ability_grid", "ability_ranking", "information", "information_at", "information_curves", "item_curve",
           "probability", "wright_map"]
