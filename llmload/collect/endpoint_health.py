"""Health of each polled endpoint: answered, unreachable, HTTP error, or no known metrics.

An endpoint that fails is reported, never fatal: the run goes on without it, it is tried
again at every poll, and when it answers again its readings are used again. Only
changes are meant to be logged (:meth:`EndpointStatus.failed` and
:meth:`EndpointStatus.answered` say when), not every failed poll.

``status`` in the summary, per role (``engine`` or ``gpu``) of the endpoint:

===============  ==================================================================
``ok``           the last poll answered with metrics of that role
``unreachable``  the last poll got no answer (refused, timeout, DNS); see ``error``
``http_error``   the last poll got an HTTP error (e.g. 404: llama.cpp without ``--metrics``)
``bad_answer``   it answered something that is not a metrics page / query answer
``no_metrics``   it answers, but with no series of that role (e.g. no ``vllm:*``)
===============  ==================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from llmload.jsonvalue import Json

__all__ = ["UNREACHABLE", "EndpointStatus"]

UNREACHABLE = "unreachable"
HTTP_ERROR = "http_error"
BAD_ANSWER = "bad_answer"


@dataclass
class EndpointStatus:
    """One polled URL: counts, first/last answer (wall clock), the last error, what it served."""

    url: str
    source: str = "scrape"  # or "prometheus"
    polls: int = 0
    answers: int = 0
    failures: int = 0
    outages: int = 0  # times it stopped answering after having answered
    first_seen: float | None = None
    last_seen: float | None = None
    down: bool = False
    error: str | None = None
    error_kind: str | None = None
    failed_at: float | None = None
    engine: str | None = None
    gpus: int = 0

    def answered(self, t: float) -> bool:
        """Record an answer at ``t``; True when it failed before (worth one log line)."""
        was_down = self.down
        self.polls += 1
        self.answers += 1
        self.first_seen = self.first_seen if self.first_seen is not None else t
        self.last_seen = t
        self.down = False
        return was_down

    def failed(self, t: float, kind: str, error: str) -> bool:
        """Record a failed poll at ``t``; True when it was not failing already (worth one log line)."""
        first_failure = not self.down
        self.polls += 1
        self.failures += 1
        if first_failure and self.answers:
            self.outages += 1
        self.down = True
        self.error, self.error_kind = error, kind
        if first_failure:
            self.failed_at = t
        return first_failure

    def status(self, role: str) -> str:
        if self.down or not self.answers:
            return self.error_kind or UNREACHABLE
        if role == "engine" and self.engine is None or role == "gpu" and not self.gpus:
            return "no_metrics"
        return "ok"

    def to_dict(self, role: str, t0: float) -> dict[str, Json]:
        """The summary's view of this endpoint in ``role``; times as wall clock and seconds into the test."""
        rel = lambda t: None if t is None else round(t - t0, 3)  # noqa: E731
        wall = lambda t: None if t is None else round(t, 3)  # noqa: E731
        out: dict[str, Json] = {"url": self.url, "source": self.source, "status": self.status(role)}
        if role == "engine":
            out["engine"] = self.engine
        else:
            out["gpus"] = self.gpus
        out.update(
            polls=self.polls,
            answers=self.answers,
            failures=self.failures,
            outages=self.outages,
            first_seen=wall(self.first_seen),
            first_seen_s=rel(self.first_seen),
            last_seen=wall(self.last_seen),
            last_seen_s=rel(self.last_seen),
            error=self.error,
            error_at=wall(self.failed_at) if self.error else None,
            error_at_s=rel(self.failed_at) if self.error else None,
        )
        if out["status"] == "no_metrics" and not self.error:
            out["error"] = _NO_METRICS[role]
        return out


_NO_METRICS = {
    "engine": "no vllm:, sglang:, tgi_ or llamacpp: series in the answer",
    "gpu": "no llmload_gpu_, DCGM_FI_ or nvidia_smi_ series in the answer",
}
