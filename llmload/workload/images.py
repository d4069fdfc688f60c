"""Image inputs: a class's ``images`` option and the images its requests carry.

A single-request class sends images with its prompt::

    [[classes]]
    name = "vision"
    weight = 1
    input_tokens = 50
    output_tokens = 100
    images = {count = 2, width = 512, height = 512, format = "png"}

``count`` images per request (1 to 16), ``width`` x ``height`` pixels (16 to 4096 each),
``format`` ``"png"`` (the default). Or ``images = {count = N, path = "photos/"}``: real
image files (``.png``, ``.jpg``, ``.jpeg`` in a folder, or one file; relative to the profile's
folder), read once per process and drawn per request from the seed, sent as they are (their
own size and format; repeated files are the same bytes, so a server cache may match them). A conversation class (``turns``) cannot have images yet;
in a profile with conversation classes, an image class's request is a one-turn
:class:`ImageSession`. ``"jpeg"`` needs Pillow, which llmload does not depend
on, so it is refused with that reason. The chat adapter sends each image as an
``image_url`` content part holding a ``data:image/png;base64,...`` URI after the prompt's
text part (Responses: ``input_image`` parts; Anthropic Messages: base64 ``image`` blocks).

The images are generated, never downloaded: a base image per (seed, class, size) - a
gradient with seeded noise, compressed once per process - and, per request, its top
:data:`UNIQUE_ROWS` rows replaced by pixels drawn from ``(seed, user, request counter)``,
so no two requests carry the same image and no server-side image cache flatters them. Only
those rows are compressed per request: the PNG's zlib stream is the fresh rows' block
(ended with a full flush) followed by the base's cached block, then the checksums; a
512x512 PNG costs well under a millisecond (tests/unit/workload/test_images.py).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import random
import struct
import zlib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from llmload.errors import ProfileError
from llmload.jsonvalue import Json
from llmload.workload.conversation import ClassPlan, Session
from llmload.workload.request_types import RequestSample

__all__ = ["UNIQUE_ROWS", "ImageSession", "ImageSource", "ImageSpec", "parse_images"]

_KEYS = ("count", "width", "height", "format", "path")
_MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
_FORMATS = ("png", "jpeg")
#: Rows at the top of each image drawn afresh per request (the rest is the cached base image).
UNIQUE_ROWS = 8
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True, slots=True)
class ImageSpec:
    """A class's images: ``count`` per request, ``width`` x ``height`` pixels, ``format``."""

    count: int
    width: int
    height: int
    format: str = "png"
    path: Path | None = None  # image files (a folder or one file) instead of generated images; then no size

    def to_dict(self) -> dict[str, Json]:
        if self.path is not None:
            return {"count": self.count, "path": str(self.path)}
        return {"count": self.count, "width": self.width, "height": self.height, "format": self.format}


def parse_images(c: dict[str, Json], at: str, base_dir: Path | None = None) -> ImageSpec | None:
    """A class table's ``images`` (None without); ``at`` names the class, ``base_dir`` anchors a relative
    ``path``. :class:`~llmload.errors.ProfileError`, one line, on a bad value."""
    if "images" not in c:
        return None
    raw, where = c["images"], f"{at}.images"
    if "turns" in c:
        raise ProfileError(f"{where}: images are sent by single requests only, not by a conversation (turns) yet; "
                           "put them in a class of their own")  # fmt: skip
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: expected a table {{count, width, height, format}}, got {raw!r}")
    for key in raw:
        if key not in _KEYS:
            raise ProfileError(f"{where}.{key}: unknown key; allowed keys: {', '.join(_KEYS)}")
    count = _int(raw.get("count", 1), f"{where}.count", 1, 16, "images per request")
    if "path" in raw:
        return ImageSpec(count, 0, 0, "files", _parse_path(raw, where, base_dir))
    width = _int(raw.get("width"), f"{where}.width", 16, 4096, "pixels")
    height = _int(raw.get("height"), f"{where}.height", 16, 4096, "pixels")
    fmt = raw.get("format", "png")
    if fmt not in _FORMATS:
        raise ProfileError(f"{where}.format: expected one of {', '.join(_FORMATS)}, got {fmt!r}")
    if fmt == "jpeg":
        raise ProfileError(f'{where}.format: "jpeg" needs Pillow, which llmload does not install; use "png"')
    return ImageSpec(count, width, height, fmt)


def _parse_path(raw: dict[str, Json], where: str, base_dir: Path | None) -> Path:
    """``path``: a folder of image files (or one file), relative to the profile's folder; checked now."""
    if given := [k for k in ("width", "height", "format") if k in raw]:
        raise ProfileError(f"{where}.{given[0]}: image files have their own size and format; remove it (or path)")
    path = raw["path"]
    if not isinstance(path, str) or not path:
        raise ProfileError(f"{where}.path: expected a folder of .png/.jpg files (a string), got {path!r}")
    resolved = Path(path).expanduser()
    if not resolved.is_absolute():
        resolved = (base_dir or Path.cwd()) / resolved
    if not _image_files(resolved):
        raise ProfileError(f"{where}.path: no .png, .jpg or .jpeg file at '{resolved}'; "
                           "relative paths start at the profile file's folder")  # fmt: skip
    return resolved


