"""Batch mode: a phase's uncached requests go out through a batch API, not one by one: OpenAI's
Batch API for ``openai/`` models, Anthropic's Message Batches for ``anthropic/`` models
(:mod:`ideaharness.llm.batch_apis`).

Batch APIs answer within a completion window (24 h) at about half the synchronous price, and
``vllm run-batch`` serves offline work in the same format. :func:`run_phase_batched` runs one
phase of a benchmark in rounds:

1. a *collecting pass* runs the phase over every item with the model clients in collecting mode
   (:class:`BatchableModel`): a cache hit is answered as usual, a cache miss is recorded as a
   :class:`PendingRequest` and ends that item's pass (:class:`Deferred`);
2. the pending requests are appended to ``batches/<phase>.requests.jsonl`` (``custom_id`` = the
   cache key; never a key). Before a group is submitted its cost is estimated
   (:func:`estimate_batch`: :meth:`~ideaharness.llm.budget.RunBudget.estimate` of every request)
   and, when the run has a budget (``--max-cost``, ``--max-tokens``), a group whose estimate plus
   what is spent and in flight would pass a limit is refused with one line (:class:`UserError`)
   and nothing is sent. Otherwise it goes out as one batch per endpoint and model (OpenAI: Batch
   JSONL uploaded with the Files API and submitted with the Batches API; Anthropic: one Message
   Batches create call), its estimate reserved against the budget; the batch id goes into
   ``batches/<phase>.json`` at once, so a killed process re-attaches to it instead of paying twice;
3. the batch is polled (progress bar) until it ends; its answers go into the response cache
   (counted by the client, :meth:`~ideaharness.llm.LLM.account`, and charged to the budget), the
   lines that failed or expired are listed in the phase's state file.

Rounds repeat (a parse failure asks again with a new sample index, a later step of the same item
needs an earlier answer) up to ``max_rounds``; failed lines are not resubmitted but asked
synchronously. The runner then runs the phase normally: every answer comes from the cache, and
whatever is still missing is asked synchronously, where a failure is a reported failed unit
(:class:`~ideaharness.runner.steps.StepRunner`) — never dropped.

Only ``openai/`` and ``anthropic/`` models are batched; other clients run normally inside the
collecting pass. Prices apply as given (``--price``): batch APIs bill about half the synchronous
price, so give the batch price to count it, or read the figures as an upper bound.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from ideaharness.concurrency import run_bounded
from ideaharness.errors import PartialRunError, UserError
from ideaharness.llm.batch_apis import API_RETRIES, Poll, batch_adapter
from ideaharness.llm.batch_files import (
    BATCHES_DIR,
    BatchJob,
    PendingRequest,
    PhaseBatches,
    import_answers,
    load_state,
    read_requests,
    record_requests,
    requests_path,
    save_state,
)
from ideaharness.llm.budget import CHARS_PER_TOKEN, UNCAPPED_REPLY_TOKENS, Reservation, RunBudget
from ideaharness.llm.cache import request_key
from ideaharness.llm.client import LLM, LLMStats
from ideaharness.llm.reasoning import with_reasoning
from ideaharness.llm.types import ChatRequest, Completion, Message

T = TypeVar("T")

__all__ = ["API_RETRIES", "BatchEstimate", "BatchPhaseReport", "BatchSettings", "BatchableModel", "Deferred",
           "batch_api_of", "batchable_models", "chat_request", "collect_pending", "estimate_batch",
           "run_phase_batched", "run_phases_batched"]

COLLECT_IN_FLIGHT = 256
"""Items of a collecting pass in flight at once (cache lookups; streamed, never one task per item)."""


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
    for lines without an answer (asked synchronously afterwards, where a failure is a failed unit);
    ``estimated_usd`` / ``estimated_tokens``: the estimates of the batches submitted here (USD,
    prompt + reply tokens; :func:`estimate_batch`).
    """

    phase: str
    rounds: int = 0
    submitted: int = 0
    batches: list[str] = Field(default_factory=list)
    reattached: int = 0
    imported: int = 0
    failed_lines: dict[str, str] = Field(default_factory=dict)
    estimated_usd: float = 0.0
    estimated_tokens: int = 0


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
                 max_tokens: int | None = 1024, seed: int | None = 0,
                 json_schema: dict[str, Any] | None = None, sample_index: int = 0) -> ChatRequest:
    """A :class:`ChatRequest` for these arguments with no reasoning budget or effort (an :class:`LLM`
    builds its own with :meth:`LLM.request`, which adds them)."""
    return ChatRequest(
        model=model, messages=[{"role": m["role"], "content": m["content"]} for m in messages],
        temperature=temperature, top_p=top_p, max_tokens=max_tokens, seed=seed, json_schema=json_schema,
        sample_index=sample_index,
    )


