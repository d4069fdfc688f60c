"""Metric definitions: every llmload metric, defined once.

The latency functions take a finished :class:`~llmload.metrics.record.RequestRecord` and
return seconds (or ``None`` when the metric does not exist for that request); the
throughput functions take counters and the test time.

==============  ===================================================  ==================  =======================
llmload name    formula                                              vLLM bench name     AIPerf name
==============  ===================================================  ==================  =======================
TTFT            first event with non-empty content − request origin  TTFT                time_to_first_token
ITL             gap between consecutive content events (every gap)   ITL                 inter_chunk_latency
TPOT            (last content event − first) / (output_tokens − 1)   TPOT                inter_token_latency
E2E             end of stream − request origin                       E2EL                request_latency
achieved rate   requests started (every outcome) / test time         — (completed only)  — (completed only)
offered rate    the arrival process's rate (``--rate``)              request_rate        request_rate
output tokens   ``usage.completion_tokens`` when sent, else counted  output_len          output_sequence_len
output tok/s    output tokens of successful requests / test time     output_throughput   output_token_throughput
received tok/s  (output tokens of successful requests + tokens       — (completed        — (completed
                received by failed or interrupted ones) / test time  requests only)      requests only)
TTFO            first *output* (answer or tool-call) event − origin  —                   time_to_first_output_token
reasoning       first output event − first reasoning event           —                   —
reas. tokens    usage ``*_tokens_details.reasoning_tokens``, else    —                   reasoning_token_count
                counted reasoning events
hidden reas.    usage says reasoning tokens > 0, none were streamed  —                   —
buffered jumps  content events carrying k > 1 tokens (usage jumped)  —                   —
client_wait     actual send − intended send (open loop; absent       — (not measured:    — (not measured)
                in closed loop: ``intended_ns`` unset)                TTFT from the send)
server_queue    the server's queue time (vLLM ``queue_time_ms``;     queue_time          —
                absent for llama.cpp and servers without timing)
prefill         server TTFT − server queue (vLLM                     prefill_time        —
                ``time_to_first_token_ms``, llama.cpp ``prompt_ms``)
gateway         client TTFT − server TTFT (server TTFT = queue +     —                   —
                prefill; only when the server reports its queue)
decode          E2E − TTFT (client side)                             decode_time         —
phase coverage  requests with server timing / successful requests   —                   —
tail share      mean over requests at or above a TTFT percentile of  —                   —
                phase / TTFT (gateway, server_queue, prefill, other)
OK req/s        successful requests / test time                      request_throughput  request_throughput
Err/s           failed requests / test time                          — (failed count)    — (error_request_count)
error rate      failed / (successful + failed) requests              —                   —
good request    ok, and TTFT <= ttft_ms, TPOT <= tpot_ms and         meets --goodput     good_request_count
                E2E <= e2e_ms for each SLO of its class              ttft/tpot/e2el      (meets --goodput)
attainment      good requests / (ok + errors)                        —                   —
goodput req/s   good requests / test time                            request_goodput     goodput
goodput tok/s   output tokens of good requests / test time           —                   —
cached prompt   Σ ``usage.prompt_tokens_details.cached_tokens`` of   — (server:          —
tokens          successful requests                                  vllm:prefix_cache_
                                                                     hits_total)
prefix cache    cached prompt tokens / prompt tokens, over the       — (server: vllm:    —
hit ratio       successful requests whose answer stated              prefix_cache_hits /
                ``cached_tokens``                                    queries)
==============  ===================================================  ==================  =======================

Notes:

* **request origin** is the request start in a closed loop, and the *intended send time*
  of its arrival in an open loop (``--arrival``): a wait for a free user (``-u`` caps requests
  in flight) is part of what its user sees; timing from the actual send would hide the queue
  in front of an overloaded server (coordinated omission). vLLM bench and AIPerf time from
  the send (their TTFT/E2EL = ours − client wait). ITL and TPOT never include the wait; the
  dispatcher's own lateness (``arrival.schedule_lag_ms``) is part of it. **Achieved rate**
  counts requests started, whatever their outcome.
* "request start" is the stamp taken just before the request is written to the socket,
  so TTFT includes connection set-up when a new connection was needed, server queueing,
  prefill and network — what a user of the service waits for.
* ITL is per *event*: a server that packs several tokens into one event yields one
  large gap (vLLM bench and AIPerf's "ICL" do the same). TPOT is per *token* and is what
  to compare across servers. When every event carries one token, mean ITL == TPOT.
* TPOT needs at least two output tokens; for a one-token answer it does not exist.
* ``received_output_tokens_per_s`` counts what streamed, whatever the request's outcome:
  a test that ends while most requests are still running shows the server's real output
  rate there, when completed-request throughput (``output_tokens_per_s``, vLLM bench's and
  AIPerf's only figure) is near zero. Tokens of failed or interrupted requests are the
  counted events (their usage never came).
* TTFT also counts a request interrupted by the end of the test after its first token
  (what the user saw); every other latency covers successful requests only.
* **Good request** (:func:`slo_missed`): a request is good when its outcome is ``ok`` and it
  meets every SLO of its class (:mod:`llmload.metrics.slo`: the class's own ``slo`` in the
  profile, key by key over ``--slo``), its TTFT and E2E counted from the request origin (an open
  loop's wait in the client counts). A one-token answer has no TPOT and meets a TPOT SLO (vLLM bench
  counts its TPOT as 0). Decided once per request, when the record is recorded. **Attainment** = good / (ok + errors): failed requests count as not good,
  requests interrupted by the end of the test are neither (as in the error rate). A class
  without SLOs, in a run where some class has them, counts each successful request as good.
  **Goodput** = good requests per second of test time (vLLM bench ``request_goodput``,
  AIPerf ``goodput``), and their output tokens per second.
* ``prefix_cache_hit_ratio`` is the client's view of the server's prefix cache: what the
  server says, per answer, it did not have to prefill. Requests whose answer did not
  state ``cached_tokens`` are left out of both sums (a server that never says gives
  ``None``, not 0). The engine's own counters (``vllm:prefix_cache_hits_total /
  vllm:prefix_cache_queries_total``; llama.cpp ``llamacpp:prompt_tokens_cached_total /
  (prompt_tokens_total + prompt_tokens_cached_total)``, its prompt count excluding cached
  tokens; SGLang ``sglang:cache_hit_rate``) are the server's ``prefix_cache_hit_rate``.
* Output tokens come from the server's ``usage`` when it sends it (``stream_options.
  include_usage``), else from the stream (one token per content event, or the count the
  server stated per event). The record says which (``output_tokens_from_usage``).
* Reasoning models stream *reasoning* (chat ``reasoning_content``/``reasoning``,
  Responses ``reasoning_text``/``reasoning_summary_text``, Messages ``thinking``) before
  the answer. TTFT stays the first event of any channel (as vLLM bench, GuideLLM and
  EvalScope count it); TTFO is the first answer or tool-call event (AIPerf's
  ``time_to_first_output_token``; vLLM bench and GuideLLM have none). Without reasoning,
  TTFO == TTFT.
  Reasoning time exists only when reasoning was streamed before the first output.
* Reasoning tokens: the server's count when its usage has one (OpenAI
  ``completion_tokens_details.reasoning_tokens``, Responses
  ``output_tokens_details.reasoning_tokens``), else counted from the stream (one per
  reasoning event, or the count the server stated per event; exact unless a stated
  multi-token event interleaves after the answer began). ``reasoning_tokens_from_usage``
  says which. *Hidden reasoning*: usage reports reasoning tokens but the stream showed
  none (OpenAI's reasoning models): its time is inside TTFT and TTFO alike.
* Phases (where a request's time went) use the server's own per-request timing when
  its last chunk carries one (:mod:`llmload.adapters.server_timing`): TTFT = gateway +
  server_queue + prefill, E2E = TTFT + decode. vLLM reports the queue, so gateway (the
  network, proxies and gateway queues between the client and the engine) is the rest;
  llama.cpp reports no queue, so its slot wait and the network stay together as
  ``other`` in the tail shares and gateway is absent. Durations on two clocks can
  disagree by a little: gateway is clamped at 0. ``client_wait`` is the open-loop delay
  before the request could be sent (absent in closed loop); gateway and the tail shares
  split the TTFT from the actual send, so the wait never hides in them.
* A buffered token jump is an event the server says carried k > 1 tokens (its running
  usage jumped: a tool-call parser held text back, or a server batches tokens per
  event). Its k tokens share one stamp, so ITL has one long gap there, not k − 1 zero
  gaps; TPOT (per token) is unaffected. Counting them tells why ITL looks coarse.
"""

