"""The embedded LLM serving simulator: an OpenAI-compatible streaming server with a latency model.

Layers: :mod:`.config` (frozen settings, CLI flags), :mod:`.model` (when each token is
due), :mod:`.engine` (one timer driving every live request), :mod:`.api` (OpenAI wire
format), :mod:`.http11` (lean HTTP/1.1 codec), :mod:`.server` (connections, routing),
:mod:`.runner` (event loop, signals, threads), :mod:`.process` (as a child process).

Entry points::

    serve(config, ready)             # blocking, until SIGINT/SIGTERM  (python -m llmload.sim)
    with run_in_thread(config) as s:  # in-process, s.url
    with start_sim_process(config) as p:  # child process, p.url, p.pid
"""

from __future__ import annotations

from llmload.sim.config import SimConfig, add_arguments, config_from_args, config_to_args
from llmload.sim.process import SimProcess, SimStartError, start_sim_process
from llmload.sim.server import SimServer, run_in_thread, serve

__all__ = [
    "SimConfig",
    "SimProcess",
    "SimServer",
    "SimStartError",
    "add_arguments",
    "config_from_args",
    "config_to_args",
    "run_in_thread",
    "serve",
    "start_sim_process",
]
