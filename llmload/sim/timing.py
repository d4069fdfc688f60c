"""Per-request server timing in the simulator: the true queue, prefill and decode times of a request,
written in the format a real server uses (``--per-request-timing``).

* ``vllm`` — a top-level ``"metrics"`` object in the final ``choices: []`` usage chunk,
  as vLLM's ``--enable-per-request-metrics`` sends it: ``time_to_first_token_ms`` (first
  token − scheduled), ``generation_time_ms`` (last − first token), ``queue_time_ms``
  (scheduled − arrival), ``mean_itl_ms`` (when more than one token), ``tokens_per_second``
  (tokens / (last token − scheduled)). Real vLLM also wants ``"include_metrics": true`` in
  the request; the simulator sends it whenever the usage chunk is sent.
* ``llamacpp`` — ``"timings"`` beside usage, as llama-server sends it: ``cache_n``,
  ``prompt_n`` (prompt tokens computed), ``prompt_ms`` (scheduled → first token),
  ``prompt_per_token_ms``, ``prompt_per_second``, ``predicted_n``, ``predicted_ms``
  (first → last token), ``predicted_per_token_ms``, ``predicted_per_second``; no queue.
* ``off`` — nothing.

Times come from the engine's handle of the request (loop seconds): the engine model's
``Seq`` (``t_arrival``, ``t_scheduled`` at its first admission, ``t_first``, ``t_last``);
the fixed-latency engine schedules a request on arrival, so its queue time is 0.
"""

from __future__ import annotations

from typing import Any

__all__ = ["TIMING_FORMATS", "ServerTimes", "server_times", "timing_fields"]

TIMING_FORMATS = ("vllm", "llamacpp", "off")

#: (queue, prefill, decode) in seconds.
ServerTimes = tuple[float, float, float]


def server_times(seq: Any) -> ServerTimes | None:
    """True (queue, prefill, decode) of a finished request from the engine's handle; None when unknown."""
    if seq is None:
        return None
    arrival = getattr(seq, "t_arrival", None)
    if arrival is None:
        arrival = getattr(seq, "t0", None)
    scheduled = getattr(seq, "t_scheduled", None)
    if scheduled is None:
        scheduled = arrival  # the fixed-latency engine: scheduled on arrival
    first, last = getattr(seq, "t_first", None), getattr(seq, "t_last", None)
    if arrival is None or first is None or last is None:
        return None
    return max(0.0, scheduled - arrival), max(0.0, first - scheduled), max(0.0, last - first)


def _num(x: float) -> bytes:
    return repr(round(x, 3)).encode()


def timing_fields(fmt: str, times: ServerTimes | None, prompt: int, generated: int, cached: int | None) -> bytes:
    """``,"metrics":{...}`` / ``,"timings":{...}`` to append inside the final chunk's object, or b""."""
    if times is None or fmt == "off":
        return b""
    queue, prefill, decode = (t * 1000.0 for t in times)
    if fmt == "vllm":
        parts = [b'"time_to_first_token_ms":' + _num(prefill), b'"generation_time_ms":' + _num(decode),
                 b'"queue_time_ms":' + _num(queue)]  # fmt: skip
        if generated > 1:
            parts.append(b'"mean_itl_ms":' + _num(decode / (generated - 1)))
        inference = prefill + decode
        if inference > 0:
            parts.append(b'"tokens_per_second":' + _num(generated / inference * 1000.0))
        return b',"metrics":{' + b",".join(parts) + b"}"
    cache_n = cached or 0
    prompt_n = max(0, prompt - cache_n)
    per = lambda ms, n: _num(ms / n) if n else b"0.0"  # noqa: E731
    rate = lambda ms, n: _num(n / ms * 1000.0) if ms > 0 else b"0.0"  # noqa: E731
    return (
        b',"timings":{"cache_n":%d,"prompt_n":%d,"prompt_ms":%b,"prompt_per_token_ms":%b,"prompt_per_second":%b,'
        b'"predicted_n":%d,"predicted_ms":%b,"predicted_per_token_ms":%b,"predicted_per_second":%b}'
        % (cache_n, prompt_n, _num(prefill), per(prefill, prompt_n), rate(prefill, prompt_n),
           generated, _num(decode), per(decode, generated), rate(decode, generated))
    )  # fmt: skip
