from __future__ import annotations

from tests.helpers.analysis_data import analyzed, stats, step, summary


def _mixed(ok_per_class: int) -> dict:
    return {"short": stats(ok=ok_per_class), "long": stats(ok=ok_per_class)}


def test_too_few_requests_per_class_in_the_baseline_is_inconclusive_with_counts_and_what_to_change():
    s = analyzed(summary([step(0, 1, ok=4, classes=_mixed(2)), step(1, 4, ok=40, ttft=200.0, classes=_mixed(20)),
                          step(2, 8, ok=80, classes=_mixed(40))]))  # fmt: skip
    v = s["verdict"]
    assert v["status"] == "inconclusive"
    assert v["inconclusive"]["judged_status"] == "breach"
    assert v["inconclusive"]["samples"]["baseline"] == {"short": 2, "long": 2}
    assert "short: 2 successful requests in the baseline" in v["note"]
    assert "--step-time" in v["note"] and "--baseline-requests" in v["note"]
    assert v["safe_users"] == 1 and v["breach"]["users"] == 4  # the figures are kept, not trusted


def test_a_thin_step_is_inconclusive_too():
    s = analyzed(summary([step(0, 1, ok=40, classes=_mixed(20)), step(1, 4, ok=40, classes={"short": stats(ok=37),
                          "long": stats(ok=3)})]))  # fmt: skip
    v = s["verdict"]
    assert v["status"] == "inconclusive" and "long: 3 requests at 4 users" in v["note"]
    assert v["inconclusive"]["samples"]["4 users"] == {"short": 37, "long": 3}


def test_enough_requests_per_class_keeps_the_verdict():
    s = analyzed(summary([step(0, 1, ok=40, classes=_mixed(20)), step(1, 4, ok=40, ttft=200.0, classes=_mixed(20))]))
    assert s["verdict"]["status"] == "breach" and s["verdict"]["inconclusive"] is None


def test_a_band_spanning_the_whole_ladder_is_inconclusive():
    wide = {"ttft_ms": [10.0, 400.0], "tpot_ms": [5.0, 80.0]}
    s = analyzed(summary([step(0, 1, ci=wide), step(1, 2, ttft=60.0, ci=wide), step(2, 4, ttft=70.0, ci=wide)]))
    v = s["verdict"]
    assert v["confidence"]["band_users"][1] == 4
    assert v["status"] == "inconclusive", v
    assert "confidence band spans the whole ladder" in v["note"]
    assert v["inconclusive"]["judged_status"] == "ok"


def test_a_narrow_band_keeps_the_verdict():
    narrow = {"ttft_ms": [49.0, 51.0], "tpot_ms": [19.5, 20.5]}
    s = analyzed(summary([step(0, 1, ci=narrow), step(1, 2, ttft=60.0, ci=narrow), step(2, 4, ttft=70.0, ci=narrow)]))
    assert s["verdict"]["status"] == "ok"


def test_every_request_failing_is_the_top_finding_never_client_saturated():
    failing = stats(ttft=None, tpot=None, ok=0, errors=40, kinds={"connection": 40})
    s = analyzed(summary([], saturated=True, overall=failing, users_max=2, duration_s=10.0,
                         errors_examples={"connection": "ConnectionRefusedError: [Errno 111] Connection refused"},
                         config={"host": "http://127.0.0.1:9"}))  # fmt: skip
    top = s["findings"][0]
    assert top["id"] == "target_unreachable"
    assert top["title"] == "Target unreachable / every request fails: no connection to http://127.0.0.1:9"
    assert "40 of 40 finished requests failed (0 ok): connection 40" in top["evidence_text"][0]
    assert all(f["id"] != "load_generator_saturated" for f in s["findings"])


def test_every_request_failing_with_server_messages_names_them():
    overall = stats(ttft=None, tpot=None, ok=1, errors=39, kinds={"http_400": 39})
    overall["errors_examples"] = {"http_400": "maximum context length is 32768 tokens"}
    s = analyzed(summary([], overall=overall, duration_s=10.0))
    top = s["findings"][0]
    assert top["id"] == "target_unreachable" and top["title"] == "Target unreachable / every request fails: the target answers http_400"
    assert "http_400: maximum context length is 32768 tokens" in top["evidence_text"]


def test_a_few_errors_are_not_a_dead_target():
    s = analyzed(summary([], overall=stats(ok=30, errors=10), duration_s=10.0))
    assert all(f["id"] != "target_unreachable" for f in s["findings"])


def test_a_thin_rate_step_is_named_by_its_rate_and_each_step_keeps_its_samples():
    """Every rate step has the same users (the -u cap): "3 requests at 16 users", and one samples key for all."""
    def rate(index, r, **kw):
        entry = step(index, 16, **kw)
        entry.update(rate_offered=r, rate_achieved=r)
        return entry

    s = analyzed(summary([rate(0, 1.0, ok=40, classes=_mixed(20)),
                          rate(1, 2.0, ok=40, classes={"short": stats(ok=37), "long": stats(ok=3)}),
                          rate(2, 4.0, ok=40, classes={"short": stats(ok=36), "long": stats(ok=4)})]))  # fmt: skip
    v = s["verdict"]
    assert v["status"] == "inconclusive"
    assert "long: 3 requests at 2 req/s" in v["note"] and "long: 4 requests at 4 req/s" in v["note"]
    assert "16 users" not in v["note"]
    assert v["inconclusive"]["samples"]["2 req/s"] == {"short": 37, "long": 3}
    assert v["inconclusive"]["samples"]["4 req/s"] == {"short": 36, "long": 4}
