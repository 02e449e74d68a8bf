"""Bounded streaming execution (runs/stream.py), the streaming instance reader and a RunStore
whose memory does not grow with what the records hold."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ideaharness.data.registry import iter_instances_jsonl, write_instances_jsonl
from ideaharness.errors import DataError
from ideaharness.llm import get_llm
from ideaharness.llm.parsing import extract_json_object
from ideaharness.prompts import render
from ideaharness.runner.steps import StepRunner
from ideaharness.runs.store import RunStore
from ideaharness.runs.stream import run_bounded, run_phases_streaming
from ideaharness.schema import Instance, Paper
from ideaharness.testing.openai_server import OpenAICompatServer


class Probe:
    """Counts items drawn from the source, in flight at once, and finished."""

    def __init__(self) -> None:
        self.drawn = 0
        self.active = 0
        self.peak = 0
        self.finished: list[int] = []
        self.drawn_at_first_finish: int | None = None

    def source(self, n: int) -> Iterator[int]:
        for i in range(n):
            self.drawn += 1
            yield i

    async def work(self, item: int) -> None:
        self.active += 1
        self.peak = max(self.peak, self.active)
        await asyncio.sleep(0.001 * (item % 3))
        self.active -= 1
        if self.drawn_at_first_finish is None:
            self.drawn_at_first_finish = self.drawn
        self.finished.append(item)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 60), st.integers(1, 8))
def test_every_item_once_never_more_than_the_bound(n: int, bound: int) -> None:
    probe = Probe()
    done: list[int] = []
    count = asyncio.run(run_bounded(probe.source(n), probe.work, max_in_flight=bound, on_done=done.append))
    assert count == n and sorted(probe.finished) == list(range(n)) and sorted(done) == list(range(n))
    assert probe.peak <= bound
    if n:
        assert probe.drawn_at_first_finish is not None and probe.drawn_at_first_finish <= bound


async def test_async_source_is_read_lazily() -> None:
    probe = Probe()

    async def source() -> AsyncIterator[int]:
        for i in probe.source(1000):
            yield i

    async def work(item: int) -> None:
        assert probe.drawn - len(probe.finished) <= 4  # drawn and unfinished: at most the bound
        await probe.work(item)

    assert await run_bounded(source(), work, max_in_flight=4) == 1000


async def test_a_failure_stops_drawing_and_cancels_the_rest() -> None:
    drawn: list[int] = []
    started: list[int] = []
    cancelled: list[int] = []

    def source() -> Iterator[int]:
        for i in range(100):
            drawn.append(i)
            yield i

    async def work(item: int) -> None:
        started.append(item)
        if item == 5:
            raise RuntimeError("boom")
        try:
            await asyncio.sleep(10 if item >= 3 else 0)
        except asyncio.CancelledError:
            cancelled.append(item)
            raise

    with pytest.raises(RuntimeError, match="boom"):
        await run_bounded(source(), work, max_in_flight=3)
    assert drawn == list(range(6)) and sorted(cancelled) == [3, 4]  # 3 and 4 were in flight
    assert not [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]


async def test_bad_bound() -> None:
    with pytest.raises(ValueError, match="max_in_flight"):
        await run_bounded([1], lambda x: asyncio.sleep(0), max_in_flight=0)


def _instances(path: Path, n: int) -> Path:
    write_instances_jsonl([Instance(id=f"i{k}", dataset="synthetic",
                                    target=Paper(id=f"p{k}", title=f"Paper {k}", abstract=f"Abstract {k}."))
                           for k in range(n)], path)
    return path


def test_instance_reader_yields_before_reading_the_whole_file(tmp_path: Path) -> None:
    path = _instances(tmp_path / "inst.jsonl", 3)
    with path.open("a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    stream = iter_instances_jsonl(path)
    assert next(stream).id == "i0"  # a reader that materialises the file fails here
    with pytest.raises(DataError, match="line 4"):
        list(stream)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(DataError, match="no instances"):
        list(iter_instances_jsonl(empty))


class Interrupted(Exception):
    """Stands for Ctrl-C in the middle of a phase."""


REPLY = '{"rating": 7, "explanation": "same idea"}'


async def _streamed_run(out: Path, data: Path, url: str, cache: Path, *,
                        stop_after: int | None = None) -> int:
    model = get_llm("openai/m", base_url=url, cache_path=cache, max_concurrency=4, max_retries=0)
    store = RunStore(out, {"benchmark": "stream-test"})
    runner = StepRunner(store, progress=False)

    async def rate(inst: Instance) -> None:
        messages = render("ideabench_overlap", idea=f"idea {inst.id}", target=inst.target.abstract)
        await runner.judge_step("overlap", inst.id, "", model,
                                messages, lambda t: extract_json_object(t, ("rating",))["rating"])
        if stop_after is not None and sum(1 for _ in store.iter_records("overlap")) >= stop_after:
            raise Interrupted

    async def note(inst: Instance) -> None:
        rating = store.get("overlap", inst.id)
        store.put("note", inst.id, {"rating": rating["judgment"]["parsed"] if rating else None})

    try:
        await run_phases_streaming(lambda: iter_instances_jsonl(data), [("overlap", rate), ("note", note)],
                                   max_in_flight=8)
        return len(store.records("note"))
    finally:
        store.close()
        await model.aclose()


async def test_streamed_run_records_resumes_and_loses_nothing_on_interrupt(tmp_path: Path) -> None:
    data = _instances(tmp_path / "inst.jsonl", 40)
    with OpenAICompatServer(responder=lambda body: REPLY) as server:
        with pytest.raises(Interrupted):
            await _streamed_run(tmp_path / "run", data, server.base_url, tmp_path / "c.sqlite", stop_after=10)
        first = len(server.requests)
        kept = RunStore(tmp_path / "run", {"benchmark": "stream-test"})
        recorded = len(kept.records("overlap"))
        kept.close()
        assert 10 <= recorded <= first  # every finished unit was kept
        assert await _streamed_run(tmp_path / "run", data, server.base_url, tmp_path / "other.sqlite") == 40
        assert len(server.requests) - first == 40 - recorded  # the resume asked only for the rest
    store = RunStore(tmp_path / "run", {"benchmark": "stream-test"})
    assert [d["rating"] for _, _, d in store.records("note")] == [7] * 40
    store.close()


def test_run_store_index_does_not_hold_record_data(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run", {"x": 1})
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(40):
            store.put("step", f"i{i}", {"raw": "x" * 50_000})
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 200_000  # 2 MB of record text written; an in-memory index would hold all of it
    assert store.get("step", "i39") == {"raw": "x" * 50_000} and store.get("step", "nope") is None
    store.close()
    again = RunStore(tmp_path / "run", {"x": 1})
    assert [i for i, _, _ in again.records("step")] == [f"i{i}" for i in range(40)]
    assert again.has("step", "i0") and not again.has("other", "i0")
    again.close()


async def test_aput_groups_concurrent_records_into_few_fsyncs(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    calls: list[int] = []
    real_fsync = os.fsync

    def counting_fsync(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counting_fsync)
    store = RunStore(tmp_path / "run", {"x": 1})
    await asyncio.gather(*(store.aput("step", f"i{i}", {"n": i}) for i in range(64)),
                         store.aput("step", "i0", {"n": "again"}), store.aput("other", "i0", {"n": -1}))
    assert len(calls) <= 4  # one group per records file (and perhaps a second group), not 66 fsyncs
    assert store.get("step", "i63") == {"n": 63} and store.get("step", "i0") == {"n": 0}
    await store.aput("step", "i64", {"n": 64})  # a later put after the group finished
    store.close()
    again = RunStore(tmp_path / "run", {"x": 1})
    assert [d["n"] for _, _, d in again.records("step")] == list(range(65))
    assert again.get("other", "i0") == {"n": -1} and again.corrupt_lines == 0
    again.close()
