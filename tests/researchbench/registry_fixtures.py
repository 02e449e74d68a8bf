"""ResearchBench's data and scripted replies for the registry-parametrised tests (tests/runner)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.researchbench.test_rb_run import RELEASE, scripted
from tests.runner.registry_support import RegistryFixture

_MODEL = scripted("**Analysis**: x\n**Selection of research hypothesis candidate**: candidate 1")


def reply(body: dict[str, Any]) -> str:
    """Hypotheses, screening picks, matched scores and "candidate 1" rank-pair verdicts."""
    return str(_MODEL._responder(body["messages"]))


def data_args(tmp_path: Path) -> list[str]:
    return ["--data", str(RELEASE), "--task", "ranking", "--ranking-negatives", "generated",
            "--n-negatives", "1"]


FIXTURES = {"researchbench": RegistryFixture(data_args=data_args, reply=reply,
                                             reask_steps=("researchbench_rank_pair",))}
