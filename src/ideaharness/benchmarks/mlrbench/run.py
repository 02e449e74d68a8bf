"""The MLR-Bench run: an idea per workshop task, a proposal from it, each reviewed on the
published rubric; each unit recorded in the run directory (see the package docstring)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ideaharness.benchmarks.mlrbench import reliability
from ideaharness.benchmarks.mlrbench.aggregate import aggregate_run
from ideaharness.benchmarks.mlrbench.config import BENCHMARK_VERSION, MLRBenchConfig
from ideaharness.benchmarks.mlrbench.contract import generation_task
from ideaharness.benchmarks.mlrbench.parsers import parse_idea, parse_proposal, parse_review
from ideaharness.benchmarks.mlrbench.published import published_model, published_task_ids
from ideaharness.benchmarks.mlrbench.report import example_sections, result_notes, results_tables
from ideaharness.benchmarks.mlrbench.results import MLRBenchResults
from ideaharness.benchmarks.mlrbench.scores import mlrbench_scores, register_metrics
from ideaharness.benchmarks.mlrbench.tasks import Task, select_tasks, task_files, tasks_before
from ideaharness.cutoff import CutoffEntry, LiteratureAccess
from ideaharness.errors import UserError
from ideaharness.metrics.reliability.adapters import Record
from ideaharness.prompts import render
from ideaharness.runner import Benchmark, RunContext
from ideaharness.runner.registry import register_benchmark
from ideaharness.runs.scores import Score
from ideaharness.seeding import derive_seed
from ideaharness.systems.spec import is_system
from ideaharness.tables import Section, Table

register_metrics()

_TEXT_FIELD = {"idea": "idea", "proposal": "proposal"}


def file_ideas(config: MLRBenchConfig, items: Sequence[Task]) -> dict[str, str]:
    """Task id -> the idea an ``--ideas`` file answers the task's idea stage with, parsed by the
    contract as a run would (``tasks export`` of the proposal tasks); a task the file has no
    parsable idea for is left out (its proposal task is not exported: the run lists it)."""
    import json

    from ideaharness.benchmarks.mlrbench.contract import CONTRACT, from_rows
    from ideaharness.errors import ParseError
    from ideaharness.systems.converters import read_idea_rows
    from ideaharness.systems.spec import split_ideas_spec

    path, fmt = split_ideas_spec(config.generator_role)
    rows: dict[str, list[dict[str, Any]]] = {}
    for row in read_idea_rows(path, fmt):
        rows.setdefault(str(row["instance_id"]), []).append(row)
    out: dict[str, str] = {}
    for task in items:
        if task.id not in rows:
            continue
        asked = generation_task(task.id, "idea", call=task.text, idea=None,
                                seed=derive_seed(config.seed, task.id, "idea") % 2**31)
        answer = {**from_rows(rows[task.id], asked), "instance_id": task.id}
        try:
            out[task.id] = str(CONTRACT.parse(json.dumps(answer), asked)["idea"])
        except ParseError:
            continue
    return out


def answer_model(rec: dict[str, Any] | None) -> str | None:
    """The ``provenance.model`` of a system's answer in a generation record, None when absent."""
    import json

    try:
        answer = json.loads((rec or {})["judgment"]["raw_text"])
    except (KeyError, TypeError, ValueError):
        return None
    model = (answer.get("provenance") or {}).get("model") if isinstance(answer, dict) else None
    return model.strip() if isinstance(model, str) and model.strip() else None


