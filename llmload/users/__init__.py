"""Locust users that stream LLM responses and time every token."""

from __future__ import annotations

from llmload.users.llm_user import LLMUser

__all__ = ["LLMUser"]
