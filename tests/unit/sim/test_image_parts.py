"""The simulator's image parts: decoded and checked server-side, charged as ceil(W/28)*ceil(H/28) patch tokens."""

from __future__ import annotations

import base64
import struct

import orjson
import pytest

from llmload.sim.api import ApiError, parse_request
from llmload.sim.image_parts import ImageError, image_tokens, patch_tokens
from llmload.workload.images import ImageSource, ImageSpec


def _png(width: int, height: int, user: int = 0) -> bytes:
    return ImageSource(ImageSpec(1, width, height), seed=1, class_name="v", user_index=user).png()


def _chat(*parts: dict) -> bytes:
    content = [{"type": "text", "text": "describe these"}, *parts]
    return orjson.dumps({"messages": [{"role": "user", "content": content}], "max_tokens": 4})


def _url(data: bytes) -> dict:
    return {"type": "image_url", "image_url": {"url": "data:image/png;base64," + base64.b64encode(data).decode()}}


def test_patch_formula():
    assert patch_tokens(28, 28) == 1 and patch_tokens(29, 28) == 2
    assert patch_tokens(512, 512) == 19 * 19 and patch_tokens(1024, 512) == 37 * 19


def test_chat_image_parts_count_in_prompt_tokens_and_are_distinct():
    a, b = _png(64, 32), _png(64, 32, user=1)
    gen = parse_request("chat", _chat(_url(a), _url(b)), "m", 16)
    assert gen.prompt_tokens == 2 + 2 * patch_tokens(64, 32)
    assert len(set(gen.tokens)) == gen.prompt_tokens  # one image never matches another in the prefix cache


@pytest.mark.parametrize(
    ("part", "fragment"),
    [
        ({"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}, "fetches no image URLs"),
        ({"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}, "does not decode"),
        ({"type": "image_url", "image_url": {"url": "data:image/png,abc"}}, "must be base64"),
        (_url(b"GIF89a" + bytes(40)), "neither PNG nor JPEG"),
        (_url(_png(32, 32)[:60]), "cut short"),
    ],
)
def test_broken_images_are_refused_with_the_reason(part, fragment):
    with pytest.raises(ApiError, match=fragment) as e:
        parse_request("chat", _chat(part), "m", 16)
    assert e.value.status == 400


def test_a_flipped_pixel_byte_fails_the_crc():
    data = bytearray(_png(32, 32))
    data[60] ^= 0xFF  # inside IDAT
    with pytest.raises(ImageError, match="CRC"):
        image_tokens(_url(bytes(data)), [])


def test_responses_and_messages_shapes_and_a_jpeg_header():
    data = base64.b64encode(_png(56, 56)).decode()
    out: list = []
    assert image_tokens({"type": "input_image", "image_url": "data:image/png;base64," + data}, out)
    assert image_tokens({"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}}, out)
    assert len(out) == 2 * 4
    jpeg = (
        b"\xff\xd8" + b"\xff\xe0" + struct.pack(">H", 4) + b"\0\0" + b"\xff\xc0" + struct.pack(">HBHH", 11, 8, 100, 60)
    )
    assert image_tokens(
        {"type": "image_url", "image_url": "data:image/jpeg;base64," + base64.b64encode(jpeg).decode()}, out
    )
    assert len(out) == 8 + patch_tokens(60, 100)
    assert not image_tokens({"type": "tool_result"}, out)
