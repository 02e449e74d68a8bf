"""RunStore and file writing: torn tails, full disks, clobbering, locks, input hashes, usage, surrogates."""

from __future__ import annotations

import errno
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ideaharness
from ideaharness import fileio
from ideaharness.errors import StorageError, UserError
from ideaharness.llm.cache import ResponseCache, request_key
from ideaharness.llm.types import ChatRequest, Completion
from ideaharness.runs.store import RunStore

SRC = Path(ideaharness.__file__).parents[1]  # the package under test, for child processes


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


# ---------------------------------------------------------------- torn records


def test_torn_tail_is_cut_off_kept_aside_and_counted(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run", {"a": 1}) as store:
        for i in range(9):
            store.put("rate", f"i{i}", {"rating": i})
    records = tmp_path / "run" / "records" / "rate.jsonl"
    with records.open("a", encoding="utf-8") as fh:  # a kill in the middle of the 10th write
        fh.write('{"step": "rate", "instance_id": "i9", "key": "", "data": {"rat')
    with RunStore(tmp_path / "run", {"a": 1}) as store:
        assert store.corrupt_lines == 1
        assert len(store.records("rate")) == 9
        store.put("rate", "i9", {"rating": 9})  # redone: must land on a line of its own
        in_memory = len(store.records("rate"))
    assert [r["instance_id"] for r in _lines(records)] == [f"i{i}" for i in range(10)]
    assert (
        (tmp_path / "run" / "records" / "rate.torn")
        .read_text()
        .startswith('{"step": "rate", "instance_id": "i9"')
    )
    with RunStore(tmp_path / "run", {"a": 1}) as store:
        assert len(store.records("rate")) == in_memory == 10
        assert store.corrupt_lines == 1  # still reported on later runs
        results: dict = {}
        store.write_results(results)
    assert json.loads((tmp_path / "run" / "results.json").read_text())["corrupt_record_lines"] == 1


# ---------------------------------------------------------------- full disk


def _full_disk_after(monkeypatch: pytest.MonkeyPatch, n_bytes: int) -> None:
    """Let one write put ``n_bytes`` on disk, then fail as a full disk does."""
    real_write = os.write

    def write(fd: int, data: bytes) -> int:
        if len(data) > n_bytes:
            real_write(fd, bytes(data[:n_bytes]))
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(fileio.os, "write", write)


def test_full_disk_on_append_leaves_nothing_half_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RunStore(tmp_path / "run", {"a": 1})
    store.put("s", "i0", {"x": 0})
    path = tmp_path / "run" / "records" / "s.jsonl"
    before = path.read_bytes()
    _full_disk_after(monkeypatch, 10)
    with pytest.raises(StorageError, match=r"s\.jsonl: no space left on the device; free space there"):
        store.put("s", "i1", {"x": 1})
    assert path.read_bytes() == before and not store.has("s", "i1")
    monkeypatch.undo()  # space freed
    store.put("s", "i1", {"x": 1})
    store.close()
    assert [r["instance_id"] for r in _lines(path)] == ["i0", "i1"]


def test_full_disk_on_replace_keeps_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "results.json"
    target.write_text("old")

    def no_space(*args: object, **kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(fileio.os, "fsync", no_space)
    with pytest.raises(StorageError, match="results.json: no space left"):
        fileio.atomic_write_text(target, "new")
    assert target.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


class _FullDatabase:
    """An SQLite connection whose disk is full: reads work, every INSERT fails as SQLite reports it."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def execute(self, sql: str, *args: object) -> object:
        if sql.lstrip().upper().startswith("INSERT"):
            raise sqlite3.OperationalError("database or disk is full")
        return self.conn.execute(sql, *args)

    def commit(self) -> None:
        self.conn.commit()

    def rollback(self) -> None:
        self.conn.rollback()

    def close(self) -> None:
        self.conn.close()


def test_full_disk_in_the_response_cache_is_one_line(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c.sqlite")
    request = ChatRequest(model="m", messages=[{"role": "user", "content": "q"}])
    cache._conn = _FullDatabase(cache._conn)  # type: ignore[assignment]
    with pytest.raises(StorageError, match=r"c\.sqlite: no space left on the device"):
        cache.put("k", request, Completion(text="a", model="m"))
    assert cache.get("k") is None
    cache.close()


# ---------------------------------------------------------------- never clobber


def test_out_folder_that_is_not_a_run_is_refused_untouched(tmp_path: Path) -> None:
    folder = tmp_path / "paper-draft"
    folder.mkdir()
    (folder / "results.json").write_text("my own results")
    (folder / "report.html").write_text("<p>mine</p>")
    with pytest.raises(
        UserError,
        match=r"paper-draft: exists and is not a run directory \(it holds report\.html, "
        r"results\.json and no config\.json\)",
    ):
        RunStore(folder, {"a": 1})
    assert sorted(p.name for p in folder.iterdir()) == ["report.html", "results.json"]
    assert (folder / "results.json").read_text() == "my own results"


def test_out_naming_a_file_or_a_corrupt_config_is_one_line(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("x")
    with pytest.raises(UserError, match=r"notes\.txt: is a file"):
        RunStore(file, {"a": 1})
    run = tmp_path / "run"
    RunStore(run, {"a": 1}).close()
    (run / "config.json").write_text('{"a": 1,')
    with pytest.raises(UserError, match=r"config\.json: not a readable run configuration"):
        RunStore(run, {"a": 1})
    (run / "config.json").write_text("[1, 2]")
    with pytest.raises(UserError, match=r"config\.json: not a run configuration"):
        RunStore(run, {"a": 1})


def test_empty_folder_and_own_leftovers_are_accepted(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    RunStore(empty, {"a": 1}).close()
    leftover = tmp_path / "leftover"
    leftover.mkdir()
    (leftover / ".run.lock").touch()
    (leftover / "records").mkdir()
    RunStore(leftover, {"a": 1}).close()


# ---------------------------------------------------------------- one process per run directory

_HOLDER = """
import sys, time
from ideaharness.runs.store import RunStore
store = RunStore(sys.argv[1], {"a": 1})
open(sys.argv[2], "w").close()
time.sleep(120)
"""


def test_second_process_is_refused_and_told_who_holds_the_directory(tmp_path: Path) -> None:
    run, ready = tmp_path / "run", tmp_path / "ready"
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(run), str(ready)], env=env)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            assert holder.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        with pytest.raises(UserError) as exc:
            RunStore(run, {"a": 1})
        message = str(exc.value)
        assert f"in use by process {holder.pid} on {socket.gethostname()}, started 20" in message
        assert "one process per run directory" in message
    finally:
        holder.kill()  # kill -9: the operating system drops the lock
        holder.wait()
    RunStore(run, {"a": 1}).close()


def test_same_process_twice_is_refused_until_closed(tmp_path: Path) -> None:
    first = RunStore(tmp_path / "run", {"a": 1})
    with pytest.raises(UserError, match=r"\(this process\)"):
        RunStore(tmp_path / "run", {"a": 1})
    first.close()
    RunStore(tmp_path / "run", {"a": 1}).close()


# ---------------------------------------------------------------- input hashes and --force


def test_changed_input_is_refused_then_superseded_with_force(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text('{"id": 1}\n')
    with RunStore(tmp_path / "run", {"data": str(data)}, inputs={"--data": [data]}) as store:
        store.put("s", "i0", {"x": 0})
    data.write_text('{"id": 2}\n')
    with pytest.raises(UserError, match=rf"--data {data}: changed since this run started .*--force"):
        RunStore(tmp_path / "run", {"data": str(data)}, inputs={"--data": [data]})
    with RunStore(tmp_path / "run", {"data": str(data)}, inputs={"--data": [data]}, force=True) as store:
        assert not store.has("s", "i0")  # a new run
    (old,) = (tmp_path / "run" / "superseded").iterdir()
    assert (old / "records" / "s.jsonl").exists() and (old / "config.json").exists()
    RunStore(tmp_path / "run", {"data": str(data)}, inputs={"--data": [data]}).close()  # resumes now


def test_run_recorded_without_input_hashes_adopts_them(tmp_path: Path) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text("x")
    RunStore(tmp_path / "run", {"a": 1}).close()
    RunStore(tmp_path / "run", {"a": 1}, inputs={"--data": [data]}).close()
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert list(config["input_sha256"]["--data"]) == [str(data)]


# ---------------------------------------------------------------- surrogates


def test_record_with_lone_surrogate_is_stored_and_read_back(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run", {"a": 1}) as store:
        store.put("s", "i0", {"raw_text": "half an emoji \ud83d"})
    with RunStore(tmp_path / "run", {"a": 1}) as store:
        assert store.get("s", "i0") == {"raw_text": "half an emoji \ud83d"}
    (tmp_path / "run" / "records" / "s.jsonl").read_text(encoding="utf-8")  # valid UTF-8 on disk


def test_cache_key_and_entry_with_lone_surrogates(tmp_path: Path) -> None:
    request = ChatRequest.model_construct(
        model="m",
        messages=[{"role": "user", "content": "q \ud83d"}],
        temperature=0.0,
        top_p=None,
        max_tokens=8,
        seed=0,
        json_schema=None,
        sample_index=0,
    )
    key = request_key(request)
    assert len(key) == 64
    cache = ResponseCache(tmp_path / "c.sqlite")
    reply = Completion.model_construct(text="a \ude00", model="m")
    cache.put(key, request, reply)
    (stored,) = cache._conn.execute("SELECT completion FROM responses").fetchone()
    got = cache.get(key)
    cache.close()
    assert json.loads(stored)["text"] == "a \ude00"  # stored exactly, as an ASCII escape
    assert got is not None and got.text == "a \ufffd"  # a Completion never holds a lone surrogate


def test_full_disk_in_the_scholarly_cache_is_one_line(tmp_path: Path) -> None:
    from ideaharness.scholarly.cache import ResponseCache as ScholarCache

    cache = ScholarCache(tmp_path / "s2.sqlite")
    cache._db = _FullDatabase(cache._db)  # type: ignore[assignment]
    with pytest.raises(StorageError, match=r"s2\.sqlite: no space left on the device"):
        cache.put("k", "https://api.example/paper", 200, "{}")


def test_results_and_usage_never_hold_a_known_secret(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The last guard of results.json: a key the process knows (here OPENAI_API_KEY) that reached
    the results dict (e.g. in an error text a server echoed) is replaced before the file is written;
    the usage and lock files the store writes hold none either."""
    secret = "sk-" + "proj-KNOWN-0123456789abcdef"  # a fake key, assembled so scanners skip it
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    store = RunStore(tmp_path / "run", {"a": 1})
    store.track_usage({"judge": None})
    results = {"failed_units": [{"step": "judge", "instance_id": "i1",
                                 "error": f"Incorrect API key provided: {secret}"}]}
    with store:
        store.write_results(results)
    written = (tmp_path / "run" / "results.json").read_text()
    assert "Incorrect API key provided: [REDACTED]" in written
    for path in (tmp_path / "run").rglob("*"):
        assert not path.is_file() or secret not in path.read_text(errors="replace"), path
