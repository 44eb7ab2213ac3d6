"""Exam papers in PDF: extract with two stub extractors (real OpenAI and Gemini SDKs on 127.0.0.1),
join questions and the key by number, review the planted discrepancies, promote, bad input."""
from __future__ import annotations

import io

import pytest
from PIL import Image

from eduart_core.errors import UserError
from eduart_core.extraction import review
from eduart_core.items import check_item
from eduart_core.store import extraction as db
from eduart_core.store import papers as paper_db
from eduart_core.store.items import get_item, image_path
from eduart_core.team.identity import local
from tests.extraction import paper_kit

DATASET = "papers"


@pytest.fixture
def stub(monkeypatch):
    from tests.stubs import StubServer

    with StubServer(answer=paper_kit.stub_answer) as server:
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-paper")
        monkeypatch.setenv("OPENAI_BASE_URL", server.url + "/v1")
        monkeypatch.setenv("GEMINI_API_KEY", "gem-test-paper-000000")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        yield server


def _cli(store_path, source, *extra) -> list[str]:
    return ["extract", "--input", str(source), "--extractor", "A=openai:model-a",
            "--extractor", "B=gemini:model-b", "--db", str(store_path), "--dataset", DATASET, *extra]


def _colour(store, image_hash: str) -> tuple[int, int, int]:
    with Image.open(io.BytesIO(image_path(store, image_hash).read_bytes())) as image:
        return image.convert("RGB").getpixel((10, 10))


def test_two_page_paper_gives_six_questions_images_key_and_the_planted_discrepancies(
        tmp_path, store_path, store, stub, capsys):
    from eduart_core.cli import main

    paper = paper_kit.make_paper(tmp_path / "exam2024.pdf")
    assert main(_cli(store_path, paper)) == 0
    out = capsys.readouterr().out
    assert "1 papers, 2 pages, 4 requests" in out and "6 questions" in out
    assert "questions: agreed 4, queued 2" in out

    # every request had the page image, its text layer and the page's candidate images
    first = [r for r in stub.requests if "page 1 of 2" in r.user_text]
    assert len(first) == 2 and {r.protocol for r in first} == {"openai", "gemini"}
    for request in first:
        assert "1. Which architect designed the dome" in request.user_text
        assert request.image.startswith(b"\xff\xd8") and len(request.images) == 2  # the page, then p1-1

    pages = paper_db.load_pages(store, "exam2024")
    assert list(pages["page_no"]) == [1, 2] and "1-C, 2-B" in pages.iloc[1]["page_text"]
    images = paper_db.load_images(store, "exam2024").set_index("label")
    assert list(images.index) == ["p1-1", "p2-1"]
    assert _colour(store, images.loc["p1-1", "image_hash"]) == paper_kit.RED
    assert _colour(store, images.loc["p2-1", "image_hash"]) == paper_kit.BLUE

    outcomes = db.load_outcomes(store, 1).set_index("page_id")["merge_status"].to_dict()
    assert outcomes == {f"exam2024/q0{n}": ("queued" if n in (3, 5) else "agreed") for n in range(1, 7)}
    queued = db.load_discrepancies(store, 1)
    queued = queued[queued["queued"]]
    assert sorted(zip(queued["page_id"], queued["path"])) == [("exam2024/q03", "choices[C].text"),
                                                              ("exam2024/q05", "answers")]

    # question 4 ran across the page break: one record with options A-D, found on both pages
    q4 = get_item(store, DATASET, "exam2024-q04")["record"]
    assert [c["id"] for c in q4["choices"]] == ["A", "B", "C", "D"] and q4["answers"] == [{"id": "D"}]
    placed = paper_db.load_questions(store, "exam2024/q04", 1)
    assert [list(p) for p in placed["pages"]] == [[1, 2], [1, 2]]
    # the key joined by number; the image attached to the question that refers to it
    q2 = get_item(store, DATASET, "exam2024-q02")
    assert q2["record"]["answers"] == [{"id": "B"}] and q2["record"]["has_image"] is True
    assert q2["image_hash"] == images.loc["p1-1", "image_hash"]

    # the reviewer settles the two planted discrepancies; all six items are then valid
    review.decide(store, "exam2024/q03", 1, "choices[C].text", "accept_a", local("Anna"))
    result = review.decide(store, "exam2024/q05", 1, "answers", "accept_a", local("Anna"))
    assert result.promoted_version == 1
    for n in range(1, 7):
        item = get_item(store, DATASET, f"exam2024-q0{n}")
        assert check_item(item["record"])[1] == [], n
        assert item["record"]["answers"] == [{"id": paper_kit.QUESTIONS[n][2]}]
        if n in (2, 5):
            expected = paper_kit.RED if n == 2 else paper_kit.BLUE
            assert _colour(store, item["image_hash"]) == expected
        else:
            assert item["image_hash"] is None
    # a second run asks nothing again (the journal) and changes nothing
    asked = len(stub.requests)
    assert main(_cli(store_path, paper)) == 0
    assert len(stub.requests) == asked


