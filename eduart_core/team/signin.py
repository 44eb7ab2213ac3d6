"""Is sign-in configured, and is the server exposed without it? (Read with tomllib: no Streamlit.)

Sign-in is on when a secrets file Streamlit reads (``.streamlit/secrets.toml`` in the working
directory or the project, or the file ``$EDUART_SECRETS`` names) has an ``[auth]`` section. The
app asks Streamlit itself (``st.secrets``); this module serves the command line and the start-up
warning about an address other than the loopback one.
"""
from __future__ import annotations

import ipaddress
import os
import tomllib
from pathlib import Path

SECRETS_ENV = "EDUART_SECRETS"
PROJECT_ROOT = Path(__file__).resolve().parents[2]
LOOPBACK_NAMES = ("localhost",)


def secrets_files() -> list[Path]:
    """The secrets files that may hold ``[auth]``, in the order Streamlit merges them."""
    files = [PROJECT_ROOT / ".streamlit" / "secrets.toml", Path.cwd() / ".streamlit" / "secrets.toml"]
    extra = os.environ.get(SECRETS_ENV)
    if extra:
        files.append(Path(extra).expanduser())
    seen, out = set(), []
    for f in files:
        key = str(f.resolve()) if f.exists() else str(f)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out


def auth_section() -> dict:
    """The merged ``[auth]`` section of the secrets files ({} when sign-in is off)."""
    merged: dict = {}
    for path in secrets_files():
        if not path.is_file():
            continue
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(data.get("auth"), dict):
            merged.update(data["auth"])
    return merged


def signin_configured() -> bool:
    return bool(auth_section())


def is_loopback(address: str | None) -> bool:
    """Whether a server address only accepts connections from this machine."""
    host = (address or "").strip().strip("[]")  # no address: Streamlit listens on every interface
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def exposure_warning(address: str | None, signed_in: bool) -> str | None:
    """The one-line warning for a server listening beyond this machine without sign-in."""
    if signed_in or is_loopback(address):
        return None
    where = address or "every interface"
    return (f"warning: the studio listens on {where} without sign-in: anyone who reaches it can review, "
            "launch paid runs and change rounds; add an [auth] section to .streamlit/secrets.toml "
            "(README: Working as a team) or listen on 127.0.0.1")
