"""Recorded LLM steps and phased, resumable execution with a progress bar.

Failure reporting: a unit of work (one ``(step, instance, key)``) whose model call fails for good,
raises anything unexpected, or whose metric had to be skipped (an unreachable service) is listed
by :class:`StepRunner` with its last error (secrets redacted). :meth:`StepRunner.outcome` adds
``status`` ("complete" or "partial"), ``failed_units`` and the truncation counts to every
``results.json``; the CLI exits with status 3 on a partial run (:func:`ideaharness.runner.run.finish_run`).

Parse failures: a judgment whose reply never parsed (``max_attempts`` samples) is recorded with its
raw text and errors, counted, never scored, and listed by :class:`StepRunner` with its last parse
error (:attr:`StepRunner.unparsed`, ``unparsed_units`` in ``results.json``). It is not a final answer:
running the same command again re-asks it with the next ``max_attempts`` samples (new cache keys,
so the cached failure is not replayed, also without a run directory), up to
:data:`MAX_PARSE_ROUNDS` rounds in all; the failed samples stay in the record (``earlier_judgments``).

Consistency re-asks (``--consistency-sample F``): a judgment that shows items in an order is asked
with ``reorder``, a callable that re-renders it for another order of the same items
(:class:`Reask`). After the benchmark's phases, :meth:`StepRunner.run_reasks` chooses a seeded
share F of those judgments (parsed ones; at least one), and asks each once more with its items in
a seeded derangement of the recorded order, recorded under
:func:`~ideaharness.metrics.reliability.sampling.reask_key` (never scored; the reliability block
pairs it with the original for position consistency). The re-asks are one last phase run on the
driver, so ``--batch`` sends them as a batch; under ``--runner ray`` the executor's replay of every
phase on the driver registers the judgments there.

Phases go through an :class:`Executor` (:attr:`StepRunner.executor`): the default streams the items
of a phase through this process with a bounded number in flight
(:func:`~ideaharness.runs.stream.run_bounded`); a batch or distributed executor
(:mod:`ideaharness.runner.executors`) replaces it without touching the benchmarks (each item is
processed by one call ``fn(item)``).
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from ideaharness.errors import PartialRunError, UserError
from ideaharness.llm.errors import BudgetExceeded, ContextLengthError, LLMError, MissingAnswer
from ideaharness.llm.judge import judge
from ideaharness.llm.types import ChatModel, Message
from ideaharness.metrics.reliability.sampling import permute, reask_key, reask_permutation, select_for_reask
from ideaharness.metrics.reliability.views import REASK_SUFFIX
from ideaharness.prompts import CHARS_PER_TOKEN, Prompt, fit_prompt, prompt_chars
from ideaharness.redaction import redact
from ideaharness.runner.provenance import PRODUCED_BY, produced_by, recorded_changes, template_sha256
from ideaharness.runs.store import RunStore, keep_prompt
from ideaharness.runs.stream import run_bounded
from ideaharness.systems.task import GenerationTask, task_message

__all__ = ["DEFAULT_MAX_PROMPT_TOKENS", "MAX_PARSE_ROUNDS", "Executor", "FailedUnit", "LocalExecutor",
           "Reask", "Reorder", "StepRunner", "UnparsedUnit", "parse_failure"]

T = TypeVar("T")
Phase = tuple[str, Callable[[Any], Awaitable[None]]]
"""A phase of a run: its name (shown in the progress bar) and the coroutine run once per item."""

TASK_INSTANCE_KEY = "task_instance_id"
"""The key of a generation record (:meth:`StepRunner.generate_step`) holding its task's instance id."""

MAX_CONSECUTIVE_ERRORS = 5
"""A run stops (keeping everything done) after this many model calls in a row failed for good:
the endpoint is down or misconfigured, and retrying every remaining item would only burn time."""

DEFAULT_MAX_IN_FLIGHT = 64
"""Items of a phase in flight at once when the runner gives no bound (it gives 2 x --max-concurrency)."""

DEFAULT_MAX_PROMPT_TOKENS = 6000
"""Default prompt budget of every benchmark (estimated tokens, :data:`~ideaharness.prompts.CHARS_PER_TOKEN`
characters each); leaves room for the reply within the local models' 8,192-token context."""


STALE_ON_WORKER = "recorded with another prompt or parser; the driver re-judges or refuses it"
"""The error of a unit a Ray worker's step runner found changed (its buffer cannot replace records):
the driver's replay of the phase re-judges it (``--rejudge-changed``) or refuses the run."""

MAX_PARSE_ROUNDS = 3
"""Rounds of ``max_attempts`` samples a judgment whose reply does not parse is asked in, one per run
of the same command (the first run and two re-runs; a round answered wholly from the response
cache is a replay and does not count as that run's). Then its parse failure is final."""

RETRY_TEMPERATURE = 0.7
"""Lowest temperature of a re-asked round (as of :func:`~ideaharness.llm.judge.judge`'s retries): a
greedy decoder would repeat the unparsable reply."""


