"""The registry of scoring profiles a dataset offers: the built-in rules, and the judges that scored it.

Why one registry fed by the store: ``strict`` and ``paper`` are code and exist everywhere; a judge
profile (``judge:<judge>/<rubric>``) exists where a judge has scored a dataset, and it has a
version (judge model id, prompt hash, rubric hash, temperature) that must travel with every number
computed under it. Pickers (the sidebar, ``--profile``, the report) ask `available` what a dataset
offers and `describe` how to label it, instead of spelling the profiles out themselves.
"""
from __future__ import annotations

from dataclasses import dataclass

from .store import Store
from .vocab import (
    DEFAULT_PROFILE,
    INSPECT_PROFILE_PREFIX,
    JUDGE_PROFILE_HELP,
    PROFILE_HELP,
    PROFILES,
    is_judge_profile,
)

RULES_KIND = "rules"
JUDGE_KIND = "judge"
HARNESS_KIND = "harness"   # a scorer of another harness (Inspect), its values imported with its logs



@dataclass(frozen=True)
class ProfileInfo:
    """One scoring profile as a picker shows it."""

    name: str
    kind: str                       # RULES_KIND | JUDGE_KIND | HARNESS_KIND
    label: str
    version: str | None = None      # judge profiles: what the scores come from
    judge: str | None = None
    judge_name: str | None = None
    rubric: str | None = None
    simulated: bool = False

    @property
    def is_judge(self) -> bool:
        return self.kind == JUDGE_KIND


def builtin() -> list[ProfileInfo]:
    return [ProfileInfo(p, RULES_KIND, p) for p in PROFILES]


def available(store: Store, dataset: str | None) -> list[ProfileInfo]:
    """The built-in profiles, then every judge profile stored for ``dataset`` (by name)."""
    from .store.judges import load_judge_profiles

    out = builtin()
    if dataset is None or not store.exists():
        return out
    stored = load_judge_profiles(store, dataset)
    for row in stored.itertuples(index=False):
        label = f"{row.profile}" + (" (simulated)" if bool(row.simulated) else "")
        out.append(ProfileInfo(str(row.profile), JUDGE_KIND, label, version=str(row.version), judge=str(row.judge),
                               judge_name=str(row.judge_name or row.judge), rubric=str(row.rubric),
                               simulated=bool(row.simulated)))
    out.extend(harness_profiles(store, dataset))
    return out


def harness_profiles(store: Store, dataset: str) -> list[ProfileInfo]:
    """The profiles of another harness's scorers stored for ``dataset`` (``inspect:<scorer>``)."""
    from .store.harness_scores import stored_profiles

    return [ProfileInfo(name, HARNESS_KIND, f"{name} (Inspect's scorer)")
            for name in stored_profiles(store, dataset, INSPECT_PROFILE_PREFIX)]


def find(profiles: list[ProfileInfo], name: str) -> ProfileInfo | None:
    return next((p for p in profiles if p.name == name), None)


def describe(info: ProfileInfo) -> str:
    """'profile strict' / 'profile judge:x/open-v1 (model · prompt · rubric · temperature)'."""
    return f"profile {info.name}" + (f" ({info.version})" if info.version else "")


def help_text(profiles: list[ProfileInfo]) -> str:
    """The picker's help: the built-in rules, and the judges when the dataset has some."""
    text = PROFILE_HELP
    if any(p.is_judge for p in profiles):
        text += " " + JUDGE_PROFILE_HELP
    return text


def default_for(profiles: list[ProfileInfo], wanted: str | None) -> str:
    """``wanted`` when the dataset offers it, else the default profile."""
    return wanted if wanted and find(profiles, wanted) is not None else DEFAULT_PROFILE


__all__ = ["ProfileInfo", "available", "builtin", "default_for", "describe", "find", "help_text",
           "is_judge_profile", "JUDGE_KIND", "RULES_KIND"]
