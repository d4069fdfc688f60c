"""--host URL1,URL2,...: the targets, and their shared round-robin."""

from __future__ import annotations

import pytest

from llmload.config.targets import round_robin, split_hosts
from llmload.errors import ConfigError


def test_split_hosts_reads_one_or_several_urls():
    assert split_hosts("http://a:1") == ("http://a:1",)
    assert split_hosts("http://a:1/, http://b:2") == ("http://a:1", "http://b:2")
    with pytest.raises(ConfigError, match="an empty URL between commas"):
        split_hosts("http://a:1,,http://b:2")


def test_one_round_robin_per_host_value_shared_by_every_caller():
    assert round_robin("http://a:1") is None
    rr = round_robin("http://a:1,http://b:2,http://c:3")
    assert rr is round_robin("http://a:1,http://b:2,http://c:3")
    assert [rr.next() for _ in range(4)] == ["http://a:1", "http://b:2", "http://c:3", "http://a:1"]
