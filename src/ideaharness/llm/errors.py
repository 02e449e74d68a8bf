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
no run can continue past them. :func:`status_error` is that mapping of an endpoint's HTTP error
status, shared by the ``openai/`` and ``anthropic/`` providers.
"""

from __future__ import annotations

from ideaharness.errors import UserError
from ideaharness.net.retry import is_retryable_status


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


def status_error(status: int, detail: str, *, label: str, base_url: str, key_env: str, root_hint: str,
                 context_error: bool, retry_after_s: float | None) -> Exception:
    """The error an HTTP error reply of a model endpoint is raised as.

    Args:
        status: the HTTP status (>= 400).
        detail: the error's message, already redacted and shortened (:func:`short_detail`).
        label: the model as the run names it (``openai/gpt-4o``); base_url: the endpoint.
        key_env: the environment variable of the endpoint's key (``OPENAI_API_KEY``).
        root_hint: what ``--base-url`` should be, for a 404 (``it usually ends in /v1``).
        context_error: the reply says the prompt does not fit the model's context.
        retry_after_s: the reply's Retry-After, seconds (None: none sent).

    Returns:
        :class:`~ideaharness.errors.UserError` for 401/403 (the key) and 404 (model or URL);
        :class:`ContextLengthError` when ``context_error``; :class:`ProviderError` (retryable,
        with ``retry_after_s``) for 408, 429 and 5xx; else :class:`LLMError`.
    """
    if status in (401, 403):
        return UserError(f"{label}: the server at {base_url} refused the key (HTTP {status}); "
                         f"set a valid {key_env} in the environment")
    if status == 404:
        return UserError(f"{label}: not found at {base_url} (HTTP 404: {detail}); check the model name "
                         f"and --base-url ({root_hint})")
    if context_error:
        return ContextLengthError(f"{label}: prompt too long for the model's context: {detail}")
    if not is_retryable_status(status):
        return LLMError(f"{label}: HTTP {status} from {base_url}: {detail}")
    return ProviderError(f"HTTP {status}: {detail}", status=status, retryable=True,
                         retry_after_s=retry_after_s)


def short_detail(text: object, limit: int = 300) -> str:
    """``text`` on one line (runs of white space as one space), cut to ``limit`` characters ending
    in ``...`` when longer: an endpoint's error message as an error shows it."""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 3] + "..."
