"""Configuration of an AI Idea Bench 2025 run (recorded in the run directory's config.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from ideaharness.benchmarks._caps import PublishedCap, parity_cap
from ideaharness.data.aiideabench import DEFAULT_CUTOFF
from ideaharness.runner.protocol import GeneratorJudgeConfig
from ideaharness.schema import IsoDate
from ideaharness.systems.config import SystemFields

BENCHMARK_VERSION = "4"
# 2: references blinded by default (issue 9); 3: IMCQ options in one form; 4: IMCQ options with equal
# words and characters in a seeded length order (issue 32, item 5: resumed questions would keep the old form)
DEFAULT_MODEL = "local/qwen2.5-coder-1.5b"
Metric = Literal["imcq", "i2i", "i2t", "novelty", "feasibility"]
ALL_METRICS: tuple[Metric, ...] = ("imcq", "i2i", "i2t", "novelty", "feasibility")

_AIIB = "yansheng-qiu/AI_Idea_Bench_2025@4ea6390"
_DEEPSEEK = PublishedCap(8000, f"{_AIIB}:LLM/Deepseek_v5.py:62 and LLM/Deepseek_v3.py:42 (every published "
                         "DeepSeek call: paper digests, keyword and plan splits, IMCQ, I2I, I2T, the "
                         "competition; max_tokens=8000)")
PUBLISHED_CAPS: dict[str, PublishedCap] = {
    "generate": PublishedCap(4096, f"{_AIIB}:AI-Scientist/ai_scientist/llm.py:9 (MAX_NUM_TOKENS = 4096, "
                             "sent at :197 for gpt-4o, the published AI-Scientist baseline)"),
    **{kind: _DEEPSEEK for kind in ("decompose", "digest", "judge", "keywords", "concepts")},
}
"""Prompt kind -> the published code's reply cap (``--parity``)."""


