"""Idea-generation *systems* measured on every benchmark (docs/systems.md).

A system is anything that answers a generation task (JSON, :mod:`ideaharness.systems.task`) with an
answer (JSON, checked by the benchmark's :mod:`idea contract <ideaharness.systems.contract>`). It is
named where a model string goes: ``ideas:FILE`` (answers from a file, converted from native formats
by :mod:`ideaharness.systems.converters`), ``cmd:COMMAND ARGS`` (a program per task) or
``http(s)://...`` (a service); :mod:`ideaharness.systems.adapters` makes each a provider of the
:class:`~ideaharness.llm.LLM` façade, so systems are recorded, cached, retried and counted like models.

Layer: ``systems`` sits with the clients (``llm``): it imports ``llm`` and the base layer only;
``llm.providers`` imports its adapters inside the provider factories; benchmarks fill the
contract registry at import.
"""

from ideaharness.systems.config import SystemFields
from ideaharness.systems.contract import IdeaAnswer, IdeaContract, contracts, get_contract, register_contract
from ideaharness.systems.spec import SystemKind, default_system_name, is_system, system_kind
from ideaharness.systems.task import TASK_FORMAT, GenerationTask, read_task, task_message

__all__ = ["TASK_FORMAT", "GenerationTask", "IdeaAnswer", "IdeaContract", "SystemFields", "SystemKind",
           "contracts", "default_system_name", "get_contract", "is_system", "read_task",
           "register_contract", "system_kind", "task_message"]
