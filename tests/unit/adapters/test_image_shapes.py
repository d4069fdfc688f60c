"""A conversation's image parts in each API's shape: the whole request body of a later turn, chat, Responses and
Messages, for a plain conversation and for an agent (whose tool turns keep their own shapes beside the images)."""

from __future__ import annotations

import orjson

from llmload.adapters.anthropic_messages import AnthropicMessagesAdapter
from llmload.adapters.base import AdapterConfig
from llmload.adapters.image_shapes import anthropic_image, anthropic_image_turns, responses_image_items
from llmload.adapters.openai_chat import OpenAIChatAdapter
from llmload.adapters.openai_responses import OpenAIResponsesAdapter
from llmload.workload import WorkloadSampler, profile_from_dict
from llmload.workload.agent import ToolCall

TOOLS = [{"type": "function", "function": {"name": "look", "parameters": {"type": "object"}}}]


def _second_turn(tools: bool = False):
    c = {"name": "chat", "weight": 1, "input_tokens": 5, "output_tokens": 4, "turns": 3,
         "images": {"count": 2, "width": 32, "height": 32}}  # fmt: skip
    if tools:
        c["tools"] = TOOLS
    session = WorkloadSampler(profile_from_dict({"classes": [c]}), seed=3, user_index=0).start_session()
    first = session.next_turn()
    calls = (ToolCall("call_1", "look", "{}"),) if tools else None
    second = session.next_turn("the answer", 2, calls) if tools else session.next_turn("the answer", 2)
    return first, second


def _body(adapter, sample) -> dict:
    return orjson.loads(adapter(AdapterConfig(model="m")).build_request(sample).body)


def test_a_later_turn_sends_the_first_messages_images_in_each_apis_shape():
    first, second = _second_turn()
    urls = list(first.images)
    chat = _body(OpenAIChatAdapter, second)["messages"]
    assert [p["type"] for p in chat[0]["content"]] == ["text", "image_url", "image_url"]
    assert [p["image_url"]["url"] for p in chat[0]["content"][1:]] == urls
    assert chat[1] == {"role": "assistant", "content": "the answer"} and type(chat[2]["content"]) is str
    items = _body(OpenAIResponsesAdapter, second)["input"]
    assert items[0] == {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": first.prompt}, *({"type": "input_image", "image_url": u} for u in urls)]}  # fmt: skip
    assert items[1] == {"type": "message", "role": "assistant", "content": "the answer"}
    turns = _body(AnthropicMessagesAdapter, second)["messages"]
    assert turns[0] == {"role": "user", "content": [{"type": "text", "text": first.prompt},
                                                    *(anthropic_image(u) for u in urls)]}  # fmt: skip
    assert anthropic_image(urls[0]) == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                    "data": urls[0].split(",", 1)[1]}}  # fmt: skip
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]


def test_an_agents_tool_turn_keeps_its_shapes_beside_the_images():
    first, second = _second_turn(tools=True)
    items = _body(OpenAIResponsesAdapter, second)["input"]
    assert [i["type"] for i in items] == ["message", "message", "function_call", "function_call_output"]
    assert [p["type"] for p in items[0]["content"]] == ["input_text", "input_image", "input_image"]
    turns = _body(AnthropicMessagesAdapter, second)["messages"]
    assert [b["type"] for b in turns[0]["content"]] == ["text", "image", "image"]
    assert [b["type"] for b in turns[1]["content"]] == ["text", "tool_use"] and turns[2]["content"][0]["type"] == "tool_result"


def test_messages_without_content_parts_pass_unchanged():
    items = [{"type": "function_call_output", "call_id": "c", "output": "x"}, {"type": "message", "content": "t"}]
    assert responses_image_items(items) == items
    turns = [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "x"}]}]
    assert anthropic_image_turns(turns) == turns
