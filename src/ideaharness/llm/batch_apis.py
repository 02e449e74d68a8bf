"""The two batch APIs behind ``--batch``, one adapter each: submit a group of requests, poll the
batch, read its results (:mod:`ideaharness.llm.batch` runs the rounds, the state and the cache).

* :class:`OpenAIBatches` (``openai/``): the input is uploaded as a Batch JSONL file (Files API,
  ``purpose="batch"``), submitted with ``POST /v1/batches``, polled until ``completed``, ``failed``,
  ``expired`` or ``cancelled``; its output and error files are downloaded.
* :class:`AnthropicBatches` (``anthropic/``): Message Batches, ``POST /v1/messages/batches`` with
  the requests in the body (``{"custom_id", "params"}``), polled until ``processing_status`` is
  ``ended``; the results JSONL comes from the batch's ``results_url`` (the SDK's
  ``messages.batches.results``).

Each adapter uses its provider's SDK client with the SDK's own retries turned on for these calls
(:data:`API_RETRIES`); a refusal is one :class:`~ideaharness.errors.UserError` line naming the
endpoint, redacted.
"""

from __future__ import annotations

import json
from typing import Any

from ideaharness.errors import UserError
from ideaharness.llm.batch_files import (
    BATCH_URL,
    BatchJob,
    OutputLines,
    PendingRequest,
    read_output_lines,
    read_result_row,
    safe_name,
)
from ideaharness.redaction import redact

API_RETRIES = 3
"""Retries of one Files/Batches API call (the SDK's own backoff on 408/429/5xx/connection errors)."""


class Poll:
    """One retrieval of a batch: its ``status``, requests ``done`` so far, whether it is ``final``,
    and the SDK's batch object (``raw``)."""

    def __init__(self, status: str, done: int, final: bool, raw: Any) -> None:
        self.status, self.done, self.final, self.raw = status, done, final, raw


def api_error(base_url: str, what: str, exc: Exception) -> UserError:
    """The one-line UserError for a refused batch API call (HTTP status, first 200 characters)."""
    status = getattr(exc, "status_code", None)
    hint = "; the endpoint may have no Batch API: run without --batch, or use `ideaharness batch export`"
    detail = f"HTTP {status}" if status else type(exc).__name__
    return UserError(redact(f"{base_url}: {what} failed ({detail}: {str(exc)[:200]})"
                            + (hint if status in (404, 405) else "")))


class OpenAIBatches:
    """OpenAI's Batch API through the provider's ``AsyncOpenAI`` (``provider.client()``)."""

    FINAL = frozenset({"completed", "failed", "expired", "cancelled"})

    def __init__(self, provider: Any, base_url: str) -> None:
        self.client = provider.client().with_options(max_retries=API_RETRIES)
        self.base_url = base_url

    async def submit(self, phase: str, pending: list[PendingRequest], window: str) -> BatchJob:
        """Upload and submit ``pending`` as one batch; the job (not yet saved)."""
        import openai

        content = "".join(json.dumps(p.batch_line(), ensure_ascii=False) + "\n" for p in pending).encode()
        try:
            upload = await self.client.files.create(file=(f"{safe_name(phase)}.jsonl", content),
                                                    purpose="batch")
            batch = await self.client.batches.create(
                input_file_id=upload.id, endpoint=BATCH_URL, completion_window=window,
                metadata={"ideaharness_phase": phase[:500]},
            )
        except openai.OpenAIError as exc:
            raise api_error(self.base_url, "submitting a batch", exc) from None
        return BatchJob(batch_id=batch.id, input_file_id=upload.id, base_url=self.base_url,
                        model=pending[0].request.model, keys=[p.key for p in pending], status=batch.status)

    async def poll(self, job: BatchJob) -> Poll:
        import openai

        try:
            batch = await self.client.batches.retrieve(job.batch_id)
        except openai.OpenAIError as exc:
            raise api_error(job.base_url, f"polling batch {job.batch_id}", exc) from None
        counts = batch.request_counts
        done = (counts.completed + counts.failed) if counts else 0
        return Poll(batch.status, done, batch.status in self.FINAL, batch)

    async def results(self, job: BatchJob, poll: Poll) -> OutputLines:
        import openai

        lines = OutputLines()
        try:
            for file_id in (poll.raw.output_file_id, poll.raw.error_file_id):
                if file_id:
                    part = read_output_lines((await self.client.files.content(file_id)).text)
                    lines.answers.update(part.answers)
                    lines.failed.update(part.failed)
        except openai.OpenAIError as exc:
            raise api_error(job.base_url, f"downloading the results of batch {job.batch_id}", exc) from None
        return lines

    @staticmethod
    def missing_reason(poll: Poll) -> str:
        """Why a line of the ended batch has no answer and no error line."""
        batch = poll.raw
        if batch.status == "failed" and batch.errors and batch.errors.data:
            first = batch.errors.data[0]
            return redact(f"batch failed: {first.code}: {first.message} (line {first.line})")
        return f"batch {batch.status}: no answer for this line"


class AnthropicBatches:
    """Anthropic's Message Batches through the provider's ``AsyncAnthropic`` (``provider.client()``)."""

    def __init__(self, provider: Any, base_url: str) -> None:
        self.client = provider.client().with_options(max_retries=API_RETRIES)
        self.base_url = base_url

    async def submit(self, phase: str, pending: list[PendingRequest], window: str) -> BatchJob:
        """Create one Message Batch of ``pending`` (Anthropic's window is fixed at 24 h: ``window``
        is not sent); the job (not yet saved)."""
        import anthropic

        try:
            batch = await self.client.messages.batches.create(requests=[p.batch_line() for p in pending])
        except anthropic.AnthropicError as exc:
            raise api_error(self.base_url, "submitting a message batch", exc) from None
        return BatchJob(batch_id=batch.id, base_url=self.base_url, model=pending[0].request.model,
                        keys=[p.key for p in pending], status=batch.processing_status, api="anthropic")

    async def poll(self, job: BatchJob) -> Poll:
        import anthropic

        try:
            batch = await self.client.messages.batches.retrieve(job.batch_id)
        except anthropic.AnthropicError as exc:
            raise api_error(job.base_url, f"polling message batch {job.batch_id}", exc) from None
        c = batch.request_counts
        done = c.succeeded + c.errored + c.canceled + c.expired
        return Poll(batch.processing_status, done, batch.processing_status == "ended", batch)

    async def results(self, job: BatchJob, poll: Poll) -> OutputLines:
        import anthropic

        lines = OutputLines()
        try:
            async for row in await self.client.messages.batches.results(job.batch_id):
                read_result_row(row.to_dict(mode="json"), lines)
        except anthropic.AnthropicError as exc:
            raise api_error(job.base_url, f"downloading the results of message batch {job.batch_id}",
                            exc) from None
        return lines

    @staticmethod
    def missing_reason(poll: Poll) -> str:
        return f"message batch {poll.status}: no result for this line"


def batch_adapter(api: str, provider: Any, base_url: str) -> OpenAIBatches | AnthropicBatches:
    """The adapter of batch API ``api`` (``openai`` or ``anthropic``) for ``provider``'s endpoint.

    Raises:
        UserError: another API name (a state file written by something else).
    """
    if api == "anthropic":
        return AnthropicBatches(provider, base_url)
    if api == "openai":
        return OpenAIBatches(provider, base_url)
    raise UserError(f"unknown batch API {api!r} (known: openai, anthropic)")
