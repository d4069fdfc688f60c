"""Masking the API key a server echoes (llmload.redact): the whole key, any 8+ characters of it, never a hint."""

from __future__ import annotations

import pytest

from llmload import redact
from llmload.redact import MASK, mask, mask_tree, remember, remember_environment

KEY = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"


@pytest.fixture(autouse=True)
def _fresh():
    redact.forget()
    yield
    redact.forget()


def test_nothing_known_nothing_changed():
    text = f"Incorrect API key provided: {KEY}"
    assert mask(text) is text and mask_tree({"a": [text]}) == {"a": [text]}


@pytest.mark.parametrize(
    ("said", "shown"),
    [
        (f"Incorrect API key provided: {KEY}.", f"Incorrect API key provided: {MASK}."),  # OpenAI's echo
        (f"invalid header Authorization: Bearer {KEY}", f"invalid header Authorization: Bearer {MASK}"),  # a proxy
        (f"bad key {KEY[:30]}…", f"bad key {MASK}…"),  # cut by the 200-character limit
        (f"key ending {KEY[-8:]} refused", f"key ending {MASK} refused"),  # its last 8 characters
        (f"{KEY}{KEY}", MASK),  # back to back: one stretch
        (f"a {KEY} and {KEY} b", f"a {MASK} and {MASK} b"),
        ("key sk-...6789 refused", "key sk-...6789 refused"),  # the usual hint: 4 characters
        ("key ****************6789 refused", "key ****************6789 refused"),
        (f"key {KEY[-7:]} refused", f"key {KEY[-7:]} refused"),  # 7 characters in a row: kept
        ("no key here", "no key here"),
    ],
)
def test_the_key_and_any_8_characters_of_it_are_masked(said, shown):
    remember(KEY)
    assert mask(said) == shown


def test_short_keys_are_masked_whole_and_tiny_ones_not_at_all():
    remember("s3cret", "x", "", None)
    assert redact.known() == 1
    assert mask("got s3cret, want other; x marks") == f"got {MASK}, want other; x marks"
    assert mask("got s3cre") == "got s3cre"


def test_several_keys_and_trees():
    remember(KEY, "ant-0123456789abcdef")
    remember(KEY)  # again: nothing new
    assert redact.known() == 2
    doc = {"errors_examples": {"http_401": f"bad {KEY}"}, f"by {KEY}": 1, "n": [2, "x ant-0123456789abcdef"], "k": 3.5}
    assert mask_tree(doc) == {
        "errors_examples": {"http_401": f"bad {MASK}"},
        f"by {MASK}": 1,
        "n": [2, f"x {MASK}"],
        "k": 3.5,
    }


def test_the_environments_keys():
    env = {"LLMLOAD_API_KEY": "llm-key-1234567", "ANTHROPIC_API_KEY": "ant-key-7654321", "OTHER": "zz-other-value"}
    remember_environment(env)
    assert mask("llm-key-1234567 ant-key-7654321 zz-other-value") == f"{MASK} {MASK} zz-other-value"
