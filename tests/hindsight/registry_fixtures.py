"""HindSight's data and scripted replies for the registry-parametrised tests (tests/runner):
``FIXTURES`` (tests/runner/registry_support.py) and ``ONE_NUMBER`` (tests/runner/test_one_number.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ideaharness
from ideaharness.llm.scripted import ScriptedModel
from tests.runner.registry_support import RegistryFixture


def reply(body: dict[str, Any]) -> str:
    """An idea on the prompt's topic, a match verdict (yes for a pool paper whose title shares a
    word of four letters or more with the idea, else no), a review: all parse."""
    return respond(body["messages"])


def respond(messages: list[dict[str, str]]) -> str:
    user = messages[-1]["content"]
    if "idea number" in user:
        topic = re.search(r"<topic>\n(.*?)\n</topic>", user, re.S)
        text = topic.group(1) if topic else "language models"
        return json.dumps({"title": f"A study of {text.lower()}",
                           "idea": f"We propose to study {text.lower()} with chatbots and large language "
                                   "models: we collect conversations, ask people to rate the answers against "
                                   "human experts, and test whether models trained on student questions help "
                                   "learning.",
                           "key_phrases": [text]})
    if "Does the published paper carry out" in user:
        blocks = re.findall(r"<text_[ab]>\n(.*?)\n</text_[ab]>", user, re.S)
        words = [set(re.findall(r"[a-z]{6,}", b.lower())) for b in blocks]
        shared = len(words[0] & words[1]) if len(words) == 2 else 0
        return json.dumps({"reason": f"{shared} shared words", "match": "yes" if shared >= 6 else "no"})
    idea = re.search(r"<idea>\n(.*?)\n</idea>", user, re.S)
    k = len(idea.group(1)) if idea else 0
    return json.dumps({"reason": "assessed", "novelty": 2 + k % 8, "quality": 3 + k % 5})


def data_args(tmp_path: Path) -> list[str]:
    return ["--ideas-per-topic", "2", "--match-candidates", "2"]


def _one_number(out: Path) -> None:
    """The bundled sample, two ideas per topic, a judge whose verdicts and scores follow the texts."""
    ideaharness.run("hindsight", generator="scripted/gen", judge="scripted/judge", ideas_per_topic=2,
                    out=out, progress=False, bootstrap_resamples=100,
                    models={"generator": ScriptedModel(respond, model="scripted/gen"),
                            "judge": ScriptedModel(respond, model="scripted/judge")})


FIXTURES = {"hindsight": RegistryFixture(data_args=data_args, reply=reply, reask_steps=("match",))}
ONE_NUMBER: dict[str, dict[str, tuple[Callable[[Path], None], tuple[str, ...]]]] = {
    "hindsight": {"sample": (_one_number, ("hindsight.match_rate", "hindsight.impact_score",
                                           "hindsight.judge_novelty", "hindsight.judge_quality"))},
}