class AIIdeaBenchConfig(SystemFields, GeneratorJudgeConfig):
    """Everything that determines an AI Idea Bench run's results (no secrets).

    ``data``: ``tomato-chem`` (bundled), a ``target_paper_data.json`` file (published schema) or an
    Instance JSONL file. ``ideas`` / ``ideas_format`` / ``system`` (:class:`SystemFields`): a
    system's answers (a contract JSONL or an AI-Scientist ideas file, :mod:`.contract`) asked
    instead of the generator, through the ``ideas:`` system; ``system`` names the system in
    competitions (default: the generator, command or URL, or the ideas file's stem). ``parity``:
    the published code's choices where we differ (competition judged once in the ranked order, 1
    point per loss; generators see the dataset's topic instead of the anonymised one; IMCQ
    distractors are the papers' own texts, not decomposed like the ground truth; no blinding check
    on decompositions). ``inconsistent``: how a
    pair judged differently in the two orders counts in the competition (a tie, or excluded).
    ``scholar_base_url``: Semantic Scholar root (a local replay server in tests); NA/FA are skipped,
    with a note, when it cannot be reached. ``latest_year``: y_l of FA: the instance cutoff's year
    ("cutoff") or the current year ("current").
    """

    benchmark: Literal["aiideabench"] = "aiideabench"
    benchmark_version: str = BENCHMARK_VERSION
    data: str = Field("tomato-chem", description="'tomato-chem' (bundled), a target_paper_data.json file "
                      "(published schema) or an Instance JSONL file.")
    n_ideas: int = Field(default=2, ge=1, le=10, description="Ideas per instance.")
    metrics: list[Metric] = Field(default_factory=lambda: list(ALL_METRICS),
                                  json_schema_extra={"cli": "--metric"},
                                  description="Metrics to compute (default all).")
    compare: list[Path] = Field(default_factory=list, description="Run directory of another system on the "
                               "same data: adds the competition.")
    digest_inspirations: bool = Field(False, description="Digest inspiration abstracts with the judge "
                                      "before generation.")
    generation_temperature: float = Field(0.7, description="Sampling temperature of the generator.")
    judge_temperature: float = Field(0.0, description="Sampling temperature of the judge.")
    generation_max_tokens: int = Field(default=768, ge=16, description="Tokens of a generated idea (JSON: "
                                       "title, motivation, experiment plan); the generator's reasoning "
                                       "budget is added; --parity: 4,096, as published.")
    judge_max_tokens: int = Field(default=384, ge=16, description="Tokens of a judgment (IMCQ, I2I, I2T, "
                                  "competition: a small JSON verdict); the judge's reasoning budget is "
                                  "added; --parity: 8,000, as published.")
    decomposition_max_tokens: int = Field(default=768, ge=16, description="Tokens of a decomposition into "
                                          "motivation and experiment plan (JSON); the judge's reasoning "
                                          "budget is added; --parity: 8,000, as published.")
    digest_max_tokens: int = Field(default=512, ge=16, description="Tokens of an inspiration digest (JSON); "
                                   "the judge's reasoning budget is added; --parity: 8,000, as published.")
    keywords_max_tokens: int = Field(default=200, ge=16, description="Tokens of the novelty search keywords "
                                     "(a JSON list); the judge's reasoning budget is added; --parity: "
                                     "8,000, as published.")
    concepts_max_tokens: int = Field(default=300, ge=16, description="Tokens of the feasibility concepts (a "
                                     "JSON list); the judge's reasoning budget is added; --parity: 8,000, "
                                     "as published.")
    cutoff: IsoDate | None = Field(None, description="Knowledge cutoff YYYY-MM-DD (NA split, FA latest "
                                   "year, inspirations shown): an instance's own cutoff, when earlier, "
                                   "wins; one without its own takes this, else the paper's "
                                   f"{DEFAULT_CUTOFF}.")
    parity: bool = Field(False, description="Published choices: competition in one order with 1 point "
                         "per loss; the dataset's topic for generators; IMCQ distractors as the papers' "
                         "own texts.")
    tournament_rounds: int = Field(default=7, ge=1, json_schema_extra={"cli": "--rounds"},
                                   description="Swiss tournament rounds.")
    inconsistent: Literal["tie", "exclude"] = Field("tie", description="A pair judged differently in the "
                                                    "two orders counts as a tie or is excluded.")
    scholar_base_url: str | None = Field(None, description="Semantic Scholar API root (e.g. a local replay "
                                         "server); NA/FA are skipped when unreachable.")
    search_limit: int = Field(default=5, ge=1, le=100, description="Papers per literature search.")
    max_concepts: int = Field(default=5, ge=1, description="FA: atomic concepts per idea.")
    influence_lambda: float = Field(default=50.0, gt=0, description="λ of the influence term (Eq. 7-10).")
    latest_year: Literal["cutoff", "current"] = Field("cutoff", description="FA y_l: the cutoff's year or "
                                                      "the current year.")
    embedding_model: str = Field("all-MiniLM-L6-v2", description="Sentence-embedding model (IMCQ, NA).")
    bootstrap_resamples: int = Field(default=2000, ge=10, description="Bootstrap resamples of the 95% "
                                     "intervals.")

    @property
    def generator_role(self) -> str:
        """The ``generator`` role's spec: ``ideas:<file>`` with ``--ideas``, else ``generator``."""
        return self.generator_spec(self.generator)

    @property
    def system_label(self) -> str:
        """The system's name in results and competitions (:meth:`SystemFields.system_name`)."""
        return self.system_name(self.generator)

    def reply_cap(self, kind: str) -> int | None:
        """The answer cap of prompt ``kind`` (a key of :data:`PUBLISHED_CAPS`: ``generate``,
        ``decompose``, ``digest``, ``judge``, ``keywords``, ``concepts``), tokens: its config field;
        under ``parity`` the published one.

        Raises:
            KeyError: an unknown kind.
        """
        ours = {"generate": self.generation_max_tokens, "decompose": self.decomposition_max_tokens,
                "digest": self.digest_max_tokens, "judge": self.judge_max_tokens,
                "keywords": self.keywords_max_tokens, "concepts": self.concepts_max_tokens}[kind]
        return parity_cap(kind, ours, PUBLISHED_CAPS, parity=self.parity)

    @property
    def loss_points(self) -> float:
        return 1.0 if self.parity else 0.0
