"""Without a PostgreSQL server the PostgreSQL tests skip with one line, unless EDUART_REQUIRE_POSTGRES=1
(CI), where the same missing server is a failure."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

PROBE = '''
def test_needs_a_server(pg_url):
    assert pg_url.startswith("postgresql://")
'''


def _run(tmp_path: Path, require: str | None) -> subprocess.CompletedProcess:
    (tmp_path / "test_probe.py").write_text(PROBE)
    (tmp_path / "conftest.py").write_text((ROOT / "tests" / "conftest.py").read_text())
    env = {k: v for k, v in os.environ.items() if k != "EDUART_REQUIRE_POSTGRES"}
    env.update(PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests'}", EDUART_PG_BIN=str(tmp_path / "no-such-bin"))
    if require is not None:
        env["EDUART_REQUIRE_POSTGRES"] = require
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rsfE",
                           str(tmp_path / "test_probe.py")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)


@pytest.mark.parametrize("require", [None, "0"])
def test_without_a_server_the_postgres_tests_skip_with_one_line(tmp_path, require):
    done = _run(tmp_path, require)
    assert done.returncode == 0, done.stdout + done.stderr
    skipped = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(skipped) == 1 and "PostgreSQL server binaries not found" in skipped[0]
    assert "EDUART_REQUIRE_POSTGRES=1" in skipped[0] and "1 skipped" in done.stdout


def test_with_eduart_require_postgres_a_missing_server_fails(tmp_path):
    done = _run(tmp_path, "1")
    assert done.returncode != 0 and "1 error" in done.stdout, done.stdout + done.stderr
    assert "EDUART_REQUIRE_POSTGRES=1 but PostgreSQL server binaries not found" in done.stdout
