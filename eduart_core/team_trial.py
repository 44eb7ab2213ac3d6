"""`team-trial`: team mode on one machine, to try it before asking anyone for a server.

Why one command: team mode needs three servers (PostgreSQL, an OpenID Connect provider, the app)
configured to find each other; a person deciding whether their team wants it should see it work
first. The trial starts, all on 127.0.0.1 and in one folder:

- a PostgreSQL cluster (Debian's initdb/pg_ctl through `TempPostgres`) with a database ``eduart``
  owned by a user ``eduart``, loaded with the demo on the first start;
- the local sign-in provider (PyPI ``oidc-provider-mock``) with the people of `TRIAL_PEOPLE`, whose
  roles are granted in the store's roles table (so the Team page can change them);
- the studio (``streamlit run app.py``) with an ``[auth]`` section pointing at that provider.

The folder is kept: a second start finds the cluster and the store as they were left (decisions,
roles, round settings) and only starts the servers again; ``fresh=True`` recreates it. Stopping
(Ctrl-C, SIGTERM, SIGHUP) ends the app, the provider and PostgreSQL in that order, by PID; the
app and the provider also end when the trial process itself is killed (the kernel's parent-death
signal), and a PostgreSQL left by a killed trial is stopped at the next start. Secrets (the
database password, the client and cookie secrets) live in files of the folder readable only by
their owner, never in a printed line, an argv or a log.

It stands beside `team`, not inside it: it builds the demo, reviews a page and starts a PostgreSQL
cluster, so it sits above those rooms, while `team` (who acts, with which roles) is asked by them.
"""
from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import UserError
from .store.core import DEFAULT_WORK_DIR, PROJECT_ROOT
from .team.permissions import ADJUDICATOR, ADMIN, PRESENTER, RESEARCHER, REVIEWER

if TYPE_CHECKING:
    from .bench.pgserver import TempPostgres

HOST = "127.0.0.1"
DATABASE = USER = "eduart"
CLIENT_ID = "eduart-studio-trial"
MARKER = "team-trial.json"   # names a trial folder (no secret in it): --fresh deletes nothing else
READY_S = 120.0              # how long a server may take to answer (the app's first start imports a lot)
STOP_S = 10.0                # how long a server may take to end after SIGTERM, before SIGKILL

Say = Callable[[str], None]


@dataclass(frozen=True)
class Person:
    """Someone to sign in as: the subject typed or clicked on the provider's page, and their roles."""

    subject: str
    name: str
    roles: tuple[str, ...]

    def claims(self) -> dict:
        return {"sub": self.subject, "name": self.name, "email": f"{self.subject}@example.org"}


TRIAL_PEOPLE = (
    Person("ada", "Ada Admin", (ADMIN, RESEARCHER)),
    Person("bruno", "Bruno Reviewer", (REVIEWER,)),
    Person("clara", "Clara Reviewer", (REVIEWER,)),
    Person("dora", "Dora Adjudicator", (ADJUDICATOR,)),
    Person("emil", "Emil Presenter", (PRESENTER,)),
)


def default_folder() -> Path:
    """``<work dir>/team-trial``: $EDUART_WORK_DIR or data/, beside the studio's other local folders."""
    env = os.environ.get("EDUART_WORK_DIR", "").strip()
    return (Path(env).expanduser() if env else DEFAULT_WORK_DIR) / "team-trial"


def port_free(port: int) -> bool:
    """Whether a server may listen on ``port`` now. With SO_REUSEADDR, as Streamlit's server binds: the
    connections of the trial just stopped linger for a minute (TIME_WAIT), and the same port must serve again."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
            sock.listen()
        except OSError:
            return False
    return True


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def _write_private(path: Path, text: str) -> None:
    """Write a file only its owner can read (created so, never world-readable for a moment)."""
    path.unlink(missing_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)


def _set_parent_death_signal() -> None:
    """In the child, before exec: end with SIGTERM when the trial process dies (Linux; else nothing)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


class _Stop(BaseException):  # like KeyboardInterrupt: no `except Exception` on the way may swallow it
    """Ctrl-C (SIGINT), SIGTERM or SIGHUP arrived: stop everything."""


def _raise_stop(signum, frame) -> None:
    raise _Stop(signal.Signals(signum).name)