def test_question_only_one_extractor_found_is_named_and_queued(tmp_path, store_path, store, stub, capsys):
    from eduart_core.cli import main

    stub.answer = lambda info: paper_kit.stub_answer(info, drop_b=6)
    paper = paper_kit.make_paper(tmp_path / "exam2024.pdf")
    assert main(_cli(store_path, paper)) == 0
    out = capsys.readouterr().out
    assert "for review: exam2024: question 6 was found only by extractor A" in out
    notes = paper_db.load_notes(store, "exam2024", 1)
    assert ("only_a", "6") in set(zip(notes["kind"], notes["ref"]))
    fields = review.page_fields(store, "exam2024/q06", 1)
    assert {"question_text", "choices", "type"} <= set(fields["path"])
    assert db.load_outcomes(store, 1).set_index("page_id").loc["exam2024/q06", "merge_status"] == "queued"


def test_key_from_a_csv_is_joined_and_gaps_are_named(tmp_path, store_path, store, stub, capsys):
    from eduart_core.cli import main

    paper = paper_kit.make_paper(tmp_path / "exam2024.pdf")
    key = tmp_path / "key.csv"
    key.write_text("number,key\n1,C\n2,B\n3,A\n4,D\n6,A\n9,B\n")
    assert main(_cli(store_path, paper, "--key", str(key))) == 0
    out = capsys.readouterr().out
    assert "for review: exam2024: question 5 has no key" in out
    assert "for review: exam2024: key 9-B has no question 9" in out
    # the file's key stands for both extractors: question 5's misread key is no discrepancy now
    queued = db.load_discrepancies(store, 1)
    assert set(queued[queued["queued"]]["page_id"]) == {"exam2024/q03"}
    attention = review.attention_pages(store, 1)
    assert "exam2024/q05" in set(attention["page_id"])  # agreed, but without a key it is not promoted
    from eduart_core import views

    notes = views.paper_notes(views.Source.of(store))  # the studio's list of the papers' notes
    assert sorted(zip(notes["kind"], notes["about"])) == [("key_without_question", "9"), ("no_key", "5")]


def test_key_parsing_from_text_and_pdf(tmp_path):
    from fpdf import FPDF

    from eduart_core.extraction.answer_key import parse_key_text, read_key_file

    assert parse_key_text("3. Which of these?\n(A) x\nAnswers: 1-C, 2-B, 3 - AD, 4) a") == {
        1: "C", 2: "B", 3: "AD", 4: "A"}
    assert parse_key_text("1. Which? (A) one (B) two") == {}  # no key heading: nothing read
    pdf = FPDF()
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    pdf.multi_cell(0, 8, "1  C\n2  B\n3  A")
    pdf.output(str(tmp_path / "key.pdf"))
    assert read_key_file(tmp_path / "key.pdf") == {1: "C", 2: "B", 3: "A"}


