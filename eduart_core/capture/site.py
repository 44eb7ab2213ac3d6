"""The local exercise site: a small Flask app on 127.0.0.1 offering the seven formats.

Why it exists: `capture` needs a platform to drive in tests and in the demo without the network.
Each exercise page holds its questions as forms; a submission asks the server for the solution,
which the page then reveals, as exercise platforms do. With a password the site wants a sign-in
first (a cookie), so that `capture --state` can be tried with a browser state made by hand.
"""
from __future__ import annotations

import json
import secrets
import socket
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserError
from ..store.core import PROJECT_ROOT

if TYPE_CHECKING:
    from flask import Flask

from .site_pages import exercise_page, index_page, sign_in_page, solution_lines

EXERCISES_FILE = PROJECT_ROOT / "data" / "capture" / "exercises.json"
COOKIE = "exercise_site_session"


def load_exercises(path: Path = EXERCISES_FILE) -> list[dict[str, Any]]:
    """The site's exercises (data/capture/exercises.json unless told otherwise)."""
    try:
        return list(json.loads(Path(path).read_text(encoding="utf-8"))["exercises"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{path}: not an exercise-site file ({exc})") from None


def make_app(exercises: Sequence[Mapping[str, Any]] | None = None, *, password: str | None = None) -> Flask:
    """The Flask app serving `exercises`; with `password`, every page but the sign-in wants a session."""
    from flask import Flask, abort, jsonify, redirect, request

    by_slug = {e["slug"]: e for e in (exercises if exercises is not None else load_exercises())}
    sessions: set[str] = set()
    app = Flask(__name__)

    def signed_in() -> bool:
        return password is None or request.cookies.get(COOKIE) in sessions

    @app.get("/")
    def index():
        return index_page(list(by_slug.values())) if signed_in() else redirect("/sign-in?next=/")

    @app.get("/exercise/<slug>")
    def exercise(slug: str):
        if not signed_in():
            return redirect(f"/sign-in?next={request.full_path.rstrip('?')}")
        if slug not in by_slug:
            abort(404)
        return exercise_page(by_slug[slug])

    @app.post("/check/<slug>/<question>")
    def check(slug: str, question: str):
        if not signed_in():
            abort(403)
        number = int(question[1:]) if question[:1] == "q" and question[1:].isdigit() else 0
        if slug not in by_slug or not 1 <= number <= len(by_slug[slug]["questions"]):
            abort(404)
        found = by_slug[slug]["questions"][number - 1]
        lines, right = solution_lines(by_slug[slug]["format"], found)
        return jsonify({"lines": lines, "right": right})

    @app.route("/sign-in", methods=["GET", "POST"])
    def sign_in():
        target = request.values.get("next") or "/"
        target = target if target.startswith("/") and not target.startswith("//") else "/"
        if request.method == "GET":
            return sign_in_page(False, target)
        if password is None or not secrets.compare_digest(request.form.get("password", ""), password):
            return sign_in_page(True, target), 401
        token = secrets.token_urlsafe(16)
        sessions.add(token)
        response = redirect(target)
        response.set_cookie(COOKIE, token, httponly=True, samesite="Lax")
        return response

    return app


def _check_port(port: int) -> None:
    """A port already taken is one line (werkzeug would print several and exit the process)."""
    if not port:
        return
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError as exc:
            raise UserError(f"cannot serve the exercise site on 127.0.0.1:{port} ({exc.strerror}); "
                            "try another --port") from None


@contextmanager
def serve_site(app: Flask | None = None, *, port: int = 0) -> Iterator[str]:
    """Serve `app` (default: the shipped exercises) on 127.0.0.1 in a thread; yields its base URL."""
    from werkzeug.serving import WSGIRequestHandler, make_server

    class Quiet(WSGIRequestHandler):
        def log_request(self, code="-", size="-") -> None:  # a test's or the demo's output stays readable
            pass

    _check_port(port)
    server = make_server("127.0.0.1", port, app or make_app(), threaded=True, request_handler=Quiet)
    thread = threading.Thread(target=server.serve_forever, name="exercise-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=10)


def exercise_urls(base_url: str, exercises: Sequence[Mapping[str, Any]] | None = None) -> list[str]:
    """The page URL of every exercise (what a `--urls` file for the site lists)."""
    return [f"{base_url}/exercise/{e['slug']}" for e in (exercises if exercises is not None else load_exercises())]
