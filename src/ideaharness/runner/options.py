"""How a run executes: the options every ``ideaharness run <benchmark>`` command and
``ideaharness.run(...)`` share, declared once (the CLI flags are generated from this model).

None of them changes results, so none blocks a resume; all are recorded under ``settings`` in
``results.json`` (no secrets: keys come from the environment only).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ideaharness.errors import UserError

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
    price: tuple[float, float] | None = Field(None, description="IN,OUT: USD per million prompt and "
                                              "completion tokens; reports cost in results and report.")
    timeout: float = Field(300.0, gt=0, description="Seconds one attempt at a model endpoint may take "
                           "(also bounds Semantic Scholar requests, at most 30 s).")
    max_retries: int = Field(6, ge=0, description="Retries of a failed model call (429, 5xx, timeout, "
                             "connection, malformed reply) before its unit counts as failed.")
    max_attempts: int = Field(3, ge=1, le=10, description="Tries per judgment when a reply does not "
                              "parse; then it is counted as a parse failure.")
    force: bool = Field(False, description="If --out holds a run with other settings or changed input "
                        "files, move it to --out/superseded/ and start anew (default: refuse).")
    progress: bool = Field(True, description="Show progress bars.")
    consistency_sample: float = Field(0.1, ge=0.0, le=1.0, description="Share F of ranking/choice "
                                      "judgments re-asked with positions permuted (seeded) to measure "
                                      "the judge's position consistency; 0 disables. Re-asks are "
                                      "cached and counted, never scored.")
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

    @field_validator("price", mode="before")
    @classmethod
    def _price(cls, value: Any) -> Any:
        return parse_price(value) if isinstance(value, str) else value

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
        if self.price is not None and min(self.price) < 0:
            raise UserError(f"--price {self.price[0]:g},{self.price[1]:g}: prices cannot be negative")
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
        """``price``: (input, output) USD per million tokens."""
        return self.price


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


def parse_price(value: str | None) -> tuple[float, float] | None:
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
            f"--price {value!r}: expected IN,OUT in USD per million tokens, e.g. 0.15,0.6"
        ) from None
    if min(price) < 0:
        raise UserError(f"--price {value!r}: prices cannot be negative")
    return price
