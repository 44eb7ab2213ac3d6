"""`judge` against an OpenAI-compatible stub on 127.0.0.1 (the real openai SDK over HTTP).

What a researcher relies on: the judge runs like a model (dry-run cost first, journal, resume that
asks nothing twice); its scores become a profile that the leaderboard, the item statistics and the
report use, with its version; the judge never sees which model wrote an answer; the options are
listed in a recorded order that the position probe reverses; until the judge is calibrated against
human grades every number under its profile carries a warning that says why (here, after grading,
that 12 answers leave its severity interval wider than the gate).
"""
from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout

import pytest

from eduart_core import views
from eduart_core.cli import main
from eduart_core.selection import Selection
from eduart_core.store import Store
from eduart_core.store.judges import load_judgements
from tests.judge_fixtures import DATASET, FEATURE, MODELS, RUBRIC, deserved, written_store
from tests.stubs import StubServer

PROFILE = f"judge:stub-judge/{RUBRIC}"


def _verdict(info) -> str:
    """A faithful judge: reads the answer between <<< and >>> and gives the point for the feature."""
    answer = info.user_text.split("<<<", 1)[1].split(">>>", 1)[0]
    return json.dumps({"points": deserved(answer), "reason": "read"})


@pytest.fixture
def written(tmp_path, monkeypatch) -> Store:
    return written_store(tmp_path, monkeypatch)


