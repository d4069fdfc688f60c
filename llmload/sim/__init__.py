"""The embedded LLM serving simulator: an OpenAI-compatible streaming server with an engine model.

Two modes (:mod:`.config`): fixed latency (:mod:`.model` says when each token is due,
:mod:`.engine` drives every live request with one timer) and the engine model of a
continuous-batching server (``docs/simulator.md``): :mod:`.params` (every knob),
:mod:`.presets` (named bottlenecks), :mod:`.scheduler` (batching, chunked prefill,
preemption), :mod:`.kvcache` (paged or contiguous blocks), :mod:`.cost` (step time and
bytes), :mod:`.batching` (the engine in real time, one timer per step), :mod:`.gpu`
(the simulated GPU), :mod:`.metrics` (vLLM's /metrics). Serving: :mod:`.api` (OpenAI
wire format), :mod:`.sinks` (response writers), :mod:`.http11` (lean HTTP/1.1 codec),
:mod:`.server` (connections, routing), :mod:`.runner` (event loop, signals, threads),
:mod:`.process` (as a child process).

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
