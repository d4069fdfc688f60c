"""The per-request record: raw timestamps taken on the hot path, nothing derived.

One :class:`RequestRecord` is created per request by the stream loop. While the stream
runs, only :attr:`RequestRecord.chunk_ns` grows (one ``perf_counter_ns()`` stamp per
event that carried content). Everything else (TTFT, ITL, TPOT, E2E) is derived after the
request by :mod:`llmload.metrics.definitions`.

Naming: ``*_ns`` are ``time.perf_counter_ns()`` stamps (monotonic, for durations only);
``start_wall_ns`` is ``time.time_ns()`` (wall clock, only to align with other sources).
"""

from __future__ import annotations

from typing import Any

__all__ = ["OUTCOMES", "RequestRecord"]

#: Every request ends in exactly one of these. requests = ok + error + interrupted.
OUTCOMES = ("ok", "error", "interrupted")


class RequestRecord:
    """Raw facts of one request. Mutable while the request runs, then read-only by convention.

    Attributes:
        class_name: workload request class (``short``, ``medium``, ...).
        start_ns: stamp just before the request is sent.
        start_wall_ns: wall-clock time at start (alignment only).
        headers_ns: stamp when the response headers were parsed (0 if never).
        chunk_ns: one stamp per event with non-empty content, in arrival order.
        chunk_tokens: tokens per content event when the server stated a count other than
            one for some event; ``None`` means one token per content event.
        end_ns: stamp when the stream ended (end-of-stream sentinel, EOF or error).
        outcome: ``ok`` | ``error`` | ``interrupted``.
        error_kind / error_message: set when ``outcome == "error"``.
        status: HTTP status (0 when no answer).
        input_tokens: prompt tokens (server ``usage`` when sent, else the workload estimate).
        input_tokens_from_usage: whether ``input_tokens`` came from ``usage``.
        asked_input_tokens: the prompt size llmload built (the profile's tokens, a dataset's estimate).
        output_tokens: generated tokens (``usage.completion_tokens`` when sent, else counted).
        output_tokens_from_usage: whether ``output_tokens`` came from ``usage``.
        max_tokens: tokens asked for.
        finish_reason: as sent by the server, or ``None``.
        retry_after_s: a 429/503's ``Retry-After``, in seconds (``None``: absent or unreadable).
        reconnects: times the request was sent again on a fresh connection because a
            reused keep-alive connection turned out closed before any response byte (0 or 1;
            its stamps still run from the first send).
        intended_ns: open loop only: the stamp at which the request *should* have been sent
            (its arrival's scheduled time); 0 in a closed loop. TTFT and E2E then run from it,
            and ``start_ns - intended_ns`` is the client wait (see ``metrics/definitions.py``).
        arrival_index: open loop only: the arrival's position in the run's global arrival
            sequence (a trace replay: the trace entry's line among its entries, from 0); -1 in
            a closed loop. Joins a record dump with its trace.
        step: index of the load step (concurrency ladder) whose *steady* window the
            request started in, or ``None`` (no ladder, or started during a ramp/warm-up).
        buffered_token_jumps: content events that carried more than one token by the
            server's own count (its running usage jumped by k > 1 at one chunk: tokens a
            parser held back, or a server that sends several tokens per event). Those k
            tokens sit at that one stamp, so ITL shows one long gap there, never k − 1 zeros.
        first_output_chunk: index in ``chunk_ns`` of the first *output* (answer or
            tool-call) event, -1 when none came. Equal to 0 unless reasoning came first.
        reasoning_chunks: content events that were reasoning (0 for APIs without a
            reasoning channel).
        reasoning_tokens: reasoning tokens (the server's usage when it says, else counted
            from the reasoning events); see :func:`~llmload.metrics.definitions.settle_reasoning`.
        reasoning_tokens_from_usage: whether ``reasoning_tokens`` came from usage.
        server_timing: the format of the server's own per-request timing when its last
            chunk carried one (``"vllm"`` | ``"llamacpp"``), else ``None``
            (:mod:`llmload.adapters.server_timing`).
        server_queue_ms / server_prefill_ms / server_decode_ms: that timing, normalised:
            queue (arrival to scheduling; ``None`` when the server does not say, as
            llama.cpp), prefill (scheduling to first token), decode (first to last token).
        warmup: the request started during the run's warm-up (``--warmup``/``--warmup-requests``,
            :mod:`llmload.metrics.warmup_window`): sent and its errors shown, but in no statistic.
        turn: the request's turn in its conversation (1, 2, ...), or 0 for a request of a
            single-request class.
        cached_prompt_tokens: prompt tokens the server says it served from its prefix
            cache (``usage.prompt_tokens_details.cached_tokens``), or ``None`` when it did
            not say.
        reply_text: the answer text received, joined once at the end, only when the user
            asked for it (a conversation turn, whose reply the next turn re-sends); else
            ``None``. Not written to record dumps.
        agent: an agent class's turn (:class:`~llmload.workload.agent.AgentTurn`: its session's
            tally, the tool wait before it, the tool calls its answer held), else ``None``.
            Not written to record dumps.
        user: the index of the Locust user that sent it (unique across workers: ``llmload fit`` links a
            user's requests by it, whatever the think or tool time between them), -1 when unknown.
        images: images the request carried (an image class, :mod:`llmload.workload.images`), else 0.
        request_bytes: the request body's size in bytes (set by the user for every request;
            dumps keep it for image requests only).
    """

    __slots__ = (
        "agent",
        "arrival_index",
        "asked_input_tokens",
        "buffered_token_jumps",
        "cached_prompt_tokens",
        "chunk_ns",
        "chunk_tokens",
        "class_name",
        "end_ns",
        "error_kind",
        "error_message",
        "finish_reason",
        "first_output_chunk",
        "headers_ns",
        "images",
        "input_tokens",
        "input_tokens_from_usage",
        "inputs",
        "intended_ns",
        "max_tokens",
        "outcome",
        "output_tokens",
        "output_tokens_from_usage",
        "reasoning_chunks",
        "reasoning_tokens",
        "reasoning_tokens_from_usage",
        "reconnects",
        "server_decode_ms",
        "server_prefill_ms",
        "server_queue_ms",
        "server_timing",
        "reply_text",
        "request_bytes",
        "retry_after_s",
        "start_ns",
        "start_wall_ns",
        "status",
        "step",
        "turn",
        "session",
        "user",
        "warmup",
    )

    def __init__(self, class_name: str, input_tokens: int, max_tokens: int) -> None:
        self.class_name = class_name
        self.input_tokens = input_tokens
        self.input_tokens_from_usage = False
        self.asked_input_tokens = input_tokens  # the prompt size llmload built (the profile's, or its estimate)
        self.max_tokens = max_tokens
        self.start_ns = 0
        self.intended_ns = 0
        self.arrival_index = -1
        self.start_wall_ns = 0
        self.headers_ns = 0
        self.chunk_ns: list[int] = []
        self.chunk_tokens: list[int] | None = None
        self.end_ns = 0
        self.outcome = "interrupted"
        self.error_kind: str | None = None
        self.error_message: str | None = None
        self.status = 0
        self.output_tokens = 0
        self.output_tokens_from_usage = False
        self.finish_reason: str | None = None
        self.reconnects = 0
        self.retry_after_s: float | None = None
        self.step: int | None = None
        self.warmup = False
        self.buffered_token_jumps = 0
        self.first_output_chunk = -1
        self.reasoning_chunks = 0
        self.reasoning_tokens = 0
        self.reasoning_tokens_from_usage = False
        self.server_timing: str | None = None
        self.server_queue_ms: float | None = None
        self.server_prefill_ms: float | None = None
        self.server_decode_ms: float | None = None
        self.turn = 0
        self.session = ""  # a conversation's id ("<user>.<n>": the user's index across all workers, its n-th session)
        self.user = -1  # the sending user's index (unique across workers), -1: unknown
        self.cached_prompt_tokens: int | None = None
        self.reply_text: str | None = None
        self.inputs = 0  # texts embedded by the request (openai-embeddings); 0: not an embeddings request
        self.agent: Any = None  # an AgentTurn (llmload.workload.agent) for an agent class's turn
        self.images = 0  # images the request carried (llmload.workload.images)
        self.request_bytes = 0  # the request body's bytes

    def add_counted_chunk(self, stamp_ns: int, tokens: int) -> None:
        """Slow path for an event whose token count is not one (rare).

        ``chunk_tokens`` is created on first use and may then lag behind ``chunk_ns``: the
        hot path appends one-token events to ``chunk_ns`` only, so missing tail entries
        count one token each (see :attr:`counted_tokens`, :meth:`tokens_per_chunk`).
        """
        counts = self.chunk_tokens
        if counts is None:
            counts = self.chunk_tokens = []
        counts.extend([1] * (len(self.chunk_ns) - len(counts)))
        self.chunk_ns.append(stamp_ns)
        counts.append(tokens)
        if tokens > 1:
            self.buffered_token_jumps += 1

    @property
    def counted_tokens(self) -> int:
        """Tokens counted from the stream itself (events, or stated counts)."""
        counts = self.chunk_tokens
        if counts is None:
            return len(self.chunk_ns)
        return sum(counts) + len(self.chunk_ns) - len(counts)

    def tokens_per_chunk(self) -> list[int]:
        """Tokens of each content event, aligned with ``chunk_ns``."""
        counts = self.chunk_tokens or []
        return [*counts, *[1] * (len(self.chunk_ns) - len(counts))]

    def to_dict(self) -> dict:
        """Plain-data view (for JSONL dumps and user listeners)."""
        return {name: getattr(self, name) for name in self.__slots__}

    def batched(self, inputs: int) -> None:
        """A request of ``inputs`` texts (openai-embeddings; 0: not one), each a prompt of the class's size."""
        if inputs:
            self.inputs = inputs
            self.input_tokens = self.asked_input_tokens = self.input_tokens * inputs

    def __repr__(self) -> str:
        return (
            f"RequestRecord({self.class_name!r}, outcome={self.outcome!r}, kind={self.error_kind!r}, "
            f"chunks={len(self.chunk_ns)}, output_tokens={self.output_tokens})"
        )
