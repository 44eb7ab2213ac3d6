"""Where a store's image files live: a folder (local or shared) or S3-compatible object storage.

Why a choice: with a DuckDB file the images sit in a folder next to it. A team store is read by
several app servers on different machines, so its images must be where each of them can read
them: a shared folder (``EDUART_IMAGES=/mnt/share/eduart-images``) or a bucket
(``EDUART_IMAGES=s3://bucket/prefix``; boto3's usual credentials and ``AWS_ENDPOINT_URL_S3`` for
an S3-compatible server such as MinIO). Files are content-addressed as always
(``<hash[:2]>/<hash>.<ext>``), so writing one twice is harmless and a local copy of an object
never goes stale: S3 images are read through a local cache folder, and everything that needs a
file path (pages, the runner, reports) gets one.
"""
from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Protocol

from ..errors import UserError


class _Located(Protocol):
    """What the image location needs of a store (``core.Store`` has it; naming the class here
    would make an arrow back to the module that builds the image store)."""

    @property
    def default_images_dir(self) -> Path: ...

    @property
    def cache_dir(self) -> Path: ...

IMAGES_ENV = "EDUART_IMAGES"


class ImageStore:
    """Content-addressed image files under relative paths (``ab/abcdef....png``)."""

    #: Folder with the files (for object storage: the local copies).
    local_root: Path

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def has(self, rel: str) -> bool:  # pragma: no cover
        raise NotImplementedError

    def put(self, rel: str, data: bytes) -> None:  # pragma: no cover
        raise NotImplementedError

    def read(self, rel: str) -> bytes:
        return self.path(rel).read_bytes()

    def path(self, rel: str) -> Path:  # pragma: no cover
        """A local file with the image's bytes."""
        raise NotImplementedError


def _write_atomic(target: Path, data: bytes) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(target.suffix + f".tmp{os.getpid()}.{threading.get_ident()}")
    tmp.write_bytes(data)
    os.replace(tmp, target)


class FolderImages(ImageStore):
    """A folder: next to a DuckDB file by default, or a shared folder every server mounts."""

    def __init__(self, root: Path):
        self.local_root = Path(root)

    def describe(self) -> str:
        return str(self.local_root)

    def has(self, rel: str) -> bool:
        return (self.local_root / rel).exists()

    def put(self, rel: str, data: bytes) -> None:
        target = self.local_root / rel
        if not target.exists():
            _write_atomic(target, data)

    def path(self, rel: str) -> Path:
        return self.local_root / rel


class S3Images(ImageStore):
    """``s3://bucket/prefix`` through boto3, read through a local cache folder."""

    def __init__(self, url: str, cache: Path):
        rest = url[len("s3://"):]
        self.bucket, _, prefix = rest.partition("/")
        if not self.bucket:
            raise UserError(f"{IMAGES_ENV}={url}: name a bucket (s3://bucket/prefix)")
        self.prefix = prefix.strip("/")
        self.url = url
        self.local_root = Path(cache)
        self._client = None
        self._lock = threading.Lock()

    def describe(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"

    @property
    def client(self):
        with self._lock:
            if self._client is None:
                import boto3

                self._client = boto3.session.Session().client("s3")
            return self._client

    def _key(self, rel: str) -> str:
        return f"{self.prefix}/{rel}" if self.prefix else rel

    def _error(self, action: str, rel: str, exc: Exception) -> UserError:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return UserError(f"cannot {action} image {rel} in {self.describe()}: {text}")

    def has(self, rel: str) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_object(Bucket=self.bucket, Key=self._key(rel))
            return True
        except ClientError as exc:
            if exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound"):
                return False
            raise self._error("check", rel, exc) from None
        except BotoCoreError as exc:
            raise self._error("check", rel, exc) from None

    def put(self, rel: str, data: bytes) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.put_object(Bucket=self.bucket, Key=self._key(rel), Body=data)
        except (BotoCoreError, ClientError) as exc:
            raise self._error("store", rel, exc) from None
        _write_atomic(self.local_root / rel, data)

    def path(self, rel: str) -> Path:
        from botocore.exceptions import BotoCoreError, ClientError

        target = self.local_root / rel
        if not target.exists():
            try:
                data = self.client.get_object(Bucket=self.bucket, Key=self._key(rel))["Body"].read()
            except (BotoCoreError, ClientError) as exc:
                raise self._error("read", rel, exc) from None
            _write_atomic(target, data)
        return target


_S3: dict[tuple[str, str], S3Images] = {}
_S3_LOCK = threading.Lock()


def image_store(store: _Located) -> ImageStore:
    """The image location of ``store``: $EDUART_IMAGES when set, else the folder beside the store."""
    setting = os.environ.get(IMAGES_ENV, "").strip()
    if not setting:
        return FolderImages(store.default_images_dir)
    if setting.lower().startswith("s3://"):
        cache = store.cache_dir / "images"
        key = (setting, str(cache))
        with _S3_LOCK:
            if key not in _S3:
                _S3[key] = S3Images(setting, cache)
            return _S3[key]
    return FolderImages(Path(setting).expanduser())
