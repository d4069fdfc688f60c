"""The workload: request classes, profiles, the mix, prompt synthesis, datasets and traces.

``load_profile("default")`` → :class:`Profile`; one :class:`WorkloadSampler` per user turns
it into a stream of :class:`RequestSample` values for the endpoint adapters (``next()``),
or of conversations (``start_session()`` → :class:`Session`, turn by turn).
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