def _judge(store: Store, url: str, *extra: str) -> tuple[int, str, str]:
    """The judge command against the stub. Without the response cache: two models wrote the same answer
    to one item, and whether the second is asked or read from the cache would depend on which finishes first."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["judge", "--db", str(store.path), "--provider", "openai_compatible", "--model-id", "stub-judge-2026",
                     "--base-url", f"{url}/v1", "--judge", "stub-judge", "--rubric", RUBRIC, "--dataset", DATASET,
                     "--repeat", "2", "--probes", "2", "--no-cache", "--quiet", *extra])
    return code, out.getvalue(), err.getvalue()


def _show(store: Store, *args: str) -> tuple[list[dict], str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["show", *args, "--db", str(store.path), "--dataset", DATASET])
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue()), err.getvalue()


@pytest.mark.slow
def test_a_judge_run_makes_a_profile_the_dashboard_uses_with_a_warning_until_calibrated(written, tmp_path):
    with StubServer(answer=_verdict) as stub:
        code, out, _ = _judge(written, stub.url, "--dry-run")
        assert code == 0 and not stub.requests
        assert "28 requests" in out and "USD" in out and "profile " + PROFILE in out

        code, out, err = _judge(written, stub.url)
        assert code == 0, err
        assert len(stub.requests) == 12 * 2 + 2 * 2  # 12 answers x 1 judge criterion x 2 repeats + 2 probes x 2
        asked = len(stub.requests)
        for info in stub.requests:  # blind: the judge never learns which model wrote the answer
            seen = info.user_text + (info.system or "")
            assert not any(key in seen or name in seen for key, name in MODELS.items())
            assert info.schema["properties"]["points"]["enum"] == [0, 1]
        code, _, _ = _judge(written, stub.url)  # the same command again: a resume, nothing asked twice
        assert code == 0 and len(stub.requests) == asked

    judgements = load_judgements(written, DATASET, [PROFILE])
    asked_rows = judgements[judgements["method"] == "judge"]
    assert asked_rows["error"].isna().all() and asked_rows["points"].notna().all()
    assert set(judgements["method"]) == {"check", "judge"} and set(asked_rows["shown_order"]) <= {"0,1", "1,0"}
    main_first = asked_rows[(asked_rows["probe"] == "main") & (asked_rows["repetition"] == 1)].set_index("response_id")
    for row in asked_rows[asked_rows["probe"] == "reordered"].itertuples():
        assert row.shown_order == ",".join(reversed(main_first.at[row.response_id, "shown_order"].split(",")))

    src = views.Source.of(written)
    info = next(p for p in views.profile_choices(src, DATASET) if p.name == PROFILE)
    assert re.search(r"stub-judge-2026 · prompt [0-9a-f]{8} · rubric test-v1@[0-9a-f]{8} · temperature", info.version)

    board, err = _show(written, "leaderboard", "--profile", PROFILE)
    assert {r["model"] for r in board} == set(MODELS.values())
    assert "warning: Judge not calibrated" in err
    scores = views.selected_scores(src, Selection(dataset=DATASET, profile=PROFILE))
    kappa_w4 = scores[(scores["model"] == MODELS["kappa-model-z"]) & (scores["item_id"] == "w4")]["score"]
    assert kappa_w4.iloc[0] == pytest.approx(2 / 3)  # no artist named, the date, the feature: 2 of 3 points
    stats, _ = _show(written, "item_statistics", "--profile", PROFILE)
    assert {r["item_id"] for r in stats} == {"w1", "w2", "w3", "w4"}
    strict, err = _show(written, "leaderboard")
    assert "warning" not in err  # the built-in profiles carry none

    from eduart_core.report import build_report

    html = build_report(str(written.path), Selection(dataset=DATASET, profile=PROFILE))
    assert "Judge not calibrated" in html and "8. Judges" in html and info.version.split(" · ")[0] in html

    # two graders agree with each other and with what the answers deserve, on 12 answers: the judge agrees
    # perfectly, but 12 answers cannot place its severity in an interval within the gate, so it does not
    # pass yet and the warning stays, saying why
    lines = []
    for key in MODELS:
        for item in ("w1", "w2", "w3", "w4"):
            from tests.judge_fixtures import answer_text

            for grader in ("ann", "bob"):
                lines.append({"dataset": DATASET, "item_id": item, "model": key, "condition": "default",
                              "grader": grader, "criterion": "evidence", "points": deserved(answer_text(key, item))})
    path = tmp_path / "grades.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert main(["grades-import", str(path), "--db", str(written.path), "--by", "lead"]) == 0
    calibration, _ = _show(written, "judge_calibration")
    row = next(r for r in calibration if r["judge"] == PROFILE)
    assert not row["passes"] and row["alpha"] == pytest.approx(1.0) and row["n"] == 12, row["reason"]
    assert "95% interval" in row["reason"] and "alpha" not in row["reason"]
    _, err = _show(written, "leaderboard", "--profile", PROFILE)
    assert "Judge not calibrated" in err and "95% interval" in err
    src = views.Source.of(written)
    assert "95% interval" in views.profile_warning(src, Selection(dataset=DATASET, profile=PROFILE))
    assert FEATURE  # the fixture's feature words are what the judge and the graders looked for


def test_an_unknown_judge_profile_and_a_rubric_without_items_are_one_line(written, tmp_path):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["show", "leaderboard", "--db", str(written.path), "--dataset", DATASET, "--profile",
                     "judge:nobody/test-v1"])
    assert code == 2 and "no scores under profile" in err.getvalue() and len(err.getvalue().strip().splitlines()) == 1
    with StubServer(answer=_verdict) as stub:
        code = main(["judge", "--db", str(written.path), "--provider", "openai_compatible", "--model-id", "x",
                     "--base-url", f"{stub.url}/v1", "--rubric", "open-v1", "--dataset", DATASET, "--quiet"])
    assert code == 2  # open-v1 is not in this store's rubric folder


def test_judge_batch_goes_through_the_runners_batch_engine(written, tmp_path, monkeypatch):
    from batch_stubs import BatchStub, request_text

    def verdict(protocol: str, line: dict) -> str:
        answer = request_text(protocol, line).split("<<<", 1)[1].split(">>>", 1)[0]
        return json.dumps({"points": deserved(answer), "reason": "read"})

    with BatchStub(answer=verdict) as stub:
        registry = tmp_path / "models.toml"
        registry.write_text(f"""
[models."stub-judge"]
display_name = "Stub judge"
family = "Local"
provider = "openai_compatible"
api_model_id = "judge-stub-1"
base_url = "{stub.url}/v1"
batch_api = true
temperature = 0.0
price_in_per_mtok = 1.0
price_out_per_mtok = 1.0
""", encoding="utf-8")
        monkeypatch.setenv("EDUART_MODELS", str(registry))
        code = main(["judge", "--db", str(written.path), "--judge", "stub-judge", "--rubric", RUBRIC, "--dataset",
                     DATASET, "--probes", "0", "--batch", "--poll-interval", "0.02", "--quiet"])
        assert code == 0
        assert len(stub.submissions) == 1 and stub.submissions[0][2] == 12  # one job: 12 answers x 1 criterion
        assert not stub.online_requests
    judgements = load_judgements(written, DATASET, [PROFILE])
    asked = judgements[judgements["method"] == "judge"]
    assert len(asked) == 12 and asked["points"].notna().all()
    assert (asked["cost_usd"] > 0).all()  # priced at the batch rate, recorded per verdict
    scores = views.selected_scores(views.Source.of(written), Selection(dataset=DATASET, profile=PROFILE))
    assert len(scores) == 12
