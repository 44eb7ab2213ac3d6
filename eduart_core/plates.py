"""Study plates: teaching diagrams for the demo benchmark, drawn with Pillow.

Images cannot be downloaded for the demo, and paintings are not ours to ship, so the demo's image
questions ask about visual concepts (vanishing point, composition scheme, dominant colour,
number of panels, light direction, placement, horizon) on plates generated here. Every plate is
described by a `PlateSpec` whose `params` are the facts an image question may ask about, so a
test can check each gold answer against the generator itself.

Plates are deterministic: fixed sizes, integer geometry, no text (font rendering differs between
machines), no metadata, fixed encoder options. `render_plate(name)` returns the same bytes on
every run on a given Pillow build.
"""
from __future__ import annotations

import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

Colour = tuple[int, int, int]

PAPER: Colour = (246, 241, 228)
INK: Colour = (40, 38, 36)
GUIDE: Colour = (196, 48, 43)
PRIMARY: dict[str, Colour] = {"red": (214, 40, 40), "blue": (28, 64, 160), "yellow": (247, 206, 42)}

# Twelve-hue painter's (RYB) wheel, clockwise from the top; complements sit six steps apart.
WHEEL: list[tuple[str, Colour]] = [
    ("yellow", (250, 214, 30)), ("yellow-orange", (250, 170, 30)), ("orange", (243, 126, 32)),
    ("red-orange", (232, 80, 36)), ("red", (208, 32, 40)), ("red-violet", (170, 36, 110)),
    ("violet", (112, 48, 150)), ("blue-violet", (72, 60, 160)), ("blue", (30, 80, 170)),
    ("blue-green", (20, 140, 140)), ("green", (40, 150, 60)), ("yellow-green", (150, 196, 40)),
]

# Words that items use for parameter values, so tests can match gold text against params.
VALUE_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "left": {"en": ("left",), "it": ("sinistra",)},
    "right": {"en": ("right",), "it": ("destra",)},
    "centre": {"en": ("centre", "center"), "it": ("centro", "centrale")},
    "high": {"en": ("high",), "it": ("alto", "alta")},
    "middle": {"en": ("middle", "halfway"), "it": ("metà", "mezzo")},
    "low": {"en": ("low",), "it": ("basso", "bassa")},
    "pyramidal": {"en": ("pyramidal",), "it": ("piramidale",)},
    "diagonal": {"en": ("diagonal",), "it": ("diagonale",)},
    "radial": {"en": ("radial",), "it": ("radiale",)},
    "red": {"en": ("red",), "it": ("rosso",)},
    "blue": {"en": ("blue",), "it": ("blu",)},
    "yellow": {"en": ("yellow",), "it": ("giallo",)},
    "green": {"en": ("green",), "it": ("verde",)},
    "orange": {"en": ("orange",), "it": ("arancione",)},
    "violet": {"en": ("violet", "purple"), "it": ("viola",)},
    "sky": {"en": ("sky",), "it": ("cielo",)},
    "land": {"en": ("land", "ground"), "it": ("terra", "terreno")},
    "upper-left": {"en": ("upper left",), "it": ("in alto a sinistra",)},
    "lower-right": {"en": ("lower right",), "it": ("in basso a destra",)},
    "thirds": {"en": ("thirds",), "it": ("terzi",)},
    "golden": {"en": ("golden",), "it": ("aurea",)},
    "diptych": {"en": ("diptych",), "it": ("dittico",)},
    "triptych": {"en": ("triptych",), "it": ("trittico",)},
    "polyptych": {"en": ("polyptych",), "it": ("polittico",)},
}
NUMBER_WORDS: dict[int, dict[str, str]] = {
    2: {"en": "two", "it": "due"}, 3: {"en": "three", "it": "tre"}, 4: {"en": "four", "it": "quattro"},
    5: {"en": "five", "it": "cinque"}, 6: {"en": "six", "it": "sei"}, 7: {"en": "seven", "it": "sette"},
    8: {"en": "eight", "it": "otto"}, 9: {"en": "nine", "it": "nove"}, 10: {"en": "ten", "it": "dieci"},
}


@dataclass(frozen=True)
class PlateSpec:
    """One plate: what it shows (`kind`, `params`) and how it is stored (`size`, `format`)."""

    name: str
    kind: str
    params: dict[str, Any]
    size: tuple[int, int]
    format: str = "PNG"

    @property
    def filename(self) -> str:
        return f"{self.name}.{'jpg' if self.format == 'JPEG' else 'png'}"


