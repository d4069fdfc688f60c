"""Raw request records to JSON Lines (``--records-jsonl PATH``), for offline analysis.

Off by default. When on, every process that sends requests appends one line per finished
request: a standalone process writes ``PATH``; a worker writes
``<stem>.worker<index><suffix>`` beside it (``records.worker0.jsonl``, ...), so that
several workers on one host never share a file. Lines are buffered and flushed at every
report and at the end of the test.

Each line holds the raw facts (stamps relative to the request start, in ns) so that any
metric can be recomputed exactly -- TTFO from ``chunks_ns[first_output_chunk]``, the
reasoning fields, ``buffered_token_jumps`` and the server's own timing (``server_timing``,
``server_queue_ms``, ``server_prefill_ms``, ``server_decode_ms``) as the record has them; :func:`record_from_line` reads one back into a
:class:`~llmload.metrics.record.RequestRecord` (not its agent keys: ``record.agent`` stays None).

A conversation's turn adds ``session`` (its id) to ``turn``. An agent class's turn (``record.agent``,
:mod:`llmload.workload.agent`) adds, set once at the end of the request: ``turn_kind`` (``tool_turn``: the answer
held tool calls, ``answer_turn``: text; null when the turn failed or was cut), ``tool_wait_ms`` (the tool run the
user waited before sending it; 0: none), ``tool_calls`` (calls in the answer) and ``tool_names`` (their names, when
any), ``tool_results`` (the tokens of each tool result it sent, after a tool turn), and on the session's first turn
``tools`` (the definitions every turn sends) and ``parallel_tool_calls``. Its context is ``input_tokens``
(``input_tokens_from_usage``: the server's count) and its cached part ``cached_prompt_tokens`` (null: not stated).
``llmload trace from-records`` (:mod:`llmload.workload.trace_records`) makes a replayable trace of these.
"""

from __future__ import annotations

from pathlib import Path
from typing import IO

import orjson

from llmload.jsonvalue import Json
from llmload.metrics.record import RequestRecord
from llmload.redact import mask

__all__ = ["RecordDump", "dump_path", "record_from_line", "record_to_line"]


def dump_path(path: str, worker_index: int | None) -> Path:
    p = Path(path)
    return p if worker_index is None else p.with_name(f"{p.stem}.worker{worker_index}{p.suffix}")


def record_to_line(rec: RequestRecord) -> bytes:
    start = rec.start_ns
    doc: dict[str, Json] = {
        "class": rec.class_name,
        "outcome": rec.outcome,
        "error_kind": rec.error_kind,
        "error": mask(rec.error_message) if rec.error_message else None,  # guard (llmload.redact)
        "status": rec.status,
        "start_wall_ns": rec.start_wall_ns,
        "headers_ns": rec.headers_ns - start if rec.headers_ns else None,
        "chunks_ns": [t - start for t in rec.chunk_ns],
        "chunk_tokens": rec.tokens_per_chunk() if rec.chunk_tokens is not None else None,
        "end_ns": rec.end_ns - start,
        "input_tokens": rec.input_tokens,
        "input_tokens_from_usage": rec.input_tokens_from_usage,
        "asked_input_tokens": rec.asked_input_tokens,
        "output_tokens": rec.output_tokens,
        "output_tokens_from_usage": rec.output_tokens_from_usage,
        "max_tokens": rec.max_tokens,
        "finish_reason": rec.finish_reason,
        "first_output_chunk": rec.first_output_chunk,
        "reasoning_chunks": rec.reasoning_chunks,
        "reasoning_tokens": rec.reasoning_tokens,
        "reasoning_tokens_from_usage": rec.reasoning_tokens_from_usage,
        "buffered_token_jumps": rec.buffered_token_jumps,
        "server_timing": rec.server_timing,
        "server_queue_ms": rec.server_queue_ms,
        "server_prefill_ms": rec.server_prefill_ms,
        "server_decode_ms": rec.server_decode_ms,
        "cached_prompt_tokens": rec.cached_prompt_tokens,
        "turn": rec.turn,
        "reconnects": rec.reconnects,
    }
    if rec.intended_ns:  # open loop: the intended send time, relative to the actual send (<= 0)
        doc["intended_ns"] = rec.intended_ns - start
    if rec.arrival_index >= 0:  # open loop: the arrival's index (a trace replay: the entry's)
        doc["arrival_index"] = rec.arrival_index
    if rec.session:  # a conversation's turn: its session's id, to join the turns of one conversation
        doc["session"] = rec.session
    if rec.user >= 0:  # the user that sent it: joins a user's requests (llmload fit's closed-loop replay)
        doc["user"] = rec.user
    if rec.warmup:  # started during --warmup: not in the run's statistics
        doc["warmup"] = True
    if rec.inputs:  # an embeddings request: the texts it carried
        doc["inputs"] = rec.inputs
    if rec.images:  # an image class's request: its images and body bytes
        doc["images"], doc["request_bytes"] = rec.images, rec.request_bytes
    if rec.agent is not None:  # an agent class's turn
        _agent_fields(rec, doc)
    return orjson.dumps(doc) + b"\n"


