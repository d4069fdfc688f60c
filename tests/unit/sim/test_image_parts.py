"""The simulator's image parts: decoded and checked server-side, charged as ceil(W/28)*ceil(H/28) patch tokens."""

from __future__ import annotations

import base64
import io
import struct

import numpy as np
import orjson
import pytest
from PIL import Image

from llmload.sim.api import ApiError, parse_request
from llmload.sim.image_parts import ImageError, image_tokens, patch_tokens
from llmload.workload.images import ImageSource, ImageSpec


def _png(width: int, height: int, user: int = 0) -> bytes:
    return ImageSource(ImageSpec(1, width, height), seed=1, class_name="v", user_index=user).png()


def _jpeg(width: int, height: int, user: int = 0) -> bytes:
    return ImageSource(ImageSpec(1, width, height, "jpeg"), seed=1, class_name="v", user_index=user).image()


def _chat(*parts: dict) -> bytes:
    content = [{"type": "text", "text": "describe these"}, *parts]
    return orjson.dumps({"messages": [{"role": "user", "content": content}], "max_tokens": 4})


def _url(data: bytes, media: str = "image/png") -> dict:
    return {"type": "image_url", "image_url": {"url": f"data:{media};base64," + base64.b64encode(data).decode()}}


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
    jpeg = _jpeg(100, 60)
    assert image_tokens({"type": "image_url", "image_url": "data:image/jpeg;base64," + base64.b64encode(jpeg).decode()}, out)
    assert len(out) == 8 + patch_tokens(100, 60)
    assert not image_tokens({"type": "tool_result"}, out)


def _scan_cut(jpeg: bytes) -> bytes:
    """The JPEG with its coded data cut in the middle but its EOI marker kept."""
    return jpeg[: len(jpeg) // 2] + b"\xff\xd9"


@pytest.mark.parametrize(
    ("broken", "fragment"),
    [
        (lambda j: j[:-2], "cut short"),  # no EOI
        (_scan_cut, "cut short .* restart markers"),
        (lambda j: j.replace(b"\xff\xdb", b"\xff\xfe", 1), "does not decode"),  # its quantization table a comment
        (lambda j: j[:2] + b"\xff\xd9", "no readable frame header"),
        (lambda j: j.replace(struct.pack(">HH", 48, 64), struct.pack(">HH", 0, 64), 1), "zero size"),
    ],
)
def test_a_broken_jpeg_is_refused_with_400_and_the_reason(broken, fragment):
    jpeg = _jpeg(64, 48)
    assert parse_request("chat", _chat(_url(jpeg, "image/jpeg")), "m", 16).prompt_tokens == 2 + patch_tokens(64, 48)
    with pytest.raises(ApiError, match=fragment) as e:
        parse_request("chat", _chat(_url(broken(jpeg), "image/jpeg")), "m", 16)
    assert e.value.status == 400 and "invalid image: " in str(e.value)


def test_the_same_image_resent_in_a_history_has_the_same_tokens_for_the_prefix_cache():
    image = _url(_jpeg(56, 56))
    turn1 = parse_request("chat", _chat(image), "m", 16)
    history = [{"role": "user", "content": [{"type": "text", "text": "describe these"}, image]},
               {"role": "assistant", "content": "a cat"}, {"role": "user", "content": "and the colour?"}]  # fmt: skip
    turn2 = parse_request("chat", orjson.dumps({"messages": history, "max_tokens": 4}), "m", 16)
    assert turn2.tokens[: turn1.prompt_tokens] == turn1.tokens  # the image's tokens included: a prefix-cache hit
    assert turn2.prompt_tokens == turn1.prompt_tokens + 2 + 3  # every image in the request is charged


@pytest.mark.parametrize(
    "options",
    [
        {"mode": "L", "restart_marker_rows": 1},
        {"subsampling": "4:4:4", "restart_marker_blocks": 5},
        {"subsampling": "4:2:2", "restart_marker_rows": 2},
        {"progressive": True},
        {},
    ],
)
def test_other_encoders_jpegs_pass(options):
    """JPEGs as other encoders write them: grey, other subsamplings and restart intervals, progressive, no restarts."""
    mode = options.pop("mode", "RGB")
    pixels = np.random.default_rng(5).integers(0, 256, size=(45, 70, 3), dtype=np.uint8)
    out = io.BytesIO()
    Image.fromarray(pixels).convert(mode).save(out, "JPEG", quality=80, **options)
    tokens: list = []
    image_tokens(_url(out.getvalue(), "image/jpeg"), tokens)
    assert len(tokens) == patch_tokens(70, 45)
