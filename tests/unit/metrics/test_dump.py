"""Raw records to JSON Lines and back: every fact a metric needs survives the round trip."""

from __future__ import annotations

import orjson
import pytest

from llmload import redact
from llmload.metrics.definitions import reasoning_s, settle_reasoning, settle_token_counts, ttfo_s, ttft_s
from llmload.metrics.dump import RecordDump, dump_path, record_from_line, record_to_line
from llmload.metrics.record import RequestRecord

MS = 1_000_000


def reasoning_record() -> RequestRecord:
    rec = RequestRecord("chat", 12, 40)
    rec.start_ns, rec.start_wall_ns, rec.headers_ns = 5 * MS, 1_700_000_000 * 10**9, 6 * MS
    rec.chunk_ns = [105 * MS, 115 * MS, 125 * MS]
    rec.add_counted_chunk(135 * MS, 16)
    rec.chunk_ns.append(145 * MS)
    rec.end_ns = 150 * MS
    rec.outcome, rec.status, rec.finish_reason = "ok", 200, "stop"
    settle_token_counts(rec, 12, 24)
    settle_reasoning(rec, first_output_chunk=2, reasoning_chunks=2, reasoning_extra_tokens=0, usage_reasoning=2)
    return rec


def test_round_trip_keeps_stamps_tokens_and_channels() -> None:
    rec = reasoning_record()
    back = record_from_line(record_to_line(rec))
    assert ttft_s(back) == pytest.approx(ttft_s(rec)) == pytest.approx(0.100)
    assert ttfo_s(back) == pytest.approx(ttfo_s(rec)) == pytest.approx(0.120)
    assert reasoning_s(back) == pytest.approx(0.020)
    assert back.tokens_per_chunk() == [1, 1, 1, 16, 1]
    for name in ("first_output_chunk", "reasoning_chunks", "reasoning_tokens", "reasoning_tokens_from_usage",
                 "buffered_token_jumps", "output_tokens", "output_tokens_from_usage", "input_tokens", "finish_reason"):  # fmt: skip
        assert getattr(back, name) == getattr(rec, name), name
    assert (back.buffered_token_jumps, back.reasoning_tokens, back.reasoning_tokens_from_usage) == (1, 2, True)


def test_lines_written_before_the_channel_fields_read_as_all_output() -> None:
    doc = orjson.loads(record_to_line(reasoning_record()))
    for key in ("first_output_chunk", "reasoning_chunks", "reasoning_tokens", "reasoning_tokens_from_usage",
                "buffered_token_jumps"):  # fmt: skip
        del doc[key]
    old = record_from_line(orjson.dumps(doc))
    assert old.first_output_chunk == 0 and ttfo_s(old) == ttft_s(old)
    assert (old.reasoning_chunks, old.reasoning_tokens, old.buffered_token_jumps) == (0, 0, 0)


def test_dump_appends_lines_and_workers_get_their_own_file(tmp_path) -> None:
    path = dump_path(str(tmp_path / "rec.jsonl"), 3)
    assert path.name == "rec.worker3.jsonl"
    dump = RecordDump(path)
    dump.add(reasoning_record())
    dump.add(reasoning_record())
    dump.close()
    lines = path.read_bytes().splitlines()
    assert len(lines) == 2 and record_from_line(lines[1]).first_output_chunk == 2


def test_server_timing_survives_the_round_trip_and_old_lines_have_none() -> None:
    from llmload.metrics.definitions import gateway_s, prefill_s, server_queue_s

    rec = reasoning_record()
    rec.server_timing, rec.server_queue_ms, rec.server_prefill_ms, rec.server_decode_ms = "vllm", 60.0, 30.0, 40.0
    back = record_from_line(record_to_line(rec))
    assert (back.server_timing, server_queue_s(back), prefill_s(back)) == ("vllm", 0.060, 0.030)
    assert gateway_s(back) == pytest.approx(0.010)
    doc = orjson.loads(record_to_line(rec))
    for key in ("server_timing", "server_queue_ms", "server_prefill_ms", "server_decode_ms"):
        del doc[key]
    old = record_from_line(orjson.dumps(doc))
    assert old.server_timing is None and gateway_s(old) is None


