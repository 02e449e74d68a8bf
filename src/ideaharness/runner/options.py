"""How a run executes: the options every ``ideaharness run <benchmark>`` command and
``ideaharness.run(...)`` share, declared once (the CLI flags are generated from this model).

None of them changes results, so none blocks a resume; all are recorded under ``settings`` in
``results.json`` (no secrets: keys come from the environment only).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ideaharness.errors import UserError
from ideaharness.net.urls import check_base_url

LEGACY_NAMES = {"use_cache": "no_cache", "timeout_s": "timeout", "price_per_mtok": "price"}
"""Earlier Python names of options -> their field (``use_cache`` is negated)."""


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
    price: dict[str, tuple[float, float]] | None = Field(
        None, json_schema_extra={"repeatable": True},
        description="IN,OUT: USD per million prompt and completion tokens for every role, or "
        "ROLE=IN,OUT for one role (generator, judge, or any other role of the run; repeat the flag); "
        "reports cost in results and report, a resume pricing every recorded token.")
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
        for role, (price_in, price_out) in (self.price or {}).items():
            if min(price_in, price_out) < 0:
                raise UserError(f"--price {_role_text(role)}{price_in:g},{price_out:g}: prices cannot be "
                                "negative")
        return self

    @property
    def use_cache(self) -> bool:
        """Whether the response cache is used (not ``no_cache``)."""
        return not self.no_cache

    @property
    def timeout_s(self) -> float:
        """``timeout`` in seconds."""
        return self.timeout

    @property
    def price_per_mtok(self) -> tuple[float, float] | None:
        """The price of every role (``--price IN,OUT``): (input, output) USD per million tokens, or
        None when no all-roles price was given."""
        return (self.price or {}).get(ALL_ROLES)

    def price_for(self, role: str) -> tuple[float, float] | None:
        """(input, output) USD per million tokens of ``role``: its own ``ROLE=IN,OUT``, else that of
        its kind (``judge`` for ``judge:<model>``, ``generator`` for ``generator:<model>``), else
        the all-roles ``IN,OUT``; None when unpriced."""
        prices = self.price or {}
        for key in (role, role.split(":", 1)[0], ALL_ROLES):
            if key in prices:
                return prices[key]
        return None

    def check_price_roles(self, roles: Iterable[str]) -> None:
        """Refuse a ``--price ROLE=...`` naming a role this run does not have.

        Raises:
            UserError: naming the role and the run's roles.
        """
        roles = list(roles)
        kinds = set(roles) | {r.split(":", 1)[0] for r in roles}
        for role in self.price or {}:
            if role != ALL_ROLES and role not in kinds:
                raise UserError(f"--price {role}=...: this run has no {role} role (its roles: "
                                f"{', '.join(sorted(kinds)) or 'none'})")


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


ALL_ROLES = "*"
"""The key of ``price`` for the bare ``--price IN,OUT``: every role of the run."""


def _role_text(role: str) -> str:
    return "" if role == ALL_ROLES else f"{role}="


def parse_prices(value: Any) -> dict[str, tuple[float, float]] | None:
    """``--price`` values -> role -> (input, output) USD per million tokens (:data:`ALL_ROLES` for
    the bare form). None (or an empty list) stays None.

    Accepts ``"0.15,0.6"`` (every role), ``"judge=3,15"`` (one role), a list of those (the repeated
    flag), a pair of numbers (every role), or a mapping role -> ``"IN,OUT"`` / pair.

    Raises:
        UserError: a text that is not ``IN,OUT`` or ``ROLE=IN,OUT``, a negative price, or a role
            priced twice.
    """
    if value is None or (isinstance(value, list | tuple) and not value):
        return None
    if isinstance(value, Mapping):
        return {str(role): _pair(price, f"{role}=") for role, price in value.items()}
    if isinstance(value, str):
        value = [value]
    if isinstance(value, list | tuple) and len(value) == 2 and all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        return {ALL_ROLES: _pair(value, "")}
    if not isinstance(value, list | tuple):
        raise UserError(f"--price {value!r}: expected IN,OUT or ROLE=IN,OUT in USD per million tokens")
    out: dict[str, tuple[float, float]] = {}
    for item in value:
        text = str(item).strip()
        role, _, price = text.rpartition("=")
        role = role.strip() or ALL_ROLES
        if "=" in text and role == ALL_ROLES:
            raise UserError(f"--price {text!r}: a role before '=' (e.g. judge=3,15)")
        if role in out:
            raise UserError(f"--price: {'every role' if role == ALL_ROLES else role} priced twice")
        out[role] = _pair(price, _role_text(role))
    return out


def _pair(value: Any, prefix: str) -> tuple[float, float]:
    if isinstance(value, str):
        parsed = parse_price(value.strip(), prefix=prefix)
        assert parsed is not None
        return parsed
    try:
        price_in, price_out = (float(v) for v in value)
    except (TypeError, ValueError):
        raise UserError(f"--price {prefix}{value!r}: expected IN,OUT in USD per million tokens") from None
    if min(price_in, price_out) < 0:
        raise UserError(f"--price {prefix}{price_in:g},{price_out:g}: prices cannot be negative")
    return price_in, price_out


def parse_price(value: str | None, *, prefix: str = "") -> tuple[float, float] | None:
    """``"0.15,0.6"`` -> ``(0.15, 0.6)`` USD per million (prompt, completion) tokens; None stays None.

    Raises:
        UserError: not two numbers separated by a comma, or a negative price.
    """
    if value is None:
        return None
    try:
        prompt_text, completion_text = value.split(",")
        price = (float(prompt_text), float(completion_text))
    except ValueError:
        raise UserError(
            f"--price {prefix}{value!r}: expected IN,OUT in USD per million tokens, e.g. 0.15,0.6 "
            "(or ROLE=IN,OUT, e.g. judge=3,15)"
        ) from None
    if not all(math.isfinite(p) for p in price):
        raise UserError(f"--price {prefix}{value!r}: prices must be finite numbers")
    if min(price) < 0:
        raise UserError(f"--price {prefix}{value!r}: prices cannot be negative")
    return price


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
