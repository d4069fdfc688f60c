"""Generated images' bytes: a base image compressed once per process, fresh top rows compressed per request.

The base image of a (seed, class, size) is a gradient with seeded noise (:func:`base_pixels`). Each
request's image replaces its top rows by fresh pixels (the caller draws them from its seed, user and
request counter) and only those rows are compressed; the rest of the file is the base's, cached:

* **PNG** (:class:`PngBase`, :data:`PNG_ROWS` fresh rows): the zlib stream is the fresh rows' block
  (ended with a full flush, so it is byte-aligned and refers to nothing after it) followed by the
  base's cached raw-deflate block, then the Adler-32 of all the rows and the chunks' CRCs. A
  512x512 PNG costs ~0.7 ms (compressing the whole image: 14-18 ms).
* **JPEG** (:class:`JpegBase`, :data:`JPEG_ROWS` fresh rows): baseline, 4:2:0 chroma subsampling
  (16x16-pixel MCUs), Pillow's standard Huffman tables, ``quality`` 1..100, and a restart marker
  after every MCU row (a DRI segment: every decoder honours it; each row's entropy-coded data
  then starts afresh). The fresh rows are one MCU row: they are encoded alone, at the same
  settings, and their entropy-coded data replaces the base's first row (everything up to its
  ``RST0`` marker). The bytes are exactly those Pillow writes for the whole composed image
  (tests/unit/workload/test_image_encoding.py); a 1024x1024 JPEG costs ~0.3 ms (the whole
  image: ~3.5 ms). Deterministic for a given Pillow (libjpeg-turbo) build. A Pillow too old for
  ``restart_marker_rows`` writes no restart markers: then each image is encoded whole (same pixels).
"""

from __future__ import annotations

import functools
import hashlib
import io
import struct
import zlib
from dataclasses import dataclass

import numpy as np

__all__ = ["JPEG_ROWS", "PNG_ROWS", "JpegBase", "PngBase", "base_pixels", "encode_jpeg", "jpeg_base", "png_base"]

#: Rows at the top of each PNG drawn afresh per request.
PNG_ROWS = 8
#: Rows at the top of each JPEG drawn afresh per request: one row of 16x16 MCUs (4:2:0).
JPEG_ROWS = 16
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_SOS, _DRI, _RST0, _EOI = 0xDA, b"\xff\xdd", b"\xff\xd0", b"\xff\xd9"


def base_pixels(seed: int, class_name: str, width: int, height: int) -> np.ndarray:
    """The base image's RGB pixels (``height`` x ``width`` x 3, uint8): a gradient with seeded noise."""
    digest = hashlib.sha256(f"llmload-image:{seed}:{class_name}:{width}x{height}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    y, x = np.mgrid[0:height, 0:width]
    base = np.stack([x * 255 // width, y * 255 // height, (x + y) * 127 // (width + height)], axis=-1)
    return (base + rng.integers(0, 4, size=base.shape)).astype(np.uint8)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(data, zlib.crc32(kind)))


def _rows(pixels: np.ndarray) -> bytes:
    """Raw PNG scanlines: filter byte 0 then the RGB bytes of each row."""
    h = pixels.shape[0]
    return np.concatenate([np.zeros((h, 1), np.uint8), pixels.reshape(h, -1)], axis=1).tobytes()


@dataclass(frozen=True, slots=True)
class PngBase:
    """A base PNG's parts reused by every request: IHDR chunk, rows below the fresh ones raw and deflated."""

    ihdr: bytes
    rest_raw: bytes
    rest_deflated: bytes

    def image(self, fresh: np.ndarray) -> bytes:
        """The PNG whose top rows are ``fresh`` (:data:`PNG_ROWS` x width x 3) and the rest the base's."""
        rows = _rows(fresh)
        head = zlib.compressobj(1)
        stream = head.compress(rows) + head.flush(zlib.Z_FULL_FLUSH)  # zlib header, byte-aligned, no back-refs
        check = zlib.adler32(self.rest_raw, zlib.adler32(rows))
        idat = stream + self.rest_deflated + struct.pack(">I", check)
        return _PNG_SIGNATURE + self.ihdr + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


@functools.lru_cache(maxsize=64)
def png_base(seed: int, class_name: str, width: int, height: int) -> PngBase:
    """The cached :class:`PngBase` of a (seed, class, size)."""
    rest = _rows(base_pixels(seed, class_name, width, height)[PNG_ROWS:])
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)  # raw deflate: appended after the fresh rows' block
    ihdr = _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
    return PngBase(ihdr, rest, deflate.compress(rest) + deflate.flush())


def encode_jpeg(pixels: np.ndarray, quality: int) -> bytes:
    """``pixels`` as a baseline 4:2:0 JPEG with a restart marker after every MCU row (module docstring)."""
    from PIL import Image  # here, not at import: only JPEG classes pay Pillow's import

    out = io.BytesIO()
    Image.fromarray(pixels, "RGB").save(out, "JPEG", quality=quality, subsampling="4:2:0", restart_marker_rows=1)
    return out.getvalue()


def _scan_data(jpeg: bytes) -> int:
    """Where a JPEG's entropy-coded data starts: just after its SOS segment."""
    at = 2
    while jpeg[at + 1] != _SOS:
        at += 2 + int.from_bytes(jpeg[at + 2 : at + 4], "big")
    return at + 2 + int.from_bytes(jpeg[at + 2 : at + 4], "big")


@dataclass(frozen=True, slots=True)
class JpegBase:
    """A base JPEG split around its first MCU row: the headers, and everything from the ``RST0`` marker on.

    ``pixels`` instead (``head`` and ``tail`` empty) where the Pillow at hand wrote no restart markers
    (one older than the ``restart_marker_rows`` option ignores it): each image is then encoded whole.
    """

    head: bytes
    tail: bytes
    quality: int
    pixels: np.ndarray | None = None

    def image(self, fresh: np.ndarray) -> bytes:
        """The JPEG whose top MCU row is ``fresh`` (:data:`JPEG_ROWS` x width x 3) and the rest the base's."""
        if self.pixels is not None:
            whole = self.pixels.copy()
            whole[: len(fresh)] = fresh
            return encode_jpeg(whole, self.quality)
        strip = encode_jpeg(fresh, self.quality)
        return self.head + strip[_scan_data(strip) : -2] + self.tail  # the strip's row, without its EOI


@functools.lru_cache(maxsize=64)
def jpeg_base(seed: int, class_name: str, width: int, height: int, quality: int) -> JpegBase:
    """The cached :class:`JpegBase` of a (seed, class, size, quality)."""
    pixels = base_pixels(seed, class_name, width, height)
    jpeg = encode_jpeg(pixels, quality)
    start = _scan_data(jpeg)
    if height > JPEG_ROWS and _DRI not in jpeg[:start]:
        return JpegBase(b"", b"", quality, pixels)
    rst = jpeg.find(_RST0, start)  # 0xFF in entropy-coded data is stuffed (FF 00): FF D0 is the marker
    return JpegBase(jpeg[:start], jpeg[rst:] if rst >= 0 else _EOI, quality)  # one MCU row only: no RST0
