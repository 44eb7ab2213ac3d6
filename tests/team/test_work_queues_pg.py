"""Work queues on a real PostgreSQL server, asked by separate processes at the same moment (as people on
two app servers): no page is held by two people in single review, none by more than two in double
review nor twice by one person, no disputed page by two adjudicators, and a page whose holder vanished
comes back when the hold runs out."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.team import build_queue_round
from eduart_core import queues, team
from eduart_core.store import Store
from eduart_core.store import holds as hold_db

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]

#: One reviewer process: waits for the start time, asks "next" N times keeping every page, prints them.
_ASKER = """
import json, sys, time
from eduart_core.queues import next_review_page
from eduart_core.store import Store
from eduart_core.team import local
url, name, asks, start, hold = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
role = sys.argv[6]
store = Store(url)
with store.connect(read_only=True) as con:
    con.execute("SELECT 1").fetchall()
while time.time() < start:
    time.sleep(0.005)
got, after = [], None
for _ in range(asks):
    handed = next_review_page(store, local(name), 1, after=after, leave=False, hold_s=hold, role=role)
    got.append(handed.unit if handed else None)
    after = handed.unit if handed else after
print(json.dumps(got))
"""


def _ask_at_once(url: str, names: list[str], asks: int, hold_s: float = 3600.0,
                 role: str = "review") -> dict[str, list]:
    start = time.time() + 8.0  # every process imported and connected by then
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = {n: subprocess.Popen([sys.executable, "-c", _ASKER, url, n, str(asks), str(start), str(hold_s), role],
                                 cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for n in names}
    out = {}
    for name, proc in procs.items():
        stdout, stderr = proc.communicate(timeout=240)
        assert proc.returncode == 0, stderr[-2000:]
        out[name] = json.loads(stdout.strip().splitlines()[-1])
    return out


def test_separate_processes_never_hold_one_page_at_once(pg_url):
    store = Store(pg_url)
    pages = build_queue_round(store, 40)
    got = _ask_at_once(pg_url, [f"r{k}" for k in range(6)], 6)
    handed = [u for units in got.values() for u in units]
    assert None not in handed and len(handed) == 36
    assert len(set(handed)) == 36  # 36 pages to 6 people, none twice
    held = hold_db.load_holds(store, "review:1")
    assert len(held) == 36 and held["unit"].is_unique and set(held["unit"]) <= set(pages)


def test_double_review_across_processes_gives_a_page_to_two_people_at_most(pg_url):
    store = Store(pg_url)
    build_queue_round(store, 16, reviewers=2)
    got = _ask_at_once(pg_url, [f"r{k}" for k in range(6)], 4)
    held = hold_db.load_holds(store, "review:1")
    per_page = held.groupby("unit")["holder"].agg(list)
    assert len(held) == 24 and per_page.map(len).max() == 2  # 24 holds on 16 pages of two places
    assert all(len(set(h)) == len(h) for h in per_page)  # never one person twice
    assert all(len(set(units)) == len(units) for units in got.values())


def test_adjudicators_across_processes_never_share_a_disputed_page(pg_url):
    from eduart_core.store import extraction as db

    store = Store(pg_url)
    pages = build_queue_round(store, 12, reviewers=2)
    for k, page in enumerate(pages):  # the two reviewers disagree on every page but the last two
        for who, action in (("rev-1", "accept_a"), ("rev-2", "accept_b" if k < 10 else "accept_a")):
            for path in ("f0", "f1"):
                db.append_decision(store, page, 1, path, action, who, None, action, None, None,
                                   check=lambda decisions: {"conflict": False}, role="review", source="page")
    got = _ask_at_once(pg_url, [f"adj{k}" for k in range(4)], 3, role="adjudicate")
    # 12 asks for 10 disputed pages: someone is handed their own page back; no page goes to two adjudicators
    handed = [u for units in got.values() for u in set(units) - {None}]
    assert len(handed) == 10 and set(handed) == set(pages[:10])
    held = hold_db.load_holds(store, "adjudicate:1")
    assert len(held) == 10 and held["unit"].is_unique
    assert hold_db.load_holds(store, "review:1").empty


#: The vanished holders' hold: long enough that their processes end and the others ask before it runs out,
#: on a shared machine under load as well (two seconds were not).
HOLD_S = 8.0


def test_a_page_whose_holder_vanished_comes_back_when_the_hold_runs_out(pg_url):
    store = Store(pg_url)
    pages = build_queue_round(store, 3)
    got = _ask_at_once(pg_url, ["gone-1", "gone-2"], 1, hold_s=HOLD_S)  # processes that end holding a page
    taken = {u for units in got.values() for u in units}
    assert len(taken) == 2
    assert queues.next_review_page(store, team.local("ann"), 1).unit == (set(pages) - taken).pop()
    assert queues.next_review_page(store, team.local("bob"), 1) is None  # both others still held
    time.sleep(HOLD_S + 0.5)
    back = {queues.next_review_page(store, team.local(n), 1).unit for n in ("bob", "cara")}
    assert back == taken


#: One adjudicator process of a grading round: as ``_ASKER``, for the disputed answers of the written dataset.
_ADJUDICATOR = """
import json, sys, time
from eduart_core.queues import next_grading_answer
from eduart_core.store import Store
from eduart_core.team import local
url, name, asks, start = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
store = Store(url)
with store.connect(read_only=True) as con:
    con.execute("SELECT 1").fetchall()
while time.time() < start:
    time.sleep(0.005)
got, after = [], None
for _ in range(asks):
    handed = next_grading_answer(store, "written", "test-v1", local(name), after=after, leave=False, hold_s=3600.0,
                                 role="adjudicate")
    got.append(handed.unit if handed else None)
    after = handed.unit if handed else after
print(json.dumps(got))
"""


def test_grading_adjudicators_across_processes_never_share_a_disputed_answer(pg_url, tmp_path, monkeypatch):
    from tests.judge_fixtures import DATASET, RUBRIC, build_written_store, disputed_round, write_rubric

    monkeypatch.setenv("EDUART_RUBRICS", str(write_rubric(tmp_path / "rubrics")))  # the processes inherit it
    store = Store(pg_url)
    build_written_store(store)
    tokens = disputed_round(store, disputed=10, agreed=2)
    start = time.time() + 8.0
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", _ADJUDICATOR, pg_url, f"adj{k}", "3", str(start)], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for k in range(4)]
    got = []
    for proc in procs:
        stdout, stderr = proc.communicate(timeout=240)
        assert proc.returncode == 0, stderr[-2000:]
        got.append(json.loads(stdout.strip().splitlines()[-1]))
    # 12 asks for 10 disputed answers: someone is handed their own answer back; none goes to two adjudicators
    handed = [u for units in got for u in set(units) - {None}]
    assert len(handed) == 10 and set(handed) == set(tokens[:10])
    held = hold_db.load_holds(store, queues.grading_queue_name(DATASET, RUBRIC, 1, "adjudicate"))
    assert len(held) == 10 and held["unit"].is_unique
    assert hold_db.load_holds(store, queues.grading_queue_name(DATASET, RUBRIC, 1)).empty
