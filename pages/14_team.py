"""Team: who you are, what your roles allow, and (for admins) who holds which role.

Thin page: identities and permissions come from ``eduart_core.team``; granting and revoking go
through ``team.roles``, which checks that the acting person is an admin (the page only hides the
form from others). Without sign-in the page says that the studio runs in single-machine mode.
"""
from __future__ import annotations

import pandas as pd
import streamlit as st

from eduart_core.errors import UserError
from eduart_core.team import ACTIONS, CHANGE_ROLES, ROLES, roles_claim
from eduart_core.team import roles as team_roles
from eduart_core.text import plain
from eduart_core.views import StoreError
from pages.ui import navigate, signin, store_handle

navigate.through_app()  # a server's first run serves this file alone: app.py draws it

st.title("Team")
who = signin.identity()
team_mode = signin.signin_enabled()
if not team_mode:
    st.info("Single-machine mode: nobody signs in, names are typed and not verified, and whoever uses this "
            "studio holds every role. Add an [auth] section to .streamlit/secrets.toml to work as a team "
            "(README: Working as a team).")
if who is not None:
    st.markdown(f"**You:** {plain(who.label())}")
    st.caption(plain(f"subject {who.subject} · provider {who.provider}"))
    rows = [{"action": spec.phrase, "roles": ", ".join(sorted(spec.roles)), "you may": who.may(name)}
            for name, spec in ACTIONS.items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
st.markdown("**Roles**")
st.dataframe(pd.DataFrame([{"role": k, "for": v} for k, v in ROLES.items()]), hide_index=True, width="stretch")
st.caption(f"Roles come from the identity token's `{plain(roles_claim())}` claim (set EDUART_ROLES_CLAIM to use "
           "another) and from the roles table below, keyed by the token's subject.")

store = store_handle.store()


def _change(grant: bool) -> None:
    subject = (st.session_state.get("team_subject") or "").strip()
    role = st.session_state.get("team_role")
    try:
        if grant:
            changed = team_roles.grant(store, subject, role, signin.identity(),
                                       note=st.session_state.get("team_note") or None)
        else:
            changed = team_roles.revoke(store, subject, role, signin.identity(),
                                        note=st.session_state.get("team_note") or None)
    except (UserError, StoreError) as exc:
        st.session_state["team_message"] = ("error", str(exc))
        return
    verb = "granted" if grant else "revoked"
    text = f"{subject}: {role} {verb}." if changed else f"Nothing changed: {subject} {'already has' if grant else 'has no stored'} {role}."
    st.session_state["team_message"] = ("success", text)


if who is not None and who.may(CHANGE_ROLES):
    st.subheader("Grant and revoke roles")
    message = st.session_state.pop("team_message", None)
    if message:
        getattr(st, message[0])(plain(message[1]))
    c1, c2, c3 = st.columns([3, 2, 3], vertical_alignment="bottom")
    c1.text_input("Subject (the sub claim of the person's token)", key="team_subject")
    c2.selectbox("Role", list(ROLES), key="team_role")
    c3.text_input("Note (optional)", key="team_note")
    b1, b2 = st.columns(2)
    b1.button("Grant", key="team_grant", on_click=_change, args=(True,), type="primary")
    b2.button("Revoke", key="team_revoke", on_click=_change, args=(False,))
    try:
        current = team_roles.list_roles(store)
        history = team_roles.role_history(store)
    except StoreError as exc:
        st.warning(f"The roles table cannot be read now: {plain(exc)}")
    else:
        st.markdown("**Roles granted in this store**")
        if current.empty:
            st.caption("No role granted in the table yet.")
        else:
            st.dataframe(current.rename(columns={"actor_name": "granted by", "changed_at": "granted at"})[
                ["subject", "role", "granted by", "granted at", "note"]], hide_index=True, width="stretch")
        with st.expander("Every grant and revocation"):
            st.dataframe(history, hide_index=True, width="stretch")
