"""The target rules: every request failing (target_unreachable), most refused with HTTP 429 (rate_limited)."""

from __future__ import annotations

from tests.helpers.analysis_data import analyzed, stats, summary

HOST = {"host": "https://gateway.example"}


def _refused(ok: int, n429: int, retry_afters: int = 0, retry_after_s: float | None = None, **kinds: int) -> dict:
    overall = stats(ttft=None if not ok else 50.0, tpot=None if not ok else 20.0, ok=ok, errors=n429 + sum(kinds.values()),
                    kinds={"http_429": n429, **kinds})  # fmt: skip
    overall["errors_examples"] = {"http_429": "Rate limit reached for requests per min (RPM): Limit 3, Used 3"}
    overall.update(retry_afters=retry_afters, retry_after_s=retry_after_s)
    return overall


def test_every_request_refused_with_429_is_rate_limited_not_unreachable():
    """Issue 22: 100 % HTTP 429 with Retry-After read 'Target unreachable / every request fails' and no word of rate limits."""
    s = analyzed(summary([], saturated=True, overall=_refused(0, 40, 40, 2.0), users_max=2, duration_s=10.0, config=HOST))
    top = s["findings"][0]
    assert top["id"] == "rate_limited" and top["layer"] == "gateway" and top["confidence"] == "high"
    assert top["title"] == "Rate limited: https://gateway.example refused 40 of 40 requests with HTTP 429 (Too Many Requests)"
    assert "40 of 40 finished requests failed (0 ok): http_429 40" in top["evidence_text"][0]
    assert "40 refusals carried Retry-After, asking for 2 s on average" in top["evidence_text"]
    assert "http_429: Rate limit reached for requests per min (RPM): Limit 3, Used 3" in top["evidence_text"]
    assert "Raise that limit" in top["change"] and "--rate" in top["change"] and "--error-backoff" in top["change"]
    assert top["evidence"] == {"requests_refused": 40, "requests_finished": 40, "retry_afters": 40, "retry_after_s": 2.0}
    ids = [f["id"] for f in s["findings"]]
    assert "target_unreachable" not in ids and "load_generator_saturated" not in ids


def test_most_requests_refused_is_rate_limited_ranked_first_and_says_when_no_retry_after_came():
    s = analyzed(summary([], overall=_refused(15, 25), duration_s=10.0))
    top = s["findings"][0]
    assert top["id"] == "rate_limited" and "refused 25 of 40 requests" in top["title"]
    assert "no refusal carried a Retry-After header" in top["evidence_text"]
    assert "retry_after_s" not in top["evidence"]  # unknown: left out


def test_failures_that_are_mostly_not_429_stay_target_unreachable():
    s = analyzed(summary([], overall=_refused(0, 10, connection=30), duration_s=10.0))
    ids = [f["id"] for f in s["findings"]]
    assert ids[0] == "target_unreachable" and "rate_limited" not in ids


def test_a_few_429s_are_load_shedding_not_a_rate_limited_run():
    s = analyzed(summary([], overall=_refused(30, 10), duration_s=10.0))
    ids = [f["id"] for f in s["findings"]]
    assert "rate_limited" not in ids and "target_unreachable" not in ids and "errors_shedding" in ids
