"""MLR-Bench run configuration: generator (or given texts), judges, tasks, stage, budgets."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from ideaharness.benchmarks._caps import PublishedCap, parity_cap
from ideaharness.benchmarks.mlrbench.published import ideas_path, published_model
from ideaharness.runner.protocol import GeneratorJudgeConfig
from ideaharness.systems.config import SystemFields
from ideaharness.systems.spec import IDEAS_PREFIX

BENCHMARK_VERSION = "1"
Stage = Literal["idea", "proposal"]

_MLRBENCH = "chchenhui/mlrbench@806a203"
PUBLISHED_CAPS: dict[str, PublishedCap] = {
    "idea": PublishedCap(4096, f"{_MLRBENCH}:mlrbench/agent/idea_generator.py:35 (create_client(model_name) "
                         "at its default max_tokens=MAX_NUM_TOKENS = 4096, mlrbench/llm/llm.py:13, :334)"),
    "proposal": PublishedCap(16384, f"{_MLRBENCH}:mlrbench/agent/proposal_generator.py:50 "
                             "(create_client(model_name, max_tokens=8192*2))"),
    "review/idea": PublishedCap(4096, f"{_MLRBENCH}:mlrbench/evals/review_idea.py:167 (create_client("
                                "evaluator_name, judge_mode=True) at its default 4,096)"),
    "review/proposal": PublishedCap(8192, f"{_MLRBENCH}:mlrbench/evals/review_proposal.py:232 "
                                    "(create_client(evaluator_name, max_tokens=8192, judge_mode=True))"),
}
"""Prompt kind -> the published code's reply cap (``--parity``). Except for OpenAI o-series
models, to which the published client sends no cap (:data:`NO_CAP_MODELS`)."""
NO_CAP_MODELS = ("o1", "o3", "o4")
"""OpenAI model-name prefixes the published client sends no ``max_tokens`` (``chchenhui/mlrbench@806a203:
mlrbench/llm/llm.py:124-128``, "o1 does not use max_tokens"); under ``--parity`` an ``openai/`` model
of these names is sent no cap."""


class MLRBenchConfig(SystemFields, GeneratorJudgeConfig):
    """Everything that determines an MLR-Bench run's results (recorded in config.json).

    ``ideas`` (:class:`SystemFields`, ``--ideas``): a system's texts asked through the ``ideas:``
    system (:mod:`.contract`; MLR-Bench's own JSON Lines of ``task_id``, ``idea``, ``proposal``,
    ``model`` among the formats), or ``published:<model>``: a bundled published model's ideas
    (first 5 tasks, ``--stage idea``).
    """

    benchmark: Literal["mlrbench"] = "mlrbench"
    benchmark_version: str = BENCHMARK_VERSION
    tasks: list[str] = Field(default_factory=list, json_schema_extra={"cli": "--task"},
                             description="Task ids to run (default: all 201 bundled workshop tasks).")
    stage: Stage = Field("proposal", description="Last stage: idea (ideas, reviewed) or proposal (ideas, "
                         "then a proposal from each idea; both reviewed).")
    ideas: str | None = Field(None, description="A system's texts to score instead of generating: a "
                              "JSONL/JSON file (MLR-Bench's own lines of task_id, idea, proposal, model; "
                              "the idea contract's rows; or another format --ideas-format names), or "
                              "published:<model> for a bundled model's published ideas (first 5 tasks, "
                              "--stage idea).")
    also_judge: list[str] = Field(default_factory=list, json_schema_extra={"cli": "--also-judge"},
                                  description="Further judge models; each text is reviewed by --judge and "
                                  "these; a task's score: the mean over the judges whose review parsed.")
    generation_temperature: float = Field(0.7, description="Generator sampling temperature (published: "
                                          "provider default).")
    judge_temperature: float = Field(0.0, description="Judge sampling temperature.")
    idea_max_tokens: int = Field(600, ge=32, description="Tokens of an idea (the prompt asks for at most "
                                 "200 words); the generator's reasoning budget is added; --parity: "
                                 "4,096, as published.")
    proposal_max_tokens: int = Field(3000, ge=64, description="Tokens of a proposal (the prompt asks for "
                                     "about 2,000 words); the generator's reasoning budget is added; "
                                     "--parity: 16,384, as published.")
    judge_max_tokens: int = Field(1500, ge=64, description="Tokens of a review (JSON scores with their "
                                  "justifications); the judge's reasoning budget is added; --parity: "
                                  "4,096 for ideas, 8,192 for proposals, as published.")
    parity: bool = Field(False, description="The published code's reply caps: idea 4,096, proposal "
                         "16,384, review 4,096 (idea) / 8,192 (proposal) tokens, none for OpenAI o1/o3/o4 "
                         "models; no reasoning budget added by default.")
    bootstrap_resamples: int = Field(2000, ge=10, description="Bootstrap resamples of the 95% intervals.")

    @field_validator("also_judge")
    @classmethod
    def _panel(cls, value: list[str]) -> list[str]:
        return list(dict.fromkeys(v.strip() for v in value if v.strip()))

    def reply_cap(self, kind: str, model: str) -> int | None:
        """The answer cap of prompt ``kind`` (``"idea"``, ``"proposal"``, ``"review/idea"``,
        ``"review/proposal"``) sent to ``model``, tokens: the config field; under ``parity`` the
        published one (:data:`PUBLISHED_CAPS`), and None (no cap) for an ``openai/`` model named
        o1*, o3* or o4* (:data:`NO_CAP_MODELS`).

        Raises:
            KeyError: an unknown kind.
        """
        ours = {"idea": self.idea_max_tokens, "proposal": self.proposal_max_tokens,
                "review/idea": self.judge_max_tokens, "review/proposal": self.judge_max_tokens}[kind]
        provider, _, name = model.partition("/")
        if self.parity and provider == "openai" and name.startswith(NO_CAP_MODELS):
            return None
        return parity_cap(kind, ours, PUBLISHED_CAPS, parity=self.parity)

    def judges(self) -> list[str]:
        """The review panel: ``judge``, then ``also_judge`` (duplicates dropped, order kept)."""
        return list(dict.fromkeys([self.judge, *self.also_judge]))

    def stages(self) -> tuple[str, ...]:
        """The stages run, in order: ``("idea",)`` or ``("idea", "proposal")``."""
        return ("idea",) if self.stage == "idea" else ("idea", "proposal")

    def generator_spec(self, generator: str) -> str:
        """As :meth:`SystemFields.generator_spec`; ``published:<model>`` is the bundled file."""
        if self.ideas and published_model(self.ideas):
            fmt = f"#format={self.ideas_format}" if self.ideas_format != "auto" else ""
            return f"{IDEAS_PREFIX}{ideas_path(self.ideas)}{fmt}"
        return super().generator_spec(generator)

    def ideas_files(self) -> list[Path]:
        """The ``--ideas`` file (the bundled one for ``published:<model>``), or none."""
        return [ideas_path(self.ideas)] if self.ideas else []

    @property
    def generator_role(self) -> str:
        """The ``generator`` role's spec: ``ideas:<file>`` with ``--ideas``, else ``generator``."""
        return self.generator_spec(self.generator)

    def system_name(self, generator: str | None = None) -> str:
        """``system``, else ``published:<model>`` as given (those are the published texts), else the
        generator's or ideas file's name (:meth:`SystemFields.system_name`)."""
        if not self.system and self.ideas and published_model(self.ideas):
            return self.ideas
        return super().system_name(self.generator if generator is None else generator)
