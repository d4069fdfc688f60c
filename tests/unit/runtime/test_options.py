"""The one door for Locust's options: the config they give, and what travels to workers (seed, model, workload)."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmload.adapters import api_headers_for, get_adapter_class
from llmload.ladder.plan import FixedLoad
from llmload.runtime import Options
from tests.helpers.runtime import FakeLocal, FakeMaster, FakeWorker, environment

TRACE = Path(__file__).resolve().parents[3] / "examples" / "traces" / "mooncake-example.jsonl"


def test_the_config_comes_from_the_parsed_options():
    env = environment(FakeLocal(), "--api", "openai-completions", "--seed", "5", "--ladder", "1,2", "--step-time", "1m")
    c = Options(env, worker=False).config()
    assert (c.api, c.seed, c.adapter.model) == ("openai-completions", 5, "m")
    assert c.ladder.levels == (1, 2) and c.ladder.step_s == 60.0


def test_forward_writes_what_workers_need_into_the_options_that_travel():
    env = environment(FakeMaster(), "--profile", "quadrants")  # --seed not given: drawn
    env.parsed_options.model = ""
    opts = Options(env, worker=False)
    c = opts.config()
    assert c.seed > 0 and env.parsed_options.seed == -1
    opts.forward(c)
    o = env.parsed_options
    assert (o.seed, o.workload) == (c.seed, "quadrants") and o.model == ""  # no model known yet: nothing sent
    opts.forward(c.__class__(**{**{f: getattr(c, f) for f in c.__slots__}, "model_auto": False}))
    assert o.model == "default"
    assert opts.config().seed == c.seed  # the next test start reads the forwarded seed back


def test_a_worker_forwards_nothing_and_keeps_its_own_dump_path_and_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    env = environment(FakeWorker(), "--records-jsonl", "/tmp/r.jsonl", "--api-key", "sk-own", "--workload", "quadrants")
    opts = Options(env, worker=True)
    # the master's spawn message overwrites the worker's options with its own (empty) values
    env.parsed_options.records_jsonl, env.parsed_options.api_key = "", ""
    c = opts.config()
    assert (c.records_jsonl, c.api_key, c.profile) == ("/tmp/r.jsonl", "sk-own", "quadrants")
    before = vars(env.parsed_options).copy()
    opts.forward(c)
    assert vars(env.parsed_options) == before


@pytest.mark.parametrize(
    ("api", "args", "env", "key"),
    [
        ("openai-chat", ("--api-key", "flag"), {"LLMLOAD_API_KEY": "llm", "OPENAI_API_KEY": "oai"}, "flag"),
        ("openai-chat", (), {"LLMLOAD_API_KEY": "llm", "OPENAI_API_KEY": "oai"}, "llm"),
        ("openai-chat", (), {"OPENAI_API_KEY": "oai", "ANTHROPIC_API_KEY": "ant"}, "oai"),
        ("anthropic-messages", (), {"LLMLOAD_API_KEY": "llm", "ANTHROPIC_API_KEY": "ant"}, "llm"),
        ("anthropic-messages", (), {"OPENAI_API_KEY": "oai", "ANTHROPIC_API_KEY": "ant"}, "ant"),
        # the OpenAI key went to Anthropic as x-api-key: Options.config() put it back when the config's was empty
        ("anthropic-messages", (), {"OPENAI_API_KEY": "oai"}, ""),
    ],
)
def test_the_key_sent_is_the_flag_else_llmload_api_key_else_the_apis_own_variable(monkeypatch, api, args, env, key):
    for name in ("LLMLOAD_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for role, worker in ((FakeLocal(), False), (FakeWorker(), True)):
        c = Options(environment(role, "--api", api, *args), worker=worker).config()
        headers = api_headers_for(get_adapter_class(api), c.api_key)
        assert c.api_key == key, role
        assert (headers.get("x-api-key") or headers.get("Authorization", "").removeprefix("Bearer ")) == key


def test_the_host_is_the_environments_or_the_options():
    env = environment(FakeLocal())
    assert Options(env, worker=False).host == "http://127.0.0.1:9"
    env.host = None
    env.parsed_options.host = "http://other:1"
    assert Options(env, worker=False).host == "http://other:1"


def test_the_fixed_load_is_locusts_users_spawn_rate_and_run_time_as_they_are_now():
    env = environment(FakeLocal(), "-u", "4", "-r", "2")
    options = Options(env, worker=False)
    assert options.fixed_load() == FixedLoad(4, 2.0, None)
    env.parsed_options.num_users, env.parsed_options.spawn_rate, env.parsed_options.run_time = 9, 3.0, 120
    assert options.fixed_load() == FixedLoad(9, 3.0, 120.0)  # what the web UI form wrote
    env.parsed_options.num_users = None
    assert options.fixed_load() is None


def test_an_open_loop_starts_its_slots_at_once_whatever_locusts_spawn_rate():
    """-u of an open loop is the in-flight cap: at Locust's default -r 1 a -u 20 run had 5 slots after 5 s and
    said the cap held 48 of 49 arrivals back."""
    for args, rate in (
        (("--arrival", "poisson", "--rate", "10"), 20.0),
        (("--trace", str(TRACE)), 20.0),
        ((), 1.0),  # closed loop: Locust's ramp
        (("--arrival", "constant", "--rate-ladder", "1,2", "--step-time", "10s", "--step-warmup", "1s"), 1.0),  # the ladder spawns
    ):
        env = environment(FakeMaster(), "-u", "20", "-r", "1", *args)
        opts = Options(env, worker=False)
        opts.forward(opts.config())
        assert env.parsed_options.spawn_rate == rate, args
