"""What every benchmark run shares: execution options, model construction, recorded LLM steps
and phased, resumable execution with a progress bar.

Failure reporting: a unit of work (one ``(step, instance, key)``) whose model call fails for good,
raises anything unexpected, or whose metric had to be skipped (an unreachable service) is listed
by :class:`StepRunner` with its last error (secrets redacted). :meth:`StepRunner.outcome` adds
``status`` ("complete" or "partial"), ``failed_units`` and the truncation counts to every
``results.json``; the CLI exits with status 3 on a partial run (:func:`ideaharness.cli.options.finish_run`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from ideaharness.errors import PartialRunError, UserError
from ideaharness.llm.judge import judge
from ideaharness.llm.types import ChatModel, Message
from ideaharness.prompts import CHARS_PER_TOKEN, Prompt, fit_prompt, prompt_chars
from ideaharness.redaction import redact
from ideaharness.runs.store import RunStore
from ideaharness.runs.usage import model_stats

__all__ = [
    "DEFAULT_MAX_PROMPT_TOKENS",
    "ExecutionOptions",
    "FailedUnit",
    "StepRunner",
    "check_endpoint_flags",
    "make_models",
    "model_stats",
    "open_store",
]

T = TypeVar("T")

MAX_CONSECUTIVE_ERRORS = 5
"""A run stops (keeping everything done) after this many model calls in a row failed for good:
the endpoint is down or misconfigured, and retrying every remaining item would only burn time."""

DEFAULT_MAX_PROMPT_TOKENS = 6000
"""Default prompt budget of every benchmark (estimated tokens, :data:`~ideaharness.prompts.CHARS_PER_TOKEN`
characters each); leaves room for the reply within the local models' 8,192-token context."""


