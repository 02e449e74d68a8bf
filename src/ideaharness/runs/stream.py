"""Bounded streaming execution: work through a stream of items with at most N in flight.

``asyncio.gather(*(fn(x) for x in items))`` creates one coroutine per item up front: memory grows
with the dataset and every item is materialised before the first finishes. :func:`run_bounded`
pulls the next item from a (sync or async) iterable only when one of at most ``max_in_flight``
tasks has finished, so a run over 100k instances holds ~``max_in_flight`` of them at a time
(:func:`run_bounded` lives in the base module :mod:`ideaharness.concurrency`; re-exported here).

Record semantics are unchanged: each ``fn(item)`` records its own units as they finish
(:meth:`ideaharness.runs.store.RunStore.put` appends and fsyncs before returning), so a crash or
Ctrl-C keeps every finished unit and a re-run resumes. When ``fn`` raises, no new item is
started, the tasks in flight are cancelled and awaited (each either recorded its unit or did not:
``put`` is synchronous), and the first exception is raised.

:func:`run_phases_streaming` is the streaming form of ``StepRunner.run_phases``: the phases run
in order, each over a fresh pass of the stream (``source()`` is called once per phase, e.g. a
generator re-reading the instance file), so a phase still sees every item's earlier phases done.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

from ideaharness.concurrency import run_bounded

T = TypeVar("T")

__all__ = ["run_bounded", "run_phases_streaming"]


async def run_phases_streaming(
    source: Callable[[], Iterable[T] | AsyncIterable[T]] | Sequence[T],
    phases: Sequence[tuple[str, Callable[[T], Awaitable[Any]]]],
    *,
    max_in_flight: int,
    on_done: Callable[[str, T], None] | None = None,
) -> dict[str, int]:
    """Run each phase over the whole stream with :func:`run_bounded`, phases in order.

    Args:
        source: a callable returning a fresh iterable of the items (called once per phase, so
            items are re-read instead of kept), or a sequence already in memory.
        phases: ``(name, fn)`` pairs; phase i+1 starts when phase i finished for every item.
        max_in_flight: most items in flight within a phase, >= 1.
        on_done: called with ``(phase name, item)`` after each item of each phase.

    Returns:
        phase name -> number of items processed.

    Raises:
        ValueError: ``max_in_flight`` < 1.
        Exception: the first exception of a phase; later phases do not start.
    """
    counts: dict[str, int] = {}
    for name, fn in phases:
        items = source() if callable(source) else source
        done = None if on_done is None else (lambda item, name=name: on_done(name, item))  # type: ignore[misc]
        counts[name] = await run_bounded(items, fn, max_in_flight=max_in_flight, on_done=done)
    return counts