class UnparsedUnit(BaseModel):
    """A judgment whose reply did not parse after every attempt: counted, never scored.

    ``error`` is the last attempt's parse error (redacted); ``attempts`` counts the samples over
    every round; ``rounds`` the runs that asked it; ``final`` is True once :data:`MAX_PARSE_ROUNDS`
    rounds are spent (a re-run no longer re-asks it). ``source`` is ``"file"`` for an answer read
    from an ``ideas:`` file: it cannot be re-sampled, so it is also a failed unit (the run is
    partial; the fixed file needs ``--force`` or another ``--out``, as any changed input does).
    ``generation`` is True for a generation (a record of :meth:`StepRunner.generate_step`, whatever
    the generator: model, command, HTTP service or ideas file): an idea that never parsed is a
    failed unit of its system (the run is partial, exit 3), as a failed call is, so a system that
    fails on the hard instances is never ranked on the easy ones alone; a model's or a service's is
    still re-asked by the next run while rounds are left."""

    step: str
    instance_id: str
    key: str = ""
    error: str
    attempts: int
    rounds: int
    final: bool
    source: Literal["model", "file"] = "model"
    generation: bool = False


class FailedUnit(BaseModel):
    """A unit of work left undone: ``status`` "failed" (model call failed for good, or raised),
    "skipped" (a metric whose service could not be used) or "budget" (not started: the run's
    ``--max-cost`` / ``--max-tokens`` budget would be exceeded); ``error`` is the last error, redacted;
    ``source`` "file": the answer is missing from an ideas file (running again gives the same:
    :data:`FILE_FIX`), None otherwise (left out of results.json)."""

    step: str
    instance_id: str
    key: str = ""
    status: Literal["failed", "skipped", "budget"] = "failed"
    error: str
    source: Literal["file"] | None = None


@dataclass(frozen=True)
class Reask:
    """A judgment re-rendered with its items in another order (what a ``reorder`` returns).

    Attributes:
        messages: the prompt showing the items in the new order.
        parse: the reply parser for that prompt (labels may have moved); None: the original's.
        extra: the record's extra fields for that order (e.g. the gold option's new letter);
            None: the original's.
    """

    messages: list[Message]
    parse: Callable[[str], Any] | None = None
    extra: dict[str, Any] | None = None


Reorder = Callable[[list[int]], Reask]
"""``order -> Reask``: the judgment with its items shown in ``order``, where ``order[i]`` is the
index, in the order of the judgment's ``positions``, of the item now shown at position i."""


@dataclass
class _Reorderable:
    model: ChatModel
    parse: Callable[[str], Any]
    extra: dict[str, Any] | None
    positions: list[str]
    sampling: dict[str, Any]
    reorder: Reorder


class _Unit:
    def __init__(self, instance_id: str) -> None:
        self.id = instance_id


