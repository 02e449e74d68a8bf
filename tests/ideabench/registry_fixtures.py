"""IdeaBench's data and scripted replies for the registry-parametrised tests (tests/runner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.ideabench.conftest import ideabench_responder
from tests.runner.registry_support import RegistryFixture

_RESPOND = ideabench_responder()


def reply(body: dict[str, Any]) -> str:
    """Ideas, an overlap rating, a ranking (target last) and the target rewrite, all parsing."""
    return _RESPOND(body["messages"])


def data_args(tmp_path: Path) -> list[str]:
    return ["--data", "tomato-chem"]


FIXTURES = {"ideabench": RegistryFixture(
    data_args=data_args, reply=reply,
    reask_steps=("rank/low/novelty", "rank/low/feasibility"))}
