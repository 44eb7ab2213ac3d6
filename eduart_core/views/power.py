"""The view of power before spending (`show power`, the Runs page's plan form).

Why a view: the Runs page and `show power` must print the same items-needed numbers from the same
pilot (the stored answers of the selection: dataset, condition, profile, models). The statistics
live in `analysis.power`.
"""
from __future__ import annotations

import pandas as pd

from ..analysis import power as power_analysis
from ..errors import UserError
from ..selection import Selection
from ._base import EmptySelection, Source, cached, selected_scores


@cached()
def power(src: Source, sel: Selection, a: str = "", b: str = "", d: float = 5.0, w: float = 3.0) -> pd.DataFrame:
    """Items needed to tell model A from B by d points (80% power, 5%) and for a new model's macro interval of +/- w points.

    From the stored answers of the selection (the pilot): the paired per-item differences of each
    pair (every pair of the selected models, or the pair a, b), macro-weighted by format with the
    pilot's format shares. Attrs: ``caption`` (what the table holds: pilot, method, the plan in items).
    """
    if not 0 < d <= 100 or not 0 < w <= 100:
        raise UserError(f"power: d and w are points between 0 and 100 (not d={d!r}, w={w!r})")
    if bool(a) != bool(b) or (a and a == b):
        raise UserError("power: name two different models (options a=<display name>, b=<display name>), or neither "
                        "for every pair")
    frame = selected_scores(src, sel)
    names = {str(m) for m in frame["model"].unique()}
    for name in (a, b):
        if name and name not in names:
            raise UserError(f"power: no model {name!r} in this selection (have: {', '.join(sorted(names))})")
    if len(names) < 2 and not a:
        raise EmptySelection("power: the selection has fewer than two models to pair: widen it")
    table = power_analysis.power_table(frame, d_points=float(d), w_points=float(w),
                                       pairs=[(a, b)] if a else None)
    pilot = int(frame["item_id"].nunique())
    table.attrs["caption"] = (
        f"Items needed, from a pilot of {pilot} items ({sel.condition} condition, {sel.profile} profile): to tell two "
        f"models apart by {d:g} points of the macro average with 80% power at two-sided 5%, from the variance of "
        f"their paired per-item differences; and for a new model's macro 95% interval of +/- {w:g} points, from "
        f"the pilot models' per-item variance. Method: {power_analysis.POWER_METHOD}. The plan is in items (a "
        "model's repeats are averaged per item first); 'pilot_enough' says whether the pilot already has that many.")
    return table
