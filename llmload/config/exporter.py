"""The exporter's flags, validated once into a frozen :class:`ExporterConfig` (served by :mod:`llmload.exporter`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from llmload.config.flags import flag
from llmload.config.values import parse_duration
from llmload.errors import ConfigError

__all__ = ["DEFAULT_PORT", "ExporterConfig"]

#: Default port of the dedicated listener (not in Prometheus' allocation list; free in practice).
DEFAULT_PORT: int = flag("exporter_port").default


@dataclass(frozen=True, slots=True)
class ExporterConfig:
    """``--exporter-port`` (0 = no dedicated listener), ``--exporter-host``, ``--exporter-linger``, ``--no-exporter``."""

    enabled: bool = True
    host: str = flag("exporter_host").default
    port: int = DEFAULT_PORT
    linger_s: float = parse_duration(flag("exporter_linger").default, "--exporter-linger") or 0.0

    @classmethod
    def from_values(cls, values: Mapping[str, Any]) -> ExporterConfig:
        port = values["exporter_port"]
        if port is None or not 0 <= int(port) <= 65535:
            raise ConfigError(f"--exporter-port {port}: must be 1..65535 (0 = no dedicated listener)")
        return cls(
            enabled=not values["no_exporter"],
            host=values["exporter_host"] or flag("exporter_host").default,
            port=int(port),
            linger_s=parse_duration(values["exporter_linger"], "--exporter-linger") or 0.0,
        )