def test_cache_turn_reconnects_and_the_arrival_index_survive_and_old_lines_read_without_them() -> None:
    rec = reasoning_record()
    rec.cached_prompt_tokens, rec.turn, rec.reconnects, rec.session = 512, 3, 1, "12.4"
    rec.intended_ns, rec.arrival_index = 4 * MS, 17
    back = record_from_line(record_to_line(rec))
    assert (back.cached_prompt_tokens, back.turn, back.reconnects, back.arrival_index) == (512, 3, 1, 17)
    assert back.session == "12.4"
    closed = reasoning_record()
    assert "arrival_index" not in orjson.loads(record_to_line(closed))  # a closed loop has no arrival
    assert "session" not in orjson.loads(record_to_line(closed))  # a single request belongs to no conversation
    assert record_from_line(record_to_line(closed)).session == ""
    doc = orjson.loads(record_to_line(closed))
    for key in ("cached_prompt_tokens", "turn", "reconnects"):
        del doc[key]
    old = record_from_line(orjson.dumps(doc))
    assert (old.cached_prompt_tokens, old.turn, old.reconnects, old.arrival_index) == (None, 0, 0, -1)


def test_the_sending_user_survives_and_lines_without_it_read_as_unknown() -> None:
    rec = reasoning_record()
    rec.user = 2018  # the user index (count x 1009 + worker: worker 0's 3rd user); llmload fit joins by it
    assert orjson.loads(record_to_line(rec))["user"] == 2018 and record_from_line(record_to_line(rec)).user == 2018
    unknown = reasoning_record()
    assert "user" not in orjson.loads(record_to_line(unknown)) and record_from_line(record_to_line(unknown)).user == -1


def test_a_key_in_an_error_message_is_masked_on_its_line() -> None:
    """Guard behind the user's own masking (llmload.redact): the records file never holds a known key."""
    key = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"
    rec = reasoning_record()
    rec.outcome, rec.error_kind, rec.error_message = "error", "http_401", f"Incorrect API key provided: {key}"
    redact.remember(key)
    line = record_to_line(rec)
    assert key[:8].encode() not in line and key[-8:].encode() not in line
    assert record_from_line(line).error_message == f"Incorrect API key provided: {redact.MASK}"


def test_an_embeddings_requests_texts_survive_and_other_lines_do_not_carry_the_key() -> None:
    rec = RequestRecord("docs", input_tokens=30, max_tokens=0)
    rec.batched(4)
    line = record_to_line(rec)
    assert orjson.loads(line)["inputs"] == 4 and record_from_line(line).inputs == 4
    plain = record_to_line(RequestRecord("chat", input_tokens=30, max_tokens=8))
    assert "inputs" not in orjson.loads(plain) and record_from_line(plain).inputs == 0


def test_an_image_requests_images_and_bytes_survive_and_other_lines_do_not_carry_them() -> None:
    rec = RequestRecord("vision", input_tokens=30, max_tokens=8)
    rec.images, rec.request_bytes = 2, 90_000
    back = record_from_line(record_to_line(rec))
    assert (back.images, back.request_bytes) == (2, 90_000)
    plain = RequestRecord("chat", input_tokens=30, max_tokens=8)
    plain.request_bytes = 300
    assert "request_bytes" not in orjson.loads(record_to_line(plain))


def test_an_agent_turn_adds_its_kind_wait_calls_results_and_on_the_first_turn_the_tools() -> None:
    from llmload.workload.agent import AgentSpec, AgentTurn, ToolCall

    tools = ({"type": "function", "function": {"name": "search", "parameters": {"type": "object"}}},)
    rec = reasoning_record()
    rec.turn, rec.session, rec.cached_prompt_tokens = 1, "7.2", 8
    rec.agent = AgentTurn(spec=AgentSpec(tools, per_turn=2))
    rec.agent.calls = (ToolCall("c1", "search", "{}"), ToolCall("c2", "search", '{"q": 1}'))
    first = orjson.loads(record_to_line(rec))
    assert (first["turn_kind"], first["tool_calls"], first["tool_names"], first["tool_wait_ms"]) == (
        "tool_turn", 2, ["search", "search"], 0.0)
    assert first["tools"] == [dict(tools[0])] and first["parallel_tool_calls"] is True and "tool_results" not in first
    assert (first["session"], first["turn"], first["input_tokens"], first["cached_prompt_tokens"]) == ("7.2", 1, 12, 8)

    rec.turn, rec.agent = 2, AgentTurn(waited_s=0.3004567, results=(50, 60))  # the results of the two calls
    second = orjson.loads(record_to_line(rec))
    assert (second["turn_kind"], second["tool_calls"], second["tool_wait_ms"], second["tool_results"]) == (
        "answer_turn", 0, 300.457, [50, 60])
    assert "tools" not in second and "tool_names" not in second
    rec.outcome = "error"
    assert orjson.loads(record_to_line(rec))["turn_kind"] is None  # a failed turn has no answer to tell its kind
    before = set(orjson.loads(record_to_line(reasoning_record())))
    assert before <= set(second) and set(second) - before == {"session", "turn_kind", "tool_wait_ms", "tool_calls",
                                                              "tool_results"}  # fmt: skip
    assert record_from_line(record_to_line(rec)).agent is None  # the agent keys are for readers, not the record
