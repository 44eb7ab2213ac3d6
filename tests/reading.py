"""How tests read page text: as a person sees it, not as the markdown the page sent."""
from __future__ import annotations

import re


def as_read(markdown: str) -> str:
    """Text the page passed through ``text.plain``, with its escapes and word joiners removed."""
    return re.sub(r"\\([^\w\s])", r"\1", markdown).replace("\u2060", "")