from __future__ import annotations

import numpy as np

from llmload.metrics.record import RequestRecord
from llmload.metrics.slo import SLO

__all__ = [
    "METRICS",
    "attainment",
    "goodput_per_s",
    "PHASES",
    "TAIL_PARTS",
    "client_wait_s",
    "decode_s",
    "gateway_s",
    "prefill_s",
    "server_queue_s",
    "tail_parts",
    "error_backoff_s",
    "achieved_rate",
    "origin_ns",
    "e2e_s",
    "hidden_reasoning",
    "itl_s",
    "prefix_cache_hit_ratio",
    "reasoning_s",
    "received_output_tokens",
    "received_output_tokens_per_s",
    "settle_reasoning",
    "settle_token_counts",
    "slo_missed",
    "tpot_s",
    "ttfo_s",
    "ttft_s",
]

#: Latency metrics recorded into histograms, in display order (TTFO and reasoning time last:
#: shown where reasoning happened).
METRICS = ("ttft", "itl", "tpot", "e2e", "ttfo", "reasoning")

_NS = 1e-9
_MS = 1e-3

#: Phases of a request, in the order they happen (``llmload_phase_seconds{phase}``).
PHASES = ("client_wait", "gateway", "server_queue", "prefill", "decode")
#: The parts of TTFT the tail attribution splits it into (:func:`tail_parts`).
TAIL_PARTS = ("client_wait", "gateway", "server_queue", "prefill", "other")


