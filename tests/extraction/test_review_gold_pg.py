"""Seeded gold in a review round on a real PostgreSQL server: migration 24, the seeding, a wrong
decision on a seeded page that settles it, and the gold that stays as it was."""
from __future__ import annotations

import pytest

from eduart_core.extraction import review_gold
from eduart_core.extraction.review import ACCEPT_A, ACCEPT_B, decide, load_state
from eduart_core.extraction.simulated import DEMO_DATASET, _true_side, build_extraction_demo
from eduart_core.store import Store
from tests.extraction.test_review_gold import CAREFUL, LEAD, POOL, TRUTH, _items, settle_and_extend

pytestmark = pytest.mark.postgres


def test_seeded_pages_on_postgres_never_change_the_gold(pg_url):
    store = Store(pg_url)
    build_extraction_demo(store)
    settle_and_extend(store)
    before = _items(store)
    assert review_gold.seed_review_round(store, DEMO_DATASET, 5, 1.0, set_by=LEAD, seed=3)["seeded"] == POOL
    state = load_state(store, 5)
    page = sorted(p for p, r in state.seeded if r == 5)[0]
    for row in state.fields(page, 5).to_dict("records"):
        side = _true_side(row, TRUTH[page])
        result = decide(store, page, 5, row["path"], ACCEPT_B if side == "A" else ACCEPT_A, CAREFUL[0])
    assert result.page_resolved
    assert _items(store) == before
    checks = review_gold.gold_checks(store)
    assert set(checks["answer"]) == {f"{page} round 5"} and (checks["points"] == 0).all()
