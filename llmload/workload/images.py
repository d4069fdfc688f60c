"""Image inputs: a class's ``images`` option and the images its requests carry.

A class sends images with its prompt::

    [[classes]]
    name = "vision"
    weight = 1
    input_tokens = 50
    output_tokens = 100
    images = {count = 2, width = 512, height = 512, format = "jpeg", quality = 85}

``count`` images per request (1 to 16), ``width`` x ``height`` pixels (16 to 4096 each),
``format`` ``"png"`` (the default) or ``"jpeg"`` (``quality`` 1 to 100, default
:data:`DEFAULT_QUALITY`; only for JPEG). Or ``images = {count = N, path = "photos/"}``: real
image files (``.png``, ``.jpg``, ``.jpeg`` in a folder, or one file; relative to the profile's
folder), read once per process and drawn per request from the seed, sent as they are (their
own size and format; repeated files are the same bytes, so a server cache may match them).
The chat adapter sends each image as an ``image_url`` content part holding a
``data:image/png;base64,...`` URI after the prompt's text part (Responses: ``input_image``
parts; Anthropic Messages: base64 ``image`` blocks).

**Conversations and agents** (``turns``): the images go with the *first* user message, as a
chat app sends a picture with the message it was attached to; ``every_turn = true`` attaches
``count`` new images to every user message instead (a screenshot per step). Each request
re-sends the whole history, as chat clients do, so the earlier user messages keep their image
parts (:mod:`llmload.workload.conversation`) and a request carries every image of its history.
An agent's tool turns add no user message, so no new images. The images a request *carries*
("images sent": the history's, what the server receives and decodes) are what is recorded
(``record.images``) and counted (:mod:`llmload.metrics.parts.image_inputs`); the *new* images,
first sent by that request, are ``count`` on the first turn (and on every user turn with
``every_turn``), none otherwise.

The images are generated, never downloaded: a base image per (seed, class, size) - a
gradient with seeded noise, compressed once per process - and, per image, its top rows
replaced by pixels drawn from ``(seed, user, image counter)``, so no two images carry the same
pixels and no server-side image cache flatters them. Only those rows are compressed per image
(:mod:`llmload.workload.image_encoding`): a 512x512 PNG costs well under a millisecond, a
1024x1024 JPEG ~0.3 ms.
"""

from __future__ import annotations

import base64
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from llmload.errors import ProfileError
from llmload.jsonvalue import Json
from llmload.workload.image_encoding import JPEG_ROWS, PNG_ROWS, jpeg_base, png_base

__all__ = ["DEFAULT_QUALITY", "ImageSource", "ImageSpec", "parse_images"]

_KEYS = ("count", "width", "height", "format", "quality", "every_turn", "path")
_MEDIA_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
_FORMATS = ("png", "jpeg")
#: A generated JPEG's quality unless ``quality`` says (a photo as phones and chat apps send it: 80-90).
DEFAULT_QUALITY = 85


@dataclass(frozen=True, slots=True)
class ImageSpec:
    """A class's images: ``count`` per user message, ``width`` x ``height`` pixels, ``format`` (JPEG: ``quality``);
    ``every_turn``: a conversation attaches them to every user message, not the first only."""

    count: int
    width: int
    height: int
    format: str = "png"
    path: Path | None = None  # image files (a folder or one file) instead of generated images; then no size
    quality: int = DEFAULT_QUALITY
    every_turn: bool = False

    def to_dict(self) -> dict[str, Json]:
        d: dict[str, Json] = {"count": self.count}
        if self.path is not None:
            d["path"] = str(self.path)
        else:
            d |= {"width": self.width, "height": self.height, "format": self.format}
            if self.format == "jpeg":
                d["quality"] = self.quality
        return (d | {"every_turn": True}) if self.every_turn else d


