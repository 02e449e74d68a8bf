"""A cache file SQLite fails on: damaged (delete it) vs. cannot be opened or written (keep it), for
the LLM cache and the embedding store, in ``cache info`` and in the stores' own reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from ideaharness.errors import StorageError, UserError
from ideaharness.llm.cache import ResponseCache, request_key, sqlite_file_error
from ideaharness.llm.types import ChatRequest, Completion
from ideaharness.metrics.embedding_store import EmbeddingStore, StoredEmbedding
from tests.cli_support import run_cli


def filled_llm_cache(path: Path, n: int = 400) -> None:
    cache = ResponseCache(path)
    for i in range(n):
        req = ChatRequest(model="openai/m", messages=[{"role": "user", "content": f"question {i} " * 20}])
        cache.put(request_key(req), req, Completion(text=f"answer {i} " * 40, model="openai/m"))
    cache.close()


def filled_embedding_store(path: Path, n: int = 300) -> None:
    store = EmbeddingStore(path)
    sid = store.space({"model": "m"}, "m")
    rng = np.random.default_rng(0)
    store.put_many(sid, [(f"{i:064x}", StoredEmbedding(rng.random(96, dtype=np.float32))) for i in range(n)])
    store.close()


def damage(path: Path) -> None:
    """Overwrite 32 KB in the middle of ``path`` (its SQLite header stays valid)."""
    for suffix in ("-wal", "-shm"):
        assert not Path(f"{path}{suffix}").exists()  # closed: everything is in the main file
    size = path.stat().st_size
    assert size > 3 * 32768
    with open(path, "r+b") as handle:
        handle.seek(size // 2 - 16384)
        handle.write(bytes(range(256)) * 128)


def one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_a_damaged_page_in_the_llm_cache_is_one_line_saying_delete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path))
    path = tmp_path / "llm-cache.sqlite"
    filled_llm_cache(path)
    damage(path)
    code, _, err = run_cli(["cache", "info"], capsys)
    line = one_line(err)
    assert code == 1 and str(path) in line and "not a usable LLM cache" in line
    assert "ideaharness cache clear" in line
    cache = ResponseCache(path)
    with pytest.raises(UserError, match="not a usable LLM cache"):
        cache.info()
    cache.close()


def test_a_damaged_page_in_the_embedding_store_is_one_line_saying_delete(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite"
    filled_embedding_store(path)
    damage(path)
    store = EmbeddingStore(path)
    with pytest.raises(UserError, match="not a usable embedding store") as caught:
        store.get_many(store.space({"model": "m"}, "m"), [f"{i:064x}" for i in range(300)])
    store.close()
    assert "cache clear --embeddings" in str(caught.value) and not isinstance(caught.value, StorageError)


@pytest.mark.parametrize("which", ["llm-cache.sqlite", "embeddings.sqlite"])
def test_a_cache_that_cannot_be_opened_is_not_called_damaged(
    which: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the file's place is taken by a folder: SQLite cannot open it (SQLITE_CANTOPEN), as on a
    # read-only mount; nothing says to delete it
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path))
    (tmp_path / which).mkdir()
    code, _, err = run_cli(["cache", "info"], capsys)
    line = one_line(err)
    assert code == 1 and str(tmp_path / which) in line and "cannot be opened or written" in line
    assert "delete it or run" not in line and "do not delete it" in line and "IDEAHARNESS_CACHE_DIR" in line
    # a cache folder whose parent is a file: the folder cannot be made
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    for make in (ResponseCache, EmbeddingStore):
        with pytest.raises(StorageError, match="do not delete it"):
            make(blocker / "cache" / which)


def test_a_read_only_database_is_a_storage_error_with_its_own_advice(tmp_path: Path) -> None:
    path = tmp_path / "llm-cache.sqlite"
    filled_llm_cache(path, n=2)
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)  # what a read-only mount gives
    with pytest.raises(sqlite3.OperationalError) as caught:
        conn.execute("DELETE FROM responses")
    conn.close()
    error = sqlite_file_error(path, caught.value, "LLM cache", "ideaharness cache clear", "--no-cache")
    assert isinstance(error, StorageError) and "readonly" in str(error) and "do not delete it" in str(error)
    assert "--no-cache" in str(error)
    # damaged (SQLITE_NOTADB) is the other advice
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"not sqlite at all" * 300)
    with pytest.raises(sqlite3.DatabaseError) as notadb:
        sqlite3.connect(bad).execute("SELECT * FROM sqlite_master").fetchall()
    error = sqlite_file_error(bad, notadb.value, "LLM cache", "ideaharness cache clear", "--no-cache")
    assert not isinstance(error, StorageError) and "delete it or run `ideaharness cache clear`" in str(error)
