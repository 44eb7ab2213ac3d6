"""Render an item record as an exam-page screenshot (PNG) with Pillow, for the offline demo.

Why: the review page must show a screenshot next to the two extractions, and the demo cannot ship
real exam captures (copyrighted). The rendering mimics an exercise page: a header band with the
exercise title, the instruction in italics, the text, then the options laid out per format. It is
deterministic (same record, same bytes) so demo builds are reproducible.
"""
from __future__ import annotations

import io
import textwrap
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

from ..formats import find_format

WIDTH = 1000
MARGIN = 48
_FONT_DIRS = (Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/truetype/liberation"))
_FONT_FILES = {"regular": ("DejaVuSans.ttf", "LiberationSans-Regular.ttf"),
               "bold": ("DejaVuSans-Bold.ttf", "LiberationSans-Bold.ttf"),
               "italic": ("DejaVuSans-Oblique.ttf", "LiberationSans-Italic.ttf")}


@lru_cache(maxsize=32)
def _font(style: str, size: int) -> ImageFont.FreeTypeFont | ImageFont.ImageFont:
    for folder in _FONT_DIRS:
        for name in _FONT_FILES[style]:
            if (folder / name).exists():
                return ImageFont.truetype(str(folder / name), size)
    return ImageFont.load_default(size=size)


def _option_lines(record: dict) -> list[str]:
    """The options as the record's format lays them out on a page (`AnswerFormat.screenshot_lines`)."""
    fmt = find_format(record.get("type"))
    return fmt.screenshot_lines(record) if fmt is not None else []


def render_page(record: dict, header: str = "Esercizio") -> bytes:
    """PNG bytes of a page showing the record as a student would see it (no answers)."""
    blocks: list[tuple[str, str, int, tuple[int, int, int]]] = []  # (text, style, size, colour)
    title = record.get("question_title") or ""
    exercise = record.get("exercise")
    heading = f"{header} {exercise}" if exercise not in (None, "") else header
    blocks.append((heading + (f" · {title}" if title else ""), "bold", 26, (255, 255, 255)))
    if record.get("instructions"):
        blocks.append((str(record["instructions"]), "italic", 20, (60, 60, 60)))
    if record.get("question_text"):
        blocks.append((str(record["question_text"]), "regular", 22, (20, 20, 20)))
    for line in _option_lines(record):
        blocks.append((line, "regular", 21, (20, 20, 20)))

    laid: list[tuple[list[str], ImageFont.ImageFont | ImageFont.FreeTypeFont, tuple[int, int, int], int]] = []
    height = MARGIN
    for text, style, size, colour in blocks:
        font = _font(style, size)
        per_line = max(20, int((WIDTH - 2 * MARGIN) / (size * 0.55)))
        lines: list[str] = []
        for paragraph in text.split("\n"):
            lines.extend(textwrap.wrap(paragraph, per_line) or [""])
        step = int(size * 1.45)
        laid.append((lines, font, colour, step))
        height += step * len(lines) + 18
    height += MARGIN

    image = Image.new("RGB", (WIDTH, height), (250, 248, 242))
    draw = ImageDraw.Draw(image)
    y = MARGIN // 2
    for index, (lines, font, colour, step) in enumerate(laid):
        if index == 0:  # header band
            band = step * len(lines) + 20
            draw.rectangle([0, 0, WIDTH, y + band], fill=(32, 74, 110))
            y += 10
        for line in lines:
            draw.text((MARGIN, y), line, font=font, fill=colour)
            y += step
        y += 18 if index else 28
    draw.rectangle([0, height - 6, WIDTH, height], fill=(32, 74, 110))
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def page_text(record: dict) -> str:
    """The visible text of the rendered page, as an HTML capture would give it."""
    parts = [str(record.get(k)) for k in ("question_title", "instructions", "question_text") if record.get(k)]
    return "\n".join(parts + _option_lines(record))
