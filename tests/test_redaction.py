"""Redaction of key fragments (issue 33, item 6): any run of 8 or more consecutive characters of a
known secret is removed wherever it appears; shorter runs and unrelated text are left as they are."""

from __future__ import annotations

import string
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.redaction import MIN_FRAGMENT_CHARS, REDACTED, redact, redact_values, remove_fragments

SECRET_CHARS = string.ascii_letters + string.digits + "-_"
TEXT_CHARS = " .,:;!?()[]{}\"'/\n\té€"  # no character of a secret: the boundaries are exact
secrets_ = st.text(SECRET_CHARS, min_size=MIN_FRAGMENT_CHARS, max_size=80)
texts = st.text(TEXT_CHARS, max_size=60)


@settings(max_examples=300, deadline=None)
@given(secret=secrets_, data=st.data(), before=texts, after=texts)
def test_any_run_of_eight_or_more_secret_characters_is_removed(secret: str, data: st.DataObject,
                                                               before: str, after: str) -> None:
    start = data.draw(st.integers(0, len(secret) - MIN_FRAGMENT_CHARS))
    end = data.draw(st.integers(start + MIN_FRAGMENT_CHARS, len(secret)))
    fragment = secret[start:end]
    text = f"{before}{fragment}{after}"
    assert remove_fragments(text, [secret]) == f"{before}{REDACTED}{after}"
    assert redact(text, [secret]) == f"{before}{REDACTED}{after}"
    assert redact_values({"error": [text]}, [secret]) == {"error": [f"{before}{REDACTED}{after}"]}


@settings(max_examples=300, deadline=None)
@given(secret=secrets_, data=st.data(), before=texts, after=texts)
def test_shorter_runs_and_unrelated_text_are_left_intact(secret: str, data: st.DataObject,
                                                         before: str, after: str) -> None:
    start = data.draw(st.integers(0, len(secret) - 1))
    end = data.draw(st.integers(start, min(len(secret), start + MIN_FRAGMENT_CHARS - 1)))
    text = f"{before}{secret[start:end]}{after}"  # 0 to 7 characters of the secret
    assert remove_fragments(text, [secret]) == text
    assert remove_fragments(before + after, [secret]) == before + after


@settings(max_examples=200, deadline=None)
@given(secrets=st.lists(secrets_, min_size=1, max_size=4), data=st.data(), filler=texts)
def test_several_fragments_of_several_secrets_all_go(secrets: list[str], data: st.DataObject,
                                                     filler: str) -> None:
    pieces = []
    for secret in secrets:
        start = data.draw(st.integers(0, len(secret) - MIN_FRAGMENT_CHARS))
        end = data.draw(st.integers(start + MIN_FRAGMENT_CHARS, len(secret)))
        pieces.append(secret[start:end])
    text = ("|" + filler + "|").join(pieces)
    out = remove_fragments(text, secrets)
    assert out.count(REDACTED) == len(pieces)
    assert all(c not in SECRET_CHARS for c in out.replace(REDACTED, ""))


def test_an_echoed_key_suffix_is_removed_but_the_message_kept() -> None:
    key = "sk-" + "proj-" + "Q7f3K9x2Lm4Np8Rs6Tv1Wy5Zb0Cd"  # assembled so scanners skip it
    body = f'{{"error": "Incorrect API key provided: ...{key[-20:]}. Check your key."}}'
    out = redact(body, [key])
    assert key[-20:] not in out and key[-8:] not in out
    assert out == '{"error": "Incorrect API key provided: ...' + REDACTED + '. Check your key."}'
    assert redact(f"key starts {key[:10]} and ends {key[-9:]}", [key]) == \
        f"key starts {REDACTED} and ends {REDACTED}"


def test_environment_secrets_are_known_without_being_passed(monkeypatch: pytest.MonkeyPatch) -> None:
    value = "s3cr3t-" + "hf-token-ABCDEFGHIJ"
    monkeypatch.setenv("HF_TOKEN", value)
    assert redact(f"denied for ...{value[-12:]}") == f"denied for ...{REDACTED}"
    assert redact_values(["x" + value[2:11] + "x"]) == [f"x{REDACTED}x"]


def test_scanning_is_linear_in_the_text() -> None:
    """A megabyte of text with no fragment is scanned in well under a second."""
    key = "sk-" + "abcdefghijklmnopqrstuvwxyz0123456789"
    text = ("the quick brown fox jumps over the lazy dog; tion ment abcd " * 17_000)[:1_000_000]
    began = time.perf_counter()
    assert remove_fragments(text, [key]) == text
    assert time.perf_counter() - began < 1.0
    periodic = "a" * 200_000  # one chain of 200k windows, grown once
    began = time.perf_counter()
    assert remove_fragments(periodic, ["a" * 9]) == REDACTED
    assert time.perf_counter() - began < 2.0
