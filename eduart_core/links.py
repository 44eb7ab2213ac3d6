"""What a name asked for and the store does not hold, in one line: the `show` command's error and the
app's notice for a shared link use the same words.

Why here: a link (``/inspector?dataset=nosuchdata&item=zzz``) and a command line
(``show leaderboard --dataset nosuchdata``) make the same mistakes; the command stops with the line,
the app shows the line and says what it shows instead, so a person knows the link was not followed.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping

#: At most this many available names are listed after a name that was not found.
LISTED = 8


def not_found(kind: str, name: object, *, where: str | None = None, available: Iterable[str] | None = None) -> str:
    """``no dataset 'x' in <where> (available: a, b)``: what was asked for and what exists."""
    line = f"no {kind} {str(name)!r}" + (f" in {where}" if where else "")
    if available is not None:
        names = [str(a) for a in available]
        listed = ", ".join(names[:LISTED]) + (f" and {len(names) - LISTED} more" if len(names) > LISTED else "")
        line += f" (available: {listed or 'none'})"
    return line


def shown_instead(kind: str, name: object, instead: str, *, where: str | None = None) -> str:
    """The app's notice: ``No item 'zzz' in dataset demo: showing item demo-0001 instead.``"""
    line = not_found(kind, name, where=where)
    return f"{line[0].upper()}{line[1:]}: showing {instead} instead."


def link_notices(asked: Mapping[str, Iterable[str]], known: Mapping[str, Iterable[str]], *, dataset: str,
                 shown_dataset: str) -> list[str]:
    """One notice per value of a link's parameters that the store does not hold.

    ``asked`` maps a selection field (dataset, models, types, languages, profile, condition) to the
    values the link names; ``known`` maps it to the values that exist (for the fields but the dataset,
    in the dataset shown). ``dataset`` is the dataset the link asked for (empty when none),
    ``shown_dataset`` the one shown.
    """
    out: list[str] = []
    if dataset and dataset != shown_dataset:
        out.append(shown_instead("dataset", dataset, f"dataset {shown_dataset}", where="this store"))
    words = {"models": ("model", "every model"), "types": ("format", "every format"),
             "languages": ("language", "every language"), "profile": ("scoring profile", "the default profile"),
             "condition": ("prompt condition", "the default condition")}
    for field, (kind, fallback) in words.items():
        valid = {str(v) for v in known.get(field, ())}
        missing = [str(v) for v in asked.get(field, ()) if str(v) not in valid]
        kept = [str(v) for v in asked.get(field, ()) if str(v) in valid]
        for value in missing:
            instead = ", ".join(kept) if kept and field in ("models", "types", "languages") else fallback
            out.append(shown_instead(kind, value, instead, where=f"dataset {shown_dataset}"))
    return out
