"""LLMUser.generate over sessions: think time slept before later turns, the reply handed on, a failed turn ends its session."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest
from locust.exception import StopUser
from locust.user.task import LOCUST_STATE_RUNNING, LOCUST_STATE_STOPPING, LOCUST_STATE_WAITING

from llmload.metrics.record import RequestRecord
from llmload.users import llm_user
from llmload.users.backoff_wait import Backoff, BackoffSpec
from llmload.users.llm_user import LLMUser
from llmload.workload import WorkloadSampler, profile_from_dict


def make_user(classes: list[dict], outcomes: list[str]) -> tuple[LLMUser, list[tuple]]:
    """An LLMUser without Locust around it: its sampler real, ``send`` scripted (one outcome per request)."""
    user = LLMUser.__new__(LLMUser)
    user._sampler = WorkloadSampler(profile_from_dict({"classes": classes}), seed=1, user_index=0)
    user._session = user._reply = None
    user._state = LOCUST_STATE_RUNNING
    user._backoff = Backoff(BackoffSpec(None, None), random.Random(0))  # error backoff off: no waits but think time
    user._context = SimpleNamespace(error_backoff=BackoffSpec(None, None), open_loop=False)  # a closed loop
    sent: list[tuple] = []
    sessions: list[str] = []
    user.sessions_sent = sessions  # type: ignore[attr-defined]
    script = iter(outcomes)

    def send(sample, *, turn=0, keep_reply=False, session="", agent=None):
        rec = RequestRecord(sample.class_name, sample.input_tokens, sample.max_tokens)
        rec.outcome, rec.turn, rec.session, rec.output_tokens = next(script), turn, session, 3
        sessions.append(session)
        rec.reply_text = f" reply{len(sent)}" if keep_reply else None
        sent.append((sample, turn, keep_reply))
        return rec

    user.send = send  # type: ignore[method-assign]
    return user, sent


@pytest.fixture
def slept(monkeypatch):
    naps: list[float] = []
    monkeypatch.setattr(llm_user.gevent, "sleep", naps.append)
    return naps


CHAT = {"name": "chat", "weight": 1, "input_tokens": 5, "output_tokens": 3, "turns": 3, "think_time_s": 1.5}


def test_turns_follow_each_other_with_think_time_and_the_replies_received(slept):
    user, sent = make_user([CHAT], ["ok"] * 4)
    for _ in range(4):
        user.generate()
    assert [(s.turn, turn, keep) for s, turn, keep in sent] == [(1, 1, True), (2, 2, True), (3, 3, False), (1, 1, True)]
    assert slept == [1.5, 1.5]  # before turns 2 and 3; a new session starts at once
    assert sent[1][0].messages[1] == {"role": "assistant", "content": " reply0"}
    assert sent[2][0].messages[3] == {"role": "assistant", "content": " reply1"}
    assert sent[1][0].input_tokens == 5 + 3 + 5  # the reply's tokens as received (record.output_tokens)
    assert user.sessions_sent == ["0.1", "0.1", "0.1", "0.2"]  # the records join the turns of one conversation


def test_a_failed_turn_ends_its_session(slept):
    user, sent = make_user([CHAT], ["ok", "error", "ok"])
    for _ in range(3):
        user.generate()
    assert [s.turn for s, _, _ in sent] == [1, 2, 1]  # after the failed turn 2: a new conversation
    assert user.sessions_sent == ["0.1", "0.1", "0.2"]
    assert slept == [1.5]


def test_single_request_classes_record_no_turn_and_keep_no_reply(slept):
    plain = {"name": "q", "weight": 1, "input_tokens": 5, "output_tokens": 3}
    user, sent = make_user([plain], ["ok"] * 2)
    user.generate()
    user.generate()
    assert [(turn, keep) for _, turn, keep in sent] == [(0, False), (0, False)] and slept == []
    mixed, sent = make_user([plain, {**CHAT, "think_time_s": 0}], ["ok"] * 4)
    for _ in range(4):
        mixed.generate()
    assert [(s.class_name, turn) for s, turn, _ in sent] == [("q", 0), ("chat", 1), ("chat", 2), ("chat", 3)]
    assert mixed.sessions_sent == ["", "0.1", "0.1", "0.1"]  # a single request belongs to no session


def test_a_thinking_user_is_idle_and_a_graceful_stop_ends_it_at_once(monkeypatch):
    user, sent = make_user([CHAT], ["ok"] * 3)
    states: list[str] = []

    def nap(seconds):
        states.append(user._state)
        user._state = LOCUST_STATE_STOPPING  # Locust asks the user to stop while it thinks

    monkeypatch.setattr(llm_user.gevent, "sleep", nap)
    user.generate()
    with pytest.raises(StopUser):
        user.generate()
    assert states == [LOCUST_STATE_WAITING] and len(sent) == 1  # turn 2 was never sent


def test_between_turns_the_user_keeps_the_reply_not_its_record(slept):
    """A thinking session holds the answer text and its tokens only: the record's chunk stamps are let go."""
    user, sent = make_user([CHAT], ["ok", "ok"])
    user.generate()
    assert user._reply == (" reply0", 3, None)  # text, tokens, tool calls (none: not an agent)
    user.generate()
    assert sent[1][0].messages[1]["content"] == " reply0" and sent[1][0].input_tokens == 5 + 3 + 5
