"""Generic placeholder items in the published format mix, for planning and benchmarking at scale.

Why: the demo has ~70 items and the published set 871; to see how the product behaves with
100 models x 10,000 items, we need valid records of every format in the published proportions.
The text is obviously made up ("Synthetic item 0042 ..."), never exam content.
"""
from __future__ import annotations

import io
import random

from ..formats import find_format
from .score_frames import scaled_mix as format_counts

IMAGE_SHARE = 0.45
PLACEHOLDER_IMAGE = "imgs/synthetic_placeholder.png"


def placeholder_image() -> bytes:
    """One deterministic PNG shared by every synthetic image item."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (800, 600), (236, 232, 224))
    draw = ImageDraw.Draw(img)
    for i in range(0, 800, 40):
        draw.line([(i, 0), (i, 600)], fill=(210, 204, 192))
    for j in range(0, 600, 40):
        draw.line([(0, j), (800, j)], fill=(210, 204, 192))
    draw.rectangle([200, 150, 600, 450], outline=(120, 90, 60), width=6)
    draw.text((250, 290), "EduArt Studio - synthetic placeholder", fill=(60, 50, 40))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def _record(item_id: str, number: int, item_type: str, rng: random.Random) -> dict:
    lang = "it" if rng.random() < 0.7 else "en"
    tag = f"{number:04d}"
    base = {
        "item_id": item_id, "type": item_type, "language": lang,
        "question_title": f"Synthetic exercise {tag}",
        "instructions": "Placeholder instructions for a synthetic item.",
        "exercise": number, "question": 1, "source": "synthetic",
        "has_image": False, "image": None,
    }
    fmt = find_format(item_type)
    if fmt is not None:
        base.update(fmt.placeholder(tag, rng))  # the format's text, options and key (`AnswerFormat.placeholder`)
    return base


def synthesise_items(m: int, seed: int = 0) -> list[dict]:
    """m valid records in the published mix; about 45% share the placeholder image."""
    if m < 1:
        raise ValueError("need at least one item")
    rng = random.Random(f"synthetic|{seed}")
    types: list[str] = []
    for item_type, count in format_counts(m).items():
        types.extend([item_type] * count)
    rng.shuffle(types)
    records = []
    for number, item_type in enumerate(types, start=1):
        record = _record(f"syn{number:05d}", number, item_type, rng)
        if rng.random() < IMAGE_SHARE:
            record["has_image"] = True
            record["image"] = PLACEHOLDER_IMAGE
        records.append(record)
    return records
