"""Verifying an image completely before it is stored or sent to a model.

Why a full decode: reading only the header accepted truncated PNGs and files that merely claim
to be images; the inspector then failed with a traceback and the broken bytes were sent to
models. Why a pixel limit checked before decoding: a small file can declare 20000 x 20000 pixels
and decompress to gigabytes. The order is: byte size, header (format, declared size), pixel
limit, full decode. Each refusal is ``ImageRejected`` with one line that says why and which limit
(with its environment variable) applies.
"""
from __future__ import annotations

import io
import re
import warnings
from dataclasses import dataclass

from .errors import UserError
from .limits import describe, int_limit

MIME_BY_FORMAT = {"JPEG": ("image/jpeg", "jpg"), "PNG": ("image/png", "png"), "GIF": ("image/gif", "gif"),
                  "WEBP": ("image/webp", "webp"), "BMP": ("image/bmp", "bmp"), "TIFF": ("image/tiff", "tif"),
                  "MPO": ("image/jpeg", "jpg")}  # MPO: a JPEG with extra frames (phone cameras)


class ImageRejected(UserError):
    """An image that cannot be stored; the message is the reason (the caller adds the path)."""


@dataclass(frozen=True)
class ImageInfo:
    mime: str
    ext: str
    width: int
    height: int


def check_image_size(size: int) -> None:
    """Refuse a file larger than the image byte limit before reading it."""
    if size > int_limit("max_image_bytes"):
        raise ImageRejected(f"image file of {size / 1024 / 1024:.1f} MB exceeds the limit of "
                            f"{describe('max_image_bytes')}")


def verify_image(data: bytes) -> ImageInfo:
    """Format and size of fully decodable image bytes; ``ImageRejected`` otherwise."""
    from PIL import Image, UnidentifiedImageError

    check_image_size(len(data))
    if not data:
        raise ImageRejected("empty file, not an image")
    max_pixels = int_limit("max_image_pixels")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # our own limit decides below
        try:
            with Image.open(io.BytesIO(data)) as img:  # lazy: reads the header only
                fmt = (img.format or "").upper()
                width, height = img.size
        except UnidentifiedImageError:
            raise ImageRejected("not a readable image (no known image format)") from None
        except Image.DecompressionBombError as exc:  # beyond Pillow's own hard guard (about 179 Mpx)
            found = re.search(r"\((\d+) pixels\)", str(exc))
            size = f"{int(found.group(1)) / 1e6:.1f} Mpx" if found else "too many pixels"
            raise ImageRejected(f"image of {size} exceeds the limit of {describe('max_image_pixels')}") from None
        except (OSError, ValueError, SyntaxError) as exc:
            raise ImageRejected(f"unreadable image header ({_reason(exc)})") from None
        if width <= 0 or height <= 0:
            raise ImageRejected(f"image declares {width} x {height} pixels")
        if width * height > max_pixels:
            raise ImageRejected(f"image of {width} x {height} pixels ({width * height / 1e6:.1f} Mpx) exceeds "
                                f"the limit of {describe('max_image_pixels')}")
        try:
            with Image.open(io.BytesIO(data)) as img:
                img.verify()  # structure and checksums (PNG CRCs)
            with Image.open(io.BytesIO(data)) as img:
                img.load()  # every pixel decoded: a truncated file fails here
        except Image.DecompressionBombError as exc:
            raise ImageRejected(f"image too large to decode ({_reason(exc)})") from None
        except (OSError, ValueError, SyntaxError, EOFError) as exc:
            raise ImageRejected(f"broken image data ({_reason(exc)})") from None
    mime, ext = MIME_BY_FORMAT.get(fmt, (f"image/{fmt.lower() or 'octet-stream'}", fmt.lower() or "bin"))
    return ImageInfo(mime, ext, int(width), int(height))


def _reason(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text[:160]
