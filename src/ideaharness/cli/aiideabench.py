"""``ideaharness run aiideabench``: AI Idea Bench 2025 (flags mirror :class:`AIIdeaBenchConfig`)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from ideaharness.benchmarks._common import ExecutionOptions
from ideaharness.benchmarks.aiideabench import ALL_METRICS, AIIdeaBenchConfig, results_tables, run_aiideabench
from ideaharness.benchmarks.aiideabench.config import DEFAULT_MODEL
from ideaharness.cli.app import run_app
from ideaharness.cli.options import (
    BaseUrlOption,
    JudgeBaseUrlOption,
    MaxConcurrencyOption,
    NoCacheOption,
    RpmOption,
    ShardOption,
    finish_run,
    parse_shard,
)
from ideaharness.errors import UserError
from ideaharness.report.console import print_tables


def _metrics(values: list[str] | None) -> list:  # type: ignore[type-arg]
    if not values:
        return list(ALL_METRICS)
    for v in values:
        if v not in ALL_METRICS:
            raise UserError(f"--metric {v!r}: choose from {', '.join(ALL_METRICS)}")
    return list(dict.fromkeys(values))


def _date(value: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UserError(f"--cutoff {value!r}: expected a date YYYY-MM-DD") from None


@run_app.command("aiideabench")
def aiideabench_command(
    generator: Annotated[str, typer.Option(help="Generator model: local/qwen2.5-coder-1.5b, "
                                           "local/qwen2.5-coder-0.5b or openai/<model>.")] = DEFAULT_MODEL,
    judge: Annotated[str, typer.Option(help="Judge model (same forms).")] = DEFAULT_MODEL,
    data: Annotated[str, typer.Option(help="'tomato-chem' (bundled), a target_paper_data.json file "
                                      "(published schema) or an Instance JSONL file.")] = "tomato-chem",
    ideas: Annotated[Path | None, typer.Option(help="External ideas to score instead of generating: "
                                               "AI-Scientist .json or .jsonl.")] = None,
    system: Annotated[str | None, typer.Option(help="System name in competitions (default: the "
                                               "generator or the ideas file's name).")] = None,
    out: Annotated[Path, typer.Option(help="Run directory; the same command again resumes.")] = Path(
        "runs/aiideabench"),
    limit: Annotated[int | None, typer.Option(min=1, help="Use the first N instances.")] = None,
    seed: Annotated[int, typer.Option(help="Run seed (IMCQ option order, competition draws).")] = 0,
    n_ideas: Annotated[int, typer.Option("--n-ideas", min=1, max=10, help="Ideas per instance.")] = 2,
    metric: Annotated[list[str] | None, typer.Option(
        help="imcq, i2i, i2t, novelty, feasibility (repeat); default all.")] = None,
    compare: Annotated[list[Path] | None, typer.Option(
        help="Run directory of another system on the same data (repeat): adds the competition.")] = None,
    parity: Annotated[bool, typer.Option(help="Published choices: competition in one order with 1 point "
                                         "per loss; the dataset's topic for generators; IMCQ distractors as "
                                         "the papers' own texts.")] = False,
    inconsistent: Annotated[str, typer.Option(help="A pair judged differently in the two orders "
                                              "counts as 'tie' or is 'exclude'd.")] = "tie",
    rounds: Annotated[int, typer.Option(min=1, help="Swiss tournament rounds.")] = 7,
    digest_inspirations: Annotated[bool, typer.Option(help="Digest inspiration abstracts with the "
                                                      "judge before generation.")] = False,
    cutoff: Annotated[str, typer.Option(help="Default knowledge cutoff (NA split, FA latest year).")] = (
        "2023-10-03"),
    latest_year: Annotated[str, typer.Option(help="FA y_l: 'cutoff' year or 'current' year.")] = "cutoff",
    scholar_base_url: Annotated[str | None, typer.Option(
        help="Semantic Scholar API root (e.g. a local replay server); NA/FA are skipped when "
        "unreachable.")] = None,
    generation_max_tokens: Annotated[int, typer.Option(min=16,
                                                       help="Token limit of a generated idea.")] = 768,
    judge_max_tokens: Annotated[int, typer.Option(min=16, help="Token limit of a judgment.")] = 384,
    max_attempts: Annotated[int, typer.Option(min=1, max=10,
                                              help="Tries per judgment on parse failure.")] = 3,
    base_url: BaseUrlOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    max_concurrency: MaxConcurrencyOption = 4,
    rpm: RpmOption = None,
    no_cache: NoCacheOption = False,
    shard: ShardOption = None,
) -> None:
    """Run AI Idea Bench 2025: ideas as motivation + experiment plan, scored by IMCQ, I2I, I2T,
    literature novelty and feasibility, and a competition between runs."""
    if inconsistent not in ("tie", "exclude"):
        raise UserError(f"--inconsistent {inconsistent!r}: choose tie or exclude")
    if latest_year not in ("cutoff", "current"):
        raise UserError(f"--latest-year {latest_year!r}: choose cutoff or current")
    if ideas is not None and not ideas.exists():
        raise UserError(f"--ideas {ideas}: no such file")
    config = AIIdeaBenchConfig(
        data=data, generator=generator, judge=judge, ideas_file=str(ideas) if ideas else None, system=system,
        seed=seed, n_ideas=n_ideas, metrics=_metrics(metric), parity=parity,
        inconsistent=inconsistent,  # type: ignore[arg-type]
        tournament_rounds=rounds, digest_inspirations=digest_inspirations, cutoff=_date(cutoff),
        latest_year=latest_year,  # type: ignore[arg-type]
        scholar_base_url=scholar_base_url, max_attempts=max_attempts,
        generation_max_tokens=generation_max_tokens, judge_max_tokens=judge_max_tokens,
    )
    options = ExecutionOptions(
        out=out, limit=limit, base_url=base_url, judge_base_url=judge_base_url,
        max_concurrency=max_concurrency, rpm=rpm, use_cache=not no_cache, shard=parse_shard(shard),
    )
    results = run_aiideabench(config, options, compare=list(compare or []))
    print_tables(results_tables(results))
    finish_run(results, options.out)
