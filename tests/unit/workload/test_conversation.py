"""Conversations as pure objects: turn k re-sends the history with the replies received."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from llmload.workload import WorkloadSampler, profile_from_dict
from llmload.workload.conversation import TURN_SEPARATOR, ClassPlan, Session, history_images, one_text, user_message
from llmload.workload.datasets import estimate_tokens
from llmload.workload.distributions import Duration, Fixed, Uniform
from llmload.workload.prefixes import PrefixGroups, PrefixSpec
from llmload.workload.prompts import TAG_TOKENS

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "datasets"


def chat_profile(**extra):
    c = {"name": "chat", "weight": 1, "input_tokens": 50, "output_tokens": 20, "turns": 4, **extra}
    return profile_from_dict({"classes": [c]})


def replay(session: Session, replies: list[str], reply_tokens: list[int | None] | None = None):
    """Drive a session to its end with the given replies; the samples and the think times."""
    samples, thinks, reply, n = [], [], None, None
    while not session.done:
        samples.append(session.next_turn(reply, n))
        thinks.append(session.think_time_s)
        i = len(samples) - 1
        reply = replies[i % len(replies)]
        n = None if reply_tokens is None else reply_tokens[i % len(reply_tokens)]
    return samples, thinks


def test_four_turns_resend_the_history_with_the_replies_received():
    session = WorkloadSampler(chat_profile(), seed=1, user_index=0).start_session()
    assert (session.class_name, session.turns, session.turn, session.done) == ("chat", 4, 0, False)
    replies = [" alpha beta", " gamma", " delta epsilon zeta"]
    samples, _ = replay(session, replies, [2, 1, 3])
    assert [s.turn for s in samples] == [1, 2, 3, 4] and session.done
    first, second, third, fourth = samples
    assert first.messages is None and len(first.prompt.split()) == 50 and first.input_tokens == 50
    assert [m["role"] for m in fourth.messages] == ["user", "assistant"] * 3 + ["user"]
    assert [m["content"] for m in fourth.messages[1::2]] == replies  # the replies as received, in order
    assert fourth.messages[0]["content"] == first.prompt
    assert second.messages[:1] == ({"role": "user", "content": first.prompt},)
    # each turn's input grows by the previous reply and the new user message (50 tokens)
    assert [s.input_tokens for s in samples] == [50, 50 + 2 + 50, 102 + 1 + 50, 153 + 3 + 50]
    # completions form: the previous prompt, its reply as received, the separator, the new message
    assert second.prompt == first.prompt + replies[0] + TURN_SEPARATOR + second.messages[-1]["content"]
    assert fourth.prompt.startswith(third.prompt + replies[2] + TURN_SEPARATOR)
    new_messages = [s.messages[-1]["content"] for s in samples[1:]]
    assert len({tuple(m.split()[:TAG_TOKENS]) for m in new_messages + [first.prompt]}) == 4  # each turn new
    assert all(s.max_tokens == 20 for s in samples)
    with pytest.raises(RuntimeError, match="over after 4 turns"):
        session.next_turn("x")


def test_reply_tokens_default_to_an_estimate_of_the_text_and_a_reply_is_required():
    session = WorkloadSampler(chat_profile(), seed=1, user_index=0).start_session()
    first = session.next_turn()
    with pytest.raises(ValueError, match="turn 2 of class 'chat' needs the reply text of turn 1"):
        session.next_turn()
    second = session.next_turn("x" * 40)
    assert second.input_tokens == first.input_tokens + estimate_tokens("x" * 40) + 50
    third = session.next_turn("")  # an empty reply adds nothing
    assert third.input_tokens == second.input_tokens + 50


def test_the_request_stream_does_not_depend_on_the_replies():
    def lengths(replies):
        s = WorkloadSampler(chat_profile(turns={"dist": "uniform", "min": 2, "max": 5}), 3, 7)
        out = []
        for _ in range(20):
            samples, _ = replay(s.start_session(), replies)
            out.append([(x.turn, x.max_tokens, x.messages[-1]["content"] if x.messages else x.prompt) for x in samples])
        return out

    a, b = lengths([" short"]), lengths([" a much longer reply than the other one"])
    assert a == b
    assert {len(conv) for conv in a} == {2, 3, 4, 5}  # the turn count is drawn per conversation


def test_think_time_is_drawn_after_every_turn_but_the_last():
    profile = chat_profile(think_time_s={"dist": "uniform", "min": 1, "max": 3})
    sampler = WorkloadSampler(profile, seed=2, user_index=0)
    for _ in range(10):
        _, thinks = replay(sampler.start_session(), [" ok"])
        assert len(thinks) == 4 and thinks[-1] == 0.0
        assert all(1 <= t <= 3 for t in thinks[:-1])
    _, fixed = replay(WorkloadSampler(chat_profile(think_time_s=2.5), 2, 0).start_session(), ["r"])
    assert fixed == [2.5, 2.5, 2.5, 0.0]
    _, none = replay(WorkloadSampler(chat_profile(), 2, 0).start_session(), ["r"])
    assert none == [0.0] * 4


def test_the_prefix_group_opens_the_first_message_only_and_is_drawn_once_per_conversation():
    profile = chat_profile(prefix={"groups": 3, "tokens": 64, "popularity": "zipf:1.1"})
    sampler = WorkloadSampler(profile, seed=4, user_index=0)
    groups = PrefixGroups(PrefixSpec(3, 64, 1.1), 4, "chat")
    texts = {tuple(groups.get(g).text.split()) for g in range(3)}
    seen = set()
    for _ in range(30):
        samples, _ = replay(sampler.start_session(), [" fine"])
        head = tuple(samples[0].prompt.split()[:64])
        assert head in texts
        seen.add(head)
        assert samples[0].input_tokens == 64 + 50
        assert all(s.messages[0]["content"] == samples[0].prompt for s in samples[1:])
        assert all(len(s.messages[-1]["content"].split()) == 50 for s in samples[1:])  # later messages: no prefix
    assert len(seen) == 3


def test_a_single_request_class_is_a_one_turn_session_drawing_what_next_draws():
    profile = profile_from_dict(
        {
            "classes": [
                {"name": "q", "weight": 1, "input_tokens": {"dist": "uniform", "min": 5, "max": 90}, "output_tokens": 7}
            ]
        }
    )
    a = WorkloadSampler(profile, 5, 2)
    b = WorkloadSampler(profile, 5, 2)
    for _ in range(50):
        session = b.start_session()
        assert session.turns == 1
        sample = session.next_turn()
        assert session.done and session.think_time_s == 0.0
        assert sample == a.next()


def test_sharegpt_conversations_replay_turn_by_turn(tmp_path):
    profile = profile_from_dict(
        {
            "classes": [
                {
                    "name": "sg",
                    "weight": 1,
                    "prompt": {"source": "dataset", "path": str(FIX / "multiturn.jsonl"), "format": "sharegpt"},
                    "output_tokens": "dataset",
                    "turns": "dataset",
                }
            ]
        }
    )
    sampler = WorkloadSampler(profile, seed=0, user_index=0)
    by_first = {}
    for _ in range(3):
        samples, _ = replay(sampler.start_session(), [" real reply"])
        by_first[samples[0].prompt] = samples
    trip = by_first["Plan a three day trip to Lisbon."]
    assert [s.messages[-1]["content"] for s in trip[1:]] == ["Make day two cheaper.", "And where should I eat?"]
    assert [s.max_tokens for s in trip] == [
        estimate_tokens("Day one: Alfama and the castle. Day two: Belem. Day three: Sintra."),
        estimate_tokens("Walk along the river and skip the museum tickets."),
        estimate_tokens("Try a tasca near the market; lunch menus are cheap."),
    ]
    assert all(m["content"] == " real reply" for m in trip[-1].messages[1::2])  # the recorded replies are not sent
    cache = by_first["What is a prefix cache?"]
    assert [s.messages[-1]["content"] for s in cache[1:]] == ["Who uses it?"]  # unanswered last turn dropped
    assert len(by_first["One word for fast?"]) == 1
    capped = profile_from_dict({"classes": [{**profile.classes[0].to_dict(), "turns": 2}]})
    sampler = WorkloadSampler(capped, seed=0, user_index=0)
    counts = {}
    for _ in range(3):
        samples, _ = replay(sampler.start_session(), [" r"])
        counts[samples[0].prompt] = len(samples)
    assert counts == {"Plan a three day trip to Lisbon.": 2, "What is a prefix cache?": 2, "One word for fast?": 1}


def test_a_conversation_profile_is_drawn_through_sessions_only():
    sampler = WorkloadSampler(chat_profile(), seed=0, user_index=0)
    assert sampler.has_conversations
    with pytest.raises(RuntimeError, match="use start_session"):
        sampler.next()
    session = sampler.start_session()
    assert session.conversation and session.turns == 4
    plain = profile_from_dict({"classes": [{"name": "q", "weight": 1, "input_tokens": 5, "output_tokens": 5}]})
    single = WorkloadSampler(plain, seed=0, user_index=0)
    assert not single.has_conversations
    one = single.start_session()
    assert not one.conversation and one.turns == 1


def test_max_tokens_cap_applies_to_every_turn():
    sampler = WorkloadSampler(chat_profile(output_tokens=500), 0, 0, max_tokens_cap=64)
    samples, _ = replay(sampler.start_session(), [" r"])
    assert [s.max_tokens for s in samples] == [64] * 4


def test_session_over_a_plan_built_by_hand():
    plan = ClassPlan("x", Fixed(3), Uniform(1, 2), None, None, Fixed(2), Duration("fixed", 0.5))
    session = Session(plan, random.Random(0))
    first = session.next_turn()
    assert session.think_time_s == 0.5 and len(first.prompt.split()) == 3
    second = session.next_turn(" y", 1)
    assert second.turn == 2 and second.input_tokens == 3 + 1 + 3 and session.done and session.think_time_s == 0.0


def test_one_text_puts_a_separator_before_each_user_message_and_tool_result_and_none_before_a_reply():
    chat = [{"role": "user", "content": "u0"}, {"role": "assistant", "content": "a1"}, {"role": "user", "content": "u2"}]
    assert one_text(chat) == f"u0a1{TURN_SEPARATOR}u2"
    agent = [*chat, {"role": "assistant", "content": None, "tool_calls": []},
             {"role": "tool", "tool_call_id": "c0", "content": "r0"}, {"role": "tool", "tool_call_id": "c1", "content": "r1"}]
    assert one_text(agent) == f"u0a1{TURN_SEPARATOR}u2{TURN_SEPARATOR}r0{TURN_SEPARATOR}r1"


def test_a_user_message_with_images_is_chat_parts_and_the_one_text_form_keeps_its_text_only():
    assert user_message("hi", None) == {"role": "user", "content": "hi"}
    m = user_message("look", ("data:image/png;base64,AA", "data:image/jpeg;base64,BB"))
    assert m == {"role": "user", "content": [{"type": "text", "text": "look"},
                                             {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA"}},
                                             {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,BB"}}]}  # fmt: skip
    history = [m, {"role": "assistant", "content": "a1"}, user_message("more", ("data:image/png;base64,CC",))]
    assert one_text(history) == f"looka1{TURN_SEPARATOR}more"
    assert history_images(history) == ("data:image/png;base64,AA", "data:image/jpeg;base64,BB", "data:image/png;base64,CC")
    assert history_images(history[1:2]) is None
