"""One real sign-in round trip: Debian chromium, Streamlit's own OIDC sign-in, and a local OIDC
provider on 127.0.0.1 (PyPI oidc-provider-mock, whose login form takes a subject).

The studio reads its [auth] section from the file $EDUART_SECRETS names (nothing is written into
the project's .streamlit/). The person signs in as ``reviewer-a`` whose token's ``groups`` claim
holds only ``reviewer``: they decide one field, and the stored decision and `review-export` carry
``reviewer-a`` as subject with the provider's issuer; the round settings and the Runs page are
refused to them, on the page and in the library.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from eduart_core.extraction import review
from eduart_core.store import Store
from eduart_core.store import extraction as db
from eduart_core.team import PermissionDenied, from_claims
from tests.browser_kit import chromium, dashboard_store, free_port, require_browser, serve, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SUBJECT = "reviewer-a"
CLAIMS = {"sub": SUBJECT, "name": "Anna Reviewer", "email": "anna@example.org", "groups": ["reviewer", "staff"]}


def _provider(port: int, log: Path) -> subprocess.Popen:
    exe = shutil.which("oidc-provider-mock") or str(Path(os.sys.executable).with_name("oidc-provider-mock"))
    proc = subprocess.Popen([exe, "-p", str(port), "-H", "127.0.0.1", "--user-claims", json.dumps(CLAIMS)],
                            stdout=log.open("w"), stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}/.well-known/openid-configuration"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)
    pytest.fail("the OIDC provider did not start within 30 s")


@pytest.fixture(scope="module")
def signed_server(tmp_path_factory):
    require_browser()
    folder = tmp_path_factory.mktemp("signin")
    store_path = dashboard_store(folder / "store" / "eduart.duckdb")
    oidc_port = free_port()
    provider = _provider(oidc_port, folder / "oidc.log")
    secrets = folder / "team-secrets.toml"
    secrets.write_text(
        "[auth]\n"
        'redirect_uri = "http://127.0.0.1:{port}/oauth2callback"\n'
        'cookie_secret = "a-test-cookie-secret-that-is-long-enough-0123456789"\n'
        'client_id = "eduart-studio"\n'
        'client_secret = "eduart-studio-secret"\n'
        f'server_metadata_url = "http://127.0.0.1:{oidc_port}/.well-known/openid-configuration"\n',
        encoding="utf-8")
    try:
        with serve("app.py", folder / "streamlit.log",
                   env={"EDUART_DB": str(store_path), "EDUART_SECRETS": str(secrets)}) as url:
            yield url, store_path, f"http://127.0.0.1:{oidc_port}"
    finally:
        os.killpg(provider.pid, signal.SIGTERM)
        provider.wait(timeout=10)


def test_sign_in_decide_and_find_the_subject_in_the_stored_decision(signed_server, tmp_path):
    url, store_path, issuer = signed_server
    with chromium() as browser:
        page = browser.new_context(viewport={"width": 1500, "height": 1800}).new_page()
        page.goto(url, wait_until="domcontentloaded", timeout=60_000)  # the root first, as a user does
        settle(page, pause=300)
        page.goto(f"{url}/review", wait_until="domcontentloaded", timeout=60_000)
        settle(page, pause=300)
        assert page.get_by_text("Sign in to use the studio").count() == 1
        assert page.get_by_role("button", name="Accept A").count() == 0  # nothing else before sign-in
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_selector("input[name=sub]", timeout=60_000)  # the provider's login form
        page.fill("input[name=sub]", SUBJECT)
        page.get_by_role("button", name="Authorize").click()
        page.wait_for_url(f"{url}/**", timeout=60_000)
        settle(page, pause=300)
        page.goto(f"{url}/review", wait_until="domcontentloaded", timeout=60_000)
        settle(page, pause=400)
        assert page.get_by_text("Signed in as Anna Reviewer").count() >= 1
        assert page.get_by_text("Reviewing as Anna Reviewer").count() >= 1
        assert page.get_by_text("Your name (kept for this browser session").count() == 0
        assert page.get_by_role("radio", name="Adjudicator").count() == 0  # no adjudicator role
        page.get_by_role("button", name="Accept A").first.click()
        settle(page, pause=400)
        page.screenshot(path=str(tmp_path / "signed-in-review.png"))
        page.goto(f"{url}/runs", wait_until="domcontentloaded", timeout=60_000)
        settle(page, pause=300)
        assert page.get_by_text("Your roles do not include this page.").count() == 1
        assert page.get_by_role("button", name="Launch").count() == 0
    store = Store(store_path)
    log = db.load_decisions(store)
    log = log[~log["reviewer"].astype(str).str.endswith("(simulated)")]  # the demo's simulated reviewers aside
    assert len(log) == 1
    decision = log.iloc[0]
    assert decision["reviewer"] == SUBJECT and decision["actor_subject"] == SUBJECT
    assert decision["actor_name"] == "Anna Reviewer" and decision["actor_provider"].startswith(issuer)
    out = tmp_path / "decisions.jsonl"
    from eduart_core.cli import main

    assert main(["review-export", "--out", str(out), "--db", str(store_path)]) == 0
    exported = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    exported = [r for r in exported if not r["reviewer"].endswith("(simulated)")]
    assert [r["subject"] for r in exported] == [SUBJECT] and exported[0]["reviewer_name"] == "Anna Reviewer"
    # the same person, at the library: deciding yes, changing a round no
    anna = from_claims(CLAIMS)
    with pytest.raises(PermissionDenied, match="may not change the settings of a review round"):
        review.set_reviewers(store, "demo-extraction", 1, 2, set_by=anna)
