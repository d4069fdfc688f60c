"""Per-request server timing, read from the last streamed message when a server sends it.

Two formats exist in the wild; both ride on the *final* chunk only, so reading them
costs nothing per token:

* **vLLM** (``--enable-per-request-metrics``, and the request's ``"include_metrics":
  true``; on a stream only in the ``choices: []`` usage chunk, so also
  ``stream_options.include_usage``): a top-level ``"metrics"`` object,
  ``queue_time_ms`` (scheduled − queued), ``time_to_first_token_ms`` (first token −
  scheduled: the engine's prefill, *excluding* its queue), ``generation_time_ms`` (last
  token − first token), ``mean_itl_ms``, ``tokens_per_second``; a field is left out
  (or ``null``) when the engine lacks its timestamps.
* **llama.cpp** ``llama-server``: a top-level ``"timings"`` object on the last chunk
  (the usage chunk with ``include_usage``, else the finish chunk; on ``/v1/responses``
  the ``response.completed`` event's data, beside ``response``): ``prompt_n``,
  ``prompt_ms`` (prompt processing, after the slot was taken), ``cache_n``,
  ``predicted_n``, ``predicted_ms`` (generation), ``predicted_per_token_ms``, ...
  llama.cpp reports no queue (slot wait) time: ``server_queue_ms`` stays ``None``.

Other servers (SGLang, TGI, Ollama, OpenAI, Anthropic, OpenAI's Responses API) send no
per-request timing: every field stays ``None`` and the phases built on them are absent
(``coverage`` says how many requests had them). Values of the wrong type are ignored,
never an error: this is optional evidence, never required.

The normalised fields on :class:`~llmload.adapters.base.StreamState` (and then on the
record): ``server_timing`` (``"vllm"`` | ``"llamacpp"``), ``server_queue_ms``,
``server_prefill_ms`` (from scheduling to the first token), ``server_decode_ms``.
"""

from __future__ import annotations

from typing import Any

from llmload.adapters.base import StreamState

__all__ = ["record_server_timing"]


def _ms(obj: dict[str, Any], key: str) -> float | None:
    v: Any = obj.get(key)  # any JSON value: only a number >= 0 is kept
    if type(v) in (int, float) and v >= 0:
        return float(v)
    return None


def record_server_timing(state: StreamState, obj: dict[str, Any]) -> None:
    """Store the ``metrics`` (vLLM) or ``timings`` (llama.cpp) of a final chunk ``obj`` on ``state``."""
    metrics = obj.get("metrics")
    if type(metrics) is dict:
        prefill = _ms(metrics, "time_to_first_token_ms")
        queue = _ms(metrics, "queue_time_ms")
        if prefill is not None or queue is not None:
            state.server_timing = "vllm"
            state.server_queue_ms = queue
            state.server_prefill_ms = prefill
            state.server_decode_ms = _ms(metrics, "generation_time_ms")
        return
    timings = obj.get("timings")
    if type(timings) is dict:
        prefill = _ms(timings, "prompt_ms")
        if prefill is not None:
            state.server_timing = "llamacpp"
            state.server_queue_ms = None
            state.server_prefill_ms = prefill
            state.server_decode_ms = _ms(timings, "predicted_ms")
