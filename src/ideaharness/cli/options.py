"""Parsing helpers for CLI options shared by several commands."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ideaharness.errors import PartialRunError, UserError


def parse_shard(value: str | None) -> tuple[int, int] | None:
    """``"i/N"`` → ``(i, N)`` with 0 <= i < N; None stays None."""
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


# Flags every `run` command shares; each maps to a field of ExecutionOptions.
BaseUrlOption = Annotated[
    str | None, typer.Option(help="OpenAI-compatible endpoint for openai/ models (else OPENAI_BASE_URL).")
]
JudgeBaseUrlOption = Annotated[str | None, typer.Option(help="Endpoint for the judge, if different.")]
MaxConcurrencyOption = Annotated[int, typer.Option(min=1, help="Model calls in flight at once.")]
RpmOption = Annotated[float | None, typer.Option(help="Requests-per-minute limit.")]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Bypass the response cache.")]
ShardOption = Annotated[str | None, typer.Option(help="i/N: run only shard i (0-based) of N.")]
ForceOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="If --out holds a run with other settings or changed input files, move it to "
        "--out/superseded/ and start a new run (default: refuse).",
    ),
]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", min=0.001, help="Seconds one attempt at an openai/ endpoint may take "
                        "(also bounds Semantic Scholar requests, at most 30 s).")
]
MaxRetriesOption = Annotated[
    int, typer.Option("--max-retries", min=0, help="Retries of a failed model call (429, 5xx, timeout, "
                      "connection, malformed reply) before its unit is counted as failed.")
]
MaxPromptTokensOption = Annotated[
    int, typer.Option("--max-prompt-tokens", min=256, help="Prompt budget (4 characters a token): longer "
                      "paper or model texts are cut to fit, with a note.")
]
PriceOption = Annotated[
    str | None, typer.Option(help="IN,OUT: USD per million prompt and completion tokens, to report cost.")
]


def parse_price(value: str | None) -> tuple[float, float] | None:
    """``"0.15,0.6"`` → ``(0.15, 0.6)``; None stays None."""
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


def finish_run(results: dict[str, Any], out: Path) -> None:
    """Print the report path; exit 3 (partial run) with one line when units failed or were skipped.

    Failed units are listed in results.json (``failed_units``: step, instance, last error) and
    left undone, so re-running the same command retries them.

    Raises:
        PartialRunError: ``results["status"]`` is "partial".
    """
    typer.echo(f"report: {out / 'report.html'}")
    units = results.get("failed_units") or []
    if results.get("status") == "partial" or units:
        failed = sum(1 for u in units if u.get("status") != "skipped")
        skipped = len(units) - failed
        raise PartialRunError(
            f"partial run: {failed} unit(s) failed after retries and {skipped} skipped (listed under "
            f"'failed_units' in {out / 'results.json'}); run the same command again to retry them"
        )