def _agent_fields(rec: RequestRecord, doc: dict[str, Json]) -> None:
    """An agent turn's keys (module docstring); ``rec.agent`` is an :class:`~llmload.workload.agent.AgentTurn`."""
    agent = rec.agent
    calls = agent.calls or ()
    doc["turn_kind"] = ("tool_turn" if calls else "answer_turn") if rec.outcome == "ok" else None
    doc["tool_wait_ms"] = round(agent.waited_s * 1000.0, 3)
    doc["tool_calls"] = len(calls)
    if calls:
        doc["tool_names"] = [c.name for c in calls]
    if agent.results:
        doc["tool_results"] = list(agent.results)
    spec = agent.spec
    if spec is not None:  # the session's first turn: the tools every turn of it sends
        doc["tools"] = [dict(t) for t in spec.tools]
        doc["parallel_tool_calls"] = spec.per_turn > 1


def record_from_line(line: bytes | str) -> RequestRecord:
    d = orjson.loads(line)
    rec = RequestRecord(d["class"], d["input_tokens"], d["max_tokens"])
    rec.outcome, rec.error_kind, rec.error_message, rec.status = d["outcome"], d["error_kind"], d["error"], d["status"]
    rec.start_wall_ns, rec.start_ns = d["start_wall_ns"], 0
    rec.headers_ns = d["headers_ns"] or 0
    rec.chunk_ns = list(d["chunks_ns"])
    rec.chunk_tokens = d["chunk_tokens"]
    rec.end_ns = d["end_ns"]
    rec.input_tokens_from_usage = d["input_tokens_from_usage"]
    rec.asked_input_tokens = d.get("asked_input_tokens", rec.input_tokens)
    rec.output_tokens, rec.output_tokens_from_usage = d["output_tokens"], d["output_tokens_from_usage"]
    rec.finish_reason = d["finish_reason"]
    # Channel fields (absent from dumps written before they existed: no reasoning, all output).
    rec.first_output_chunk = d.get("first_output_chunk", 0 if rec.chunk_ns else -1)
    rec.reasoning_chunks = d.get("reasoning_chunks", 0)
    rec.reasoning_tokens = d.get("reasoning_tokens", 0)
    rec.reasoning_tokens_from_usage = d.get("reasoning_tokens_from_usage", False)
    rec.buffered_token_jumps = d.get("buffered_token_jumps", 0)
    rec.server_timing = d.get("server_timing")
    rec.server_queue_ms = d.get("server_queue_ms")
    rec.server_prefill_ms = d.get("server_prefill_ms")
    rec.server_decode_ms = d.get("server_decode_ms")
    rec.intended_ns = d.get("intended_ns") or 0
    rec.arrival_index = d.get("arrival_index", -1)
    rec.cached_prompt_tokens = d.get("cached_prompt_tokens")
    rec.turn = d.get("turn", 0)
    rec.session = d.get("session", "")
    rec.user = d.get("user", -1)
    rec.warmup = bool(d.get("warmup", False))
    rec.reconnects = d.get("reconnects", 0)
    rec.inputs = d.get("inputs", 0)
    rec.images, rec.request_bytes = d.get("images", 0), d.get("request_bytes", 0)
    return rec


class RecordDump:
    """A listener for ``llmload_request`` that appends records to a JSONL file."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file: IO[bytes] | None = open(path, "ab")  # noqa: SIM115 - closed in close()
        self._buf: list[bytes] = []

    def add(self, rec: RequestRecord) -> None:
        self._buf.append(record_to_line(rec))

    def flush(self) -> None:
        if self._buf and self._file is not None:
            self._file.write(b"".join(self._buf))
            self._file.flush()
            self._buf.clear()

    def close(self) -> None:
        self.flush()
        if self._file is not None:
            self._file.close()
            self._file = None
