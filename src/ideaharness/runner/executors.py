"""Other ways to execute a run's phases: through the Batch API (``--batch``) or on Ray (``--runner ray``).

Both are :class:`~ideaharness.runner.steps.Executor` s that :func:`install_executor` puts on the
run's :class:`~ideaharness.runner.steps.StepRunner`; benchmarks never notice. Cross-instance work
that a benchmark does outside ``run_phases`` (BERTScore batches, competitions, aggregation) stays
in the driver process either way.

* :class:`BatchExecutor`: for each phase, the uncached requests of ``openai/`` models go out as one
  OpenAI Batch per endpoint and model (:func:`~ideaharness.llm.batch.run_phase_batched`), then the
  phase runs normally and finds every answer in the response cache; the reports go to
  ``results["batch"]``.
* :class:`RayExecutor`: each phase's items go to Ray tasks
  (:func:`~ideaharness.runs.ray_runner.run_phase_ray`).
  The phase function ``fn(item)`` is a closure over the benchmark, which holds the run's store,
  step runner and model clients; it is pickled with those three replaced by references
  (:class:`BoundUnit`) that a worker resolves to its own record buffer, step runner and clients
  (built from :class:`~ideaharness.runs.ray_runner.ModelSpec`). Records flow back to the driver,
  the one writer of the run directory.
"""

from __future__ import annotations

import asyncio
import io
import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ideaharness.errors import UserError
from ideaharness.llm.batch import BatchPhaseReport, BatchSettings, batchable_models, run_phases_batched
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.steps import FailedUnit, LocalExecutor, Phase, StepRunner
from ideaharness.runs.ray_runner import ModelSpec, WorkerContext, ray_init, run_phase_ray

__all__ = ["BatchExecutor", "BoundUnit", "RayExecutor", "batch_models", "driver_phase", "install_executor",
           "model_specs"]


class driver_phase:  # noqa: N801 (used like a decorator)
    """Mark a phase function as one that runs in the driver process whatever the executor: it
    works across instances (embeds a whole corpus) or fills in-memory state later phases read.

    ``phases.append(("candidate pools", driver_phase(self.pool)))``.
    """

    on_driver = True

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    async def __call__(self, item: Any) -> None:
        await self.fn(item)


BATCH_ROUNDS = 32
"""Batch rounds per phase at most: one per link of the longest chain of dependent calls of an item
(ResearchBench composition: compose, mutate, refine x n, merge; plus parse-failure re-asks). A
phase that still misses answers after them asks the rest synchronously."""


class BatchExecutor:
    """Phases through the Batch API, then the normal (streaming) pass over cached answers.

    Args:
        run_dir: the run directory (batch state under ``batches/``).
        settings: poll interval, rounds, completion window.
        local: the executor of the normal pass.
    """

    def __init__(self, run_dir: Path, settings: BatchSettings, local: LocalExecutor) -> None:
        self.run_dir = run_dir
        self.settings = settings
        self.local = local
        self.reports: list[BatchPhaseReport] = []

    async def run_phases(self, items: Sequence[Any], phases: Sequence[Phase], *, progress: bool) -> None:
        """Each phase: collect, submit and import its uncached requests, then run it normally.

        Raises:
            UserError: the endpoint refused a Files/Batches API call.
            PartialRunError: a batch still running after ``settings.max_wait_s``.
        """
        async def normal(part: Sequence[Any], these: Sequence[Phase]) -> None:
            await self.local.run_phases(part, these, progress=progress)

        self.reports += await run_phases_batched(normal, items, phases, run_dir=self.run_dir,
                                                 settings=self.settings, progress=progress)

    def summary(self) -> dict[str, Any]:
        """``results["batch"]``: totals and one report per phase run in this process."""
        return {
            "phases": [r.model_dump(mode="json") for r in self.reports],
            "submitted": sum(r.submitted for r in self.reports),
            "imported": sum(r.imported for r in self.reports),
            "reattached": sum(r.reattached for r in self.reports),
            "failed_lines": sum(len(r.failed_lines) for r in self.reports),
        }


def batch_models(models: Mapping[str, Any]) -> dict[str, Any]:
    """Role -> client with every :class:`~ideaharness.llm.LLM` wrapped for batch collection (one
    wrapper per distinct client, so roles sharing a client still share it).

    Raises:
        UserError: a client without its response cache (``--no-cache``).
    """
    roles = list(models)
    return dict(zip(roles, batchable_models(*(models[r] for r in roles)), strict=True))


# ----------------------------------------------------------------------------- Ray


def _binding_pickler(file: io.BytesIO, bound: dict[int, str]) -> pickle.Pickler:
    """A cloudpickle pickler (closures and lambdas by value) that writes the objects in ``bound``
    (by id) as persistent references."""
    from ray import cloudpickle  # Ray's own copy: no other dependency

    class BindingPickler(cloudpickle.CloudPickler):
        def persistent_id(self, obj: Any) -> str | None:
            return bound.get(id(obj))

    return BindingPickler(file, protocol=5)  # type: ignore[no-untyped-call]


class _BindingUnpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, ctx: WorkerContext) -> None:
        super().__init__(file)
        self.ctx = ctx

    def persistent_load(self, pid: str) -> Any:
        if pid == "store":
            return self.ctx.store
        if pid == "steps":
            return self.ctx.steps
        return self.ctx.models[pid.removeprefix("model:")]


