"""Review decisions as JSONL through the CLI: import (line by line, idempotent, conflicts kept for
adjudication), export with timestamps, and review-status --json whose agreement numbers equal
statsmodels' and krippendorff's on the same table."""
from __future__ import annotations

import json

import numpy as np
import pytest
from pg_kit import BACKENDS, build_once

from eduart_core.cli import main
from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.team.identity import local
from tests.review_fixtures import copy_store

DATASET = "demo-extraction"


@pytest.fixture(scope="module", params=BACKENDS)
def template(request, tmp_path_factory):
    """The extraction demo, built once per backend (DuckDB file, PostgreSQL database)."""
    from eduart_core.extraction.simulated import build_extraction_demo

    return build_once(request, tmp_path_factory, request.param, build_extraction_demo, "exchange")


@pytest.fixture
def store_path(request, template, tmp_path):
    """The ``--db`` of a private copy: a file path or a PostgreSQL URL."""
    return template.copy(request, tmp_path / "exchange")


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def adjudicated(lines: list[dict]) -> list[dict]:
    """The adjudicator's decisions on the fields the two reviewers of ``two_reviewers`` disagree on."""
    return [{k: line[k] for k in ("dataset", "page", "round", "field")} | {"reviewer": "Carla", "decision": "A",
                                                                          "role": "adjudicate"}
            for line in lines if line["reviewer"] == "Bruno" and line["decision"] == "B"]


def two_reviewers(store: Store) -> list[dict]:
    """Anna and Bruno decide every queued field of round 1; they disagree on some."""
    queued = db.load_discrepancies(store, round=1, queued_only=True)
    lines = []
    for i, row in enumerate(queued.to_dict("records")):
        base = {"dataset": DATASET, "page": row["page_id"], "round": 1, "field": row["path"]}
        lines.append(base | {"reviewer": "Anna", "decision": "A", "note": None})
        if i % 4 == 1:
            lines.append(base | {"reviewer": "Bruno", "decision": "B", "note": "B matches the screenshot"})
        elif i % 4 == 2:  # an edit that types A's value: by choice an edit, on the final value agreement
            lines.append(base | {"reviewer": "Bruno", "decision": "edit", "value": row["value_a"]})
        else:
            lines.append(base | {"reviewer": "Bruno", "decision": "A"})
    return lines


def write_jsonl(path, lines: list) -> str:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in lines),
                    encoding="utf-8")
    return str(path)


def package_agreement(store: Store, lines: list[dict]) -> dict:
    """Cohen, Fleiss and alpha straight from the libraries, on a table built from the file: each
    decision coded by choice (A, B, an edit with its value); the final values compared apart."""
    import krippendorff
    from statsmodels.stats.inter_rater import aggregate_raters, cohens_kappa, fleiss_kappa, to_table

    queued = db.load_discrepancies(store, round=1, queued_only=True)
    values = {(r["page_id"], r["path"]): (r["value_a"], r["value_b"]) for r in queued.to_dict("records")}
    chosen: dict[tuple, dict[str, str]] = {}
    final: dict[tuple, dict[str, str]] = {}
    canonical = lambda v: json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    for line in lines:
        a, b = values[(line["page"], line["field"])]
        value = {"A": a, "B": b, "edit": line.get("value")}[line["decision"]]
        key = (line["page"], line["field"])
        choice = line["decision"] if line["decision"] != "edit" else "edit " + canonical(value)
        chosen.setdefault(key, {})[line["reviewer"]] = choice
        final.setdefault(key, {})[line["reviewer"]] = canonical(value)
    categories = sorted({c for unit in chosen.values() for c in unit.values()})
    table = np.array([[categories.index(unit[r]) for unit in chosen.values()] for r in ("Anna", "Bruno")])
    return {"units": table.shape[1],
            "cohen": cohens_kappa(to_table(table.T, bins=len(categories))[0]).kappa,
            "fleiss": fleiss_kappa(aggregate_raters(table.T, n_cat=len(categories))[0]),
            "alpha": krippendorff.alpha(reliability_data=table.astype(float), level_of_measurement="nominal"),
            "percent": float((table[0] == table[1]).mean()),
            "value_percent": float(np.mean([unit["Anna"] == unit["Bruno"] for unit in final.values()]))}


