"""LiveIdeaBench run configuration: generator, judge panel, keywords, protocol version, parity."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, field_validator

from ideaharness.benchmarks._caps import PublishedCap, parity_cap
from ideaharness.errors import UserError
from ideaharness.runner.protocol import MODEL_FORMS, BenchmarkConfig
from ideaharness.systems.config import SystemFields
from ideaharness.systems.spec import is_system

BENCHMARK_VERSION = "1"
Protocol = Literal["v2", "v1"]


_RELEASE_SUFFIX = re.compile(
    r"-(?:"
    r"\d{4}-\d{2}-\d{2}|\d{8}|\d{6}|\d{4}|\d{2}-\d{2}|0\d{2}"  # dated snapshot: -2024-11-20, -20241022,
                                                                 # -202411, -2411, -02-05, -001
    r"|high|medium|low|minimal"  # reasoning effort (o3-mini-high)
    r"|thinking|reasoning"  # reasoning mode (gemini-2.0-flash-thinking-exp, claude-…:thinking)
    r"|preview|exp|experimental|latest|beta|alpha"  # release stage (qwq-32b-preview, …-exp)
    r"|instruct|it"  # instruction-tuned release of the same base (gemma-2-27b-it)
    r")$"
)
"""One release suffix of a model name: a date or snapshot number, a reasoning effort or mode, a
release stage or the instruction-tuned marker. Stripped from the end, repeatedly, by
:func:`model_family`."""


_PUBLISHED_CALL = ("x66ccff/liveideabench@6fc8285:utils/LLM.py:172-176 (client.chat.completions.create("
                   "model, messages, stream=False): the one model call of idea, critique and fluency "
                   "prompts, no max_tokens)")
PUBLISHED_CAPS: dict[str, PublishedCap] = {
    "idea": PublishedCap(None, _PUBLISHED_CALL),
    "critique": PublishedCap(None, _PUBLISHED_CALL),
    "fluency": PublishedCap(None, _PUBLISHED_CALL),
}
"""Prompt kind -> the published code's reply cap (``--parity``): no cap for any prompt."""


def model_family(model: str) -> str:
    """The base model of a ``provider/model`` string, the unit of the self-judging exclusion.

    The last path segment, lower-cased, without a ``:variant`` (``:thinking``, ``:free``,
    ``:Q4_K_M``) and without trailing release suffixes (:data:`_RELEASE_SUFFIX`, stripped
    repeatedly): a dated snapshot (``-2024-11-20``, ``-20241022``, ``-202411``, ``-2411``,
    ``-02-05``, ``-001``), a reasoning effort (``-high``), a reasoning mode (``-thinking``), a
    release stage (``-preview``, ``-exp``, ``-latest``) or ``-instruct``/``-it``. Size and tier
    words are kept (``o3-mini`` is not ``o3``, ``gemini-2.0-flash-lite`` is not
    ``gemini-2.0-flash``, ``deepseek-r1-distill-qwen-32b`` is not ``deepseek-r1``).

    Examples: ``openai/o3-mini-high`` -> ``o3-mini``; ``google/gemini-2.0-flash-thinking-exp:free``
    -> ``gemini-2.0-flash``; ``qwen/qwq-32b-preview`` -> ``qwq-32b``; ``openai/gpt-4o-2024-11-20``
    -> ``gpt-4o``; ``google/gemini-2.0-pro-exp-02-05:free`` -> ``gemini-2.0-pro``.

    Source of the rule: the published roster (x66ccff/liveideabench ``config.py``, ``CRITIC_MODELS``)
    leaves out ``anthropic/claude-3.7`` "as it shares the same base model as 'thinking'", i.e. a
    mode variant is the same model; the published exclusion itself is by exact string only
    (``run.py``: ``[m for m in CRITIC_MODELS if m != idea_model]``), so ``o3-mini-high`` judged
    ``o3-mini`` there. A fine-tune published under another name (``qwen2.5-dracarys2-72b``) is not
    recognised.
    """
    name = model.rsplit("/", 1)[-1].split(":", 1)[0].strip().lower()
    while True:
        stripped = _RELEASE_SUFFIX.sub("", name)
        if stripped == name or not stripped:
            return name
        name = stripped


def family_key(model: str) -> str:
    """:func:`model_family` with the separators ``-``, ``.``, ``_`` and spaces removed, so that
    ``claude-3-7-sonnet-20250219`` and ``anthropic/claude-3.7-sonnet`` are one family."""
    return re.sub(r"[-._\s]", "", model_family(model))


def same_family(a: str, b: str) -> bool:
    """Whether two model strings name the same base model (:func:`family_key`)."""
    return family_key(a) == family_key(b)


