"""The self-contained HTML report for stakeholders (``report --out report.html``).

``document`` builds the EduArt story; ``studies`` adds the sections of VQArt-Bench- and MUSE-style
datasets.
"""
from .document import FIGURE_IDS, FIGURES, build_report, write_report

__all__ = ["FIGURES", "FIGURE_IDS", "build_report", "write_report"]
