"""Scripted MLR-Bench replies shared by the tests: an idea, a proposal and a review that parse."""

from __future__ import annotations

import json
import re
from typing import Any

from ideaharness.benchmarks.mlrbench.parsers import DIMENSIONS

IDEA = ("Title: Cross-domain probes for {topic}\n\nMotivation: Defences are built for one domain at a time, "
        "so a weakness shared by vision, language and federated models is never tested across them, and "
        "shared failures stay unexplored.\n\nMain Idea: We train small probe networks on the activations "
        "of clean and poisoned models in three domains and test whether one probe transfers between them, "
        "measuring detection rates on unseen attacks.")
PROPOSAL = ("# Title: Cross-domain probes for {topic}\n\n## Introduction\n"
            + "Attacks insert triggers into training data so that a model misbehaves on such inputs. " * 8
            + "\n\n## Methodology\n"
            + "We collect poisoned models in three domains and train probes on their activations. " * 8
            + "\n\n## Expected Outcomes & Impact\nA probe that transfers gives one defence for many domains.")


def task_title(user: str) -> str:
    """The first heading of the workshop call shown in a prompt."""
    found = re.search(r"<task>\n#*\s*(.+)", user)
    return found.group(1).strip() if found else "machine learning"


def review(stage: str, base: int = 6) -> str:
    """A fenced review whose scores are ``base`` (clarity ``base + 1``) on every dimension."""
    scores = {d: {"score": base + (d == "clarity"), "justification": "as argued"} for d in DIMENSIONS[stage]}
    return "```json\n" + json.dumps(scores) + "\n```"


def respond(messages: list[dict[str, Any]]) -> str:
    """Idea, proposal or review, by the prompt's system message (our own templates)."""
    system, user = messages[0]["content"], messages[-1]["content"]
    if system.startswith("You review research proposals"):
        return review("proposal")
    if system.startswith("You review research ideas"):
        return review("idea", 5 + len(task_title(user)) % 4)
    if "full research proposal" in system:
        return PROPOSAL.format(topic=task_title(user))
    return IDEA.format(topic=task_title(user))


def server_reply(body: dict[str, Any]) -> str:
    """:func:`respond` for a loopback chat-completions body."""
    return respond(body["messages"])
