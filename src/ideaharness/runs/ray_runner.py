"""Spread a phase's instances over a Ray cluster; the driver stays the one writer of the run directory.

``pip install 'ideaharness[ray]'``. :func:`run_phase_ray` cuts a phase's items into chunks and runs
each chunk as a Ray task (:func:`run_chunk`): the worker builds its own model clients from
picklable :class:`ModelSpec` recipes (keys come from the worker's environment, never through Ray),
runs the phase's unit function over the chunk against a :class:`RecordBuffer` seeded with the
chunk's records so far, and returns only the records (and rendered prompts) it added. The driver
writes them (prompts first) to the
:class:`~ideaharness.runs.store.RunStore` as chunks finish, so the run directory holds the same
records as a local run (:func:`run_phase_local`), and a resumed run skips what is recorded.

A worker that dies (node lost, process killed) loses only its chunk's unreturned records: Ray
retries the task (``max_retries``) and, since the response cache is shared (one SQLite file on a
shared path, or one per node), the retry answers the calls made before the death from the cache.
A record reaches the store once: the driver writes each returned chunk once, and the store skips
a unit already recorded.

The unit function has the form ``async fn(ctx: WorkerContext, item) -> None`` and records through
``ctx.steps`` (a :class:`~ideaharness.runner.steps.StepRunner`) or ``ctx.store``; it and the
items must pickle (cloudpickle: closures and lambdas are fine).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from ideaharness.errors import UserError
from ideaharness.runs.store import RunStore
from ideaharness.runs.stream import run_bounded
from ideaharness.runs.usage import model_stats, sum_stats

T = TypeVar("T")

Record = tuple[str, str, str, dict[str, Any]]
"""(step, instance_id, key, data): one unit of work, as :meth:`RunStore.all_records` gives it."""

DEFAULT_CHUNK_SIZE = 8
MAX_IN_FLIGHT = 64
"""Items of a chunk (or of a local phase) in flight at once."""


class ModelSpec(BaseModel):
    """Picklable recipe of a model client: the arguments of :func:`ideaharness.llm.get_llm`.

    No key travels in it: a worker reads ``OPENAI_API_KEY`` from its own environment (set it on
    every node, or in Ray's ``runtime_env``). ``cache_path`` should be one file every worker can
    reach (a shared path) for the shared cache semantics; None uses each node's default cache.
    """

    model: str
    base_url: str | None = None
    cache_path: str | None = None
    use_cache: bool = True
    max_concurrency: int = Field(default=4, ge=1)
    rpm: float | None = Field(default=None, gt=0)
    max_retries: int = Field(default=6, ge=0)
    timeout_s: float = Field(default=300.0, gt=0)
    price_per_mtok: tuple[float, float] | None = None

    def build(self) -> Any:
        """The :class:`~ideaharness.llm.LLM` of this spec (on the calling node)."""
        from ideaharness.llm import get_llm

        return get_llm(self.model, **self.model_dump(exclude={"model"}))


class RecordBuffer:
    """The part of :class:`RunStore` that steps use (``get``, ``has``, ``put``, ``aput``,
    ``aput_prompt``, ``records``, ``iter_records``, ``all_records``), in memory: seeded with existing
    records, it keeps the new ones in ``added`` and the rendered prompts of its judgments in
    ``prompts`` (prompt hash -> messages)."""

    def __init__(self, existing: Sequence[Record] = ()) -> None:
        self._index: dict[tuple[str, str, str], dict[str, Any]] = {(s, i, k): d for s, i, k, d in existing}
        self.added: list[Record] = []
        self.prompts: dict[str, list[dict[str, Any]]] = {}
        self.corrupt_lines = 0

    def put_prompt(self, prompt_hash: str, messages: Sequence[Mapping[str, Any]]) -> None:
        self.prompts.setdefault(prompt_hash, [dict(m) for m in messages])

    async def aput_prompt(self, prompt_hash: str, messages: Sequence[Mapping[str, Any]]) -> None:
        self.put_prompt(prompt_hash, messages)

    def get(self, step: str, instance_id: str, key: str = "") -> dict[str, Any] | None:
        return self._index.get((step, instance_id, key))

    def has(self, step: str, instance_id: str, key: str = "") -> bool:
        return (step, instance_id, key) in self._index

    def put(self, step: str, instance_id: str, data: dict[str, Any], key: str = "") -> None:
        if (step, instance_id, key) in self._index:
            return
        self._index[(step, instance_id, key)] = data
        self.added.append((step, instance_id, key, data))

    async def aput(self, step: str, instance_id: str, data: dict[str, Any], key: str = "") -> None:
        self.put(step, instance_id, data, key)

    def records(self, step: str) -> list[tuple[str, str, dict[str, Any]]]:
        return [(i, k, d) for (s, i, k), d in self._index.items() if s == step]

    def iter_records(self, step: str | None = None) -> Iterator[Record]:
        return iter([(s, i, k, d) for (s, i, k), d in self._index.items() if step is None or s == step])

    def all_records(self) -> list[Record]:
        return [(s, i, k, d) for (s, i, k), d in self._index.items()]


@dataclass
class WorkerContext:
    """What a unit function gets: the model clients by role, the records and a step runner over them."""

    models: dict[str, Any]
    store: Any
    steps: Any


@dataclass
class ChunkResult:
    """What a chunk returns to the driver: its new records, the rendered prompts they name (hash ->
    messages), its failed units, model counters by role."""

    records: list[Record] = field(default_factory=list)
    prompts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    failures: list[dict[str, Any]] = field(default_factory=list)
    stats: dict[str, dict[str, Any] | None] = field(default_factory=dict)


class PhaseOutcome(BaseModel):
    """What :func:`run_phase_ray` / :func:`run_phase_local` did: records written, failed units
    (``FailedUnit`` dicts), model counters by role summed over every chunk."""

    records_written: int = 0
    failures: list[dict[str, Any]] = Field(default_factory=list)
    stats: dict[str, dict[str, Any] | None] = Field(default_factory=dict)


UnitFn = Callable[[WorkerContext, T], Awaitable[None]]


def _step_runner(store: Any, step_options: Mapping[str, Any]) -> Any:
    from ideaharness.runner.steps import StepRunner

    return StepRunner(store, progress=False, **dict(step_options))


async def _run_items(fn: UnitFn[T], items: Sequence[T], ctx: WorkerContext) -> None:
    async def one(item: T) -> None:
        await fn(ctx, item)

    await run_bounded(items, one, max_in_flight=MAX_IN_FLIGHT)


def run_chunk(
    fn: UnitFn[T],
    items: Sequence[T],
    models: Mapping[str, ModelSpec],
    existing: Sequence[Record],
    step_options: Mapping[str, Any] | None = None,
) -> ChunkResult:
    """Run ``fn`` over ``items`` with fresh clients; the body of one Ray task (runs anywhere).

    Args:
        fn: the unit function.
        models: role -> spec; the clients are built here and closed at the end.
        existing: the records of these items so far (skipped by the steps: resume).
        step_options: keyword arguments of ``StepRunner`` (``max_attempts``, ``max_prompt_tokens``).
    """
    built = {role: spec.build() for role, spec in models.items()}
    buffer = RecordBuffer(existing)
    steps = _step_runner(buffer, step_options or {})

    async def main() -> None:
        try:
            await _run_items(fn, items, WorkerContext(built, buffer, steps))
        finally:
            for client in built.values():
                await client.aclose()

    asyncio.run(main())
    return ChunkResult(
        records=buffer.added,
        prompts=buffer.prompts,
        failures=[unit.model_dump() for unit in steps.failures.values()],
        stats={role: model_stats(client) for role, client in built.items()},
    )


def run_phase_local(
    fn: UnitFn[T],
    items: Sequence[T],
    store: RunStore,
    *,
    models: Mapping[str, ModelSpec],
    step_options: Mapping[str, Any] | None = None,
) -> PhaseOutcome:
    """The same phase in this process, writing to ``store`` as each unit finishes (a local run)."""
    built = {role: spec.build() for role, spec in models.items()}
    steps = _step_runner(store, step_options or {})
    before = len(store.all_records())

    async def main() -> None:
        try:
            await _run_items(fn, items, WorkerContext(built, store, steps))
        finally:
            for client in built.values():
                await client.aclose()

    asyncio.run(main())
    return PhaseOutcome(
        records_written=len(store.all_records()) - before,
        failures=[unit.model_dump() for unit in steps.failures.values()],
        stats={role: model_stats(client) for role, client in built.items()},
    )


def ray_init(address: str | None = None, **init_kwargs: Any) -> None:
    """Connect to the Ray cluster at ``address`` (``ray://host:10001``, ``auto``), or start a local
    instance when None; nothing happens when Ray is already initialised.

    Raises:
        UserError: Ray is not installed (``pip install 'ideaharness[ray]'``) or the cluster cannot
            be reached.
    """
    try:
        import ray
    except ImportError:
        raise UserError("--runner ray needs Ray: pip install 'ideaharness[ray]'") from None
    if ray.is_initialized():
        return
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True, **init_kwargs}
    if address is None:  # a local instance: workers import ideaharness as this process does
        env = kwargs.setdefault("runtime_env", {}).setdefault("env_vars", {})
        env.setdefault("PYTHONPATH", os.pathsep.join(p for p in __import__("sys").path if p))
    try:
        ray.init(address=address, **kwargs)
    except (ConnectionError, RuntimeError) as exc:
        raise UserError(f"--ray-address {address}: cannot connect to the Ray cluster ({exc})") from None


def run_phase_ray(
    fn: UnitFn[T],
    items: Sequence[T],
    store: RunStore,
    *,
    models: Mapping[str, ModelSpec],
    item_id: Callable[[T], str],
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    address: str | None = None,
    max_retries: int = 3,
    step_options: Mapping[str, Any] | None = None,
) -> PhaseOutcome:
    """Run one phase over ``items`` as Ray tasks of ``chunk_size`` items; write what they return.

    Args:
        fn: the unit function (see the module docstring).
        items: the phase's items; ``item_id(item)`` is the instance id its records carry.
        store: the run directory; only this process writes it.
        models: role -> :class:`ModelSpec`, built on each worker.
        chunk_size: items per task, >= 1 (one task = one set of clients, one event loop).
        address: Ray cluster address; None starts (or reuses) a local instance.
        max_retries: times Ray re-runs a task whose worker died.

    Returns:
        A :class:`PhaseOutcome` (records written by this call, failed units, summed counters).

    Raises:
        UserError: Ray missing or unreachable, ``chunk_size`` < 1.
        ray.exceptions.RayTaskError / WorkerCrashedError: a task failed beyond ``max_retries``
            (everything returned before is written).
    """
    if chunk_size < 1:
        raise UserError(f"chunk_size must be >= 1, got {chunk_size}")
    ray_init(address)
    import ray

    task = ray.remote(max_retries=max_retries, retry_exceptions=False)(run_chunk)
    by_instance: dict[str, list[Record]] = {}
    for record in store.all_records():
        by_instance.setdefault(record[1], []).append(record)
    chunks = [list(items[i : i + chunk_size]) for i in range(0, len(items), chunk_size)]
    fn_ref = ray.put(fn)
    pending = [
        task.remote(fn_ref, chunk, dict(models),
                    [r for item in chunk for r in by_instance.get(item_id(item), [])], step_options)
        for chunk in chunks
    ]
    outcome = PhaseOutcome()
    stats: dict[str, list[dict[str, Any] | None]] = {}
    while pending:
        done, pending = ray.wait(pending, num_returns=1)
        result: ChunkResult = ray.get(done[0])
        for prompt_hash, messages in result.prompts.items():  # before the records that name them
            store.put_prompt(prompt_hash, messages)
        for step, instance_id, key, data in result.records:
            if not store.has(step, instance_id, key):
                store.put(step, instance_id, data, key)
                outcome.records_written += 1
        outcome.failures.extend(result.failures)
        for role, counters in result.stats.items():
            stats.setdefault(role, []).append(counters)
    outcome.stats = {role: sum_stats(values) for role, values in stats.items()}
    return outcome