class LiveIdeaBenchConfig(SystemFields, BenchmarkConfig):
    """Everything that determines a LiveIdeaBench run's results (recorded in config.json); the
    generator may be a system (``--ideas FILE``, ``--generator cmd:...``/``http://...``)."""

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
    parity: bool = Field(False, description="Published behaviour: the published idea prompt as one user "
                         "message, judges excluded by exact name, one fluency judge from the whole panel "
                         "in one order over the published fluency pool, means over rows, the published "
                         "idea-length filter (docs/liveideabench.md).")
    allow_self_judging: bool = Field(False, description="Let a judge of the generator's family judge "
                                     "(e.g. one small local model for both); families ignore dates, "
                                     "-high/-thinking/-preview/-exp and :variants.")
    generation_temperature: float = Field(0.7, description="Generator sampling temperature (published: "
                                          "provider default).")
    judge_temperature: float = Field(0.0, description="Judge sampling temperature.")
    generation_max_tokens: int = Field(400, ge=16, description="Tokens of an idea reply (the prompt asks "
                                       "for at most 100 words); the generator's reasoning budget is "
                                       "added; --parity: no cap, as published.")
    judge_max_tokens: int = Field(500, ge=16, description="Tokens of a critique reply (an analysis of "
                                  "under 100 words and a JSON score block); the judge's reasoning budget "
                                  "is added; --parity: no cap, as published.")
    fluency_max_tokens: int = Field(16, ge=1, description="Tokens of a fluency reply (one grade A-D); the "
                                    "judge's reasoning budget is added; --parity: no cap, as published.")
    bootstrap_resamples: int = Field(2000, ge=10, description="Bootstrap resamples of the 95% intervals.")

    @field_validator("judges")
    @classmethod
    def _judges(cls, value: list[str]) -> list[str]:
        panel = list(dict.fromkeys(v.strip() for v in value if v.strip()))
        if not panel:
            raise UserError("--judge: give at least one judge model")
        return panel

    def reply_cap(self, kind: str) -> int | None:
        """The answer cap of prompt ``kind`` (``"idea"``, ``"critique"``, ``"fluency"``), tokens: the
        config field; under ``parity`` the published one (:data:`PUBLISHED_CAPS`: None, no cap sent).

        Raises:
            KeyError: an unknown kind.
        """
        ours = {"idea": self.generation_max_tokens, "critique": self.judge_max_tokens,
                "fluency": self.fluency_max_tokens}[kind]
        return parity_cap(kind, ours, PUBLISHED_CAPS, parity=self.parity)

    def generator_model(self) -> str:
        """The generator role's spec: the model string, or a system's (``--ideas FILE`` gives
        ``ideas:FILE``)."""
        return self.generator_spec(self.generator)

    def generator_is_system(self) -> bool:
        """Whether a system generates (``--ideas``, ``cmd:``, ``http(s)://``), not a model."""
        return is_system(self.generator_model())

    def generator_label(self) -> str:
        """Who generates, as results.json names it: the model string, or the system's name."""
        return self.system_name(self.generator) if self.generator_is_system() else self.generator

    def eligible_judges(self) -> list[str]:
        """The panel members that may judge this generator's ideas, in panel order.

        Default: every judge not of the generator's family (:func:`same_family`); ``parity``:
        every judge whose model string differs from the generator's (published ``run.py``);
        ``allow_self_judging``, or a system generator (whose own models the run does not know):
        the whole panel.

        Raises:
            UserError: no panel member is eligible (naming the generator and the rule).
        """
        if self.allow_self_judging or self.generator_is_system():
            return list(self.judges)
        if self.parity:
            out = [j for j in self.judges if j != self.generator]
        else:
            out = [j for j in self.judges if not same_family(j, self.generator)]
        if not out:
            rule = "differs from" if self.parity else "is not of the family of"
            raise UserError(f"--judge: no judge {rule} the generator {self.generator} (judges may not "
                            "judge their own ideas; add a judge or pass --allow-self-judging)")
        return out

    def fluency_panel(self) -> list[str]:
        """Who may judge fluency pairs: the eligible judges; ``parity``: the whole panel, as the
        published ``hash.py`` (``random.choice(CRITIC_MODELS)``, no exclusion)."""
        return list(self.judges) if self.parity else self.eligible_judges()

    def judge_exclusion(self) -> dict[str, Any]:
        """The self-judging rule as applied, for results.json: ``{"rule", "generator",
        "generator_family", "families": {judge: family}, "excluded": [judges left out]}``; rule is
        ``"family"`` (default, :func:`same_family`), ``"exact name"`` (``--parity``, as published),
        ``"none"`` (``--allow-self-judging``) or ``"system"`` (a system generates: its models are
        unknown, no judge is left out); ``generator`` is then the system's name."""
        rule = ("none" if self.allow_self_judging else "system" if self.generator_is_system()
                else "exact name" if self.parity else "family")
        eligible = set(self.eligible_judges())
        return {"rule": rule, "generator": self.generator_label(),
                "generator_family": None if rule == "system" else model_family(self.generator),
                "families": {j: model_family(j) for j in self.judges},
                "excluded": [j for j in self.judges if j not in eligible]}
