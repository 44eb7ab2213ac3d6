"""Generated pictures whose contents are known by construction: the images of the study demos.

Why generate: the demo benchmarks must ask counting, position, colour and interaction questions
with answers that are right by construction, and ship no artwork. A `Scene` is a small scene graph
(objects and figures on a 3 x 3 grid of places, a setting, a time of day, a season); `render_scene`
draws it with Pillow, deterministically, and `scene_attributes` describes the image the way
VQArt-Bench describes its artworks (a genre-like category, the number of figures, indoor or
outdoor, and the warm/cool ratio measured on the drawn pixels).
"""
from __future__ import annotations

import io
import random
from dataclasses import dataclass, field

import numpy as np
from PIL import Image, ImageDraw

WIDTH, HEIGHT = 480, 360
ROWS = ("top", "middle", "bottom")
COLS = ("left", "centre", "right")
#: Named colours of objects and clothes (RGB), with their temperature.
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (200, 40, 40), "orange": (235, 135, 30), "yellow": (235, 210, 40), "pink": (230, 120, 170),
    "brown": (130, 80, 40), "blue": (40, 80, 200), "green": (40, 150, 60), "purple": (120, 60, 160),
    "white": (245, 245, 245), "black": (25, 25, 25),
}
WARM = frozenset({"red", "orange", "yellow", "pink", "brown"})
#: Objects that stand on the ground (middle or bottom row) and objects of the sky (top row).
GROUND_THINGS = ("vase", "tree", "house", "chair", "table", "ball", "basket", "lamp", "dog")
SKY_THINGS = ("bird", "cloud", "kite")
INDOOR_THINGS = ("vase", "chair", "table", "ball", "basket", "lamp", "dog", "mirror", "clock")
HELD_THINGS = ("flower", "book", "umbrella", "cup", "lantern", "flag")
EMOTIONS = ("happy", "sad", "surprised", "calm")
TIMES = ("day", "evening", "night")
SEASONS = ("summer", "autumn", "winter")


@dataclass(frozen=True)
class Thing:
    """An object at one of the nine places (row, col) of the picture."""

    kind: str
    colour: str
    row: int
    col: int


@dataclass(frozen=True)
class Figure:
    """A person at a place, dressed in a colour, maybe holding something, with a readable expression."""

    colour: str
    row: int
    col: int
    holding: str | None = None
    emotion: str = "calm"
    waving: bool = False


@dataclass(frozen=True)
class Scene:
    """What a picture shows, by construction."""

    scene_id: str
    indoor: bool
    time: str
    season: str
    things: tuple[Thing, ...] = field(default_factory=tuple)
    figures: tuple[Figure, ...] = field(default_factory=tuple)
    sea: bool = False
    building: str | None = None        # a roof style drawn on the horizon (cultural questions)

    @property
    def genre(self) -> str:
        """A genre-like category, from what the scene holds."""
        if self.indoor:
            return "interior" if self.figures else "still life"
        if self.time == "night":
            return "nocturne"
        if self.sea:
            return "seascape"
        return "genre scene" if len(self.figures) >= 2 else "landscape"


def place_name(row: int, col: int) -> str:
    """'top left', 'centre', 'bottom right', ..."""
    return f"{ROWS[row]} {COLS[col]}" if (row, col) != (1, 1) else "centre"


