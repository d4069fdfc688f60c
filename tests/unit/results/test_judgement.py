"""The verdict's rate-ladder figures survive the summary: written, read back, written again."""

from __future__ import annotations

import json

from llmload.results import from_summary, to_summary
from llmload.results.judgement import Verdict


def test_a_rate_ladder_verdict_keeps_its_recommended_rate_and_a_concurrency_verdict_has_none():
    v = Verdict("breach", "", 0.5, safe_rate=2.0, rate_ladder=True, recommended_limit=3, recommended_rate=1.0)
    d = json.loads(json.dumps(v.to_dict()))
    assert (d["safe_rate"], d["recommended_rate"], d["recommended_limit"]) == (2.0, 1.0, 3)
    back = Verdict.from_dict(d)
    assert back.rate_ladder and back.recommended_rate == 1.0 and back == v
    closed = Verdict("ok", "", 0.5, safe_users=4, recommended_limit=4).to_dict()
    assert "recommended_rate" not in closed and "safe_rate" not in closed
    assert Verdict.from_dict(closed).recommended_rate is None


def test_the_recommended_rate_round_trips_through_a_whole_summary():
    from tests.helpers.samples import rate_ladder_summary

    s = rate_ladder_summary()
    s["verdict"]["recommended_rate"] = 2.0
    again = to_summary(from_summary(json.loads(json.dumps(s))))
    assert again["verdict"]["recommended_rate"] == 2.0 and again["verdict"]["safe_rate"] == 2.0
