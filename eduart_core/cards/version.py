"""The card's own format name and version, apart from the builder: `import-card` reads them without
importing the views and the statistics the builder needs (a re-import stays a light command)."""
from __future__ import annotations

#: The card's format name and version (``import-card`` refuses any other).
CARD_FORMAT = "eduart-exam-card"
CARD_VERSION = 1
