"""Team mode on the pages, under AppTest with a seeded ``st.user`` and an [auth] section: the role x
page x action matrix (which pages each role opens, which writes each page offers it), the sign-in
gate, and the one line a person without a role sees.

The matrix reads the registries (``pages.ui.menu.PAGES``, ``team.ROLES``,
``team.ACTIONS``); that the library refuses the same writes is ``test_team_permissions``."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from eduart_core import team
from pages.ui import menu
from tests.reading import as_read

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "x" * 32, "client_id": "studio",
        "client_secret": "s", "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
REFUSED = "Your roles do not include this page."

#: Per page: (widget kind, key, the action it performs). The widget must be there exactly when the
#: role may perform the action. Session state set first opens the panel that holds the widget.
PAGE_ACTIONS = {
    "review": [("button", "review_setting_save", team.SET_ROUND),
               ("button", "review_bulk_a", team.BULK_ACCEPT),
               ("button", "accept_a::ex01/q01|1|question_text", team.DECIDE)],
    "runs": [("button", "runs_launch", team.LAUNCH_RUN)],
    "team": [("button", "team_grant", team.CHANGE_ROLES)],
    "inspector": [("text_input", "ovr_reason", team.OVERRIDE_SCORE)],
    "grading": [("button", "grading_start", team.SET_GRADING_ROUND)],
}
OPEN_PANELS = {"review": {"review_show_rounds": True}}




@pytest.fixture(scope="module")
def team_db(demo_db, tmp_path_factory):
    """A copy of the demo store (the review page writes nothing here, but the matrix must not share)."""
    from eduart_core.store import Store

    target = tmp_path_factory.mktemp("team-pages") / "eduart.duckdb"
    shutil.copy(demo_db, target)
    shutil.copytree(Store(demo_db).images_dir, Store(target).images_dir)
    return target


def signed_in(role_list, monkeypatch, db, subject: str | None = None):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    monkeypatch.setenv("EDUART_DB", str(db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.secrets["auth"] = dict(AUTH)
    if role_list is not None:
        name = subject or ("-".join(role_list) or "nobody")
        at.user = {"is_logged_in": True, "sub": name, "name": f"{name.title()} Person", "email": f"{name}@example.org",
                   "iss": "https://idp.test", "groups": list(role_list)}
    else:
        at.user = {"is_logged_in": False}
    return at


def texts(at) -> str:
    return " ".join(as_read(str(x.value)) for kind in ("markdown", "info", "caption", "title", "warning", "error")
                    for x in at.get(kind))


def widget_there(at, kind: str, key: str) -> bool:
    return any(getattr(w, "key", None) == key for w in at.get(kind))


@pytest.mark.parametrize("role", list(team.ROLES))
def test_role_by_page_by_action_matrix(role, team_db, monkeypatch):
    at = signed_in([role], monkeypatch, team_db)
    at.run()  # the home page: the overview, or for a respondent (who never sees results) the exam page
    assert not at.exception, at.exception
    assert f"Signed in as **{role.title()} Person**" in texts(at)
    assert REFUSED not in texts(at)
    assert menu.PAGES["overview"].opens_for([role]) == (role in team.STORY_ROLES)
    if role not in team.STORY_ROLES:
        assert [t.value for t in at.title] == ["Sit the exam"] and not at.get("plotly_chart")
    for key, spec in menu.PAGES.items():
        script = spec.script
        if script is None:
            continue
        for name, value in OPEN_PANELS.get(key, {}).items():
            at.session_state[name] = value
        at.session_state["review_current"] = ("ex01/q01", 1)
        at.session_state["review_round"] = 1
        at.switch_page(script).run()
        assert not at.exception, (role, key, at.exception)
        allowed = spec.opens_for([role])
        shown = texts(at)
        if not allowed:
            assert REFUSED in shown, (role, key)
            assert not at.get("dataframe") and not at.get("plotly_chart"), (role, key)
            continue
        assert REFUSED not in shown, (role, key)
        for kind, widget, action in PAGE_ACTIONS.get(key, []):
            may = role in team.ACTIONS[action].roles
            assert widget_there(at, kind, widget) == may, (role, key, widget, action)
        if key == "review":  # the capacities offered are the ones the roles allow
            offered = {o for r in at.radio if r.key == "review_role" for o in r.options}
            assert ("Adjudicator" in offered) == (role in team.ACTIONS[team.ADJUDICATE].roles), (role, offered)
            assert ("Reviewer" in offered) == (role in team.ACTIONS[team.DECIDE].roles), (role, offered)


def test_not_signed_in_sees_only_the_sign_in_button(team_db, monkeypatch):
    at = signed_in(None, monkeypatch, team_db)
    at.run()
    assert not at.exception, at.exception
    assert [b.label for b in at.button] == ["Sign in"]
    assert not at.get("dataframe") and not at.get("plotly_chart") and not at.sidebar.selectbox
    at.switch_page("pages/11_review.py").run()
    assert [b.label for b in at.button] == ["Sign in"] and not at.text_input


def test_a_person_without_a_role_sees_one_line(team_db, monkeypatch):
    at = signed_in([], monkeypatch, team_db, subject="newcomer")
    at.run()
    assert not at.exception, at.exception
    assert len(at.info) == 1 and "hold no role" in at.info[0].value and "roles grant newcomer" in at.info[0].value
    assert not at.get("dataframe") and not at.get("plotly_chart") and not at.title
    assert [b.label for b in at.button] == ["Sign out"]


def test_a_role_granted_in_the_store_opens_the_pages(team_db, tmp_path, monkeypatch):
    from eduart_core.store import Store
    from eduart_core.team import operator
    from eduart_core.team.roles import grant

    db = tmp_path / "granted.duckdb"
    shutil.copy(team_db, db)
    grant(Store(db), "newcomer", team.RESEARCHER, operator())
    at = signed_in([], monkeypatch, db, subject="newcomer")
    at.switch_page("pages/10_runs.py").run()
    assert not at.exception, at.exception
    assert REFUSED not in texts(at) and widget_there(at, "button", "runs_launch")


def test_single_machine_mode_is_labelled_and_keeps_typed_names(team_db, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from eduart_core import views

    monkeypatch.setenv("EDUART_DB", str(team_db))
    views.clear_caches()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.switch_page("pages/11_review.py").run()
    assert not at.exception, at.exception
    assert "not signed in (single-machine mode)" in texts(at).lower()
    assert widget_there(at, "text_input", "review_name")
    at.text_input(key="review_name").input("Anna").run()
    assert "Reviewing as **Anna** · not signed in (single-machine mode)" in texts(at)
    assert [o for o in at.radio(key="review_role").options] == ["Reviewer", "Adjudicator"]
