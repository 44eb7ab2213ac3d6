"""People as examinees: pseudonyms, their registration as models of kind ``human``, and who may see names.

Why pseudonyms: a person's answers enter the same tables as a model's (runs, responses, scores),
and everything built on those tables (charts, `show`, exports, the report) names an examinee by its
model key and display name. Registering a person under a random pseudonym, never derived from the
name (a hash of a guessable name can be reversed), keeps names out of all of it; the respondents
table links pseudonym and name, and `names` hands them out to researchers and admins only.
"""
from __future__ import annotations

import random
import secrets
import unicodedata

from ..errors import UserError
from ..store import Store
from ..store import humans as db
from ..store.connection import Connection
from ..store.runs import ensure_model_con
from ..team import RUN_EXAMS, Identity, as_identity
from ..vocab import DEFAULT_HUMAN_GROUP, HUMAN_FAMILY, HUMAN_KIND

#: Every pseudonym starts so: a person is recognisable as a person in any table.
PREFIX = "P-"
#: Letters of a pseudonym (no 0/O, 1/I/L: read aloud or copied by hand without mistakes).
ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
LENGTH = 6
#: The provider recorded for people in the models table.
PROVIDER = "human"
#: Longest group name accepted.
MAX_GROUP_CHARS = 40


def new_pseudonym(taken: set[str], rng: random.Random | None = None) -> str:
    """A fresh pseudonym ('P-7KQ2MX') not in ``taken``; ``rng`` makes it reproducible (the demo)."""
    for _ in range(1000):
        if rng is None:
            body = "".join(secrets.choice(ALPHABET) for _ in range(LENGTH))
        else:
            body = "".join(rng.choice(ALPHABET) for _ in range(LENGTH))
        name = PREFIX + body
        if name not in taken:
            taken.add(name)
            return name
    raise UserError("no free pseudonym found; the store holds too many people")


def clean_group(group: str | None) -> str:
    """A group name as stored: trimmed, lower case; empty means `DEFAULT_HUMAN_GROUP`."""
    text = " ".join(str(group or "").split()).lower()
    if not text:
        return DEFAULT_HUMAN_GROUP
    if len(text) > MAX_GROUP_CHARS or any(unicodedata.category(ch).startswith("C") for ch in text):
        raise UserError(f"group {str(group)[:MAX_GROUP_CHARS]!r}: use a short plain name such as 'student' or 'expert'")
    return text


def name_key(name: str) -> str:
    """A typed name folded (case, accents, spaces) so that 'Anna  Rossi' finds 'anna rossi' again."""
    text = unicodedata.normalize("NFKD", " ".join(str(name or "").split()))
    return "".join(ch for ch in text if not unicodedata.combining(ch)).casefold()


def register_con(con: Connection, respondent: str, group: str | None, *, origin: str,
                 simulated: bool = False, **identity: str | None) -> None:
    """Register one person (inside the caller's transaction): a model row of kind human under the
    pseudonym, family `HUMAN_FAMILY`, and the respondents row that keeps name and identifiers."""
    ensure_model_con(con, respondent, respondent, HUMAN_FAMILY, PROVIDER, None, simulated=simulated, kind=HUMAN_KIND)
    db.add_respondent_con(con, respondent, clean_group(group), origin=origin, **identity)


def names(store: Store | str, who: Identity, session_id: str | None = None) -> dict[str, str]:
    """Pseudonym -> name (the typed or signed-in name, or an import's identifier) for researchers and
    admins; everyone else is refused with one line. ``store``: a Store, a file path or a URL (the page passes its path)."""
    as_identity(who).require(RUN_EXAMS)
    frame = db.load_respondents(store if isinstance(store, Store) else Store(store))
    if session_id:
        frame = frame[frame["session_id"] == session_id]
    return {str(r): str(n) for r, n in zip(frame["respondent"], frame["name"]) if n is not None}


__all__ = ["ALPHABET", "PREFIX", "PROVIDER", "clean_group", "name_key", "names", "new_pseudonym", "register_con"]
