"""Who is acting (team mode): sign-in, the acting person's identity and the pages their roles open.

Sign-in is Streamlit's own OIDC support (st.login / st.user / st.logout): it is on when the
secrets Streamlit reads have an [auth] section. Then every page needs a signed-in person with
a role, and the library's write functions get that person's Identity. Without [auth] the studio
runs in single-machine mode: a typed name, every role, labelled "not signed in"."""
from __future__ import annotations

import logging
from pathlib import Path

import streamlit as st

from eduart_core import views
from eduart_core.errors import UserError
from eduart_core.text import plain
from eduart_core.views import StoreError
from pages.ui import menu
from pages.ui.store_handle import store, store_path, store_version

logger = logging.getLogger(__name__)


_EXTRA_SECRETS_READ = False


def _read_extra_secrets() -> None:
    """Let Streamlit read the secrets file ``$EDUART_SECRETS`` names too (once per process).

    Streamlit reads ``.streamlit/secrets.toml``; a deployment may keep its [auth] section
    elsewhere. The file is added to Streamlit's ``secrets.files`` before any sign-in is asked."""
    global _EXTRA_SECRETS_READ
    if _EXTRA_SECRETS_READ:
        return
    _EXTRA_SECRETS_READ = True
    import os

    extra = os.environ.get("EDUART_SECRETS")
    if not extra:
        return
    from streamlit import config as st_config
    from streamlit.runtime.secrets import secrets_singleton

    files = list(st_config.get_option("secrets.files") or [])
    path = str(Path(extra).expanduser())
    if path not in files:
        st_config.set_option("secrets.files", [*files, path])
        secrets_singleton._reset()  # read again, with the added file


def signin_enabled() -> bool:
    """Whether the studio runs in team mode (an [auth] section in the secrets Streamlit reads)."""
    _read_extra_secrets()
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets file at all, or an unreadable one: single-machine mode
        return False


def _stored_roles(subject: str) -> frozenset[str]:
    """The roles table's grants for ``subject``, read once per store change."""
    from eduart_core.team.roles import stored_roles

    path = store_path()
    try:
        if not views.open_store(path).exists():  # a file or a PostgreSQL database
            return frozenset()
        key = (subject, path, store_version(path))
    except StoreError as exc:
        logger.warning("roles table not read: %s", exc)
        return frozenset()
    memo = st.session_state.get("_team_roles")
    if memo is not None and memo[0] == key:
        return memo[1]
    try:
        roles = stored_roles(store(lock_timeout_s=3.0), subject)
    except StoreError as exc:
        logger.warning("roles table not read: %s", exc)
        roles = frozenset()
    st.session_state["_team_roles"] = (key, roles)
    return roles


def identity():
    """The acting person: the signed-in identity (team mode) or the typed name (single-machine
    mode); None while nobody is signed in or named."""
    from eduart_core.team import from_claims, local

    if signin_enabled():
        user = st.user
        if not user.get("is_logged_in"):
            return None
        claims = user.to_dict()
        try:
            return from_claims(claims, _stored_roles(str(claims.get("sub") or "")))
        except UserError:
            return None
    name = (st.session_state.get("reviewer") or "").strip()
    return local(name) if name else None


def may_open(page_key: str | None) -> bool:
    """Whether the acting person's roles reach a page (always in single-machine mode); the roles
    that open a page are its entry in `pages.ui.menu.PAGES`."""
    if not page_key or not signin_enabled():
        return True
    who = identity()
    return who is not None and menu.may_open(who.roles, page_key)


def gate() -> bool:
    """The sign-in gate every page passes (app.py calls it before drawing a page).

    Team mode: a person not signed in sees a sign-in button; a signed-in person without any role
    sees one line. Returns whether the page may be drawn."""
    if not signin_enabled():
        return True
    user = st.user
    if not user.get("is_logged_in"):
        st.title("EduArt Studio")
        st.markdown("Sign in to use the studio: every decision, override and launch is recorded with your name.")
        st.button("Sign in", key="team_sign_in", type="primary", on_click=st.login, icon=":material/login:")
        return False
    who = identity()
    if who is None or not who.roles:
        name = plain(user.get("name") or user.get("email") or user.get("sub") or "you")
        st.info(f"You are signed in as {name} but hold no role in this studio: ask an admin to grant you one "
                f"(`python -m eduart_core roles grant {plain(user.get('sub') or 'SUBJECT')} reviewer`).")
        st.button("Sign out", key="team_sign_out_norole", on_click=st.logout)
        return False
    return True


def who_line() -> None:
    """Who is acting, at the top of the sidebar: the signed-in person and their roles, with a
    sign-out button, or the single-machine label."""
    from eduart_core.team import NOT_SIGNED_IN

    with st.sidebar:
        if signin_enabled():
            who = identity()
            if who is None:
                return
            line = st.container(horizontal=True, vertical_alignment="center")
            line.markdown(f"Signed in as **{plain(who.name)}**")
            line.button("Sign out", key="team_sign_out", on_click=st.logout, type="tertiary")
            st.caption(plain(f"{who.email or who.subject} · roles: {', '.join(sorted(who.roles))}"))
        else:
            st.caption(plain(NOT_SIGNED_IN.capitalize()) + ": names are typed, not verified.")


_EXPOSURE_CHECKED = False


def warn_if_exposed() -> None:
    """Once per server process: one line on the server console when the studio listens beyond
    this machine without sign-in."""
    global _EXPOSURE_CHECKED
    if _EXPOSURE_CHECKED:
        return
    _EXPOSURE_CHECKED = True
    import sys

    from eduart_core.team.signin import exposure_warning

    warning = exposure_warning(st.get_option("server.address"), signin_enabled())
    if warning:
        print(warning, file=sys.stderr, flush=True)
