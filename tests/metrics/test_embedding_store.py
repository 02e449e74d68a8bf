"""The embedding store (metrics/embedding_store.py): exact round trips, distinct keys, a corrupt file,
two processes writing one file, the device option."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import uuid
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import ideaharness
from ideaharness.cli import main
from ideaharness.errors import UserError
from ideaharness.metrics.embedding_store import (
    EmbeddingRuntime,
    EmbeddingStore,
    StoredEmbedding,
    clear_store,
    resolve_device,
    space_id,
    store_info,
    text_key,
)
from ideaharness.runner.options import ExecutionOptions

SRC = Path(ideaharness.__file__).parents[1]

TEXTS = st.text(st.characters(exclude_categories=()))  # lone surrogates included
arrays = st.one_of(
    hnp.arrays(np.float32, st.integers(0, 6)),  # a sentence vector (dim may be 0)
    hnp.arrays(np.float32, st.tuples(st.integers(1, 5), st.integers(1, 6))),  # tokens x dim
)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> EmbeddingStore:
    return EmbeddingStore(tmp_path_factory.mktemp("store") / "embeddings.sqlite")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, array=arrays, with_ids=st.booleans(), layer=st.integers(0, 48))
def test_any_array_round_trips_bit_for_bit(store: EmbeddingStore, text: str, array: np.ndarray,
                                           with_ids: bool, layer: int) -> None:
    ids = np.arange(array.shape[0], dtype=np.int32) * 7 if with_ids and array.ndim == 2 else None
    space = store.space({"model": "m", "layer": layer, "draw": uuid.uuid4().hex}, f"m L{layer}")
    store.put_many(space, [(text_key(text), StoredEmbedding(array, ids))])
    back = store.get_many(space, [text_key(text)])[text_key(text)]
    assert back.vectors.dtype == np.float32 and back.vectors.shape == array.shape
    assert back.vectors.tobytes() == array.astype(np.float32).tobytes()  # NaN, -0.0 and inf too
    assert (back.ids is None) == (ids is None)
    if ids is not None:
        assert back.ids is not None and back.ids.tolist() == ids.tolist()


@given(a=TEXTS, b=TEXTS, layer_a=st.integers(0, 48), layer_b=st.integers(0, 48),
       model_a=st.sampled_from(["m1", "m2"]), model_b=st.sampled_from(["m1", "m2"]))
def test_keys_differ_for_different_texts_models_and_layers(a: str, b: str, layer_a: int, layer_b: int,
                                                           model_a: str, model_b: str) -> None:
    assert (text_key(a) == text_key(b)) == (a == b)  # lone surrogates hash too
    same_space = space_id({"model": model_a, "layer": layer_a}) == space_id({"model": model_b,
                                                                             "layer": layer_b})
    assert same_space == (model_a == model_b and layer_a == layer_b)


def test_a_stored_text_is_not_computed_again(tmp_path: Path) -> None:
    runtime = EmbeddingRuntime(store_path=tmp_path / "e.sqlite")
    asked: list[list[str]] = []

    def compute(texts: list[str]):  # type: ignore[no-untyped-def]
        asked.append(texts)
        yield [(t, StoredEmbedding(np.full(3, len(t), dtype=np.float32))) for t in texts]

    found, computed = runtime.lookup({"model": "m"}, "m", ["a", "bb", "a"], compute)
    assert computed == {"a", "bb"} and asked == [["a", "bb"]]
    again = EmbeddingRuntime(store_path=tmp_path / "e.sqlite")  # another run, same store
    found2, computed2 = again.lookup({"model": "m"}, "m", ["bb", "ccc"], compute)
    assert computed2 == {"ccc"} and asked[-1] == ["ccc"]
    assert found2["bb"].vectors.tolist() == found["bb"].vectors.tolist()
    assert again.counts["m"].model_dump() == {"embedded": 1, "reused": 1}
    other_layer, _ = again.lookup({"model": "m", "layer": 2}, "m L2", ["bb"], compute)
    assert asked[-1] == ["bb"]  # another space: computed again


def test_a_runtime_pickles_without_its_connection(tmp_path: Path) -> None:
    import pickle

    runtime = EmbeddingRuntime(store_path=tmp_path / "e.sqlite")
    assert runtime.store is not None  # opened
    runtime.lookup({"model": "m"}, "m", ["a"], lambda texts: iter(
        [[(t, StoredEmbedding(np.ones(2, dtype=np.float32))) for t in texts]]))
    copy = pickle.loads(pickle.dumps(runtime))  # what Ray does with a benchmark's unit function
    found, computed = copy.lookup({"model": "m"}, "m", ["a"], lambda texts: iter([]))
    assert computed == set() and found["a"].vectors.tolist() == [1.0, 1.0]
    assert copy.store_path == runtime.store_path and copy.device == "cpu"


def test_no_cache_reads_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path))
    runtime = ExecutionOptions(no_embedding_cache=True).embedding_runtime()
    assert runtime.store_path is None and runtime.store is None
    found, computed = runtime.lookup({"model": "m"}, "m", ["x"], lambda texts: iter(
        [[(t, StoredEmbedding(np.zeros(2, dtype=np.float32))) for t in texts]]))
    assert computed == {"x"} and not list(tmp_path.iterdir())
    assert ExecutionOptions().embedding_runtime().store_path == tmp_path / "embeddings.sqlite"


def test_a_file_that_is_not_a_store_is_a_one_line_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite"
    path.write_bytes(b"this is not SQLite" * 100)
    with pytest.raises(UserError) as err:
        EmbeddingStore(path)
    message = str(err.value)
    assert str(path) in message and "\n" not in message and "cache clear --embeddings" in message


def test_a_full_disk_is_a_storage_error_and_keeps_nothing_of_the_batch(tmp_path: Path) -> None:
    """SQLite rolls a transaction back by itself when the database is full (here: its page limit):
    the put is a StorageError naming the file, not "not a usable embedding store; delete it"."""
    from ideaharness.errors import StorageError

    path = tmp_path / "embeddings.sqlite"
    store = EmbeddingStore(path)
    sid = store.space({"model": "m"}, "m")
    store.put_many(sid, [("kept", StoredEmbedding(np.ones(3, dtype=np.float32)))])
    store._conn.execute("PRAGMA max_page_count=20")  # ~80 KiB: the batch below does not fit
    big = [(f"k{i}", StoredEmbedding(np.zeros((200, 384), dtype=np.float32))) for i in range(5)]
    with pytest.raises(StorageError) as err:
        store.put_many(sid, big)
    assert str(path) in str(err.value) and "delete it" not in str(err.value)
    assert set(store.get_many(sid, ["kept", *(k for k, _ in big)])) == {"kept"}
    store.close()


def test_a_row_whose_bytes_do_not_match_its_shape_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite"
    store = EmbeddingStore(path)
    space = store.space({"model": "m"}, "m")
    store.put_many(space, [(text_key("t"), StoredEmbedding(np.ones((2, 3), dtype=np.float32)))])
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE vectors SET data = substr(data, 1, 10)")
    with pytest.raises(UserError, match="corrupt embedding row") as err:
        store.get_many(space, [text_key("t")])
    assert str(path) in str(err.value) and "\n" not in str(err.value)


WRITER = """
import os, sys, time
from pathlib import Path
import numpy as np
from ideaharness.metrics.embedding_store import EmbeddingStore, StoredEmbedding, text_key
barrier = Path(sys.argv[2])
(barrier / str(os.getpid())).touch()
while len(list(barrier.iterdir())) < 2:  # both start together: creating the file races too
    time.sleep(0.01)