class _OnDriver:
    """A phase function every executor runs in this process (``on_driver``, as
    :class:`~ideaharness.runner.executors.driver_phase`)."""

    on_driver = True

    def __init__(self, fn: Callable[[Any], Awaitable[None]]) -> None:
        self.fn = fn

    async def __call__(self, item: Any) -> None:
        await self.fn(item)


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
                 max_prompt_tokens: int | None = DEFAULT_MAX_PROMPT_TOKENS,
                 max_in_flight: int = DEFAULT_MAX_IN_FLIGHT) -> None:
        self.store = store
        self.max_attempts = max_attempts
        self.progress = progress
        self.max_prompt_tokens = max_prompt_tokens
        self.executor: Executor = LocalExecutor(max_in_flight)
        self.error_count = 0
        self.failures: dict[tuple[str, str, str], FailedUnit] = {}
        self.unparsed: dict[tuple[str, str, str], UnparsedUnit] = {}
        self.reorderable: dict[tuple[str, str, str], _Reorderable] = {}
        self.reasks = 0
        self._consecutive_errors = 0
        self._asking = 0  # judge_step calls asking a model now (records to come)
        self.generated: dict[str, set[str]] = {}
        """Generator model string -> the task instance ids :meth:`generate_step` asked it for in this
        process (recorded ones included): a system's ``asked`` answers."""
        self.missing_answers: dict[str, set[str]] = {}
        """Model string -> instance ids whose answer the system lacked (:class:`MissingAnswer`)."""
        self.generation_units: dict[tuple[str, str, str], tuple[str, str]] = {}
        """``(step, instance_id, key)`` of each unit :meth:`generate_step` asked in this process ->
        (generator model string, task instance id): which system a failed unit counts against
        (``idea_sources``' ``failed``, the ``coverage`` block)."""
        self.capture: list[dict[str, Any]] | None = None
        """Capture mode (``ideaharness tasks export``): a list, and :meth:`generate_step` appends
        each task JSON to it instead of asking; None (default): generation is asked and recorded."""

    @property
    def exporting(self) -> bool:
        """Whether this run only captures generation tasks (:attr:`capture` is a list): benchmarks
        then run their phases up to and including generation, and stop."""
        return self.capture is not None

    def fail(self, step: str, instance_id: str, key: str, error: object, *, skipped: bool = False,
             budget: bool = False, source: Literal["file"] | None = None) -> None:
        """List a unit as failed (or skipped, or not started for the budget) with its last error
        (redacted before it is kept); ``source`` "file": an answer missing from an ideas file."""
        if not skipped and not budget and (step, instance_id, key) not in self.failures:
            self.error_count += 1
        status: Literal["failed", "skipped", "budget"] = (
            "budget" if budget else "skipped" if skipped else "failed")
        self.failures[(step, instance_id, key)] = FailedUnit(
            step=step, instance_id=instance_id, key=key, status=status, error=redact(error), source=source,
        )

    def fit(self, messages: list[Message]) -> list[Message]:
        """``messages`` within the prompt budget (data texts cut, see :func:`fit_prompt`).

        Raises:
            ContextLengthError: the prompt cannot be made to fit.
        """
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
        reorder: Reorder | None = None,
        fit: bool = True,
        max_attempts: int | None = None,
        template: str | None = None,
        **sampling: Any,
    ) -> dict[str, Any] | None:
        """Ask, parse (bounded retries) and record ``{"judgment": ..., "produced_by": ..., **extra}``;
        returns the record, or None when the unit failed (listed in :attr:`failures`; a re-run
        retries it).

        ``reorder`` (with ``positions``, the shown items' ids in order): how to re-render this
        judgment for another order of its items; the judgment may then be chosen for a
        ``--consistency-sample`` re-ask (:meth:`run_reasks`). ``fit=False`` sends ``messages``
        as given, without the prompt budget (a system's task message). ``max_attempts``: samples per
        parse round (default :attr:`max_attempts`). ``template``: the template the prompt was
        rendered from when ``messages`` is not the :class:`~ideaharness.prompts.Prompt` itself (a
        system's task message embeds it); default ``messages.step``.

        What produced the record (``produced_by``: template hash, parser version,
        :func:`~ideaharness.runner.provenance.produced_by`) is compared with what would produce it
        now when the unit is already recorded; also its prompt, once units of the run were
        re-judged (``store.rejudged_before``). When something differs, the unit is judged anew from
        its first round and its record replaced (``rejudged_from`` keeps what produced the old one,
        :meth:`~ideaharness.runs.store.RunStore.note_rejudged` counts it) if the store's provenance
        says ``rejudge`` (``--rejudge-changed``); a store that cannot replace records (a Ray
        worker's buffer) lists the unit as failed, for the driver's replay to decide; otherwise the
        run is refused. Records without ``produced_by`` (recorded before it) are never compared.

        Raises:
            ValueError: ``reorder`` without ``positions`` of at least two items.
            UserError: the unit was recorded with another template, parser or prompt, and the run
                does not re-judge changed units (the line names the step, the unit and what changed).

        Parse failures are asked in rounds of ``max_attempts`` samples, round r with the sample
        indices ``sample_index + r * max_attempts * 1000 + k * 1000`` (their own cache keys) and,
        after the first, a temperature of at least :data:`RETRY_TEMPERATURE`; at most
        :data:`MAX_PARSE_ROUNDS` rounds in all. A round whose every reply came from the response
        cache replays an earlier failure, so the next round is asked at once; a round with a new
        reply that did not parse ends this run's asking. A unit recorded by an earlier run is
        returned as recorded, unless its reply did not parse and rounds are left: then the next
        round is asked and its record replaced. The failed judgments stay in the record
        (``earlier_judgments``; ``parse_rounds`` counts the rounds), and a parse failure is listed
        in :attr:`unparsed` with its last error.
        """
        if reorder is not None and not key.endswith(REASK_SUFFIX):
            if not positions or len(positions) < 2:
                raise ValueError(f"{step}: reorder needs the positions of at least two shown items")
            self.reorderable[(step, instance_id, key)] = _Reorderable(
                model, parse, extra, list(positions), dict(sampling), reorder)
        produced = produced_by(template if template is not None else getattr(messages, "step", None), parse)
        existing = self.store.get(step, instance_id, key)
        earlier: list[dict[str, Any]] = []
        first_round = 0
        rejudged_from: dict[str, Any] | None = None
        if existing is not None:
            changed = self._changed(existing, produced, messages, fit)
            if changed:
                if not callable(getattr(self.store, "areplace", None)):  # a Ray worker: the driver decides
                    self.fail(step, instance_id, key, f"{STALE_ON_WORKER}: {'; '.join(changed)}")
                    return None
                if not self._rejudging():
                    raise UserError(self._refusal(step, instance_id, key, changed))
                rejudged_from = dict(existing.get(PRODUCED_BY) or {})
            elif not self._reask(step, instance_id, key, existing):
                self._note_parse(step, instance_id, key, existing)
                stale = self.failures.get((step, instance_id, key))
                if stale is not None and stale.error.startswith(STALE_ON_WORKER):
                    del self.failures[(step, instance_id, key)]  # a worker's doubt, unfounded here
                return existing
            else:
                earlier = [*(existing.get("earlier_judgments") or []), existing["judgment"]]
                first_round = _rounds(existing)
        base_index = int(sampling.pop("sample_index", 0) or 0)
        temperature = float(sampling.pop("temperature", 0.0) or 0.0)
        rounds = first_round
        self._asking += 1
        try:
            fitted = self.fit(messages) if fit else messages
            observed = _CacheObserver(model)
            attempts = max_attempts or self.max_attempts
            while True:
                observed.fresh = 0
                judgment = await judge(
                    observed, fitted, parse, max_attempts=attempts, positions=positions,
                    sample_index=base_index + rounds * attempts * 1000,
                    temperature=temperature if rounds == 0 else max(temperature, RETRY_TEMPERATURE),
                    **sampling,
                )
                rounds += 1
                if judgment.parse_ok or observed.fresh or rounds >= MAX_PARSE_ROUNDS:
                    break
                earlier.append(judgment.model_dump(mode="json"))  # a cached failure, replayed
        except ContextLengthError as exc:  # this item's prompt is too long; others may fit
            self.fail(step, instance_id, key, exc)
            return None
        except BudgetExceeded as exc:  # not started: the run's budget is spent; a larger one resumes it
            self.fail(step, instance_id, key, exc, budget=True)
            return None
        except MissingAnswer as exc:  # a system without this answer: this unit's failure, no outage
            self.fail(step, instance_id, key, exc, source="file")
            self.missing_answers.setdefault(str(getattr(model, "model", "")), set()).add(
                exc.instance_id or instance_id)
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
        finally:
            self._asking -= 1
        self._consecutive_errors = 0
        self.failures.pop((step, instance_id, key), None)
        record = {"judgment": judgment.model_dump(mode="json"), **(extra or {}), PRODUCED_BY: produced}
        truncations = getattr(fitted, "truncations", None)
        if truncations:
            record["prompt_truncations"] = truncations
        if rounds > 1:
            record["earlier_judgments"] = earlier
            record["parse_rounds"] = rounds
        if rejudged_from is not None:
            record["rejudged_from"] = rejudged_from
        put = self.store.areplace if existing is not None else self.store.aput
        if isinstance(self.store, RunStore):  # prompts.jsonl before the record, in the record's group
            # units still asking will record soon: their records may share this one's fsync
            await put(step, instance_id, record, key, prompt=(judgment.prompt_hash, fitted),
                      siblings=self._asking)
        else:  # a store without groups (a Ray worker's buffer): the prompt first, then the record
            await keep_prompt(self.store, judgment.prompt_hash, fitted)
            await put(step, instance_id, record, key)
        if rejudged_from is not None:
            self.store.note_rejudged(step)
        self._note_parse(step, instance_id, key, record)
        return record

    def _rejudging(self) -> bool:
        """Whether units recorded with another template, parser or prompt are re-judged
        (``--rejudge-changed``: the store's provenance says ``rejudge``) rather than refused."""
        return bool(getattr(getattr(self.store, "provenance", None), "rejudge", False))

    def _changed(self, record: dict[str, Any], produced: dict[str, Any], messages: list[Message],
                 fit: bool) -> list[str]:
        """What differs between what produced a recorded unit and what would produce it now
        (:func:`~ideaharness.runner.provenance.recorded_changes`); once units of the run were
        re-judged, also its prompt (it shows what a re-judged unit now says). ``[]``: reuse it."""
        from ideaharness.llm.judge import prompt_hash

        changes = recorded_changes(record, produced)
        if changes or not getattr(self.store, "rejudged_before", False) or PRODUCED_BY not in record:
            return changes
        judgment = record.get("judgment")
        recorded = judgment.get("prompt_hash") if isinstance(judgment, dict) else None
        if not recorded:
            return []
        try:
            fitted = self.fit(messages) if fit else messages
        except ContextLengthError:
            return []
        if prompt_hash(fitted) != recorded:
            return ["its prompt differs from the one it was judged with (it shows units re-judged since)"]
        return []

    def _refusal(self, step: str, instance_id: str, key: str, changed: list[str]) -> str:
        where = getattr(self.store, "dir", None)
        unit = f"{step} {instance_id}{'/' + key if key else ''}"
        return (f"{where or 'this run'}: {unit} was recorded with another prompt or parser "
                f"({'; '.join(changed)}); run again with --rejudge-changed to re-judge only the affected "
                "units, or with --force to start a new run here")

    def note_generation(self, step: str, instance_id: str, key: str, generator: str,
                        task_instance_id: str) -> None:
        """Count a unit a benchmark asks its generator for outside :meth:`generate_step` (a model's
        multi-call method, e.g. ResearchBench's mutate-refine-recombine pipeline) as a generation
        of ``generator`` (its model string) for ``task_instance_id``: asked in ``idea_sources``,
        and failed in the ``coverage`` block when its call fails. Its record must carry
        ``task_instance_id`` (:data:`TASK_INSTANCE_KEY`) so a reply that does not parse is a
        failed unit, as a :meth:`generate_step` one is. Nothing in capture mode."""
        if self.capture is None:
            self.generated.setdefault(generator, set()).add(task_instance_id)
            self.generation_units[(step, instance_id, key)] = (generator, task_instance_id)

    def missing_answer(self, step: str, instance_id: str, key: str, generator: str, error: str, *,
                       task_instance_id: str | None = None) -> None:
        """List a generation unit the benchmark did not ask because the system has no answer for it
        (an ``--ideas`` file without the instance, known up front): a failed unit with ``error``,
        counted as asked and missing for ``generator`` (the model string) in ``idea_sources``."""
        iid = task_instance_id or instance_id
        self.fail(step, instance_id, key, error, source="file")
        self.generation_units[(step, instance_id, key)] = (generator, iid)
        self.generated.setdefault(generator, set()).add(iid)
        self.missing_answers.setdefault(generator, set()).add(iid)

    async def generate_step(
        self,
        step: str,
        instance_id: str,
        key: str,
        generator: ChatModel,
        messages: list[Message],
        parse: Callable[[str], Any],
        *,
        task: GenerationTask,
        extra: dict[str, Any] | None = None,
        **sampling: Any,
    ) -> dict[str, Any] | None:
        """The one call every benchmark's generation goes through; returns the record (the shape of
        :meth:`judge_step`'s), or None when the unit failed or in capture mode.

        * a model generator: exactly :meth:`judge_step` with ``messages`` and ``parse``;
          every generation record carries ``"task_instance_id"`` (:data:`TASK_INSTANCE_KEY`: the
          task's instance id, what ``idea_sources`` counts as asked, also on resume and under Ray);
        * a system generator (:func:`~ideaharness.systems.is_system` of ``generator.model``): the
          task JSON (``task.to_json(prompt=<messages fitted to the budget>, contract=...)``) is sent
          as the one user message, unfitted, and the answer parsed by the benchmark's contract
          (:meth:`~ideaharness.systems.IdeaContract.parse`); the record carries
          ``"system_task": True``. An ``ideas:`` file is asked once per parse round (its answer
          cannot change);
        * capture mode (:attr:`capture` is a list): the task JSON is appended to it; nothing is
          asked or recorded.

        Raises:
            UserError: no idea contract is registered for ``task.benchmark`` (system or capture).
        """
        from ideaharness.systems.contract import get_contract
        from ideaharness.systems.spec import is_system, system_kind

        model = str(getattr(generator, "model", ""))
        system = is_system(model)
        if self.capture is None:
            self.generated.setdefault(model, set()).add(task.instance_id)
            self.generation_units[(step, instance_id, key)] = (model, task.instance_id)
        extra = {**(extra or {}), TASK_INSTANCE_KEY: task.instance_id}
        if not system and self.capture is None:
            return await self.judge_step(step, instance_id, key, generator, messages, parse, extra=extra,
                                         **sampling)
        contract = get_contract(task.benchmark)
        try:
            fitted = list(self.fit(messages))
        except ContextLengthError:  # the prompt is context for a system, not its input: given whole
            fitted = list(messages)
        task_json = task.to_json(prompt=fitted, contract=contract)
        if self.capture is not None:
            self.capture.append(task_json)
            return None
        return await self.judge_step(
            step, instance_id, key, generator, task_message(task_json),
            functools.partial(contract.parse, task=task), extra={**extra, "system_task": True},
            fit=False, max_attempts=1 if system_kind(model) == "ideas-file" else None,
            template=getattr(messages, "step", None), **sampling)

    def reask_candidates(self) -> list[str]:
        """Units ``"<step>|<instance_id>|<key>"`` a consistency re-ask may choose: judgments asked
        with ``reorder`` in this process whose record parsed."""
        out = []
        for (step, iid, key) in self.reorderable:
            record = self.store.get(step, iid, key)
            judgment = (record or {}).get("judgment")
            if isinstance(judgment, dict) and judgment.get("parse_ok"):
                out.append(f"{step}|{iid}|{key}")
        return out

    async def run_reasks(self, fraction: float, *, seed: int) -> int:
        """Re-ask a seeded share ``fraction`` of :meth:`reask_candidates` (at least one when
        ``fraction`` > 0; :func:`~ideaharness.metrics.reliability.sampling.select_for_reask`) with
        their items in a seeded derangement of the recorded order (:func:`reask_permutation`),
        each recorded under ``reask_key(key)``; one phase ("consistency re-asks") in this process.
        A re-ask already recorded is kept (resume). Returns the number of re-asks chosen.

        Raises:
            ValueError: ``fraction`` outside [0, 1].
        """
        chosen = select_for_reask(self.reask_candidates(), fraction, seed=seed)
        per_instance: dict[str, list[tuple[str, str, str]]] = {}
        units = {f"{s}|{i}|{k}": (s, i, k) for s, i, k in self.reorderable}
        for unit in chosen:
            per_instance.setdefault(units[unit][1], []).append(units[unit])

        async def reask(item: _Unit) -> None:
            for step, iid, key in per_instance[item.id]:
                entry = self.reorderable[(step, iid, key)]
                order = reask_permutation(len(entry.positions), seed=seed, unit=f"{step}|{iid}|{key}")
                asked = entry.reorder(order)
                await self.judge_step(
                    step, iid, reask_key(key), entry.model, asked.messages, asked.parse or entry.parse,
                    extra=asked.extra if asked.extra is not None else entry.extra,
                    positions=[str(p) for p in permute(entry.positions, order)], **entry.sampling)

        if per_instance:
            await self.run_phases([_Unit(i) for i in sorted(per_instance)],
                                  [("consistency re-asks", _OnDriver(reask))])
        self.reasks = len(chosen)
        return len(chosen)

    def reaskable(self, step: str, instance_id: str, key: str = "") -> bool:
        """Whether :meth:`judge_step` would ask the recorded unit again now: a parse failure
        (recorded by an earlier run, rounds left), or a unit whose template (or module-level
        parser, looked up by name) changed since it was recorded, under ``--rejudge-changed``. A
        benchmark that caches what it derived from a unit (a list of parsed ideas, a skipped
        question) asks this before trusting that cache."""
        record = self.store.get(step, instance_id, key)
        if record is None:
            return False
        return self._reask(step, instance_id, key, record) or self._rejudging() and self._stale(record)

    def _stale(self, record: dict[str, Any]) -> bool:
        """Whether what produced a record changed, as far as the record alone tells: its
        template's hash, or the version of its parser when that is a module-level function
        (:meth:`~ideaharness.runner.provenance.RunProvenance.current_version`)."""
        old = record.get(PRODUCED_BY)
        if not isinstance(old, dict):
            return False
        template, digest = old.get("template"), old.get("template_sha256")
        if isinstance(template, str) and digest and template_sha256(template) not in (None, digest):
            return True
        current = getattr(getattr(self.store, "provenance", None), "current_version", None)
        if old.get("parser_by_name") and current is not None and isinstance(old.get("parser"), str):
            now = current(old["parser"])
            return now is not None and now != old.get("parser_version")
        return False

    def note_recorded(self, step: str, instance_id: str, key: str = "") -> None:
        """Keep :attr:`unparsed` in step with a unit recorded by an earlier run that the benchmark
        does not ask again (its cached result is used): a reply that never parsed stays listed,
        with its error, in every later run's ``unparsed_units``."""
        record = self.store.get(step, instance_id, key)
        if record is not None:
            self._note_parse(step, instance_id, key, record)

    def _reask(self, step: str, instance_id: str, key: str, record: dict[str, Any]) -> bool:
        """Whether a recorded unit is a parse failure a new round may re-ask: recorded by an earlier
        run (not this one), rounds left, and a store that can replace records (a Ray worker's
        buffer cannot: the driver's replay re-asks it)."""
        judgment = record.get("judgment")
        if not isinstance(judgment, dict) or judgment.get("parse_ok") is not False:
            return False
        if not callable(getattr(self.store, "areplace", None)):
            return False
        written_here = getattr(self.store, "written_here", None)
        if written_here is None or written_here(step, instance_id, key):
            return False
        return _rounds(record) < MAX_PARSE_ROUNDS

    def _note_parse(self, step: str, instance_id: str, key: str, record: dict[str, Any]) -> None:
        """Keep :attr:`unparsed` in step with the unit's record (listed while its reply does not parse)."""
        judgment = record.get("judgment")
        unit = (step, instance_id, key)
        if not isinstance(judgment, dict) or judgment.get("parse_ok") is not False:
            self.unparsed.pop(unit, None)
            listed = self.failures.get(unit)
            if listed is not None and listed.error.startswith((FILE_BROKEN, GENERATION_UNPARSED)):
                del self.failures[unit]  # it parses now (a re-asked round, a resumed record)
            return
        errors = judgment.get("errors") or []
        rounds = _rounds(record)
        attempts = sum(int(j.get("attempts") or 1) for j in [*(record.get("earlier_judgments") or []),
                                                               judgment])
        from_file = _from_file(judgment)
        generation = TASK_INSTANCE_KEY in record
        self.unparsed[unit] = UnparsedUnit(
            step=step, instance_id=instance_id, key=key, attempts=attempts, rounds=rounds,
            final=rounds >= MAX_PARSE_ROUNDS, source="file" if from_file else "model",
            error=redact(str(errors[-1]) if errors else "the reply did not parse"), generation=generation,
        )
        if from_file:  # nothing to re-sample: the instance failed, as a model's failed call does
            why = f"{FILE_BROKEN}: {self.unparsed[unit].error}"
            self.failures[unit] = FailedUnit(step=step, instance_id=instance_id, key=key, error=why)
        elif generation:  # the system gave no idea for this unit: its failure, never left out silently
            why = f"{GENERATION_UNPARSED}: {self.unparsed[unit].error}"
            self.failures[unit] = FailedUnit(step=step, instance_id=instance_id, key=key, error=why)

    async def run_phases(
        self,
        items: Sequence[T],
        phases: Sequence[tuple[str, Callable[[T], Awaitable[None]]]],
    ) -> None:
        """Run each phase over all items, in order, through :attr:`executor` (default: the items of
        a phase streamed, at most ``max_in_flight`` at once)."""
        await self.executor.run_phases(items, phases, progress=self.progress)

    def outcome(self) -> dict[str, Any]:
        """What every results.json carries about completeness and budgets.

        Returns:
            ``{"status": "complete" | "partial", "failed_units": [{step, instance_id, key, status,
            error}], "unparsed_units": [{step, instance_id, key, error, attempts, rounds, final}],
            "truncated_texts": int, "truncated_prompts": int}``; truncation counts cover every
            record of the run directory (earlier runs included). Unparsed judgments alone do not
            make a run partial (they are counted by each benchmark); a metric they leave with no
            scored unit does (:func:`ideaharness.runner.run.uncomputed_metrics`). An unparsed
            generation (or ideas-file answer) is also a failed unit: the run is partial.
        """
        prompts = [data["prompt_truncations"] for _, _, _, data in self.store.iter_records()
                   if isinstance(data, dict) and data.get("prompt_truncations")]
        return {
            "status": "partial" if self.failures else "complete",
            "failed_units": [unit.model_dump(exclude_none=True) for unit in self.failures.values()],
            "unparsed_units": [unit.model_dump() for unit in self.unparsed.values()],
            "truncated_texts": sum(len(cuts) for cuts in prompts),
            "truncated_prompts": len(prompts),
        }

    def notes(self) -> list[str]:
        """Human-readable notes on failed and skipped units and on truncated texts, for reports."""
        out: list[str] = []
        failed = [u for u in self.failures.values() if u.status == "failed" and not parse_failure(u)]
        absent = [u for u in failed if u.source == "file"]
        failed = [u for u in failed if u.source != "file"]
        skipped = [u for u in self.failures.values() if u.status == "skipped"]
        if failed:
            shown = "; ".join(f"{u.step} {u.instance_id}: {u.error}" for u in failed[:3])
            out.append(f"{len(failed)} unit(s) failed after retries and were not recorded "
                       f"(re-run to retry): {shown}")
        if absent:
            shown = "; ".join(f"{u.step} {u.instance_id}: {u.error}" for u in absent[:3])
            out.append(f"{len(absent)} answer(s) missing from the ideas file (running again finds them "
                       f"missing again: add them to the file, {FILE_FIX}): {shown}")
        if skipped:
            shown = "; ".join(f"{u.step} {u.instance_id}: {u.error}" for u in skipped[:3])
            out.append(f"{len(skipped)} metric unit(s) skipped (re-run to retry): {shown}")
        if self.unparsed:
            out.append(unparsed_note(list(self.unparsed.values())))
        status = self.outcome()
        if status["truncated_texts"]:
            out.append(f"{status['truncated_texts']} text(s) in {status['truncated_prompts']} prompt(s) were "
                       f"cut to fit the prompt budget of {self.max_prompt_tokens} tokens "
                       "(records: prompt_truncations)")
        return out


