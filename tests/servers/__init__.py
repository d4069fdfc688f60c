"""Servers for tests: ``faulty`` (a misbehaving OpenAI-compatible streaming server)."""