store = EmbeddingStore(sys.argv[1])
space = store.space({"model": "m", "layer": 1}, "m L1")
for batch in range(400):
    texts = [f"text {(batch * 5 + i) % 120}" for i in range(8)]  # overlapping with the other writer
    vectors = {t: np.arange(len(t) * 4, dtype=np.float32).reshape(len(t), 4) + len(t) for t in texts}
    store.put_many(space, [(text_key(t), StoredEmbedding(vectors[t], np.arange(len(t), dtype=np.int32)))
                           for t in texts])
    got = store.get_many(space, [text_key(t) for t in texts])
    assert len(got) == len(texts)
print("ok")
"""


def test_two_processes_writing_one_store_do_not_corrupt_it(tmp_path: Path) -> None:
    path = tmp_path / "embeddings.sqlite"  # not created yet: both race to create it
    barrier = tmp_path / "ready"
    barrier.mkdir()
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(barrier)], cwd=SRC,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for proc in writers:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and out.strip() == "ok", err[-2000:]
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store = EmbeddingStore(path)
    space = space_id({"model": "m", "layer": 1})
    texts = [f"text {i}" for i in range(120)]
    got = store.get_many(space, [text_key(t) for t in texts])
    assert len(got) == 120 and len(store) == 120
    for t in texts:
        e = got[text_key(t)]
        expected = np.arange(len(t) * 4, dtype=np.float32).reshape(len(t), 4) + len(t)
        assert e.vectors.tolist() == expected.tolist()
        assert e.ids is not None and e.ids.tolist() == list(range(len(t)))


def test_cuda_without_a_gpu_is_one_line_and_auto_falls_back() -> None:
    import torch

    if torch.cuda.is_available():
        assert resolve_device("cuda") == "cuda" and resolve_device("auto") == "cuda"
    else:
        with pytest.raises(UserError) as err:
            ExecutionOptions(device="cuda").embedding_runtime()
        assert "--device cuda" in str(err.value) and "\n" not in str(err.value)
        assert resolve_device("auto") == "cpu"
    assert resolve_device("cpu") == "cpu"
    with pytest.raises(UserError, match="expected one of cpu, cuda, auto"):
        resolve_device("tpu")


def test_cache_info_and_clear_account_for_the_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(tmp_path))
    store = EmbeddingStore(tmp_path / "embeddings.sqlite")
    space = store.space({"model": "m", "layer": 5}, "bertscore[m,L5]")
    store.put_many(space, [(text_key(t), StoredEmbedding(np.ones((2, 2), dtype=np.float32))) for t in "abc"])
    store.close()
    assert store_info().entries_by_space == {"bertscore[m,L5]": 3}
    main(["cache", "info"])
    out = capsys.readouterr().out
    assert "embeddings.sqlite: 3 embeddings" in out and "bertscore[m,L5]: 3" in out
    main(["cache", "clear", "--embeddings"])
    assert "embeddings.sqlite: cleared" in capsys.readouterr().out
    assert not (tmp_path / "embeddings.sqlite").exists() and clear_store() == 0