class _CacheObserver:
    """A model client that counts the replies not served from the response cache (``fresh``);
    everything else is the wrapped client's."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model
        self.fresh = 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    async def chat(self, messages: list[Message], **sampling: Any) -> Any:
        completion = await self._model.chat(messages, **sampling)
        if not getattr(completion, "cached", False):
            self.fresh += 1
        return completion


FILE_FIX = "fix the file, then run again with --force or another --out"
"""What to do about an answer read from an ideas file that broke the rules (a changed input file
starts a new run: the same command would refuse to resume)."""


FILE_BROKEN = "the ideas file's answer breaks the rules"
"""How the failed unit of an ideas-file answer that did not parse begins (``failed_units``)."""

GENERATION_UNPARSED = "the generation did not parse"
"""How the failed unit of any other generation whose reply did not parse begins (``failed_units``)."""


def _from_file(judgment: dict[str, Any]) -> bool:
    """Whether a judgment's reply was read from an ``ideas:`` file (nothing to re-sample)."""
    return str(judgment.get("judge_model") or "").startswith("ideas:")


def _rounds(record: dict[str, Any]) -> int:
    return int(record.get("parse_rounds") or len(record.get("earlier_judgments") or []) + 1)


def parse_failure(unit: FailedUnit) -> bool:
    """Whether a failed unit is a generation (or an ideas file's answer) whose reply did not parse:
    recorded, and listed also under ``unparsed_units`` (not a call that failed)."""
    return unit.error.startswith((FILE_BROKEN, GENERATION_UNPARSED))


