"""The embedded LLM serving simulator: an OpenAI-compatible streaming server with an engine model.

Two modes (:mod:`.config`): fixed latency (:mod:`.latency_model` says when each token is due,
:mod:`.engine` drives every live request with one timer) and the engine model of a
continuous-batching server (``docs/simulator.md``). One concept per module:

* :mod:`~llmload.sim.config` — :class:`SimConfig`, the simulator's configuration, built once from
  the command line (:func:`~llmload.sim.config.add_arguments`, :func:`~llmload.sim.config.config_from_args`);
* :mod:`~llmload.sim.latency_model` — fixed latency: when each output token of a request is due
  (:class:`~llmload.sim.latency_model.FixedLatencyModel`);
* :mod:`~llmload.sim.cold_server` — a cold start in the fixed-latency mode (``--cold-start-s``,
  ``--cold-start-ttft-ms``: :class:`~llmload.sim.cold_server.ColdStartModel`);
* :mod:`~llmload.sim.engine` — :class:`~llmload.sim.engine.FixedLatencyEngine`: one timer that emits the
  due tokens of every live request;
* :mod:`~llmload.sim.params` — :class:`EngineParams`, every knob of the engine model (scheduler, step
  cost, KV cache, model, GPU);
* :mod:`~llmload.sim.presets` — named engine configurations (``--preset``), one bottleneck each;
* :mod:`~llmload.sim.engine_toml` — ``llmload fit``'s ``engine.toml`` read into :class:`EngineParams`
  (``--engine-file``: :func:`~llmload.sim.engine_toml.read_engine_file`);
* :mod:`~llmload.sim.scheduler` — :class:`~llmload.sim.scheduler.Scheduler`: batching, chunked prefill,
  preemption (which tokens of which requests run in the next step);
* :mod:`~llmload.sim.kvcache` — the KV cache as fixed-size blocks, paged or contiguous
  (:func:`~llmload.sim.kvcache.make_pool`);
* :mod:`~llmload.sim.prefix` — automatic prefix caching, vLLM-style: full blocks named by a hash of
  the prompt up to them (:class:`~llmload.sim.prefix.PrefixCachingPool`);
* :mod:`~llmload.sim.cost` — :class:`~llmload.sim.cost.CostModel`: one step's time and the bytes it moves;
* :mod:`~llmload.sim.batching` — :class:`~llmload.sim.batching.BatchingEngine`, the engine model in
  real time, one timer per step;
* :mod:`~llmload.sim.virtual` — the engine model on a virtual clock: :func:`~llmload.sim.virtual.replay`
  of an arrival sequence without waiting (tests, presets, ``llmload predict``);
* :mod:`~llmload.sim.gpu` — :class:`~llmload.sim.gpu.SimulatedGpu`: utilization, memory and power from
  the step mix;
* :mod:`~llmload.sim.metrics` — the engine's metrics in vLLM's names, as Prometheus text (``/metrics``);
* :mod:`~llmload.sim.timing` — per-request server timing (true queue, prefill, decode times) in a
  real server's format (``--per-request-timing``);
* :mod:`~llmload.sim.api` — the OpenAI-compatible wire format: request fields in, SSE bytes out;
* :mod:`~llmload.sim.image_parts` — image parts: decoded and checked, charged as patch tokens
  (``ceil(W/28) * ceil(H/28)`` per image: :func:`~llmload.sim.image_parts.patch_tokens`);
* :mod:`~llmload.sim.api_messages` — the Anthropic Messages endpoint (``POST /v1/messages``);
* :mod:`~llmload.sim.api_responses` — the OpenAI Responses endpoint (``POST /v1/responses``);
* :mod:`~llmload.sim.embeddings` — the embeddings endpoint (``POST /v1/embeddings``): prefill-only requests,
  deterministic vectors;
* :mod:`~llmload.sim.tools` — tool-call answers to requests that carry ``tools``
  (``--tool-call-share``, ``tool_choice``), chat's stream;
* :mod:`~llmload.sim.tool_events` — tool-call answers in the Responses and Messages shapes, and how an
  answer's tokens make its calls;
* :mod:`~llmload.sim.sinks` — response writers ("sinks"): what the engine calls as a request's tokens
  come due;
* :mod:`~llmload.sim.http11` — a lean HTTP/1.1 server-side codec: request parsing, response framing;
* :mod:`~llmload.sim.http_server` — :class:`SimServer`: connections, routing, ``/metrics``;
  :func:`~llmload.sim.http_server.serve`, :func:`~llmload.sim.http_server.run_in_thread`;
* :mod:`~llmload.sim.runner` — running an asyncio server: a precise event loop, until a signal, or
  in a thread;
* :mod:`~llmload.sim.child` — the simulator as a child process: :func:`~llmload.sim.child.start_sim_process`
  starts it and waits until it answers, :class:`~llmload.sim.child.SimProcess` stops it by PID.

Entry points::

    serve(config, ready)             # blocking, until SIGINT/SIGTERM  (python -m llmload.sim)
    with run_in_thread(config) as s:  # in-process, s.url
    with start_sim_process(config) as p:  # child process, p.url, p.pid
"""

from __future__ import annotations

from llmload.sim.child import SimProcess, SimStartError, start_sim_process
from llmload.sim.config import SimConfig, add_arguments, config_from_args, config_to_args
from llmload.sim.http_server import SimServer, run_in_thread, serve
from llmload.sim.params import EngineParams
from llmload.sim.presets import PRESETS, preset_params

__all__ = [
    "PRESETS",
    "EngineParams",
    "SimConfig",
    "SimProcess",
    "SimServer",
    "SimStartError",
    "add_arguments",
    "config_from_args",
    "config_to_args",
    "preset_params",
    "run_in_thread",
    "serve",
    "start_sim_process",
]
