from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from llmload.errors import ProfileError
from llmload.workload.distributions import Duration, Fixed, Normal, Uniform
from llmload.workload.prefixes import PrefixSpec
from llmload.workload.profiles import PromptSource, available_profiles, load_profile, profile_from_dict

FIX = Path(__file__).resolve().parents[2] / "fixtures" / "datasets"


def write(tmp_path: Path, text: str, name: str = "p.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_builtins_available():
    assert available_profiles() == ("default", "quadrants")


def test_default_profile():
    p = load_profile("default")
    assert p.name == "default"
    assert p.source == "default"
    assert [(c.name, c.weight, c.input_tokens, c.output_tokens) for c in p.classes] == [
        ("short", 3, Fixed(50), Fixed(200)),
        ("medium", 4, Fixed(500), Fixed(500)),
        ("long", 3, Fixed(2000), Fixed(800)),
    ]
    assert "summarization" in p.classes[2].description
    assert all(c.prompt == PromptSource() and c.prefix is None and not c.is_conversation for c in p.classes)


def test_quadrants_profile():
    p = load_profile("quadrants")
    assert [(c.name, c.weight, c.input_tokens.mean, c.output_tokens.mean) for c in p.classes] == [
        ("short_short", 1, 128, 128),
        ("long_short", 1, 2048, 128),
        ("short_long", 1, 128, 2048),
        ("long_long", 1, 2048, 2048),
    ]


def test_every_builtin_documents_its_classes():
    for name in available_profiles():
        p = load_profile(name)
        assert p.description
        assert all(c.description for c in p.classes)


def test_to_dict_round_trip_and_describe():
    p = load_profile("default")
    d = p.to_dict()
    assert d["classes"][0] == {
        "name": "short",
        "weight": 3,
        "description": p.classes[0].description,
        "input_tokens": 50,
        "output_tokens": 200,
        "prompt": "synthetic",
    }
    assert json.loads(json.dumps(d)) == d
    assert profile_from_dict(d, source="default").classes == p.classes
    text = p.describe()
    assert "short: 30% of requests, in 50, out 200 tokens (synthetic)" in text
    assert "medium: 40% of requests" in text


def test_toml_file_with_distributions(tmp_path):
    path = write(
        tmp_path,
        """
        description = "test"
        [[classes]]
        name = "chat"
        weight = 0.7
        input_tokens = {dist = "normal", mean = 300, stddev = 80, min = 10}
        output_tokens = 120
        prefix = {tokens = 64}
        """,
    )
    p = load_profile(path)
    assert p.name == "p"  # file stem
    c = p.classes[0]
    assert (c.weight, c.input_tokens, c.prefix) == (0.7, Normal(300.0, 80.0, 10, None), PrefixSpec(1, 64))
    assert load_profile(str(path)) == p


def test_json_file(tmp_path):
    path = write(
        tmp_path,
        json.dumps({"name": "j", "classes": [{"name": "a", "weight": 1, "input_tokens": 5, "output_tokens": 6}]}),
        "j.json",
    )
    assert load_profile(path).classes[0].output_tokens == Fixed(6)


def test_dataset_path_relative_to_profile_folder(tmp_path, monkeypatch):
    (tmp_path / "data").mkdir()
    shutil.copy(FIX / "sharegpt.json", tmp_path / "data" / "sg.json")
    path = write(
        tmp_path,
        """
        [[classes]]
        name = "chat"
        weight = 1
        prompt = {source = "dataset", path = "data/sg.json", format = "sharegpt"}
        output_tokens = "dataset"
        """,
    )
    monkeypatch.chdir(FIX)  # anywhere else
    c = load_profile(path).classes[0]
    assert c.prompt == PromptSource("dataset", tmp_path / "data" / "sg.json", "sharegpt")
    assert (c.input_tokens, c.output_tokens) == (None, None)
    assert c.to_dict()["output_tokens"] == "dataset"
    assert "(dataset sg.json)" in load_profile(path).describe()


CLASS = 'name = "a"\nweight = 1\ninput_tokens = 5\noutput_tokens = 6\n'


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('nmae = "x"\n[[classes]]\n' + CLASS, "nmae: unknown key; allowed keys: name, description, classes"),
        ("[[classes]]\n" + CLASS + "colour = 1\n", "classes[0].colour: unknown key"),
        ("[[classes]]\n" + CLASS + "[[classes]]\n" + CLASS.replace("name", "nam"), "classes[1].nam: unknown key"),
        ("[[classes]]\nweight = 1\ninput_tokens = 5\noutput_tokens = 6\n", "classes[0]: missing 'name'"),
        ('[[classes]]\nname = "a"\ninput_tokens = 5\noutput_tokens = 6\n', "classes[0]: missing 'weight'"),
        ('[[classes]]\nname = "a"\nweight = 1\ninput_tokens = 5\n', "classes[0]: missing 'output_tokens'"),
        ('[[classes]]\nname = "a"\nweight = 1\noutput_tokens = 5\n', "classes[0]: missing 'input_tokens'"),
        (
            "[[classes]]\n" + CLASS.replace("weight = 1", 'weight = "3"'),
            "classes[0].weight: must be a number > 0, got '3'",
        ),
        ("[[classes]]\n" + CLASS.replace("weight = 1", "weight = 0"), "classes[0].weight: must be a number > 0, got 0"),
        ("[[classes]]\n" + CLASS.replace("weight = 1", "weight = -2.5"), "classes[0].weight: must be a number > 0"),
        ("[[classes]]\n" + CLASS.replace("weight = 1", "weight = true"), "classes[0].weight: must be a number > 0"),
        (
            "[[classes]]\n" + CLASS.replace("input_tokens = 5", 'input_tokens = "5"'),
            "classes[0].input_tokens: expected an int",
        ),
        ("[[classes]]\n" + CLASS.replace('name = "a"', "name = 3"), "classes[0].name: must be a string, got 3"),
        ("[[classes]]\n" + CLASS.replace('name = "a"', 'name = " "'), "classes[0].name: must be a non-empty string"),
        (
            "[[classes]]\n" + CLASS + "[[classes]]\n" + CLASS.replace('name = "a"', 'name = "Overall"'),
            "classes[1].name: 'Overall' names the whole run's row (summary, tables, web UI): rename it",
        ),
        (
            "[[classes]]\n" + CLASS.replace('name = "a"', 'name = "overall"'),
            "classes[0].name: 'overall' names the whole run's row",
        ),
        (
            "[[classes]]\n" + CLASS + "[[classes]]\n" + CLASS,
            "classes[1].name: duplicate class name 'a' (also classes[0])",
        ),
        ('name = "x"\n', "classes: needs at least one request class"),
        ("classes = []\n", "classes: needs at least one request class"),
        ('classes = "short"\n', "classes: needs at least one request class"),
        ("description = 5\n[[classes]]\n" + CLASS, "description: must be a string, got 5"),
        (
            "[[classes]]\n" + CLASS + "shared_prefix_tokens = 64\n",
            "classes[0].shared_prefix_tokens: replaced by prefix = {tokens = 64}, where input_tokens counts only",
        ),
        ("[[classes]]\n" + CLASS + "prefix = 64\n", "classes[0].prefix: expected a table {groups = N, tokens = T"),
        ("[[classes]]\n" + CLASS + "prefix = {groups = 2}\n", "classes[0].prefix: missing 'tokens'"),
        ("[[classes]]\n" + CLASS + "prefix = {tokens = 0}\n", "classes[0].prefix.tokens: must be an int ≥ 1, got 0"),
        (
            "[[classes]]\n" + CLASS + "prefix = {tokens = 8, groups = 1.5}\n",
            "classes[0].prefix.groups: must be an int ≥ 1, got 1.5",
        ),
        (
            "[[classes]]\n" + CLASS + 'prefix = {tokens = 8, popularity = "zipf"}\n',
            'classes[0].prefix.popularity: expected "uniform" or "zipf:S" with S > 0',
        ),
        (
            "[[classes]]\n" + CLASS + 'prefix = {tokens = 8, popularity = "zipf:-1"}\n',
            "classes[0].prefix.popularity: expected",
        ),
        ("[[classes]]\n" + CLASS + "prefix = {tokens = 8, share = 1}\n", "classes[0].prefix.share: unknown key"),
        (
            "[[classes]]\n" + CLASS + "prefix = {tokens = 20000, groups = 2000}\n",
            "classes[0].prefix: 2000 groups x 20000 tokens = 40,000,000 tokens of prefix text",
        ),
        (
            f'[[classes]]\nname = "a"\nweight = 1\noutput_tokens = 6\nprefix = {{tokens = 8}}\n'
            f'prompt = {{source = "dataset", path = "{FIX / "prompts.jsonl"}"}}\n',
            "classes[0].prefix: applies to synthetic prompts only",
        ),
        ("[[classes]]\n" + CLASS + "turns = 0\n", "classes[0].turns: must be ≥ 1"),
        ("[[classes]]\n" + CLASS + 'turns = "many"\n', "classes[0].turns: expected an int"),
        ("[[classes]]\n" + CLASS + 'turns = "dataset"\n', 'classes[0].turns: "dataset" replays a dataset'),
        ("[[classes]]\n" + CLASS + "think_time_s = 3\n", "classes[0].think_time_s: is the pause between the turns"),
        ("[[classes]]\n" + CLASS + "turns = 3\nthink_time_s = -1\n", "classes[0].think_time_s: must be ≥ 0 seconds"),
        (
            "[[classes]]\n" + CLASS + 'turns = 3\nthink_time_s = {dist = "exponential"}\n',
            "classes[0].think_time_s: dist = 'exponential' needs 'mean'",
        ),
        (
            "[[classes]]\n" + CLASS + 'turns = 3\nthink_time_s = {dist = "uniform", min = 5, max = 1}\n',
            "classes[0].think_time_s: max (1) must be ≥ min (5)",
        ),
        (
            "[[classes]]\n" + CLASS.replace("output_tokens = 6", 'output_tokens = "dataset"'),
            'classes[0].output_tokens: "dataset" needs prompt',
        ),
        ("[[classes]]\n" + CLASS + 'prompt = "file"\n', 'classes[0].prompt: expected "synthetic" or'),
        (
            "[[classes]]\n" + CLASS + 'prompt = {source = "web"}\n',
            "classes[0].prompt.source: expected \"dataset\", got 'web'",
        ),
        ("[[classes]]\n" + CLASS + 'prompt = {source = "dataset", url = "x"}\n', "classes[0].prompt.url: unknown key"),
        (
            "[[classes]]\n" + CLASS + 'prompt = {source = "dataset"}\n',
            "classes[0].prompt.path: expected the dataset file's path",
        ),
        (
            '[[classes]]\nname = "a"\nweight = 1\noutput_tokens = 6\nprompt = {source = "dataset", path = "nope.jsonl"}\n',
            "classes[0].prompt.path: no such file",
        ),
        (
            f'[[classes]]\nname = "a"\nweight = 1\noutput_tokens = 6\nprompt = {{source = "dataset", path = "{FIX / "prompts.jsonl"}", format = "csv"}}\n',
            "classes[0].prompt.format: expected one of auto, prompts, sharegpt, got 'csv'",
        ),
        (
            f'[[classes]]\n{CLASS}prompt = {{source = "dataset", path = "{FIX / "prompts.jsonl"}"}}\n',
            "classes[0].input_tokens: a dataset class takes its prompts' lengths from the file",
        ),
        ("[[classes]\n", "not valid TOML"),
    ],
)
def test_errors_name_file_and_field(tmp_path, body, message):
    path = write(tmp_path, body)
    with pytest.raises(ProfileError) as e:
        load_profile(path)
    text = str(e.value)
    assert text.startswith(f"profile '{path}': ")
    assert message in text
    assert "\n" not in text


