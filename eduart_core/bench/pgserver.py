"""A PostgreSQL server of our own in a folder, for the team benchmark, the tests and `team-trial`.

Why our own: the benchmarks, the tests and a local trial of team mode need a real server without
touching any installed one.
The Debian ``postgresql`` package provides the binaries (``/usr/lib/postgresql/<n>/bin``, or
``$EDUART_PG_BIN``); the server gets a new cluster in a temp dir, listens on a free 127.0.0.1
port, keeps its socket in that dir, and uses password authentication over TCP so a wrong
password fails as it would on a team server. ``initdb`` refuses to run as root: as root the
cluster belongs to the ``postgres`` user and the commands run through ``runuser``. Given a
``root`` folder the cluster outlives the object: a second start finds it and starts it again.
"""
from __future__ import annotations

import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

SERVER_USER = "postgres"


def pg_bin() -> Path | None:
    """The folder with initdb and pg_ctl ($EDUART_PG_BIN, else the newest Debian one); None without."""
    env = os.environ.get("EDUART_PG_BIN")
    candidates = [Path(env)] if env else sorted(Path("/usr/lib/postgresql").glob("*/bin"),
                                                key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0,
                                                reverse=True)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "pg_ctl").is_file():
            return folder
    return None


def missing_reason() -> str | None:
    """Why no temporary server can be started here, or None when one can."""
    if pg_bin() is None:
        return "PostgreSQL server binaries not found (apt-get install postgresql, or set EDUART_PG_BIN)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam(SERVER_USER)
        except KeyError:
            return f"running as root and there is no {SERVER_USER!r} user to run the server as"
    return None


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


#: A Unix socket's path must stay under about 107 bytes: a deeper folder gets a short temp dir for it.
SOCKET_ROOM = 80


