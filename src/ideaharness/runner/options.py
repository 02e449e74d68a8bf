"""How a run executes: the options every ``ideaharness run <benchmark>`` command and
``ideaharness.run(...)`` share, declared once (the CLI flags are generated from this model).

None of them blocks a resume; all are recorded under ``settings`` in ``results.json`` (no
secrets: keys come from the environment only). The token settings (``--reasoning-effort``,
``--reasoning-budget``) change the requests a resume sends from then on, not the judgments already
recorded; the budgets (``--max-cost``, ``--max-tokens``) count the spend of every process of the
run, so a resume with a larger budget goes on where the smaller one stopped.

Per-role options (``--price``, ``--reasoning-effort``, ``--reasoning-budget``) take ``VALUE`` (every
role) or ``ROLE=VALUE`` (one role; repeat the flag): a role's own value wins over its kind's
(``judge`` for ``judge:<model>``), which wins over the all-roles value (:func:`role_value`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ideaharness.errors import UserError
from ideaharness.net.urls import check_base_url

if TYPE_CHECKING:
    from ideaharness.metrics.embedding_store import EmbeddingRuntime

LEGACY_NAMES = {"use_cache": "no_cache", "timeout_s": "timeout", "price_per_mtok": "price"}
"""Earlier Python names of options -> their field (``use_cache`` is negated)."""

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")
"""Values of ``--reasoning-effort``, sent as the request's ``reasoning_effort`` (OpenAI's names;
providers without the parameter map or drop it)."""

AUTO = "auto"
"""``--reasoning-budget ROLE=auto``: the provider's default budget for that role (see
:func:`~ideaharness.llm.get_llm`), also where an all-roles number is given."""

PriceTuple = tuple[float, float] | tuple[float, float, float]
"""(input, output) or (input, output, cached input) USD per million tokens."""


class ExecutionOptions(BaseModel):
    """How a run executes. Field names are the CLI flags (``max_concurrency`` -> ``--max-concurrency``).

    One model call waits at most about ``(max_retries + 1) * timeout`` seconds plus the backoff
    between attempts. Selection: ``shard`` first, then ``limit`` (see :func:`select_items`).
    """

    model_config = ConfigDict(extra="forbid")

    out: Path | None = Field(None, description="Run directory; the same command again resumes "
                             "(default runs/<benchmark>).")
    limit: int | None = Field(None, ge=1, description="Use the first N instances (after --shard).")
    shard: tuple[int, int] | None = Field(None, description="i/N: run only shard i (0-based) of N: "
                                          "the instances with sha256(id) mod N == i.")
    base_url: str | None = Field(None, description="Endpoint of the generator's provider (openai/: any "
                                 "OpenAI-compatible server; else OPENAI_BASE_URL).")
    judge_base_url: str | None = Field(None, description="Endpoint of the judge, if different "
                                       "(default --base-url).")
    max_concurrency: int = Field(4, ge=1, description="Model calls in flight at once, per model.")
    rpm: float | None = Field(None, gt=0, description="Requests-per-minute limit, per model.")
    no_cache: bool = Field(False, description="Bypass the LLM response cache (reads and writes).")
    cache_path: Path | None = Field(None, description="Response cache file (default "
                                    "$IDEAHARNESS_CACHE_DIR/llm-cache.sqlite).")
    price: dict[str, PriceTuple] | None = Field(
        None, json_schema_extra={"repeatable": True},
        description="IN,OUT[,CACHED_IN]: USD per million prompt, completion (reasoning included) and "
        "cached prompt tokens (default IN) for every role, or ROLE=IN,OUT[,CACHED_IN] for one role "
        "(generator, judge, or any other role of the run; repeat the flag); reports cost in results "
        "and report, a resume pricing every recorded token.")
    reasoning_effort: dict[str, str] | None = Field(
        None, json_schema_extra={"repeatable": True},
        description="EFFORT or ROLE=EFFORT: the reasoning effort sent to reasoning models (every role, "
        "or one; repeat the flag); one of " + ", ".join(REASONING_EFFORTS) + ". Default: none sent.")
    reasoning_budget: dict[str, int | None] | None = Field(
        None, json_schema_extra={"repeatable": True},
        description="N or ROLE=N: tokens a role may spend reasoning, added to every cap a benchmark "
        "asks for its answer (every role, or one; repeat the flag; ROLE=auto for the default). "
        "Default auto: 2048 for endpoint models (openai/, anthropic/), 0 for local models and "
        "systems, and 0 under --parity.")
    max_cost: float | None = Field(None, gt=0, description="USD budget of the run, over every process "
                                   "that worked on it: no model call starts once the spent plus the "
                                   "in-flight estimate would exceed it; the units left are listed "
                                   "(exit 3) and a re-run with a larger budget resumes. Needs "
                                   "--price for every endpoint role.")
    max_tokens: int | None = Field(None, ge=1, description="Token budget of the run (prompt plus "
                                   "completion tokens, reasoning included, of every process), "
                                   "enforced like --max-cost. Not a reply's cap: those are the "
                                   "benchmark's *_max_tokens.")
    rejudge_changed: bool = Field(False, description="When prompt templates or reply parsers changed "
                                  "since judgments were recorded, re-judge only the affected units "
                                  "(default: refuse, naming what changed).")
    model_cutoff: dict[str, str] | None = Field(
        None, json_schema_extra={"repeatable": True},
        description="DATE or ROLE=DATE (YYYY-MM-DD, or 'unknown'): the training-data cutoff of a role's "
        "model, for the leakage block (every role, or one; repeat the flag); default: the provider's "
        "stated cutoff from the table in docs/runs.md, else unknown.")
    timeout: float = Field(300.0, gt=0, description="Seconds one attempt at a model endpoint may take "
                           "(also bounds Semantic Scholar requests, at most 30 s).")
    max_retries: int = Field(6, ge=0, description="Retries of a failed model call (429, 5xx, timeout, "
                             "connection, malformed reply) before its unit counts as failed.")
    max_attempts: int = Field(3, ge=1, le=10, description="Tries per judgment when a reply does not "
                              "parse; then it is counted as a parse failure.")
    force: bool = Field(False, description="If --out holds a run with other settings or changed input "
                        "files, move it to --out/superseded/ and start anew (default: refuse).")
    progress: bool = Field(True, description="Show progress bars.")
    consistency_sample: float = Field(0.1, ge=0.0, le=1.0, description="Share F of the judgments "
                                      "that show items in an order (rankings, pairs, choices) re-asked "
                                      "with the items permuted (seeded) to measure the judge's position "
                                      "consistency; 0 disables. Re-asks are cached and counted, never "
                                      "scored. Refused by a benchmark without such judgments.")
    consistency_sample_applies: bool | str = Field(True, json_schema_extra={"cli": False}, description=(
        "Set by the runner: True, or why --consistency-sample does not apply to the benchmark "
        "(its value is then 0)."))
    batch: bool = Field(False, description="Send each phase's uncached requests of openai/ models "
                        "through the OpenAI Batch API (about half price; answers within 24 h); the batch "
                        "ids are kept in the run directory, so re-running re-attaches (docs/scale.md).")
    batch_poll: float = Field(30.0, gt=0, description="Seconds between two checks of a running batch "
                              "(--batch).")
    device: Literal["cpu", "cuda", "auto"] = Field("cpu", description="Where BERTScore and sentence "
                                                   "embeddings are computed: cpu, cuda (a GPU seen by "
                                                   "torch; else refused) or auto (cuda when torch sees "
                                                   "one). GPU values differ from CPU values in the last "
                                                   "digits (about 1e-6).")
    no_embedding_cache: bool = Field(False, description="Embed every text again: neither read nor write "
                                     "the embedding store ($IDEAHARNESS_CACHE_DIR/embeddings.sqlite).")
    runner: Literal["local", "ray"] = Field("local", description="Where instances run: this process, or "
                                            "a Ray cluster (pip install 'ideaharness[ray]').")
    ray_address: str | None = Field(None, description="Ray cluster address for --runner ray "
                                    "(ray://host:10001, auto); default a local Ray instance.")

    @model_validator(mode="before")
    @classmethod
    def _legacy_names(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = dict(data)
            for old, new in LEGACY_NAMES.items():
                if old in data:
                    value = data.pop(old)
                    data[new] = (not value) if old == "use_cache" else value
        return data

    @field_validator("shard", mode="before")
    @classmethod
    def _shard(cls, value: Any) -> Any:
        return parse_shard(value) if isinstance(value, str) else value

    @field_validator("base_url", "judge_base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return check_base_url(value) if value is not None else None

    @field_validator("price", mode="before")
    @classmethod
    def _price(cls, value: Any) -> Any:
        return parse_prices(value)

    @field_validator("reasoning_effort", mode="before")
    @classmethod
    def _effort(cls, value: Any) -> Any:
        return parse_role_map(value, flag="--reasoning-effort", parse_one=parse_effort,
                              example="high or judge=low")

    @field_validator("reasoning_budget", mode="before")
    @classmethod
    def _budget(cls, value: Any) -> Any:
        return parse_role_map(value, flag="--reasoning-budget", parse_one=parse_reasoning_budget,
                              example="2048 or judge=0", scalar=(int,))

    @field_validator("model_cutoff", mode="before")
    @classmethod
    def _model_cutoff(cls, value: Any) -> Any:
        return parse_role_map(value, flag="--model-cutoff", parse_one=_parse_model_cutoff,
                              example="2023-10-01 or generator=2024-06-01")

    @model_validator(mode="after")
    def _check(self) -> ExecutionOptions:
        if self.shard is not None:
            index, count = self.shard
            if count < 1 or not 0 <= index < count:
                raise UserError(f"--shard {index}/{count}: need 0 <= i < N")
        if self.ray_address is not None and self.runner != "ray":
            raise UserError("--ray-address applies to --runner ray only")
        if self.batch and self.runner == "ray":
            raise UserError("--batch and --runner ray do not combine: a batch already runs on the "
                            "provider's machines")
        for role, price in (self.price or {}).items():
            if min(price) < 0:
                raise UserError(f"--price {_role_text(role)}{','.join(f'{p:g}' for p in price)}: prices "
                                "cannot be negative")
        if self.runner == "ray" and (self.max_cost is not None or self.max_tokens is not None):
            raise UserError(f"{'--max-cost' if self.max_cost is not None else '--max-tokens'} and --runner "
                            "ray do not combine: the budget is kept in this process and Ray workers "
                            "spend apart from it; run with --runner local (or --batch)")
        return self

    @property
    def use_cache(self) -> bool:
        """Whether the response cache is used (not ``no_cache``)."""
        return not self.no_cache

    def embedding_runtime(self) -> EmbeddingRuntime:
        """The device and embedding store of this run (``--device``, ``--no-embedding-cache``).

        The store is opened here (a benchmark asks for its runtime in setup), so a damaged or
        unwritable store ends the run before any model call is spent.

        Raises:
            UserError: ``--device cuda`` and torch sees no GPU, or the store is damaged (one line).
            StorageError: the store cannot be opened or written (one line).
        """
        from ideaharness.metrics.embedding_store import EmbeddingRuntime

        runtime = EmbeddingRuntime(self.device, cache=not self.no_embedding_cache)
        _ = runtime.store  # opened now, not at the first similarity after the model calls
        return runtime

    @property
    def timeout_s(self) -> float:
        """``timeout`` in seconds."""
        return self.timeout

    @property
    def price_per_mtok(self) -> PriceTuple | None:
        """The price of every role (``--price IN,OUT[,CACHED_IN]``): USD per million tokens, or
        None when no all-roles price was given."""
        return (self.price or {}).get(ALL_ROLES)

    @property
    def budgeted(self) -> bool:
        """Whether the run has a budget (``--max-cost`` or ``--max-tokens``)."""
        return self.max_cost is not None or self.max_tokens is not None

    def price_for(self, role: str) -> PriceTuple | None:
        """(input, output[, cached input]) USD per million tokens of ``role`` (:func:`role_value`);
        None when unpriced."""
        return role_value(self.price, role)

    def reasoning_effort_for(self, role: str) -> str | None:
        """The ``--reasoning-effort`` of ``role`` (:func:`role_value`); None: none sent."""
        return role_value(self.reasoning_effort, role)

    def reasoning_budget_for(self, role: str, *, parity: bool = False) -> int | None:
        """The ``--reasoning-budget`` of ``role`` in tokens (:func:`role_value`); None: the
        provider's default (auto), except under ``parity`` (a benchmark config with
        ``parity=True``: send what the published code sends), where auto is 0."""
        budget = role_value(self.reasoning_budget, role)
        return 0 if budget is None and parity else budget

    def check_roles(self, roles: Iterable[str]) -> None:
        """Refuse a per-role option (``--price``, ``--reasoning-effort``, ``--reasoning-budget``)
        naming a role this run does not have.

        Raises:
            UserError: naming the flag, the role and the run's roles.
        """
        roles = list(roles)
        kinds = set(roles) | {r.split(":", 1)[0] for r in roles}
        per_role: dict[str, Mapping[str, Any] | None] = {
            "--price": self.price, "--reasoning-effort": self.reasoning_effort,
            "--reasoning-budget": self.reasoning_budget, "--model-cutoff": self.model_cutoff}
        for flag, values in per_role.items():
            for role in values or {}:
                if role != ALL_ROLES and role not in kinds:
                    raise UserError(f"{flag} {role}=...: this run has no {role} role (its roles: "
                                    f"{', '.join(sorted(kinds)) or 'none'})")

    def check_price_roles(self, roles: Iterable[str]) -> None:
        """:meth:`check_roles` (its earlier name)."""
        self.check_roles(roles)


def parse_shard(value: str | None) -> tuple[int, int] | None:
    """``"i/N"`` -> ``(i, N)`` with 0 <= i < N; None stays None.

    Raises:
        UserError: not two integers separated by ``/``, or i outside [0, N).
    """
    if value is None:
        return None
    try:
        index_text, count_text = value.split("/")
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise UserError(f"--shard {value!r}: expected i/N, e.g. 0/4") from None
    if count < 1 or not 0 <= index < count:
        raise UserError(f"--shard {value!r}: need 0 <= i < N")
    return index, count


def _parse_model_cutoff(value: Any, prefix: str) -> str:
    from ideaharness.runner.model_cutoffs import parse_model_cutoff

    try:
        return parse_model_cutoff(str(value))
    except ValueError:
        raise UserError(f"--model-cutoff {prefix}{value}: expected YYYY-MM-DD or 'unknown'") from None


ALL_ROLES = "*"
"""The key of ``price`` for the bare ``--price IN,OUT``: every role of the run."""


def _role_text(role: str) -> str:
    return "" if role == ALL_ROLES else f"{role}="


T = TypeVar("T")


def role_value(values: Mapping[str, T] | None, role: str) -> T | None:
    """The value of ``role`` in a per-role option: its own ``ROLE=...``, else that of its kind
    (``judge`` for ``judge:<model>``, ``generator`` for ``generator:<model>``), else the all-roles
    value (:data:`ALL_ROLES`); None when none applies (a key present with the value None, such as
    ``--reasoning-budget judge=auto``, also ends the search with None)."""
    values = values or {}
    for key in (role, role.split(":", 1)[0], ALL_ROLES):
        if key in values:
            return values[key]
    return None


def parse_role_map(value: Any, *, flag: str, parse_one: Any, example: str,
                   scalar: tuple[type, ...] = ()) -> dict[str, Any] | None:
    """The values of a per-role flag -> role -> parsed value (:data:`ALL_ROLES` for the bare form);
    None (or an empty list) stays None.

    Args:
        value: ``"VALUE"``, ``"ROLE=VALUE"``, a list of those (the repeated flag), a mapping role ->
            value, or one value of a type in ``scalar`` (every role).
        parse_one: ``parse_one(value, prefix)`` -> the parsed value (``prefix`` is ``"ROLE="`` or
            ``""``, for its error messages); raises UserError.
        example: shown when an item is not ``VALUE`` or ``ROLE=VALUE``.

    Raises:
        UserError: a ``=`` without a role before it, a role given twice, or what ``parse_one``
            raises.
    """
    if value is None or (isinstance(value, list | tuple) and not value):
        return None
    if isinstance(value, Mapping):
        return {str(role): parse_one(item, _role_text(str(role))) for role, item in value.items()}
    if scalar and isinstance(value, scalar) and not isinstance(value, bool | str):
        return {ALL_ROLES: parse_one(value, "")}
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list | tuple):
        raise UserError(f"{flag} {value!r}: expected VALUE or ROLE=VALUE, e.g. {example}")
    out: dict[str, Any] = {}
    for item in value:
        text = str(item).strip()
        role, _, given = text.rpartition("=")
        role = role.strip() or ALL_ROLES
        if "=" in text and role == ALL_ROLES:
            raise UserError(f"{flag} {text!r}: a role before '=' (e.g. {example.split(' or ')[-1]})")
        if role in out:
            raise UserError(f"{flag}: {'every role' if role == ALL_ROLES else role} given twice")
        out[role] = parse_one(given.strip(), _role_text(role))
    return out


def parse_prices(value: Any) -> dict[str, PriceTuple] | None:
    """``--price`` values -> role -> (input, output[, cached input]) USD per million tokens
    (:data:`ALL_ROLES` for the bare form). None (or an empty list) stays None.

    Accepts ``"0.15,0.6"`` or ``"0.15,0.6,0.075"`` (every role), ``"judge=3,15"`` (one role), a
    list of those (the repeated flag), two or three numbers (every role), or a mapping role ->
    text / numbers.

    Raises:
        UserError: a text that is not ``IN,OUT[,CACHED_IN]`` or ``ROLE=...``, a price that is
            negative or not finite, or a role priced twice.
    """
    if isinstance(value, list | tuple) and len(value) in (2, 3) and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return {ALL_ROLES: _prices(value, "")}
    try:
        return parse_role_map(value, flag="--price", parse_one=_prices, example="0.15,0.6 or judge=3,15")
    except UserError as exc:
        raise UserError(str(exc).replace(" given twice", " priced twice")) from None


def _prices(value: Any, prefix: str) -> PriceTuple:
    if isinstance(value, str):
        parsed = parse_price(value.strip(), prefix=prefix)
        assert parsed is not None
        return parsed
    try:
        numbers = tuple(float(v) for v in value)
    except (TypeError, ValueError):
        numbers = ()
    if len(numbers) not in (2, 3):
        raise UserError(f"--price {prefix}{value!r}: expected IN,OUT[,CACHED_IN] in USD per million "
                        "tokens")
    return _checked_price(numbers, f"{prefix}{','.join(f'{p:g}' for p in numbers)}")


def _checked_price(price: tuple[float, ...], shown: str) -> PriceTuple:
    if not all(math.isfinite(p) for p in price):
        raise UserError(f"--price {shown}: prices must be finite numbers")
    if min(price) < 0:
        raise UserError(f"--price {shown}: prices cannot be negative")
    if len(price) == 2:
        return price[0], price[1]
    return price[0], price[1], price[2]


def parse_price(value: str | None, *, prefix: str = "") -> PriceTuple | None:
    """``"0.15,0.6"`` -> ``(0.15, 0.6)`` USD per million (prompt, completion) tokens, and
    ``"0.15,0.6,0.075"`` -> ``(0.15, 0.6, 0.075)`` with the price of cached prompt tokens; None
    stays None.

    Raises:
        UserError: not two or three numbers separated by commas, or a price that is negative or
            not finite.
    """
    if value is None:
        return None
    try:
        parts = value.split(",")
        if len(parts) not in (2, 3):
            raise ValueError(value)
        price = tuple(float(p) for p in parts)
    except ValueError:
        raise UserError(
            f"--price {prefix}{value!r}: expected IN,OUT[,CACHED_IN] in USD per million tokens, e.g. "
            "0.15,0.6 or 0.15,0.6,0.075 (or ROLE=IN,OUT, e.g. judge=3,15)"
        ) from None
    return _checked_price(price, f"{prefix}{value!r}")


def parse_effort(value: Any, prefix: str = "") -> str:
    """A ``--reasoning-effort`` value: one of :data:`REASONING_EFFORTS` (case-insensitive).

    Raises:
        UserError: another value (names the accepted ones).
    """
    text = str(value).strip().lower()
    if text not in REASONING_EFFORTS:
        raise UserError(f"--reasoning-effort {prefix}{value}: expected one of {', '.join(REASONING_EFFORTS)}")
    return text


def parse_reasoning_budget(value: Any, prefix: str = "") -> int | None:
    """A ``--reasoning-budget`` value: tokens, an integer >= 0, or ``auto`` (None: the provider's
    default).

    Raises:
        UserError: not a whole number >= 0 nor ``auto``.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() == AUTO):
        return None
    try:
        if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
            raise ValueError(value)
        budget = int(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        raise UserError(f"--reasoning-budget {prefix}{value}: expected tokens (a whole number >= 0) or "
                        "auto") from None
    if budget < 0:
        raise UserError(f"--reasoning-budget {prefix}{value}: tokens cannot be negative")
    return budget


def apply_consistency_sample(options: ExecutionOptions, *, benchmark: str,
                             supported: bool) -> ExecutionOptions:
    """``options`` for a benchmark with (``supported``) or without judgments that show items in an
    order: unchanged when it has some; else ``consistency_sample`` 0 and
    ``consistency_sample_applies`` the reason (what results.json settings show).

    Raises:
        UserError: an explicit non-zero ``--consistency-sample`` for a benchmark without such
            judgments (one line naming the benchmark).
    """
    if supported:
        return options
    if "consistency_sample" in options.model_fields_set and options.consistency_sample > 0:
        raise UserError(f"--consistency-sample {options.consistency_sample:g}: not used by {benchmark}, "
                        "which has no judgment that shows items in an order to re-ask; drop the flag")
    return options.model_copy(update={
        "consistency_sample": 0.0,
        "consistency_sample_applies":
            f"not applicable: {benchmark} has no judgment that shows items in an order",
    })
