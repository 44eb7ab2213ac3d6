"""Writing output files safely, and naming the cause when the file system says no.

Why: a report or export written in place and interrupted by a full disk leaves a half file that
looks like a result. Every output file is therefore written to a temporary name in the target
folder and renamed over the target only once complete; a failure removes the temporary file and
raises one line that names the path and the cause ("no space left on device"), never a bare
``OSError`` traceback.
"""
from __future__ import annotations

import errno
import logging
import os
import tempfile
from pathlib import Path

from .errors import UserError

logger = logging.getLogger(__name__)

_CAUSES = {
    errno.ENOSPC: "no space left on device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.ENOENT: "no such file or folder",
    errno.EISDIR: "is a folder",
    errno.ENOTDIR: "a parent is not a folder",
    errno.EFBIG: "file too large",
}


def os_cause(exc: BaseException) -> str:
    """A short human cause for an OSError ("no space left on device"), else its strerror."""
    if isinstance(exc, OSError):
        if exc.errno in _CAUSES:
            return _CAUSES[exc.errno]
        if exc.strerror:
            return exc.strerror.lower()
    text = str(exc).lower()
    if "no space left" in text:
        return "no space left on device"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def is_disk_full(exc: BaseException) -> bool:
    """True for ENOSPC/EDQUOT, also when only the message says so (DuckDB wraps the errno)."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return True
    text = str(exc).lower()
    return "no space left on device" in text or "disk quota exceeded" in text


def write_error(path: str | os.PathLike, exc: BaseException) -> UserError:
    """The one-line UserError for a failed write of ``path``."""
    return UserError(f"cannot write {path}: {os_cause(exc)}")


def atomic_write(path: str | os.PathLike, data: bytes | str, *, encoding: str = "utf-8") -> int:
    """Write ``data`` to ``path`` via a temporary file and a rename; returns the bytes written.

    On any failure the target is left as it was (absent or the previous complete version) and
    ``UserError`` names the path and the cause.
    """
    target = Path(path)
    payload = data.encode(encoding) if isinstance(data, str) else bytes(data)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"cannot write {target}: folder {folder} does not exist")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
        tmp = None
    except OSError as exc:
        raise write_error(target, exc) from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError as exc:  # the temp file is gone or unreachable: nothing left to clean
                logger.debug("could not remove temporary file %s: %s", tmp, exc)
    return len(payload)
