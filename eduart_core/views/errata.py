"""Views of the errata releases (`python -m eduart_core errata`): the releases, and one release's diff."""
from __future__ import annotations

import pandas as pd

from ..selection import Selection
from ._base import Source


def errata(src: Source, sel: Selection, release: str = "") -> pd.DataFrame:
    """The errata releases of the dataset, newest first (name, date, who, applied, items); option release=NAME: that release's score diff per model, condition, format and profile (score before and after)."""
    from .. import errata as domain

    if release:
        frame = domain.release_diff(src.store, sel.dataset, release)
        entries = domain.release_entries(src.store, sel.dataset, release)
        words = "; ".join(f"{r.item_id} v{r.old_version}->v{r.new_version} ({r.accepted_by})" for r in entries.itertuples())
        frame.attrs["caption"] = (f"Errata release {release} of {sel.dataset}: {len(entries)} corrected key(s) ({words}). "
                                  + ("Score before and after per model, condition, format and profile over every "
                                     "stored response of the format." if len(frame) else "Not applied yet."))
        return frame
    frame = domain.releases(src.store, sel.dataset)
    frame.attrs["caption"] = f"Errata releases of {sel.dataset}, newest first; {domain.current_release(src.store, sel.dataset)}."
    return frame


def errata_label(src: Source, sel: Selection) -> str:
    """The errata release the dataset's scores are computed under, in words (reports name it)."""
    from .. import errata as domain

    return domain.current_release(src.store, sel.dataset)