def origin_ns(rec: RequestRecord) -> int:
    """Where TTFT and E2E start: the intended send time in an open loop, else the request start."""
    return rec.intended_ns or rec.start_ns


def client_wait_s(rec: RequestRecord) -> float | None:
    """Client wait (s): actual send − intended send; None in a closed loop (no intended time)."""
    if not rec.intended_ns or not rec.start_ns:
        return None
    return max(rec.start_ns - rec.intended_ns, 0) * _NS


def achieved_rate(requests: int, duration_s: float) -> float:
    """Achieved rate (requests/s): requests started (every outcome) / test time (0 without time)."""
    return requests / duration_s if duration_s > 0 else 0.0


def ttft_s(rec: RequestRecord) -> float | None:
    """Time to first token (s): first content event − request origin (:func:`origin_ns`)."""
    if not rec.chunk_ns:
        return None
    return (rec.chunk_ns[0] - (rec.intended_ns or rec.start_ns)) * _NS


def itl_s(rec: RequestRecord) -> np.ndarray:
    """Inter-token latencies (s): every gap between consecutive content events."""
    if len(rec.chunk_ns) < 2:
        return np.empty(0, dtype=np.float64)
    return np.diff(np.asarray(rec.chunk_ns, dtype=np.int64)).astype(np.float64) * _NS


def tpot_s(rec: RequestRecord) -> float | None:
    """Time per output token after the first (s): (last − first content event) / (tokens − 1)."""
    if rec.output_tokens < 2 or len(rec.chunk_ns) < 1:
        return None
    return (rec.chunk_ns[-1] - rec.chunk_ns[0]) * _NS / (rec.output_tokens - 1)


def e2e_s(rec: RequestRecord) -> float:
    """End-to-end latency (s): end of stream − request origin (:func:`origin_ns`)."""
    return (rec.end_ns - (rec.intended_ns or rec.start_ns)) * _NS


def received_output_tokens(ok_output_tokens: int, partial_output_tokens: int) -> int:
    """Every output token that arrived: successful requests' output tokens + those of failed/interrupted ones."""
    return ok_output_tokens + partial_output_tokens


