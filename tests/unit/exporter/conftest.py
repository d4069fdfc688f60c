from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def exporter_on(monkeypatch):
    """The suite turns the exporter off by default (tests/conftest.py); these tests are about it."""
    monkeypatch.delenv("LLMLOAD_NO_EXPORTER", raising=False)
