"""The files of batch mode: Batch JSONL lines, the run directory's ``batches/`` folder, output files.

``<run>/batches/<phase>.requests.jsonl``
    every request collected for a phase (:class:`PendingRequest`: cache key, request, endpoint,
    batch API, HTTP body; never a key), appended before it is submitted;
``<run>/batches/<phase>.json``
    the batches submitted for the phase (:class:`PhaseBatches`), rewritten atomically.

:func:`export_lines` and :func:`import_output` are ``ideaharness batch export`` / ``batch import``:
the same Batch JSONL for ``vllm run-batch`` or a provider's batch console. Two batch APIs are
spoken: OpenAI's Batch API (``openai/``; input lines ``{"custom_id", "method", "url", "body"}``,
output lines ``{"custom_id", "response": {"status_code", "body"}, "error"}``) and Anthropic's Message
Batches (``anthropic/``; requests ``{"custom_id", "params"}``, results lines ``{"custom_id",
"result": {"type": "succeeded" | "errored" | "canceled" | "expired", ...}}``). The ``custom_id`` is
the request's cache key either way (64 hex characters: within Anthropic's 1-64 ``[a-zA-Z0-9_-]``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ideaharness.errors import UserError
from ideaharness.fileio import append_line, atomic_write_text
from ideaharness.llm.cache import ResponseCache
from ideaharness.llm.errors import ProviderError
from ideaharness.llm.types import ChatRequest, Completion
from ideaharness.redaction import redact

BATCHES_DIR = "batches"
BATCH_URL = "/v1/chat/completions"
BATCH_APIS = ("openai", "anthropic")
"""The batch APIs spoken: OpenAI's Batch API and Anthropic's Message Batches."""


class PendingRequest(BaseModel):
    """One uncached request: its cache key, the request, its endpoint, the batch API it goes
    through (``openai`` or ``anthropic``) and its HTTP body (no key)."""

    key: str
    base_url: str
    request: ChatRequest
    body: dict[str, Any]
    api: str = "openai"

    def batch_line(self) -> dict[str, Any]:
        """The request as one line of a batch input: an OpenAI Batch input line, or an Anthropic
        Message Batches request (``{"custom_id", "params"}``)."""
        if self.api == "anthropic":
            return {"custom_id": self.key, "params": self.body}
        return {"custom_id": self.key, "method": "POST", "url": BATCH_URL, "body": self.body}


class BatchJob(BaseModel):
    """One submitted batch, as stored in ``batches/<phase>.json``.

    ``failed`` maps the cache key of each line that got no answer to the reason (redacted).
    ``input_file_id`` is the uploaded input file (OpenAI; empty for Anthropic, whose requests go in
    the create call). ``estimate_usd`` / ``estimate_tokens``: what the batch was estimated to cost
    before it was submitted (USD, prompt + reply tokens; None in state files older than estimates).
    """

    batch_id: str
    input_file_id: str = ""
    base_url: str
    model: str
    keys: list[str]
    status: str = "validating"
    imported: bool = False
    succeeded: int = 0
    failed: dict[str, str] = Field(default_factory=dict)
    api: str = "openai"
    estimate_usd: float | None = None
    estimate_tokens: int | None = None


class PhaseBatches(BaseModel):
    """The state file of one phase: every batch submitted for it, in order."""

    phase: str
    jobs: list[BatchJob] = Field(default_factory=list)


def safe_name(phase: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in phase)


def state_path(run_dir: Path | str, phase: str) -> Path:
    """``<run_dir>/batches/<phase>.json``, the batches submitted for ``phase``."""
    return Path(run_dir) / BATCHES_DIR / f"{safe_name(phase)}.json"


def requests_path(run_dir: Path | str, phase: str) -> Path:
    """``<run_dir>/batches/<phase>.requests.jsonl``, every request collected for ``phase``."""
    return Path(run_dir) / BATCHES_DIR / f"{safe_name(phase)}.requests.jsonl"


def load_state(run_dir: Path | str, phase: str) -> PhaseBatches:
    """The phase's :class:`PhaseBatches` (empty when none was submitted).

    Raises:
        UserError: the state file exists but cannot be read.
    """
    path = state_path(run_dir, phase)
    if not path.exists():
        return PhaseBatches(phase=phase)
    try:
        return PhaseBatches.model_validate_json(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not a readable batch state ({str(exc).splitlines()[0]}); "
                        "delete it to submit the phase's requests again") from None


def save_state(run_dir: Path, state: PhaseBatches) -> None:
    atomic_write_text(state_path(run_dir, state.phase), state.model_dump_json(indent=2))


def record_requests(run_dir: Path, phase: str, pending: Iterable[PendingRequest]) -> None:
    path = requests_path(run_dir, phase)
    known = set(read_requests(run_dir, [path]))
    for item in pending:
        if item.key not in known:
            append_line(path, item.model_dump_json() + "\n")


def read_requests(run_dir: Path | str, paths: Iterable[Path] | None = None) -> dict[str, PendingRequest]:
    """Every request recorded in ``batches/*.requests.jsonl`` of ``run_dir``, by cache key.

    Raises:
        UserError: a line that is not a recorded request (file and line named).
    """
    out: dict[str, PendingRequest] = {}
    files = sorted((Path(run_dir) / BATCHES_DIR).glob("*.requests.jsonl")) if paths is None else paths
    for path in files:
        if not path.exists():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
            if not line.strip():
                continue
            try:
                item = PendingRequest.model_validate_json(line)
            except ValueError:
                raise UserError(f"{path}, line {number}: not a recorded request") from None
            out.setdefault(item.key, item)
    return out


# ----------------------------------------------------------------------------- output files


class OutputLines(BaseModel):
    """A Batch output/error file read: answers by cache key, failures by cache key, unreadable lines."""

    answers: dict[str, Any] = Field(default_factory=dict)
    failed: dict[str, str] = Field(default_factory=dict)
    unreadable: int = 0


def read_output_lines(text: str) -> OutputLines:
    """Read the lines of a batch output or error file: OpenAI (``vllm run-batch``) or Anthropic
    Message Batches results.

    An OpenAI line is ``{"custom_id", "response": {"status_code", "body"}, "error"}``: status 200 with
    a body is an answer (the body, parsed later), anything else a failure with its reason. An
    Anthropic line is ``{"custom_id", "result": {"type", ...}}`` (:func:`read_result_row`). Lines that
    are not JSON objects with a ``custom_id`` are counted in ``unreadable``.
    """
    out = OutputLines()
    for line in text.split("\n"):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            key = row["custom_id"]
        except (json.JSONDecodeError, TypeError, KeyError):
            out.unreadable += 1
            continue
        if "result" in row:
            read_result_row(row, out)
            continue
        response = row.get("response") or {}
        error = row.get("error")
        if not error and isinstance(response, dict) and response.get("status_code") == 200:
            out.answers[key] = response.get("body")
            continue
        if error:
            reason = f"{error.get('code', 'error')}: {error.get('message', '')}" if isinstance(error, dict) \
                else str(error)
        else:
            body = response.get("body") if isinstance(response, dict) else None
            detail = body.get("error", {}).get("message", "") if isinstance(body, dict) and \
                isinstance(body.get("error"), dict) else ""
            reason = f"HTTP {response.get('status_code') if isinstance(response, dict) else '?'}: {detail}"
        out.failed[key] = redact(reason.strip())
    return out


def read_result_row(row: dict[str, Any], out: OutputLines) -> None:
    """Add one Anthropic Message Batches results line to ``out``: ``succeeded`` → its ``message``
    (parsed later) under ``custom_id``; ``errored`` → the error's type and message; ``canceled`` /
    ``expired`` → that reason; anything else is unreadable."""
    key = row.get("custom_id")
    result = row.get("result")
    kind = result.get("type") if isinstance(result, dict) else None
    if not isinstance(key, str) or not isinstance(result, dict) or kind is None:
        out.unreadable += 1
        return
    if kind == "succeeded":
        out.answers[key] = result.get("message")
        return
    if kind == "errored":
        error = result.get("error")
        inner = error.get("error") if isinstance(error, dict) else None
        inner = inner if isinstance(inner, dict) else (error if isinstance(error, dict) else {})
        reason = f"{inner.get('type', 'error')}: {inner.get('message', '')}"
    elif kind == "expired":
        reason = "batch_expired: the batch ended (24 h) before this request was processed"
    elif kind == "canceled":
        reason = "canceled: the batch was canceled before this request was processed"
    else:
        reason = f"result type {kind!r}"
    out.failed[key] = redact(reason.strip())


def completion_of(pending: PendingRequest, body: Any) -> Completion:
    """The :class:`Completion` of one batch answer ``body`` to ``pending`` (``model`` = the
    request's model), read by the parser of the request's batch API.

    Raises:
        ProviderError: ``body`` is not a chat completion (OpenAI) or a message (Anthropic).
    """
    if pending.api == "anthropic":
        from ideaharness.llm.anthropic_provider import completion_from_body as anthropic_completion

        return anthropic_completion(body, pending.request.model)
    from ideaharness.llm.openai_provider import completion_from_body

    return completion_from_body(body, pending.request.model)


def import_answers(
    lines: OutputLines,
    requests: dict[str, PendingRequest],
    cache: ResponseCache,
    account: Callable[[Completion], Completion] | None = None,
) -> tuple[int, dict[str, str]]:
    """Put the answers of ``lines`` into ``cache`` under their cache keys.

    Args:
        lines: read output lines (:func:`read_output_lines`).
        requests: the recorded requests, by cache key.
        cache: the response cache.
        account: applied to each completion before it is stored (the client's
            :meth:`~ideaharness.llm.LLM.account`: counts its tokens and sets ``cost_usd``), or None.

    Returns:
        (answers stored, cache key -> reason for answers that are not chat completions / messages
        or whose custom_id is not a recorded request).
    """
    stored = 0
    failed: dict[str, str] = {}
    for key, body in lines.answers.items():
        pending = requests.get(key)
        if pending is None:
            failed[key] = "custom_id is not a request of this run"
            continue
        try:
            completion = completion_of(pending, body)
        except ProviderError as exc:
            failed[key] = redact(str(exc))
            continue
        if account is not None:
            completion = account(completion)
        cache.put(key, pending.request, completion)
        stored += 1
    return stored, failed


def export_lines(run_dir: Path | str, cache: ResponseCache | None) -> list[dict[str, Any]]:
    """The Batch input lines of every recorded request of ``run_dir`` not answered in ``cache``
    (all of them when ``cache`` is None), in recording order."""
    requests = read_requests(run_dir).items()
    return [p.batch_line() for key, p in requests if cache is None or cache.get(key) is None]


class ImportReport(BaseModel):
    """What :func:`import_output` did: answers stored, lines without an answer (cache key -> reason),
    lines that could not be read at all, and the recorded requests the file has no line for and
    the cache no answer to (``missing``, cache keys in recording order: still unanswered)."""

    imported: int
    failed: dict[str, str]
    unreadable: int
    missing: list[str] = []


def import_output(run_dir: Path | str, output: Path | str, cache: ResponseCache) -> ImportReport:
    """Put the answers of a Batch output (or error) file into ``cache``; ``custom_id`` must be the
    cache key of a request recorded in ``run_dir``. A recorded request with no line in the file
    and no answer in the cache (imported earlier) is listed as ``missing``.

    Raises:
        UserError: ``output`` cannot be read; ``run_dir`` holds no recorded requests.
    """
    requests = read_requests(run_dir)
    if not requests:
        raise UserError(f"{Path(run_dir) / BATCHES_DIR}: no recorded requests (run with --batch first)")
    try:
        text = Path(output).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UserError(f"{output}: cannot be read ({exc})") from None
    lines = read_output_lines(text)
    stored, bad = import_answers(lines, requests, cache)
    failed = {**lines.failed, **bad}
    missing = [key for key in requests
               if key not in lines.answers and key not in failed and cache.get(key) is None]
    return ImportReport(imported=stored, failed=failed, unreadable=lines.unreadable, missing=missing)
