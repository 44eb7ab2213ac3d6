"""Errata releases: accepted key corrections grouped, applied (rescoring every stored run), diffed, named."""
from __future__ import annotations

import json

import pg_kit
import pytest

from eduart_core import errata, suspects, team
from eduart_core.cli import main
from eduart_core.errors import UserError
from eduart_core.scoring.item_writes import upsert_items
from eduart_core.scoring.responses import add_responses
from eduart_core.store.runs import create_run, ensure_model
from eduart_core.team.identity import local

backend, store = pg_kit.backend, pg_kit.store  # every test here runs on DuckDB and PostgreSQL

DATASET = "errata"
OPTIONS = ["un affresco", "una tela", "una tavola", "un mosaico"]
# three runs (three models); what each answers on items e01..e06
CHOICES = {"m0": "AAABAC", "m1": "ABACAB", "m2": "BAAAAA"}


def radio(item_id: str, key: str) -> dict:
    return {"item_id": item_id, "type": "multiple_choice_radio", "language": "it",
            "question_text": f"Domanda {item_id}: che cosa dipinse il maestro?",
            "choices": [{"id": chr(65 + i), "text": t} for i, t in enumerate(OPTIONS)],
            "answers": [{"id": key, "description": OPTIONS[ord(key) - 65]}], "has_image": False, "image": None}


def key(letter: str) -> list[dict]:
    return [{"id": letter, "description": OPTIONS[ord(letter) - 65]}]


@pytest.fixture
def three_runs(store):
    """Six items keyed A, except e02 keyed C (wrong: the truth is A) and e05 keyed B (wrong: the truth is A)."""
    keys = "ACAABA"
    upsert_items(store, [radio(f"e{i + 1:02d}", k) for i, k in enumerate(keys)], DATASET, origin="test")
    for model, chosen in CHOICES.items():
        ensure_model(store, model, model.upper(), "Simulated", "offline", None, simulated=True)
        create_run(store, f"run-{model}", DATASET, model, "default", "simulated")
        add_responses(store, f"run-{model}", [{"item_id": f"e{i + 1:02d}",
                                               "raw_text": json.dumps({"Answers": [{"id": c}]})}
                                              for i, c in enumerate(chosen)])
    return store


JUDGE = "judge:sim-judge/open-rubric"


def judge_marks(store) -> None:
    """A judge profile's scores of every answer (the judge's mark: 1 when the answer is A, as a judge reading
    the corrected key would say, 0.5 otherwise) and the judgements they come from."""
    from eduart_core.store.judges import add_judgements_con, register_profile_con, replace_profile_scores_con

    with store.connect(read_only=True) as con:
        answers = con.execute("SELECT r.response_id, r.item_id, u.model, r.raw_text FROM responses r "
                              "JOIN runs u USING (run_id) ORDER BY r.response_id").fetchall()
    with store.transaction() as con:
        register_profile_con(con, {"profile": JUDGE, "dataset": DATASET, "judge": "sim-judge", "judge_name": "Sim",
                                   "provider": "offline", "api_model_id": "sim", "rubric": "open-rubric",
                                   "rubric_hash": "h", "prompt_hash": "p", "temperature": 0.0, "version": "v1",
                                   "simulated": True, "launch_id": "l1", "created_by": "test"})
        add_judgements_con(con, [{"request_key": f"l1/{rid}/c/main/r0", "profile": JUDGE, "version": "v1",
                                  "dataset": DATASET, "item_id": item, "model": model, "condition": "default",
                                  "response_id": rid, "criterion": "c", "method": "judge", "repetition": 0,
                                  "probe": "main", "points": 1.0, "max_points": 1.0} for rid, item, model, _ in answers])
        replace_profile_scores_con(con, JUDGE, [
            {"response_id": rid, "item_version": 1, "score": 1.0 if '"A"' in raw else 0.5, "correct": '"A"' in raw,
             "details": [], "scorer": "rubric/open-rubric@h+sim-judge"} for rid, _item, _model, raw in answers])


