"""The environment variables the studio reads, other than the limits (`limits.LIMITS`), in one table.

Why a table: each variable is read where it is used (the store, the runner, sign-in), so nobody reading
one module sees them all. This table is what the manual's settings reference is generated from, and a
test walks the library and the pages for quoted ``EDUART_...`` names and fails on one this table (or
`limits.LIMITS`) does not hold, so a new variable cannot go undocumented. The modules that read a
variable keep reading it themselves: this table describes, it configures nothing.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Setting:
    """One environment variable: its name, what it holds when unset, and what it changes."""

    env: str
    default: str
    doc: str
    #: the room of the studio it belongs to (a heading of the reference page)
    area: str
    #: set by the studio for its own child processes, not by a user
    internal: bool = False


SETTINGS: tuple[Setting, ...] = (
    Setting("EDUART_DB", "data/eduart.duckdb", "the DuckDB store file (`--db` overrides it)", "store"),
    Setting("EDUART_DATABASE_URL", "unset", "a team store: `postgresql://user@host:port/db` (wins over `EDUART_DB`)",
            "store"),
    Setting("EDUART_IMAGES", "a folder next to the store", "where images live: a shared folder or `s3://bucket/prefix`",
            "store"),
    Setting("EDUART_WORK_DIR", "data/", "the machine's own files of a PostgreSQL store: run journals, response "
            "cache, image copies", "store"),
    Setting("EDUART_PG_POOL", "8", "connections each process keeps open to PostgreSQL", "store"),
    Setting("EDUART_MODELS", "eduart_core/providers/models.toml", "a TOML file of models that adds to or "
            "overrides the shipped list", "runs"),
    Setting("EDUART_BATCH_POLL_S", "60", "seconds between two looks at a provider's batch jobs (`--poll-interval`)",
            "runs"),
    Setting("EDUART_BEDROCK_ROLE_ARN", "unset", "the IAM role Bedrock batch jobs assume (or `role_arn` under "
            "`[batch.bedrock]`)", "runs"),
    Setting("EDUART_BEDROCK_S3_URI", "unset", "the S3 location of Bedrock batch files, `s3://bucket/prefix` (or "
            "`s3_uri` under `[batch.bedrock]`)", "runs"),
    Setting("EDUART_RUBRICS", "prompts/rubrics", "a folder of rubric files of your own", "judges"),
    Setting("EDUART_SECRETS", ".streamlit/secrets.toml", "the file whose `[auth]` section turns sign-in on",
            "team"),
    Setting("EDUART_ROLES_CLAIM", "groups", "the identity-token claim that carries roles", "team"),
    Setting("EDUART_USER", "the login name", "who the command line records as the operator", "team"),
    Setting("EDUART_LAUNCHED_BY", "unset", "the checked identity a launch from the Runs page hands to its run "
            "process", "team", internal=True),
    Setting("EDUART_LOG_LEVEL", "ERROR", "how much library logging a command prints on stderr (`--debug`: all)",
            "command line"),
    Setting("EDUART_PG_BIN", "/usr/lib/postgresql/<version>/bin", "where `initdb` and `pg_ctl` are found (the "
            "team trial, the PostgreSQL benchmark and tests)", "team"),
)
