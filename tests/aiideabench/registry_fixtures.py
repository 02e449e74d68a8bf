"""AI Idea Bench's data and scripted replies for the registry-parametrised tests (tests/runner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.aiideabench.test_aiib_pipeline import responder
from tests.runner.registry_support import RegistryFixture

DATA = str(Path(__file__).parent / "fixtures" / "target_paper_data.json")
_RESPOND = responder()


def reply(body: dict[str, Any]) -> str:
    """Decomposition, ideas, IMCQ letters and i2t ratings that parse (the scripted test judge)."""
    try:
        return _RESPOND(body["messages"])
    except AssertionError:
        return "I am not sure."  # a step this script does not know: a parse failure, counted


def data_args(tmp_path: Path) -> list[str]:
    return ["--data", DATA, "--metric", "i2t", "--metric", "imcq", "--n-ideas", "1"]


FIXTURES = {"aiideabench": RegistryFixture(data_args=data_args, reply=reply, reask_steps=("imcq",))}
"""``batch`` holds: IMCQ question building under ``--batch`` once stopped on a distractor
decomposition deferred in the collecting pass (imcq._decompose kept the ended request; fixed)."""
