"""The workload: request classes, profiles, the mix, prompt synthesis, datasets and traces.

``load_profile("default")`` → :class:`Profile`; one :class:`WorkloadSampler` per user turns
it into a stream of :class:`RequestSample` values for the endpoint adapters (``next()``),
or of conversations (``start_session()`` → :class:`Session`, turn by turn).

* :mod:`~llmload.workload.profiles` — :class:`Profile` and its :class:`RequestClass` es (weights in the
  mix, lengths, prompts, SLOs, prefixes, turns): :func:`load_profile`, :func:`profile_from_dict`;
* :mod:`~llmload.workload.distributions` — token-count distributions (fixed, uniform, normal,
  log-normal, choice) and durations: :func:`parse_distribution`;
* :mod:`~llmload.workload.mix` — :class:`Mix`: which class a user sends next, an exact, deterministic interleave;
* :mod:`~llmload.workload.sampler` — :class:`WorkloadSampler`, the per-user request stream: mix → class →
  prompt and lengths → :class:`RequestSample`;
* :mod:`~llmload.workload.lean_random` — :class:`~llmload.workload.lean_random.LeanRandom`, each user's
  generator: ``random.Random``'s interface over SplitMix64, 8 bytes of state;
* :mod:`~llmload.workload.request_types` — :class:`RequestSample`, the value the workload hands the adapters;
* :mod:`~llmload.workload.prompts` — synthetic prompt text sized to a token count
  (:func:`synthetic_prompt`, :class:`SharedPrefix`);
* :mod:`~llmload.workload.prefixes` — shared prefixes: N fixed openings of T tokens, drawn by
  popularity (:class:`PrefixSpec`);
* :mod:`~llmload.workload.conversation` — :class:`Session`: a conversation of one class, turn by turn,
  each turn re-sending the whole history;
* :mod:`~llmload.workload.agent` — agent classes: ``tools``, tool-call turns and their synthetic
  results, per-turn output lengths (:class:`AgentSession`, :func:`parse_agent`);
* :mod:`~llmload.workload.fanout` — an agent class's sub-agent fan-out: ``fanout = {every, agents}``, the
  children's answers as ``delegate`` tool results (:class:`~llmload.workload.fanout.FanoutSpec`);
* :mod:`~llmload.workload.images` — image classes: ``images``, generated PNGs and JPEGs unique per
  image, in single requests and conversations (:class:`ImageSource`, :func:`parse_images`);
* :mod:`~llmload.workload.image_encoding` — generated images' bytes: a cached base, fresh top rows
  compressed per image (PNG, JPEG);
* :mod:`~llmload.workload.datasets` — prompt datasets (JSONL or JSON files of real prompts), loaded once
  per process: :func:`load_dataset`;
* :mod:`~llmload.workload.traces` — request traces in the Mooncake format (``--trace``): read, validate,
  turn into prompts, generate examples (:func:`load_trace`);
* :mod:`~llmload.workload.trace_sessions` — sessions in a trace: the keys that make entries the turns of a
  recorded conversation or agent session (:class:`~llmload.workload.trace_sessions.SessionTurn`);
* :mod:`~llmload.workload.replay_session` — a trace's session replayed turn by turn, each after the previous
  answer and its recorded wait (:class:`~llmload.workload.replay_session.ReplaySession`);
* :mod:`~llmload.workload.trace_formats` — other published LLM traces converted to the Mooncake format;
* :mod:`~llmload.workload.trace_records` — a run's ``--records-jsonl`` as a trace, its sessions kept;
* :mod:`~llmload.workload.trace_tool` — ``llmload trace``: look at, generate, convert and record request traces.
"""

from __future__ import annotations

from llmload.workload.conversation import Session
from llmload.workload.datasets import Dataset, DatasetEntry, estimate_tokens, load_dataset
from llmload.workload.distributions import Distribution, Duration, parse_distribution, parse_duration
from llmload.workload.mix import Mix
from llmload.workload.prefixes import PrefixSpec
from llmload.workload.profiles import (
    Profile,
    PromptSource,
    RequestClass,
    available_profiles,
    load_profile,
    profile_from_dict,
)
from llmload.workload.prompts import SharedPrefix, synthetic_prompt
from llmload.workload.request_types import RequestSample
from llmload.workload.sampler import WorkloadSampler
from llmload.workload.traces import Trace, TraceEntry, TracePrompts, load_trace

__all__ = [
    "Dataset",
    "DatasetEntry",
    "Distribution",
    "Duration",
    "Mix",
    "PrefixSpec",
    "Profile",
    "PromptSource",
    "RequestClass",
    "RequestSample",
    "Session",
    "SharedPrefix",
    "Trace",
    "TraceEntry",
    "TracePrompts",
    "WorkloadSampler",
    "available_profiles",
    "estimate_tokens",
    "load_dataset",
    "load_profile",
    "load_trace",
    "parse_distribution",
    "parse_duration",
    "profile_from_dict",
    "synthetic_prompt",
]
