"""The Python API dispatches to every benchmark with the CLI's parameters."""

from __future__ import annotations

import pytest

import ideaharness
from ideaharness.api import BENCHMARKS, split_kwargs
from ideaharness.benchmarks.ideabench import IdeaBenchConfig
from ideaharness.errors import UserError
from ideaharness.llm.scripted import ScriptedModel


def test_unknown_benchmark() -> None:
    with pytest.raises(UserError, match="unknown benchmark"):
        ideaharness.run("nope")


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_unknown_argument_is_named(name: str) -> None:
    with pytest.raises(UserError, match="not_a_flag"):
        ideaharness.run(name, not_a_flag=1)


def test_split_kwargs_routes_config_options_and_models() -> None:
    model = ScriptedModel(["x"], model="scripted/a")
    config, options, models = split_kwargs(
        IdeaBenchConfig, {"generator": model, "judge": "openai/x", "n_ideas": 4, "limit": 2, "no_cache": True}
    )
    assert isinstance(config, IdeaBenchConfig)
    assert config.generator == "scripted/a" and config.judge == "openai/x" and config.n_ideas == 4
    assert options.limit == 2 and options.use_cache is False
    assert models == {"generator": model}