class BoundUnit:
    """A phase function ``fn(item)`` pickled with the driver's store, step runner and model clients
    replaced by references; called as ``await unit(worker_ctx, item)`` on a worker, it runs ``fn``
    against the worker's own (the form :func:`run_phase_ray` takes).

    Args:
        fn: the phase function.
        store, steps: the driver's run store and step runner.
        models: role -> the driver's client of that role.
    """

    def __init__(self, fn: Any, store: Any, steps: Any, models: Mapping[str, Any]) -> None:
        bound = {id(store): "store", id(steps): "steps"}
        for role, client in models.items():
            bound.setdefault(id(client), f"model:{role}")
        buffer = io.BytesIO()
        _binding_pickler(buffer, bound).dump(fn)
        self.payload = buffer.getvalue()
        self._loaded: tuple[int, Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"payload": self.payload, "_loaded": None}

    async def __call__(self, ctx: WorkerContext, item: Any) -> None:
        if self._loaded is None or self._loaded[0] != id(ctx):  # one copy of the benchmark per chunk
            self._loaded = (id(ctx), _BindingUnpickler(io.BytesIO(self.payload), ctx).load())
        await self._loaded[1](item)


def model_specs(roles: Mapping[str, str], options: ExecutionOptions) -> dict[str, ModelSpec]:
    """Role -> the picklable recipe of its client, as :func:`~ideaharness.runner.models.build_models`
    builds it (endpoint by role, cache, concurrency, rpm, retries, timeout, price)."""
    from ideaharness.llm.providers import accepts_base_url
    from ideaharness.runner.models import role_url

    return {
        role: ModelSpec(model=model, base_url=role_url(role, options) if accepts_base_url(model) else None,
                        cache_path=str(options.cache_path) if options.cache_path else None,
                        use_cache=options.use_cache, max_concurrency=options.max_concurrency,
                        rpm=options.rpm, max_retries=options.max_retries, timeout_s=options.timeout,
                        price_per_mtok=options.price_for(role))
        for role, model in roles.items()
    }


class RayExecutor:
    """Phases as Ray tasks; the driver writes the records, keeps the failed units and adds the
    workers' model counters to its clients' (so ``llm_stats`` covers the whole run). Then the
    driver replays the phase over the recorded units (no model call), so what a benchmark keeps
    in memory from its phases is the same as after a local run.

    Args:
        steps: the driver's step runner (its store is the run directory).
        models: role -> the driver's client; specs: role -> the recipe workers build it from.
        address: the Ray cluster; None starts a local instance.
        local: runs the phases marked :class:`driver_phase` in this process.
    """

    def __init__(self, steps: StepRunner, models: Mapping[str, Any], specs: Mapping[str, ModelSpec],
                 address: str | None, local: LocalExecutor | None = None) -> None:
        self.steps = steps
        self.local = local or LocalExecutor()
        self.models = dict(models)
        self.specs = dict(specs)
        self.address = address

    async def run_phases(self, items: Sequence[Any], phases: Sequence[Phase], *, progress: bool) -> None:
        """Each phase over ``items`` on Ray, in order.

        Raises:
            UserError: Ray missing or unreachable; a phase function that cannot be pickled.
            ray.exceptions.RayError: a task failed beyond its retries (what returned is written).
        """
        ray_init(self.address)
        step_options = {"max_attempts": self.steps.max_attempts,
                        "max_prompt_tokens": self.steps.max_prompt_tokens}
        for name, fn in phases:
            if getattr(fn, "on_driver", False):
                await self.local.run_phases(items, [(name, fn)], progress=progress)
                continue
            try:
                unit = BoundUnit(fn, self.steps.store, self.steps, self.models)
            except (pickle.PicklingError, TypeError, AttributeError) as exc:
                raise UserError(f"--runner ray: phase {name!r} cannot be sent to Ray workers ({exc}); "
                                "run it with --runner local") from None
            outcome = await asyncio.to_thread(
                run_phase_ray, unit, list(items), self.steps.store, models=self.specs,
                item_id=lambda item: str(item.id), address=self.address, step_options=step_options,
            )
            for unit_dict in outcome.failures:
                failed = FailedUnit(**unit_dict)
                self.steps.fail(failed.step, failed.instance_id, failed.key, failed.error,
                                skipped=failed.status == "skipped")
            for role, counters in outcome.stats.items():
                _add_stats(self.models.get(role), counters)
            # replay on the driver: every unit is recorded now, so no model is asked, and the
            # per-instance state a benchmark derives from its records (ResearchBench's rankings)
            # is rebuilt here; a unit that failed on its worker is asked once more
            await self.local.run_phases(items, [(name, fn)], progress=False)


def _add_stats(client: Any, counters: Mapping[str, Any] | None) -> None:
    stats = getattr(client, "stats", None)
    if stats is None or not counters:
        return
    for key, value in counters.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not hasattr(stats, key):
            continue
        current = getattr(stats, key)
        setattr(stats, key, value if current is None else current + value)


def install_executor(steps: StepRunner, options: ExecutionOptions, models: dict[str, Any],
                     roles: Mapping[str, str], run_dir: Path, given: Sequence[str] = ()) -> dict[str, Any]:
    """Put the executor ``options`` ask for on ``steps``; returns the models the run should use
    (wrapped for batch collection with ``--batch``).

    Raises:
        UserError: ``--batch`` without the cache; ``--runner ray`` with clients given in Python
            (workers build theirs from model strings).
    """
    local = steps.executor if isinstance(steps.executor, LocalExecutor) else LocalExecutor()
    if options.batch:
        models = batch_models(models)
        settings = BatchSettings(poll_interval_s=options.batch_poll, max_rounds=BATCH_ROUNDS)
        steps.executor = BatchExecutor(run_dir, settings, local)
    elif options.runner == "ray":
        if given:
            raise UserError(f"--runner ray builds the clients on the workers from model strings; "
                            f"clients given in Python ({', '.join(sorted(given))}) cannot be sent")
        steps.executor = RayExecutor(steps, models, model_specs(roles, options), options.ray_address, local)
    return models