def batch_api_of(provider: Any) -> str | None:
    """The batch API a provider's requests go through: ``"openai"`` for
    :class:`~ideaharness.llm.openai_provider.OpenAIProvider`, ``"anthropic"`` for
    :class:`~ideaharness.llm.anthropic_provider.AnthropicProvider`, None for any other (never batched)."""
    from ideaharness.llm.anthropic_provider import AnthropicProvider
    from ideaharness.llm.openai_provider import OpenAIProvider

    if isinstance(provider, AnthropicProvider):
        return "anthropic"
    if isinstance(provider, OpenAIProvider):
        return "openai"
    return None


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
    def reasoning_budget(self) -> int:
        """The LLM's reasoning budget, tokens (what :func:`~ideaharness.llm.judge.judge` doubles)."""
        return self.llm.reasoning_budget

    @property
    def batchable(self) -> bool:
        """True for an ``openai/`` or ``anthropic/`` endpoint (local models are never batched)."""
        return batch_api_of(self.llm.provider) is not None and bool(self.llm.base_url)

    async def chat(self, messages: list[Message], **sampling: Any) -> Completion:
        collector = _COLLECTOR.get()
        if collector is None or not self.batchable:
            return await self.llm.chat(messages, **sampling)
        request = self.llm.request(messages, **sampling)  # the reasoning budget and effort included
        key = request_key(request, self.llm.base_url)
        assert self.llm.cache is not None and self.llm.base_url is not None
        hit = await asyncio.to_thread(self.llm.cache.get, key)
        if hit is not None:
            self.llm.stats.cache_hits += 1
            return with_reasoning(hit)
        if key in collector.sync_keys:  # failed in a batch: left to the synchronous pass
            raise Deferred(key)
        provider: Any = self.llm.provider
        api = batch_api_of(provider)
        assert api is not None
        collector.add(
            PendingRequest(key=key, base_url=self.llm.base_url, request=request,
                           body=provider.request_body(request), api=api),
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


# ----------------------------------------------------------------------------- estimate and budget


class BatchEstimate(BaseModel):
    """What a group of requests is expected to cost before it is submitted.

    ``usd``: the sum of :meth:`~ideaharness.llm.budget.RunBudget.estimate` over the requests (USD;
    0 for an unpriced model); ``tokens``: their prompt + reply tokens; ``prompt_tokens``: prompt
    characters / 4 summed (the first-call rule's prompt part); ``completion_cap``: the reply caps
    summed (``max_tokens``, the reasoning budget included; a request without a cap counts
    :data:`~ideaharness.llm.budget.UNCAPPED_REPLY_TOKENS`).
    """

    requests: int
    usd: float
    tokens: int
    prompt_tokens: int
    completion_cap: int


def estimate_batch(llm: LLM, pending: Sequence[PendingRequest]) -> BatchEstimate:
    """The :class:`BatchEstimate` of ``pending`` for ``llm`` (its price, and its run budget's
    estimate rule: the mean of settled calls once any settled, else the upper bound from the
    request; an unbudgeted client uses the upper bound)."""
    budget = llm.budget or RunBudget()
    usd, tokens, prompt, cap = 0.0, 0, 0, 0
    for item in pending:
        one_usd, one_tokens = budget.estimate(item.request, llm.price)
        usd += one_usd
        tokens += one_tokens
        prompt += sum(len(m.get("content", "")) for m in item.request.messages) // CHARS_PER_TOKEN + 1
        cap += item.request.max_tokens if item.request.max_tokens is not None else UNCAPPED_REPLY_TOKENS
    return BatchEstimate(requests=len(pending), usd=usd, tokens=tokens, prompt_tokens=prompt,
                         completion_cap=cap)


def _admit_batch(llm: LLM, phase: str, estimate: BatchEstimate) -> Reservation | None:
    """Reserve ``estimate`` against the run's budget, or refuse the batch.

    Raises:
        UserError: one line: the batch, its estimate (prompt tokens, completion cap), what is spent
            (and in flight) and the limit it would pass; nothing is submitted.
    """
    budget = llm.budget
    if budget is None or not budget.limited:
        return None
    what = (f"{llm.model}: a batch of {estimate.requests} requests ({phase}) is estimated at "
            f"{_usd(estimate.usd)} ({estimate.tokens:,} tokens: prompt ~{estimate.prompt_tokens:,}, "
            f"completion cap {estimate.completion_cap:,})")
    flight = budget.in_flight_usd, budget.in_flight_tokens
    if budget.max_cost_usd is not None and budget.spent_usd + flight[0] + estimate.usd > budget.max_cost_usd:
        raise UserError(f"{what}; with {_usd(budget.spent_usd)} spent"
                        + (f" and {_usd(flight[0])} in flight" if flight[0] else "")
                        + f" it would pass --max-cost {_usd(budget.max_cost_usd)}: not submitted. Raise "
                        "--max-cost, or run without --batch (the budget then stops the run unit by unit)")
    tokens_after = budget.spent_tokens + flight[1] + estimate.tokens
    if budget.max_tokens is not None and tokens_after > budget.max_tokens:
        raise UserError(f"{what}; with {budget.spent_tokens:,} tokens spent"
                        + (f" and {flight[1]:,} in flight" if flight[1] else "")
                        + f" it would pass --max-tokens {budget.max_tokens:,}: not submitted. Raise "
                        "--max-tokens, or run without --batch (the budget then stops the run unit by unit)")
    return budget.admit(estimate.usd, estimate.tokens, model=llm.model)


def _usd(value: float) -> str:
    """``$1.00`` for whole cents, else ``$0.0123`` (as the budget's own messages)."""
    return f"${value:.2f}" if abs(value - round(value, 2)) < 1e-12 else f"${value:.4f}"


# ----------------------------------------------------------------------------- the batch APIs


async def _submit(llm: LLM, phase: str, pending: list[PendingRequest], settings: BatchSettings,
                  estimate: BatchEstimate) -> BatchJob:
    assert llm.base_url is not None
    adapter = batch_adapter(pending[0].api, llm.provider, llm.base_url)
    job = await adapter.submit(phase, pending, settings.completion_window)
    return job.model_copy(update={"estimate_usd": estimate.usd, "estimate_tokens": estimate.tokens})


async def _wait_and_import(
    llm: LLM, job: BatchJob, run_dir: Path, state: PhaseBatches, settings: BatchSettings, progress: bool,
    reservation: Reservation | None = None,
) -> int:
    """Poll ``job`` until it ends, import its answers into the cache (each counted by the client and
    charged to the run's budget: settling ``reservation`` when this process submitted the batch);
    returns answers stored."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    assert llm.cache is not None
    adapter = batch_adapter(job.api, llm.provider, job.base_url)
    start = time.monotonic()
    spent_usd: list[float] = []
    spent_tokens: list[int] = []

    def account(completion: Completion) -> Completion:  # a batch answer is a provider call
        llm.stats.calls += 1
        completion = llm.account(completion)
        spent_usd.append(completion.cost_usd or 0.0)
        spent_tokens.append(completion.usage.prompt_tokens + completion.usage.completion_tokens)
        return completion

    try:
        with Progress(TextColumn("{task.description:<28}"), BarColumn(), MofNCompleteColumn(),
                      TextColumn("{task.fields[status]}"), TimeElapsedColumn(), disable=not progress,
                      redirect_stdout=False, redirect_stderr=False) as bar:
            task = bar.add_task(f"batch {state.phase}"[:28], total=len(job.keys), status=job.status)
            while True:
                poll: Poll = await adapter.poll(job)
                bar.update(task, completed=poll.done, status=poll.status)
                if poll.status != job.status:
                    job.status = poll.status
                    save_state(run_dir, state)
                if poll.final:
                    break
                if settings.max_wait_s is not None and time.monotonic() - start > settings.max_wait_s:
                    raise PartialRunError(
                        f"batch {job.batch_id} ({state.phase}) is still {poll.status} after "
                        f"{settings.max_wait_s:g} s; run the same command again to wait for it "
                        "(it is not submitted again)"
                    )
                await asyncio.sleep(settings.poll_interval_s)
        lines = await adapter.results(job, poll)
        requests = read_requests(run_dir, [requests_path(run_dir, state.phase)])
        wanted = {k: requests[k] for k in job.keys if k in requests}
        mine = lines.model_copy(update={"answers": {k: v for k, v in lines.answers.items() if k in wanted}})
        stored, bad = await asyncio.to_thread(import_answers, mine, wanted, llm.cache, account)
    finally:
        if llm.budget is not None:
            if reservation is not None:
                llm.budget.settle(reservation, sum(spent_usd), sum(spent_tokens))
            elif spent_tokens:
                llm.budget.charge(sum(spent_usd), sum(spent_tokens))
    failed = {**{k: v for k, v in lines.failed.items() if k in wanted}, **bad}
    reason = adapter.missing_reason(poll)
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
        UserError: the endpoint refused a batch API call (one line, key redacted); a batch whose
            cost estimate would pass the run's budget (nothing submitted; :func:`estimate_batch`).
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
            estimate = estimate_batch(llm, group)
            reservation = _admit_batch(llm, phase, estimate)  # refuses over budget: nothing sent
            try:
                job = await _submit(llm, phase, group, settings, estimate)
            except BaseException:
                if reservation is not None and llm.budget is not None:
                    llm.budget.settle(reservation, 0.0, 0)
                raise
            state.jobs.append(job)
            save_state(folder, state)
            report.submitted += len(group)
            report.batches.append(job.batch_id)
            report.estimated_usd += estimate.usd
            report.estimated_tokens += estimate.tokens
            report.imported += await _wait_and_import(llm, job, folder, state, settings, progress,
                                                      reservation)
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