def unparsed_note(units: Sequence[UnparsedUnit]) -> str:
    """One line on judgments and generations whose replies did not parse: how many, the first
    three with their parse errors, whether running the same command again re-asks them, and that
    an unparsed generation is a failed unit of its system."""
    shown = "; ".join(f"{u.step} {u.instance_id}{'/' + u.key if u.key else ''}: {u.error}" for u in units[:3])
    more = f" (and {len(units) - 3} more, under 'unparsed_units' in results.json)" if len(units) > 3 else ""
    files = [u for u in units if u.source == "file"]
    retry = [u for u in units if not u.final and u.source != "file"]
    generations = [u for u in units if u.generation and u.source != "file"]
    parts = []
    if generations:
        which = "they are generations" if len(generations) == len(units) else (
            f"{len(generations)} of them are generations")
        parts.append(f"{which}: failed units of their system (the run is partial), never left out of "
                     "its mean unsaid")
    if retry:
        which = "them" if len(retry) == len(units) else f"{len(retry)} of them"
        parts.append(f"the same command re-asks {which} with new samples (at most {MAX_PARSE_ROUNDS} "
                     "rounds in all)")
    if files:
        parts.append(f"{'they' if len(files) == len(units) else f'{len(files)} of them'} came from an ideas: "
                     f"file, which cannot be re-asked: they count as failed units; {FILE_FIX}")
    if not retry and not files:
        rounds = sorted({u.rounds for u in units})  # a failed blinding rewrite is final after one
        parts.append(f"final: each was asked in {MAX_PARSE_ROUNDS} rounds of samples"
                     if rounds == [MAX_PARSE_ROUNDS] else f"final: asked in {' or '.join(map(str, rounds))} "
                     "round(s) of samples, not re-asked by a later run")
    then = "; ".join(parts)
    judged = len(units) - len(generations) - len([u for u in files if u.generation])
    what = ("judgment(s)" if judged == len(units) else "generation(s)" if judged == 0
            else f"replies ({len(units) - judged} generation(s), {judged} judgment(s))")
    return f"{len(units)} {what} did not parse, counted and never scored; {then}: {shown}{more}"