def received_output_tokens_per_s(ok_output_tokens: int, partial_output_tokens: int, duration_s: float) -> float:
    """Received output tokens per second of test time: ``received_output_tokens / duration_s`` (0 without time)."""
    if duration_s <= 0:
        return 0.0
    return received_output_tokens(ok_output_tokens, partial_output_tokens) / duration_s


def ttfo_s(rec: RequestRecord) -> float | None:
    """Time to first output token (s): first answer or tool-call event − request origin (:func:`origin_ns`)."""
    i = rec.first_output_chunk
    if i < 0:
        return None
    return (rec.chunk_ns[i] - (rec.intended_ns or rec.start_ns)) * _NS


def reasoning_s(rec: RequestRecord) -> float | None:
    """Reasoning time (s): first output event − first reasoning event; ``None`` without streamed reasoning first.

    When reasoning was streamed before the output, the first content event is reasoning,
    so this is ``chunk_ns[first_output_chunk] − chunk_ns[0]`` (= TTFO − TTFT).
    """
    i = rec.first_output_chunk
    if i <= 0:
        return None
    return (rec.chunk_ns[i] - rec.chunk_ns[0]) * _NS


def hidden_reasoning(rec: RequestRecord) -> bool:
    """Whether the server reported reasoning tokens (usage) that the stream never showed."""
    return rec.reasoning_tokens_from_usage and rec.reasoning_tokens > 0 and rec.reasoning_chunks == 0


def settle_reasoning(
    rec: RequestRecord,
    first_output_chunk: int,
    reasoning_chunks: int,
    reasoning_extra_tokens: int,
    usage_reasoning: int | None,
) -> None:
    """Fix the channel fields of a finished record from what the adapter noted (``StreamState``).

    ``first_output_chunk``: index among content events of the first output event, as
    noted by an adapter with a reasoning channel; an adapter without one notes nothing
    (``reasoning_chunks == 0``), and then every content event is output (index 0).
    Reasoning tokens: ``usage_reasoning`` when the server sent it, else
    ``reasoning_chunks + reasoning_extra_tokens`` (one per reasoning event, plus what
    the server stated beyond one).
    """
    n = len(rec.chunk_ns)
    if reasoning_chunks == 0:
        first_output_chunk = 0 if n else -1
    rec.first_output_chunk = first_output_chunk if 0 <= first_output_chunk < n else -1
    rec.reasoning_chunks = reasoning_chunks
    if usage_reasoning is not None:
        rec.reasoning_tokens = usage_reasoning
        rec.reasoning_tokens_from_usage = True
    else:
        rec.reasoning_tokens = reasoning_chunks + reasoning_extra_tokens
        rec.reasoning_tokens_from_usage = False


def slo_missed(rec: RequestRecord, slo: SLO) -> tuple[str, ...]:
    """The SLO keys a *successful* request missed (empty = it is a good request); see the module notes.

    ``ttft_ms``: TTFT > limit (or no content at all); ``tpot_ms``: TPOT > limit (a one-token
    answer has no TPOT and meets it); ``e2e_ms``: E2E > limit. Called once per request.
    """
    missed: tuple[str, ...] = ()
    chunks = rec.chunk_ns
    origin = origin_ns(rec)
    # In integer ns against the limit in ns (no rounding at the limit: 91 ms meets e2e_ms=91).
    if slo.ttft_ms is not None and (not chunks or chunks[0] - origin > slo.ttft_ms * 1e6):
        missed += ("ttft_ms",)
    tokens = rec.output_tokens
    if slo.tpot_ms is not None and tokens >= 2 and chunks and chunks[-1] - chunks[0] > slo.tpot_ms * 1e6 * (tokens - 1):
        missed += ("tpot_ms",)
    if slo.e2e_ms is not None and rec.end_ns - origin > slo.e2e_ms * 1e6:
        missed += ("e2e_ms",)
    return missed


def attainment(good: int, ok: int, errors: int) -> float | None:
    """SLO attainment: ``good / (ok + errors)`` (None when nothing finished)."""
    finished = ok + errors
    return good / finished if finished else None


