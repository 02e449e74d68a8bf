"""The :class:`LLM` façade every benchmark talks to, and :func:`get_llm`, which builds one.

``LLM.chat`` = cache lookup → (semaphore + rate limiter, aiolimiter) → provider attempt → bounded
retries with exponential backoff and full jitter, honouring Retry-After (the shared
:class:`~ideaharness.net.retry.RetryPolicy`, on tenacity) → cache store. An identical request that
is already in flight is awaited rather than sent twice.

Whatever goes wrong in one attempt is that attempt's failure, never the run's: a retryable
:class:`~ideaharness.llm.errors.ProviderError` (429, 5xx, timeout, connection, malformed body) and
any unexpected exception a provider raises are retried up to ``max_retries`` times and then raised
as one :class:`~ideaharness.llm.errors.LLMError`; only configuration problems
(:class:`~ideaharness.errors.UserError`: key refused, unknown model, prompt too long) end the call
at once.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from aiolimiter import AsyncLimiter
from pydantic import BaseModel

from ideaharness.errors import UserError
from ideaharness.llm.cache import ResponseCache, default_cache_path, request_key
from ideaharness.llm.errors import LLMError, ProviderError
from ideaharness.llm.local import DEFAULT_LOCAL_MODEL
from ideaharness.llm.providers import Provider, ProviderSettings, build_provider
from ideaharness.llm.types import ChatRequest, Completion, Message
from ideaharness.net.ratelimit import rate_limiter
from ideaharness.net.retry import DEFAULT_RETRY_CAP_S, RetryPolicy
from ideaharness.redaction import redact

DEFAULT_MODEL = f"local/{DEFAULT_LOCAL_MODEL}"


class LLMStats(BaseModel):
    """Counters of one :class:`LLM`.

    ``calls`` counts real provider attempts (retries included, cache hits excluded); ``cache_hits``
    counts answers from the cache or from an identical request already in flight; ``failures``
    counts requests that raised; ``retry_wait_s`` totals the seconds waited between attempts; token
    counts and ``cost_usd`` cover successful provider calls only, i.e. what was actually spent;
    ``wall_s`` sums the wall time of provider attempts.
    """

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    retry_wait_s: float = 0.0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    wall_s: float = 0.0
    """Seconds spent in provider attempts (every attempt, failed ones included; cache hits excluded)."""


class LLM:
    """A model behind cache, concurrency limit, rate limit and bounded retries; a ChatModel.

    Args:
        model: full model string, e.g. ``openai/gpt-4o-mini`` or ``local/qwen2.5-coder-0.5b``.
        provider: the backend.
        base_url: the endpoint (part of the cache key); None for local models.
        cache: the response cache, or None to bypass reads and writes.
        max_concurrency: provider calls in flight at once, >= 1.
        rpm: requests per minute (every attempt counts), or None for no limit.
        max_retries: retries after the first attempt, >= 0.
        price_per_mtok: (input, output) USD per million tokens, for ``cost_usd``.
        retry_cap_s: longest single wait between attempts (also caps Retry-After), seconds.
        backoff_base_s: base of the exponential backoff, seconds.
        retry_policy: the retry policy; default one built from ``max_retries``, ``backoff_base_s``
            and ``retry_cap_s`` (its jitter is unseeded: it never affects results).
    """

    def __init__(
        self,
        model: str,
        provider: Provider,
        *,
        base_url: str | None = None,
        cache: ResponseCache | None = None,
        max_concurrency: int = 4,
        rpm: float | None = None,
        max_retries: int = 6,
        price_per_mtok: tuple[float, float] | None = None,
        retry_cap_s: float = DEFAULT_RETRY_CAP_S,
        backoff_base_s: float = 1.0,
        retry_policy: RetryPolicy | None = None,
    ) -> None:
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self.cache = cache
        self.max_concurrency = max_concurrency
        self.rpm = rpm
        self.retry_policy = retry_policy or RetryPolicy(
            max_retries=max_retries, base_s=backoff_base_s, cap_s=retry_cap_s
        )
        self.price_per_mtok = price_per_mtok
        self.stats = LLMStats(cost_usd=0.0 if price_per_mtok else None)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._limiter: AsyncLimiter | None = None
        self._inflight: dict[str, asyncio.Future[Completion]] = {}

    def __repr__(self) -> str:
        return f"LLM(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def max_retries(self) -> int:
        """Retries after the first attempt (``--max-retries``), from the retry policy."""
        return self.retry_policy.max_retries

    def _loop_state(self) -> tuple[asyncio.Semaphore, AsyncLimiter | None]:
        # asyncio primitives bind to one event loop; rebuild them when used from a new loop.
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._semaphore is None:
            self._loop = loop
            self._semaphore = asyncio.Semaphore(self.max_concurrency)
            self._limiter = rate_limiter(self.rpm) if self.rpm else None
            self._inflight = {}
        return self._semaphore, self._limiter

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        top_p: float | None = None,
        max_tokens: int = 1024,
        seed: int | None = 0,
        json_schema: dict[str, Any] | None = None,
        sample_index: int = 0,
    ) -> Completion:
        """One completion, from the cache when the identical request was made before.

        Raises:
            LLMError: the provider failed after ``max_retries`` retries, or with a non-retryable error.
            ContextLengthError: the prompt does not fit the model's context.
            UserError: authentication or configuration problems.
        """
        request = ChatRequest(
            model=self.model,
            messages=[{"role": m["role"], "content": m["content"]} for m in messages],
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            seed=seed,
            json_schema=json_schema,
            sample_index=sample_index,
        )
        key = request_key(request, self.base_url)
        semaphore, limiter = self._loop_state()
        if self.cache is not None:
            hit = await asyncio.to_thread(self.cache.get, key)
            if hit is not None:
                self.stats.cache_hits += 1
                return hit
        pending = self._inflight.get(key)
        if pending is not None:  # the same request is on its way: share its answer
            try:
                result = await asyncio.shield(pending)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if pending.cancelled() and task is not None and not task.cancelling():
                    # the task that owned the call was cancelled, not us: make the call ourselves
                    return await self.chat(
                        messages,
                        temperature=temperature,
                        top_p=top_p,
                        max_tokens=max_tokens,
                        seed=seed,
                        json_schema=json_schema,
                        sample_index=sample_index,
                    )
                raise
            self.stats.cache_hits += 1
            return result.model_copy(update={"cached": True})
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            completion = await self._call_with_retries(request, semaphore, limiter)
            if self.cache is not None:
                await asyncio.to_thread(self.cache.put, key, request, completion)
            future.set_result(completion)
            return completion
        except asyncio.CancelledError:
            future.cancel()
            raise
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # mark retrieved: waiters re-raise it, nobody else must
            raise
        finally:
            self._inflight.pop(key, None)

    async def _call_with_retries(
        self, request: ChatRequest, semaphore: asyncio.Semaphore, limiter: AsyncLimiter | None
    ) -> Completion:
        """One completion through the shared :class:`~ideaharness.net.retry.RetryPolicy`.

        Every attempt takes a concurrency slot and a rate-limit token; waits between attempts hold
        neither. Retryable :class:`ProviderError` s and unexpected exceptions are retried; a
        non-retryable provider error, a :class:`UserError` or exhausted retries raise.
        """

        async def attempt() -> Completion:
            async with semaphore:
                if limiter is not None:
                    await limiter.acquire()
                self.stats.calls += 1
                started = time.perf_counter()
                try:
                    return await self.provider.complete(request)
                except (ProviderError, UserError):
                    raise
                except Exception as exc:  # anything else is this attempt's failure, retried
                    raise ProviderError(
                        redact(f"unexpected {type(exc).__name__} from the provider: {exc}"), retryable=True
                    ) from exc
                finally:
                    self.stats.wall_s += time.perf_counter() - started

        def on_retry(_exc: BaseException, wait_s: float) -> None:
            self.stats.retries += 1
            self.stats.retry_wait_s += wait_s

        try:
            completion = await self.retry_policy.call(
                attempt, retryable=lambda exc: isinstance(exc, ProviderError) and exc.retryable,
                on_retry=on_retry,
            )
        except ProviderError as exc:
            self.stats.failures += 1
            if not exc.retryable:
                raise LLMError(redact(f"{self.model}: {exc}")) from exc
            raise LLMError(
                redact(
                    f"{self.model}: gave up after {self.max_retries + 1} attempts "
                    f"({self.max_retries} retries); last error: {exc}"
                )
            ) from exc
        except UserError:  # key refused, unknown model, prompt too long: no retry helps
            self.stats.failures += 1
            raise
        return self._account(completion)

    def _account(self, completion: Completion) -> Completion:
        self.stats.prompt_tokens += completion.usage.prompt_tokens
        self.stats.completion_tokens += completion.usage.completion_tokens
        if self.price_per_mtok is not None:
            price_in, price_out = self.price_per_mtok
            usage = completion.usage
            cost = (usage.prompt_tokens * price_in + usage.completion_tokens * price_out) / 1e6
            self.stats.cost_usd = (self.stats.cost_usd or 0.0) + cost
            completion = completion.model_copy(update={"cost_usd": cost})
        return completion

    async def aclose(self) -> None:
        """Close the provider's connections and the cache."""
        await self.provider.aclose()
        if self.cache is not None:
            self.cache.close()


