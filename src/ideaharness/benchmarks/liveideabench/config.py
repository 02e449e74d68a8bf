"""LiveIdeaBench run configuration: generator, judge panel, keywords, protocol version, parity."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from ideaharness.errors import UserError
from ideaharness.runner.protocol import MODEL_FORMS, BenchmarkConfig

BENCHMARK_VERSION = "1"
Protocol = Literal["v2", "v1"]


def model_family(model: str) -> str:
    """The family of a ``provider/model`` string: its last path segment without a ``:variant``
    suffix, lower-cased (``openai/anthropic/claude-3.7-sonnet:thinking`` -> ``claude-3.7-sonnet``).

    Two models of one family never judge each other by default (LiveIdeaBench's published code
    excludes the generator by exact string only, so ``…:thinking`` judged ``…`` — notes §5.2).
    """
    return model.rsplit("/", 1)[-1].split(":", 1)[0].strip().lower()


class LiveIdeaBenchConfig(BenchmarkConfig):
    """Everything that determines a LiveIdeaBench run's results (recorded in config.json)."""

    benchmark: Literal["liveideabench"] = "liveideabench"
    benchmark_version: str = BENCHMARK_VERSION
    generator: str = Field("local/qwen2.5-coder-1.5b", description=f"Idea generator: {MODEL_FORMS}.")
    judges: list[str] = Field(
        default_factory=lambda: ["local/qwen2.5-coder-0.5b"], json_schema_extra={"cli": "--judge"},
        description="Judge panel model (same forms); the generator's family is left out.")
    keywords: list[str] = Field(default_factory=list, json_schema_extra={"cli": "--keyword"},
                                description="Keywords to run (default: all 1,180 bundled ones).")
    categories: list[str] = Field(default_factory=list, json_schema_extra={"cli": "--category"},
                                  description="Keep the bundled keywords of these categories.")
    ideas_per_keyword: int = Field(2, ge=2, le=10, description="Ideas generated per keyword (published: 2).")
    judges_per_idea: int = Field(3, ge=1, description="Panel judges scoring each idea (published: 3; at "
                                 "most the eligible panel).")
    fluency_judges: int = Field(2, ge=1, description="Judges of each fluency pair, each in both orders "
                                "(--parity: one judge, one order).")
    protocol: Protocol = Field("v2", description="Published protocol: v2 (2025: originality, feasibility, "
                               "clarity; fluency remapped to 1-10) or v1 (2024 leaderboard).")
    parity: bool = Field(False, description="Published behaviour: judges excluded by exact name, one "
                         "fluency judge from the whole panel in one order, means over rows, the "
                         "published idea-length filter.")
    allow_self_judging: bool = Field(False, description="Let a judge of the generator's family judge "
                                     "(e.g. one small local model for both).")
    generation_temperature: float = Field(0.7, description="Generator sampling temperature (published: "
                                          "provider default).")
    judge_temperature: float = Field(0.0, description="Judge sampling temperature.")
    generation_max_tokens: int = Field(400, ge=16, description="Generator reply tokens.")
    judge_max_tokens: int = Field(500, ge=16, description="Critique reply tokens.")
    bootstrap_resamples: int = Field(2000, ge=10, description="Bootstrap resamples of the 95% intervals.")

    @field_validator("judges")
    @classmethod
    def _judges(cls, value: list[str]) -> list[str]:
        panel = list(dict.fromkeys(v.strip() for v in value if v.strip()))
        if not panel:
            raise UserError("--judge: give at least one judge model")
        return panel

    def eligible_judges(self) -> list[str]:
        """The panel members that may judge this generator's ideas, in panel order.

        Default: every judge not of the generator's family (:func:`model_family`); ``parity``:
        every judge whose model string differs from the generator's (published ``run.py``);
        ``allow_self_judging``: the whole panel.

        Raises:
            UserError: no panel member is eligible (naming the generator and the rule).
        """
        if self.allow_self_judging:
            return list(self.judges)
        if self.parity:
            out = [j for j in self.judges if j != self.generator]
        else:
            out = [j for j in self.judges if model_family(j) != model_family(self.generator)]
        if not out:
            rule = "differs from" if self.parity else "is not of the family of"
            raise UserError(f"--judge: no judge {rule} the generator {self.generator} (judges may not "
                            "judge their own ideas; add a judge or pass --allow-self-judging)")
        return out

    def fluency_panel(self) -> list[str]:
        """Who may judge fluency pairs: the eligible judges; ``parity``: the whole panel, as the
        published ``hash.py`` (``random.choice(CRITIC_MODELS)``, no exclusion)."""
        return list(self.judges) if self.parity else self.eligible_judges()