def goodput_per_s(good: int, duration_s: float) -> float:
    """Goodput: good requests (or their output tokens) per second of test time (0 without time)."""
    return good / duration_s if duration_s > 0 else 0.0


def error_backoff_s(backoff_ms: int) -> float:
    """User-seconds spent in error backoff: the sum over users of every wait after a failed request (ms counter / 1000).

    Not test time: 2 users waiting 3 s each is 6 s. Per user, ``error_backoff_s / users`` of
    the test went to waiting instead of sending.
    """
    return backoff_ms / 1000.0


def prefix_cache_hit_ratio(cached_prompt_tokens: int, stated_prompt_tokens: int) -> float | None:
    """Cached prompt tokens / prompt tokens of the requests whose answer stated ``cached_tokens`` (None: none did)."""
    if stated_prompt_tokens <= 0:
        return None
    return cached_prompt_tokens / stated_prompt_tokens


def settle_token_counts(rec: RequestRecord, usage_prompt: int | None, usage_completion: int | None) -> None:
    """Fix ``output_tokens``/``input_tokens`` of a finished record from usage or counting."""
    if usage_completion is not None:
        rec.output_tokens = usage_completion
        rec.output_tokens_from_usage = True
    else:
        rec.output_tokens = rec.counted_tokens
        rec.output_tokens_from_usage = False
    if usage_prompt is not None:
        rec.input_tokens = usage_prompt
        rec.input_tokens_from_usage = True


def server_queue_s(rec: RequestRecord) -> float | None:
    """Server queue time (s) as the server reported it; ``None`` without it."""
    q = rec.server_queue_ms
    return None if q is None else q * _MS


def prefill_s(rec: RequestRecord) -> float | None:
    """Prefill (s): server TTFT − server queue, i.e. scheduling to first token as the server reported it."""
    p = rec.server_prefill_ms
    return None if p is None else p * _MS


def gateway_s(rec: RequestRecord) -> float | None:
    """Gateway (s): client TTFT − server TTFT (queue + prefill), clamped at 0; ``None`` unless the server reported both."""
    q, p = rec.server_queue_ms, rec.server_prefill_ms
    ttft = _sent_ttft_s(rec)
    if q is None or p is None or ttft is None:
        return None
    return max(0.0, ttft - (q + p) * _MS)


def _sent_ttft_s(rec: RequestRecord) -> float | None:
    """TTFT from the actual send (= TTFT − client wait in an open loop): what gateway, queue and prefill split."""
    if not rec.chunk_ns:
        return None
    return (rec.chunk_ns[0] - rec.start_ns) * _NS


def decode_s(rec: RequestRecord) -> float | None:
    """Decode (s): E2E − TTFT (client side); ``None`` without a first token."""
    ttft = ttft_s(rec)
    if ttft is None:
        return None
    return max(0.0, e2e_s(rec) - ttft)


def tail_parts(rec: RequestRecord) -> tuple[float, float, float, float, float] | None:
    """Shares of TTFT (client_wait, gateway, server_queue, prefill, other) summing to 1; ``None`` without server timing.

    ``client_wait``: an open loop's wait for a free user before the send (0 in a closed loop);
    the server's timing splits the rest (:func:`_sent_ttft_s`). ``other``: what it leaves
    unexplained (0 for vLLM; llama.cpp's slot wait + network). Shares are clamped to [0, 1]:
    a server clock a little ahead never gives negative parts.
    """
    p = rec.server_prefill_ms
    sent = _sent_ttft_s(rec)
    if p is None or not sent:
        return None
    full = ttft_s(rec) or sent
    wait = min(1.0, (full - sent) / full) if full > sent else 0.0
    k = 1.0 - wait  # the sent part's share
    q = rec.server_queue_ms
    prefill = min(1.0, p * _MS / sent)
    if q is None:
        return wait, 0.0, 0.0, prefill * k, (1.0 - prefill) * k
    queue = min(1.0 - prefill, q * _MS / sent)
    return wait, (1.0 - prefill - queue) * k, queue * k, prefill * k, 0.0
