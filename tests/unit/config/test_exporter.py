"""The exporter's flags, validated once."""

from __future__ import annotations

import pytest
from locust.argument_parser import get_parser

from llmload.config import ExporterConfig, add_arguments, read
from llmload.errors import ConfigError


def parse(args: list[str]) -> ExporterConfig:
    parser = get_parser()
    add_arguments(parser)
    return ExporterConfig.from_values(read(parser.parse_args(["--host", "http://127.0.0.1:9", *args])))


def test_flags_are_validated_once(monkeypatch):
    monkeypatch.delenv("LLMLOAD_NO_EXPORTER", raising=False)  # the suite's default (tests/conftest.py)
    c = parse([])
    assert (c.enabled, c.host, c.port, c.linger_s) == (True, "127.0.0.1", 9646, 0.0)  # local, as the master's port
    c = parse(["--exporter-port", "0", "--exporter-linger", "2s", "--exporter-host", "0.0.0.0"])
    assert (c.port, c.linger_s, c.host) == (0, 2.0, "0.0.0.0")
    assert not parse(["--no-exporter"]).enabled
    with pytest.raises(ConfigError, match=r"--exporter-port 70000: must be 1\.\.65535"):
        parse(["--exporter-port", "70000"])
    with pytest.raises(ConfigError, match="--exporter-linger"):
        parse(["--exporter-linger", "soon"])
