"""Batch mode: a phase's uncached requests go out through the OpenAI Batch API, not one by one.

Batch APIs answer within a completion window (24 h) at about half the synchronous price, and
``vllm run-batch`` serves offline work in the same format. :func:`run_phase_batched` runs one
phase of a benchmark in rounds:

1. a *collecting pass* runs the phase over every item with the model clients in collecting mode
   (:class:`BatchableModel`): a cache hit is answered as usual, a cache miss is recorded as a
   :class:`PendingRequest` and ends that item's pass (:class:`Deferred`);
2. the pending requests are appended to ``batches/<phase>.requests.jsonl``, written as Batch JSONL
   (``custom_id`` = the cache key, ``method`` POST, ``url`` ``/v1/chat/completions``, ``body``;
   never a key), uploaded with the Files API and submitted with the Batches API, one batch per
   endpoint and model; the batch id goes into ``batches/<phase>.json`` at once, so a killed
   process re-attaches to it instead of paying twice;
3. the batch is polled (progress bar) until it ends; the lines of its output file go into the
   response cache, the lines that failed or expired are listed in the phase's state file.

Rounds repeat (a parse failure asks again with a new sample index, a later step of the same item
needs an earlier answer) up to ``max_rounds``; failed lines are not resubmitted but asked
synchronously. The runner then runs the phase normally: every answer comes from the cache, and
whatever is still missing is asked synchronously, where a failure is a reported failed unit
(:class:`~ideaharness.runner.steps.StepRunner`) — never dropped.

Only ``openai/`` models are batched; other clients run normally inside the collecting pass.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from ideaharness.concurrency import run_bounded
from ideaharness.errors import PartialRunError, UserError
from ideaharness.llm.batch_files import (
    BATCH_URL,
    BATCHES_DIR,
    BatchJob,
    OutputLines,
    PendingRequest,
    PhaseBatches,
    import_answers,
    load_state,
    read_output_lines,
    read_requests,
    record_requests,
    requests_path,
    safe_name,
    save_state,
)
from ideaharness.llm.cache import request_key
from ideaharness.llm.client import LLM, LLMStats
from ideaharness.llm.openai_provider import OpenAIProvider
from ideaharness.llm.types import ChatRequest, Completion, Message
from ideaharness.redaction import redact

T = TypeVar("T")

FINAL_STATES = frozenset({"completed", "failed", "expired", "cancelled"})
COLLECT_IN_FLIGHT = 256
"""Items of a collecting pass in flight at once (cache lookups; streamed, never one task per item)."""
API_RETRIES = 3
"""Retries of one Files/Batches API call (the SDK's own backoff on 408/429/5xx/connection errors)."""


class BatchSettings(BaseModel):
    """How batch mode runs (``--batch``); none of it changes results.

    ``poll_interval_s``: seconds between two retrievals of a running batch. ``max_rounds``:
    collecting passes per phase (each may submit one batch per endpoint). ``max_wait_s``: stop
    waiting for a batch after this many seconds (the run stops, re-running re-attaches); None
    waits until the provider ends it (it expires after ``completion_window``).
    """

    poll_interval_s: float = Field(default=30.0, gt=0)
    max_rounds: int = Field(default=4, ge=1)
    completion_window: str = "24h"
    max_wait_s: float | None = Field(default=None, gt=0)


class BatchPhaseReport(BaseModel):
    """What :func:`run_phase_batched` did for one phase.

    ``submitted``: requests sent in new batches; ``reattached``: batches of an earlier process
    waited for; ``imported``: answers put into the cache; ``failed_lines``: cache key -> reason
    for lines without an answer (asked synchronously afterwards, where a failure is a failed unit).
    """

    phase: str
    rounds: int = 0
    submitted: int = 0
    batches: list[str] = Field(default_factory=list)
    reattached: int = 0
    imported: int = 0
    failed_lines: dict[str, str] = Field(default_factory=dict)


class Deferred(BaseException):  # noqa: N818 (a control-flow signal, not an error)
    """Raised by :class:`BatchableModel` in a collecting pass on a cache miss; ends that item's pass.

    A BaseException so that the steps' ``except Exception`` (failure accounting) lets it through.
    """


class _Collector:
    def __init__(self, sync_keys: set[str]) -> None:
        self.sync_keys = sync_keys
        self.pending: dict[str, PendingRequest] = {}
        self.clients: dict[tuple[str, str], LLM] = {}

    def add(self, pending: PendingRequest, llm: LLM) -> None:
        self.pending.setdefault(pending.key, pending)
        self.clients.setdefault((pending.base_url, pending.request.model), llm)


_COLLECTOR: ContextVar[_Collector | None] = ContextVar("ideaharness_batch_collector", default=None)


def chat_request(model: str, messages: list[Message], *, temperature: float = 0.0, top_p: float | None = None,
                 max_tokens: int = 1024, seed: int | None = 0, json_schema: dict[str, Any] | None = None,
                 sample_index: int = 0) -> ChatRequest:
    """The :class:`ChatRequest` that :meth:`LLM.chat` builds for the same arguments (same defaults)."""
    return ChatRequest(
        model=model, messages=[{"role": m["role"], "content": m["content"]} for m in messages],
        temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed, json_schema=json_schema,
        sample_index=sample_index,
    )


class BatchableModel:
    """An :class:`LLM` that, inside a collecting pass, records cache misses instead of sending them.

    Outside a collecting pass it is the LLM itself (``chat`` delegates; ``stats`` are the LLM's).

    Args:
        llm: the client; needs its response cache.

    Raises:
        UserError: the LLM has no cache (batch answers land in the cache: drop ``--no-cache``).
    """

    def __init__(self, llm: LLM) -> None:
        if llm.cache is None:
            raise UserError("--batch needs the response cache (batch answers are read from it): "
                            "drop --no-cache")
        self.llm = llm
        self.model = llm.model

    def __repr__(self) -> str:
        return f"BatchableModel({self.llm!r})"

    @property
    def stats(self) -> LLMStats:
        return self.llm.stats

    @property
    def batchable(self) -> bool:
        """True for an OpenAI-compatible endpoint (local models are never batched)."""
        return isinstance(self.llm.provider, OpenAIProvider) and bool(self.llm.base_url)

    async def chat(self, messages: list[Message], **sampling: Any) -> Completion:
        collector = _COLLECTOR.get()
        if collector is None or not self.batchable:
            return await self.llm.chat(messages, **sampling)
        request = chat_request(self.llm.model, messages, **sampling)
        key = request_key(request, self.llm.base_url)
        assert self.llm.cache is not None and self.llm.base_url is not None
        hit = await asyncio.to_thread(self.llm.cache.get, key)
        if hit is not None:
            self.llm.stats.cache_hits += 1
            return hit
        if key in collector.sync_keys:  # failed in a batch: left to the synchronous pass
            raise Deferred(key)
        provider = self.llm.provider
        assert isinstance(provider, OpenAIProvider)
        collector.add(
            PendingRequest(key=key, base_url=self.llm.base_url, request=request,
                           body=provider.request_body(request)),
            self.llm,
        )
        raise Deferred(key)

    async def aclose(self) -> None:
        await self.llm.aclose()


def batchable_models(*models: Any) -> tuple[Any, ...]:
    """Each :class:`LLM` wrapped in a :class:`BatchableModel` (one wrapper per distinct client, so a
    generator that is also the judge stays one object); anything else (None, a scripted model,
    a wrapper already) unchanged. A system (``ideas:``, ``cmd:``, ``http(s)://``;
    :mod:`ideaharness.systems`) is never sent as a batch: it stays unwrapped, so its calls go live
    (also inside a collecting pass, where its answers are recorded like any unit's)."""
    from ideaharness.systems.spec import is_system

    wrapped: dict[int, Any] = {}
    out = []
    for model in models:
        if isinstance(model, LLM) and not is_system(model.model):
            model = wrapped.setdefault(id(model), BatchableModel(model))
        out.append(model)
    return tuple(out)


async def collect_pending(
    phase_fn: Callable[[T], Awaitable[None]], items: Sequence[T], *, sync_keys: Iterable[str] = ()
) -> tuple[dict[str, PendingRequest], dict[tuple[str, str], LLM]]:
    """Run ``phase_fn`` over ``items`` in collecting mode.

    Returns:
        (cache key -> pending request, (base_url, model) -> the client that asked), for every
        cache miss of a :class:`BatchableModel`; a miss whose key is in ``sync_keys`` (failed in a
        batch before) ends its item's pass without being collected (the normal pass asks it).
    """
    collector = _Collector(set(sync_keys))
    token = _COLLECTOR.set(collector)
    try:
        async def one(item: T) -> None:
            try:
                await phase_fn(item)
            except Deferred:
                pass

        await run_bounded(items, one, max_in_flight=COLLECT_IN_FLIGHT)
    finally:
        _COLLECTOR.reset(token)
    return collector.pending, collector.clients


# ----------------------------------------------------------------------------- the Batch API


def _api_error(base_url: str, what: str, exc: Exception) -> UserError:
    status = getattr(exc, "status_code", None)
    hint = "; the endpoint may have no Batch API: run without --batch, or use `ideaharness batch export`"
    detail = f"HTTP {status}" if status else type(exc).__name__
    return UserError(redact(f"{base_url}: {what} failed ({detail}: {str(exc)[:200]})"
                            + (hint if status in (404, 405) else "")))


async def _submit(llm: LLM, phase: str, pending: list[PendingRequest], settings: BatchSettings) -> BatchJob:
    import openai

    assert isinstance(llm.provider, OpenAIProvider) and llm.base_url is not None
    client = llm.provider.client().with_options(max_retries=API_RETRIES)
    content = "".join(json.dumps(p.batch_line(), ensure_ascii=False) + "\n" for p in pending).encode()
    try:
        upload = await client.files.create(file=(f"{safe_name(phase)}.jsonl", content), purpose="batch")
        batch = await client.batches.create(
            input_file_id=upload.id, endpoint=BATCH_URL, completion_window=settings.completion_window,
            metadata={"ideaharness_phase": phase[:500]},
        )
    except openai.OpenAIError as exc:
        raise _api_error(llm.base_url, "submitting a batch", exc) from None
    return BatchJob(batch_id=batch.id, input_file_id=upload.id, base_url=llm.base_url,
                    model=pending[0].request.model, keys=[p.key for p in pending], status=batch.status)


async def _wait_and_import(
    llm: LLM, job: BatchJob, run_dir: Path, state: PhaseBatches, settings: BatchSettings, progress: bool
) -> int:
    """Poll ``job`` until it ends, import its answers into the cache; returns answers stored."""
    import openai
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    assert isinstance(llm.provider, OpenAIProvider) and llm.cache is not None
    client = llm.provider.client().with_options(max_retries=API_RETRIES)
    start = time.monotonic()
    with Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.fields[status]}"), TimeElapsedColumn(), disable=not progress,
                  redirect_stdout=False, redirect_stderr=False) as bar:
        task = bar.add_task(f"batch {state.phase}"[:28], total=len(job.keys), status=job.status)
        while True:
            try:
                batch = await client.batches.retrieve(job.batch_id)
            except openai.OpenAIError as exc:
                raise _api_error(job.base_url, f"polling batch {job.batch_id}", exc) from None
            counts = batch.request_counts
            done = (counts.completed + counts.failed) if counts else 0
            bar.update(task, completed=done, status=batch.status)
            if batch.status != job.status:
                job.status = batch.status
                save_state(run_dir, state)
            if batch.status in FINAL_STATES:
                break
            if settings.max_wait_s is not None and time.monotonic() - start > settings.max_wait_s:
                raise PartialRunError(
                    f"batch {job.batch_id} ({state.phase}) is still {batch.status} after "
                    f"{settings.max_wait_s:g} s; run the same command again to wait for it "
                    "(it is not submitted again)"
                )
            await asyncio.sleep(settings.poll_interval_s)
    lines = OutputLines()
    try:
        for file_id in (batch.output_file_id, batch.error_file_id):
            if file_id:
                text = (await client.files.content(file_id)).text
                part = read_output_lines(text)
                lines.answers.update(part.answers)
                lines.failed.update(part.failed)
    except openai.OpenAIError as exc:
        raise _api_error(job.base_url, f"downloading the results of batch {job.batch_id}", exc) from None
    requests = read_requests(run_dir, [requests_path(run_dir, state.phase)])
    wanted = {k: requests[k] for k in job.keys if k in requests}
    mine = lines.model_copy(update={"answers": {k: v for k, v in lines.answers.items() if k in wanted}})
    stored, bad = await asyncio.to_thread(import_answers, mine, wanted, llm.cache, llm.stats)
    failed = {**{k: v for k, v in lines.failed.items() if k in wanted}, **bad}
    if batch.status == "failed" and batch.errors and batch.errors.data:
        first = batch.errors.data[0]
        reason = redact(f"batch failed: {first.code}: {first.message} (line {first.line})")
    else:
        reason = f"batch {batch.status}: no answer for this line"
    for key in job.keys:
        if key not in lines.answers and key not in failed:
            failed[key] = reason
    job.imported, job.succeeded, job.failed = True, stored, failed
    save_state(run_dir, state)
    return stored