def test_bad_papers_are_named_one_line_each_and_the_rest_extracted(tmp_path, store_path, store, stub, capsys):
    from fpdf import FPDF

    from eduart_core.cli import main

    folder = tmp_path / "papers"
    folder.mkdir()
    paper_kit.make_paper(folder / "good.pdf", broken_image=True)
    paper_kit.make_paper(folder / "scanned.pdf", scanned_page=True)
    locked = FPDF()
    locked.set_encryption(owner_password="owner", user_password="secret")
    locked.add_page()
    locked.set_font("helvetica", size=11)
    locked.cell(0, 8, "1. A locked question")
    locked.output(str(folder / "locked.pdf"))
    whole = (folder / "good.pdf").read_bytes()
    (folder / "damaged.pdf").write_bytes(whole[:400])
    (folder / "notes.pdf").write_text("these are my notes, not a PDF")

    assert main(_cli(store_path, folder)) == 2
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if line.strip()]
    assert "Traceback" not in captured.err
    assert any(line.startswith("locked.pdf: encrypted") for line in lines)
    assert any(line.startswith("damaged.pdf: damaged PDF") for line in lines)
    assert "notes.pdf: not a PDF" in lines
    assert any(line.startswith("good.pdf page 2 image p2-1: does not decode") for line in lines)
    assert any(line.startswith("scanned.pdf page 2: no text layer") for line in lines)
    assert len(lines) == 5
    assert "2 papers, 4 pages" in captured.out
    # the scan's page went to the extractors as an image, with word that no text was read
    scan = [r for r in stub.requests if "Paper scanned, page 2" in r.user_text]
    assert scan and all("(this page has no text layer)" in r.user_text and r.image for r in scan)
    assert paper_db.load_pages(store, "scanned").set_index("page_no").loc[2, "page_text"] is None
    # the good paper's questions are there; question 5's image did not decode, so it has none
    assert len(paper_db.load_images(store, "good")) == 1
    good = db.load_outcomes(store, 1)
    assert {f"good/q0{n}" for n in range(1, 7)} <= set(good["page_id"])
    # the review of a question on the scanned page says that no text was read from it
    from eduart_core.extraction.paper_review import paper_question

    assert [p["has_text"] for p in paper_question(store, "scanned/q05", 1).pages] == [False]


def test_missing_paper_is_one_line(tmp_path, store_path, capsys):
    from eduart_core.cli import main

    assert main(_cli(store_path, tmp_path / "nowhere.pdf")) == 2
    err = capsys.readouterr().err
    assert "nowhere.pdf: no such file" in err and "Traceback" not in err


def _paper_with_image_in_question(tmp_path, store_path, stub, capsys) -> None:
    from eduart_core.cli import main

    stub.answer = lambda info: paper_kit.stub_answer(info, unattached_b=2, drop_b=6)
    assert main(_cli(store_path, paper_kit.make_paper(tmp_path / "exam2024.pdf"))) == 0
    capsys.readouterr()


def test_attaching_an_image_is_a_recorded_decision(tmp_path, store_path, store, stub, capsys):
    from eduart_core.extraction.paper_review import attach_image, paper_question

    _paper_with_image_in_question(tmp_path, store_path, stub, capsys)
    context = paper_question(store, "exam2024/q02", 1)
    assert [p["page_no"] for p in context.pages] == [1] and context.pages[0]["has_text"]
    assert [(c["label"], c["attached_by"]) for c in context.candidates] == [("p1-1", ["A"])]
    assert set(context.pages[0]["regions"]) == {"A", "B"}
    fields = review.page_fields(store, "exam2024/q02", 1)
    assert list(fields["path"]) == ["image"]
    detached = attach_image(store, "exam2024/q02", 1, None, local("Bruno"))   # B's reading: no image
    log = db.load_decisions(store, "exam2024/q02").to_dict("records")
    assert (log[-1]["reviewer"], log[-1]["action"], log[-1]["new_value"]) == ("Bruno", "accept_b", None)
    assert get_item(store, DATASET, "exam2024-q02")["image_hash"] is None and detached.page_resolved
    hash_ = context.candidates[0]["image_hash"]
    attach_image(store, "exam2024/q02", 1, hash_, local("Anna"))                # changed her mind: A's image
    item = get_item(store, DATASET, "exam2024-q02")
    assert item["version"] == 2 and item["image_hash"] == hash_ and item["record"]["has_image"] is True
    assert db.load_decisions(store, "exam2024/q02").to_dict("records")[-1]["reviewer"] == "Anna"


@pytest.mark.slow
def test_review_page_shows_the_paper_page_and_attaches_an_image(tmp_path, store_path, store, stub, capsys,
                                                               monkeypatch):
    from streamlit.testing.v1 import AppTest

    from tests.reading import as_read

    _paper_with_image_in_question(tmp_path, store_path, stub, capsys)
    monkeypatch.setenv("EDUART_DB", str(store_path))
    at = AppTest.from_file("../../pages/11_review.py", default_timeout=90)
    at.run()
    at.text_input(key="review_name").input("Anna").run()
    at.session_state["review_round"] = 1
    at.session_state["review_current"] = ("exam2024/q02", 1)
    at.run()
    assert not at.exception, at.exception
    captions = " ".join(as_read(c.value) for c in at.caption)
    assert "Paper exam2024, page 1, question 2" in captions
    assert "p1-1 (page 1) · attached by A" in captions
    at.button(key="attach::exam2024/q02|1|p1-1").click().run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    last = db.load_decisions(store, "exam2024/q02").to_dict("records")[-1]
    assert (last["reviewer"], last["action"]) == ("Anna", "accept_a")
    assert get_item(store, DATASET, "exam2024-q02")["record"]["has_image"] is True
    at.toggle(key="review_show_rounds").set_value(True).run()
    assert not at.exception, at.exception
    assert "note(s) on PDF papers" in " ".join(as_read(m.value) for m in at.markdown)
    shown = [frame.value for frame in at.dataframe if "note" in frame.value.columns]
    assert shown and list(shown[0]["note"]) == ["extractor B: key 6-A has no question 6",
                                               "question 6 was found only by extractor A"]


