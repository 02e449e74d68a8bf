"""What the HindSight tests share: topics made of real recorded Semantic Scholar records
(``tests/data/recorded/s2-api-recordings/Paper.json``), a scripted generator whose ideas restate a
chosen paper, and a judge whose verdicts follow the papers' titles."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from ideaharness.schema import Paper
from ideaharness.scholarly.s2 import paper_from_s2
from tests.shared_data import RAW, need

CUTOFF = dt.date(2022, 11, 30)
SURVEY = "c61d54644e9aedcfc756e5d6fe4cc8b78c87755d"  # A Survey of Large Language Models, 2023-03-31, 1114
EVAL_SURVEY = "888728745dbb769e29ed475d4f7661eebe1a71cf"  # A Survey on Evaluation of LLMs, 2023-07-06
SIMULATE = "59b3fbf146b29b581b677ec4384f14cee87997a4"  # Using LLMs to Simulate Multiple Humans, 2022-08-18
HUMAN_OR_NOT = "79bae31ed966a7a97dbea7292e17fa6274122100"  # Human or Not? (Turing test game), 2023-05-31
DISSOCIATING = "9a9e68d400069f023f7dc9b982226c95159a509d"  # Dissociating language and thought, 2023-01-16
LLM_LITERATURE = ("7f84d56fb8feb4e50cd6c3da3e3fd4ff6c4772cf", "5c02d55fe14e2baf4b6b59a476ee6a20698397ef",
                  "f158e70e9ead719e8a524eaf8ec79270574f2eda")
LLM_POOL = (SURVEY, EVAL_SURVEY, "3d48f1b4f69f7d22a47fa1599a1fc76277ba0c65",
            "1c7402843d8b586d945b3b030e3edd93f0ae3959", "682918c9c1705907ca1fe3f1207561f403f6ea0e",
            "c40aa04f1577e8f0f83208d1815e032d127b60a8")
TURING_LITERATURE = ("efd922d6b5b95e0cb05f7dd21a885fc51610c5ed", "7c16068b924dfe6011f23efba7a911a6250cb139")
TURING_POOL = (HUMAN_OR_NOT, "564f911510646366f2ca6721756e47b05c23e9d2",
               "b7415efcbc02e8cbce11e145a9322c1249f4d142", "c19382eb26ee614a77b6ad52d525b5fa88ebc924",
               "505c7b471457ac447efdb9abc714247dd10dbef8")


@lru_cache(maxsize=1)
def recorded() -> dict[str, Paper]:
    """Every recorded paper with an id, as the S2 client reads it."""
    data = json.loads(need(RAW / "s2-api-recordings" / "Paper.json").read_text(encoding="utf-8"))
    return {p["paperId"]: paper_from_s2(p) for p in data["citations"] + data["references"]
            if p.get("paperId")}


def raw_records(ids: Iterable[str]) -> list[dict[str, Any]]:
    """The recorded S2 JSON objects of ``ids`` (for an emulator's pool)."""
    data = json.loads(need(RAW / "s2-api-recordings" / "Paper.json").read_text(encoding="utf-8"))
    by_id = {p["paperId"]: p for p in data["citations"] + data["references"] if p.get("paperId")}
    return [by_id[i] for i in ids]


def papers(ids: Iterable[str], **changes: dict[str, Any]) -> list[dict[str, Any]]:
    """The recorded papers ``ids`` as topic-file JSON; ``changes[id]`` updates a paper's fields."""
    return [recorded()[i].model_copy(update=changes.get(i, {})).model_dump(mode="json") for i in ids]


def scenario_topics(*, pool_before: bool = True, uncited: bool = True) -> list[dict[str, Any]]:
    """Two topics of real records, T = 2022-11-30:

    * ``llm``: literature of three pre-T language-model papers and one of 2023 (after T: it must
      never reach a prompt); pool of six 2023 papers (the LLM survey among them) and, with
      ``pool_before``, a paper of 2022-08 placed in the pool by mistake (before T: never a candidate);
    * ``turing``: two pre-T Turing-test papers; a pool of five later ones, the "Human or Not?" game
      without a citation count when ``uncited``.
    """
    pool = [*LLM_POOL, SIMULATE] if pool_before else list(LLM_POOL)
    return [
        {"id": "llm", "topic": "Large language models", "cutoff": CUTOFF.isoformat(),
         "field": "Computer Science",
         "impact_as_of": "2024-12-01", "literature": papers([*LLM_LITERATURE, DISSOCIATING]),
         "future": papers(pool)},
        {"id": "turing", "topic": "The Turing test", "cutoff": CUTOFF.isoformat(),
         "field": "Computer Science",
         "impact_as_of": "2024-12-01", "literature": papers(TURING_LITERATURE),
         "future": papers(TURING_POOL, **({HUMAN_OR_NOT: {"citation_count": None}} if uncited else {}))},
    ]


def write_topics(path: Path, topics: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(t) + "\n" for t in topics), encoding="utf-8")
    return path