def test_stddev_error_message_is_exact(tmp_path):
    body = "[[classes]]\n" + CLASS + "[[classes]]\n" + CLASS.replace('"a"', '"b"') + "[[classes]]\n"
    body += 'name = "c"\nweight = 1\ninput_tokens = 5\noutput_tokens = {dist = "normal", mean = 100, stddev = 0}\n'
    path = write(tmp_path, body, "x.toml")
    with pytest.raises(ProfileError) as e:
        load_profile(path)
    assert str(e.value) == f"profile '{path}': classes[2].output_tokens: stddev must be > 0, got 0"


def test_invalid_json_profile(tmp_path):
    path = write(tmp_path, "{nope", "p.json")
    with pytest.raises(ProfileError, match=r"profile '.*p\.json': not valid JSON"):
        load_profile(path)


def test_unknown_name_and_missing_file(tmp_path):
    with pytest.raises(ProfileError, match=r"unknown profile 'chatty': not a built-in \(default, quadrants\)"):
        load_profile("chatty")
    missing = tmp_path / "gone.toml"
    with pytest.raises(ProfileError, match=r"gone\.toml': no such file"):
        load_profile(missing)


def test_from_dict_rejects_non_table():
    with pytest.raises(ProfileError, match=r"profile '<dict>': expected a table"):
        profile_from_dict([1, 2])