def test_two_reviewers_imported_give_the_libraries_agreement(store_path, tmp_path, capsys):
    store = Store(store_path)
    assert cli(capsys, "review-round", "--dataset", DATASET, "--round", "1", "--reviewers", "2",
               "--db", str(store_path))[0] == 0
    lines = two_reviewers(store)
    code, out, _ = cli(capsys, "review-import", write_jsonl(tmp_path / "d.jsonl", lines), "--db", str(store_path))
    assert code == 0 and f"imported {len(lines)} decision(s)" in out
    code, out, _ = cli(capsys, "review-status", "--json", "--db", str(store_path))
    before = json.loads(out)
    blind = next(r for r in before["rounds"] if r["round"] == 1)
    assert blind["agreement_withheld"] and blind["agreement"]["units"] == 0  # not before the round is settled
    disagreements = sum(1 for i in range(11) if i % 4 == 1)  # they wait for the adjudicator, shown as open
    assert blind["adjudication_pending"] is None and blind["open_fields"] == disagreements
    assert [o["state"] for o in before["open"] if o["round"] == 1] == ["open"] * disagreements
    assert set(before["open"][0]) >= {"dataset", "page", "round", "field", "category"}
    settle = adjudicated(lines)
    assert cli(capsys, "review-import", write_jsonl(tmp_path / "a.jsonl", settle), "--db", str(store_path))[0] == 0
    code, out, _ = cli(capsys, "review-status", "--json", "--db", str(store_path))
    status = json.loads(out)
    row = next(r for r in status["rounds"] if r["dataset"] == DATASET and r["round"] == 1)
    expected = package_agreement(store, lines)
    got = row["agreement"]
    assert set(got) >= {"units", "percent", "cohen_kappa", "fleiss_kappa", "krippendorff_alpha", "alpha_ci"}
    assert got["units"] == expected["units"] == 11
    assert got["percent"] == pytest.approx(expected["percent"])
    assert got["value_percent"] == pytest.approx(expected["value_percent"]) == pytest.approx(8 / 11)
    assert got["cohen_kappa"] == pytest.approx(expected["cohen"], abs=1e-12)
    assert got["fleiss_kappa"] == pytest.approx(expected["fleiss"], abs=1e-12)
    assert got["krippendorff_alpha"] == pytest.approx(expected["alpha"], abs=1e-12)
    low, high = got["alpha_ci"]
    assert low <= got["krippendorff_alpha"] <= high
    # agreeing fields merged, the adjudicator settled the rest: the round is settled
    assert row["adjudication_pending"] == 0 and row["open_fields"] == 0 and row["resolved"] == row["queued"]
    assert {k for k in row} >= {"pages", "queued", "resolved", "promoted", "open_fields", "adjudication_pending"}
    assert not [o for o in status["open"] if o["round"] == 1]


def test_bad_lines_are_reported_with_their_number_and_the_rest_imported(store_path, tmp_path, capsys):
    good = {"dataset": DATASET, "page": "ex01/q02", "round": 1, "field": "answers", "reviewer": "Anna",
            "decision": "A"}
    lines = [
        good,
        "{not json",
        {k: v for k, v in good.items() if k != "reviewer"},
        good | {"page": "ex99/q01"},
        good | {"field": "choices[Z].text"},
        good | {"decision": "edit"},
        good | {"decision": "edit", "value": [{"id": "Z", "description": "nobody"}]},
        good | {"decision": "C"},
        good | {"dataset": "elsewhere"},
        good | {"field": "question_text", "page": "ex01/q01", "reviewer": "Bruno"},
    ]
    code, out, _ = cli(capsys, "review-import", write_jsonl(tmp_path / "bad.jsonl", lines), "--db", str(store_path))
    assert code == 2  # the good lines are imported, the exit code says some were not
    assert "imported 2 decision(s)" in out and "8 bad line(s) skipped" in out
    for number, words in ((2, "not valid JSON"), (3, "missing reviewer"), (4, "ex99/q01 has no queued field"),
                          (5, "no queued field 'choices[Z].text'"), (6, "an edit needs a value"),
                          (7, "answers"), (8, "decision must be A, B, edit or flag"), (9, "belongs to dataset")):
        assert any(line.startswith(f"{tmp_path / 'bad.jsonl'}:{number}: skipped") and words in line
                   for line in out.splitlines()), (number, out)
    log = db.load_decisions(Store(store_path))
    assert sorted(log["reviewer"]) == ["Anna", "Bruno"] and set(log["source"]) == {"import:bad.jsonl"}


def test_importing_twice_changes_nothing_and_contradictions_become_conflicts(store_path, tmp_path, capsys):
    store = Store(store_path)
    first = {"dataset": DATASET, "page": "ex01/q02", "round": 1, "field": "answers", "reviewer": "Anna",
             "decision": "A"}
    path = write_jsonl(tmp_path / "one.jsonl", [first, first | {"decision": "B"}, first])  # Anna changes her mind twice
    cli(capsys, "review-import", path, "--db", str(store_path))
    version = store.data_version()
    code, out, _ = cli(capsys, "review-import", path, "--db", str(store_path))
    assert "imported 0 decision(s), 3 already present" in out and store.data_version() == version
    assert len(db.load_decisions(store)) == 3
    settled = review.load_state(store, 1).state("ex01/q02", 1, "answers")
    assert settled.state == "resolved" and settled.value == db.load_discrepancies(store, 1, "ex01/q02").iloc[0]["value_a"]
    # Bruno's file says B on the settled field: kept as a conflict, the gold stays A
    other = write_jsonl(tmp_path / "bruno.jsonl", [first | {"reviewer": "Bruno", "decision": "B"}])
    code, out, _ = cli(capsys, "review-import", other, "--db", str(store_path))
    assert "1 recorded as conflicts for adjudication" in out
    after = review.load_state(store, 1).state("ex01/q02", 1, "answers")
    assert after.state == "adjudication" and after.value == settled.value
    status = json.loads(cli(capsys, "review-status", "--json", "--db", str(store_path))[1])
    assert next(r for r in status["rounds"] if r["round"] == 1)["adjudication_pending"] == 1