class TempPostgres:
    """initdb + pg_ctl in a folder; ``url(database)`` names a database on it.

    ``durable=False`` turns fsync and synchronous commit off (tests: faster, and only the server's
    own crash could lose data, which no test provokes); the benchmark keeps the defaults.
    ``root`` keeps the cluster in that folder (default: a new temp dir) and ``port`` chooses the
    port (default: a free one). A cluster already in ``root`` is started again, not recreated (its
    superuser password is then the one it was created with), and a server still running from it
    (left by a process that was killed) is stopped first.
    """

    def __init__(self, durable: bool = True, password: str | None = None, root: Path | None = None,
                 port: int | None = None):
        self.durable = durable
        self.password = password or secrets.token_hex(8)
        self.user = SERVER_USER
        self.port = port or free_port()
        self.root = Path(root) if root else Path(tempfile.mkdtemp(prefix="eduart-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.bin = pg_bin()
        self._as_other = os.geteuid() == 0
        self.sockets = self.root if len(str(self.root)) < SOCKET_ROOM else None
        self.reused = False
        self.stopped_stale = False  # start() found a server of this cluster still running and stopped it

    # ------------------------------------------------------------------ lifecycle
    def _tool(self, name: str) -> str:
        """The path of one server binary; without them, the reason in one line rather than a TypeError."""
        if self.bin is None:
            raise RuntimeError(missing_reason())
        return str(self.bin / name)

    def _run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess:
        command = list(argv)
        if self._as_other:
            command = ["runuser", "-u", SERVER_USER, "--", *command]
        # a session of its own: a Ctrl-C at the terminal reaches the caller, which stops the server in order
        return subprocess.run(command, check=check, capture_output=True, text=True, cwd=self.root,
                              start_new_session=True)

    def _own(self, path: Path) -> None:
        if self._as_other:
            info = pwd.getpwnam(SERVER_USER)
            os.chown(path, info.pw_uid, info.pw_gid)

    def start(self) -> TempPostgres:
        reason = missing_reason()
        if reason:
            raise RuntimeError(reason)
        self.root.mkdir(parents=True, exist_ok=True)
        self._own(self.root)
        if self._as_other and self._run("test", "-w", str(self.root), "-a", "-x", str(self.root),
                                        check=False).returncode != 0:
            raise RuntimeError(f"the {SERVER_USER} user (the server runs as it, because this runs as root) cannot "
                               f"enter {self.root}: choose a folder whose parents every user may enter")
        if self.sockets is None:
            self.sockets = Path(tempfile.mkdtemp(prefix="eduart-pgs-"))
            self._own(self.sockets)
        self.reused = (self.data / "PG_VERSION").is_file()
        if self.reused:
            if self.running():
                self._pg_ctl("stop", "-m", "fast")
                self.stopped_stale = True
        else:
            self._initdb()
        options = [f"-p {self.port}", f"-k {self.sockets}", "-c listen_addresses=127.0.0.1",
                   "-c max_connections=200", "-c shared_buffers=128MB"]
        if not self.durable:
            options += ["-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off"]
        self._pg_ctl("start", "-o", " ".join(options))
        return self

    def _initdb(self) -> None:
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        self._own(pwfile)
        try:
            done = self._run(self._tool("initdb"), "-D", str(self.data), "-U", self.user, "--pwfile", str(pwfile),
                             "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C.UTF-8",
                             "--no-sync", check=False)
        finally:
            pwfile.unlink(missing_ok=True)
        if done.returncode != 0:
            lines = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()
            raise RuntimeError(f"initdb failed in {self.root}: {lines[-1]}")

    def running(self) -> bool:
        """Whether a server runs from this folder's cluster now."""
        if not (self.data / "PG_VERSION").is_file():
            return False
        return self._run(self._tool("pg_ctl"), "-D", str(self.data), "status", check=False).returncode == 0

    def postmaster_pid(self) -> int | None:
        """The PID of the server running from this cluster (first line of postmaster.pid), if any."""
        try:
            return int((self.data / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def _pg_ctl(self, action: str, *extra: str) -> None:
        done = self._run(self._tool("pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t", "60",
                         *extra, action, check=False)
        if done.returncode != 0:
            tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"pg_ctl {action} failed: {done.stderr.strip() or done.stdout.strip()}\n{tail}")

    def stop(self, mode: str = "fast") -> None:
        if self.data.exists():
            self._pg_ctl("stop", "-m", mode)

    def restart(self) -> None:
        """Stop (fast: disconnects every client) and start again on the same port."""
        self._pg_ctl("restart", "-m", "fast")

    def cleanup(self) -> None:
        try:
            self.stop()
        except RuntimeError:
            pass
        shutil.rmtree(self.root, ignore_errors=True)
        self.forget_sockets()

    def forget_sockets(self) -> None:
        """Remove the short socket dir a deep ``root`` needed (nothing when the socket lives in ``root``)."""
        if self.sockets is not None and self.sockets != self.root:
            shutil.rmtree(self.sockets, ignore_errors=True)

    def __enter__(self) -> TempPostgres:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.cleanup()

    # ------------------------------------------------------------------ databases
    def url(self, database: str = "postgres", password: str | None = None) -> str:
        return f"postgresql://{self.user}:{password or self.password}@127.0.0.1:{self.port}/{database}"

    def superuser(self, database: str = "postgres"):
        """A connection (autocommit) as the superuser over the local socket: no password."""
        import psycopg

        return psycopg.connect(host=str(self.sockets or self.root), port=self.port, user=self.user, dbname=database,
                               autocommit=True)

    def sql(self, statement: str) -> None:
        """Run one statement as the superuser over the local socket (no password)."""
        with self.superuser() as con:
            con.execute(statement)

    def create_database(self, name: str, template: str | None = None) -> str:
        """A new database (copied from ``template`` when given); returns its URL."""
        self.sql(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        return self.url(name)

    def drop_database(self, name: str) -> None:
        self.sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
