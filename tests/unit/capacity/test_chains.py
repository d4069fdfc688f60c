"""A closed-loop run replayed as it ran: each user's requests linked (by the user the records name, else by
conversation turn and time), each sent when its predecessor ended in the replay plus the gap it left."""

from __future__ import annotations

import dataclasses

import pytest

from llmload.capacity.chains import chains, replay_closed, replay_tokens
from llmload.capacity.drive import ClassSpec
from llmload.capacity.fit import fit_measured
from llmload.capacity.measured import Req
from llmload.capacity.quality import fit_quality, worst_error
from llmload.sim.params import EngineParams
from llmload.sim.presets import preset_params
from llmload.workload.distributions import Duration, Fixed
from tests.helpers.capacity import ladder, measured

THINK = (  # two conversation classes whose users think 2 s (exponential) between turns
    ClassSpec("short", 1, Fixed(100), Fixed(60), turns=Fixed(4), think=Duration("exponential", 2.0)),
    ClassSpec("long", 1, Fixed(1200), Fixed(120), turns=Fixed(4), think=Duration("exponential", 2.0)),
)


def _req(start: float, end: float, user: str = "", session: str = "", turn: int = 0, cached: int | None = None) -> Req:
    return Req(start, start + 0.1, end, end, 100, 10, "c", None, None, True, cached, user, session, turn)


def test_records_that_name_their_user_link_each_request_to_that_user_s_last_whatever_the_gap():
    reqs = [
        _req(0.0, 1.0, user="0"),
        _req(0.0, 1.2, user="1009"),
        _req(3.5, 4.0, user="0"),  # 2.5 s of think time after its user's last one
        _req(1.2, 2.0, user="1009"),  # at once: another user's request ended at 1.0, ignored
        _req(1.0, 2.5, user="7"),  # a user's first, starting as user 0's request ended
    ]
    assert chains(reqs) == [None, None, 0, 1, None]


def test_records_without_the_user_link_conversation_turns_by_session_and_the_rest_by_time():
    reqs = [
        _req(0.0, 1.0, session="0.1", turn=1),
        _req(3.0, 4.0, session="0.1", turn=2),  # after 2 s of think time: its session's turn 1
        _req(4.01, 5.0, session="0.2", turn=1),  # a new session at once: by time (ended 10 ms before)
        _req(0.5, 1.02),  # a single request ...
        _req(1.03, 2.0),  # ... and the next one, sent at once: by time
        _req(9.0, 9.5),  # after a pause, no session: unknown (the old rule), sent at its measured time
    ]
    assert chains(reqs) == [None, 0, 1, None, 3, None]
    assert chains(reqs, gap_s=0.005)[2] is None  # the time rule's window


def test_a_user_s_next_request_is_replayed_after_its_predecessor_s_replayed_end_plus_the_measured_gap():
    params = EngineParams(max_num_seqs=4)
    first = replay_closed(params, [_req(0.0, 0.5, user="3")])[0]
    end = first.token_times[-1]
    reqs = [_req(0.0, 0.5, user="3"), _req(2.5, 3.0, user="3")]  # measured: 2 s of think time
    outs = replay_closed(params, reqs)
    assert outs[1].arrival.t == pytest.approx(end + 2.0)
    old = [dataclasses.replace(r, user="") for r in reqs]  # records before the field: its measured time
    assert replay_closed(params, old)[1].arrival.t == pytest.approx(2.5)


def test_the_turns_of_a_session_share_their_leading_tokens_so_the_replay_finds_the_history_cached():
    reqs = [Req(0.0, 0.1, 1.0, 1.0, 300, 20, "c", None, None, True, 0, "0", "0.1", 1),
            Req(3.0, 3.1, 4.0, 4.0, 420, 20, "c", None, None, True, 288, "0", "0.1", 2),
            Req(0.0, 0.1, 1.0, 1.0, 300, 20, "c", None, None, True, 64, "1", "", 0),
            Req(0.0, 0.1, 1.0, 1.0, 300, 20, "c", None, None, True, None, "2", "", 0)]  # fmt: skip
    t = replay_tokens(reqs)
    assert list(t[1][:300]) == list(t[0]) and t[1][300] != t[0][0]
    assert list(t[2][:64]) != list(t[0][:64]) and t[2][64] not in set(t[0]) | set(t[1])
    assert t[3] == ()  # nothing it could share
    outs = replay_closed(EngineParams(), reqs[:2])
    cold = replay_closed(EngineParams(prefix_caching=False), reqs[:2])
    assert outs[1].ttft < 0.8 * cold[1].ttft  # 288 of 420 prompt tokens served from the cache


@pytest.mark.parametrize("name", ["healthy", "batch-starved"])
def test_a_conversation_run_with_think_time_replays_exactly_on_the_true_model(name):
    true = preset_params(name, max_num_seqs=8) if name == "healthy" else preset_params(name)
    m = measured(true, ladder((1, 4, 12), classes=THINK))
    assert worst_error(fit_quality(m, true)) < 0.005
    old = dataclasses.replace(m, reqs=tuple(dataclasses.replace(r, user="") for r in m.reqs))
    assert worst_error(fit_quality(old, true)) < 0.005  # records before the user field: by session and time


@pytest.mark.parametrize("name", ["healthy", "batch-starved"])
def test_think_time_and_cached_history_do_not_bias_the_fit(name):
    # before: the prefill rows counted the cached history as computed (prefill_tps +470 %), and waited a whole step
    # for a request sent after a think time (prefill_tps +10 %, host + step_base -3 %)
    true = preset_params(name, max_num_seqs=8) if name == "healthy" else preset_params(name)
    n, ctx = true.max_num_seqs, true.max_num_seqs * 700
    effect = lambda p: p.per_seq_ms * n + p.per_kv_token_us / 1000 * ctx  # noqa: E731
    for seed in (0, 1):
        f = fit_measured(measured(true, dataclasses.replace(ladder((1, 4, 12), classes=THINK), seed=seed)))
        got = f.params
        assert got.host_overhead_ms + got.step_base_ms == pytest.approx(
            true.host_overhead_ms + true.step_base_ms, rel=0.03)  # fmt: skip
        assert got.prefill_tps == pytest.approx(true.prefill_tps, rel=0.05)
        assert got.max_num_seqs == true.max_num_seqs
        assert abs(effect(got) - effect(true)) < 0.10 * (true.host_overhead_ms + true.step_base_ms + effect(true))
        assert got.prefix_caching is True


def test_prefix_caching_is_measured_from_the_cached_tokens_the_server_reported():
    def prov(m):
        return next(p for p in fit_measured(m).provenance if p.name == "prefix_caching")

    on = prov(measured(preset_params("healthy", max_num_seqs=8), ladder((1, 4), classes=THINK)))
    assert on.how == "measured" and on.value is True
    cold = preset_params("healthy", max_num_seqs=8, prefix_caching=False)
    off = prov(measured(cold, ladder((1, 4), classes=THINK)))
    assert off.how == "measured" and off.value is False and "none of it cached" in off.note
    m = measured(cold, ladder((1, 4)))  # single requests, the server silent about its cache
    silent = dataclasses.replace(m, reqs=tuple(dataclasses.replace(r, cached=None) for r in m.reqs))
    assert prov(silent).how == "assumed" and "cached_tokens" in prov(silent).note
