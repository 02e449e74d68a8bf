"""The MLR-Bench run: an idea per workshop task, a proposal from it, each reviewed on the
published rubric; each unit recorded in the run directory (see the package docstring)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ideaharness.benchmarks.mlrbench import reliability
from ideaharness.benchmarks.mlrbench.aggregate import aggregate_run
from ideaharness.benchmarks.mlrbench.config import BENCHMARK_VERSION, MLRBenchConfig
from ideaharness.benchmarks.mlrbench.ideas import GivenTexts, load_given
from ideaharness.benchmarks.mlrbench.parsers import parse_idea, parse_proposal, parse_review
from ideaharness.benchmarks.mlrbench.published import ideas_path, published_model
from ideaharness.benchmarks.mlrbench.report import example_sections, result_notes, results_tables
from ideaharness.benchmarks.mlrbench.results import MLRBenchResults
from ideaharness.benchmarks.mlrbench.scores import mlrbench_scores, register_metrics
from ideaharness.benchmarks.mlrbench.tasks import Task, bundled_tasks, select_tasks, task_files
from ideaharness.errors import UserError
from ideaharness.metrics.reliability.adapters import Record
from ideaharness.prompts import render
from ideaharness.runner import Benchmark, RunContext
from ideaharness.runner.registry import register_benchmark
from ideaharness.runs.scores import Score
from ideaharness.seeding import derive_seed
from ideaharness.tables import Section, Table

register_metrics()

_TEXT_FIELD = {"idea": "idea", "proposal": "proposal"}


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
    consistency_sample = False  # a review shows one text: nothing to reorder

    config: MLRBenchConfig

    @classmethod
    def generator_models(cls, records: Sequence[Record]) -> dict[str, str]:
        """Who wrote the reviewed texts (:func:`.reliability.generator_models`)."""
        return reliability.generator_models(records)

    def model_roles(self) -> dict[str, str]:
        """``generator`` (unless --ideas) and one ``judge:<model>`` role per judge."""
        roles = {} if self.config.ideas_file else {"generator": self.config.generator}
        return {**roles, **{f"judge:{j}": j for j in self.config.judges()}}

    def input_files(self) -> Mapping[str, Sequence[Path]]:
        """The bundled files of the tasks ``--task`` names (all 201 by default), and the --ideas file."""
        chosen = {t.id for t in select_tasks(self.config.tasks)}
        files: dict[str, list[Path]] = {"--task": [p for p in task_files() if p.stem in chosen]}
        if self.config.ideas_file:
            files["--ideas"] = [ideas_path(self.config.ideas_file)]
        return files

    def load(self) -> list[Task]:
        """The tasks of the run (``--task``, else all 201), and the given texts (``--ideas``).

        Raises:
            UserError: an unknown task id; published ideas with ``--stage proposal``.
            DataError: an invalid --ideas file.
        """
        tasks = select_tasks(self.config.tasks)
        self.given: dict[str, GivenTexts] = {}
        if self.config.ideas_file:
            if published_model(self.config.ideas_file) and self.config.stage == "proposal":
                raise UserError(f"--ideas {self.config.ideas_file}: the bundled published texts are ideas "
                                "only; add --stage idea")
            known = [t.id for t in bundled_tasks()]
            self.given = load_given(ideas_path(self.config.ideas_file), task_ids=known,
                                    need_proposal=self.config.stage == "proposal")
            tasks = [t for t in tasks if t.id in self.given]
        return tasks

    async def setup(self, ctx: RunContext) -> None:
        """Bind the run's store, steps and models."""
        self.store = ctx.store
        self.steps = ctx.steps
        self.ctx = ctx

    # -- texts -------------------------------------------------------------------
    def text(self, task_id: str, stage: str) -> str | None:
        """The task's idea or proposal: the given one (--ideas), else the parsed generation; None
        when there is none."""
        if self.config.ideas_file:
            given = self.given.get(task_id)
            return None if given is None else given.idea if stage == "idea" else given.proposal
        rec = self.store.get(stage, task_id, "")
        if rec and rec["judgment"]["parse_ok"]:
            return str(rec["judgment"]["parsed"][_TEXT_FIELD[stage]])
        return None

    def generator_of(self, task_id: str) -> str | None:
        """The model that wrote the task's texts (the generator; with --ideas the file's model)."""
        if self.config.ideas_file:
            given = self.given.get(task_id)
            return given.model if given else None
        return self.config.generator

    # -- steps -------------------------------------------------------------------
    async def generate(self, task: Task, stage: str) -> None:
        cfg = self.config
        if cfg.ideas_file:
            return
        if stage == "idea":
            messages, parse, tokens = render("mlrbench_idea", task=task.text), parse_idea, cfg.idea_max_tokens
        else:
            idea = self.text(task.id, "idea")
            if idea is None:
                return
            messages = render("mlrbench_proposal", task=task.text, idea=idea)
            parse, tokens = parse_proposal, cfg.proposal_max_tokens
        await self.steps.judge_step(
            stage, task.id, "", self.ctx.model("generator"), messages, parse,
            temperature=cfg.generation_temperature, max_tokens=tokens,
            seed=derive_seed(cfg.seed, task.id, stage) % 2**31, extra={"system": cfg.system_name()})

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
                max_tokens=cfg.judge_max_tokens, seed=cfg.seed,
                extra={"judge": judge, "stage": stage, "system": cfg.system_name(),
                       "generator_model": self.generator_of(task.id)})

    async def generate_idea(self, task: Task) -> None:
        await self.generate(task, "idea")

    async def generate_proposal(self, task: Task) -> None:
        await self.generate(task, "proposal")

    async def review_idea(self, task: Task) -> None:
        await self.review(task, "idea")

    async def review_proposal(self, task: Task) -> None:
        await self.review(task, "proposal")

    async def execute(self, ctx: RunContext, items: Sequence[Task]) -> None:
        """Ideas, then proposals (stage proposal), then the reviews of each stage."""
        phases: list[tuple[str, Any]] = []
        if not self.config.ideas_file:
            phases.append(("ideas", self.generate_idea))
            if self.config.stage == "proposal":
                phases.append(("proposals", self.generate_proposal))
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
