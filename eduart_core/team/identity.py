"""The acting person: one ``Identity`` value that every write of the library takes.

Why a value of its own: a decision, an override, a key review, a round change, a role change and a
launch all record who made them, and all of them check the same roles. Three kinds of identity
exist: a person signed in through OIDC (subject = the token's ``sub``, provider = its issuer),
a name typed on a studio running without sign-in (single-machine mode: nothing is verified, so the
person at the machine holds every role, and the records say "not signed in"), and the machine's
operator on the command line (who can open the store file anyway: every role, ``$EDUART_USER`` or
the OS user name, and whom the operator acts for when ``--for`` says so). On a team store the
command line never records a bare typed name (``cli_identity``).
"""
from __future__ import annotations

import getpass
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import UserError
from .permissions import ROLES, SEE_RECORDS, PermissionDenied, allowed, known_roles

SINGLE_MACHINE = "single-machine"   # provider of a typed name (no sign-in)
OPERATOR = "os"                     # provider of the command line's operator
NOT_SIGNED_IN = "not signed in (single-machine mode)"
#: Environment variable naming the identity-token claim that carries roles.
ROLES_CLAIM_ENV = "EDUART_ROLES_CLAIM"
DEFAULT_ROLES_CLAIM = "groups"
#: A launch started from the Runs page passes its (already checked) identity to the run process.
LAUNCHED_BY_ENV = "EDUART_LAUNCHED_BY"
#: An explicit operator identity for the command line (default: the login name).
OPERATOR_ENV = "EDUART_USER"


@dataclass(frozen=True)
class Identity:
    """Who is acting. ``subject`` is the stable key stored with every record (the OIDC ``sub``, a
    typed name, or the OS user); ``name`` and ``email`` are for display."""

    subject: str
    provider: str
    name: str
    email: str | None = None
    roles: frozenset[str] = field(default_factory=frozenset)
    signed_in: bool = False
    acting_for: str | None = None   # the operator acts for this person (recorded beside, never as, the actor)

    @property
    def key(self) -> str:
        """What the review log keys votes and the A/B order by: the subject."""
        return self.subject

    def label(self) -> str:
        """One line: who this is, and whether the studio verified it."""
        if self.signed_in:
            shown = self.name if self.name == self.subject else f"{self.name} ({self.subject})"
            return shown + (f" <{self.email}>" if self.email and self.email != self.name else "")
        if self.provider == OPERATOR:
            return f"{self.name} (operator of this machine{', for ' + self.acting_for if self.acting_for else ''})"
        return f"{self.name} · {NOT_SIGNED_IN}"

    def may(self, action: str) -> bool:
        return allowed(self.roles, action)

    def require(self, action: str) -> None:
        """Raise ``PermissionDenied`` (one line) unless this identity's roles allow ``action``."""
        if not self.may(action):
            raise PermissionDenied(self.name or self.subject, action)

    def with_roles(self, roles) -> Identity:
        return Identity(self.subject, self.provider, self.name, self.email, frozenset(roles), self.signed_in,
                        self.acting_for)

    @property
    def recorded_name(self) -> str:
        """The name a record keeps: the actor's, and whom an operator acted for ("ops (for anna)")."""
        return f"{self.name} (for {self.acting_for})" if self.acting_for else self.name

    def columns(self) -> dict[str, str | None]:
        """The identity columns every attributable row carries."""
        return {"actor_subject": self.subject, "actor_provider": self.provider, "actor_name": self.recorded_name}

    def to_json(self) -> str:
        return json.dumps({"subject": self.subject, "provider": self.provider, "name": self.name,
                           "email": self.email, "roles": sorted(self.roles), "signed_in": self.signed_in,
                           "acting_for": self.acting_for})


def local(name: str) -> Identity:
    """A name typed on a studio without sign-in: unverified, so every role (single-machine mode)."""
    name = (name or "").strip()
    if not name:
        raise UserError("enter your name first: it is stored with every decision")
    if len(name) > 200 or any(ord(ch) < 32 for ch in name):
        raise UserError("a name is 1 to 200 printable characters")
    return Identity(name, SINGLE_MACHINE, name, roles=frozenset(ROLES), signed_in=False)