def restate(paper_id: str) -> str:
    """An idea that restates a recorded paper: its abstract's first three sentences, reworded as a
    proposal."""
    abstract = recorded()[paper_id].abstract or ""
    sentences = re.split(r"(?<=[.!?])\s+", abstract)[:3]
    return "We propose the following study. " + " ".join(sentences)


UNRELATED = ("We propose to measure how soil moisture sensors placed along irrigation channels change the "
             "yield of rice paddies over three growing seasons, comparing drip and flood irrigation plots.")

IDEAS: dict[str, list[str]] = {
    "llm": [restate(SURVEY), UNRELATED, restate(SIMULATE)],
    "turing": [restate(HUMAN_OR_NOT), UNRELATED, UNRELATED + " A second site repeats it."],
}
"""The scripted generator's ideas per topic: matched, unmatched, and (llm) one restating a paper
published before T."""


def _topic_id(user: str) -> str:
    topic = re.search(r"<topic>\n(.*?)\n</topic>", user, re.S)
    text = topic.group(1) if topic else ""
    return "turing" if "Turing" in text else "llm"


def generator(messages: list[dict[str, str]]) -> str:
    """The scripted generator: idea ``number`` of the topic from :data:`IDEAS`."""
    user = messages[-1]["content"]
    number = int(re.search(r"idea number (\d+)", user).group(1))  # type: ignore[union-attr]
    ideas = IDEAS[_topic_id(user)]
    return json.dumps({"title": f"Idea {number}", "idea": ideas[(number - 1) % len(ideas)]})


def shown_titles(user: str) -> str:
    """The text of a match prompt's two blocks."""
    return " ".join(re.findall(r"<text_[ab]>\n(.*?)\n</text_[ab]>", user, re.S))


def judge(yes: Iterable[str] = (), *, always: str | None = None,
          novelty: Callable[[str], int] | None = None) -> Callable[[list[dict[str, str]]], str]:
    """A scripted judge: a match verdict "yes" when the pair is a paper of ``yes`` (recorded paper
    ids) and the idea restating it (:func:`restate`), else "no" (``always``: that verdict every
    time); a review whose novelty is ``novelty(idea text)`` (default: from the idea's length),
    quality 6."""
    pairs = [(recorded()[i].title, restate(i)) for i in yes]

    def reply(messages: list[dict[str, str]]) -> str:
        user = messages[-1]["content"]
        if "Does the published paper carry out" in user:
            if always is not None:
                return json.dumps({"reason": "constant", "match": always})
            shown = shown_titles(user)
            verdict = "yes" if any(t in shown and idea in shown for t, idea in pairs) else "no"
            return json.dumps({"reason": "compared the two texts", "match": verdict})
        idea = re.search(r"<idea>\n(.*?)\n</idea>", user, re.S)
        text = idea.group(1) if idea else user
        score = novelty(text) if novelty else 2 + len(text) % 8
        return json.dumps({"reason": "assessed", "novelty": score, "quality": 6})

    return reply


def server_reply(yes: Iterable[str] = ()) -> Callable[[dict[str, Any]], str]:
    """One loopback model answering both roles: generation prompts like :func:`generator`, the rest
    like :func:`judge` (``yes``)."""
    answer = judge(yes)

    def reply(body: dict[str, Any]) -> str:
        messages = body["messages"]
        return generator(messages) if "idea number" in messages[-1]["content"] else answer(messages)

    return reply
