"""Exam results gathered elsewhere: `import-responses` with ``kind`` and ``group`` in ``--models``.

Why a pseudonym here too: a school's results file names each student by whatever its system uses
(a register number, often the name itself). Rows of the models table whose ``kind`` is ``human``
are registered under a new pseudonym (the same one on every later import of the same identifier),
and the file's identifier and display name are kept only in the respondents table, so no chart,
`show` output or export carries them.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..store import Store
from ..store import humans as db
from ..store.connection import Connection
from ..vocab import HUMAN_KIND
from .people import new_pseudonym, register_con

ORIGIN = "import"


def pseudonyms(store: Store, identities: Mapping[str, object]) -> dict[str, str]:
    """File identifier -> pseudonym for every model of kind ``human`` in ``identities`` (the models
    table of an import: identifier -> object with ``kind``); known identifiers keep their pseudonym."""
    people = [key for key, ident in identities.items() if getattr(ident, "kind", None) == HUMAN_KIND]
    if not people:
        return {}
    known = db.imported_pseudonyms(store, people)
    taken = db.taken_pseudonyms(store) | set(known.values())
    return {key: known.get(key) or new_pseudonym(taken) for key in people}


def register_con_all(con: Connection, aliases: Mapping[str, str],
                     identities: Mapping[str, object]) -> list[str]:
    """Register the people of an import (inside its transaction); returns their pseudonyms."""
    for key, respondent in aliases.items():
        ident = identities[key]
        name = getattr(ident, "display_name", None)
        register_con(con, respondent, getattr(ident, "group", None), origin=ORIGIN, external_id=key,
                     name=name if name and name != key else key)
    return sorted(aliases.values())


__all__ = ["ORIGIN", "pseudonyms", "register_con_all"]
