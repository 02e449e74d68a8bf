"""Config fields of a benchmark that generates: score a system's answers instead of generating.

:class:`SystemFields` is a mixin of pydantic config models (``class MyConfig(SystemFields,
GeneratorJudgeConfig)``); its fields become the flags ``--ideas``, ``--ideas-format`` and
``--system`` of the benchmark's ``run`` command, and are recorded in config.json.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, model_validator

from ideaharness.errors import UserError
from ideaharness.systems.spec import IDEAS_PREFIX, default_system_name

IDEAS_FORMATS = ("auto", "jsonl", "aiscientist", "aiscientist-v2", "ai-researcher", "researchagent",
                 "moose-chem")


class SystemFields(BaseModel):
    """``ideas``, ``ideas_format`` and ``system`` (see the field descriptions).

    ``--ideas`` and ``--generator`` together are refused unless ``--generator`` was left at its
    default (then the file is the generator); ``--generator ideas:FILE`` is the same as ``--ideas FILE``.
    """

    ideas: str | None = Field(None, description="Answers of a system to score instead of generating: a "
                              "JSONL/JSON file (the idea contract, or AI-Scientist, AI-Researcher, "
                              "ResearchAgent, MOOSE-Chem files).")
    ideas_format: str = Field("auto", description="Format of --ideas: auto, jsonl, aiscientist, "
                              "aiscientist-v2, ai-researcher, researchagent, moose-chem.")
    system: str | None = Field(None, description="Name of the system (default: from the generator: the "
                               "file, command or URL).")

    @model_validator(mode="before")
    @classmethod
    def _saved_before_systems(cls, data: Any) -> Any:
        """A config.json saved before issue 20 named the file ``ideas_file`` (AI Idea Bench,
        MLR-Bench); its generator, never asked, is dropped: ``--ideas`` and ``--generator`` are now
        one role."""
        if isinstance(data, dict) and "ideas_file" in data:
            data = dict(data)
            old = data.pop("ideas_file")
            if old and not data.get("ideas"):
                data["ideas"] = old
                data.pop("generator", None)
        return data

    @model_validator(mode="after")
    def _one_generator(self) -> Any:
        if self.ideas is None:
            return self
        if not self.ideas.strip():
            raise ValueError("ideas: empty path")
        generator = getattr(self, "generator", None)
        info = type(self).model_fields.get("generator")
        default = info.default if info is not None else None
        if generator is not None and generator != default and generator != self._ideas_spec():
            raise UserError(f"give --ideas or --generator, not both (--ideas {self.ideas}, "
                            f"--generator {generator})")
        return self

    def _ideas_spec(self) -> str:
        assert self.ideas is not None
        fmt = f"#format={self.ideas_format}" if self.ideas_format != "auto" else ""
        return f"{IDEAS_PREFIX}{self.ideas}{fmt}"

    def generator_spec(self, generator: str) -> str:
        """The generator to use: ``"ideas:<path>[#format=<f>]"`` when ``ideas`` is set, else
        ``generator`` (a model string or a system spec)."""
        return self._ideas_spec() if self.ideas else generator

    def system_name(self, generator: str) -> str:
        """``system`` if given, else :func:`~ideaharness.systems.default_system_name` of
        :meth:`generator_spec`."""
        return self.system or default_system_name(self.generator_spec(generator))

    def ideas_files(self) -> list[Path]:
        """``[Path(ideas)]`` or ``[]``: input files whose sha256 is part of the run's identity."""
        return [Path(self.ideas)] if self.ideas else []
