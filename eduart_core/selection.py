"""What the user is looking at: one `Selection`, built once, applied once, before any analysis.

Why one value: the sidebar, a shared URL, the `show` command's flags and the report all describe
the same thing (dataset, scoring profile, prompt condition, models, formats, languages, image
filter). Building it in one place and applying it in one place (`Selection.apply`) means a number
on a page, in the report and in `python -m eduart_core show` is computed from the same rows.
The condition is part of the selection like every other filter; views that compare conditions
(motivation, CTT over models x conditions) ask `apply` to keep both.

Baselines (model kind `baseline`, such as the offline chance model) are references, not
examinees: `apply` leaves their rows out unless ``baselines=True`` (one switch, off by default, in
the sidebar, the URL and the `--baselines` flag), so rankings, findings, item statistics, the
regression and the motivation tests never count them by accident. Charts draw them as reference
marks from their own view (`views.baselines`).

People (model kind `human`: respondents who sat the exam, or imported exam results) are examinees,
but a second switch, off by default (``humans``, `--humans`), keeps them out of every statistic in
the same place: with it off every number is the one computed without them. The comparison of models
and people (`views.human_gap`) switches them in itself.
"""
from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace

import numpy as np
import pandas as pd

from .errors import UserError
from .vocab import (
    ALL_ITEMS,
    BASELINE_KIND,
    CONDITIONS,
    DEFAULT_CONDITION,
    DEFAULT_DATASET,
    DEFAULT_PROFILE,
    HUMAN_KIND,
    IMAGE_FILTERS,
    PROFILES,
    format_label,
    image_wanted,
    is_profile_name,
    language_label,
)

#: URL query-string names of the selection's fields (shared links keep these names).
QUERY_NAMES: dict[str, str] = {
    "dataset": "dataset", "profile": "profile", "condition": "condition", "image": "image",
    "models": "models", "types": "types", "languages": "lang", "baselines": "baselines",
    "reviewed": "reviewed", "humans": "humans",
}
_BOOL_FIELDS = ("baselines", "reviewed", "humans")
_TRUE_WORDS = ("1", "true", "yes", "on")
_LIST_FIELDS = ("models", "types", "languages")


def _profile_arg(value: str) -> str:
    """``--profile``: a built-in profile or a well-formed judge profile (the store says whether it exists)."""
    if not is_profile_name(value):
        raise argparse.ArgumentTypeError(f"unknown profile {value!r}: use {', '.join(PROFILES)} or judge:JUDGE/RUBRIC")
    return value


