"""MLR-Bench run configuration: generator (or given texts), judges, tasks, stage, budgets."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from ideaharness.runner.protocol import GeneratorJudgeConfig

BENCHMARK_VERSION = "1"
Stage = Literal["idea", "proposal"]


class MLRBenchConfig(GeneratorJudgeConfig):
    """Everything that determines an MLR-Bench run's results (recorded in config.json)."""

    benchmark: Literal["mlrbench"] = "mlrbench"
    benchmark_version: str = BENCHMARK_VERSION
    tasks: list[str] = Field(default_factory=list, json_schema_extra={"cli": "--task"},
                             description="Task ids to run (default: all 201 bundled workshop tasks).")
    stage: Stage = Field("proposal", description="Last stage: idea (ideas, reviewed) or proposal (ideas, "
                         "then a proposal from each idea; both reviewed).")
    ideas_file: str | None = Field(None, json_schema_extra={"cli": "--ideas"}, description="Given texts "
                                   "to score instead of generating: JSON Lines of task_id, idea, proposal "
                                   "(needed for --stage proposal), optional model; or published:<model> for "
                                   "a bundled model's published ideas (first 5 tasks, --stage idea).")
    system: str | None = Field(None, description="Name of the scored system (default: the generator "
                               "model, or the --ideas file's name).")
    also_judge: list[str] = Field(default_factory=list, json_schema_extra={"cli": "--also-judge"},
                                  description="Further judge models; each text is reviewed by --judge and "
                                  "these; a task's score: the mean over the judges whose review parsed.")
    generation_temperature: float = Field(0.7, description="Generator sampling temperature (published: "
                                          "provider default).")
    judge_temperature: float = Field(0.0, description="Judge sampling temperature.")
    idea_max_tokens: int = Field(600, ge=32, description="Idea reply tokens (the prompt asks for at most "
                                 "200 words).")
    proposal_max_tokens: int = Field(3000, ge=64, description="Proposal reply tokens (the prompt asks for "
                                     "about 2,000 words; published: 16,384).")
    judge_max_tokens: int = Field(1500, ge=64, description="Review reply tokens (published: 8,192).")
    bootstrap_resamples: int = Field(2000, ge=10, description="Bootstrap resamples of the 95% intervals.")

    @field_validator("also_judge")
    @classmethod
    def _panel(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(v.strip() for v in value if v.strip()))

    def judges(self) -> list[str]:
        """The review panel: ``judge``, then ``also_judge`` (duplicates dropped, order kept)."""
        return list(dict.fromkeys([self.judge, *self.also_judge]))

    def stages(self) -> tuple[str, ...]:
        """The stages run, in order: ``("idea",)`` or ``("idea", "proposal")``."""
        return ("idea",) if self.stage == "idea" else ("idea", "proposal")

    def system_name(self) -> str:
        """``system``, else the ``--ideas`` file's stem (``published:<model>`` as given), else the
        generator model (as :func:`ideaharness.analysis.load.run_system` names the run's system)."""
        if self.system:
            return self.system
        if self.ideas_file:  # "published:<model>" stays as given: those are the published texts
            return Path(self.ideas_file).stem
        return self.generator