def test_prefix_and_conversation_options_round_trip_and_describe(tmp_path):
    path = write(
        tmp_path,
        f"""
        [[classes]]
        name = "rag"
        weight = 2
        prefix = {{groups = 8, tokens = 1000, popularity = "zipf:1.1"}}
        input_tokens = 100
        output_tokens = 300

        [[classes]]
        name = "chat"
        weight = 1
        turns = {{dist = "uniform", min = 2, max = 6}}
        think_time_s = {{dist = "exponential", mean = 5, max = 30}}
        input_tokens = 80
        output_tokens = 250

        [[classes]]
        name = "sg"
        weight = 1
        prompt = {{source = "dataset", path = "{FIX / "multiturn.jsonl"}", format = "sharegpt"}}
        output_tokens = "dataset"
        turns = "dataset"
        """,
    )
    p = load_profile(path)
    rag, chat, sg = p.classes
    assert rag.prefix == PrefixSpec(8, 1000, 1.1) and not rag.is_conversation
    assert chat.turns == Uniform(2, 6) and chat.think_time_s == Duration("exponential", 5.0, 0.0, 0.0, 30.0)
    assert sg.turns == "dataset" and sg.think_time_s is None and sg.is_conversation
    assert profile_from_dict(p.to_dict(), source=p.source) == p
    text = p.describe()
    assert "shared prefix 1000 x 8 groups (zipf:1.1)" in text
    assert "~4 turns per conversation, think ~5 s" in text and "dataset turns per conversation" in text