@dataclass(frozen=True)
class Selection:
    """The rows an analysis sees; hashable, so it keys the view cache."""

    dataset: str = DEFAULT_DATASET
    profile: str = DEFAULT_PROFILE
    condition: str = DEFAULT_CONDITION
    models: tuple[str, ...] = ()          # display names; empty = every model
    types: tuple[str, ...] = ()           # formats; empty = every format
    languages: tuple[str, ...] = ()       # ISO 639-1 codes; empty = every language
    image: str = ALL_ITEMS                # one of vocab.IMAGE_FILTERS
    baselines: bool = False               # True: baseline models count as examinees too
    reviewed: bool = True                 # True: a reviewer's score override replaces the computed score
    humans: bool = False                  # True: people (kind human) count as examinees too

    def __post_init__(self) -> None:
        if not is_profile_name(self.profile):  # a judge profile's existence is the store's to say (views)
            raise UserError(f"unknown profile {self.profile!r}; use one of {', '.join(PROFILES)} or a judge "
                            "profile judge:JUDGE/RUBRIC")
        if self.condition not in CONDITIONS:
            raise UserError(f"unknown condition {self.condition!r}; use one of {', '.join(CONDITIONS)}")
        if self.image not in IMAGE_FILTERS:
            raise UserError(f"unknown image filter {self.image!r}; use one of {', '.join(IMAGE_FILTERS)}")
        for name in _LIST_FIELDS:  # lists given by callers become tuples (hashable, order kept)
            object.__setattr__(self, name, tuple(getattr(self, name) or ()))
        object.__setattr__(self, "baselines", bool(self.baselines))
        object.__setattr__(self, "reviewed", bool(self.reviewed))
        object.__setattr__(self, "humans", bool(self.humans))

    def with_(self, **changes) -> Selection:
        """A copy with some fields changed (validated like a new selection)."""
        return replace(self, **changes)

    # ------------------------------------------------------------ the one place filters apply

    def apply(self, frame: pd.DataFrame, *, all_conditions: bool = False) -> pd.DataFrame:
        """Rows of a long frame that match the selection.

        ``all_conditions=True`` keeps every prompt condition (for views that compare them);
        otherwise only the selected condition stays. Columns a frame lacks are not filtered on
        (a type-means frame has no `language` column). Rows of baseline models (column `kind`)
        stay only when ``baselines`` is on, rows of people (kind human) only when ``humans`` is on.
        """
        mask = np.ones(len(frame), dtype=bool)
        if not self.baselines and "kind" in frame:
            mask &= (frame["kind"] != BASELINE_KIND).to_numpy()
        if not self.humans and "kind" in frame:
            mask &= (frame["kind"] != HUMAN_KIND).to_numpy()
        if self.models and "model" in frame:
            mask &= frame["model"].isin(self.models).to_numpy()
        if self.types and "type" in frame:
            mask &= frame["type"].isin(self.types).to_numpy()
        if self.languages and "language" in frame:
            mask &= frame["language"].isin(self.languages).to_numpy()
        wanted = image_wanted(self.image)
        if wanted is not None and "has_image" in frame:
            mask &= (frame["has_image"].astype(bool) == wanted).to_numpy()
        if not all_conditions and "condition" in frame:
            mask &= (frame["condition"] == self.condition).to_numpy()
        return frame[mask] if not mask.all() else frame

    # ------------------------------------------------------------ words for captions

    def scope(self) -> list[str]:
        """The narrowing filters in words ('2 models', 'True / false', 'Italian', 'with image')."""
        parts: list[str] = []
        if self.models:
            parts.append(f"{len(self.models)} models")
        if self.types:
            parts.append(", ".join(format_label(t) for t in self.types))
        if self.languages:
            parts.append(", ".join(language_label(x) for x in self.languages))
        if self.image != ALL_ITEMS:
            parts.append(IMAGE_FILTERS[self.image].lower())
        if self.baselines:
            parts.append("baselines counted as examinees")
        if not self.reviewed:
            parts.append("computed scores (reviewed overrides off)")
        if self.humans:
            parts.append("people counted as examinees")
        return parts

    # ------------------------------------------------------------ URL query string

    def to_query(self, defaults: Selection | None = None, *, full: bool = False) -> dict[str, str | list[str]]:
        """The query-string parameters of this selection (fields equal to the default are left out).

        ``full=True`` also names the profile and the condition when they are the defaults, so a
        shared deep link keeps meaning the same view if a default ever changes.
        """
        base = defaults or Selection(dataset=self.dataset)
        out: dict[str, str | list[str]] = {QUERY_NAMES["dataset"]: self.dataset}
        for f in fields(self):
            if f.name == "dataset":
                continue
            value = getattr(self, f.name)
            if value != getattr(base, f.name) or (full and f.name in ("profile", "condition")):
                if f.name in _BOOL_FIELDS:
                    out[QUERY_NAMES[f.name]] = "1" if value else "0"
                else:
                    out[QUERY_NAMES[f.name]] = list(value) if f.name in _LIST_FIELDS else value
        return out

    @classmethod
    def from_query(cls, query: Mapping[str, str | Iterable[str]], *, datasets: Iterable[str] = (),
                   valid: Mapping[str, Iterable[str]] | None = None) -> dict[str, object]:
        """Field values found in a query string; unknown or invalid values are dropped, not errors.

        Returns a dict (not a Selection) because a page merges it with what its widgets hold.
        ``valid`` may restrict list fields (models, types, languages) to known values, and name the
        profiles the dataset offers (``valid["profile"]``: the built-in ones by default).
        """
        valid = dict(valid or {})
        allowed = {"dataset": list(datasets), "profile": list(valid.get("profile", PROFILES)),
                   "condition": list(CONDITIONS), "image": list(IMAGE_FILTERS)}
        found: dict[str, object] = {}
        for name, param in QUERY_NAMES.items():
            raw = query.get(param)
            if raw is None:
                continue
            values = [raw] if isinstance(raw, str) else list(raw)
            if name in _BOOL_FIELDS:
                if values:
                    found[name] = str(values[-1]).strip().lower() in _TRUE_WORDS
            elif name in _LIST_FIELDS:
                keep = [v for v in values if name not in valid or v in set(valid[name])]
                if keep:
                    found[name] = tuple(keep)
            elif values and values[-1] in allowed[name]:
                found[name] = values[-1]
        return found

    # ------------------------------------------------------------ command-line flags

    @staticmethod
    def add_arguments(parser: argparse.ArgumentParser) -> None:
        """The sidebar's controls as flags (the same names as the URL where they differ)."""
        parser.add_argument("--dataset", default=None, help=f"dataset (default: {DEFAULT_DATASET} when present)")
        parser.add_argument("--profile", type=_profile_arg, default=DEFAULT_PROFILE, metavar="PROFILE",
                            help=f"scoring profile: {', '.join(PROFILES)}, or a judge profile judge:JUDGE/RUBRIC "
                                 f"(default {DEFAULT_PROFILE})")
        parser.add_argument("--condition", choices=CONDITIONS, default=DEFAULT_CONDITION, help="prompt condition")
        parser.add_argument("--models", action="append", default=[], metavar="NAMES",
                            help="model display names, comma-separated or repeated (default: every model)")
        parser.add_argument("--types", action="append", default=[], metavar="FORMATS",
                            help="formats, comma-separated or repeated (default: every format)")
        parser.add_argument("--languages", action="append", default=[], metavar="CODES",
                            help="language codes, comma-separated or repeated (default: every language)")
        parser.add_argument("--image", choices=list(IMAGE_FILTERS), default=ALL_ITEMS, help="image filter")
        parser.add_argument("--baselines", action="store_true",
                            help="count baseline models (such as chance) as examinees; by default they are "
                                 "references only")
        parser.add_argument("--no-overrides", dest="reviewed", action="store_false",
                            help="use the computed scores only (by default a reviewer's score override "
                                 "replaces the computed score)")
        parser.add_argument("--humans", action="store_true",
                            help="count people (respondents who sat the exam, imported exam results) as "
                                 "examinees; by default every statistic leaves them out")

    @classmethod
    def from_args(cls, args: argparse.Namespace, *, dataset: str) -> Selection:
        """The selection the flags describe (``dataset`` is resolved by the caller)."""
        def split(values: list[str]) -> tuple[str, ...]:
            return tuple(v.strip() for value in values for v in value.split(",") if v.strip())

        return cls(dataset=dataset, profile=args.profile, condition=args.condition, models=split(args.models),
                   types=split(args.types), languages=split(args.languages), image=args.image,
                   baselines=bool(getattr(args, "baselines", False)),
                   reviewed=bool(getattr(args, "reviewed", True)),
                   humans=bool(getattr(args, "humans", False)))