def test_a_line_twice_in_one_file_is_named_and_stored_once(store_path, tmp_path, capsys):
    store = Store(store_path)
    anna = {"dataset": DATASET, "page": "ex01/q02", "round": 1, "field": "answers", "reviewer": "Anna",
            "decision": "A"}
    bruno = anna | {"reviewer": "Bruno", "decision": "B", "note": "B matches"}
    stamped = anna | {"field": "question_text", "page": "ex01/q01", "decided_at": "2026-12-01T10:00:00"}
    path = write_jsonl(tmp_path / "twice.jsonl", [anna, bruno, anna, stamped, stamped])
    code, out, _ = cli(capsys, "review-import", path, "--db", str(store_path))
    assert code == 2 and "imported 3 decision(s)" in out and "2 bad line(s) skipped" in out
    assert f"{path}:3: skipped: same decision as line 1: stored once" in out
    assert f"{path}:5: skipped: same decision as line 4: stored once" in out
    log = db.load_decisions(store)
    assert sorted(log["reviewer"]) == ["Anna", "Anna", "Bruno"]
    code, out, _ = cli(capsys, "review-import", path, "--db", str(store_path))
    assert "imported 0 decision(s), 3 already present" in out and len(db.load_decisions(store)) == 3


def test_export_has_every_decision_with_timestamps_and_reimports_as_nothing(store_path, tmp_path, capsys):
    store = Store(store_path)
    review.decide(store, "ex01/q01", 1, "question_text", "accept_b", local("Anna"))
    review.decide(store, "ex02/q02", 1, "choices[A].text", "flag", local("Anna"), note="capital M?")
    review.decide(store, "ex02/q02", 1, "choices[A].text", "edit", local("Bruno"), value="Claude Monet")
    out_file = tmp_path / "export.jsonl"
    code, out, _ = cli(capsys, "review-export", "--out", str(out_file), "--db", str(store_path))
    assert code == 0 and "wrote 3 decision(s)" in out
    records = [json.loads(line) for line in out_file.read_text(encoding="utf-8").splitlines()]
    assert [r["decision"] for r in records] == ["B", "flag", "edit"]
    assert all(r["decided_at"] and r["reviewer"] and r["dataset"] == DATASET for r in records)
    assert records[2]["value"] == "Claude Monet" and records[1]["note"] == "capital M?"
    version = store.data_version()
    code, out, _ = cli(capsys, "review-import", str(out_file), "--db", str(store_path))
    assert "imported 0 decision(s), 3 already present" in out and store.data_version() == version


def test_export_reimports_into_another_store_with_the_same_states(request, template, tmp_path, capsys):
    source = Store(template.copy(request, tmp_path / "source"))
    review.decide(source, "ex01/q02", 1, "answers", "accept_a", local("Anna"))
    review.decide(source, "ex06/q01", 1, "question_text", "accept_b", local("Anna"))
    out_file = tmp_path / "export.jsonl"
    cli(capsys, "review-export", "--out", str(out_file), "--db", str(source.path))
    target = template.copy(request, tmp_path / "target")
    code, out, _ = cli(capsys, "review-import", str(out_file), "--db", str(target))
    assert "imported 2 decision(s)" in out and "promoted 2 page(s)" in out
    a = review.review_queue(source).set_index(["page_id", "round"])["status"]
    b = review.review_queue(Store(target)).set_index(["page_id", "round"])["status"]
    assert a.equals(b)


def test_status_without_json_and_missing_file(store_path, tmp_path, capsys):
    code, out, _ = cli(capsys, "review-status", "--db", str(store_path))
    assert code == 0 and "demo-extraction" in out and "alpha" in out
    code, _, err = cli(capsys, "review-import", str(tmp_path / "nope.jsonl"), "--db", str(store_path))
    assert code == 2 and "no file" in err


@pytest.mark.slow  # builds a report
def test_the_report_shows_reviewer_agreement_and_overrides(demo_db, tmp_path, capsys):
    from eduart_core import columns
    from eduart_core.report import build_report
    from eduart_core.store.overrides import add_override
    from eduart_core.store.scores import load_responses

    path = copy_store(demo_db, tmp_path / "report")
    store = Store(path)
    review.set_reviewers(store, DATASET, 1, 2)
    lines = two_reviewers(store)
    cli(capsys, "review-import", write_jsonl(tmp_path / "d.jsonl", lines + adjudicated(lines)), "--db", str(path))
    expected = package_agreement(store, lines)
    response = load_responses(store, "demo").iloc[0]
    add_override(store, int(response["response_id"]), 1.0, "a synonym the scorer missed", "Carla")
    text = build_report(str(path), dataset="demo")
    section = text.split("7. Reviewing the gold")[1].split("Methods")[0]
    shown = f"{expected['alpha']:.{columns.column('krippendorff_alpha').kind.digits}f}"  # the report's one rounding of a statistic
    assert "demo-extraction" in section and shown in section
    assert "1 response score(s) of this dataset carry a reviewed override" in section
