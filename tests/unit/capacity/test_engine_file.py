"""engine.toml: written by fit, read by predict and by `llmload sim --engine-file`; bad files are one clear error."""

from __future__ import annotations

import argparse

import pytest

from llmload.capacity.engine_file import engine_hash, read_engine, write_engine
from llmload.errors import ConfigError
from llmload.sim.config import add_arguments, config_from_args, config_to_args
from llmload.sim.params import EngineParams


def _write(path, params):
    prov = [
        {
            "name": "step_base_ms",
            "value": params.step_base_ms,
            "how": "fitted",
            "stderr": 0.5,
            "note": 'a "quoted" note',
        }
    ]
    quality = [{"step": 0, "class": "(all)", "ttft_p50_ms": 100.0, "ttft_p50_error": None}]
    write_engine(path, params, prov, quality, {"source": "runs/x/records.jsonl", "requests": 10})


def test_an_engine_file_round_trips_every_parameter(tmp_path):
    params = EngineParams(max_num_seqs=12, prefill_tps=4321.5, step_base_ms=20.25, per_kv_token_us=0.5, kv_blocks=999)
    path = tmp_path / "engine.toml"
    _write(path, params)
    back, doc = read_engine(path)
    assert back == params
    assert doc["provenance"]["step_base_ms"]["how"] == "fitted" and doc["quality"][0]["step"] == 0
    assert engine_hash(path).startswith("sha256:") and len(engine_hash(path)) == 71


@pytest.mark.parametrize(
    ("text", "said"),
    [("schema = 'other'\n[params]\n", "not an engine file"), ("not toml [", "not TOML"),
     ("schema = 'llmload.engine/1'\n[params]\nwarp = 9\n", "unknown parameter(s) warp")],
)  # fmt: skip
def test_a_bad_engine_file_is_one_clear_error(tmp_path, text, said):
    path = tmp_path / "engine.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match="llmload fit|unknown") as e:
        read_engine(path)
    assert said in str(e.value) and str(path) in str(e.value)
    with pytest.raises(ConfigError, match="cannot read"):
        read_engine(tmp_path / "missing.toml")


def _sim(*argv):
    p = argparse.ArgumentParser()
    add_arguments(p)
    return config_from_args(p.parse_args(list(argv)))


def test_the_simulator_starts_from_an_engine_file_and_engine_flags_still_override(tmp_path):
    params = EngineParams(max_num_seqs=12, prefill_tps=4321.5, step_base_ms=20.25)
    path = tmp_path / "engine.toml"
    _write(path, params)
    config = _sim("--engine-file", str(path), "--per-seq-ms", "0.7")
    assert config.mode == "engine" and config.engine.prefill_tps == 4321.5 and config.engine.per_seq_ms == 0.7
    assert _sim(*config_to_args(config)).engine == config.engine  # a child process rebuilds the same engine
    with pytest.raises(ConfigError, match="give one"):
        _sim("--engine-file", str(path), "--preset", "healthy")
    with pytest.raises(ConfigError, match="--engine-file belong"):
        _sim("--engine-file", str(path), "--mode", "fixed")
