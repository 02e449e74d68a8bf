"""Response cache: key stability, round trip, persistence, concurrent processes, info/clear."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from ideaharness.cli import main
from ideaharness.errors import UserError
from ideaharness.llm.cache import ResponseCache, cache_info, clear_cache, default_cache_path, request_key
from ideaharness.llm.types import ChatRequest, Completion, Usage

REQ = ChatRequest(
    model="openai/m",
    messages=[{"role": "user", "content": "Rate {x_i} and {{this}}"}],
    temperature=0.0,
    max_tokens=64,
    seed=1,
    json_schema={"type": "object", "properties": {"a": {"type": "integer"}}},
)


def test_key_is_stable_and_canonical() -> None:
    # Pinned: a change of canonicalisation would silently invalidate every user's cache.
    assert request_key(REQ, "http://h/v1") == request_key(REQ, "http://h/v1/")
    same_reordered = ChatRequest(
        model="openai/m",
        messages=[{"content": "Rate {x_i} and {{this}}", "role": "user"}],
        json_schema={"properties": {"a": {"type": "integer"}}, "type": "object"},
        seed=1,
        max_tokens=64,
    )
    assert request_key(same_reordered, "http://h/v1") == request_key(REQ, "http://h/v1")
    canonical = (
        '{"base_url":"http://h/v1","json_schema":{"properties":{"a":{"type":"integer"}},"type":"object"},'
        '"max_tokens":64,"messages":[{"content":"Rate {x_i} and {{this}}","role":"user"}],"model":"openai/m",'
        '"sample_index":0,"seed":1,"temperature":0.0,"top_p":null}'
    )
    assert request_key(REQ, "http://h/v1") == hashlib.sha256(canonical.encode()).hexdigest()


@pytest.mark.parametrize(
    "change",
    [
        {"model": "openai/n"},
        {"messages": [{"role": "user", "content": "Rate {x_i} and {{this}} "}]},
        {"temperature": 0.7},
        {"top_p": 0.9},
        {"max_tokens": 65},
        {"seed": 2},
        {"seed": None},
        {"json_schema": None},
        {"sample_index": 1},
    ],
)
def test_every_field_changes_the_key(change: dict) -> None:
    assert request_key(REQ.model_copy(update=change), "http://h/v1") != request_key(REQ, "http://h/v1")


def test_base_url_changes_the_key() -> None:
    assert request_key(REQ, "http://a/v1") != request_key(REQ, "http://b/v1")
    assert request_key(REQ, None) != request_key(REQ, "http://a/v1")


def test_round_trip_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    key = request_key(REQ)
    assert cache.get(key) is None
    cache.put(
        key, REQ, Completion(text="7", model="openai/m", usage=Usage(prompt_tokens=3, completion_tokens=1))
    )
    cache.close()
    reopened = ResponseCache(path)
    hit = reopened.get(key)
    assert hit is not None and hit.text == "7" and hit.cached and hit.usage.prompt_tokens == 3
    assert len(reopened) == 1
    info = reopened.info()
    assert info.entries == 1 and info.entries_by_model == {"openai/m": 1} and info.size_bytes > 0
    reopened.close()
    assert clear_cache(path) > 0
    assert not path.exists() and cache_info(path).exists is False


def test_not_a_database_is_a_user_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(UserError, match="not a usable LLM cache"):
        ResponseCache(bad)


_WRITER = """
import sys
from ideaharness.llm.cache import ResponseCache, request_key
from ideaharness.llm.types import ChatRequest, Completion
cache = ResponseCache(sys.argv[1])
for i in range(40):
    req = ChatRequest(model="m", messages=[{"role": "user", "content": f"{sys.argv[2]}-{i}"}])
    cache.put(request_key(req), req, Completion(text=str(i), model="m"))
"""


def test_two_processes_write_one_file(tmp_path: Path) -> None:
    path = tmp_path / "shared.sqlite"
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(path), tag]) for tag in ("a", "b")]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    assert cache_info(path).entries == 80


def test_default_path_follows_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cd"))
    assert default_cache_path() == tmp_path / "cd" / "llm-cache.sqlite"


def test_cli_info_and_clear(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.sqlite"
    cache = ResponseCache(path)
    cache.put(request_key(REQ), REQ, Completion(text="x", model="openai/m"))
    cache.close()
    main(["cache", "info", "--path", str(path)])
    out = capsys.readouterr().out
    assert "1 entries" in out and "openai/m: 1" in out
    main(["cache", "clear", "--path", str(path)])
    assert "cleared" in capsys.readouterr().out
    assert not path.exists()
    main(["cache", "info", "--path", str(path)])
    assert "0 entries" in capsys.readouterr().out


def test_models_dir_ignores_the_response_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ideaharness.llm import default_models_dir

    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path / "cd"))
    monkeypatch.delenv("IDEAHARNESS_MODELS_DIR", raising=False)
    assert default_models_dir() == Path.home() / ".cache" / "ideaharness" / "models"
    monkeypatch.setenv("IDEAHARNESS_MODELS_DIR", str(tmp_path / "m"))
    assert default_models_dir() == tmp_path / "m"
