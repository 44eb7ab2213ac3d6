"""Exam paper PDFs for the paper-extraction tests, made with fpdf2, and the stub extractors' replies.

The paper: two pages, six multiple-choice questions (question 4 runs across the page break), two
embedded artwork images (one per page) and an answer key line on page 2. The stub extractors read
which page they were asked about from the prompt and answer from ``TRUTH``; extractor B is wrong
on one option (question 3, option C) and on one key (question 5).
"""
from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path

from PIL import Image

RED, BLUE = (200, 30, 30), (30, 60, 200)

QUESTIONS = {
    1: ("Which architect designed the dome of Florence Cathedral?",
        ["Michelangelo", "Alberti", "Brunelleschi", "Bramante"], "C", None),
    2: ("The painting shown above is an example of which movement?",
        ["Baroque", "Impressionism", "Cubism", "Mannerism"], "B", "p1-1"),
    3: ("Which material is typical of Byzantine mosaics?",
        ["Gold tesserae", "Oil paint", "Fresco plaster", "Bronze"], "A", None),
    4: ("Which work did Giotto paint in Padua?",
        ["The Sistine ceiling", "The Last Supper", "The School of Athens", "The Scrovegni Chapel"], "D", None),
    5: ("The sculpture shown is attributed to which artist?",
        ["Donatello", "Bernini", "Canova", "Rodin"], "B", "p2-1"),
    6: ("Which city is home to the Parthenon?",
        ["Athens", "Rome", "Sparta", "Corinth"], "A", None),
}
KEY_LINE = "Answers, Section I, Part A: 1-C, 2-B, 3-A, 4-D, 5-B, 6-A"
LETTERS = "ABCD"


def artwork(colour: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (90, 60), colour).save(out, "PNG")
    return out.getvalue()


def _question(pdf, number: int, options: range | None = None, stem: bool = True) -> None:
    text, choices, _, _ = QUESTIONS[number]
    if stem:
        pdf.multi_cell(0, 7, f"{number}. {text}", new_x="LMARGIN", new_y="NEXT")
    for index in options if options is not None else range(4):
        pdf.multi_cell(0, 7, f"   ({LETTERS[index]}) {choices[index]}", new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)


def _image(pdf, data: bytes) -> None:
    pdf.image(io.BytesIO(data), x=pdf.l_margin, y=pdf.get_y(), w=45)
    pdf.set_y(pdf.get_y() + 34)


def make_paper(path: Path, *, scanned_page: bool = False, broken_image: bool = False) -> Path:
    """The two-page paper (see the module docstring). ``scanned_page``: page 2's text is drawn as
    an image (no text layer); ``broken_image``: page 2's artwork is a JPEG whose data is garbage."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_font("helvetica", size=11)
    pdf.add_page()
    pdf.multi_cell(0, 8, "AP Art History - Section I, Part A", new_x="LMARGIN", new_y="NEXT")
    _question(pdf, 1)
    _image(pdf, artwork(RED))
    _question(pdf, 2)
    _question(pdf, 3)
    _question(pdf, 4, range(2))          # the stem and options A-B; C-D overleaf
    pdf.add_page()
    if scanned_page:
        _image(pdf, artwork((240, 240, 240)))  # a "scan": pixels only
    else:
        _question(pdf, 4, range(2, 4), stem=False)
        if broken_image:
            jpeg = io.BytesIO()
            Image.new("RGB", (90, 60), BLUE).save(jpeg, "JPEG")
            pdf.image(io.BytesIO(jpeg.getvalue()), x=pdf.l_margin, y=pdf.get_y(), w=45)
            pdf.set_y(pdf.get_y() + 34)
        else:
            _image(pdf, artwork(BLUE))
        _question(pdf, 5)
        _question(pdf, 6)
        pdf.multi_cell(0, 8, KEY_LINE, new_x="LMARGIN", new_y="NEXT")
    data = bytearray(pdf.output())
    if broken_image:  # keep the JPEG header, overwrite its scan data: same length, offsets intact
        start = data.find(b"\xff\xd8\xff")
        sos = data.find(b"\xff\xda", start)
        data[sos + 20:sos + 200] = b"\x00" * 180
    path.write_bytes(bytes(data))
    return path


def _record(number: int, options: range) -> dict:
    text, choices, _, image = QUESTIONS[number]
    return {"number": number, "type": "multiple_choice_radio", "language": "en", "question_text": text,
            "choices": [{"id": LETTERS[i], "text": choices[i]} for i in options], "answers": [],
            "image": image, "region": [0.08, 0.1 * number, 0.92, 0.1 * number + 0.08]}


def truth_page(page_no: int) -> dict:
    if page_no == 1:
        questions = [_record(n, range(4)) for n in (1, 2, 3)] + [_record(4, range(2))]
        return {"questions": questions, "answer_key": []}
    continued = _record(4, range(2, 4)) | {"question_text": None}
    return {"questions": [continued, _record(5, range(4)), _record(6, range(4))],
            "answer_key": [{"number": n, "key": q[2]} for n, q in QUESTIONS.items()]}


def stub_answer(info, *, drop_b: int | None = None, unattached_b: int | None = None) -> str:
    """The stub extractors: A is right; B misreads question 3's option C and question 5's key.
    ``drop_b``: a question number extractor B does not report at all; ``unattached_b``: a question
    whose image extractor B does not attach."""
    match = re.search(r"page (\d+) of", info.user_text)
    if not match:
        return json.dumps({"questions": [], "answer_key": []})
    reply = copy.deepcopy(truth_page(int(match.group(1))))
    if "model-b" in info.model:
        for q in reply["questions"]:
            if q["number"] == 3:
                q["choices"][2]["text"] = "Fresco plaster and lime"
        for entry in reply["answer_key"]:
            if entry["number"] == 5:
                entry["key"] = "C"
        for q in reply["questions"]:
            if q["number"] == unattached_b:
                q["image"] = None
        if drop_b is not None:
            reply["questions"] = [q for q in reply["questions"] if q["number"] != drop_b]
    return "```json\n" + json.dumps(reply) + "\n```"
