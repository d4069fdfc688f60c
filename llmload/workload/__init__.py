"""The workload: request classes, profiles, the mix, prompt synthesis and datasets.

``load_profile("default")`` → :class:`Profile`; one :class:`WorkloadSampler` per user turns
it into a stream of :class:`RequestSample` values for the endpoint adapters.
"""

from __future__ import annotations

from llmload.workload.datasets import Dataset, DatasetEntry, estimate_tokens, load_dataset
from llmload.workload.distributions import Distribution, parse_distribution
from llmload.workload.mix import Mix
from llmload.workload.profiles import (
    Profile,
    PromptSource,
    RequestClass,
    available_profiles,
    load_profile,
    profile_from_dict,
)
from llmload.workload.prompts import SharedPrefix, synthetic_prompt
from llmload.workload.sampler import WorkloadSampler
from llmload.workload.types import RequestSample

__all__ = [
    "Dataset",
    "DatasetEntry",
    "Distribution",
    "Mix",
    "Profile",
    "PromptSource",
    "RequestClass",
    "RequestSample",
    "SharedPrefix",
    "WorkloadSampler",
    "available_profiles",
    "estimate_tokens",
    "load_dataset",
    "load_profile",
    "parse_distribution",
    "profile_from_dict",
    "synthetic_prompt",
]
