"""Generation tasks: what a *system* (an idea generator outside ideaharness) is asked.

A benchmark's generation call is described by a :class:`GenerationTask` (the benchmark, the
recording step and unit, the sample index, the seed and the generator's inputs as data). Its JSON
form (:meth:`GenerationTask.to_json`, format :data:`TASK_FORMAT`) is what a ``cmd:`` system reads on
stdin, what an ``http(s)://`` system receives as the POST body and what ``ideaharness tasks export``
writes, one per line. Inside ideaharness the task travels as the single user message of a chat
request (:func:`task_message`), so the run store, response cache, prompts file and usage accounting
treat a system exactly as a model; :func:`read_task` is the inverse the system providers use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ideaharness.llm.types import Message

if TYPE_CHECKING:
    from ideaharness.systems.contract import IdeaContract

TASK_FORMAT = "ideaharness.task/1"
"""The ``format`` value of every task JSON; bumped when the task's shape changes."""


@dataclass(frozen=True)
class GenerationTask:
    """One generation call of a benchmark, as data.

    Attributes:
        benchmark: the benchmark's registry name (``"aiideabench"``); selects the idea contract.
        step: the recording step (``"generate"``, ``"generate/retrieval"``).
        instance_id: the unit id the benchmark records under.
        key: the record key within the instance (``""`` or ``"0"``, ``"1"``, ...).
        sample_index: the k-th independent task of this kind for the instance (0-based).
        inputs: exactly what the built-in generator is shown, as JSON-serialisable data (after
            selection, blinding and truncation).
        seed: the seed the built-in generator would get for this call.
    """

    benchmark: str
    step: str
    instance_id: str
    key: str = ""
    sample_index: int = 0
    inputs: dict[str, Any] = field(default_factory=dict)
    seed: int = 0

    @property
    def task_id(self) -> str:
        """``"<benchmark>/<step>/<instance_id>/<key>"``: unique within a run."""
        return f"{self.benchmark}/{self.step}/{self.instance_id}/{self.key}"

    def to_json(self, *, prompt: list[Message], contract: IdeaContract) -> dict[str, Any]:
        """The task JSON a system receives.

        Args:
            prompt: the fitted messages the built-in generator would be sent (for systems that
                want to reuse the benchmark's own prompt).
            contract: the benchmark's idea contract (its schema id and answer JSON Schema).

        Returns:
            ``{"format", "task_id", "benchmark", "contract", "step", "instance_id", "key",
            "sample_index", "seed", "inputs", "prompt", "answer_schema"}``.
        """
        return {
            "format": TASK_FORMAT,
            "task_id": self.task_id,
            "benchmark": self.benchmark,
            "contract": contract.schema_id,
            "step": self.step,
            "instance_id": self.instance_id,
            "key": self.key,
            "sample_index": self.sample_index,
            "seed": self.seed,
            "inputs": self.inputs,
            "prompt": [{"role": m["role"], "content": m["content"]} for m in prompt],
            "answer_schema": contract.json_schema(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GenerationTask:
        """The task of a task JSON (:meth:`to_json`'s output; ``prompt`` and the schema dropped).

        Raises:
            ValueError: ``data`` is no task JSON (wrong ``format``, a field missing or mistyped).
        """
        if not isinstance(data, dict) or data.get("format") != TASK_FORMAT:
            raise ValueError(f"not a task: 'format' is not {TASK_FORMAT!r}")
        try:
            task = cls(benchmark=str(data["benchmark"]), step=str(data["step"]),
                       instance_id=str(data["instance_id"]), key=str(data.get("key", "")),
                       sample_index=int(data.get("sample_index", 0)), inputs=dict(data.get("inputs") or {}),
                       seed=int(data.get("seed", 0)))
        except KeyError as exc:
            raise ValueError(f"task without field {exc.args[0]!r}") from None
        except (TypeError, ValueError) as exc:
            raise ValueError(f"task with a mistyped field ({exc})") from None
        return task


def task_message(task_json: dict[str, Any]) -> list[Message]:
    """The chat messages carrying a task: one user message whose content is the task JSON
    (``json.dumps(..., sort_keys=True, ensure_ascii=False)``, so equal tasks give equal cache keys)."""
    return [{"role": "user", "content": json.dumps(task_json, sort_keys=True, ensure_ascii=False)}]


def read_task(messages: list[Message]) -> dict[str, Any]:
    """The task JSON carried by ``messages`` (inverse of :func:`task_message`).

    Raises:
        ValueError: not exactly one user message holding a JSON object whose ``format`` is
            :data:`TASK_FORMAT` (a model prompt sent to a system by mistake).
    """
    if len(messages) != 1 or messages[0].get("role") != "user":
        raise ValueError("a system is sent one user message holding the task JSON, got "
                         f"{len(messages)} message(s)")
    try:
        data = json.loads(messages[0]["content"])
    except (json.JSONDecodeError, KeyError, TypeError) as exc:
        raise ValueError(f"the message is no task JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != TASK_FORMAT:
        raise ValueError(f"the message is no task JSON (format is not {TASK_FORMAT!r})")
    return data
