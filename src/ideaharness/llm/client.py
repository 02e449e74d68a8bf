"""The :class:`LLM` façade every benchmark talks to, and :func:`get_llm`, which builds one.

``LLM.chat`` = request (the answer's cap plus the role's reasoning budget, the role's reasoning
effort) → cache lookup → budget admission (:class:`~ideaharness.llm.budget.RunBudget`, cache misses
only) → (semaphore + rate limiter, aiolimiter) → provider attempt → bounded retries with
exponential backoff and full jitter, honouring Retry-After (the shared
:class:`~ideaharness.net.retry.RetryPolicy`, on tenacity) → cost (:func:`~ideaharness.llm.pricing.cost_of`)
→ cache store → budget settlement. An identical request that is already in flight is awaited
rather than sent twice. Every reply, fresh or cached, has its reasoning separated from its answer
(:func:`~ideaharness.llm.reasoning.with_reasoning`); the cache keeps the reply as the provider gave it.

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
from ideaharness.llm.budget import RunBudget
from ideaharness.llm.cache import ResponseCache, default_cache_path, request_key
from ideaharness.llm.errors import LLMError, ProviderError
from ideaharness.llm.local import DEFAULT_LOCAL_MODEL
from ideaharness.llm.pricing import Price, cost_of
from ideaharness.llm.providers import Provider, ProviderSettings, build_provider
from ideaharness.llm.reasoning import with_reasoning
from ideaharness.llm.types import ChatRequest, Completion, Message
from ideaharness.net.ratelimit import rate_limiter
from ideaharness.net.retry import DEFAULT_RETRY_CAP_S, RetryPolicy
from ideaharness.redaction import redact

DEFAULT_MODEL = f"local/{DEFAULT_LOCAL_MODEL}"
DEFAULT_REASONING_BUDGET = 2048
"""Reasoning tokens added to every reply cap of a model behind an endpoint (``openai/``,
``anthropic/``) unless the role's ``--reasoning-budget`` says otherwise: enough for a reasoning model
to think before a short answer (o-series and R1-style judges spend a few hundred to two thousand
tokens on a grading question); a model that does not reason never uses it."""
ENDPOINT_PROVIDERS = frozenset({"openai", "anthropic"})
"""Providers whose models get :data:`DEFAULT_REASONING_BUDGET` by default (local models, scripted
models and systems get 0). A registered provider may set its own with a ``default_reasoning_budget``
attribute."""
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")
"""Values of ``--reasoning-effort`` (OpenAI's ``reasoning_effort``), sent as given."""


def default_reasoning_budget(model: str, provider: object | None = None) -> int:
    """The reasoning budget a role gets when none is given, tokens: the provider's
    ``default_reasoning_budget`` attribute when it has one, else :data:`DEFAULT_REASONING_BUDGET` for
    ``openai/`` and ``anthropic/`` models and 0 for everything else."""
    own = getattr(provider, "default_reasoning_budget", None)
    if isinstance(own, int) and not isinstance(own, bool):
        return own
    prefix, sep, _ = model.partition("/")
    return DEFAULT_REASONING_BUDGET if sep and prefix in ENDPOINT_PROVIDERS else 0


class LLMStats(BaseModel):
    """Counters of one :class:`LLM`.

    ``calls`` counts real provider attempts (retries included, cache hits excluded); ``cache_hits``
    counts answers from the cache or from an identical request already in flight; ``failures``
    counts requests that raised; ``retry_wait_s`` totals the seconds waited between attempts; token
    counts and ``cost_usd`` (USD, :func:`~ideaharness.llm.pricing.cost_of`) cover successful provider
    calls only, i.e. what was actually spent; ``wall_s`` sums the wall time of provider attempts.
    Token counts follow :class:`~ideaharness.llm.types.Usage`: ``cached_prompt_tokens`` is part of
    ``prompt_tokens``, ``reasoning_tokens`` part of ``completion_tokens``.
    """

    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    retry_wait_s: float = 0.0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Of ``prompt_tokens``, those read from the provider's prompt cache."""
    reasoning_tokens: int = 0
    """Of ``completion_tokens``, those spent reasoning."""
    cost_usd: float | None = None
    wall_s: float = 0.0
    """Seconds spent in provider attempts (every attempt, failed ones included; cache hits excluded)."""
    budget_refused: int = 0
    """Requests not sent because the run's budget would have been exceeded (also in ``failures``)."""


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
        price_per_mtok: (input, output) or (input, output, cached input) USD per million tokens,
            for ``cost_usd``; ignored when ``price`` is given.
        retry_cap_s: longest single wait between attempts (also caps Retry-After), seconds.
        backoff_base_s: base of the exponential backoff, seconds.
        retry_policy: the retry policy; default one built from ``max_retries``, ``backoff_base_s``
            and ``retry_cap_s`` (its jitter is unseeded: it never affects results).
        reasoning_budget: tokens added to every reply cap a caller asks for (the caller's cap is
            what the answer needs; a reasoning model spends the rest thinking), >= 0. A provider
            with a ``reasoning_budget`` attribute gets it set too (Anthropic names the thinking
            budget in the request).
        reasoning_effort: sent as the request's ``reasoning_effort`` (:data:`REASONING_EFFORTS`), or
            None to send none.
        price: the model's price (:class:`~ideaharness.llm.pricing.Price`); None: no cost is computed
            (``stats.cost_usd`` None) and calls cost 0 against a budget.
        budget: the run's budget, shared by every client of the process; None: no limit.

    Raises:
        UserError: a negative reasoning budget or an unknown reasoning effort.
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
        reasoning_budget: int = 0,
        reasoning_effort: str | None = None,
        price: Price | None = None,
        budget: RunBudget | None = None,
    ) -> None:
        if reasoning_budget < 0:
            raise UserError(f"{model}: the reasoning budget must be >= 0 tokens, got {reasoning_budget}")
        if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
            raise UserError(f"{model}: reasoning effort {reasoning_effort!r} is not one of "
                            f"{', '.join(REASONING_EFFORTS)}")
        self.model = model
        self.provider = provider
        self.base_url = base_url
        self.cache = cache
        self.max_concurrency = max_concurrency
        self.rpm = rpm
        self.retry_policy = retry_policy or RetryPolicy(
            max_retries=max_retries, base_s=backoff_base_s, cap_s=retry_cap_s
        )
        self.price: Price | None = price if price is not None else Price.of(price_per_mtok)
        self.reasoning_budget = reasoning_budget
        self.reasoning_effort = reasoning_effort
        if hasattr(provider, "reasoning_budget"):  # a provider that must name it (Anthropic thinking)
            provider.reasoning_budget = reasoning_budget
        self.budget = budget
        self.stats = LLMStats(cost_usd=0.0 if self.price is not None else None)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._limiter: AsyncLimiter | None = None
        self._inflight: dict[str, asyncio.Future[Completion]] = {}
        self._storing = 0  # calls of _inflight whose reply is being stored in the cache

    def __repr__(self) -> str:
        return f"LLM(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def price_per_mtok(self) -> tuple[float, ...] | None:
        """The price as ``(IN, OUT)`` or ``(IN, OUT, CACHED_IN)`` USD per million tokens, or None."""
        return self.price.as_tuple() if self.price is not None else None

    @property
    def notes(self) -> list[str]:
        """Lines on changes the provider made to fit its endpoint (a refused ``max_tokens``,
        ``temperature``, ``response_format``: :attr:`OpenAIProvider.notes`), oldest first; [] when none."""
        return list(getattr(self.provider, "notes", None) or [])

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

    def request(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        top_p: float | None = None,
        max_tokens: int | None = 1024,
        seed: int | None = 0,
        json_schema: dict[str, Any] | None = None,
        sample_index: int = 0,
    ) -> ChatRequest:
        """The :class:`ChatRequest` that :meth:`chat` sends for these arguments (and whose
        :func:`~ideaharness.llm.cache.request_key` is its cache key; batch mode builds it here too).

        ``max_tokens`` is the cap the answer needs; the request's cap is ``max_tokens +
        reasoning_budget`` tokens (None stays None: no cap is sent). ``reasoning_effort`` is the
        client's.
        """
        return ChatRequest(
            model=self.model,
            messages=[{"role": m["role"], "content": m["content"]} for m in messages],
            temperature=temperature,
            top_p=top_p,
            max_tokens=None if max_tokens is None else max_tokens + self.reasoning_budget,
            seed=seed,
            json_schema=json_schema,
            sample_index=sample_index,
            reasoning_effort=self.reasoning_effort,
        )

    async def chat(
        self,
        messages: list[Message],
        *,
        temperature: float = 0.0,
        top_p: float | None = None,
        max_tokens: int | None = 1024,
        seed: int | None = 0,
        json_schema: dict[str, Any] | None = None,
        sample_index: int = 0,
    ) -> Completion:
        """One completion, from the cache when the identical request was made before.

        ``max_tokens`` is the cap the answer needs (tokens; None: no cap sent); the client adds its
        reasoning budget (:meth:`request`). The reply's reasoning is separated from its answer
        (``text`` = answer, ``reasoning``, ``raw_text``, ``truncated_reasoning``).

        Raises:
            BudgetExceeded: the run's budget would be exceeded by this cache miss (nothing sent).
            LLMError: the provider failed after ``max_retries`` retries, or with a non-retryable error.
            ContextLengthError: the prompt does not fit the model's context.
            UserError: authentication or configuration problems.
        """
        request = self.request(messages, temperature=temperature, top_p=top_p, max_tokens=max_tokens,
                               seed=seed, json_schema=json_schema, sample_index=sample_index)
        key = request_key(request, self.base_url)
        semaphore, limiter = self._loop_state()
        if self.cache is not None:  # a primary-key read in this thread (WAL readers never wait)
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cache_hits += 1
                return with_reasoning(hit)
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
            completion = await self._call_within_budget(request, semaphore, limiter)
            if self.cache is not None:  # stored as the provider gave it (split again when read),
                self._storing += 1  # group-committed by the cache's writer, with the replies of the
                try:  # calls still waiting for theirs (in flight and not storing)
                    await self.cache.aput(key, request, completion,
                                          siblings=len(self._inflight) - self._storing)
                finally:
                    self._storing -= 1
            completion = with_reasoning(completion)
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

    async def _call_within_budget(
        self, request: ChatRequest, semaphore: asyncio.Semaphore, limiter: AsyncLimiter | None
    ) -> Completion:
        """:meth:`_call_with_retries` admitted by the run's budget and settled with what it spent
        (0 when it failed). Raises BudgetExceeded (nothing sent) when the budget would be exceeded."""
        if self.budget is None:
            return await self._call_with_retries(request, semaphore, limiter)
        estimate_usd, estimate_tokens = self.budget.estimate(request, self.price)
        try:
            reservation = self.budget.admit(estimate_usd, estimate_tokens, model=self.model)
        except LLMError:
            self.stats.failures += 1
            self.stats.budget_refused += 1
            raise
        spent_usd, spent_tokens = 0.0, 0
        try:
            completion = await self._call_with_retries(request, semaphore, limiter)
            spent_usd = completion.cost_usd or 0.0
            spent_tokens = completion.usage.prompt_tokens + completion.usage.completion_tokens
            return completion
        finally:
            self.budget.settle(reservation, spent_usd, spent_tokens)

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
        return self.account(completion)

    def account(self, completion: Completion) -> Completion:
        """Count a provider reply's tokens in :attr:`stats` (and its cost when priced) and return
        it with ``cost_usd`` set (:func:`~ideaharness.llm.pricing.cost_of`, USD) when the client has a
        price. For replies that came another way than :meth:`chat` (a batch's output lines); the
        run's budget is charged by the caller (:meth:`~ideaharness.llm.budget.RunBudget.charge`)."""
        usage = completion.usage
        self.stats.prompt_tokens += usage.prompt_tokens
        self.stats.completion_tokens += usage.completion_tokens
        self.stats.cached_prompt_tokens += usage.cached_prompt_tokens
        self.stats.reasoning_tokens += usage.reasoning_tokens
        if self.price is not None:
            cost = cost_of(usage, self.price)
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
    price_per_mtok: Price | tuple[float, ...] | None = None,
    n_ctx: int = 8192,
    models_dir: Path | str | None = None,
    backoff_base_s: float = 1.0,
    retry_cap_s: float = DEFAULT_RETRY_CAP_S,
    reasoning_budget: int | None = None,
    reasoning_effort: str | None = None,
    budget: RunBudget | None = None,
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
        price_per_mtok: ``(IN, OUT)`` or ``(IN, OUT, CACHED_IN)`` USD per million tokens, or a
            :class:`~ideaharness.llm.pricing.Price`; enables ``stats.cost_usd``.
        n_ctx: context window of local models, tokens.
        models_dir: where local GGUF files are assembled (default :func:`default_models_dir`).
        reasoning_budget: tokens added to every reply cap (``--reasoning-budget``), >= 0; None: the
            default, :func:`default_reasoning_budget` (2048 for ``openai/`` and ``anthropic/``, 0
            for local and scripted models and systems).
        reasoning_effort: the request's ``reasoning_effort`` (:data:`REASONING_EFFORTS`), or None.
        budget: the run's :class:`~ideaharness.llm.budget.RunBudget` (shared by the run's clients).

    Raises:
        UserError: unknown provider/model, ``base_url`` for a provider without endpoints, bad
            limits, a price that is not 2 or 3 non-negative numbers, a negative reasoning budget, an
            unknown reasoning effort, or ``openai/`` without a key for a non-loopback endpoint.
    """
    if max_concurrency < 1:
        raise UserError(f"max_concurrency must be >= 1, got {max_concurrency}")
    if max_retries < 0:
        raise UserError(f"--max-retries must be >= 0, got {max_retries}")
    if not timeout_s > 0:
        raise UserError(f"--timeout must be > 0 seconds, got {timeout_s:g}")
    if rpm is not None and rpm <= 0:
        raise UserError(f"rpm must be > 0, got {rpm}")
    try:
        price = Price.of(price_per_mtok)
    except ValueError as exc:  # pydantic's ValidationError is a ValueError
        raise UserError(f"{model}: bad price {price_per_mtok!r}: IN,OUT[,CACHED_IN] are USD per million "
                        f"tokens, each >= 0 ({str(exc).splitlines()[0]})") from None
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
        price=price,
        retry_cap_s=retry_cap_s,
        backoff_base_s=backoff_base_s,
        reasoning_budget=(default_reasoning_budget(model, provider) if reasoning_budget is None
                          else reasoning_budget),
        reasoning_effort=reasoning_effort,
        budget=budget,
    )