def _image_files(path: Path) -> list[Path]:
    files = sorted(path.iterdir()) if path.is_dir() else [path] if path.is_file() else []
    return [f for f in files if f.suffix.lower() in _MEDIA_TYPES]


@functools.lru_cache(maxsize=16)
def _file_uris(path: Path) -> tuple[str, ...]:
    """The image files at ``path`` as data URIs, read once per process."""
    return tuple(f"data:{_MEDIA_TYPES[f.suffix.lower()]};base64," + base64.b64encode(f.read_bytes()).decode("ascii")
                 for f in _image_files(path))  # fmt: skip


def _int(value: Any, where: str, low: int, high: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ProfileError(f"{where}: must be an integer in {low}..{high} ({what}), got {value!r}")
    return value


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def _rows(pixels: np.ndarray) -> bytes:
    """Raw PNG scanlines: filter byte 0 then the RGB bytes of each row."""
    h = pixels.shape[0]
    return np.concatenate([np.zeros((h, 1), np.uint8), pixels.reshape(h, -1)], axis=1).tobytes()


@dataclass(frozen=True, slots=True)
class _Base:
    """A base image's parts reused by every request: IHDR chunk, rows below the fresh ones raw and deflated."""

    ihdr: bytes
    rest_raw: bytes
    rest_deflated: bytes


@functools.lru_cache(maxsize=64)
def _base(seed: int, class_name: str, width: int, height: int) -> _Base:
    digest = hashlib.sha256(f"llmload-image:{seed}:{class_name}:{width}x{height}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([x * 255 // width, y * 255 // height, (x + y) * 127 // (width + height)], axis=-1)
    pixels = (base + rng.integers(0, 4, size=base.shape)).astype(np.uint8)
    rest = _rows(pixels[UNIQUE_ROWS:])
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)  # raw deflate: appended after the fresh rows' block
    ihdr = _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    return _Base(ihdr, rest, deflate.compress(rest) + deflate.flush())


class ImageSource:
    """One user's images of one class: :meth:`next` gives a request's data URIs, each image unique."""

    __slots__ = ("_base", "_files", "_seed", "_spec", "_user", "sent")

    def __init__(self, spec: ImageSpec, seed: int, class_name: str, user_index: int) -> None:
        self._spec = spec
        self._files = None if spec.path is None else _file_uris(spec.path)
        self._base = _base(seed, class_name, spec.width, spec.height) if self._files is None else None
        self._seed = seed
        self._user = user_index
        self.sent = 0  # images made so far (the request counter mixed into each image's pixels)

    def next(self) -> tuple[str, ...]:
        """``count`` ``data:image/png;base64,...`` URIs, fresh pixels in each (image files: drawn from the seed)."""
        files = self._files
        if files is not None:
            rng = np.random.default_rng((self._seed, self._user, self.sent))
            self.sent += self._spec.count
            return tuple(files[int(i)] for i in rng.integers(0, len(files), self._spec.count))
        return tuple(self._one() for _ in range(self._spec.count))

    def png(self) -> bytes:
        """The next image's PNG bytes."""
        spec, base = self._spec, self._base
        assert base is not None, "image files are sent as they are"
        rng = np.random.default_rng((self._seed, self._user, self.sent))
        self.sent += 1
        fresh = _rows(rng.integers(0, 256, size=(UNIQUE_ROWS, spec.width, 3), dtype=np.uint8))
        head = zlib.compressobj(1)
        stream = head.compress(fresh) + head.flush(zlib.Z_FULL_FLUSH)  # zlib header, byte-aligned, no back-refs
        check = zlib.adler32(base.rest_raw, zlib.adler32(fresh))
        idat = stream + base.rest_deflated + struct.pack(">I", check)
        return _PNG_SIGNATURE + base.ihdr + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")

    def _one(self) -> str:
        return "data:image/png;base64," + base64.b64encode(self.png()).decode("ascii")


class ImageSession(Session):
    """A single-request image class's one-turn :class:`~llmload.workload.conversation.Session` (a profile with
    conversation classes draws every class as a session): its turn carries the class's images."""

    __slots__ = ("_source",)

    def __init__(self, plan: ClassPlan, rng: random.Random, source: ImageSource) -> None:
        super().__init__(plan, rng)
        self._source = source

    def next_turn(self, previous_reply: str | None = None, reply_tokens: int | None = None) -> RequestSample:
        return replace(super().next_turn(previous_reply, reply_tokens), images=self._source.next())