def test_parts_of_a_question_are_joined_by_number():
    from eduart_core.extraction.paper_join import join_replies

    replies = [(1, {"questions": [{"number": "Question 7", "type": "multiple_choice_radio", "question_text": "Which",
                                   "choices": [{"id": "A", "text": "x"}], "image": "p1-1"}]}),
               (2, {"questions": [{"number": 7, "question_text": "painter?",
                                   "choices": [{"id": "A", "text": "x"}, {"id": "B", "text": "y"}]},
                                  {"number": 8, "question_text": "Where?", "image": "p9-9"},
                                  {"type": "multiple_choice_radio"}],
                    "answer_key": "7-B, 8-A"})]
    questions, key, problems = join_replies(replies, {"p1-1": "a" * 64})
    q7 = questions[7]
    assert q7.record["question_text"] == "Which painter?"
    assert [c["id"] for c in q7.record["choices"]] == ["A", "B"]
    assert (q7.pages, q7.image_label, q7.record["image"]) == ([1, 2], "p1-1", "a" * 64)
    assert key == {7: "B", 8: "A"} and questions[8].record["image"] is None
    assert problems == ["question 8: attached 'p9-9', which is not an image of the paper",
                        "page 2: a question without a number was left out"]


def test_a_page_reply_may_be_the_list_of_questions_alone():
    from eduart_core.extraction.paper_join import parse_page_reply

    assert parse_page_reply('```json\n[{"number": 1}]\n```') == ({"questions": [{"number": 1}]}, None)
    assert parse_page_reply('Here: {"questions": [], "answer_key": []}') == ({"questions": [], "answer_key": []}, None)
    assert parse_page_reply('{"type": "multiple_choice_radio"}') == (None, "reply holds no list of questions")
    assert parse_page_reply("I cannot read this page.") == (None, "reply holds no JSON object")


def test_a_page_an_extractor_failed_on_is_named_and_its_questions_wait(tmp_path, store_path, store, stub, capsys):
    from eduart_core.cli import main

    stub.fault_for = lambda info: ({"kind": "status", "status": 400}
                                   if "model-b" in info.model and "page 2 of" in info.user_text else None)
    assert main(_cli(store_path, paper_kit.make_paper(tmp_path / "exam2024.pdf"))) == 0
    out = capsys.readouterr().out
    assert "for review: exam2024: extractor B failed on page 2" in out
    assert "question 5 was found only by extractor A" in out and "question 6 was found only by extractor A" in out
    statuses = db.load_outcomes(store, 1).set_index("page_id")["merge_status"].to_dict()
    assert {statuses[f"exam2024/q0{n}"] for n in (4, 5, 6)} == {"queued"}  # q4: B saw only options A-B
    rows = db.load_extractions(store, round=1)
    assert set(rows[rows["extractor"] == "B"]["page_id"]) == {f"exam2024/q0{n}" for n in (1, 2, 3, 4)}


def test_attach_in_a_blind_round_counts_like_any_decision(tmp_path, store_path, store, stub, capsys):
    from eduart_core.extraction.paper_review import attach_image, paper_question

    _paper_with_image_in_question(tmp_path, store_path, stub, capsys)
    review.set_reviewers(store, DATASET, 1, 2, set_by=local("lead"))
    red = paper_question(store, "exam2024/q02", 1).candidates[0]["image_hash"]
    first = attach_image(store, "exam2024/q02", 1, red, local("Anna"))
    assert not first.page_resolved
    with pytest.raises(UserError):
        get_item(store, DATASET, "exam2024-q02")  # not promoted on one reviewer's word
    second = attach_image(store, "exam2024/q02", 1, red, local("Bruno"))   # two independent reviewers agree
    assert second.page_resolved
    assert get_item(store, DATASET, "exam2024-q02")["image_hash"] == red
    log = db.load_decisions(store, "exam2024/q02")
    assert list(log["reviewer"]) == ["Anna", "Bruno"] and set(log["action"]) == {"accept_a"}
