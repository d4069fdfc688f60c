"""Image inputs in the simulator: each image is checked and charged to prefill as patch tokens.

A chat content part ``{"type": "image_url", "image_url": {"url": "data:image/png;base64,..."}}``
(Responses: ``{"type": "input_image", "image_url": "data:..."}``; Messages: ``{"type":
"image", "source": {"type": "base64", "media_type": "image/png", "data": "..."}}``) is
decoded server-side: the base64 must decode, a PNG's chunks must pass their CRCs and its
pixel data must inflate to exactly ``height`` scanlines of ``width`` pixels (8-bit colour
types); a JPEG must start with SOI, end with EOI, have a frame header (SOFn) with its size,
(a sequential one with restart markers, as llmload writes them) hold every restart marker in
turn, and decode with Pillow (libjpeg-turbo) as vLLM and SGLang decode it (at 1/8 scale: every
coefficient is still read, so a cut-short or unreadable scan fails, at a third of the full
decode's cost; what libjpeg only warns about, such as a flipped bit in the coded data, passes
there as here). A broken image is refused with 400 and the reason (:class:`ImageError`,
turned into the API's error by the caller); ``http(s)`` URLs are refused too (the simulator
fetches nothing).

Cost: :func:`patch_tokens`, Qwen2-VL's count: 28x28-pixel patches (14-pixel ViT patches
merged 2x2), ``ceil(W / 28) * ceil(H / 28)`` tokens per image (a 512x512 image: 19 x 19 =
361 tokens; 1024x1024: 37 x 37 = 1369). They count in ``usage.prompt_tokens`` and are
prefilled like text, each image's tokens distinct (named by a checksum of its bytes) so the
prefix cache never matches one image against another. The same image re-sent at the same place
(a conversation's history re-sends its earlier turns' images) has the same tokens, so the prefix
cache serves it as it serves the history's text, as vLLM's block hashes (which include each
image's hash) do.
"""

from __future__ import annotations

import base64
import binascii
import io
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
    """A JPEG's size from its frame header (SOF0..SOF15 but DHT, JPG, DAC), after the checks of the module docstring."""
    at, size, mcus, interval = 2, (0, 0), 0, 0
    while at + 4 <= len(data) and data[at] == 0xFF:
        marker = data[at + 1]
        (n,) = struct.unpack(">H", data[at + 2 : at + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC) and at + 10 <= len(data):
            height, width = size = struct.unpack(">HH", data[at + 5 : at + 9])
            if not (width and height):
                raise ImageError("the JPEG's frame header gives a zero size")
            mcus = _mcus(data[at + 4 : at + 2 + n], width, height) if marker in (0xC0, 0xC1) else 0
        elif marker == 0xDD and n == 4:  # DRI: a restart marker every `interval` MCUs
            (interval,) = struct.unpack(">H", data[at + 4 : at + 6])
        at += 2 + n
        if marker == 0xDA:  # SOS: the coded data follows
            break
    if not size[0]:
        raise ImageError("the JPEG has no readable frame header")
    if not data.endswith(b"\xff\xd9"):
        raise ImageError("the JPEG is cut short (no EOI marker at its end)")
    if interval and mcus:
        _check_restarts(data, at, -(-mcus // interval) - 1)
    _decode_jpeg(data)
    return size


def _mcus(frame: bytes, width: int, height: int) -> int:
    """MCUs in a sequential frame's one scan (interleaved: the largest sampling factors; one component: 8x8 blocks)."""
    components = frame[5]
    factors = [(b >> 4, b & 15) for b in frame[7 : 6 + 3 * components : 3]]
    h, v = (max(f[0] for f in factors), max(f[1] for f in factors)) if components > 1 else (1, 1)
    return -(-width // (8 * h)) * -(-height // (8 * v)) if h and v else 0


def _check_restarts(data: bytes, at: int, expected: int) -> None:
    """A sequential JPEG with restart markers: its scan must hold RST0..RST7 in turn, ``expected`` of them."""
    seen, end = 0, len(data) - 2
    while (at := data.find(b"\xff", at, end)) >= 0:
        following = data[at + 1]
        if following == 0xD0 + seen % 8:
            seen += 1
        elif following not in (0x00, 0xFF):
            raise ImageError(f"the JPEG's scan has marker {following:02X} where RST{seen % 8} or the end belongs")
        at += 1 if following == 0xFF else 2
    if seen != expected:
        raise ImageError(f"the JPEG's scan is cut short ({seen} of its {expected} restart markers)")


def _decode_jpeg(data: bytes) -> None:
    """Decode a JPEG with Pillow at 1/8 scale (every coefficient read); :class:`ImageError` when it fails."""
    from PIL import Image  # here, not at import: a server that gets no JPEG never loads Pillow

    try:
        with Image.open(io.BytesIO(data)) as im:
            im.draft("RGB", (max(1, im.width // 8), max(1, im.height // 8)))
            im.load()
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as e:
        raise ImageError(f"the JPEG does not decode ({e})") from None