class TeamTrial:
    """One trial in ``folder``: `start` brings everything up, `stop` ends everything it started."""

    def __init__(self, folder: Path, port: int, say: Say = print, fresh: bool = False):
        self.folder = Path(folder).expanduser().resolve()
        self.port = port
        self.say = say
        self.fresh = fresh
        self.logs = self.folder / "logs"
        self.secrets_dir = self.folder / "secrets"
        self.pg: TempPostgres | None = None
        self.provider_port: int | None = None
        self.children: list[tuple[str, subprocess.Popen, Path]] = []

    # ---------------------------------------------------------------- the folder
    def prepare_folder(self) -> None:
        """Create the folder, or check that an existing one is a trial folder (and empty it with ``fresh``)."""
        marker = self.folder / MARKER
        if self.folder.exists() and any(self.folder.iterdir()) and not marker.is_file():
            raise UserError(f"{self.folder} holds files but no trial ({MARKER} is missing): choose an empty or new "
                            "folder with --dir")
        if self.fresh and marker.is_file():
            from .bench.pgserver import TempPostgres

            old = TempPostgres(root=self.folder / "pg")
            if old.bin is not None and old.running():
                old.stop()
            shutil.rmtree(self.folder)
            self.say(f"removed the earlier trial in {self.folder} (--fresh)")
        for path in (self.folder, self.logs, self.secrets_dir):
            path.mkdir(parents=True, exist_ok=True)
        self.secrets_dir.chmod(0o700)
        if not marker.is_file():
            marker.write_text(json.dumps({"what": "EduArt Studio team trial (python -m eduart_core team-trial)",
                                          "people": [p.subject for p in TRIAL_PEOPLE]}, indent=1) + "\n")

    def _secret(self, name: str) -> str:
        """A secret kept in the folder from the first start on (created then)."""
        path = self.secrets_dir / name
        if path.is_file():
            value = path.read_text(encoding="utf-8").strip()
            if value:
                return value
        value = secrets.token_hex(24)
        _write_private(path, value + "\n")
        return value

    # ---------------------------------------------------------------- PostgreSQL and the store
    def start_postgres(self) -> str:
        """Start the cluster (created on the first start); returns the store URL without its password."""
        from psycopg import sql

        from .bench.pgserver import TempPostgres, missing_reason

        reason = missing_reason()
        if reason:
            raise UserError(f"cannot start PostgreSQL: {reason}")
        self.pg = TempPostgres(root=self.folder / "pg")
        try:
            self.pg.start()
        except RuntimeError as exc:
            raise UserError(f"PostgreSQL did not start: {str(exc).splitlines()[0]} (log: {self.pg.log})") from None
        if self.pg.stopped_stale:
            self.say("PostgreSQL: stopped the server an earlier trial left running in this folder (was it killed?)")
        password = self._secret("db-password")
        with self.pg.superuser() as con:
            # the password travels as a SCRAM verifier: even a statement in the server's log shows no password
            verifier = con.pgconn.encrypt_password(password.encode(), USER.encode(), b"scram-sha-256").decode()
            exists = con.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (USER,)).fetchone()
            verb = "ALTER" if exists else "CREATE"
            con.execute(sql.SQL(verb + " ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(USER),
                                                                            sql.Literal(verifier)))
            if not con.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone():
                con.execute(sql.SQL("CREATE DATABASE {} OWNER {}").format(sql.Identifier(DATABASE),
                                                                         sql.Identifier(USER)))
        os.environ["PGPASSWORD"] = password  # this process and the ones it starts; never an argv or a line
        version = self.pg.bin.parent.name if self.pg.bin else ""  # started, so its binaries were found
        self.say(f"PostgreSQL {version} on {HOST}:{self.pg.port}, database {DATABASE} "
                 f"({'the cluster of the earlier start' if self.pg.reused else 'a new cluster'} in {self.pg.root})")
        return f"postgresql://{USER}@{HOST}:{self.pg.port}/{DATABASE}"

    def local_env(self) -> dict[str, str]:
        """Where the trial store's images, run journals and cache live: inside the folder."""
        return {"EDUART_WORK_DIR": str(self.folder / "work"), "EDUART_IMAGES": str(self.folder / "images")}

    def prepare_store(self, url: str) -> None:
        """On the first start: the demo, the people's roles and blind review rounds. Later starts keep
        the store as the trial left it (an interrupted first preparation is completed)."""
        from .demo import build_demo
        from .store import Store, release_readers
        from .team import operator
        from .team.roles import grant

        done = self.folder / "work" / "prepared"
        if done.is_file():
            self.say("store: kept from the earlier start (decisions, roles and rounds as they were left)")
            return
        os.environ.update(self.local_env())
        store = Store(url)
        self.say("store: loading the demo (about a minute on the first start)")
        summary = build_demo(store, progress=lambda line: None)
        self.say(f"store: the demo is loaded ({summary['items']} items, {summary['runs']} simulated runs)")
        who = operator()
        for person in TRIAL_PEOPLE:
            for role in person.roles:
                grant(store, person.subject, role, who, note="team trial")
        blind = self._blind_rounds(store, who)
        if blind:
            self.say("review: " + ", ".join(f"{d} round {r}" for d, r in blind)
                     + " made blind, two reviewers per page (set by the trial, recorded as the operator)")
        release_readers(url)
        done.parent.mkdir(parents=True, exist_ok=True)
        done.write_text("demo, roles and rounds prepared\n")

    @staticmethod
    def _blind_rounds(store, who) -> list[tuple[str, int]]:
        """Every extraction round nobody has decided on yet needs two reviewers: a team's round, where
        reviewers decide blind and the adjudicator settles what they disagree on."""
        from .extraction import review

        state = review.load_state(store)
        if state.outcomes.empty:
            return []
        decided = set()
        if not state.decisions.empty:
            pages = dict(zip(state.outcomes["page_id"], state.outcomes["dataset"]))
            decided = {(pages.get(p), int(r)) for p, r in zip(state.decisions["page_id"], state.decisions["round"])}
        rounds = sorted({(str(d), int(r)) for d, r in zip(state.outcomes["dataset"], state.outcomes["round"])})
        chosen = [(d, r) for d, r in rounds if (d, r) not in decided and state.reviewers_needed(d, r) == 1]
        for dataset, round_ in chosen:
            review.set_reviewers(store, dataset, round_, 2, set_by=who)
        return chosen

    # ---------------------------------------------------------------- the provider and the app
    def _spawn(self, name: str, argv: list[str], env: dict[str, str], cwd: Path | None = None) -> subprocess.Popen:
        log = self.logs / f"{name}.log"
        with log.open("w", encoding="utf-8") as out:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                    cwd=cwd, start_new_session=True, preexec_fn=_set_parent_death_signal)
        self.children.append((name, proc, log))
        return proc

    def _wait_http(self, name: str, proc: subprocess.Popen, url: str, log: Path) -> None:
        deadline = time.monotonic() + READY_S
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise UserError(f"the {name} ended at start (exit {proc.returncode}); see {log}")
            try:
                with urllib.request.urlopen(url, timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise UserError(f"the {name} did not answer within {READY_S:.0f} s; see {log}")

    def start_provider(self) -> str:
        """The local OpenID Connect provider with the trial's people; returns its address."""
        self.provider_port = _free_port()
        argv = [sys.executable, "-m", "oidc_provider_mock", "--port", str(self.provider_port), "--host", HOST]
        for person in TRIAL_PEOPLE:
            argv += ["--user-claims", json.dumps(person.claims())]
        env = {**os.environ, "NO_COLOR": "1"}
        proc = self._spawn("sign-in provider", argv, env)
        issuer = f"http://{HOST}:{self.provider_port}"
        self._wait_http("sign-in provider", proc, f"{issuer}/.well-known/openid-configuration",
                        self.logs / "sign-in provider.log")
        self.say(f"sign-in provider on {issuer} (local: anyone at this machine signs in as anyone)")
        return issuer

    def write_auth(self, issuer: str) -> Path:
        """The app's [auth] section (new cookie and client secrets at every start)."""
        path = self.secrets_dir / "auth.toml"
        _write_private(path, "\n".join([
            "# written by team-trial at every start; sign-in through the local provider",
            "[auth]",
            f'redirect_uri = "http://{HOST}:{self.port}/oauth2callback"',
            f'cookie_secret = "{secrets.token_hex(32)}"',
            f'client_id = "{CLIENT_ID}"',
            f'client_secret = "{secrets.token_hex(24)}"',
            f'server_metadata_url = "{issuer}/.well-known/openid-configuration"',
            ""]))
        return path

    def write_env(self, url: str) -> Path:
        """``trial.env``: `. trial.env` points commands at the trial store (holds the password: private)."""
        path = self.folder / "trial.env"
        values = {"EDUART_DATABASE_URL": url, "PGPASSWORD": os.environ["PGPASSWORD"], **self.local_env()}
        _write_private(path, "".join(f"export {k}={shlex.quote(v)}\n" for k, v in values.items()))
        return path

    def start_app(self, url: str, auth: Path) -> str:
        app = PROJECT_ROOT / "app.py"
        if not app.is_file():
            raise UserError(f"the studio's app.py is not at {app}: run the trial from a copy of the project")
        env = {**os.environ, **self.local_env(), "EDUART_DATABASE_URL": url, "EDUART_SECRETS": str(auth),
               "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false"}
        env.pop("EDUART_DB", None)
        argv = [sys.executable, "-m", "streamlit", "run", str(app), "--server.address", HOST,
                "--server.port", str(self.port), "--server.headless", "true", "--browser.gatherUsageStats", "false"]
        proc = self._spawn("studio", argv, env, cwd=PROJECT_ROOT)
        address = f"http://{HOST}:{self.port}"
        self._wait_http("studio", proc, f"{address}/_stcore/health", self.logs / "studio.log")
        return address

    # ---------------------------------------------------------------- the whole trial
    def start(self) -> str:
        """Everything up; returns the studio's address."""
        if not port_free(self.port):
            raise UserError(f"port {self.port} on {HOST} is in use: choose another with --port")
        self.prepare_folder()
        url = self.start_postgres()
        self.prepare_store(url)
        issuer = self.start_provider()
        auth = self.write_auth(issuer)
        self.write_env(url)
        return self.start_app(url, auth)

    def watch(self) -> None:
        """Wait until a signal stops the trial; a server that ends by itself ends the trial too."""
        while True:
            for name, proc, log in self.children:
                if proc.poll() is not None:
                    raise UserError(f"the {name} ended by itself (exit {proc.returncode}); see {log}")
            time.sleep(0.5)

    def stop(self) -> list[str]:
        """End the app, the provider and PostgreSQL (in that order, by PID); returns what was stopped."""
        stopped = []
        for name, proc, _ in reversed(self.children):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                try:
                    proc.wait(timeout=STOP_S)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait(timeout=STOP_S)
                stopped.append(name)
        self.children = []
        if self.pg is not None:
            from .store import release_readers

            release_readers(None)
            try:
                if self.pg.running():
                    try:
                        self.pg.stop("fast")
                    except RuntimeError:
                        self.pg.stop("immediate")
                    stopped.append("PostgreSQL")
            finally:
                self.pg.forget_sockets()
            self.pg = None
        return stopped


def run(folder: Path, port: int, fresh: bool = False, say: Say = print, ready: Say | None = None) -> int:
    """Start the trial, tell ``ready`` the lines a person needs, wait for Ctrl-C/SIGTERM/SIGHUP, stop."""
    trial = TeamTrial(folder, port, say=say, fresh=fresh)
    # SIGINT too: a trial started in the background of a script has SIGINT ignored until told otherwise
    handlers = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        address = trial.start()
        for line in instructions(trial, address):
            (ready or say)(line)
        trial.watch()
    except _Stop:
        pass
    finally:
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):  # a second Ctrl-C must not cut the stop short
            signal.signal(sig, signal.SIG_IGN)
        stopped = trial.stop()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
        if stopped:  # nothing started (a refusal before the first server): its one line says it all
            say(f"stopped: {', '.join(stopped)}; the folder {trial.folder} is kept (start again with the same "
                "command to continue, add --fresh to start over)")
    return 0


def instructions(trial: TeamTrial, address: str) -> list[str]:
    """What a person needs to try team mode: the address, whom to sign in as, how to stop."""
    width = max(len(p.subject) for p in TRIAL_PEOPLE)
    lines = [f"EduArt Studio (team mode) at {address}",
             "Sign in, then click one of these names on the provider's page (or type it):"]
    lines += [f"  {p.subject:{width}}  {', '.join(p.roles):22} {p.name}" for p in TRIAL_PEOPLE]
    lines += ["Sign out in the sidebar to switch person. Reviewers decide blind; where bruno and clara disagree, "
              "dora settles.",
              f"Commands on the trial store: . {trial.folder / 'trial.env'} && python -m eduart_core roles list",
              f"Logs: {trial.logs}. Stop with Ctrl-C."]
    return lines
