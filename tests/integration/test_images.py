"""Image classes against the simulator: requests carry their images, the server checks and counts them, and TTFT
rises with image size as the simulator's patch formula says.

Real LLMUsers in this process (:func:`~tests.helpers.harness.run_inprocess`) against ``python -m llmload.sim``
with the engine model at 5 000 prompt tokens/s (1 ms a step), one user for 4 s, two classes: ``small`` (one
56x56 PNG: 4 patch tokens) and ``large`` (one 1024x1024 PNG: 37 x 37 = 1369 tokens), the same text. And
conversations with images (a JPEG with the first message; a PNG with every message) in each API's shape:
every turn re-sends its history's images, all charged, the earlier ones served from the prefix cache
(~6 s: three 1.5-s runs against one simulator).
"""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from llmload.metrics.definitions import ttft_s
from llmload.sim.image_parts import patch_tokens
from tests.helpers.harness import run_inprocess

pytestmark = pytest.mark.integration

TEXT, PREFILL_TPS = 20, 5_000
PROFILE = f"""
[[classes]]
name = "small"
weight = 1
input_tokens = {TEXT}
output_tokens = 4
images = {{count = 1, width = 56, height = 56}}

[[classes]]
name = "large"
weight = 1
input_tokens = {TEXT}
output_tokens = 4
images = {{count = 1, width = 1024, height = 1024}}
"""


def test_image_requests_carry_their_images_are_counted_and_cost_prefill(sim, tmp_path: Path):
    url = sim("--prefill-tps", str(PREFILL_TPS), "--step-base-ms", "1", "--host-overhead-ms", "0", "--per-seq-ms", "0")
    profile = tmp_path / "images.toml"
    profile.write_text(PROFILE)
    records = []
    summary = run_inprocess(url, ["--profile", str(profile), "--seed", "3"], users=1, seconds=4.0,
                            on_record=records.append)  # fmt: skip
    ok = {name: [r for r in records if r.outcome == "ok" and r.class_name == name] for name in ("small", "large")}
    assert all(len(v) >= 5 for v in ok.values()), {k: len(v) for k, v in ok.items()}
    assert not [r for r in records if r.outcome == "error"]
    for name, side in (("small", 56), ("large", 1024)):
        for r in ok[name]:
            assert r.images == 1 and r.request_bytes > side * side // 8  # the image travelled in the body
            # the server decoded the image and charged its patches: text words + ceil(W/28)*ceil(H/28)
            assert r.input_tokens_from_usage and r.input_tokens == r.asked_input_tokens + patch_tokens(side, side)
    figures = summary["classes"]["large"]["images"]  # the image_inputs part: images and bytes per second
    assert figures["images"] == len(ok["large"]) and figures["images_per_request"] == 1.0
    assert figures["request_bytes"] == sum(r.request_bytes for r in ok["large"])
    small = statistics.median(ttft_s(r) for r in ok["small"])
    large = statistics.median(ttft_s(r) for r in ok["large"])
    expected = (patch_tokens(1024, 1024) - patch_tokens(56, 56)) / PREFILL_TPS  # 273 ms more prefill
    # the server's own prefill time (its per-request timing: scheduled to first token) grows as the formula says
    prefill = {name: statistics.median(r.server_prefill_ms for r in ok[name]) / 1000 for name in ok}
    assert 0.8 * expected < prefill["large"] - prefill["small"] < 1.25 * expected, (prefill, expected)
    # and so does TTFT, which also holds the 2.4 MB body sent, parsed, decoded and inflated (~40 ms on a quiet
    # box; a loaded 2-core box took 145 ms once, so no upper bound here: the prefill above is the formula's)
    assert 0.8 * expected < large - small, (small, large, expected)


@pytest.mark.parametrize("api", ["openai-responses", "anthropic-messages"])
def test_responses_and_messages_send_the_images_in_their_own_shapes(sim, tmp_path: Path, api):
    url = sim("--ttft-ms", "5", "--itl-ms", "1")
    profile = tmp_path / "images.toml"
    profile.write_text(PROFILE)
    records = []
    run_inprocess(url, ["--profile", str(profile), "--seed", "3", "--api", api], users=1, seconds=1.5,
                  on_record=records.append)  # fmt: skip
    ok = [r for r in records if r.outcome == "ok"]
    assert len(ok) >= 4 and not [r.error_message for r in records if r.outcome == "error"]
    for r in ok:  # the server found, decoded and charged each image (Responses input_image, Messages image block)
        side = 56 if r.class_name == "small" else 1024
        assert r.images == 1 and r.input_tokens == r.asked_input_tokens + patch_tokens(side, side)


MULTI_TURN = """
[[classes]]
name = "photo_chat"
weight = 1
turns = 3
input_tokens = 20
output_tokens = 4
images = {count = 1, width = 1024, height = 1024, format = "jpeg"}

[[classes]]
name = "screens"
weight = 1
turns = 3
input_tokens = 20
output_tokens = 4
images = {count = 1, width = 56, height = 56, every_turn = true}
"""


def test_conversations_resend_their_images_and_the_prefix_cache_serves_them(sim, tmp_path: Path):
    """Each API: every turn carries its history's images (first turn only / every turn), the server decodes and
    charges them all, and from turn 2 on its prefix cache serves the earlier turns' images."""
    url = sim("--prefill-tps", str(PREFILL_TPS), "--step-base-ms", "1", "--host-overhead-ms", "0", "--per-seq-ms", "0")
    profile = tmp_path / "multi.toml"
    profile.write_text(MULTI_TURN)
    big = patch_tokens(1024, 1024)
    for api in ("openai-chat", "openai-responses", "anthropic-messages"):
        records = []
        run_inprocess(url, ["--profile", str(profile), "--seed", "5", "--api", api], users=2, seconds=1.5,
                      on_record=records.append)  # fmt: skip
        assert not [r.error_message for r in records if r.outcome == "error"], api
        ok = [r for r in records if r.outcome == "ok"]
        assert {(r.class_name, r.turn) for r in ok} >= {(c, t) for c in ("photo_chat", "screens") for t in (1, 2, 3)}
        for r in ok:
            sent = 1 if r.class_name == "photo_chat" else r.turn  # images sent: the history's
            assert r.images == sent, (api, r.class_name, r.turn, r.images)
            per_image = big if r.class_name == "photo_chat" else patch_tokens(56, 56)
            assert r.input_tokens_from_usage and r.input_tokens == r.asked_input_tokens + sent * per_image, api
            if r.turn > 1 and r.class_name == "photo_chat":  # the first message's image is a cached prefix now
                assert r.cached_prompt_tokens is not None and r.cached_prompt_tokens >= big, (api, r.cached_prompt_tokens)
