"""The audit log keeps who launched a run and with which command line, never a password or a key
typed on that line (the audit log is read by every admin and travels in exports)."""
from __future__ import annotations

from eduart_core.commands.run import audit_argv


def test_a_database_password_and_an_api_key_on_the_command_line_never_reach_the_audit_row():
    argv = ["--db", "postgresql://ann:s3cr%40t-pw@db.lab:5432/eduart", "--model", "gpt-x",
            "--db=postgres://bob:hunter22@db.lab/eduart?sslmode=require&password=other-pw",
            "--note", "api_key=sk-abcdefghijklmnopqrstu"]
    kept = audit_argv(argv)
    text = " ".join(kept)
    for secret in ("s3cr", "hunter22", "other-pw", "sk-abcdefghijklmnopqrstu"):
        assert secret not in text
    assert kept[1] == "postgresql://ann@db.lab:5432/eduart"
    assert kept[2:4] == ["--model", "gpt-x"]
    assert kept[4].startswith("--db=postgresql://bob@db.lab:5432/eduart")


def test_a_malformed_url_is_named_not_kept():
    assert audit_argv(["--db", "postgresql://ann:pw@host:notaport/db"]) == ["--db", "[malformed PostgreSQL URL]"]