def get_llm(
    model: str = DEFAULT_MODEL,
    *,
    base_url: str | None = None,
    cache_path: Path | str | None = None,
    use_cache: bool = True,
    max_concurrency: int = 4,
    rpm: float | None = None,
    max_retries: int = 6,
    timeout_s: float = 300,
    price_per_mtok: tuple[float, float] | None = None,
    n_ctx: int = 8192,
    models_dir: Path | str | None = None,
    backoff_base_s: float = 1.0,
    retry_cap_s: float = DEFAULT_RETRY_CAP_S,
) -> LLM:
    """Build the :class:`LLM` for a model string ``provider/model``.

    Args:
        model: ``provider/model``: ``openai/<model>``, ``local/qwen2.5-coder-1.5b`` (default) /
            ``local/qwen2.5-coder-0.5b``, a system spec (``ideas:FILE``, ``cmd:COMMAND``,
            ``http(s)://URL``: :mod:`ideaharness.systems.adapters`), or any provider registered with
            :func:`~ideaharness.llm.providers.register_provider` (or the ``ideaharness.providers``
            entry-point group).
        base_url: OpenAI-compatible endpoint (default: env OPENAI_BASE_URL, else api.openai.com).
            The key comes from env OPENAI_API_KEY only; optional for a loopback endpoint.
        cache_path: SQLite cache file (default :func:`default_cache_path`).
        use_cache: False bypasses cache reads and writes (``--no-cache``); a provider whose
            ``cacheable`` attribute is False (an ``ideas:`` file) never gets a cache.
        max_concurrency: provider calls in flight at once (the local model runs one at a time anyway).
        rpm: requests-per-minute limit, or None.
        max_retries: retries after the first attempt on 429/5xx/timeouts/connection errors and
            malformed replies (``--max-retries``), >= 0.
        timeout_s: per-attempt timeout of OpenAI-compatible endpoints (``--timeout``), seconds, > 0.
        price_per_mtok: (input, output) USD per million tokens; enables ``stats.cost_usd``.
        n_ctx: context window of local models, tokens.
        models_dir: where local GGUF files are assembled (default :func:`default_models_dir`).

    Raises:
        UserError: unknown provider/model, ``base_url`` for a provider without endpoints, bad
            limits, or ``openai/`` without a key for a non-loopback endpoint.
    """
    if max_concurrency < 1:
        raise UserError(f"max_concurrency must be >= 1, got {max_concurrency}")
    if max_retries < 0:
        raise UserError(f"--max-retries must be >= 0, got {max_retries}")
    if not timeout_s > 0:
        raise UserError(f"--timeout must be > 0 seconds, got {timeout_s:g}")
    if rpm is not None and rpm <= 0:
        raise UserError(f"rpm must be > 0, got {rpm}")
    settings = ProviderSettings(base_url=base_url, timeout_s=timeout_s, n_ctx=n_ctx,
                                models_dir=Path(models_dir) if models_dir else None)
    provider: Provider = build_provider(model, settings)
    resolved_url: str | None = getattr(provider, "base_url", None)
    cacheable = bool(getattr(provider, "cacheable", True))  # an ideas: file is its own cache
    cache = (ResponseCache(Path(cache_path) if cache_path else default_cache_path())
             if use_cache and cacheable else None)
    return LLM(
        model,
        provider,
        base_url=resolved_url,
        cache=cache,
        max_concurrency=max_concurrency,
        rpm=rpm,
        max_retries=max_retries,
        price_per_mtok=price_per_mtok,
        retry_cap_s=retry_cap_s,
        backoff_base_s=backoff_base_s,
    )