class Executor(Protocol):
    """Runs the phases of a benchmark: ``fn(item)`` once per item and phase, phases in order.

    The extension point for other execution modes: a batch executor may run a phase once to
    collect the uncached requests, submit them as one batch, then run the phase again (every call
    now a cache hit); a distributed executor may send items to workers. Benchmarks never notice:
    each unit's result is in the run store when ``fn(item)`` returns.
    """

    async def run_phases(self, items: Sequence[Any], phases: Sequence[Phase], *, progress: bool) -> None: ...


class _StatusColumn(ProgressColumn):
    """The run's status text (tokens, cost, budget: :attr:`LocalExecutor.status`) after a bar."""

    def __init__(self, status: Callable[[], str] | None) -> None:
        super().__init__()
        self.status = status

    def render(self, task: Any) -> Text:
        return Text(self.status() if self.status is not None else "")


class LocalExecutor:
    """The default :class:`Executor`: the items of a phase streamed through this process, at most
    ``max_in_flight`` started and not finished (no coroutine per item up front), one progress bar
    per phase (on stderr, when it is a terminal)."""

    def __init__(self, max_in_flight: int = DEFAULT_MAX_IN_FLIGHT) -> None:
        self.max_in_flight = max_in_flight
        self.status: Callable[[], str] | None = None
        """Text shown after each progress bar (tokens, cost, budget), refreshed as items finish;
        None shows nothing. Set by the runner."""

    async def run_phases(self, items: Sequence[Any], phases: Sequence[Phase], *, progress: bool) -> None:
        """Run each phase over all items, in order.

        Raises:
            whatever ``fn`` raises (other items of the phase are cancelled).
        """
        # on stderr, and only on a terminal: stdout holds the results, opened by the run's banner
        # line (runner.run), and a captured or piped stderr keeps its one-line errors
        console = Console(stderr=True)
        with Progress(
            TextColumn("{task.description:<28}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            _StatusColumn(self.status),
            disable=not progress or not console.is_terminal,
            transient=False,
            console=console,
            # no stdout/stderr redirection: llama.cpp swaps the process's streams from a worker
            # thread while it loads, and interleaved swaps would leave stdout pointing at /dev/null
            redirect_stdout=False,
            redirect_stderr=False,
        ) as bar:
            for name, fn in phases:
                await self.run_phase(name, items, fn, bar)

    async def run_phase(self, name: str, items: Sequence[Any], fn: Callable[[Any], Awaitable[None]],
                        bar: Progress) -> None:
        """One phase: ``fn(item)`` for every item, at most :attr:`max_in_flight` at once, advancing
        ``bar``; on an error no new item starts and those in flight are cancelled."""
        task = bar.add_task(name, total=len(items))
        await run_bounded(items, fn, max_in_flight=self.max_in_flight,
                          on_done=lambda _item: bar.advance(task))