def score_rows(store) -> dict[tuple[int, str], tuple]:
    """Every score row of the store: (response_id, profile) -> (item_id, item_version, score, correct, scorer)."""
    with store.connect(read_only=True) as con:
        rows = con.execute("SELECT s.response_id, s.profile, r.item_id, s.item_version, s.score, s.correct, s.scorer "
                           "FROM scores s JOIN responses r USING (response_id)").fetchall()
    return {(int(r[0]), r[1]): tuple(r[2:]) for r in rows}


def test_a_release_changes_exactly_the_corrected_scores_and_applying_twice_changes_nothing(three_runs):
    store = three_runs
    judge_marks(store)
    before = score_rows(store)
    assert len(before) == 3 * 6 * 3  # three runs x six items x (strict, paper, the judge profile)
    ada = local("Ada")
    suspects.correct_key(store, DATASET, "e02", key("A"), ada, ["item_statistics|negative_discrimination"],
                         note="the fresco is the truth")
    suspects.correct_key(store, DATASET, "e05", key("A"), ada, [], note="B is a slip")
    release_id, entries = errata.create_release(store, DATASET, "2026-12", ada)
    assert list(entries["item_id"]) == ["e02", "e05"]
    first = entries.iloc[0]
    assert (first["old_version"], first["new_version"], first["accepted_by"], first["reason"]) == (
        1, 2, "Ada", "the fresco is the truth")
    assert json.loads(first["old_key"])[0]["id"] == "C" and json.loads(first["new_key"])[0]["id"] == "A"

    done = errata.apply_release(store, DATASET, "2026-12", ada)
    assert done["applied"] and done["rescored"] == 3 * 2 * 2
    after = score_rows(store)
    # no score row appears; the judge's marks of the corrected items (given against the old key) are withdrawn
    withdrawn = {row for row, old in before.items() if row[1] == JUDGE and old[0] in {"e02", "e05"}}
    assert len(withdrawn) == 3 * 2 and set(after) == set(before) - withdrawn
    for row, old in before.items():
        if row in withdrawn:
            continue
        new = after[row]
        if old[0] not in {"e02", "e05"}:
            assert new == old, f"score row {row} of item {old[0]} changed"  # every other row, every column
        else:
            assert new[1] == 2  # scored on the corrected version
    from eduart_core.store.judges import load_judgements

    marks = load_judgements(store, DATASET)
    stale = marks["item_id"].isin(["e02", "e05"])
    assert marks.loc[stale, "error"].str.startswith("withdrawn").all() and marks.loc[~stale, "error"].isna().all()
    # the corrected items' scores follow the new key exactly: right when the answer is A
    with store.connect(read_only=True) as con:
        got = {(m, i): float(s) for m, i, s in con.execute(
            "SELECT u.model, r.item_id, s.score FROM scores s JOIN responses r USING (response_id) "
            "JOIN runs u USING (run_id) WHERE s.profile = 'strict' AND r.item_id IN ('e02', 'e05')").fetchall()}
    assert got == {(m, f"e0{i}"): float(CHOICES[m][i - 1] == "A") for m in CHOICES for i in (2, 5)}

    diff = done["diff"]
    strict = diff[diff["profile"] == "strict"].set_index("model")
    # m1 chose B on e02 and A on e05: under the old keys (C, B) 0 + 0, under the new (A, A) 0 + 1; its other
    # answers (A, A, C, B on e01, e03, e04, e06, all keyed A) score 1, 1, 0, 0
    assert strict.loc["M1", "responses"] == 6 and strict.loc["M1", "changed"] == 1
    assert strict.loc["M1", "score_before"] == pytest.approx(2 / 6)
    assert strict.loc["M1", "score_after"] == pytest.approx(3 / 6)
    assert strict.loc["M0", "changed"] == 2 and strict.loc["M0", "score_before"] == pytest.approx(2 / 6)
    assert strict.loc["M0", "score_after"] == pytest.approx(4 / 6)
    assert strict.loc["M2", "score_before"] == pytest.approx(3 / 6)
    assert strict.loc["M2", "score_after"] == pytest.approx(5 / 6)
    judged = diff[diff["profile"] == JUDGE].set_index("model")
    # m0 answered A, A, A, B, A, C: judge marks 1, 1, 1, .5, 1, .5; e02 and e05 (1 and 1) withdrawn
    assert judged.loc["M0", "responses"] == 6 and judged.loc["M0", "changed"] == 2
    assert judged.loc["M0", "score_before"] == pytest.approx(5 / 6)
    assert judged.loc["M0", "score_after"] == pytest.approx(3 / 4)

    again = errata.apply_release(store, DATASET, "2026-12", ada)  # idempotent
    assert not again["applied"] and again["rescored"] == 0
    assert score_rows(store) == after
    assert again["diff"].equals(diff)
    assert errata.current_release(store, DATASET).startswith("errata release 2026-12 (applied ")
    from eduart_core import views
    from eduart_core.report.document import _meta
    from eduart_core.selection import Selection

    views.clear_caches()
    assert "keys: errata release 2026-12 (applied " in _meta(Selection(dataset=DATASET), views.Source.of(store))
    # nothing waits: a second release is refused with one line
    with pytest.raises(UserError, match="waits for a release"):
        errata.create_release(store, DATASET, "2027-01", ada)