def test_a_class_slo_is_read_and_written_back(tmp_path):
    from llmload.metrics.slo import SLO

    path = write(
        tmp_path,
        """
[[classes]]
name = "short"
weight = 1
input_tokens = 10
output_tokens = 20
slo = {ttft_ms = 300, tpot_ms = 25}

[[classes]]
name = "long"
weight = 1
input_tokens = 10
output_tokens = 20
""",
    )
    p = load_profile(path)
    assert p.classes[0].slo == SLO(ttft_ms=300.0, tpot_ms=25.0) and p.classes[1].slo is None
    d = p.to_dict()
    assert d["classes"][0]["slo"] == {"ttft_ms": 300.0, "tpot_ms": 25.0} and "slo" not in d["classes"][1]
    assert profile_from_dict(d).classes[0].slo == p.classes[0].slo


@pytest.mark.parametrize(
    ("slo", "message"),
    [
        ("{ttft = 300}", r"classes\[0\]\.slo: unknown SLO 'ttft'; valid keys: ttft_ms, tpot_ms, e2e_ms"),
        ("{ttft_ms = -1}", r"classes\[0\]\.slo: ttft_ms=-1 must be a number of milliseconds > 0"),
        ("300", r"classes\[0\]\.slo: expected a table of limits in ms"),
    ],
)
def test_a_bad_class_slo_is_one_line_naming_file_and_field(tmp_path, slo, message):
    path = write(tmp_path, f"[[classes]]\nname = 'a'\nweight = 1\ninput_tokens = 1\noutput_tokens = 1\nslo = {slo}\n")
    with pytest.raises(ProfileError, match=message) as e:
        load_profile(path)
    assert str(path) in str(e.value) and "\n" not in str(e.value)
