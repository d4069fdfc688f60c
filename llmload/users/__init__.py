"""Locust users that stream LLM responses and time every token.

* :mod:`~llmload.users.llm_user` — :class:`LLMUser`, the ``FastHttpUser`` that sends one request of the
  workload's next class per iteration, reads its stream and settles the outcome;
* :mod:`~llmload.users.context` — :class:`~llmload.users.context.LoadContext`: what a user needs from
  its process (sampler, adapter, watchdog, headers, ``finish``), attached once per process;
* :mod:`~llmload.users.stream` — :func:`~llmload.users.stream.consume`, the per-event stream loop (read,
  stamp, hand to the adapter): the hot path;
* :mod:`~llmload.users.response_checks` — what a response must be to count as an answer: a success
  status, a stream, complete;
* :mod:`~llmload.users.error_body` — the server's message out of an error body
  (:func:`~llmload.users.error_body.error_message`);
* :mod:`~llmload.users.deadlines` — the ``ttft``/``stall``/``total`` deadlines, enforced by one
  :class:`~llmload.users.deadlines.Watchdog` per process;
* :mod:`~llmload.users.http_pool` — the HTTP layer under Locust's ``FastHttpSession``: pooled
  connections, one retry on a stale one, streamed bodies (:func:`~llmload.users.http_pool.install_keepalive`);
* :mod:`~llmload.users.keepalive` — when a pooled connection may carry another request: the server's
  ``Keep-Alive`` header (:class:`~llmload.users.keepalive.KeepAlivePolicy`);
* :mod:`~llmload.users.backoff_wait` — :class:`~llmload.users.backoff_wait.Backoff`: a user's wait after
  a failed request (``--error-backoff``, ``Retry-After``);
* :mod:`~llmload.users.sub_agents` — an agent session's fan-out: child sessions in greenlets beside their
  waiting parent (:func:`~llmload.users.sub_agents.fan_out`).
* :mod:`~llmload.users.idle_footprint` — less held by an idle user: a cookie jar made at the first
  cookie, Locust's task queue as a list (:func:`~llmload.users.idle_footprint.lighten`).
"""

from __future__ import annotations

from llmload.users.llm_user import LLMUser

__all__ = ["LLMUser"]
