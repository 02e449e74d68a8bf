"""The one runner every benchmark runs through.

:func:`arun_benchmark` selects the items (``--shard`` first, then ``--limit``), builds the models
the benchmark uses through the provider registry, opens (and locks) the run directory, runs the
benchmark's phases, then — also when the run aborts on an error, Ctrl-C or SIGTERM — aggregates,
asks the benchmark for its per-instance scores (:meth:`~ideaharness.runner.protocol.Benchmark.scores`,
written to ``scores.jsonl``), adds the common blocks of ``results.json`` (:func:`common_blocks`:
every headline number computed from those scores through its
:class:`~ideaharness.runner.protocol.MetricSpec`, :func:`headline_values`), calls the result
enrichers and writes ``results.json`` and ``report.html``.

Exit statuses (README, docs/runs.md): 0 complete, 1 usage/input/storage error, 3 partial run,
130 Ctrl-C, 143 SIGTERM; everything finished is on disk in every case and a re-run resumes.

A metric with no scored unit is not a result (:func:`uncomputed_metrics`): whatever the
benchmark, a run in which a headline metric has ``n = 0`` (or no value) is partial, and the first
line of the console output and of ``report.html`` names those metrics and why (e.g.
"decompose: 5/5 judgments unparsed").
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ideaharness.cutoff import CUTOFF_STEP, CutoffEntry
from ideaharness.errors import PartialRunError, Terminated, UserError
from ideaharness.metrics.aggregate import OUT_OF_RANGE, IntervalSettings, too_few_units
from ideaharness.metrics.evidence import evidence_block, evidence_lines, evidence_table, qualifying_notes
from ideaharness.redaction import redact
from ideaharness.report.html import Table, write_report
from ideaharness.runner.arguments import RunArguments
from ideaharness.runner.executors import install_executor
from ideaharness.runner.models import build_models, run_budget
from ideaharness.runner.options import ExecutionOptions
from ideaharness.runner.protocol import SELECTION_ORDER, Benchmark, MetricSpec, MetricValue, RunContext
from ideaharness.runner.provenance import RunProvenance
from ideaharness.runner.registry import enrichers, metrics
from ideaharness.runner.sources import (
    CaptureClient,
    check_ideas_files,
    config_defaults,
    coverage_block,
    extras_line,
    idea_sources_block,
    identity_inputs,
    is_generator_role,
)
from ideaharness.runner.steps import (
    FILE_FIX,
    LocalExecutor,
    StepRunner,
    UnparsedUnit,
    parse_failure,
    unparsed_note,
)
from ideaharness.runner.timing import RunClock, TimedExecutor
from ideaharness.runs.inputs import INPUTS_KEY
from ideaharness.runs.scores import Score, scored_records, summarise_scores, write_scores
from ideaharness.runs.store import CONFIG_FILE, RunStore, shard_of

if TYPE_CHECKING:
    from ideaharness.llm.budget import RunBudget


def select_items(items: Sequence[Any], options: ExecutionOptions) -> list[Any]:
    """The items a run works on: ``--shard i/N`` keeps those with ``sha256(key) mod N == i``, where
    the key is the item's ``shard_key`` when it has one (items that must share a shard, e.g. every
    system's ideas on one LigBench topic, so a task exported for one system is in the same shard
    for another) and its ``id`` otherwise; then ``--limit K`` keeps the first K of them (data
    order). Shard i of a limited run is therefore a subset of the unlimited shard i, and shards
    never overlap."""
    kept = list(items)
    if options.shard is not None:
        index, count = options.shard
        kept = [item for item in kept
                if shard_of(str(getattr(item, "shard_key", None) or item.id), count) == index]
    if options.limit is not None:
        kept = kept[: options.limit]
    return kept


def default_out(name: str) -> Path:
    """The run directory when ``--out`` is not given: ``runs/<benchmark>``."""
    return Path("runs") / name


async def arun_benchmark(
    bench_cls: type[Benchmark], args: RunArguments, *, handle_sigterm: bool = False,
    capture: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Run (or resume) one benchmark; returns the results dict also written to ``results.json``.

    Args:
        handle_sigterm: treat SIGTERM like Ctrl-C (stop, keep records, write results and report)
            and raise :class:`~ideaharness.errors.Terminated` (exit 143). Main thread only.
        capture: capture mode (``ideaharness tasks export``): the generators are not built (never
            asked), :attr:`StepRunner.capture` is this list and every generation task is appended
            to it; the phases before generation run and are recorded as usual; no results or
            report are written. Returns ``{"tasks": n, **StepRunner.outcome()}`` (the failed units
            of the phases before generation).

    Raises:
        UserError: no items to run, bad models, a run directory that cannot be used.
        Terminated: SIGTERM arrived (with ``handle_sigterm``); KeyboardInterrupt: Ctrl-C.
    """
    terminated: list[bool] = []
    loop = asyncio.get_running_loop()
    installed = False
    if handle_sigterm:
        task = asyncio.current_task()

        def on_sigterm() -> None:
            terminated.append(True)
            if task is not None:
                task.cancel()

        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGTERM, on_sigterm)
            installed = True
    try:
        return await _run(bench_cls, args, terminated, capture)
    except asyncio.CancelledError:
        if terminated:
            raise Terminated() from None
        raise
    finally:
        if installed:
            loop.remove_signal_handler(signal.SIGTERM)