def make_scenes(n: int, seed: int) -> list[Scene]:
    """n varied scenes, deterministic in seed: indoor and outdoor, day to night, 0 to 4 figures."""
    rng = random.Random(f"scenes|{seed}")
    scenes = []
    outdoor_seen = 0
    for index in range(n):
        indoor = index % 3 == 2
        time = TIMES[outdoor_seen % len(TIMES)] if not indoor else rng.choice(("day", "evening"))
        outdoor_seen += not indoor
        season = SEASONS[(index // 2) % len(SEASONS)]
        sea = not indoor and index % 5 == 1
        # outdoors the centre of the horizon holds a building, so nothing else stands there
        free = [(r, c) for r in (1, 2) for c in range(3) if indoor or (r, c) != (1, 1)]
        rng.shuffle(free)
        n_figures = (index * 7 + 1) % 5 if index % 4 != 3 else 0
        n_figures = min(n_figures, 4)
        figures = []
        held = list(HELD_THINGS)
        rng.shuffle(held)
        for f in range(n_figures):
            row, col = free.pop()
            figures.append(Figure(colour=rng.choice([c for c in COLOURS if c not in ("white", "black")]),
                                  row=row, col=col, holding=held[f] if rng.random() < 0.75 else None,
                                  emotion=rng.choice(EMOTIONS), waving=rng.random() < 0.3))
        pool = list(INDOOR_THINGS if indoor else GROUND_THINGS)
        rng.shuffle(pool)
        things = []
        colours = [c for c in COLOURS if c != "white"]
        rng.shuffle(colours)
        for _ in range(min(len(free), 2 + index % 3)):
            row, col = free.pop()
            things.append(Thing(pool.pop(), colours.pop(), row, col))
        if not indoor:
            sky = list(SKY_THINGS)
            rng.shuffle(sky)
            for col in rng.sample(range(2), 1 + index % 2):  # the right of the sky holds the sun or moon
                things.append(Thing(sky.pop(), colours.pop() if colours else "white", 0, col))
        building = None if indoor else ("pagoda roof", "onion dome", "pointed arch", "stepped pyramid",
                                        "columned temple")[index % 5]
        scenes.append(Scene(f"scene-{index + 1:02d}", indoor, time, season, tuple(things), tuple(figures), sea,
                            building))
    return scenes


# ---------------------------------------------------------------- drawing

def _box(row: int, col: int) -> tuple[int, int, int, int]:
    """Pixel box of one of the nine places."""
    w, h = WIDTH // 3, HEIGHT // 3
    return col * w, row * h, (col + 1) * w, (row + 1) * h


def region_bbox(row: int, col: int) -> list[float]:
    """The place as a normalised COCO box [x, y, width, height] (for bounding-box options)."""
    x0, y0, x1, y1 = _box(row, col)
    return [round(x0 / WIDTH, 4), round(y0 / HEIGHT, 4), round((x1 - x0) / WIDTH, 4), round((y1 - y0) / HEIGHT, 4)]


def _background(draw: ImageDraw.ImageDraw, scene: Scene) -> None:
    if scene.indoor:
        wall = (214, 196, 160) if scene.time == "day" else (150, 130, 105)
        draw.rectangle([0, 0, WIDTH, HEIGHT * 2 // 3], fill=wall)
        draw.rectangle([0, HEIGHT * 2 // 3, WIDTH, HEIGHT], fill=(120, 85, 55))
        window = (150, 200, 240) if scene.time == "day" else (30, 35, 70)
        draw.rectangle([WIDTH // 2 - 45, 20, WIDTH // 2 + 45, 95], fill=window, outline=(90, 60, 40), width=5)
        return
    sky = {"day": (135, 195, 240), "evening": (240, 150, 90), "night": (20, 25, 60)}[scene.time]
    ground = {"summer": (90, 160, 70), "autumn": (170, 130, 60), "winter": (235, 240, 245)}[scene.season]
    draw.rectangle([0, 0, WIDTH, HEIGHT // 2], fill=sky)
    draw.rectangle([0, HEIGHT // 2, WIDTH, HEIGHT], fill=(40, 90, 170) if scene.sea else ground)
    if scene.sea:
        draw.rectangle([0, HEIGHT * 5 // 6, WIDTH, HEIGHT], fill=ground)
    light = {"day": ((WIDTH - 70, 20), (245, 220, 60)), "evening": ((WIDTH - 70, 70), (250, 120, 40)),
             "night": ((WIDTH - 70, 20), (235, 235, 210))}[scene.time]
    (x, y), colour = light
    draw.ellipse([x, y, x + 40, y + 40], fill=colour)
    if scene.building:
        _building(draw, scene.building)


def _building(draw: ImageDraw.ImageDraw, style: str) -> None:
    x, base = WIDTH // 2 - 30, HEIGHT // 2
    grey = (150, 145, 140)
    if style == "pagoda roof":
        for i in range(3):
            draw.polygon([(x - 10 + 6 * i, base - 18 * i), (x + 70 - 6 * i, base - 18 * i), (x + 30, base - 18 * i - 14)],
                         fill=(140, 40, 30))
    elif style == "onion dome":
        draw.rectangle([x, base - 25, x + 60, base], fill=grey)
        draw.ellipse([x + 10, base - 60, x + 50, base - 20], fill=(60, 120, 90))
    elif style == "pointed arch":
        draw.rectangle([x, base - 40, x + 60, base], fill=grey)
        draw.polygon([(x + 15, base), (x + 15, base - 20), (x + 30, base - 38), (x + 45, base - 20), (x + 45, base)],
                     fill=(60, 60, 80))
    elif style == "stepped pyramid":
        for i in range(4):
            draw.rectangle([x + 8 * i, base - 12 * (i + 1), x + 60 - 8 * i, base - 12 * i], fill=(190, 160, 110))
    else:
        draw.rectangle([x, base - 45, x + 60, base - 38], fill=grey)
        for i in range(4):
            draw.rectangle([x + 4 + 15 * i, base - 38, x + 10 + 15 * i, base], fill=grey)
        draw.polygon([(x - 4, base - 45), (x + 64, base - 45), (x + 30, base - 60)], fill=grey)


def _thing(draw: ImageDraw.ImageDraw, t: Thing) -> None:
    x0, y0, x1, y1 = _box(t.row, t.col)
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    c = COLOURS[t.colour]
    dark = (40, 30, 20)
    if t.kind in ("vase", "basket"):
        draw.ellipse([cx - 20, cy - 10, cx + 20, cy + 35], fill=c, outline=dark)
        draw.rectangle([cx - 8, cy - 30, cx + 8, cy - 8], fill=c, outline=dark)
    elif t.kind == "tree":
        draw.rectangle([cx - 6, cy, cx + 6, cy + 45], fill=(100, 70, 40))
        draw.ellipse([cx - 35, cy - 45, cx + 35, cy + 15], fill=c)
    elif t.kind == "house":
        draw.rectangle([cx - 30, cy - 10, cx + 30, cy + 40], fill=c, outline=dark)
        draw.polygon([(cx - 38, cy - 10), (cx + 38, cy - 10), (cx, cy - 45)], fill=dark)
    elif t.kind == "table":
        draw.rectangle([cx - 34, cy - 5, cx + 34, cy + 5], fill=c)
        for dx in (-30, 25):
            draw.rectangle([cx + dx, cy + 5, cx + dx + 5, cy + 40], fill=c)
    elif t.kind == "chair":
        draw.rectangle([cx - 18, cy + 5, cx + 18, cy + 12], fill=c)
        draw.rectangle([cx - 18, cy - 35, cx - 12, cy + 40], fill=c)
        draw.rectangle([cx + 12, cy + 12, cx + 18, cy + 40], fill=c)
    elif t.kind == "ball":
        draw.ellipse([cx - 18, cy + 5, cx + 18, cy + 41], fill=c, outline=dark)
    elif t.kind == "lamp":
        draw.rectangle([cx - 3, cy - 10, cx + 3, cy + 40], fill=dark)
        draw.polygon([(cx - 22, cy - 10), (cx + 22, cy - 10), (cx + 10, cy - 38), (cx - 10, cy - 38)], fill=c)
    elif t.kind == "dog":
        draw.ellipse([cx - 28, cy + 5, cx + 20, cy + 30], fill=c)
        draw.ellipse([cx + 12, cy - 8, cx + 34, cy + 14], fill=c)
        for dx in (-22, 8):
            draw.rectangle([cx + dx, cy + 25, cx + dx + 6, cy + 42], fill=c)
    elif t.kind in ("mirror", "clock"):
        draw.ellipse([cx - 24, cy - 30, cx + 24, cy + 18], fill=(230, 230, 235), outline=c, width=6)
        if t.kind == "clock":
            draw.line([cx, cy - 6, cx, cy - 22], fill=dark, width=3)
            draw.line([cx, cy - 6, cx + 12, cy - 6], fill=dark, width=3)
    elif t.kind == "bird":
        draw.line([cx - 20, cy, cx, cy + 10, cx + 20, cy], fill=c, width=5)
    elif t.kind == "cloud":
        for dx in (-25, 0, 25):
            draw.ellipse([cx + dx - 20, cy - 15, cx + dx + 20, cy + 15], fill=c)
    elif t.kind == "kite":
        draw.polygon([(cx, cy - 25), (cx + 18, cy), (cx, cy + 25), (cx - 18, cy)], fill=c, outline=dark)
        draw.line([cx, cy + 25, cx - 10, cy + 55], fill=dark, width=2)


def _figure(draw: ImageDraw.ImageDraw, f: Figure) -> None:
    x0, y0, x1, y1 = _box(f.row, f.col)
    cx, cy = (x0 + x1) // 2, (y0 + y1) // 2
    skin, dark = (235, 200, 170), (30, 25, 20)
    draw.ellipse([cx - 13, cy - 48, cx + 13, cy - 22], fill=skin, outline=dark)
    # the face says the emotion by construction
    draw.point([(cx - 5, cy - 38), (cx + 5, cy - 38)], fill=dark)
    if f.emotion == "happy":
        draw.arc([cx - 7, cy - 36, cx + 7, cy - 26], 20, 160, fill=dark, width=2)
    elif f.emotion == "sad":
        draw.arc([cx - 7, cy - 30, cx + 7, cy - 22], 200, 340, fill=dark, width=2)
    elif f.emotion == "surprised":
        draw.ellipse([cx - 3, cy - 32, cx + 3, cy - 26], outline=dark, width=2)
    else:
        draw.line([cx - 5, cy - 29, cx + 5, cy - 29], fill=dark, width=2)
    draw.polygon([(cx - 16, cy - 20), (cx + 16, cy - 20), (cx + 22, cy + 30), (cx - 22, cy + 30)], fill=COLOURS[f.colour])
    draw.line([cx - 8, cy + 30, cx - 10, cy + 52], fill=dark, width=4)
    draw.line([cx + 8, cy + 30, cx + 10, cy + 52], fill=dark, width=4)
    hand = (cx + 30, cy - 35) if f.waving else (cx + 28, cy + 5)
    draw.line([cx + 14, cy - 15, *hand], fill=dark, width=3)
    draw.line([cx - 14, cy - 15, cx - 26, cy + 8], fill=dark, width=3)
    if f.holding:
        hx, hy = hand
        colour = {"flower": (220, 60, 120), "book": (60, 60, 140), "umbrella": (30, 30, 30), "cup": (245, 245, 245),
                  "lantern": (250, 190, 40), "flag": (200, 30, 30)}[f.holding]
        if f.holding in ("umbrella", "flag"):
            draw.line([hx, hy, hx, hy - 30], fill=dark, width=2)
            if f.holding == "umbrella":
                draw.pieslice([hx - 22, hy - 48, hx + 22, hy - 12], 180, 360, fill=colour)
            else:
                draw.rectangle([hx, hy - 30, hx + 20, hy - 18], fill=colour)
        else:
            draw.ellipse([hx - 8, hy - 8, hx + 8, hy + 8], fill=colour, outline=dark)


def render_scene(scene: Scene, blank: tuple[int, int] | None = None) -> bytes:
    """The scene as PNG bytes (deterministic); ``blank`` greys out one place (the jigsaw's gap)."""
    image = Image.new("RGB", (WIDTH, HEIGHT), (255, 255, 255))
    draw = ImageDraw.Draw(image)
    _background(draw, scene)
    for t in scene.things:
        _thing(draw, t)
    for f in scene.figures:
        _figure(draw, f)
    if blank is not None:
        draw.rectangle(_box(*blank), fill=(128, 128, 128), outline=(60, 60, 60), width=3)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def crop_piece(png: bytes, row: int, col: int, mirrored: bool = False) -> bytes:
    """One of the nine places cut out of a rendered scene (jigsaw pieces), as PNG bytes; maybe mirrored."""
    with Image.open(io.BytesIO(png)) as image:
        piece = image.crop(_box(row, col))
        if mirrored:
            piece = piece.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        buffer = io.BytesIO()
        piece.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()


def warm_ratio(png: bytes) -> float:
    """Share of the coloured pixels that are warm (reds to yellows), measured on the drawn image."""
    with Image.open(io.BytesIO(png)) as image:
        hsv = np.asarray(image.convert("HSV"), dtype=float)
    hue, sat, val = hsv[..., 0] * 360 / 255, hsv[..., 1] / 255, hsv[..., 2] / 255
    coloured = (sat > 0.2) & (val > 0.15)
    warm = coloured & ((hue < 70) | (hue > 300))
    total = int(coloured.sum())
    return round(float(warm.sum()) / total, 3) if total else 0.0


def scene_attributes(scene: Scene, png: bytes) -> dict:
    """VQArt-style image attributes: genre, figures, setting, warm/cool ratio (measured), time of day."""
    return {"genre": scene.genre, "figures": len(scene.figures), "setting": "indoor" if scene.indoor else "outdoor",
            "warm_ratio": warm_ratio(png), "time_of_day": scene.time}
