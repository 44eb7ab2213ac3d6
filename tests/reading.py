"""How tests read page text: as a person sees it, not as the markdown the page sent."""
from __future__ import annotations

import re
import string

_ESCAPED = re.compile("\\\\([" + re.escape(string.punctuation) + "])")  # what text.plain escapes


def as_read(markdown: str) -> str:
    """Text the page passed through ``text.plain``, with its escapes and word joiners removed."""
    return _ESCAPED.sub(r"\1", markdown).replace("\u2060", "")
