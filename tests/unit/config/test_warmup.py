"""``--warmup`` / ``--warmup-requests``: read through the config door, bad input one line before any load."""

from __future__ import annotations

import pytest

from llmload.config import RunConfig
from llmload.config.warmup import WarmupConfig
from llmload.errors import ConfigError


def test_off_by_default_and_not_in_the_public_config():
    c = RunConfig.from_values({})
    assert not c.warmup.on and "warmup" not in c.public_dict()


def test_a_duration_and_a_count_are_read_and_recorded():
    c = RunConfig.from_values({"warmup": "6s", "warmup_requests": "128"})
    assert c.warmup == WarmupConfig(6.0, 128) and c.warmup.on
    assert c.public_dict()["warmup"] == {"duration_s": 6.0, "requests": 128}
    assert RunConfig.from_values({"warmup": "1m"}).warmup.duration_s == 60.0


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"warmup": "soon"}, "--warmup 'soon'"),
        ({"warmup": "-5s"}, "--warmup '-5s': must be a duration >= 0"),
        ({"warmup_requests": "-3"}, "--warmup-requests -3: must be >= 0"),
        ({"warmup_requests": "many"}, "--warmup-requests 'many': must be an integer"),
        ({"warmup": "6s", "ladder": "1,2"}, "--warmup with a ladder: each ladder step has its own warm-up; use --step-warmup"),
        ({"warmup_requests": 5, "rate_ladder": "1,2", "arrival": "poisson"}, "--warmup-requests with a ladder"),
    ],
)
def test_bad_input_is_one_clear_error(values, says):
    with pytest.raises(ConfigError) as e:
        RunConfig.from_values(values)
    assert says in str(e.value) and "\n" not in str(e.value)
