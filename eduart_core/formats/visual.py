"""Options that point at the image or are images, and regions of the image an item refers to.

A choice may carry `bbox` ([x, y, width, height], normalised 0-1 from the top-left corner, COCO
order) and/or `image` (a path like the item image); an item may carry `regions`
(`[{"id", "bbox", "label"}]`). Why one module: validation, the text a model reads and the
inspector drawing must agree on what a box is, so they share these few functions. Drawing uses
Pillow only (no Streamlit): pages show the returned image, tests read its pixels.
"""
from __future__ import annotations

import io
import math
from collections.abc import Mapping
from typing import Any

from .common import Problems, nonempty_str

__all__ = ["bbox_problem", "bbox_text", "box_shapes", "check_regions", "check_visual_choices",
           "draw_boxes", "regions_lines"]

#: Outline colours of drawn boxes (colour-blind safe), cycled by option/region order.
BOX_COLOURS = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255")
_EPS = 1e-9


def bbox_problem(value: Any) -> str | None:
    """Why `value` is not a normalised [x, y, width, height] box, or None when it is one."""
    if not isinstance(value, (list, tuple)) or len(value) != 4:
        return "bbox must be [x, y, width, height]"
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and not math.isnan(v) for v in value):
        return "bbox values must be numbers"
    x, y, w, h = (float(v) for v in value)
    if min(x, y) < 0 or max(x, y) > 1:
        return "bbox x and y must be between 0 and 1 (normalised)"
    if w <= 0 or h <= 0:
        return "bbox width and height must be positive"
    if x + w > 1 + _EPS or y + h > 1 + _EPS:
        return "bbox must lie inside the image (x + width <= 1, y + height <= 1)"
    return None


def bbox_text(bbox: Any) -> str:
    """How a box reads in a prompt: `box x 0.10, y 0.20, w 0.30, h 0.25` (fractions of the image)."""
    try:
        x, y, w, h = (float(v) for v in bbox)
    except (TypeError, ValueError):
        return "box ?"
    return f"box x {x:.2f}, y {y:.2f}, w {w:.2f}, h {h:.2f}"


def regions_lines(regions: Any) -> list[str]:
    """Prompt lines naming the regions of the image the question refers to."""
    if not isinstance(regions, list) or not regions:
        return []
    lines = ["Regions marked on the image (x, y from the top-left corner, as fractions of its size):"]
    for r in regions:
        if isinstance(r, dict):
            label = f" {r['label']}" if nonempty_str(r.get("label")) else ""
            lines.append(f"[{r.get('id', '')}]{label}: {bbox_text(r.get('bbox'))}")
    return lines


def check_visual_choices(rec: Mapping[str, Any], out: Problems) -> None:
    """Boxes need the item image; option images need a path; text is optional when either is there."""
    choices = rec.get("choices")
    if not isinstance(choices, list):
        return
    for i, c in enumerate(choices):
        if not isinstance(c, dict):
            continue
        where = f"choices[{c.get('id') or i}]"
        if c.get("bbox") is not None:
            problem = bbox_problem(c["bbox"])
            if problem:
                out.add(f"{where}.bbox", problem)
            elif not rec.get("has_image"):
                out.add(f"{where}.bbox", "a box option needs the item image (has_image and image)")
        if "image" in c and c["image"] is not None and not nonempty_str(c["image"]):
            out.add(f"{where}.image", "option image must be a non-empty path or null")


def check_regions(rec: Mapping[str, Any], out: Problems) -> None:
    """`regions`: a list of {id, bbox, label?} with unique ids, on an item that has an image."""
    regions = rec.get("regions")
    if regions is None:
        return
    if not isinstance(regions, list):
        out.add("regions", f"must be a list of {{id, bbox, label}}, got {type(regions).__name__}")
        return
    if regions and not rec.get("has_image"):
        out.add("regions", "regions need the item image (has_image and image)")
    seen: set[str] = set()
    for i, r in enumerate(regions):
        if not isinstance(r, dict):
            out.add(f"regions[{i}]", f"expected an object, got {type(r).__name__}")
            continue
        ident = r.get("id")
        if not nonempty_str(ident):
            out.add(f"regions[{i}].id", "missing id")
        elif ident in seen:
            out.add(f"regions[{ident}]", f"duplicate region id {ident}")
        else:
            seen.add(ident)
        problem = bbox_problem(r.get("bbox"))
        if problem:
            out.add(f"regions[{ident or i}].bbox", problem)
        if r.get("label") is not None and not isinstance(r.get("label"), str):
            out.add(f"regions[{ident or i}].label", "label must be a string")


def _boxes(record: Mapping[str, Any]) -> list[tuple[str, list, str]]:
    """(label, bbox, kind) of every valid option box and region, in order."""
    boxes = []
    for c in record.get("choices") or []:
        if isinstance(c, dict) and c.get("bbox") is not None and bbox_problem(c["bbox"]) is None:
            boxes.append((str(c.get("id", "")), list(c["bbox"]), "option"))
    for r in record.get("regions") or []:
        if isinstance(r, dict) and bbox_problem(r.get("bbox")) is None:
            label = str(r.get("id", "")) + (f" {r['label']}" if nonempty_str(r.get("label")) else "")
            boxes.append((label, list(r["bbox"]), "region"))
    return boxes


def box_shapes(record: Mapping[str, Any], width: int, height: int) -> list[dict]:
    """Boxes in pixels for a plotly figure or any other drawer: label, kind, x0, y0, x1, y1, colour."""
    out = []
    for n, (label, (x, y, w, h), kind) in enumerate(_boxes(record)):
        out.append({"label": label, "kind": kind, "x0": x * width, "y0": y * height,
                    "x1": (x + w) * width, "y1": (y + h) * height,
                    "colour": BOX_COLOURS[n % len(BOX_COLOURS)]})
    return out


def draw_boxes(image: bytes | Any, record: Mapping[str, Any], *, gold_ids: set[str] | None = None):
    """A copy of the item image (bytes or PIL image) with option boxes and regions drawn and labelled.

    Option boxes are solid, regions dashed-looking (thinner); the gold option, when given, is drawn
    twice as thick. Returns a PIL RGB image; the input is not modified.
    """
    from PIL import Image, ImageDraw, ImageFont

    if isinstance(image, (bytes, bytearray)):
        with Image.open(io.BytesIO(image)) as opened:
            canvas = opened.convert("RGB")
    else:
        canvas = image.convert("RGB")
    draw = ImageDraw.Draw(canvas)
    width, height = canvas.size
    line = max(2, round(min(width, height) / 150))
    try:
        font = ImageFont.load_default(size=max(12, round(min(width, height) / 25)))
    except TypeError:  # older Pillow without sizes
        font = ImageFont.load_default()
    for shape in box_shapes(record, width, height):
        thick = line * (2 if gold_ids and shape["kind"] == "option" and shape["label"] in gold_ids else 1)
        if shape["kind"] == "region":
            thick = max(1, line // 2)
        box = [shape["x0"], shape["y0"], shape["x1"] - 1, shape["y1"] - 1]
        draw.rectangle(box, outline=shape["colour"], width=thick)
        text = shape["label"]
        left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
        tx, ty = shape["x0"] + thick, shape["y0"] + thick
        draw.rectangle([tx, ty, tx + right - left + 4, ty + bottom - top + 4], fill=shape["colour"])
        draw.text((tx + 2 - left, ty + 2 - top), text, fill="white", font=font)
    return canvas