@register_benchmark("mlrbench")
class MLRBench(Benchmark):
    """MLR-Bench idea and proposal stages (see the package docstring); one instance per run."""

    version = BENCHMARK_VERSION
    title = "MLR-Bench results"
    summary = ("Run MLR-Bench (idea and proposal stages): a research idea per workshop task, a proposal "
               "from it, each reviewed by LLM judges on the published 1-10 rubric.")
    config_class = MLRBenchConfig
    item_noun = "tasks"
    results_class = MLRBenchResults
    judgment_adapters = reliability.JUDGMENT_ADAPTERS
    no_gold_steps = {  # no form-only baseline applies (issue 32, Build (b))
        "review/": "1-10 ratings of an idea or proposal per criterion: no gold answer"}
    literature = LiteratureAccess(note="no literature access: the generator reads a workshop call (the "
                                       "published pipeline's literature review is not run); a call dated "
                                       "after --cutoff (by its conference year) is left out of the run")
    consistency_sample = False  # a review shows one text: nothing to reorder

    config: MLRBenchConfig

    @classmethod
    def generator_models(cls, records: Sequence[Record]) -> dict[str, str]:
        """Who wrote the reviewed texts (:func:`.reliability.generator_models`)."""
        return reliability.generator_models(records)

    def model_roles(self) -> dict[str, str]:
        """``generator`` (a model, or a system: ``--ideas FILE`` is ``ideas:FILE``) and one
        ``judge:<model>`` role per judge."""
        return {"generator": self.config.generator_role, **{f"judge:{j}": j for j in self.config.judges()}}

    def system_names(self) -> dict[str, str]:
        """Generator spec -> the system's name in ``idea_sources`` (:meth:`MLRBenchConfig.system_name`:
        ``published:<model>`` as given; also for a client given in place of the configured one)."""
        client = getattr(self, "ctx", None) and self.ctx.models.get("generator")
        specs = {self.config.generator_role, str(getattr(client, "model", "") or "")}
        return {spec: self.config.system_name() for spec in specs if spec}

    def input_files(self) -> Mapping[str, Sequence[Path]]:
        """The bundled files of the tasks ``--task`` names (all 201 by default), and the --ideas file."""
        chosen = {t.id for t in select_tasks(self.config.tasks)}
        files: dict[str, list[Path]] = {"--task": [p for p in task_files() if p.stem in chosen]}
        if self.config.ideas:
            files["--ideas"] = self.config.ideas_files()
        return files

    def apply_cutoff(self, items: Sequence[Any], run_cutoff: dt.date | None) -> tuple[list[Any],
                                                                                    list[CutoffEntry]]:
        """The tasks whose workshop call is not dated after ``run_cutoff`` (:func:`.tasks.tasks_before`)."""
        return tasks_before(list(items), run_cutoff)

    def load(self) -> list[Task]:
        """The tasks of the run (``--task``, else all 201; ``--ideas published:<model>`` without
        ``--task``: the 5 tasks the published ideas cover). With an ``--ideas`` file every task is
        asked; one the file has no text for is a failed unit (the run is partial, exit 3).

        Raises:
            UserError: an unknown task id; published ideas with ``--stage proposal``.
        """
        if published_model(self.config.ideas):
            if self.config.stage == "proposal":
                raise UserError(f"--ideas {self.config.ideas}: the bundled published texts are ideas "
                                "only; add --stage idea")
            if not self.config.tasks:
                return select_tasks(published_task_ids(str(self.config.ideas)))
        return select_tasks(self.config.tasks)

    async def setup(self, ctx: RunContext) -> None:
        """Bind the run's store, steps and models."""
        self.exported_ideas: dict[str, str] = {}
        """``tasks export --stage proposal --ideas IDEAS``: task id -> the file's parsed idea."""
        self.store = ctx.store
        self.steps = ctx.steps
        self.ctx = ctx

    # -- texts -------------------------------------------------------------------
    def text(self, task_id: str, stage: str) -> str | None:
        """The task's idea or proposal (the parsed generation: a model's reply or a system's
        answer); None when there is none."""
        rec = self.store.get(stage, task_id, "")
        if rec and rec["judgment"]["parse_ok"]:
            return str(rec["judgment"]["parsed"][_TEXT_FIELD[stage]])
        return None

    def generator_of(self, task_id: str, stage: str = "idea") -> str | None:
        """The model that wrote the task's text: the generator model; for a system, the model its
        answer names (``provenance.model``, e.g. an ``--ideas`` file's ``model``), else None."""
        rec = self.store.get(stage, task_id, "")
        if not is_system(self.config.generator_role) and not (rec or {}).get("system_task"):
            return self.config.generator
        return answer_model(rec)

    # -- steps -------------------------------------------------------------------
    async def generate(self, task: Task, stage: str) -> None:
        cfg = self.config
        idea: str | None = None
        if stage == "idea":
            messages, parse = render("mlrbench_idea", task=task.text), parse_idea
        else:
            idea = self.text(task.id, "idea") or self.exported_ideas.get(task.id)
            if idea is None:
                return
            messages = render("mlrbench_proposal", task=task.text, idea=idea)
            parse = parse_proposal
        seed = derive_seed(cfg.seed, task.id, stage) % 2**31
        await self.steps.generate_step(
            stage, task.id, "", self.ctx.model("generator"), messages, parse,
            task=generation_task(task.id, stage, call=task.text, idea=idea, seed=seed),
            temperature=cfg.generation_temperature, max_tokens=cfg.reply_cap(stage, cfg.generator),
            seed=seed, extra={"system": cfg.system_name()})

    async def review(self, task: Task, stage: str) -> None:
        cfg = self.config
        text = self.text(task.id, stage)
        if text is None:
            return
        if stage == "idea":
            messages = render("mlrbench_review_idea", task=task.text, idea=text)
        else:
            messages = render("mlrbench_review_proposal", task=task.text, idea=self.text(task.id, "idea"),
                              proposal=text)
        def parse(reply: str) -> dict[str, int]:
            return parse_review(reply, stage)

        for judge in cfg.judges():
            await self.steps.judge_step(
                f"review/{stage}", task.id, judge, self.ctx.model(f"judge:{judge}"), messages,
                parse, temperature=cfg.judge_temperature,
                max_tokens=cfg.reply_cap(f"review/{stage}", judge), seed=cfg.seed,
                extra={"judge": judge, "stage": stage, "system": cfg.system_name(),
                       "generator_model": self.generator_of(task.id, stage)})

    async def generate_idea(self, task: Task) -> None:
        await self.generate(task, "idea")

    async def generate_proposal(self, task: Task) -> None:
        await self.generate(task, "proposal")

    async def review_idea(self, task: Task) -> None:
        await self.review(task, "idea")

    async def review_proposal(self, task: Task) -> None:
        await self.review(task, "proposal")

    async def execute(self, ctx: RunContext, items: Sequence[Task]) -> None:
        """Ideas, then proposals (stage proposal), then the reviews of each stage (``tasks export``:
        the idea tasks only)."""
        phases: list[tuple[str, Any]] = [("ideas", self.generate_idea)]
        if self.config.stage == "proposal":
            phases.append(("proposals", self.generate_proposal))
        if self.steps.exporting:
            # tasks export: the idea tasks; a proposal task carries the system's own idea, so with
            # --stage proposal --ideas IDEAS (the system's answers to the idea tasks) the proposal tasks
            if self.config.stage == "proposal" and self.config.ideas:
                self.exported_ideas = file_ideas(self.config, items)
                await self.steps.run_phases(items, phases[1:])
            else:
                await self.steps.run_phases(items, phases[:1])
            return
        phases.append(("idea reviews", self.review_idea))
        if self.config.stage == "proposal":
            phases.append(("proposal reviews", self.review_proposal))
        await self.steps.run_phases(items, phases)

    def aggregate(self, ctx: RunContext, items: Sequence[Task]) -> dict[str, Any]:
        """See :func:`~ideaharness.benchmarks.mlrbench.aggregate.aggregate_run`."""
        return aggregate_run(self, items)

    def scores(self, records: Sequence[Record], results: dict[str, Any]) -> list[Score]:
        """Per task, stage and dimension (:func:`.scores.mlrbench_scores`)."""
        return mlrbench_scores(records, results)

    def expected_metrics(self) -> list[str]:
        """The six idea metrics, and the seven proposal ones under ``--stage proposal``."""
        from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS
        from ideaharness.benchmarks.mlrbench.scores import metric_name

        return [metric_name(stage, dim) for stage in self.config.stages() for dim in DIMENSIONS[stage]]

    # -- presentation --------------------------------------------------------------
    def tables(self, results: dict[str, Any]) -> list[Table]:
        """The rubric table with intervals, counts, per-judge means."""
        return results_tables(results)

    def notes(self, ctx: RunContext, results: dict[str, Any]) -> list[str]:
        """Parse failures, what differs from the published pipeline."""
        return result_notes(results)

    def sections(self, ctx: RunContext, items: Sequence[Task], results: dict[str, Any]) -> list[Section]:
        """Texts and reviews of the first tasks."""
        return example_sections(self, items)
