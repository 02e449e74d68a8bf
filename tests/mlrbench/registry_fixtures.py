"""MLR-Bench's data and scripted replies for the registry-parametrised tests (tests/runner):
``FIXTURES`` (tests/runner/registry_support.py) and ``ONE_NUMBER``, a small real run per variant
with the metrics it must score, for tests/runner/test_one_number.py."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import ideaharness
from ideaharness.llm.scripted import ScriptedModel
from tests.mlrbench.replies import respond, review, server_reply
from tests.runner.registry_support import RegistryFixture

ONE_NUMBER_TASKS = ["iclr2023_bands", "iclr2023_dg", "iclr2023_ml4materials", "iclr2024_mefomo"]


def data_args(tmp_path: Path) -> list[str]:
    return ["--task", "iclr2023_bands", "--task", "iclr2023_dg"]


def _one_number(out: Path) -> None:
    """Four tasks, two judges whose scores differ by task and by judge (one never parses a
    proposal review: counted, never a score)."""
    def second(messages: list[dict[str, str]]) -> str:
        if messages[0]["content"].startswith("You review research ideas"):
            return review("idea", 3 + len(messages[-1]["content"]) % 5)
        return "No opinion."

    ideaharness.run(
        "mlrbench", generator="scripted/gen", judge="scripted/j1", also_judge=["scripted/j2"],
        task=ONE_NUMBER_TASKS, out=out, progress=False, bootstrap_resamples=100,
        models={"generator": ScriptedModel(respond, model="scripted/gen"),
                "judge:scripted/j1": ScriptedModel(respond, model="scripted/j1"),
                "judge:scripted/j2": ScriptedModel(second, model="scripted/j2")})


FIXTURES = {"mlrbench": RegistryFixture(data_args=data_args, reply=server_reply)}
ONE_NUMBER: dict[str, dict[str, tuple[Callable[[Path], None], tuple[str, ...]]]] = {
    "mlrbench": {"idea and proposal": (_one_number, (
        "mlrbench.idea_overall", "mlrbench.idea_novelty", "mlrbench.proposal_overall",
        "mlrbench.proposal_soundness"))},
}
