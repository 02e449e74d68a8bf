"""LiveIdeaBench's data and scripted replies for the registry-parametrised tests (tests/runner)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from tests.runner.registry_support import RegistryFixture


def reply(body: dict[str, Any]) -> str:
    """An idea naming its keyword, a critique score block, a fluency grade: all parse."""
    user = body["messages"][-1]["content"]
    if "ONLY ANSWER A/B/C/D" in user:
        return "B"
    found = re.search(r"Idea on ([a-z ]+):", user)
    if found:
        k = len(found.group(1))
        scores = {"originality": 3 + k % 7, "feasibility": 2 + k % 5, "clarity": 6}
        return f"Brief analysis.\n```json\n{json.dumps(scores)}\n```"
    keyword = re.search(r"<keyword>\n(.*?)\n</keyword>", user, re.S)
    word = keyword.group(1) if keyword else "weather"
    return f"Idea on {word}: measure how {word} data improves forecasts with sparse sensors."


def data_args(tmp_path: Path) -> list[str]:
    return ["--keyword", "meteorology", "--keyword", "stars"]


FIXTURES = {"liveideabench": RegistryFixture(data_args=data_args, reply=reply, reask_steps=("fluency",))}
