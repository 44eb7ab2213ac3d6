"""Granting and revoking roles (the roles table), checked like every other write.

Roles come from two places: a claim of the identity token (``EDUART_ROLES_CLAIM``, default
``groups``) and this table, keyed by the OIDC subject. ``python -m eduart_core roles ...`` and the
admin panel of the Team page write it; only an admin (or the machine's operator) may.
"""
from __future__ import annotations

import pandas as pd

from ..errors import UserError
from ..store import Store
from ..store import team as db
from .identity import Identity, as_identity
from .permissions import CHANGE_ROLES, check_role


def stored_roles(store: Store, subject: str) -> frozenset[str]:
    """The roles the table grants ``subject`` now."""
    return frozenset(db.current_roles(store, subject)["role"])


def _subject(subject: str) -> str:
    subject = (subject or "").strip()
    if not subject:
        raise UserError("name the subject (the sub claim of the person's identity token)")
    return subject


def grant(store: Store, subject: str, role: str, actor: Identity, note: str | None = None) -> bool:
    """Grant ``role`` to ``subject``; False when the subject already had it (nothing written)."""
    as_identity(actor).require(CHANGE_ROLES)
    subject, role = _subject(subject), check_role(role)
    if role in stored_roles(store, subject):
        return False
    db.add_role_change(store, subject, role, True, actor.columns(), note)
    return True


def revoke(store: Store, subject: str, role: str, actor: Identity, note: str | None = None) -> bool:
    """Revoke ``role`` from ``subject``; False when the table did not grant it (nothing written).

    A role that comes from the token's claim cannot be revoked here: the identity provider owns it.
    """
    as_identity(actor).require(CHANGE_ROLES)
    subject, role = _subject(subject), check_role(role)
    if role not in stored_roles(store, subject):
        return False
    db.add_role_change(store, subject, role, False, actor.columns(), note)
    return True


def list_roles(store: Store) -> pd.DataFrame:
    """Who holds which role in the table, with who granted it and when."""
    return db.current_roles(store)


def role_history(store: Store) -> pd.DataFrame:
    """Every grant and revocation, oldest first."""
    return db.load_role_changes(store)
