"""Which kind of respondent the numbers come from, in words: simulated, real or baseline.

Why per model and not per dataset: the demo dataset holds simulated respondents, but a user may run
a real or local model on it, or the chance baseline. A label taken from the dataset would then call
every number simulated; a label taken from the models says how many of each kind are behind the
numbers. The rule lives here once; pages (banner, export subtitles), the report and the findings
only ask for the sentence they need (`views.data_label` builds the label for a selection).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .vocab import BASELINE_KIND, SIMULATED_KIND

__all__ = ["DataLabel", "label_models"]

#: At most this many model names are spelled out in a label (the rest are counted).
NAMED = 3


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:NAMED]) + (f" and {len(names) - NAMED} more" if len(names) > NAMED else "")
    return f" ({shown})"


@dataclass(frozen=True)
class DataLabel:
    """The models behind a selection's numbers, by kind (display names, sorted)."""

    simulated: tuple[str, ...] = ()
    real: tuple[str, ...] = ()
    #: baseline models counted as examinees (the selection switches baselines in)
    baselines: tuple[str, ...] = ()
    #: baseline models drawn as reference marks only (not examinees)
    references: tuple[str, ...] = ()
    #: published aggregates: no respondents of our own
    aggregate: bool = False

    @property
    def examinees(self) -> int:
        return len(self.simulated) + len(self.real) + len(self.baselines)

    @property
    def any_simulated(self) -> bool:
        return bool(self.simulated)

    def short(self) -> str | None:
        """The label of an exported chart or a caption; None for real models alone."""
        if self.aggregate:
            return "published aggregates"
        if not self.simulated and not self.baselines:
            return None
        if self.simulated and not (self.real or self.baselines or self.references):
            return "simulated respondents"
        parts = []
        if self.simulated:
            parts.append(_count(len(self.simulated), "simulated respondent"))
        if self.real:
            parts.append(_count(len(self.real), "real model") + _names(self.real))
        if self.baselines:
            parts.append(_count(len(self.baselines), "baseline") + " counted as examinee"
                         + ("" if len(self.baselines) == 1 else "s") + _names(self.baselines))
        if self.references:
            parts.append(_count(len(self.references), "baseline") + " as reference" + _names(self.references))
        return ", ".join(parts)

    def banner(self) -> str | None:
        """The warning a page or the report shows above simulated numbers; None without any."""
        if not self.simulated:
            return None
        if not (self.real or self.baselines):
            return ("Simulated respondents: these answers come from simulated models, not real ones. The numbers "
                    "show how the analysis works, not how real models perform.")
        others = []
        if self.real:
            others.append(_count(len(self.real), "real model") + _names(self.real))
        if self.baselines:
            others.append(_count(len(self.baselines), "baseline") + _names(self.baselines))
        return (f"Simulated respondents: {len(self.simulated)} of the {self.examinees} models here are simulated, "
                f"not real ones; the others are {' and '.join(others)}. The simulated models' numbers show how "
                "the analysis works, not how real models perform.")

    def finding_prefix(self) -> str:
        """What a finding's headline starts with when simulated models are among the examinees."""
        if not self.simulated:
            return ""
        if len(self.simulated) == self.examinees:
            return "Simulated respondents: "
        return f"{len(self.simulated)} of {self.examinees} models simulated: "


def label_models(examinees: Iterable[str], kinds: Mapping[str, str], references: Iterable[str] = (),
                 aggregate: bool = False) -> DataLabel:
    """The label of these examinees (display names) given each model's kind (unknown: real)."""
    by_kind: dict[str, list[str]] = {SIMULATED_KIND: [], BASELINE_KIND: [], "real": []}
    for name in dict.fromkeys(examinees):
        kind = kinds.get(name)
        by_kind[kind if kind in (SIMULATED_KIND, BASELINE_KIND) else "real"].append(str(name))
    refs = tuple(sorted(str(r) for r in dict.fromkeys(references) if r not in set(by_kind[BASELINE_KIND])))
    return DataLabel(tuple(sorted(by_kind[SIMULATED_KIND])), tuple(sorted(by_kind["real"])),
                     tuple(sorted(by_kind[BASELINE_KIND])), refs, aggregate)