async def run_phase_batched(
    phase_fn: Callable[[T], Awaitable[None]],
    items: Sequence[T],
    *,
    phase: str,
    run_dir: Path | str,
    settings: BatchSettings | None = None,
    progress: bool = True,
) -> BatchPhaseReport:
    """Answer the uncached requests of one phase through the Batch API, into the response cache.

    Afterwards run the phase normally (:func:`run_phases_batched` does both): it finds its
    answers in the cache and asks what is still missing synchronously.

    Args:
        phase_fn: the phase's work for one item (as given to ``StepRunner.run_phases``); its model
            clients must be :class:`BatchableModel` (:func:`batchable_models`) to be batched.
        items: the phase's items.
        phase: the phase's name (names the files under ``run_dir/batches/``).
        run_dir: the run directory.

    Returns:
        A :class:`BatchPhaseReport`; its state stays in ``batches/<phase>.json``.

    Raises:
        UserError: the endpoint refused a Files/Batches API call (one line, key redacted).
        PartialRunError: ``max_wait_s`` passed while a batch was running (re-running re-attaches).
    """
    settings = settings or BatchSettings()
    folder = Path(run_dir)
    (folder / BATCHES_DIR).mkdir(parents=True, exist_ok=True)
    state = load_state(folder, phase)
    report = BatchPhaseReport(phase=phase)
    failed_keys = {key for job in state.jobs for key in job.failed}
    for _ in range(settings.max_rounds):
        pending, clients = await collect_pending(phase_fn, items, sync_keys=failed_keys)
        if not pending:
            break
        report.rounds += 1
        record_requests(folder, phase, pending.values())
        for (base_url, model), llm in clients.items():
            group = [p for p in pending.values() if p.base_url == base_url and p.request.model == model]
            open_jobs = [j for j in state.jobs
                         if not j.imported and j.base_url == base_url and j.model == model]
            if open_jobs:  # an earlier process submitted these: wait for them, never resubmit
                for job in open_jobs:
                    report.reattached += 1
                    report.imported += await _wait_and_import(llm, job, folder, state, settings, progress)
                    failed_keys.update(job.failed)
                continue
            job = await _submit(llm, phase, group, settings)
            state.jobs.append(job)
            save_state(folder, state)
            report.submitted += len(group)
            report.batches.append(job.batch_id)
            report.imported += await _wait_and_import(llm, job, folder, state, settings, progress)
            failed_keys.update(job.failed)
    report.failed_lines = {key: reason for job in state.jobs for key, reason in job.failed.items()}
    return report


PhaseFn = Callable[[T], Awaitable[None]]


async def run_phases_batched(
    run_phases: Callable[[Sequence[T], Sequence[tuple[str, PhaseFn[T]]]], Awaitable[None]],
    items: Sequence[T],
    phases: Sequence[tuple[str, PhaseFn[T]]],
    *,
    run_dir: Path | str,
    settings: BatchSettings | None = None,
    progress: bool = True,
) -> list[BatchPhaseReport]:
    """Drop-in for ``StepRunner.run_phases`` in batch mode: for each phase in order,
    :func:`run_phase_batched`, then ``run_phases(items, [phase])`` (the normal pass)."""
    reports = []
    for name, fn in phases:
        reports.append(await run_phase_batched(fn, items, phase=name, run_dir=run_dir, settings=settings,
                                               progress=progress))
        await run_phases(items, [(name, fn)])
    return reports
