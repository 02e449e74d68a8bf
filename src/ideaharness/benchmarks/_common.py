"""What every benchmark run shares: execution options, model construction, recorded LLM steps
and phased, resumable execution with a progress bar."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ideaharness.llm.judge import judge
from ideaharness.llm.types import ChatModel, Message
from ideaharness.runs.store import RunStore
from ideaharness.runs.usage import model_stats

__all__ = ["ExecutionOptions", "StepRunner", "make_models", "model_stats", "open_store"]

T = TypeVar("T")

MAX_CONSECUTIVE_ERRORS = 5
"""A run stops (keeping everything done) after this many model calls in a row failed for good:
the endpoint is down or misconfigured, and retrying every remaining item would only burn time."""


class ExecutionOptions(BaseModel):
    """How a run executes; none of it changes results, so none of it blocks a resume.

    ``base_url``/``judge_base_url`` point ``openai/`` models at an endpoint (else
    ``OPENAI_BASE_URL``); keys come from the environment only and are never recorded.
    """

    out: Path = Path("runs/latest")
    limit: int | None = Field(default=None, ge=1)
    base_url: str | None = None
    judge_base_url: str | None = None
    max_concurrency: int = Field(default=4, ge=1)
    rpm: float | None = Field(default=None, gt=0)
    use_cache: bool = True
    cache_path: Path | None = None
    progress: bool = True
    shard: tuple[int, int] | None = None
    price_per_mtok: tuple[float, float] | None = None
    """(input, output) USD per million tokens of the generator and judge; enables cost in the stats."""
    force: bool = False
    """When ``out`` holds a run with other settings or changed input files, move that run to
    ``out/superseded/<time>/`` and start a new one, instead of refusing."""


def make_models(generator: str, judge_model: str, options: ExecutionOptions) -> tuple[ChatModel, ChatModel]:
    """Build the generator and judge clients (one shared client when both are the same model)."""
    from ideaharness.llm import get_llm

    def build(model: str, base_url: str | None) -> ChatModel:
        return get_llm(
            model,
            base_url=base_url,
            cache_path=options.cache_path,
            use_cache=options.use_cache,
            max_concurrency=options.max_concurrency,
            rpm=options.rpm,
        )

    gen = build(generator, options.base_url)
    judge_url = options.judge_base_url or options.base_url
    if judge_model == generator and judge_url == options.base_url:
        return gen, gen
    return gen, build(judge_model, judge_url)


def open_store(
    options: ExecutionOptions,
    config: BaseModel | dict[str, Any],
    *,
    inputs: Mapping[str, Sequence[Path]] | None = None,
    identity_keys: tuple[str, ...] | None = None,
    models: Mapping[str, Any] | None = None,
) -> RunStore:
    """The run directory of a benchmark run, locked for this process.

    Args:
        config: the run's configuration (recorded in ``config.json``; its identity part must match
            to resume).
        inputs: flag -> the files read for it (their sha256 is part of the run's identity).
        models: role -> model client whose usage is recorded per process and summed in results.

    Raises:
        UserError: see :class:`~ideaharness.runs.store.RunStore`.
    """
    data = config.model_dump(mode="json") if isinstance(config, BaseModel) else config
    store = RunStore(options.out, data, identity_keys=identity_keys, inputs=inputs, force=options.force)
    if models:
        store.track_usage(models)
    return store


class StepRunner:
    """Runs recorded LLM steps against a :class:`RunStore`.

    A step already recorded is skipped (resume). A model call that fails for good
    (:class:`~ideaharness.llm.LLMError`) is counted and left unrecorded so a re-run retries it;
    after :data:`MAX_CONSECUTIVE_ERRORS` such failures in a row the run stops with that error.
    """

    def __init__(self, store: RunStore, *, max_attempts: int = 3, progress: bool = True) -> None:
        self.store = store
        self.max_attempts = max_attempts
        self.progress = progress
        self.error_count = 0
        self._consecutive_errors = 0
        self._error_messages: list[str] = []

    async def judge_step(
        self,
        step: str,
        instance_id: str,
        key: str,
        model: ChatModel,
        messages: list[Message],
        parse: Callable[[str], Any],
        *,
        extra: dict[str, Any] | None = None,
        positions: list[str] | None = None,
        **sampling: Any,
    ) -> dict[str, Any] | None:
        """Ask, parse (bounded retries) and record ``{"judgment": ..., **extra}``; returns the record."""
        existing = self.store.get(step, instance_id, key)
        if existing is not None:
            return existing
        from ideaharness.llm.errors import ContextLengthError, LLMError

        try:
            judgment = await judge(
                model, messages, parse, max_attempts=self.max_attempts, positions=positions, **sampling
            )
        except ContextLengthError as exc:  # this item's prompt is too long; others may fit
            self.error_count += 1
            self._error_messages.append(f"{step} {instance_id}: {exc}")
            return None
        except LLMError as exc:
            self.error_count += 1
            self._consecutive_errors += 1
            self._error_messages.append(f"{step} {instance_id}: {exc}")
            if self._consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
                raise
            return None
        self._consecutive_errors = 0
        record = {"judgment": judgment.model_dump(mode="json"), **(extra or {})}
        self.store.put(step, instance_id, record, key)
        return record

    async def run_phases(
        self,
        items: Sequence[T],
        phases: Sequence[tuple[str, Callable[[T], Awaitable[None]]]],
    ) -> None:
        """Run each phase over all items concurrently (bounded by the model clients), in order."""
        with Progress(
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            disable=not self.progress,
            transient=False,
            # no stdout/stderr redirection: llama.cpp swaps the process's streams from a worker
            # thread while it loads, and interleaved swaps would leave stdout pointing at /dev/null
            redirect_stdout=False,
            redirect_stderr=False,
        ) as bar:
            for name, fn in phases:
                task = bar.add_task(name, total=len(items))

                async def one(item: T, fn: Callable[[T], Awaitable[None]] = fn, task: Any = task) -> None:
                    await fn(item)
                    bar.advance(task)

                await asyncio.gather(*(one(item) for item in items))

    def notes(self) -> list[str]:
        """Human-readable notes on failures, for reports."""
        if not self.error_count:
            return []
        shown = "; ".join(self._error_messages[:3])
        return [
            f"{self.error_count} model call(s) failed after retries and were not recorded "
            f"(re-run to retry): {shown}"
        ]


