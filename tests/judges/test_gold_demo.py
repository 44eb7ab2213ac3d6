"""The demo shows seeded gold at work: a simulated lenient grader and a simulated careless reviewer,
flagged on gold and labelled simulated, readable offline as an admin (the demo store, read-only)."""
from __future__ import annotations

from eduart_core import records, team, views
from eduart_core.selection import Selection
from eduart_core.store import Store


def person(subject: str, *roles: str) -> team.Identity:
    return team.Identity(subject, "https://idp.test", subject.title(), None, frozenset(roles), signed_in=True)


def test_the_demo_shows_a_simulated_lenient_grader_and_careless_reviewer_flagged(demo_db):
    from eduart_core.judges.gold_demo import DATASET as GOLD_DEMO

    admin = person("ada", team.ADMIN)
    flags = views.gold_flags(views.Source.of(Store(demo_db)), Selection(dataset=GOLD_DEMO), who=admin)
    assert flags.attrs["simulated"] and "(simulated data)" in flags.attrs["caption"]
    by_rater = flags.set_index("rater")
    assert bool(by_rater.loc["Sim lenient grader (simulated)", "flagged"])
    assert "more lenient than the gold" in by_rater.loc["Sim lenient grader (simulated)", "reason"]
    careless = by_rater.loc["Sim careless reviewer (simulated)"]
    assert bool(careless["flagged"]) and "accuracy on gold" in careless["reason"]
    assert not bool(by_rater.loc["Sim accurate grader (simulated)", "flagged"])
    assert (by_rater["gold_answers"] >= 50).all()
    # the careless reviewer's own record (as an admin reads it): gold, and marks the adjudicator overruled
    record = records.rater_record(Store(demo_db), admin, "Sim careless reviewer (simulated)")
    assert record.simulated and bool(record.gold["flagged"].iloc[0])
    assert len(record.overruled) > 0 and set(record.overruled["dataset"]) == {GOLD_DEMO}
