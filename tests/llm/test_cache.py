"""Response cache: key stability, round trip, persistence, concurrent processes, info/clear."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys
import threading
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


# ----------------------------------------------------------------------------- the writer thread


class _GatedConnection:
    """The writer's SQLite connection, holding every INSERT until ``gate`` is set; counts commits."""

    def __init__(self, conn: object, gate: threading.Event) -> None:
        self.conn = conn
        self.gate = gate
        self.commits = 0
        self.inserting = threading.Event()

    def execute(self, sql: str, *args: object) -> object:
        if sql.startswith("INSERT"):
            self.inserting.set()
            assert self.gate.wait(60), "the test never opened the gate"
        if sql == "COMMIT":
            self.commits += 1
        return self.conn.execute(sql, *args)  # type: ignore[attr-defined]

    def close(self) -> None:
        self.conn.close()  # type: ignore[attr-defined]


def _request(i: int) -> ChatRequest:
    return ChatRequest(model="m", messages=[{"role": "user", "content": f"q{i}"}])


def test_an_entry_being_written_is_served_and_concurrent_puts_share_a_commit(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    gate = threading.Event()
    gated = _GatedConnection(cache._conn, gate)
    cache._conn = gated  # type: ignore[assignment]

    async def main() -> None:
        first = asyncio.create_task(cache.aput("k0", _request(0), Completion(text="0", model="m")))
        await asyncio.to_thread(gated.inserting.wait, 60)  # the writer holds the first group
        hit = cache.get("k0")
        assert hit is not None and hit.text == "0" and hit.cached  # served from memory meanwhile
        rest = [asyncio.create_task(cache.aput(f"k{i}", _request(i), Completion(text=str(i), model="m")))
                for i in range(1, 64)]
        await asyncio.sleep(0.05)
        assert not first.done() and not any(t.done() for t in rest)  # not committed: not returned
        gate.set()
        await asyncio.gather(first, *rest)

    asyncio.run(main())
    assert gated.commits == 2  # the first entry, then the 63 handed over while it was written
    other = ResponseCache(tmp_path / "c.sqlite")  # committed when aput returned: another reader sees them
    assert len(other) == 64 and other.get("k63") is not None
    other.close()
    cache.close()


def test_a_full_disk_fails_the_aput_of_its_group(tmp_path: Path) -> None:
    from ideaharness.errors import StorageError
    from tests.runs.test_store import _FullDatabase

    cache = ResponseCache(tmp_path / "c.sqlite")
    cache._conn = _FullDatabase(cache._conn)  # type: ignore[assignment]
    with pytest.raises(StorageError, match=r"c\.sqlite: no space left on the device"):
        asyncio.run(cache.aput("k", _request(0), Completion(text="a", model="m")))
    assert cache.get("k") is None  # not served from memory once its group failed
    cache.close()


def test_a_cancelled_aput_is_still_written(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")

    async def main() -> None:
        task = asyncio.create_task(cache.aput("k", _request(0), Completion(text="a", model="m")))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    cache.close()
    reopened = ResponseCache(tmp_path / "c.sqlite")
    assert reopened.get("k") is not None
    reopened.close()


def test_a_closed_cache_refuses_puts(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    cache.close()
    cache.close()  # safe twice
    with pytest.raises(UserError, match="closed"):
        cache.put("k", _request(0), Completion(text="a", model="m"))


_EXITS_WITHOUT_CLOSE = """
import asyncio, sys
from ideaharness.llm.cache import ResponseCache
from ideaharness.llm.types import ChatRequest, Completion
cache = ResponseCache(sys.argv[1])
req = ChatRequest(model="m", messages=[{"role": "user", "content": "q"}])
asyncio.run(cache.aput("k", req, Completion(text="a", model="m")))
print("done", flush=True)
"""


def test_a_process_that_never_closes_its_cache_exits_with_its_entries_kept(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    out = subprocess.run([sys.executable, "-c", _EXITS_WITHOUT_CLOSE, str(path)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and out.stdout == "done\n", out.stderr
    assert cache_info(path).entries == 1


def test_an_entry_served_from_memory_is_validated_like_one_read_from_the_file(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    gate = threading.Event()
    gated = _GatedConnection(cache._conn, gate)
    cache._conn = gated  # type: ignore[assignment]
    writer = threading.Thread(target=cache.put, args=("k", _request(0),
                                                      Completion.model_construct(text="a \ude00", model="m")))
    writer.start()
    assert gated.inserting.wait(60)
    served = cache.get("k")
    gate.set()
    writer.join()
    read = cache.get("k")
    cache.close()
    assert served is not None and read is not None
    assert served.text == read.text == "a \ufffd" and served.cached and read.cached


def test_commit_delay_groups_replies_of_calls_in_flight_and_flush_cuts_it_short(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While the last entry's caller says ``siblings`` other calls still wait for their replies,
    its group waits for them (up to the commit delay) and they share one commit; siblings=0
    commits at once; flush and close never wait for the delay. The delay is made huge here, so a
    wait that is not cut short would hang the test, not slow it."""
    from ideaharness.llm import cache as cache_module

    monkeypatch.setattr(cache_module, "COMMIT_DELAY_S", 600.0)
    cache = ResponseCache(tmp_path / "c.sqlite")
    gated = _GatedConnection(cache._conn, threading.Event())
    gated.gate.set()
    cache._conn = gated  # type: ignore[assignment]

    async def spaced(n: int) -> None:
        async def one(i: int) -> None:
            await asyncio.sleep(0.002 * i)  # replies arriving a few ms apart
            await cache.aput(f"s{i}", _request(i), Completion(text=str(i), model="m"),
                             siblings=n - 1 - i)  # the calls still waiting for their replies

        await asyncio.gather(*(one(i) for i in range(n)))

    asyncio.run(spaced(8))
    assert gated.commits == 1  # the 8 replies shared one commit
    asyncio.run(cache.aput("alone", _request(99), Completion(text="a", model="m")))  # siblings=0: at once
    assert gated.commits == 2

    async def waiting_then_flushed() -> None:
        reply = Completion(text="w", model="m")
        task = asyncio.create_task(cache.aput("w", _request(100), reply, siblings=5))
        await asyncio.sleep(0.05)
        assert not task.done()  # waiting for its siblings' replies
        await asyncio.to_thread(cache.flush)  # cuts the wait short
        await task

    asyncio.run(waiting_then_flushed())
    assert gated.commits == 3
    cache.close()


def test_llm_chat_stores_the_replies_of_calls_in_flight_in_one_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """LLM.chat tells the cache how many calls still wait for their replies: concurrent calls share
    one commit, a call alone is committed at once (with a huge commit delay, a wait would hang)."""
    from ideaharness.llm import cache as cache_module
    from ideaharness.llm import get_llm

    monkeypatch.setattr(cache_module, "COMMIT_DELAY_S", 600.0)
    llm = get_llm("scripted/echo", cache_path=tmp_path / "c.sqlite", max_concurrency=8)
    assert llm.cache is not None
    gated = _GatedConnection(llm.cache._conn, threading.Event())
    gated.gate.set()
    llm.cache._conn = gated  # type: ignore[assignment]

    async def main() -> None:
        await llm.chat([{"role": "user", "content": "alone"}])
        assert gated.commits == 1
        replies = await asyncio.gather(*(llm.chat([{"role": "user", "content": f"q{i}"}]) for i in range(8)))
        assert [r.text for r in replies] == [f"q{i}" for i in range(8)]
        assert gated.commits == 2 and llm._storing == 0
        again = await llm.chat([{"role": "user", "content": "q3"}])
        assert again.cached and llm.stats.calls == 9  # stored: answered from the cache
        await llm.aclose()

    asyncio.run(main())
