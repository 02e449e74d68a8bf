"""Errors of the LLM layer.

* :class:`LLMError`: a model call failed for good (retries exhausted, or a non-retryable reply such as
  HTTP 400). A run may catch it and record the failure for the item; the CLI prints it on one line.
* :class:`MissingAnswer`: a system (an ``ideas:`` file) holds no answer for the task; that unit fails.
* :class:`BudgetExceeded`: the run's ``--max-cost`` / ``--max-tokens`` budget would be exceeded;
  the unit is not started.
* :class:`ContextLengthError`: the prompt plus ``max_tokens`` does not fit the model's context; the
  caller truncates its inputs and tries again.
* :class:`ProviderError`: raised by a provider for one attempt; the :class:`~ideaharness.llm.LLM`
  façade retries it when ``retryable`` and turns it into :class:`LLMError` otherwise.

Authentication problems (HTTP 401/403, missing key) are plain :class:`~ideaharness.errors.UserError`:
no run can continue past them.
"""

from __future__ import annotations

from ideaharness.errors import UserError


class LLMError(UserError):
    """A model call that failed for good; the message names the model, the cause and the attempts."""


class MissingAnswer(LLMError):
    """A system has no answer for a task (an ``ideas:`` file without the instance): that unit
    fails, is listed with this message, and does not count toward the run's stop after repeated
    failures (an outage); ``retryable`` and ``outage`` are False. ``instance_id`` is the task's
    instance id (which may differ from the unit's record id), or None."""

    retryable = False
    outage = False

    def __init__(self, message: str, *, instance_id: str | None = None) -> None:
        super().__init__(message)
        self.instance_id = instance_id


class BudgetExceeded(LLMError):
    """A provider call was not started because the run's budget (``--max-cost`` USD,
    ``--max-tokens``) would be exceeded by what is spent plus what is in flight. The unit is left
    undone (listed with status ``"budget"``), does not count toward the stop after repeated
    failures, and a re-run with a larger budget asks it. ``retryable`` and ``outage`` are False."""

    retryable = False
    outage = False


class ContextLengthError(LLMError):
    """The prompt does not fit: ``prompt_tokens + max_tokens > n_ctx`` (tokens; -1 where unknown)."""

    def __init__(
        self, message: str, *, prompt_tokens: int = -1, max_tokens: int = -1, n_ctx: int = -1
    ) -> None:
        super().__init__(message)
        self.prompt_tokens = prompt_tokens
        self.max_tokens = max_tokens
        self.n_ctx = n_ctx


class ProviderError(Exception):
    """One failed provider attempt.

    Attributes:
        status: HTTP status when there was a reply, else None (timeout, connection error).
        retryable: True for 429, 5xx, timeouts and connection errors.
        retry_after_s: the server's Retry-After in seconds (already parsed), or None.
    """

    def __init__(
        self, message: str, *, status: int | None = None, retryable: bool, retry_after_s: float | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after_s = retry_after_s
