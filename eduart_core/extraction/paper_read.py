"""Reading an exam paper PDF: each page rendered, its text layer, the images embedded on it.

Why one page at a time (a generator): a released paper runs to dozens of pages, and a rendered
page is megabytes of pixels; the caller stores each page before the next one is rendered, so
memory stays that of one page whatever the paper's length. Why pdfium (``pypdfium2``): it renders
like a browser's PDF viewer and is permissively licensed. An embedded image is a candidate for
"the image the question refers to"; one that does not decode is named and left out, never stored.
"""
from __future__ import annotations

import io
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import UserError
from ..imagecheck import ImageRejected, verify_image

RENDER_SCALE = 2.0  # 144 dpi: small print stays legible to a model and a reviewer


@dataclass
class CandidateImage:
    label: str                 # 'p<page>-<n>': the name the extractors and the reviewer see
    data: bytes
    bbox: list[float] | None   # [x0, y0, x1, y1] as fractions of the page, top-left origin


@dataclass
class PaperPage:
    paper: str
    page_no: int
    image: bytes               # the rendered page (JPEG)
    text: str | None           # None when the page has no text layer (a scan)
    width_pt: float
    height_pt: float
    images: list[CandidateImage] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # one line each: an image left out


def open_paper(path: Path):
    """The pdfium document of ``path``; a one-line ``UserError`` when it is not a readable PDF."""
    import pypdfium2 as pdfium

    path = Path(path)
    try:
        with path.open("rb") as handle:
            head = handle.read(1024)
    except OSError as exc:
        raise UserError(f"{path.name}: cannot be read ({exc.strerror})") from None
    if b"%PDF-" not in head:
        raise UserError(f"{path.name}: not a PDF")
    try:
        return pdfium.PdfDocument(path)
    except pdfium.PdfiumError as exc:
        if "password" in str(exc).lower():
            raise UserError(f"{path.name}: encrypted (it needs a password); decrypt it first") from None
        raise UserError(f"{path.name}: damaged PDF ({exc})") from None


def _text(page) -> str | None:
    textpage = page.get_textpage()
    try:
        text = textpage.get_text_bounded().replace("\r\n", "\n").replace("\r", "\n").strip()
    finally:
        textpage.close()
    return text or None


def _jpeg(page) -> bytes:
    """The rendered page as a JPEG: a page with a photograph costs about 0.3 s as PNG and 0.02 s as
    JPEG; quality 90 without chroma subsampling keeps small print sharp."""
    image = page.render(scale=RENDER_SCALE).to_pil()
    out = io.BytesIO()
    image.convert("RGB").save(out, format="JPEG", quality=90, subsampling=0)
    return out.getvalue()


def _images(page, page_no: int, width: float, height: float) -> tuple[list[CandidateImage], list[str]]:
    import pypdfium2.raw as pdfium_c

    found, problems = [], []
    for index, obj in enumerate(page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE]), start=1):
        label = f"p{page_no}-{index}"
        try:
            out = io.BytesIO()
            obj.extract(out)
            data = out.getvalue()
            verify_image(data)
        except ImageRejected as exc:
            problems.append(f"page {page_no} image {label}: does not decode ({exc}); left out")
            continue
        except Exception as exc:  # pdfium/PIL failures on a broken stream: the image is named, the page goes on
            problems.append(f"page {page_no} image {label}: does not decode ({type(exc).__name__}); left out")
            continue
        x0, y0, x1, y1 = obj.get_bounds()  # PDF points, bottom-left origin
        bbox = [round(x0 / width, 4), round(1 - y1 / height, 4), round(x1 / width, 4), round(1 - y0 / height, 4)]
        found.append(CandidateImage(label, data, bbox))
    return found, problems


def read_pages(path: Path, paper: str | None = None) -> Iterator[PaperPage]:
    """Every page of the PDF at ``path``, one at a time (see the module docstring)."""
    path = Path(path)
    doc = open_paper(path)
    name = paper or path.stem
    try:
        for index in range(len(doc)):
            page = doc[index]
            try:
                width, height = page.get_size()
                images, problems = _images(page, index + 1, width, height)
                yield PaperPage(name, index + 1, _jpeg(page), _text(page), width, height, images, problems)
            finally:
                page.close()
    finally:
        doc.close()


def pdf_text(path: Path) -> str:
    """The text layer of a whole PDF (an answer key given as its own file)."""
    doc = open_paper(path)
    try:
        parts = []
        for index in range(len(doc)):
            page = doc[index]
            try:
                parts.append(_text(page) or "")
            finally:
                page.close()
        return "\n".join(parts)
    finally:
        doc.close()