async def _run(bench_cls: type[Benchmark], args: RunArguments, terminated: list[bool],
               capture: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    clock = RunClock()  # timing.json: where the run's wall time went (runner.timing)
    check_device(args.options)  # a bad --device ends the run before anything is read or written
    bench = bench_cls(args.config, **args.extras)
    bench.run_options = args.options  # a load() that embeds its data uses the run's embedding store
    available, cutoff_entries = cutoff_items(bench, list(bench.load()))
    items = select_items(available, args.options)
    if not items:
        raise UserError(f"{bench_cls.name}: no {bench_cls.item_noun} to run (data has {len(available)}; "
                        f"--shard {_shard_text(args.options)}, --limit {args.options.limit})")
    clock.mark("selected")
    roles = bench.model_roles()
    given = {r: m for r, m in args.models.items() if r in roles}
    if capture is not None:  # the generators are never asked: not built (no weights, no key, no agent)
        given.update({r: CaptureClient(m) for r, m in roles.items() if is_generator_role(r)})
    check_ideas_files(bench_cls.name, roles, given)  # foreign or duplicate answers: before any folder
    out = args.options.out or default_out(bench_cls.name)
    budget = None if capture is not None else run_budget(args.options, out, roles)
    models = build_models(roles, args.options, given, parity=bool(getattr(args.config, "parity", False)),
                          budget=budget)
    store = RunStore(out, args.config.model_dump(mode="json"), identity_keys=bench.identity_keys(),
                     inputs=identity_inputs(bench.input_files(), args.config, roles),
                     force=args.options.force, defaults=config_defaults(args.config),
                     provenance=RunProvenance.of(bench_cls, rejudge=args.options.rejudge_changed))
    store.track_usage(models)
    steps = StepRunner(store, max_attempts=args.options.max_attempts, progress=args.options.progress,
                       max_prompt_tokens=getattr(args.config, "max_prompt_tokens", None),
                       max_in_flight=2 * args.options.max_concurrency)
    if isinstance(steps.executor, LocalExecutor):  # the progress bar's text: tokens, cost, budget
        steps.executor.status = progress_status(models, budget)
    models = install_executor(steps, args.options, models, roles, Path(out), given=list(given))
    steps.executor = TimedExecutor(steps.executor, clock)
    ctx = RunContext(config=args.config, options=args.options, store=store, steps=steps, models=models,
                     extras=args.extras, out=Path(out))
    if capture is not None:
        steps.capture = capture
        with store:
            await record_cutoff_entries(store, cutoff_entries, items, args.options)
            try:
                await bench.setup(ctx)
                await bench.execute(ctx, items)
                await store.drain()
            finally:
                await bench.aclose(ctx)
        return {"tasks": len(capture), **steps.outcome()}
    ended = "complete"
    set_up = False
    with store:
        await record_cutoff_entries(store, cutoff_entries, items, args.options)
        try:
            await bench.setup(ctx)
            set_up = True
            clock.mark("ready")
            await bench.execute(ctx, items)
            await steps.run_reasks(args.options.consistency_sample,  # --consistency-sample
                                   seed=int(getattr(args.config, "seed", 0)))
            clock.mark("executed")
        except asyncio.CancelledError:
            ended = "terminated (SIGTERM)" if terminated else "interrupted (Ctrl-C)"
            raise
        except KeyboardInterrupt:
            ended = "interrupted (Ctrl-C)"
            raise
        except BaseException as exc:
            ended = f"stopped by an error: {redact(exc)}"
            raise
        finally:
            if set_up:
                results = await _finish(bench, ctx, items, available, ended, budget, clock)
            else:  # setup failed: nothing of this run to aggregate (its attributes may be unset)
                await _close_after_failed_setup(bench, ctx)
    return results


async def _close_after_failed_setup(bench: Benchmark, ctx: RunContext) -> None:
    """:meth:`Benchmark.aclose` after a setup that raised; a failure here goes to stderr and never
    hides the setup's own exception."""
    try:
        await bench.aclose(ctx)
    except Exception as exc:  # noqa: BLE001 (the setup's error is the one the user must see)
        print(f"warning: closing after the failed setup: {redact(exc)}", file=sys.stderr)


def check_device(options: ExecutionOptions) -> None:
    """Check ``--device`` before the run reads data or makes its folder (torch imported unless cpu).
    Raises UserError: ``cuda`` and torch sees no CUDA device, or an unknown value (one line)."""
    if str(options.device).strip().lower() != "cpu":
        from ideaharness.metrics.embedding_store import resolve_device

        resolve_device(options.device)


def cutoff_items(bench: Benchmark, loaded: list[Any]) -> tuple[list[Any], list[CutoffEntry]]:
    """The loaded items under the run's knowledge cutoff (``--cutoff``, :meth:`Benchmark.apply_cutoff`)
    and the record of what it filtered (:data:`~ideaharness.cutoff.CutoffEntry`).

    Raises:
        UserError: the cutoff left no item (naming it and how many it excluded).
    """
    run_cutoff = getattr(bench.config, "cutoff", None)
    kept, entries = bench.apply_cutoff(loaded, run_cutoff)
    if loaded and not kept:
        raise UserError(f"{bench.name}: --cutoff {run_cutoff}: every one of the {len(loaded)} "
                        f"{bench.item_noun} is dated after the cutoff; give a later --cutoff")
    return kept, entries


async def record_cutoff_entries(store: RunStore, entries: Sequence[CutoffEntry], items: Sequence[Any],
                                options: ExecutionOptions) -> None:
    """Write the ``cutoff`` records of the selected items (and of the items the cutoff left out of
    this shard), once: they are a function of the data and the config, so a resume finds them.
    They are written as one group (one write and one fsync, :meth:`RunStore.aput`), not with an
    fsync per record.

    Raises:
        StorageError: the records cannot be written.
    """
    selected = {str(getattr(i, "id", i)) for i in items}
    dropped = {iid for iid, _, data in entries if data.get("item_excluded")}
    todo = [(iid, key, data) for iid, key, data in entries
            if (iid in selected or (iid in dropped and (
                options.shard is None or shard_of(iid, options.shard[1]) == options.shard[0])))
            and not store.has(CUTOFF_STEP, iid, key)]
    await asyncio.gather(*(store.aput(CUTOFF_STEP, iid, data, key) for iid, key, data in todo))


def progress_status(models: dict[str, Any], budget: RunBudget | None) -> Callable[[], str]:
    """The text after each progress bar: the budget's (tokens and cost spent over the run, of the
    limits) when the run has one, else the tokens and cost this process's clients spent."""
    clients = list({id(m): m for m in models.values()}.values())

    def status() -> str:
        if budget is not None:
            return budget.status_text()
        stats = [s for s in (getattr(m, "stats", None) for m in clients) if s is not None]
        tokens = sum(int(getattr(s, "prompt_tokens", 0) or 0) + int(getattr(s, "completion_tokens", 0) or 0)
                     for s in stats)
        costs = [c for c in (getattr(s, "cost_usd", None) for s in stats) if isinstance(c, int | float)]
        return f"tokens {tokens:,}" + (f" · ${sum(costs):.4f}" if costs else "")

    return status


def _shard_text(options: ExecutionOptions) -> str:
    return f"{options.shard[0]}/{options.shard[1]}" if options.shard else "none"


async def _finish(bench: Benchmark, ctx: RunContext, items: list[Any], available: list[Any],
                  ended: str, budget: RunBudget | None = None,
                  clock: RunClock | None = None) -> dict[str, Any]:
    """Aggregate, enrich, write results.json and report.html (then ``timing.json``). After an abort
    a failure here is reported on stderr and never hides the abort's own exception."""
    aborted = ended != "complete"
    results: dict[str, Any] = {}
    try:
        await ctx.store.drain()  # records of units cancelled mid-write are on disk: index them too
        results = bench.aggregate(ctx, items)
        results["selection"] = selection_block(ctx, items, available)
        scores = run_scores(bench, ctx, results)
        write_scores(ctx.out, scores)
        results.update(common_blocks(bench, ctx, items, available, results, ended, scores))
        if budget is not None:
            results["budget"] = budget_block(budget, results)
            if results["budget"]["line"]:
                results["notes"].insert(0, results["budget"]["line"])
        results["form_baselines"] = form_baselines(bench, ctx, results)  # issue 32 (b): blindness
        for enrich in [*enrichers(), *bench.enrichers]:
            enrich(ctx, results)
        results["evidence"] = run_evidence(results)  # issue 32: each headline evidence, weak or not
        ctx.store.write_results(results, block_class=bench.results_class)  # typed (ideaharness.results)
        if clock is not None:
            clock.mark("results_written")
        write_run_report(bench, ctx, items, results)
        if clock is not None:
            clock.mark("report_written")
            clock.write(ctx.out)
    except Exception as exc:
        if not aborted:
            raise
        print(f"warning: results/report after the abort not written: {redact(exc)}", file=sys.stderr)
    finally:
        await bench.aclose(ctx)
    return results


def run_evidence(results: dict[str, Any]) -> dict[str, Any]:
    """``results["evidence"]``: one verdict per headline value (evidence, weak, not evidence, with
    reasons) from the run's coverage, form baselines, n and interval and reliability flags
    (:func:`ideaharness.metrics.evidence.evidence_block`), the directions, inputs and judged steps
    (``MetricSpec.judged_by``) of the registered metrics given as data."""
    specs = metrics()
    return evidence_block(results, {name: spec.higher_is_better for name, spec in specs.items()},
                          {name: spec.inputs for name, spec in specs.items() if spec.inputs},
                          {name: spec.judged_by for name, spec in specs.items()})


def budget_units(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The units a run left undone for its budget (``failed_units`` with status "budget")."""
    units = results.get("failed_units") or []
    return [u for u in units if isinstance(u, dict) and u.get("status") == "budget"]


def budget_line(n_units: int) -> str:
    """The line saying a run stopped at its budget (console, notes, report)."""
    return (f"budget reached: {n_units} unit(s) not started; run again with a larger --max-cost (or "
            "--max-tokens) to resume")


def budget_block(budget: RunBudget, results: dict[str, Any]) -> dict[str, Any]:
    """``budget`` of results.json: :meth:`RunBudget.summary` (limits, spent over every process
    and in this one, calls admitted and refused, the estimate rule), ``units_left`` (the units not
    started for the budget) and ``line`` (:func:`budget_line`, or None when none was left)."""
    left = len(budget_units(results))
    return {**budget.summary(), "units_left": left, "line": budget_line(left) if left else None}


def selection_block(ctx: RunContext, items: Sequence[Any], available: Sequence[Any]) -> dict[str, Any]:
    """``selection`` of results.json: order, shard, limit, counts and the selected item ids (what
    the headline covers)."""
    return {"order": SELECTION_ORDER, "shard": ctx.options.shard, "limit": ctx.options.limit,
            "selected": len(items), "available": len(available),
            "ids": [str(getattr(i, "id", i)) for i in items]}


def run_scores(bench: Benchmark, ctx: RunContext, results: dict[str, Any]) -> list[Score]:
    """The benchmark's per-instance scores of this run: :meth:`Benchmark.scores` over every record
    but the consistency re-asks (``results["selection"]`` names the selected instances)."""
    return list(bench.scores(scored_records(ctx.store.all_records()), results))


def form_baselines(bench: Benchmark, ctx: RunContext, results: dict[str, Any]) -> list[dict[str, Any]]:
    """``form_baselines`` of results.json: :meth:`Benchmark.form_baselines` over every record but
    the consistency re-asks, with the prompts the run kept (no model call)."""
    return list(bench.form_baselines(scored_records(ctx.store.all_records()), results, ctx.store.prompt))


def interval_settings(config: Any) -> IntervalSettings:
    """The run's interval settings: its ``bootstrap_resamples`` (default 2000) and ``seed``."""
    return IntervalSettings(n_resamples=int(getattr(config, "bootstrap_resamples", 2000) or 2000),
                            seed=int(getattr(config, "seed", 0) or 0))


def headline_values(bench: Benchmark, results: dict[str, Any], scores: Sequence[Score],
                    settings: IntervalSettings) -> list[MetricValue]:
    """Every headline value of a run: each metric of its scores computed from them through its
    registered :class:`MetricSpec` (value, interval, n, why; an unregistered name is a mean), per
    (system, group), then each registered metric over several inputs that the scores give;
    plus :meth:`Benchmark.headline` for the metrics that are not aggregates of per-instance
    scores (those are not computed from scores)."""
    given = bench.headline(results)
    skip = {(m.metric, m.group, m.system) for m in given}
    registered = metrics()
    own = list(dict.fromkeys(s.metric for s in scores))
    specs = [registered.get(name) or MetricSpec(name, higher_is_better=True) for name in own]
    specs += [spec for spec in registered.values() if spec.inputs and any(i in own for i in spec.inputs)]
    values = [MetricValue(metric=name, group=group, system=system, value=summary.value, ci=summary.ci,
                          n=summary.n, why=summary.why, ci_why=summary.ci_why)
              for name, (system, group), summary in summarise_scores(scores, specs, settings, skip)]
    return values + [_interval_rule(m) for m in given]


def _interval_rule(value: MetricValue) -> MetricValue:
    """A value :meth:`Benchmark.headline` gives under the one interval rule: below
    ``MIN_INTERVAL_N`` units its interval is withheld, with the reason (``ci_why``)."""
    why = too_few_units(value.n) if value.value is not None and value.n is not None else None
    return value.model_copy(update={"ci": None, "ci_why": why}) if why else value


def common_blocks(bench: Benchmark, ctx: RunContext, items: Sequence[Any], available: Sequence[Any],
                  results: dict[str, Any], ended: str, scores: Sequence[Score] = ()) -> dict[str, Any]:
    """The blocks every ``results.json`` carries, whatever the benchmark.

    Returns:
        ``benchmark``, ``benchmark_version``, ``settings`` (``config``, ``execution`` and
        ``models``: role -> the model actually called, which a client passed to
        :func:`ideaharness.arun` may set apart from the config's model string),
        ``seeds``, ``selection`` (order, shard, limit, counts, the selected item ids),
        ``status``/``failed_units``/
        truncation counts (:meth:`StepRunner.outcome`; "partial" also after an abort),
        ``ended`` ("complete" or why the run stopped), ``notes``, ``metrics`` (the registered
        headline metrics) and ``not_computed`` (:func:`uncomputed_metrics`; None when every metric
        has scored units), ``idea_sources`` (every generator-like role: model or system, with its
        answers asked / missing / failed / extra; :mod:`ideaharness.runner.sources`),
        ``coverage`` (per such role: asked, answered, failed instances and rate;
        :func:`~ideaharness.runner.sources.coverage_block`). ``llm_stats`` and
        ``cost_usd`` are added when the file is written.
        ``metrics`` come from ``scores`` (:func:`headline_values`).
    """
    outcome = ctx.steps.outcome()
    if ended != "complete":
        outcome["status"] = "partial"
    config = ctx.config.model_dump(mode="json")
    notes = ctx.steps.notes() + bench.notes(ctx, results)
    if ended != "complete":
        notes.insert(0, f"the run was {ended}; finished work is saved and the same command resumes")
    metric_values = [m.model_dump(mode="json", exclude=_unset(m))
                     for m in headline_values(bench, results, scores, interval_settings(ctx.config))]
    notes += [f"{m['metric']}{' (' + m['group'] + ')' if m.get('group') else ''}: {m['ci_why']}"
              for m in metric_values if OUT_OF_RANGE in (m.get("ci_why") or "")]  # a wrong range: said
    missing = uncomputed_metrics(metric_values, ctx, items, expected=expected_metrics(bench))
    if missing is not None:
        outcome["status"] = "partial"
        notes.insert(0, missing["line"])
    blocks = {
        "benchmark": bench.name,
        "benchmark_version": bench.version,
        "settings": {"config": config, "execution": ctx.options.model_dump(mode="json"),
                     "models": {role: str(getattr(m, "model", type(m).__name__))
                                for role, m in ctx.models.items()},
                     "input_sha256": _input_hashes(ctx.out)},
        "seeds": {k: v for k, v in config.items() if k == "seed" or k.endswith("_seed")},
        "selection": selection_block(ctx, items, available),  # what the headline covers
        **outcome,
        "ended": ended,
        "notes": notes,
        "metrics": metric_values,
        "not_computed": missing,
    }
    sources = idea_sources_block(bench, ctx, available, items)
    blocks["coverage"] = coverage_block(sources)  # per system: answered / asked ([] without generation)
    if sources:  # where the ideas came from: models and systems (runner.sources)
        blocks["idea_sources"] = sources
        extra = extras_line(sources)
        if extra:
            notes.append(extra)
    summary = getattr(ctx.steps.executor, "summary", None)
    if summary is not None:  # --batch: what went through the Batch API (runner.executors)
        blocks["batch"] = summary()
    return blocks


def _unset(value: MetricValue) -> set[str]:
    """The optional fields a headline value leaves out of results.json when unset."""
    return {k for k in ("why", "system", "ci_why") if getattr(value, k) is None}


def _not_computed(metric: dict[str, Any]) -> bool:
    return metric.get("value") is None or metric.get("n") == 0


def expected_metrics(bench: Benchmark) -> list[str]:
    """The headline metrics a run of ``bench`` must produce: :meth:`Benchmark.expected_metrics`,
    or by default every registered metric named ``<bench.name>.<metric>`` without ``inputs`` (a
    metric over other metrics' scores, e.g. a leaderboard average, is produced only where they are)."""
    own = bench.expected_metrics()
    if own is not None:
        return list(own)
    return [name for name, spec in metrics().items() if name.startswith(f"{bench.name}.") and not spec.inputs]


def uncomputed_metrics(values: Sequence[dict[str, Any]], ctx: RunContext,
                       items: Sequence[Any], expected: Sequence[str] = ()) -> dict[str, Any] | None:
    """The headline metrics a run could not compute, and why; None when every one has a value.

    A metric value is not computed when it has ``n == 0`` scored units or no value at all; so is
    each of ``expected`` (:func:`expected_metrics`) that has no value at all, not even a row with
    n = 0 (a run whose every unit failed before any score, e.g. LigBench with no idea parsed). The
    reasons are read from the run, whatever the benchmark: per step, the judgments (or generations)
    of the selected items whose replies did not parse (``"decompose: 5/5 judgments unparsed"``)
    and the units that failed (``"i2t: 2 unit(s) failed"``).

    Returns:
        ``{"metrics": [{metric, group, n}], "why": [str], "line": str}``; ``line`` is the first
        line of the console output and of the report.
    """
    missing = [{"metric": m["metric"], "group": "/".join(g for g in (m.get("system"), m.get("group")) if g),
                "n": m.get("n"), "why": m.get("why")} for m in values if _not_computed(m)]
    present = {m["metric"] for m in values}
    missing += [{"metric": name, "group": "", "n": None, "why": None}
                for name in dict.fromkeys(expected) if name not in present]
    if not missing:
        return None
    by_reason: dict[str, list[str]] = {}  # one reason shared by several metrics is said once
    for m in missing:
        if m["why"] and m["metric"] not in by_reason.setdefault(m["why"], []):
            by_reason[m["why"]].append(m["metric"])
    own = sorted(f"{owners[0]}: {reason}" if len(owners) == 1 else f"{reason} (metrics {', '.join(owners)})"
                 for reason, owners in by_reason.items())
    ids = {str(getattr(item, "id", "")) for item in items}
    unparsed: dict[str, set[tuple[str, str]]] = {}
    for unit in ctx.steps.unparsed.values():
        if unit.instance_id in ids:
            unparsed.setdefault(unit.step, set()).add((unit.instance_id, unit.key))
    why = []
    for step, units in sorted(unparsed.items()):
        total = sum(1 for _, inst, _, data in ctx.store.iter_records(step)
                    if inst in ids and isinstance(data, dict) and "judgment" in data)
        example = next(u for u in ctx.steps.unparsed.values() if u.step == step)
        what = "generations" if example.generation else "judgments"
        why.append(f"{_step_name(step)}: {len(units)}/{max(total, len(units))} {what} unparsed "
                   f"(e.g. {_short(example.error)})")
    failed: dict[str, list[str]] = {}
    for failure in ctx.steps.failures.values():
        if parse_failure(failure):  # said above, with the unparsed replies of its step
            continue
        failed.setdefault(failure.step, []).append(failure.error)
    for step, errors in sorted(failed.items()):
        why.append(f"{_step_name(step)}: {len(errors)} unit(s) failed ({_short(errors[-1])})")
    if own:  # the benchmark's own reason (too few keywords for a percentile, …) comes first
        why = own + why
    if not why:
        why.append("no unit of the run produced a value for them (see the notes)")
    names: dict[str, list[str]] = {}
    for m in missing:
        names.setdefault(m["metric"], []).append(m["group"])
    shown = "; ".join(f"{name} ({', '.join(g for g in groups if g)})" if any(groups) else name
                      for name, groups in names.items())
    line = f"NOT COMPUTED: {shown} -- {'; '.join(why)}"
    return {"metrics": missing, "why": why, "line": line}


def _step_name(step: str) -> str:
    return step.rsplit("/", 1)[-1] if "/" in step else step


def _short(text: str, limit: int = 160) -> str:
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def _input_hashes(out: Path) -> dict[str, Any]:
    """The sha256 of the files the run read, as recorded in its config.json ({} if unreadable)."""
    try:
        recorded = json.loads((out / CONFIG_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    hashes = recorded.get(INPUTS_KEY) if isinstance(recorded, dict) else None
    return hashes if isinstance(hashes, dict) else {}


def usage_table(results: dict[str, Any], models: dict[str, Any]) -> Table:
    """Calls, failures, tokens, wall time and cost per client over every process of the run (cost
    needs ``--price``). A client that plays several roles (the same model as generator and judge)
    is one row credited to all of them (``generator+judge``); a system's row shows its kind."""
    from ideaharness.systems.spec import system_kind

    stats_of = results.get("llm_stats") or {}
    rows = []
    for role, stats in stats_of.items():
        if not stats:
            continue
        client = models.get(role)
        sharing = [r for r, m in models.items() if client is not None and m is client
                   and r != role and not stats_of.get(r)]
        label = "+".join([role, *sharing])
        model = str(getattr(client, "model", ""))
        kind = system_kind(model) if model else ""
        wall = stats.get("wall_s")
        rows.append([label, model if kind == "model" else f"{model} ({kind})", stats.get("calls"),
                     stats.get("failures"), stats.get("cache_hits"), stats.get("prompt_tokens"),
                     stats.get("cached_prompt_tokens") or 0, stats.get("completion_tokens"),
                     stats.get("reasoning_tokens") or 0,
                     round(wall, 2) if isinstance(wall, int | float) else None, stats.get("cost_usd")])
    cost = results.get("cost_usd")
    return Table(title="Model usage (all processes of this run)",
                 columns=["role", "model", "calls", "failures", "cache hits", "prompt tokens",
                          "of which cached", "completion tokens", "of which reasoning", "wall s",
                          "cost USD"], rows=rows,
                 note=f"total cost USD {cost:.6f} (every recorded token at --price: uncached prompt tokens "
                 "at IN, cached at CACHED_IN (default IN), completion tokens, reasoning included, at OUT)"
                 if cost is not None
                 else "cost: give --price IN,OUT (every role) or --price ROLE=IN,OUT")


def metrics_table(results: dict[str, Any]) -> Table:
    """The registered headline metrics of the run with their intervals and direction."""
    specs = metrics()
    rows = []
    for m in results.get("metrics") or []:
        spec = specs.get(m["metric"])
        group = "/".join(g for g in (m.get("system"), m.get("group")) if g)
        rows.append([m["metric"], group, m["value"], m["ci"] or m.get("ci_why"), m["n"],
                     ("higher" if spec.higher_is_better else "lower") if spec else None,
                     spec.ci if spec else None])
    return Table(title="Headline metrics", columns=["metric", "group", "value", "95% CI", "n", "better",
                                                    "interval"], rows=rows)


def write_run_report(bench: Benchmark, ctx: RunContext, items: Sequence[Any], results: dict[str,
                                                                                            Any]) -> Path:
    """Write ``report.html``: the benchmark's tables and figures, headline metrics, model usage,
    notes, examples and the settings; returns its path."""
    tables = [*bench.tables(results)]
    if results.get("metrics"):
        tables.append(metrics_table(results))
    from ideaharness.runner.reliability import reliability_table

    reliability = reliability_table(results)
    if reliability is not None:
        tables.append(reliability)
    from ideaharness.runner.leakage import leakage_table

    leakage = leakage_table(results)
    if leakage is not None:
        tables.append(leakage)
    tables.append(usage_table(results, ctx.models))
    return write_report(
        ctx.out / "report.html", title=bench.title or bench.name, config=results["settings"],
        tables=tables, figures=bench.figures(ctx, results), notes=results.get("notes", []),
        sections=bench.sections(ctx, items, results), banner=banner_line(results),
        evidence=evidence_table(results, results.get("evidence") or run_evidence(results)),
    )


def banner_line(results: dict[str, Any]) -> str | None:
    """The line that opens the console output and the report of a run whose headline is not a
    result (:func:`uncomputed_metrics`), else None."""
    missing = results.get("not_computed")
    return missing.get("line") if isinstance(missing, dict) else None


def evidence_console_lines(results: dict[str, Any], already: Sequence[str | None] = ()) -> list[str]:
    """What the console says after the tables and the reliability block and before the report
    path and the run's status: one line per headline value that is not evidence, with its
    reasons (one summary line when all are; :func:`ideaharness.metrics.evidence.evidence_lines`),
    then every note of ``results["notes"]`` (rewrite drops, "not blind", unparsed counts, …), one
    line each, less the lines in ``already`` (printed elsewhere: the banner, the unparsed note)."""
    block = results.get("evidence")
    if not isinstance(block, dict):
        block = run_evidence(results)  # results written before the block existed
    return evidence_lines(block) + [f"note: {n}" for n in qualifying_notes(results, already)]


def finish_run(results: dict[str, Any], out: Path) -> None:
    """Print the judgments that did not parse (with their parse errors) and the report path; exit 3
    (partial run) with one line when units failed or were skipped, or a headline metric has no
    scored unit (``not_computed``, named first in that line).

    Failed units are listed in results.json (``failed_units``: step, instance, last error) and
    left undone, so re-running the same command retries them; a judgment that did not parse is
    re-asked with new samples while rounds are left (:data:`~ideaharness.runner.steps.MAX_PARSE_ROUNDS`).

    Raises:
        PartialRunError: ``results["status"]`` is "partial".
    """
    unparsed = [u for u in results.get("unparsed_units") or [] if isinstance(u, dict)]
    if unparsed:  # every parse error is shown where the failure is reported
        print(unparsed_note([UnparsedUnit.model_validate(u) for u in unparsed]))
    extra = extras_line(results.get("idea_sources") or [])
    if extra:
        print(extra)
    rejudged = results.get("rejudged")
    if isinstance(rejudged, dict) and rejudged.get("line"):  # --rejudge-changed: how many, of which steps
        print(rejudged["line"])
    printed = [unparsed_note([UnparsedUnit.model_validate(u) for u in unparsed]) if unparsed else "", extra,
               (rejudged or {}).get("line") if isinstance(rejudged, dict) else "", banner_line(results) or ""]
    for line in evidence_console_lines(results, already=printed):  # issue 32: verdicts, then notes
        print(line)
    print(f"report: {out / 'report.html'}")
    units = results.get("failed_units") or []
    left = budget_units(results)
    if left:
        print(budget_line(len(left)))
    units = [u for u in units if u.get("status") != "budget"]
    if results.get("status") == "partial" or units or left:
        failed = sum(1 for u in units if u.get("status") != "skipped")
        skipped = len(units) - failed
        parts = []
        if left:
            parts.append(budget_line(len(left)))
        if units or not (results.get("not_computed") or left):
            parts.append(f"{failed} unit(s) failed after retries and {skipped} skipped (listed under "
                         f"'failed_units' in {out / 'results.json'})")
        missing = results.get("not_computed")
        if isinstance(missing, dict):
            parts.append(missing["line"])
        advice = retry_advice(units, unparsed, missing, left)
        raise PartialRunError(f"partial run: {'; '.join(parts)}; {advice}")


def retry_advice(units: Sequence[dict[str, Any]], unparsed: Sequence[dict[str, Any]], missing: Any,
                 left: Sequence[dict[str, Any]]) -> str:
    """What the closing line of a partial run advises: run the same command again for failed calls
    and for replies that did not parse while re-ask rounds are left; another judge or generator
    once the rounds are spent; :data:`~ideaharness.runner.steps.FILE_FIX` for answers read from an
    ideas file (the same file gives the same answer) and for answers missing from one (failed units
    with ``source`` "file": running again finds them missing again); nothing to retry when no unit
    failed."""
    from_file = [u for u in unparsed if u.get("source") == "file"]
    keys = {(u.get("step"), u.get("instance_id"), u.get("key") or "") for u in unparsed}
    absent = [u for u in units if u.get("source") == "file"
              and (u.get("step"), u.get("instance_id"), u.get("key") or "") not in keys]
    calls = [u for u in units if (u.get("step"), u.get("instance_id"), u.get("key") or "") not in keys
             and u.get("source") != "file"]
    model = [u for u in unparsed if u.get("source") != "file"]
    if isinstance(missing, dict) and not (units or unparsed or left):  # skipped by the data or cutoff
        return "no unit failed, so running the same command again gives the same: see why above"
    advice = []
    if calls or left:
        advice.append("run the same command again to retry them")
    if model:
        open_units = [u for u in model if not u.get("final")]
        if open_units:
            advice.append("run the same command again to re-ask them with new samples" if not calls
                          else f"it also re-asks the {len(open_units)} repl(ies) that did not parse")
        else:
            who = ("generator or judge" if any(u.get("generation") for u in model)
                   and not all(u.get("generation") for u in model)
                   else "generator" if any(u.get("generation") for u in model) else "judge")
            advice.append(f"re-asking is spent (every unparsed reply was asked in "
                          f"{max(int(u.get('rounds') or 1) for u in model)} rounds of samples): try another "
                          f"{who} or other {who} settings")
    if from_file:  # an answer read from an ideas file is the file's: asking again gives it again
        advice.append(f"{len(from_file)} answer(s) read from a file cannot be re-asked: {FILE_FIX}")
    if absent:  # an answer the file lacks: the same file lacks it again
        advice.append(f"{len(absent)} answer(s) missing from the ideas file cannot be retried by running "
                      f"again: add them to the file ({FILE_FIX})")
    return "; ".join(advice) or "run the same command again to retry them"
