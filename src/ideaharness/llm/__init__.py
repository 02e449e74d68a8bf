"""LLM layer: one :class:`LLM` façade over OpenAI-compatible endpoints and bundled local models.

>>> llm = get_llm("local/qwen2.5-coder-0.5b")          # doctest: +SKIP
>>> completion = await llm.chat([{"role": "user", "content": "Hi"}], max_tokens=16)  # doctest: +SKIP

Every call goes through the persistent response cache (:func:`default_cache_path`), a concurrency
limit, an optional requests-per-minute limit and bounded retries. Structured judgments go through
:func:`judge`.
"""

from ideaharness.llm.cache import ResponseCache, default_cache_dir, default_cache_path, default_models_dir
from ideaharness.llm.client import DEFAULT_MODEL, LLM, LLMStats, get_llm
from ideaharness.llm.errors import ContextLengthError, LLMError
from ideaharness.llm.judge import judge
from ideaharness.llm.local import LOCAL_MODELS
from ideaharness.llm.scripted import ScriptedModel
from ideaharness.llm.types import ChatModel, ChatRequest, Completion, Message, Usage

__all__ = [
    "DEFAULT_MODEL",
    "LLM",
    "LOCAL_MODELS",
    "ChatModel",
    "ChatRequest",
    "Completion",
    "ContextLengthError",
    "LLMError",
    "LLMStats",
    "Message",
    "ResponseCache",
    "ScriptedModel",
    "Usage",
    "default_cache_dir",
    "default_cache_path",
    "default_models_dir",
    "get_llm",
    "judge",
]
