"""Image inputs in the simulator: each image is checked and charged to prefill as patch tokens.

A chat content part ``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}``
(Responses: ``{"type": "input_image", "image_url": "data:..."}``; Messages: ``{"type":
"image", "source": {"type": "base64", "media_type": "image/png", "data": "..."}}``) is
decoded server-side: the base64 must decode, a PNG's chunks must pass their CRCs and its
pixel data must inflate to exactly ``height`` scanlines of ``width`` pixels (8-bit colour
types); a JPEG is read up to its frame header for the size. A broken image is refused with
400 and the reason (:class:`ImageError`, turned into the API's error by the caller);
``http(s)`` URLs are refused too (the simulator fetches nothing).

Cost: :func:`patch_tokens`, Qwen2-VL's count: 28x28-pixel patches (14-pixel ViT patches
merged 2x2), ``ceil(W / 28) * ceil(H / 28)`` tokens per image (a 512x512 image: 19 x 19 =
361 tokens; 1024x1024: 37 x 37 = 1369). They count in ``usage.prompt_tokens`` and are
prefilled like text, each image's tokens distinct (named by a checksum of its bytes) so the
prefix cache never matches one image against another.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
import zlib
from typing import Any

__all__ = ["PATCH", "ImageError", "image_tokens", "patch_tokens"]

#: Pixels per side of one image token (Qwen2-VL: 14-pixel patches merged 2x2).
PATCH = 28
_PNG = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # PNG colour type -> samples per pixel (8-bit)


class ImageError(ValueError):
    """A request's image is broken or unsupported (the reason is the message)."""


def patch_tokens(width: int, height: int) -> int:
    """Tokens one ``width`` x ``height`` image costs: ``ceil(W/28) * ceil(H/28)``."""
    return math.ceil(width / PATCH) * math.ceil(height / PATCH)


def image_tokens(part: dict[str, Any], out: list[Any]) -> bool:
    """Append an image part's tokens to ``out``; False when ``part`` is no image. :class:`ImageError` on a bad one."""
    kind = part.get("type")
    if kind == "image_url":
        ref = part.get("image_url")
        url = ref.get("url") if isinstance(ref, dict) else ref
    elif kind == "input_image":
        url = part.get("image_url")
    elif kind == "image":
        source = part.get("source")
        if not isinstance(source, dict) or source.get("type") != "base64":
            raise ImageError("an image block needs source = {type: base64, media_type, data}")
        url = f"data:{source.get('media_type')};base64,{source.get('data')}"
    else:
        return False
    data = _decode(url)
    width, height = _size(data)
    name = f"\x1eimg{zlib.crc32(data):08x}"
    out += [f"{name}:{i}" for i in range(patch_tokens(width, height))]
    return True


def _decode(url: Any) -> bytes:
    if not isinstance(url, str):
        raise ImageError("an image part needs its url (a data: URI)")
    if not url.startswith("data:"):
        raise ImageError("the simulator fetches no image URLs; send the image as a data: URI")
    head, sep, payload = url.partition(",")
    if not sep or not head.endswith(";base64"):
        raise ImageError("an image data: URI must be base64 (data:image/png;base64,...)")
    try:
        return base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError):
        raise ImageError("the image's base64 does not decode") from None


def _size(data: bytes) -> tuple[int, int]:
    if data.startswith(_PNG):
        return _png(data)
    if data.startswith(b"\xff\xd8"):
        return _jpeg(data)
    raise ImageError("the image is neither PNG nor JPEG")


def _png(data: bytes) -> tuple[int, int]:
    """A PNG's size, after checking its chunks' CRCs and that its pixel data inflates to the right length."""
    at, idat, header = 8, [], b""
    while at + 12 <= len(data):
        (n,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + n]
        if len(body) != n or at + 12 + n > len(data):
            raise ImageError("the PNG is cut short")
        if struct.unpack(">I", data[at + 8 + n : at + 12 + n])[0] != zlib.crc32(body, zlib.crc32(kind)):
            raise ImageError(f"the PNG's {kind.decode('latin-1')} chunk fails its CRC")
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        at += 12 + n
    else:
        raise ImageError("the PNG has no IEND chunk")
    if len(header) != 13 or not idat:
        raise ImageError("the PNG has no IHDR or no IDAT chunk")
    width, height, depth, colour = struct.unpack(">IIBB", header[:10])
    if width < 1 or height < 1:
        raise ImageError("the PNG's size is zero")
    try:
        pixels = zlib.decompress(b"".join(idat))
    except zlib.error:
        raise ImageError("the PNG's pixel data does not inflate") from None
    if depth == 8 and colour in _CHANNELS and len(pixels) != height * (1 + width * _CHANNELS[colour]):
        raise ImageError(f"the PNG's pixel data holds {len(pixels)} bytes, not {width}x{height} pixels")
    return width, height


def _jpeg(data: bytes) -> tuple[int, int]:
    """A JPEG's size from its first frame header (SOF0..SOF15 but DHT, JPG, DAC)."""
    at = 2
    while at + 9 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        (n,) = struct.unpack(">H", data[at + 2 : at + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            if width and height:
                return width, height
            break
        at += 2 + n
    raise ImageError("the JPEG has no readable frame header")