def operator(acting_for: str | None = None) -> Identity:
    """The machine's operator on the command line: ``$EDUART_USER`` (an explicit operator identity)
    or the OS user; every role. ``acting_for`` names whom the operator acts for: recorded beside
    the operator, never as the actor."""
    user = (os.environ.get(OPERATOR_ENV) or "").strip()
    if not user:
        try:
            user = getpass.getuser()
        except (KeyError, OSError):
            user = os.environ.get("USER") or "operator"
    return Identity(user, OPERATOR, user, roles=frozenset(ROLES), signed_in=False,
                    acting_for=_person(acting_for, "--for") if acting_for is not None else None)


def _person(name: str, option: str) -> str:
    name = (name or "").strip()
    if not name or len(name) > 200 or any(ord(ch) < 32 for ch in name):
        raise UserError(f"{option} needs a name of 1 to 200 printable characters")
    return name


def cli_identity(store, by: str | None = None, acting_for: str | None = None) -> Identity:
    """Who acts on the command line (every command that writes asks this).

    On a team store (``store.shared``: a database several people write) only the operator acts:
    whoever holds the database credentials could type any name, so ``by`` (a bare name that would
    look like a person's own record) is refused, and ``acting_for`` is recorded beside the operator.
    On a single-machine store nothing is verified anyway: ``by`` is a typed name, as on a studio
    without sign-in.
    """
    if by is not None and acting_for is not None:
        raise UserError("give --by or --for, not both")
    if by is not None:
        if store.shared:
            who = operator()
            raise UserError(f"--by cannot name who acts on a team store: the command line records its operator "
                            f"({who.name}, from ${OPERATOR_ENV} or the login name); to act for someone, say "
                            f"--for {_person(by, '--by')!r}")
        return local(_person(by, "--by"))
    return operator(acting_for)


def as_identity(who: Identity) -> Identity:
    """``who`` when it is an ``Identity``; a ``TypeError`` for anything else.

    Why refuse a plain name: a name carries no roles of its own, and turning it into a single-machine
    identity would hand it every role. A caller without sign-in says so explicitly with ``local(name)``.
    None (a page whose person has not typed a name or signed in yet) is the one-line ``UserError``
    the page shows.
    """
    if who is None:
        raise UserError("enter your name first: it is stored with every decision")
    if not isinstance(who, Identity):
        raise TypeError(f"who acts must be an Identity (team.identity.local(name) on a single machine), "
                        f"not {type(who).__name__} {who!r}")
    return who


def roles_claim() -> str:
    return (os.environ.get(ROLES_CLAIM_ENV) or DEFAULT_ROLES_CLAIM).strip() or DEFAULT_ROLES_CLAIM


def claim_roles(claims: Mapping[str, Any], claim: str | None = None) -> frozenset[str]:
    """The roles a token's claim names (a list, or a comma- or space-separated string)."""
    value = claims.get(claim or roles_claim())
    if value is None:
        return frozenset()
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    elif not isinstance(value, list | tuple | set):
        value = [value]
    return known_roles(value)


def from_claims(claims: Mapping[str, Any], stored_roles=frozenset()) -> Identity:
    """A signed-in person from the identity token's claims (``st.user``) and the roles table.

    Roles are the union of the claim named by ``EDUART_ROLES_CLAIM`` and the stored grants.
    """
    subject = str(claims.get("sub") or "").strip()
    if not subject:
        raise UserError("the identity token has no subject (sub claim)")
    provider = str(claims.get("iss") or claims.get("provider") or "oidc")
    email = claims.get("email")
    name = str(claims.get("name") or claims.get("preferred_username") or email or subject)
    roles = claim_roles(claims) | frozenset(stored_roles)
    return Identity(subject, provider, name, str(email) if email else None, roles, signed_in=True)


def launched_by() -> Identity | None:
    """The identity a Runs-page launch passed to its run process, if any."""
    raw = os.environ.get(LAUNCHED_BY_ENV)
    if not raw:
        return None
    try:
        data = json.loads(raw)
        return Identity(str(data["subject"]), str(data["provider"]), str(data["name"]), data.get("email"),
                        frozenset(data.get("roles") or ()), bool(data.get("signed_in")), data.get("acting_for"))
    except (ValueError, KeyError, TypeError):
        return None


def whose(who: Identity, rater: str | None = None) -> str:
    """The subject whose record ``who`` asks for: their own, or ``rater``'s when allowed (one line if not)."""
    who = as_identity(who)
    name = (rater or "").strip()
    if len(name) > 200 or any(ord(ch) < 32 for ch in name):
        raise UserError("a rater is named by 1 to 200 printable characters (the subject their decisions carry)")
    if not name or name == who.key:
        return who.key
    who.require(SEE_RECORDS)
    return name
