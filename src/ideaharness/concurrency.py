"""Bounded concurrency: work through a (sync or async) stream of items with at most N in flight.

A base module (imports only the standard library): the model layer (``llm/batch.py``) and the run
layer (``runs/stream.py``, ``runner/steps.py``) both use :func:`run_bounded`.

``asyncio.gather(*(fn(x) for x in items))`` creates one coroutine per item up front: memory grows
with the dataset and every item is materialised before the first finishes. :func:`run_bounded`
pulls the next item from the iterable only when one of at most ``max_in_flight`` tasks has
finished, so a run over 100k instances holds ~``max_in_flight`` of them at a time. When ``fn``
raises, no new item is started, the tasks in flight are cancelled and awaited, and the first
exception is raised.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")

__all__ = ["run_bounded"]


async def _aiter(items: Iterable[T] | AsyncIterable[T]) -> Any:
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item


async def run_bounded(
    items: Iterable[T] | AsyncIterable[T],
    fn: Callable[[T], Awaitable[Any]],
    *,
    max_in_flight: int,
    on_done: Callable[[T], None] | None = None,
) -> int:
    """Await ``fn(item)`` for every item, at most ``max_in_flight`` at once, reading lazily.

    Args:
        items: a sync or async iterable; the next item is drawn only when a slot is free.
        fn: the work for one item; its return value is discarded (record results inside ``fn``).
        max_in_flight: most items started and not finished, >= 1 (e.g. the model concurrency
            times 2-4, so the client's semaphore always has work queued).
        on_done: called with each item after its ``fn`` finished (e.g. advance a progress bar).

    Returns:
        The number of items processed.

    Raises:
        ValueError: ``max_in_flight`` < 1.
        Exception: the first exception raised by ``fn`` (or by iterating ``items``), after the
            tasks in flight were cancelled and awaited.
    """
    if max_in_flight < 1:
        raise ValueError(f"max_in_flight must be >= 1, got {max_in_flight}")
    pending: dict[asyncio.Task[Any], tuple[int, T]] = {}  # task -> (start order, item)
    finished: list[asyncio.Task[Any]] = []  # done and not yet reaped, filled by the tasks' callbacks
    wake = asyncio.Event()
    count = 0

    def on_finish(task: asyncio.Task[Any]) -> None:
        finished.append(task)
        wake.set()

    async def reap() -> None:
        """Wait for at least one task to finish, then take every finished one (the first error, in
        start order, is raised): O(1) per task, whatever the number in flight."""
        nonlocal count
        while not finished:
            wake.clear()
            await wake.wait()
        done = sorted((t for t in finished if t in pending), key=lambda t: pending[t][0])
        finished.clear()
        errors = [t.exception() for t in done if not t.cancelled() and t.exception() is not None]
        for task in done:
            _, item = pending.pop(task)
            if not task.cancelled() and task.exception() is None:
                count += 1
                if on_done is not None:
                    on_done(item)
        if errors:
            raise errors[0]  # type: ignore[misc]

    started = 0
    try:
        stream = _aiter(items)
        while True:
            while len(pending) >= max_in_flight:  # a slot first, then the next item
                await reap()
            try:
                item = await anext(stream)
            except StopAsyncIteration:
                break
            task = asyncio.ensure_future(fn(item))
            pending[task] = (started, item)
            started += 1
            task.add_done_callback(on_finish)
        while pending:
            await reap()
    except BaseException:
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
        raise
    return count
