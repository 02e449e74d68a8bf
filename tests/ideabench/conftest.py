"""Fixtures for IdeaBench tests: a scripted model that answers each IdeaBench step plausibly."""

from __future__ import annotations

import json
import re

import pytest

from ideaharness.llm.scripted import ScriptedModel
from tests.blinding_support import is_rewrite, scripted_rewrite

IDEA_TEXT = "Idea {i} about {{x_i}}: test whether doping the hydrogel raises its thermopower at 25 C"


def ideabench_responder(rank_target_position: str = "last", ideas_text: str = IDEA_TEXT):
    """Replies to IdeaBench prompts: n ideas, an overlap rating, a ranking placing the target
    (recognised by the run's target text marker) first or last."""

    def respond(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if is_rewrite(user):
            return scripted_rewrite(user)
        if "propose" in user and '"ideas"' in user:
            n = int(re.search(r"holding exactly (\d+) ideas", user).group(1))
            return json.dumps(
                {"ideas": [{"title": f"T{i}", "idea": ideas_text.replace("{i}", str(i))} for i in range(n)]}
            )
        if "Rate how much" in user:
            return "On a scale of 1-10, I'd give this a 7. It shares the core mechanism."
        if "Rank the following" in user:
            labels = re.search(r"exactly once \(([A-Z, ]+)\)", user).group(1).split(", ")
            blocks = dict(re.findall(r"Idea ([A-Z]):\n<idea>\n(.*?)\n</idea>", user, re.S))
            target = next(label for label, text in blocks.items() if not text.startswith("Idea "))
            others = [label for label in labels if label != target]
            order = [target] + others if rank_target_position == "first" else others + [target]
            return json.dumps({"ranking": order, "rationale": "scripted"})
        if user.startswith("Below is the abstract"):
            return ("Hypothesis: a scripted restatement of the paper's idea: adding a salt to the hydrogel "
                    "raises its thermopower, tested by measuring the Seebeck coefficient.")
        raise AssertionError(f"unexpected prompt: {user[:80]}")

    return respond


@pytest.fixture
def scripted_ideabench():
    return lambda **kw: ScriptedModel(ideabench_responder(**kw))