def test_bad_input_is_one_line_and_changes_nothing(three_runs, capsys):
    store = three_runs
    db = str(store.path) if not getattr(store, "shared", False) else None
    if db is None:
        pytest.skip("the CLI half runs on the DuckDB file")
    suspects.correct_key(store, DATASET, "e02", key("A"), local("Ada"), [])
    assert errata.current_release(store, DATASET) == "no errata release; 1 accepted key correction(s) not released yet"
    before = score_rows(store)
    for argv, words in (
            (["errata", "--dataset", DATASET, "--name", "r1", "--items", "e02,nope", "--by", "Ada"], "no item nope"),
            (["errata", "--dataset", DATASET, "--name", "r1", "--items", "e03", "--by", "Ada"],
             "e03 has no accepted key correction"),
            (["errata", "apply", "--dataset", DATASET, "--name", "never", "--by", "Ada"], "no errata release 'never'"),
            (["errata", "--dataset", DATASET, "--name", " ", "--by", "Ada"], "name the errata release")):
        assert main([*argv, "--db", db]) == 2
        err = capsys.readouterr().err.strip()
        assert words in err and "\n" not in err and "Traceback" not in err
    assert errata.releases(store, DATASET).empty and score_rows(store) == before
    assert main(["errata", "--dataset", DATASET, "--name", "r1", "--by", "Ada", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "errata release r1" in out and "e02: version 1 -> 2" in out
    assert main(["errata", "--dataset", DATASET, "--name", "r1", "--by", "Ada", "--db", db]) == 2
    assert "waits for a release" in capsys.readouterr().err  # nothing left to release (checked before the name)
    assert main(["errata", "apply", "--dataset", DATASET, "--name", "r1", "--by", "Ada", "--db", db]) == 0
    assert "applied" in capsys.readouterr().out
    assert main(["errata", "apply", "--dataset", DATASET, "--name", "r1", "--by", "Ada", "--db", db]) == 0
    assert "applied already; nothing changed" in capsys.readouterr().out
    assert main(["show", "errata", "--dataset", DATASET, "--db", db, "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in shown] == ["r1"] and shown[0]["items"] == 1 and shown[0]["created_by"] == "Ada"
    assert main(["show", "errata", "--dataset", DATASET, "--option", "release=r1", "--db", db, "--format", "json"]) == 0
    diff = json.loads(capsys.readouterr().out)
    assert {r["model"] for r in diff} == {"M0", "M1", "M2"}


def test_only_key_reviewers_may_release_and_apply(three_runs):
    store = three_runs
    suspects.correct_key(store, DATASET, "e02", key("A"), local("Ada"), [])
    reviewer = team.Identity("rev", "https://idp.test", "Rev Person", "rev@example.org",
                             frozenset({team.REVIEWER}), signed_in=True)
    with pytest.raises(team.PermissionDenied):
        errata.create_release(store, DATASET, "r1", reviewer)
    assert errata.releases(store, DATASET).empty
    errata.create_release(store, DATASET, "r1", local("Ada"))
    with pytest.raises(team.PermissionDenied):
        errata.apply_release(store, DATASET, "r1", reviewer)
    assert errata.releases(store, DATASET)["applied_at"].isna().all()
