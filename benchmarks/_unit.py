"""One realistic unit of work for the scale benchmarks: an IdeaBench overlap rating.

Render ``ideabench_overlap`` (Jinja2, data filter), ask through :class:`ideaharness.llm.LLM`
(cache lookup + store in SQLite), parse the JSON reply, record it with
:meth:`StepRunner.judge_step` (append + fsync). The loopback server answers ``REPLY``.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ideaharness.llm.parsing import extract_json_object
from ideaharness.llm.types import ChatModel
from ideaharness.prompts import render
from ideaharness.runner.steps import StepRunner
from ideaharness.schema import Instance, Paper
from ideaharness.testing.fast_server import serve_in_child

REPLY = '{"rating": 7, "explanation": "Both study the same catalyst under different conditions."}'
STEP = "overlap"


def responder(body: dict[str, Any]) -> str:
    return REPLY


def write_instances(path: Path, n: int, seed: int = 0) -> Path:
    """``n`` synthetic instances (title + ~1,000-character abstract) as Instance JSONL."""
    rng = random.Random(seed)
    words = [f"word{i}" for i in range(5000)]
    with path.open("w", encoding="utf-8") as fh:
        for i in range(n):
            abstract = " ".join(rng.choices(words, k=120))
            inst = Instance(id=f"inst-{i:06d}", dataset="synthetic",
                            target=Paper(id=f"paper-{i}", title=f"Paper {i}", abstract=abstract))
            fh.write(inst.model_dump_json(exclude_none=True) + "\n")
    return path


def parse_overlap(text: str) -> int:
    return int(extract_json_object(text, ("rating",))["rating"])


async def overlap_unit(runner: StepRunner, model: ChatModel, inst: Instance) -> None:
    idea = f"Idea for {inst.target.title}: " + (inst.target.abstract or "")[:300]
    messages = render("ideabench_overlap", idea=idea, target=inst.target.abstract)
    await runner.judge_step(STEP, inst.id, "", model, messages, parse_overlap, max_tokens=64)


@contextlib.contextmanager
def served(latency_s: float = 0.0) -> Iterator[str]:
    """A loopback server answering :data:`REPLY` in a child process (its CPU time and memory stay
    out of the measured process): :mod:`ideaharness.testing.fast_server`, one asyncio event loop,
    0.1–0.3 ms of CPU per request; yields its base URL."""
    with serve_in_child(latency_s, reply=REPLY) as server:
        yield server.base_url
