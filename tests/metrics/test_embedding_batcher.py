"""Embeddings asked from coroutines (:func:`aembed`, :class:`EmbeddingMemo`): concurrent calls share
one forward pass run off the event loop, with the values :func:`embed` gives (the shipped MiniLM)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ideaharness.metrics import embeddings as E
from ideaharness.metrics.embedding_store import EmbeddingRuntime

TEXTS = [f"Idea {i}: a catalyst for reaction {i} studied under pressure {i * 3} bar" for i in range(12)]


@pytest.fixture
def runtime(tmp_path: Path) -> Iterator[EmbeddingRuntime]:
    rt = EmbeddingRuntime(store_path=tmp_path / "emb.sqlite")
    yield rt
    rt.close()


async def test_concurrent_calls_share_one_pass_with_embeds_values(runtime: EmbeddingRuntime) -> None:
    batcher = E.EmbeddingBatcher(runtime=runtime)
    rows = await asyncio.gather(*(batcher.embed([t]) for t in TEXTS), batcher.embed(TEXTS[:3]))
    assert batcher.passes == 1
    expected = E.embed(TEXTS, runtime=EmbeddingRuntime(cache=False))
    for i, row in enumerate(rows[:-1]):
        assert row.shape == (1, expected.shape[1])
        np.testing.assert_allclose(row[0], expected[i], atol=1e-6)
    np.testing.assert_allclose(rows[-1], expected[:3], atol=1e-6)


async def test_the_event_loop_runs_while_a_pass_computes(monkeypatch: pytest.MonkeyPatch) -> None:
    def slow_embed(texts: list[str], model: str = E.DEFAULT_EMBEDDING_MODEL, **_: object) -> np.ndarray:
        time.sleep(0.3)  # a forward pass holding the thread it runs in
        return np.ones((len(texts), 4), dtype=np.float32)

    monkeypatch.setattr(E, "embed", slow_embed)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        for _ in range(10):
            await asyncio.sleep(0.01)
            ticks += 1

    batcher = E.EmbeddingBatcher(runtime=EmbeddingRuntime(cache=False))
    await asyncio.gather(batcher.embed(["a"]), ticker())
    assert ticks == 10  # the loop was not blocked for the 0.3 s pass


async def test_a_failed_pass_raises_in_every_waiting_call_and_the_next_call_works(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0

    def flaky(texts: list[str], model: str = E.DEFAULT_EMBEDDING_MODEL, **_: object) -> np.ndarray:
        nonlocal calls
        calls += 1
        if calls == 1:
            raise RuntimeError("out of memory")
        return np.full((len(texts), 2), calls, dtype=np.float32)

    monkeypatch.setattr(E, "embed", flaky)
    batcher = E.EmbeddingBatcher(runtime=EmbeddingRuntime(cache=False))
    results = await asyncio.gather(batcher.embed(["a"]), batcher.embed(["b"]), return_exceptions=True)
    assert all(isinstance(r, RuntimeError) for r in results)
    assert (await batcher.embed(["a"]))[0, 0] == 2


async def test_passes_hold_at_most_max_texts_distinct_texts(monkeypatch: pytest.MonkeyPatch) -> None:
    sizes: list[int] = []

    def record(texts: list[str], model: str = E.DEFAULT_EMBEDDING_MODEL, **_: object) -> np.ndarray:
        sizes.append(len(texts))
        return np.asarray([[float(t)] for t in texts], dtype=np.float32)

    monkeypatch.setattr(E, "embed", record)
    batcher = E.EmbeddingBatcher(runtime=EmbeddingRuntime(cache=False), max_texts=4)
    rows = await asyncio.gather(*(batcher.embed([str(i), str(i)]) for i in range(10)))
    assert max(sizes) <= 4 and sum(sizes) == 10
    assert [float(r[0, 0]) for r in rows] == [float(i) for i in range(10)]


async def test_memo_sync_and_async_fill_one_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []

    def fake(texts: list[str]) -> np.ndarray:
        seen.append(list(texts))
        return np.asarray([[len(t), 1.0] for t in texts], dtype=np.float32)

    memo = E.EmbeddingMemo(embed_fn=fake)
    assert (await memo.aembed(["ab", "abc", "ab"]))[:, 0].tolist() == [2, 3, 2]
    assert memo(["abc", "abcd"])[:, 0].tolist() == [3, 4]
    assert seen == [["ab", "abc"], ["abcd"]]
    assert memo([]).shape == (0, 1)
