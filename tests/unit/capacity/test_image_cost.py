"""predict's images: a class's images charged as the simulator charges them (its own cost code), in the history too."""

from __future__ import annotations

import random

import orjson
import pytest
from PIL import Image

from llmload.capacity.drive import StepSpec, Workload, drive
from llmload.capacity.image_cost import ImageCost, image_cost
from llmload.capacity.session_replay import Requests, longest
from llmload.capacity.workload_args import class_spec
from llmload.errors import ConfigError
from llmload.sim.api import parse_request
from llmload.sim.image_parts import patch_tokens
from llmload.sim.params import EngineParams
from llmload.sim.virtual import Arrival, replay
from llmload.workload.conversation import user_message
from llmload.workload.images import ImageSpec
from llmload.workload.profiles import profile_from_dict
from llmload.workload.sampler import WorkloadSampler

PARAMS = EngineParams(prefill_tps=4000.0, max_num_seqs=8)


def _profile(side: int, **extra):
    c = {"name": f"v{side}", "weight": 1, "input_tokens": 50, "output_tokens": 20,
         "images": {"count": 2, "width": side, "height": side, **extra.pop("images", {})}, **extra}  # fmt: skip
    return profile_from_dict({"name": "img", "classes": [c]})


def _sim_tokens(messages, max_tokens: int):
    """The simulator's own count of a chat request: its parser (text words, each image part's patch tokens)."""
    return parse_request("chat", orjson.dumps({"messages": messages, "max_tokens": max_tokens}), "m", 16)


@pytest.mark.parametrize("side", [56, 1024])
def test_a_request_s_images_cost_what_the_simulator_charges_and_its_ttft_follows(side):
    profile = _profile(side)
    sample = WorkloadSampler(profile, 0, 0).next()
    live = _sim_tokens([user_message(sample.prompt, sample.images)], sample.max_tokens)
    spec = class_spec(profile.classes[0], "img")
    assert spec.images == ImageCost(2, (patch_tokens(side, side),))
    turn = Requests([spec], random.Random(0)).session().next_turn()
    assert turn.prompt == live.prompt_tokens == 50 + 2 * patch_tokens(side, side)  # 56x56: 2 * 4; 1024: 2 * 1369
    # predicted TTFT (one request on an idle engine) = the engine model's for the simulator's count
    w = Workload((spec,), (StepSpec(1, 0.001, 0.0, 1.0),), "constant", max_in_flight=1)
    ours = drive(PARAMS, w, drain_s=60.0)[0]
    (theirs,), _ = replay(PARAMS, [Arrival(0.0, live.prompt_tokens, live.max_tokens)])
    assert ours.times[0] - ours.t == pytest.approx(theirs.ttft, rel=1e-9)


def test_1024_px_images_cost_their_patch_tokens_of_prefill_over_56_px_ones():
    params = EngineParams(prefill_tps=4000.0, max_batched_tokens=8192)  # one prefill step each: the formula alone
    ttft = {}
    for side in (56, 1024):
        spec = class_spec(_profile(side).classes[0], "img")
        w = Workload((spec,), (StepSpec(1, 0.001, 0.0, 1.0),), "constant", max_in_flight=1)
        s = drive(params, w, drain_s=60.0)[0]
        ttft[side] = s.times[0] - s.t
    extra = 2 * (patch_tokens(1024, 1024) - patch_tokens(56, 56))  # 2 x (1369 - 4) tokens
    assert ttft[1024] - ttft[56] == pytest.approx(extra / params.prefill_tps * params.time_scale, rel=1e-6)


@pytest.mark.parametrize("every_turn", [False, True])
def test_a_conversation_re_sends_its_history_s_images_as_the_live_session_does(every_turn):
    profile = _profile(512, turns=3, images={"every_turn": every_turn})
    spec = class_spec(profile.classes[0], "img")
    ours = Requests([spec], random.Random(0)).session()
    live = WorkloadSampler(profile, 0, 0).start_session()
    reply = "w " * 20
    for k in range(3):
        sample = live.next_turn() if k == 0 else live.next_turn(reply, 20)
        messages = list(sample.messages) if sample.messages else [user_message(sample.prompt, sample.images)]
        t = ours.next_turn()
        ours.reply = 20
        assert t.prompt == _sim_tokens(messages, 20).prompt_tokens, k  # every image of the history, charged again
    assert longest(spec, "input") >= t.prompt


def test_the_history_s_images_are_a_prefix_cache_hit():
    spec = class_spec(_profile(512, turns=2, think_time_s=1.0).classes[0], "img")
    sent = drive(EngineParams(), Workload((spec,), (StepSpec(1, 5.0, 0.0),)), drain_s=30.0)
    first, second = sent[0], sent[1]
    assert second.turn == 2 and second.seq.cached_tokens >= first.prompt - 16  # the first turn's blocks, images and all


def test_image_files_cost_their_own_sizes_and_a_broken_one_is_one_error_line(tmp_path):
    Image.new("RGB", (100, 60)).save(tmp_path / "a.png")
    Image.new("RGB", (600, 400)).save(tmp_path / "b.jpg")
    cost = image_cost(ImageSpec(3, 0, 0, "files", tmp_path), "class 'v'")
    assert sorted(cost.tokens) == [patch_tokens(100, 60), patch_tokens(600, 400)] and cost.most == 3 * 330
    drawn = {cost.draw(random.Random(s)) for s in range(20)}
    assert min(drawn) >= 3 * 12 and max(drawn) <= 3 * 330 and len(drawn) > 1
    (tmp_path / "c.png").write_bytes(b"not a png")
    with pytest.raises(ConfigError, match="c.png"):
        image_cost(ImageSpec(1, 0, 0, "files", tmp_path), "class 'v'")