def value_words(value: Any, language: str) -> tuple[str, ...]:
    """The words an item in `language` may use for a parameter value (numbers as digit or word)."""
    if isinstance(value, int) and not isinstance(value, bool):
        word = NUMBER_WORDS.get(value, {}).get(language)
        return (str(value),) + ((word,) if word else ())
    return VALUE_WORDS.get(str(value), {}).get(language, (str(value),))


# ---------------------------------------------------------------- drawing helpers

def _canvas(spec: PlateSpec, colour: Colour = PAPER) -> tuple[Image.Image, ImageDraw.ImageDraw]:
    image = Image.new("RGB", spec.size, colour)
    return image, ImageDraw.Draw(image)


def _dashed(draw: ImageDraw.ImageDraw, a: tuple[float, float], b: tuple[float, float],
            colour: Colour, width: int, dash: int = 14) -> None:
    """A dashed straight line: construction lines look like construction lines."""
    length = math.dist(a, b)
    steps = max(1, int(length // dash))
    for i in range(0, steps, 2):
        t0, t1 = i / steps, min(1.0, (i + 1) / steps)
        draw.line([(a[0] + (b[0] - a[0]) * t0, a[1] + (b[1] - a[1]) * t0),
                   (a[0] + (b[0] - a[0]) * t1, a[1] + (b[1] - a[1]) * t1)], fill=colour, width=width)


def _figure(draw: ImageDraw.ImageDraw, cx: float, foot: float, height: float, robe: Colour) -> None:
    """A standing figure reduced to a head and a robe, the way drawing manuals block them in."""
    head = height * 0.095
    shoulders, hem = height * 0.12, height * 0.2
    top = foot - height
    draw.polygon([(cx - shoulders, top + head * 2.1), (cx + shoulders, top + head * 2.1),
                  (cx + hem, foot), (cx - hem, foot)], fill=robe, outline=INK, width=2)
    draw.ellipse([cx - head, top, cx + head, top + head * 2.1], fill=(232, 196, 160), outline=INK,
                 width=2)


# ---------------------------------------------------------------- plate kinds

HORIZON_FRACTION = {"high": 0.28, "middle": 0.5, "low": 0.72}
VP_FRACTION = {"left": 0.2, "centre": 0.5, "right": 0.8}


def _one_point_perspective(spec: PlateSpec) -> Image.Image:
    """Tiled floor whose orthogonals meet at one vanishing point on the horizon line."""
    image, draw = _canvas(spec, (226, 232, 238))
    w, h = spec.size
    hy = round(h * HORIZON_FRACTION[spec.params["horizon"]])
    vx = round(w * VP_FRACTION[spec.params["vanishing_point"]])
    draw.rectangle([0, hy, w, h], fill=(214, 200, 176))
    tile, distance, cols = w / spec.params["tiles"], w * 0.9, range(-40, 41)
    for row in range(0, 60):
        z0, z1 = row * tile, (row + 1) * tile
        s0, s1 = distance / (distance + z0), distance / (distance + z1)
        y0, y1 = hy + (h - hy) * s0, hy + (h - hy) * s1
        if y0 - y1 < 2.5:
            break
        for col in cols:
            if (row + col) % 2:
                continue
            x0, x1 = col * tile - vx, (col + 1) * tile - vx
            draw.polygon([(vx + x0 * s0, y0), (vx + x1 * s0, y0), (vx + x1 * s1, y1),
                          (vx + x0 * s1, y1)], fill=(120, 92, 70))
    for col in range(0, spec.params["tiles"] + 1):
        _dashed(draw, (col * tile, h), (vx, hy), GUIDE, 3)
    draw.line([(0, hy), (w, hy)], fill=INK, width=3)
    r = max(8, w // 90)
    draw.ellipse([vx - r, hy - r, vx + r, hy + r], outline=GUIDE, width=4)
    return image


def _composition(spec: PlateSpec) -> Image.Image:
    """Figures grouped by a named scheme, with the scheme's construction lines."""
    image, draw = _canvas(spec)
    w, h = spec.size
    robes = [(44, 72, 140), (164, 60, 48), (196, 150, 60), (84, 120, 80), (120, 80, 120)]
    scheme = spec.params["scheme"]
    if scheme == "pyramidal":
        apex, base_l, base_r = (w * 0.5, h * 0.17), (w * 0.04, h * 0.9), (w * 0.96, h * 0.9)
        for i, (cx, hh) in enumerate([(0.5, 0.66), (0.29, 0.44), (0.71, 0.44), (0.13, 0.27), (0.87, 0.27)]):
            _figure(draw, w * cx, h * 0.88, h * hh, robes[i])
        for a, b in ((apex, base_l), (apex, base_r), (base_l, base_r)):
            _dashed(draw, a, b, GUIDE, 4)
    elif scheme == "diagonal":
        start, end = (w * 0.06, h * 0.94), (w * 0.94, h * 0.08)
        for i in range(5):
            t = 0.12 + i * 0.19
            foot = start[1] + (end[1] - start[1]) * t + h * 0.22
            _figure(draw, start[0] + (end[0] - start[0]) * t, foot, h * 0.3, robes[i])
        _dashed(draw, start, end, GUIDE, 4)
    else:
        cx, cy = w * 0.5, h * 0.5
        n = spec.params["figures"] - 1
        for i in range(n):
            angle = 2 * math.pi * i / n
            x, y = cx + math.cos(angle) * w * 0.34, cy + math.sin(angle) * h * 0.34
            _dashed(draw, (cx, cy), (x, y), GUIDE, 3)
            _figure(draw, x, y + h * 0.08, h * 0.16, robes[i % len(robes)])
        _figure(draw, cx, cy + h * 0.1, h * 0.22, robes[0])
    return image


def _grid_cells(params: dict[str, Any]) -> list[tuple[float, float, float, float, str]]:
    return [tuple(cell) for cell in params["cells"]]


def dominant_colour(params: dict[str, Any]) -> str:
    """The primary colour with the largest painted area on a grid plate (why: the gold answer)."""
    area: dict[str, float] = {}
    for x0, y0, x1, y1, colour in _grid_cells(params):
        area[colour] = area.get(colour, 0.0) + (x1 - x0) * (y1 - y0)
    return max(area, key=area.__getitem__)


def _primary_grid(spec: PlateSpec) -> Image.Image:
    """White field, black horizontals and verticals, a few cells in red, blue and yellow."""
    image, draw = _canvas(spec, (244, 242, 236))
    w, h = spec.size
    for x0, y0, x1, y1, colour in _grid_cells(spec.params):
        draw.rectangle([round(x0 * w), round(y0 * h), round(x1 * w), round(y1 * h)],
                       fill=PRIMARY[colour])
    bar = max(8, w // 50)
    for x in spec.params["verticals"]:
        draw.rectangle([round(x * w) - bar // 2, 0, round(x * w) + bar // 2, h], fill=(18, 18, 18))
    for y in spec.params["horizontals"]:
        draw.rectangle([0, round(y * h) - bar // 2, w, round(y * h) + bar // 2], fill=(18, 18, 18))
    return image


def _colour_wheel(spec: PlateSpec) -> Image.Image:
    """A twelve-hue wheel; the complementary pair is pulled out and joined through the centre."""
    image, draw = _canvas(spec)
    w, h = spec.size
    cx, cy, radius = w / 2, h / 2, min(w, h) * 0.36
    pair = spec.params["pair"]
    for i, (name, colour) in enumerate(WHEEL):
        start = -90 - 15 + i * 30
        chosen = name in pair
        shade = colour if chosen else tuple(int(c * 0.45 + 235 * 0.55) for c in colour)
        push = radius * 0.12 if chosen else 0.0
        mid = math.radians(start + 15)
        ox, oy = cx + math.cos(mid) * push, cy + math.sin(mid) * push
        box = [ox - radius, oy - radius, ox + radius, oy + radius]
        draw.pieslice(box, start, start + 30, fill=shade, outline=INK if chosen else PAPER,
                      width=5 if chosen else 3)
    draw.ellipse([cx - radius * 0.3, cy - radius * 0.3, cx + radius * 0.3, cy + radius * 0.3],
                 fill=PAPER)
    ends = [i for i, (name, _) in enumerate(WHEEL) if name in pair]
    points = [(cx + math.cos(math.radians(-90 + i * 30)) * radius * 0.75,
               cy + math.sin(math.radians(-90 + i * 30)) * radius * 0.75) for i in ends]
    draw.line(points, fill=INK, width=4)
    return image


def _polyptych(spec: PlateSpec) -> Image.Image:
    """A symmetric altarpiece: gilded arched panels with figures, a predella below."""
    image, draw = _canvas(spec, (70, 52, 40))
    w, h = spec.size
    figures: list[int] = spec.params["figures_per_panel"]
    n = len(figures)
    weights = [1.5 if i == n // 2 and n % 2 else 1.0 for i in range(n)]
    gap, margin = w * 0.02, w * 0.05
    unit = (w - 2 * margin - gap * (n - 1)) / sum(weights)
    predella = spec.params["predella"]
    base = h * (0.74 if predella else 0.92)
    x = margin
    for i, count in enumerate(figures):
        pw = unit * weights[i]
        top = h * (0.08 if weights[i] > 1 else 0.2)
        shoulder = top + pw * 0.5
        frame = [(x, base), (x, shoulder), (x + pw / 2, top), (x + pw, shoulder), (x + pw, base)]
        draw.polygon(frame, fill=(212, 170, 72), outline=(120, 84, 30), width=6)
        for k in range(count):
            fx = x + pw * (k + 1) / (count + 1)
            fh = (base - shoulder) * (0.85 if weights[i] > 1 else 0.75)
            robe = (40, 66, 150) if weights[i] > 1 else [(150, 50, 44), (70, 110, 70)][(i + k) % 2]
            _figure(draw, fx, base - h * 0.02, fh, robe)
        x += pw + gap
    if predella:
        pw = (w - 2 * margin - gap * (predella - 1)) / predella
        for i in range(predella):
            px = margin + i * (pw + gap)
            draw.rectangle([px, h * 0.78, px + pw, h * 0.93], fill=(190, 150, 70),
                           outline=(120, 84, 30), width=4)
    return image


def _light_direction(spec: PlateSpec) -> Image.Image:
    """A sphere and a block lit from one side, with cast shadows falling to the other."""
    image, draw = _canvas(spec, (34, 30, 28))
    w, h = spec.size
    side = -1 if spec.params["light"] == "left" else 1
    ground = round(h * 0.72)
    draw.rectangle([0, ground, w, h], fill=(62, 54, 46))
    r = round(min(w, h) * 0.2)
    cx, cy = round(w * 0.36), ground - r
    shadow_dx = -side * r * 1.6
    draw.ellipse([cx + shadow_dx - r * 1.1, ground - r * 0.12, cx + shadow_dx + r * 1.1,
                  ground + r * 0.22], fill=(22, 19, 17))
    lx, ly, lz = side * 0.7, -0.45, 0.55
    norm = math.sqrt(lx * lx + ly * ly + lz * lz)
    sphere = Image.new("RGB", (2 * r, 2 * r))
    pixels = sphere.load()
    assert pixels is not None  # a new in-memory image always loads
    mask = Image.new("L", (2 * r, 2 * r), 0)
    mpix = mask.load()
    assert mpix is not None
    for y in range(2 * r):
        for x in range(2 * r):
            nx, ny = (x + 0.5 - r) / r, (y + 0.5 - r) / r
            if nx * nx + ny * ny > 1:
                continue
            nz = math.sqrt(1 - nx * nx - ny * ny)
            lit = max(0.0, (nx * lx + ny * ly + nz * lz) / norm)
            v = 0.08 + 0.92 * lit
            pixels[x, y] = (round(226 * v), round(196 * v), round(160 * v))
            mpix[x, y] = 255
    image.paste(sphere, (cx - r, cy - r), mask)
    bx, bw = round(w * 0.62), round(r * 1.3)
    away, depth = -side, bw * 0.35
    draw.polygon([(bx, ground), (bx + bw, ground), (bx + bw + away * bw * 1.0, ground + bw * 0.18),
                  (bx + away * bw * 1.0, ground + bw * 0.18)], fill=(22, 19, 17))
    draw.rectangle([bx, ground - bw, bx + bw, ground], fill=(150, 128, 100))
    draw.polygon([(bx, ground - bw), (bx + bw, ground - bw), (bx + bw + depth, ground - bw - depth),
                  (bx + depth, ground - bw - depth)], fill=(236, 214, 180))
    draw.polygon([(bx + bw, ground), (bx + bw, ground - bw), (bx + bw + depth, ground - bw - depth),
                  (bx + bw + depth, ground - depth)],
                 fill=(214, 186, 150) if side > 0 else (70, 60, 50))
    return image


def _placement(spec: PlateSpec) -> Image.Image:
    """A frame divided by thirds or by the golden section, a round subject on one crossing."""
    image, draw = _canvas(spec, (232, 226, 210))
    w, h = spec.size
    if spec.params["system"] == "thirds":
        xs, ys = [w / 3, 2 * w / 3], [h / 3, 2 * h / 3]
    else:
        g = 1 / ((1 + math.sqrt(5)) / 2)
        xs, ys = [w * (1 - g), w * g], [h * (1 - g), h * g]
    for x in xs:
        _dashed(draw, (x, 0), (x, h), GUIDE, 3)
    for y in ys:
        _dashed(draw, (0, y), (w, y), GUIDE, 3)
    focus = spec.params["focus"]
    fx = xs[0] if "left" in focus else xs[1]
    fy = ys[0] if "upper" in focus else ys[1]
    r = min(w, h) * 0.09
    draw.ellipse([fx - r, fy - r, fx + r, fy + r], fill=(164, 60, 48), outline=INK, width=3)
    return image


def _horizon(spec: PlateSpec) -> Image.Image:
    """A flat landscape: sky, land, and trees that shrink towards the horizon line."""
    image, draw = _canvas(spec)
    w, h = spec.size
    hy = round(h * HORIZON_FRACTION[spec.params["horizon"]])
    for y in range(hy):
        t = y / max(1, hy)
        draw.line([(0, y), (w, y)], fill=(round(120 + 100 * t), round(160 + 70 * t), round(214 + 20 * t)))
    draw.rectangle([0, hy, w, h], fill=(120, 140, 80))
    for i, depth in enumerate((1.0, 0.55, 0.32, 0.18)):
        x = w * (0.15 + 0.22 * i)
        base = hy + (h - hy) * 0.8 * depth
        th = max(6.0, (base - hy) * 1.1)
        draw.rectangle([x - th * 0.05, base - th * 0.5, x + th * 0.05, base], fill=(84, 60, 40))
        draw.ellipse([x - th * 0.3, base - th, x + th * 0.3, base - th * 0.4], fill=(52, 92, 50))
    draw.line([(0, hy), (w, hy)], fill=INK, width=3)
    return image


RENDERERS: dict[str, Callable[[PlateSpec], Image.Image]] = {
    "one_point_perspective": _one_point_perspective,
    "composition": _composition,
    "primary_grid": _primary_grid,
    "colour_wheel": _colour_wheel,
    "polyptych": _polyptych,
    "light_direction": _light_direction,
    "placement": _placement,
    "horizon": _horizon,
}


# ---------------------------------------------------------------- the catalogue

def _grid(cells: list[tuple[float, float, float, float, str]], verticals: list[float],
          horizontals: list[float]) -> dict[str, Any]:
    params: dict[str, Any] = {"cells": [list(c) for c in cells], "verticals": verticals,
                              "horizontals": horizontals}
    params["dominant"] = dominant_colour(params)
    return params


def _polyptych_params(figures: list[int], predella: int) -> dict[str, Any]:
    form = {2: "diptych", 3: "triptych"}.get(len(figures), "polyptych")
    return {"panels": len(figures), "form": form, "figures_per_panel": figures,
            "figures": sum(figures), "predella": predella, "has_predella": predella > 0,
            "symmetric": figures == figures[::-1]}


def _placement_params(system: str, focus: str) -> dict[str, Any]:
    vertical, horizontal = focus.split("-")
    return {"system": system, "focus": focus, "vertical": "high" if vertical == "upper" else "low",
            "horizontal": horizontal}


_SPECS = [
    PlateSpec("persp_centre", "one_point_perspective",
              {"vanishing_point": "centre", "horizon": "middle", "tiles": 8}, (1200, 900)),
    PlateSpec("persp_left", "one_point_perspective",
              {"vanishing_point": "left", "horizon": "middle", "tiles": 8}, (1000, 750)),
    PlateSpec("persp_right", "one_point_perspective",
              {"vanishing_point": "right", "horizon": "middle", "tiles": 8}, (1000, 750), "JPEG"),
    PlateSpec("persp_high", "one_point_perspective",
              {"vanishing_point": "centre", "horizon": "high", "tiles": 6}, (800, 1000)),
    PlateSpec("persp_low", "one_point_perspective",
              {"vanishing_point": "centre", "horizon": "low", "tiles": 10}, (1200, 800)),
    PlateSpec("comp_pyramidal", "composition", {"scheme": "pyramidal", "figures": 5}, (900, 1100)),
    PlateSpec("comp_diagonal", "composition", {"scheme": "diagonal", "figures": 5}, (1200, 800)),
    PlateSpec("comp_radial", "composition", {"scheme": "radial", "figures": 9}, (1000, 1000), "JPEG"),
    PlateSpec("grid_red", "primary_grid", _grid(
        [(0.3, 0.0, 1.0, 0.62, "red"), (0.0, 0.62, 0.3, 1.0, "blue"), (0.85, 0.86, 1.0, 1.0, "yellow")],
        [0.3, 0.85], [0.22, 0.62, 0.86]), (800, 800)),
    PlateSpec("grid_blue", "primary_grid", _grid(
        [(0.0, 0.0, 0.62, 0.55, "blue"), (0.62, 0.78, 1.0, 1.0, "red"), (0.0, 0.85, 0.25, 1.0, "yellow")],
        [0.25, 0.62], [0.55, 0.78, 0.85]), (600, 800)),
    PlateSpec("grid_yellow", "primary_grid", _grid(
        [(0.4, 0.35, 1.0, 1.0, "yellow"), (0.0, 0.0, 0.4, 0.2, "red"), (0.0, 0.7, 0.15, 1.0, "blue")],
        [0.15, 0.4], [0.2, 0.35, 0.7]), (700, 700)),
    PlateSpec("wheel_red_green", "colour_wheel", {"pair": ["red", "green"]}, (800, 800)),
    PlateSpec("wheel_blue_orange", "colour_wheel", {"pair": ["blue", "orange"]}, (800, 800)),
    PlateSpec("wheel_yellow_violet", "colour_wheel", {"pair": ["yellow", "violet"]}, (800, 800)),
    PlateSpec("polyptych_3", "polyptych", _polyptych_params([2, 1, 2], 3), (1400, 1000)),
    PlateSpec("polyptych_5", "polyptych", _polyptych_params([1, 1, 1, 1, 1], 5), (1600, 1000)),
    PlateSpec("polyptych_3_plain", "polyptych", _polyptych_params([1, 1, 1], 0), (1200, 900), "JPEG"),
    PlateSpec("light_left", "light_direction", {"light": "left", "shadows": "right"}, (1000, 750)),
    PlateSpec("light_right", "light_direction", {"light": "right", "shadows": "left"}, (1000, 750)),
    PlateSpec("thirds_upper_left", "placement", _placement_params("thirds", "upper-left"), (1200, 800)),
    PlateSpec("thirds_lower_right", "placement", _placement_params("thirds", "lower-right"), (1200, 800)),
    PlateSpec("golden_upper_left", "placement", _placement_params("golden", "upper-left"), (1600, 990)),
    PlateSpec("horizon_low", "horizon", {"horizon": "low", "larger_area": "sky"}, (1200, 700)),
    PlateSpec("horizon_high", "horizon", {"horizon": "high", "larger_area": "land"}, (900, 700)),
]

PLATES: dict[str, PlateSpec] = {spec.name: spec for spec in _SPECS}


def render_plate(name: str) -> bytes:
    """The encoded bytes of one plate; identical on every call (fixed encoder options)."""
    spec = PLATES[name]
    image = RENDERERS[spec.kind](spec)
    buffer = io.BytesIO()
    if spec.format == "JPEG":
        image.save(buffer, "JPEG", quality=88, subsampling=0, optimize=False, progressive=False)
    else:
        image.save(buffer, "PNG", optimize=False, compress_level=6)
    return buffer.getvalue()


def write_plates(out_dir: str | Path) -> dict[str, Path]:
    """Write every plate into `out_dir` (created if missing); returns name -> written path."""
    folder = Path(out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name, spec in PLATES.items():
        path = folder / spec.filename
        path.write_bytes(render_plate(name))
        written[name] = path
    return written
