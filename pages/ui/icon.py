"""The browser-tab icon of every page, drawn locally."""
from __future__ import annotations

_ICON = None


def page_icon():
    """The browser-tab icon, drawn here: a ``:material/...:`` or emoji icon makes every page fetch
    the glyph from a font or emoji CDN on the internet, and no page may load anything from outside."""
    global _ICON
    if _ICON is None:
        from PIL import Image, ImageDraw

        icon = Image.new("RGBA", (64, 64), (0, 0, 0, 0))
        draw = ImageDraw.Draw(icon)
        draw.rounded_rectangle((2, 2, 62, 62), radius=14, fill="#f4ede0", outline="#7a5c3a", width=3)
        for (x, y), colour in zip(((20, 22), (42, 20), (22, 43), (43, 42)), ("#D55E00", "#0072B2", "#009E73", "#E69F00")):
            draw.ellipse((x - 8, y - 8, x + 8, y + 8), fill=colour)
        _ICON = icon
    return _ICON