class ExecutionOptions(BaseModel):
    """How a run executes; none of it changes results, so none of it blocks a resume.

    ``base_url``/``judge_base_url`` point ``openai/`` models at an endpoint (else
    ``OPENAI_BASE_URL``); keys come from the environment only and are never recorded.
    ``timeout_s`` bounds one attempt at an ``openai/`` endpoint (seconds) and ``max_retries`` the
    retries after it (429, 5xx, timeouts, connection errors, malformed replies): one call waits
    at most about ``(max_retries + 1) * timeout_s`` plus the backoff between attempts.
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
    timeout_s: float = Field(default=300.0, gt=0)
    max_retries: int = Field(default=6, ge=0)


def _uses_endpoint(model: str | None) -> bool:
    return bool(model) and str(model).startswith("openai/")


def check_endpoint_flags(
    options: ExecutionOptions, generators: Sequence[str], judge_model: str | None
) -> None:
    """Refuse ``--base-url`` / ``--judge-base-url`` when no model of the run could use it.

    Raises:
        UserError: ``base_url`` set but no ``openai/`` generator (nor an ``openai/`` judge without
            its own endpoint); ``judge_base_url`` set for a judge that is not ``openai/``.
    """
    if options.base_url and not (
        any(_uses_endpoint(g) for g in generators)
        or (_uses_endpoint(judge_model) and not options.judge_base_url)
    ):
        raise UserError("--base-url applies to openai/<model> models only, and no model of this run is one")
    if options.judge_base_url and not _uses_endpoint(judge_model):
        raise UserError("--judge-base-url applies to an openai/<model> judge only")


def make_models(
    generator: str | None, judge_model: str | None, options: ExecutionOptions
) -> tuple[ChatModel | None, ChatModel | None]:
    """Build the clients of the models a run uses; None for a role the run does not use.

    Only the models given are built and validated (an unused default generator is never checked),
    and ``base_url`` / ``judge_base_url`` go to ``openai/`` models only. One shared client is
    built when generator and judge are the same model at the same endpoint.

    Raises:
        UserError: an endpoint flag that no model of the run can use, or a bad model string / key.
    """
    from ideaharness.llm import get_llm

    judge_url = options.judge_base_url or options.base_url
    check_endpoint_flags(options, [generator] if generator else [], judge_model)

    def build(model: str, base_url: str | None) -> ChatModel:
        return get_llm(
            model,
            base_url=base_url if _uses_endpoint(model) else None,
            cache_path=options.cache_path,
            use_cache=options.use_cache,
            max_concurrency=options.max_concurrency,
            rpm=options.rpm,
            max_retries=options.max_retries,
            timeout_s=options.timeout_s,
            price_per_mtok=options.price_per_mtok,
        )

    gen = build(generator, options.base_url) if generator else None
    if not judge_model:
        return gen, None
    if gen is not None and judge_model == generator and (
        judge_url == options.base_url or not _uses_endpoint(judge_model)
    ):
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


class FailedUnit(BaseModel):
    """A unit of work left undone: ``status`` "failed" (model call failed for good, or raised) or
    "skipped" (a metric whose service could not be used); ``error`` is the last error, redacted."""

    step: str
    instance_id: str
    key: str = ""
    status: Literal["failed", "skipped"] = "failed"
    error: str


class StepRunner:
    """Runs recorded LLM steps against a :class:`RunStore`.

    A step already recorded is skipped (resume). A model call that fails for good
    (:class:`~ideaharness.llm.LLMError`), and anything unexpected raised while asking or parsing,
    is that unit's failure: listed in :attr:`failures` and left unrecorded so a re-run retries it.
    After :data:`MAX_CONSECUTIVE_ERRORS` model failures in a row the run stops with a
    :class:`~ideaharness.errors.PartialRunError`. Prompts are fitted to ``max_prompt_tokens``
    (:func:`~ideaharness.prompts.fit_prompt`) and the cuts recorded with the unit
    (``prompt_truncations``).
    """

    def __init__(self, store: RunStore, *, max_attempts: int = 3, progress: bool = True,
                 max_prompt_tokens: int | None = DEFAULT_MAX_PROMPT_TOKENS) -> None:
        self.store = store
        self.max_attempts = max_attempts
        self.progress = progress
        self.max_prompt_tokens = max_prompt_tokens
        self.error_count = 0
        self.failures: dict[tuple[str, str, str], FailedUnit] = {}
        self._consecutive_errors = 0

    def fail(self, step: str, instance_id: str, key: str, error: object, *, skipped: bool = False) -> None:
        """List a unit as failed (or skipped) with its last error (redacted before it is kept)."""
        if not skipped and (step, instance_id, key) not in self.failures:
            self.error_count += 1
        self.failures[(step, instance_id, key)] = FailedUnit(
            step=step, instance_id=instance_id, key=key, status="skipped" if skipped else "failed",
            error=redact(error),
        )

    def fit(self, messages: list[Message]) -> list[Message]:
        """``messages`` within the prompt budget (data texts cut, see :func:`fit_prompt`).

        Raises:
            ContextLengthError: the prompt cannot be made to fit.
        """
        from ideaharness.llm.errors import ContextLengthError

        if self.max_prompt_tokens is None:
            return messages
        if isinstance(messages, Prompt):
            return fit_prompt(messages, self.max_prompt_tokens)
        if prompt_chars(messages) > self.max_prompt_tokens * CHARS_PER_TOKEN:
            raise ContextLengthError(
                f"prompt of {prompt_chars(messages)} characters exceeds the budget of "
                f"{self.max_prompt_tokens} tokens"
            )
        return messages

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
        """Ask, parse (bounded retries) and record ``{"judgment": ..., **extra}``; returns the record,
        or None when the unit failed (listed in :attr:`failures`; a re-run retries it)."""
        existing = self.store.get(step, instance_id, key)
        if existing is not None:
            return existing
        from ideaharness.llm.errors import ContextLengthError, LLMError

        try:
            fitted = self.fit(messages)
            judgment = await judge(
                model, fitted, parse, max_attempts=self.max_attempts, positions=positions, **sampling
            )
        except ContextLengthError as exc:  # this item's prompt is too long; others may fit
            self.fail(step, instance_id, key, exc)
            return None
        except LLMError as exc:
            self.fail(step, instance_id, key, exc)
            self._consecutive_errors += 1
            if self._consecutive_errors >= MAX_CONSECUTIVE_ERRORS:
                raise PartialRunError(
                    f"{self._consecutive_errors} model calls in a row failed for good (last: "
                    f"{redact(exc)}); the run stopped, everything finished is saved: fix the endpoint "
                    "and run the same command again"
                ) from exc
            return None
        except UserError:
            raise
        except Exception as exc:  # a bug or an odd reply must cost this unit, not the run
            self.fail(step, instance_id, key, f"{type(exc).__name__}: {exc}")
            return None
        self._consecutive_errors = 0
        self.failures.pop((step, instance_id, key), None)
        record = {"judgment": judgment.model_dump(mode="json"), **(extra or {})}
        truncations = getattr(fitted, "truncations", None)
        if truncations:
            record["prompt_truncations"] = truncations
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

    def outcome(self) -> dict[str, Any]:
        """What every results.json carries about completeness and budgets.

        Returns:
            ``{"status": "complete" | "partial", "failed_units": [{step, instance_id, key, status,
            error}], "truncated_texts": int, "truncated_prompts": int}``; truncation counts cover
            every record of the run directory (earlier runs included).
        """
        prompts = [data["prompt_truncations"] for _, _, _, data in self.store.all_records()
                   if isinstance(data, dict) and data.get("prompt_truncations")]
        return {
            "status": "partial" if self.failures else "complete",
            "failed_units": [unit.model_dump() for unit in self.failures.values()],
            "truncated_texts": sum(len(cuts) for cuts in prompts),
            "truncated_prompts": len(prompts),
        }

    def notes(self) -> list[str]:
        """Human-readable notes on failed and skipped units and on truncated texts, for reports."""
        out: list[str] = []
        failed = [u for u in self.failures.values() if u.status == "failed"]
        skipped = [u for u in self.failures.values() if u.status == "skipped"]
        if failed:
            shown = "; ".join(f"{u.step} {u.instance_id}: {u.error}" for u in failed[:3])
            out.append(f"{len(failed)} unit(s) failed after retries and were not recorded "
                       f"(re-run to retry): {shown}")
        if skipped:
            shown = "; ".join(f"{u.step} {u.instance_id}: {u.error}" for u in skipped[:3])
            out.append(f"{len(skipped)} metric unit(s) skipped (re-run to retry): {shown}")
        status = self.outcome()
        if status["truncated_texts"]:
            out.append(f"{status['truncated_texts']} text(s) in {status['truncated_prompts']} prompt(s) were "
                       f"cut to fit the prompt budget of {self.max_prompt_tokens} tokens "
                       "(records: prompt_truncations)")
        return out


