"""What an :class:`~llmload.users.llm_user.LLMUser` needs from its process: the :class:`LoadContext`.

One object per load-generating process (standalone or ``--worker``) implements it
(:class:`llmload.runtime.load_role.LoadProcess`); :func:`llmload.plugin.install` hands it over with
:func:`attach`, and each user takes it with :func:`context_of` when Locust creates the user
(Locust gives users nothing but the environment). Everything a request reads is behind it:
the sampler of the user's requests, the open-loop arrival tickets, the endpoint adapter, the deadline watchdog, the step key,
headers and framing, the error backoff (and :meth:`LoadContext.backed_off`, its accounting), and :meth:`LoadContext.finish`, which records and publishes the outcome.
The web UI form can change the configuration between tests, so users read these per request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from llmload.adapters.base import Adapter, Framing, RequestSpec
    from llmload.arrivals.dispatcher import Ticket
    from llmload.config.backoff import BackoffSpec
    from llmload.metrics.record import RequestRecord
    from llmload.users.deadlines import Watchdog
    from llmload.workload.replay_session import ReplaySession
    from llmload.workload.request_types import RequestSample
    from llmload.workload.sampler import WorkloadSampler

__all__ = ["LoadContext", "attach", "context_of"]

_ATTRIBUTE = "llmload_load"


class LoadContext(Protocol):
    """The load-process interface of a user (see the module docstring)."""

    @property
    def adapter(self) -> Adapter: ...

    @property
    def watchdog(self) -> Watchdog: ...

    @property
    def sse_parser(self) -> str: ...

    @property
    def steady_step(self) -> int | None:
        """The step key of a request starting now: the ladder step whose steady window runs, else None."""

    def starts_in_warmup(self, now_ns: int) -> bool:
        """Whether a request starting at ``now_ns`` (``perf_counter_ns``) is in the run's warm-up (counts it; once per request)."""

    @property
    def open_loop(self) -> bool:
        """Whether this test's requests follow an arrival schedule (then users take tickets) or the closed loop."""

    def take_ticket(self) -> Ticket:
        """Open loop: the next arrival for a free user (blocks until one is due)."""

    def ticket_sample(self, ticket: Ticket, sampler: WorkloadSampler) -> RequestSample | ReplaySession:
        """Open loop: the request a ticket names (a trace entry's, or one of its class drawn from ``sampler``), or a
        trace's session (the user replays its turns)."""

    def new_sampler(self) -> WorkloadSampler:
        """The request stream of the next user of this process (unique across workers)."""

    @property
    def error_backoff(self) -> BackoffSpec:
        """``--error-backoff``: how long a closed-loop user waits after a failed request."""

    def headers_for(self, spec: RequestSpec) -> dict[str, str]: ...

    def framing_for(self, content_type: str | None) -> Framing | None:
        """How the body is framed; None when ``content_type`` is no stream (the request fails as ``wrong_content_type``)."""

    def backed_off(self, rec: RequestRecord, seconds: float) -> None:
        """A user waited ``seconds`` after the failed request ``rec`` before its next one."""

    def finish(self, rec: RequestRecord) -> None:
        """A finished record (ok, error or interrupted): to llmload's listeners and Locust's statistics."""


def attach(environment: Any, context: LoadContext) -> None:
    """Make ``context`` the load context of ``environment``'s users."""
    setattr(environment, _ATTRIBUTE, context)


def context_of(environment: Any) -> LoadContext:
    """The load context :func:`attach` gave ``environment``; a clear error when llmload is not active."""
    context = getattr(environment, _ATTRIBUTE, None)
    if context is None:
        raise RuntimeError(
            "llmload is not active in this process: call llmload.plugin.activate(locust.events) in the locustfile"
        )
    return context
