"""Image classes: the ``images`` option, the generated PNGs and JPEGs (valid, unique, cheap) and the samples that carry them."""

from __future__ import annotations

import base64
import io
import struct
import time
import zlib

import orjson
import pytest
from PIL import Image

from llmload.adapters.anthropic_messages import AnthropicMessagesAdapter
from llmload.adapters.base import AdapterConfig
from llmload.adapters.openai_chat import OpenAIChatAdapter
from llmload.adapters.openai_responses import OpenAIResponsesAdapter
from llmload.errors import ProfileError
from llmload.workload.agent import ToolCall
from llmload.workload.images import ImageSource, ImageSpec, parse_images
from llmload.workload.profiles import load_profile, profile_from_dict
from llmload.workload.sampler import WorkloadSampler


def _pixels(png: bytes) -> tuple[int, int, bytes]:
    """Width, height and the decompressed scanlines of a PNG (checking every chunk's CRC)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, size = 8, b"", (0, 0)
    while at < len(png):
        (n,) = struct.unpack(">I", png[at : at + 4])
        kind, data = png[at + 4 : at + 8], png[at + 8 : at + 8 + n]
        assert struct.unpack(">I", png[at + 8 + n : at + 12 + n])[0] == zlib.crc32(kind + data)
        if kind == b"IHDR":
            size = struct.unpack(">II", data[:8])
        elif kind == b"IDAT":
            idat += data
        at += 12 + n
    return size[0], size[1], zlib.decompress(idat)  # zlib checks the Adler-32 too


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ([1], "expected a table"),
        ({"width": 64, "height": 64, "size": 3}, ".size: unknown key"),
        ({"count": 0, "width": 64, "height": 64}, ".count: must be an integer in 1..16"),
        ({"width": 8, "height": 64}, ".width: must be an integer in 16..4096"),
        ({"width": 64}, ".height: must be an integer"),
        ({"width": 64, "height": True}, ".height: must be an integer"),
        ({"width": 64, "height": 64, "format": "gif"}, ".format: expected one of png, jpeg"),
        ({"width": 64, "height": 64, "quality": 80}, ".quality: only a JPEG has a quality"),
        ({"width": 64, "height": 64, "format": "jpeg", "quality": 0}, ".quality: must be an integer in 1..100"),
        ({"width": 64, "height": 64, "format": "jpeg", "quality": 101}, ".quality: must be an integer in 1..100"),
        ({"width": 64, "height": 64, "every_turn": 1}, ".every_turn: expected true or false"),
        ({"width": 64, "height": 64, "every_turn": True}, ".every_turn: a single-request class has one turn"),
    ],
)
def test_bad_images_give_one_line(raw, fragment):
    with pytest.raises(ProfileError) as e:
        parse_images({"images": raw}, "c")
    assert fragment in str(e.value) and "\n" not in str(e.value)


def test_png_is_valid_and_unique_per_request():
    src = ImageSource(ImageSpec(1, 64, 48), seed=1, class_name="v", user_index=0)
    a, b = src.png(), src.png()
    wa, ha, rows_a = _pixels(a)
    assert (wa, ha) == (64, 48) and len(rows_a) == 48 * (1 + 64 * 3)
    rows_b = _pixels(b)[2]
    assert rows_a != rows_b  # fresh pixels per request
    line = 1 + 64 * 3
    assert rows_a[8 * line :] == rows_b[8 * line :]  # below them, the shared base image
    again = ImageSource(ImageSpec(1, 64, 48), seed=1, class_name="v", user_index=0)
    assert again.png() == a  # deterministic from seed, user and request counter
    assert ImageSource(ImageSpec(1, 64, 48), seed=1, class_name="v", user_index=1).png() != a


def test_png_512_is_cheap():
    src = ImageSource(ImageSpec(1, 512, 512), seed=3, class_name="big", user_index=0)
    src.next()
    t0 = time.process_time()
    for _ in range(20):
        src.next()
    assert (time.process_time() - t0) / 20 < 0.02  # measured ~1.2 ms a data URI; a full compress is ~14-18 ms


def test_profile_round_trip_and_sampler_and_chat_body():
    data = {"classes": [{"name": "v", "weight": 1, "input_tokens": 5, "output_tokens": 4,
                         "images": {"count": 2, "width": 32, "height": 32}}]}  # fmt: skip
    profile = profile_from_dict(data)
    assert profile.classes[0].images == ImageSpec(2, 32, 32)
    assert profile_from_dict(profile.to_dict()).classes[0].images == ImageSpec(2, 32, 32)
    sample = WorkloadSampler(profile, seed=7, user_index=0).next()
    assert sample.images is not None and len(sample.images) == 2 and sample.images[0] != sample.images[1]
    spec = OpenAIChatAdapter(AdapterConfig(model="m")).build_request(sample)
    content = orjson.loads(spec.body)["messages"][0]["content"]
    assert [p["type"] for p in content] == ["text", "image_url", "image_url"]
    url = content[1]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert _pixels(base64.b64decode(url.split(",", 1)[1]))[:2] == (32, 32)
    responses = orjson.loads(OpenAIResponsesAdapter(AdapterConfig(model="m")).build_request(sample).body)
    parts = responses["input"][0]["content"]
    assert [p["type"] for p in parts] == ["input_text", "input_image", "input_image"] and parts[1]["image_url"] == url
    blocks = orjson.loads(AnthropicMessagesAdapter(AdapterConfig(model="m")).build_request(sample).body)
    image = blocks["messages"][0]["content"][1]
    assert image == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": url[22:]}}


def test_an_image_class_beside_a_conversation_class_is_a_one_turn_session_with_images():
    data = {"classes": [{"name": "v", "weight": 1, "input_tokens": 5, "output_tokens": 4,
                         "images": {"width": 32, "height": 32}},
                        {"name": "chat", "weight": 1, "input_tokens": 5, "output_tokens": 4, "turns": 2}]}  # fmt: skip
    sampler = WorkloadSampler(profile_from_dict(data), seed=7, user_index=0)
    sessions = [sampler.start_session() for _ in range(2)]
    image = next(s for s in sessions if s.class_name == "v")
    assert not image.conversation and image.turns == 1
    sample = image.next_turn()
    assert sample.images is not None and len(sample.images) == 1 and image.done
    chat = next(s for s in sessions if s.class_name == "chat")
    assert chat.next_turn().images is None


def test_jpeg_images_are_valid_deterministic_and_unique_per_request_and_user():
    spec = ImageSpec(2, 100, 37, "jpeg", quality=70)
    src = ImageSource(spec, seed=1, class_name="v", user_index=0)
    first, second = src.next(), src.next()
    urls = first + second
    assert all(u.startswith("data:image/jpeg;base64,") for u in urls) and len(set(urls)) == 4
    data = [base64.b64decode(u.split(",", 1)[1]) for u in urls]
    for jpeg in data:
        assert jpeg[:2] == b"\xff\xd8" and jpeg[-2:] == b"\xff\xd9"
        with Image.open(io.BytesIO(jpeg)) as im:
            assert (im.format, im.size) == ("JPEG", (100, 37))
            im.load()  # the whole scan decodes
    again = ImageSource(spec, seed=1, class_name="v", user_index=0)
    assert again.next() + again.next() == urls  # from seed, user and image counter
    assert ImageSource(spec, seed=1, class_name="v", user_index=1).next()[0] not in urls
    assert ImageSource(spec, seed=2, class_name="v", user_index=0).next()[0] not in urls


def test_jpeg_and_every_turn_round_trip_through_the_profile():
    data = {"classes": [{"name": "chat", "weight": 1, "input_tokens": 5, "output_tokens": 4, "turns": 3,
                         "images": {"width": 32, "height": 32, "format": "jpeg", "quality": 60, "every_turn": True}}]}  # fmt: skip
    spec = profile_from_dict(data).classes[0].images
    assert spec == ImageSpec(1, 32, 32, "jpeg", None, 60, True)
    assert spec.to_dict() == {"count": 1, "width": 32, "height": 32, "format": "jpeg", "quality": 60, "every_turn": True}
    assert profile_from_dict(profile_from_dict(data).to_dict()).classes[0].images == spec
    assert ImageSpec(1, 32, 32).to_dict() == {"count": 1, "width": 32, "height": 32, "format": "png"}  # as before


def test_image_files_are_read_once_and_drawn_from_the_seed(tmp_path):
    folder = tmp_path / "photos"
    folder.mkdir()
    png = ImageSource(ImageSpec(1, 32, 32), seed=1, class_name="v", user_index=0).png()
    (folder / "a.png").write_bytes(png)
    (folder / "b.JPG").write_bytes(b"\xff\xd8not-really")
    (folder / "notes.txt").write_text("skipped")
    (tmp_path / "p.toml").write_text(
        '[[classes]]\nname = "v"\nweight = 1\ninput_tokens = 5\noutput_tokens = 4\n'
        'images = {count = 3, path = "photos"}\n'
    )
    profile = load_profile(tmp_path / "p.toml")
    spec = profile.classes[0].images
    assert spec is not None and spec.path == folder and spec.to_dict() == {"count": 3, "path": str(folder)}
    assert profile_from_dict(profile.to_dict()).classes[0].images == spec
    sampler = WorkloadSampler(profile, seed=7, user_index=0)
    urls = [u for _ in range(4) for u in sampler.next().images or ()]
    assert len(urls) == 12 and {u.split(";")[0] for u in urls} == {"data:image/png", "data:image/jpeg"}
    assert "data:image/png;base64," + base64.b64encode(png).decode() in urls
    sampler = WorkloadSampler(profile, seed=7, user_index=0)
    again = [u for _ in range(4) for u in sampler.next().images or ()]
    assert again == urls


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        ({"path": "photos", "width": 64}, ".width: image files have their own size and format"),
        ({"path": "empty"}, ".path: no .png, .jpg or .jpeg file at"),
        ({"path": 3}, ".path: expected a folder"),
    ],
)
def test_bad_image_files_give_one_line(tmp_path, raw, fragment):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ProfileError, match=fragment) as e:
        parse_images({"images": raw}, "c", tmp_path)
    assert "\n" not in str(e.value)


def _chat_with_images(**images):
    c = {"name": "chat", "weight": 1, "input_tokens": 5, "output_tokens": 4, "turns": 3,
         "images": {"count": 2, "width": 32, "height": 32, **images}}  # fmt: skip
    return WorkloadSampler(profile_from_dict({"classes": [c]}), seed=7, user_index=0).start_session()


def test_a_conversation_sends_its_images_with_the_first_message_and_resends_them_with_the_history():
    session = _chat_with_images()
    first = session.next_turn()
    assert first.messages is None and first.images is not None and len(first.images) == 2
    second = session.next_turn("reply one", 2)
    third = session.next_turn("reply two", 2)
    for sample in (second, third):  # every request carries the first message's images, and no new ones
        assert sample.images == first.images
        assert sample.messages[0]["content"][0] == {"type": "text", "text": first.prompt}
        assert [p["image_url"]["url"] for p in sample.messages[0]["content"][1:]] == list(first.images)
        assert all(type(m["content"]) is str for m in sample.messages[1:])
    assert first.prompt in third.prompt and "data:" not in third.prompt  # the one-text form: the text alone


def test_every_turn_attaches_new_images_to_every_user_message():
    session = _chat_with_images(every_turn=True, format="jpeg")
    first = session.next_turn()
    second = session.next_turn("reply one", 2)
    third = session.next_turn("reply two", 2)
    assert [len(s.images or ()) for s in (first, second, third)] == [2, 4, 6]  # images sent: the history's
    assert third.images[:4] == second.images and second.images[:2] == first.images and len(set(third.images)) == 6
    assert [p["image_url"]["url"] for p in third.messages[-1]["content"][1:]] == list(third.images[4:])
    assert third.images[4].startswith("data:image/jpeg;base64,")


def test_an_agent_keeps_its_images_through_tool_turns_and_a_tool_turn_adds_none():
    tools = [{"type": "function", "function": {"name": "look", "parameters": {"type": "object"}}}]
    c = {"name": "agent", "weight": 1, "input_tokens": 5, "output_tokens": 4, "turns": 3, "tools": tools,
         "images": {"width": 32, "height": 32, "every_turn": True}}  # fmt: skip
    session = WorkloadSampler(profile_from_dict({"classes": [c]}), seed=7, user_index=0).start_session()
    first = session.next_turn()
    second = session.next_turn("", 3, (ToolCall("call_1", "look", "{}"),))  # a tool turn: its result, no user message
    third = session.next_turn("done", 2)  # a text answer: a new user message, with a new image
    assert len(first.images) == 1 and second.images == first.images and second.messages[-1]["role"] == "tool"
    assert len(third.images) == 2 and third.images[0] == first.images[0] and third.tools == tuple(tools)
