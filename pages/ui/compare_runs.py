"""The Compare runs section of the Runs page: runs against a chosen baseline, in aggregate and per item.

Thin: the numbers come from `views.run_diff` and `views.run_diff_items` (their `show` twins print
the same). Colour only where a direction is certain: a per-item change (a score that went down is
red, up is green); the aggregate deltas carry their interval and words that claim a direction only
when the interval does. Every name and item id is drawn as text.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from eduart_core import views, vocab
from eduart_core.errors import UserError
from eduart_core.selection import Selection
from eduart_core.text import plain
from pages.ui import navigate, tables

RED, GREEN = "background-color: #fde0dc; color: #a50e0e", "background-color: #e3f4e1; color: #1e6b30"
PERCENT_DELTAS = ("baseline_mean", "run_mean", "delta", "ci_low", "ci_high")
#: Rows of the per-item table drawn on the page (the largest drops first); the download holds every row.
#: Why: 50 runs x 5,000 items change on ~90,000 rows, more than a styled table can draw (and a link
#: per row costs ~0.5 ms), and nobody reads that many on a page. The table is drawn again on every
#: rerun of the Runs page: at 1,000 rows that was about half of a model-filter change at published
#: scale (0.35 s); 200 rows are the worst drops a reader goes through.
SHOWN_ROWS = 200
#: Runs set against a new baseline until the user picks others: the first few in the menu's order.
#: Why: each run costs a paired bootstrap per format (at 50 models x 5,000 items all 49 runs took
#: about 2.5 s of a first render and of every profile switch), and a comparison is read a few runs at
#: a time; `show run_diff` (no --models) still sets every run against the baseline.
DEFAULT_RUNS = 5


def _colour(value) -> str:
    """A per-item change: red when the score went down, green when it went up."""
    if value is None or pd.isna(value) or value == 0:
        return ""
    return RED if value < 0 else GREEN


def _pickers(src: views.Source, sel: Selection) -> tuple[str, list[str]] | None:
    names = views.models_with_data(src, sel.dataset, baselines=sel.baselines, humans=sel.humans)
    if len(names) < 2:
        st.caption("Comparing runs needs two models with answers in the dataset chosen in the sidebar.")
        return None
    left, right = st.columns([2, 3])
    baseline = left.selectbox("Baseline", names, key="rundiff_baseline",
                              help="The run the others are set against (`show run_diff --option baseline=RUN`).")
    others = [n for n in names if n != baseline]
    kept = [n for n in st.session_state.get("rundiff_runs") or [] if n in others]
    if st.session_state.get("_rundiff_for") != (sel.dataset, baseline) or "rundiff_runs" not in st.session_state:
        kept = others[:DEFAULT_RUNS]  # a new baseline (or dataset) sets the first few runs against it
    st.session_state["_rundiff_for"] = (sel.dataset, baseline)
    st.session_state["rundiff_runs"] = kept
    runs = right.multiselect("Runs compared", others, key="rundiff_runs")
    if len(others) > DEFAULT_RUNS:
        st.caption(f"A new baseline is set against the first {DEFAULT_RUNS} of the {len(others)} other runs; add "
                   "more under 'Runs compared' (`show run_diff` without --models compares every run).")
    return baseline, runs


def _deltas(src: views.Source, sel: Selection, baseline: str) -> None:
    deltas = views.run_diff(src, sel, baseline=baseline)
    shown = deltas.assign(type=[("" if pd.isna(t) else vocab.format_label(t)) for t in deltas["type"]])
    tables.table(shown.drop(columns=["baseline"]), "run_diff",
                 "Delta against the baseline per run, overall and per format (percentage points; run minus "
                 "baseline, paired 95% interval)", essential=True, percent=PERCENT_DELTAS)
    st.caption(plain(deltas.attrs.get("caption", "")) + " A direction is named only when the whole interval lies "
               "on one side of 0.")


def _items(src: views.Source, sel: Selection, baseline: str) -> None:
    only = "regressions" if st.toggle("Regressions only", key="rundiff_regressions") else "changed"
    changes = views.run_diff_items(src, sel, baseline=baseline, only=only)
    st.markdown(f"**{len(changes)} item(s) changed**" if only == "changed"
                else f"**{len(changes)} regression(s)**")
    st.caption(plain(changes.attrs.get("caption", "")) + " Click a header to sort; open a row to see the item in the "
               "inspector with both answers.")
    if changes.empty:
        return
    every = changes.assign(type=changes["type"].map(vocab.format_label)).drop(columns=["baseline"])
    shown = every.head(SHOWN_ROWS)
    if len(every) > len(shown):
        st.caption(f"Showing the first {len(shown)} of {len(every)} rows (the largest drops first); the download "
                   "below holds every row.")
    pair = {run: sel.with_(models=(run, baseline)) for run in set(shown["run"])}  # a few runs, many rows
    frame = shown.assign(open=[navigate.inspector_link(i, pair[run], model=run)
                               for i, run in zip(shown["item_id"], shown["run"])])
    styled = frame.style.map(_colour, subset=["change"]).format(
        {c: "{:+.2f}" if c == "change" else "{:.2f}" for c in ("baseline_score", "run_score", "change")})
    st.dataframe(styled, hide_index=True, width="stretch", key="rundiff_items_table",
                 column_config={"open": st.column_config.LinkColumn("open", display_text="open in inspector"),
                                "baseline_score": "baseline score", "run_score": "run score",
                                "change": "change (run − baseline)"})
    tables.table(every, "run_diff_items", "Per-item changes", show=False)


def section(src: views.Source, sel: Selection) -> None:
    """Compare runs: a baseline, the runs set against it, the deltas, and the items that changed."""
    st.subheader("Compare runs")
    st.caption("Set runs against a baseline on the items both answered (condition and profile of the sidebar). "
               "A run is a model's latest answers (repeats averaged), as `show scores` lists them.")
    try:
        picked = _pickers(src, sel)
        if picked is None:
            return
        baseline, runs = picked
        if not runs:
            st.info("Choose at least one run to compare with the baseline.")
            return
        chosen = sel.with_(models=tuple(runs))
        _deltas(src, chosen, baseline)
        _items(src, chosen, baseline)
    except (UserError, views.StoreError) as exc:  # an aggregate-only dataset, no shared item, a busy store
        st.caption(plain(exc))