def parse_images(c: dict[str, Json], at: str, base_dir: Path | None = None) -> ImageSpec | None:
    """A class table's ``images`` (None without); ``at`` names the class, ``base_dir`` anchors a relative
    ``path``. :class:`~llmload.errors.ProfileError`, one line, on a bad value."""
    if "images" not in c:
        return None
    raw, where = c["images"], f"{at}.images"
    if not isinstance(raw, dict):
        raise ProfileError(f"{where}: expected a table {{count, width, height, format}}, got {raw!r}")
    for key in raw:
        if key not in _KEYS:
            raise ProfileError(f"{where}.{key}: unknown key; allowed keys: {', '.join(_KEYS)}")
    count = _int(raw.get("count", 1), f"{where}.count", 1, 16, "images per request")
    every_turn = raw.get("every_turn", False)
    if not isinstance(every_turn, bool):
        raise ProfileError(f"{where}.every_turn: expected true or false, got {every_turn!r}")
    if every_turn and "turns" not in c:
        raise ProfileError(f"{where}.every_turn: a single-request class has one turn; remove it or add turns = N")
    if "path" in raw:
        return ImageSpec(count, 0, 0, "files", _parse_path(raw, where, base_dir), every_turn=every_turn)
    width = _int(raw.get("width"), f"{where}.width", 16, 4096, "pixels")
    height = _int(raw.get("height"), f"{where}.height", 16, 4096, "pixels")
    fmt = raw.get("format", "png")
    if fmt not in _FORMATS:
        raise ProfileError(f"{where}.format: expected one of {', '.join(_FORMATS)}, got {fmt!r}")
    if "quality" in raw and fmt != "jpeg":
        raise ProfileError(f'{where}.quality: only a JPEG has a quality; remove it or set format = "jpeg"')
    quality = _int(raw.get("quality", DEFAULT_QUALITY), f"{where}.quality", 1, 100, "JPEG quality")
    return ImageSpec(count, width, height, fmt, None, quality, every_turn)


def _parse_path(raw: dict[str, Json], where: str, base_dir: Path | None) -> Path:
    """``path``: a folder of image files (or one file), relative to the profile's folder; checked now."""
    if given := [k for k in ("width", "height", "format", "quality") if k in raw]:
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


class ImageSource:
    """One user's images of one class: :meth:`next` gives a request's data URIs, each image unique."""

    __slots__ = ("_base", "_files", "_prefix", "_rows", "_seed", "_user", "sent", "spec")

    def __init__(self, spec: ImageSpec, seed: int, class_name: str, user_index: int) -> None:
        self.spec = spec
        self._files = None if spec.path is None else _file_uris(spec.path)
        self._base: Any = None
        if self._files is None and spec.format == "jpeg":
            self._base = jpeg_base(seed, class_name, spec.width, spec.height, spec.quality)
            self._prefix, self._rows = "data:image/jpeg;base64,", JPEG_ROWS
        elif self._files is None:
            self._base = png_base(seed, class_name, spec.width, spec.height)
            self._prefix, self._rows = "data:image/png;base64,", PNG_ROWS
        self._seed = seed
        self._user = user_index
        self.sent = 0  # images made so far (the counter mixed into each image's pixels)

    def next(self) -> tuple[str, ...]:
        """``count`` ``data:image/...;base64,...`` URIs, fresh pixels in each (image files: drawn from the seed)."""
        files = self._files
        if files is not None:
            rng = np.random.default_rng((self._seed, self._user, self.sent))
            self.sent += self.spec.count
            return tuple(files[int(i)] for i in rng.integers(0, len(files), self.spec.count))
        return tuple(self._prefix + base64.b64encode(self.image()).decode("ascii") for _ in range(self.spec.count))

    def image(self) -> bytes:
        """The next generated image's bytes (PNG or JPEG, as the spec says)."""
        assert self._base is not None, "image files are sent as they are"
        rng = np.random.default_rng((self._seed, self._user, self.sent))
        self.sent += 1
        return self._base.image(rng.integers(0, 256, size=(self._rows, self.spec.width, 3), dtype=np.uint8))

    def png(self) -> bytes:
        """The next image's PNG bytes (a PNG class)."""
        assert self.spec.format == "png"
        return self.image()
