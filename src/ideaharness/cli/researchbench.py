"""``ideaharness run researchbench``: inspiration retrieval, hypothesis composition, ranking."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated, Any

import typer

from ideaharness.benchmarks._common import ExecutionOptions
from ideaharness.benchmarks.researchbench import ResearchBenchConfig, results_tables, run_researchbench
from ideaharness.benchmarks.researchbench.config import METHODS, TASKS
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
from ideaharness.llm.client import DEFAULT_MODEL
from ideaharness.report.console import print_tables


def _choice(flag: str, value: str, allowed: tuple[str, ...]) -> Any:  # a Literal the config validates
    if value not in allowed:
        raise UserError(f"{flag} {value!r}: choose one of {', '.join(allowed)}")
    return value


def _date(value: str | None) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise UserError(f"--published-after {value!r}: expected a date YYYY-MM-DD") from None


@run_app.command("researchbench")
def researchbench_command(
    task: Annotated[str, typer.Option(help="retrieval, composition, ranking or all.")] = "all",
    generator: Annotated[str, typer.Option(help="Generator (screening, composition, negatives): "
                                           "local/qwen2.5-coder-1.5b, local/qwen2.5-coder-0.5b or "
                                           "openai/<model>.")] = DEFAULT_MODEL,
    judge: Annotated[str, typer.Option(help="Judge (matched score, ranking), same forms.")] = DEFAULT_MODEL,
    data: Annotated[str, typer.Option(help="'tomato-chem' (bundled), a ResearchBench JSONL release "
                                      "directory, a folder of .xlsx sheets, one .xlsx, or an Instance "
                                      "JSONL.")] = "tomato-chem",
    corpus: Annotated[str | None, typer.Option(help="Negatives corpus: MOOSE-Chem [title, abstract] JSON "
                                               "or Paper JSONL.")] = None,
    corpus_size: Annotated[int, typer.Option(help="Bundled MOOSE-Chem corpus size (150, 300, 1000).")] = 1000,
    dedupe: Annotated[bool, typer.Option(help="Keep one row per DOI across discipline sheets.")] = False,
    out: Annotated[Path, typer.Option(help="Run directory; the same command again resumes.")] = Path(
        "runs/researchbench"),
    limit: Annotated[int | None, typer.Option(min=1, help="Use the first N instances.")] = None,
    seed: Annotated[int, typer.Option(help="Run seed (pools, window order, negatives).")] = 0,
    pool_size: Annotated[int, typer.Option(min=2, help="Candidates per pool, gold included.")] = 75,
    per_level: Annotated[int, typer.Option(min=1, help="Most negatives per distance level.")] = 25,
    level3_fill: Annotated[str, typer.Option(help="No other-discipline source: 'level2' fills level-3 "
                                             "slots with level-2 papers, 'empty' leaves them.")] = "level2",
    window_size: Annotated[int, typer.Option(min=2, help="Candidates per screening window.")] = 15,
    keep_size: Annotated[int, typer.Option(min=1, help="Candidates kept per window.")] = 3,
    title_threshold: Annotated[float, typer.Option(help="Fuzzy title-match threshold (0-1].")] = 0.9,
    use_background_survey: Annotated[bool, typer.Option(help="Show the survey when screening.")] = False,
    method: Annotated[list[str] | None, typer.Option(help="one_step and/or pipeline (repeat).")] = None,
    n_mutations: Annotated[int, typer.Option(min=1, help="Pipeline: mutations per inspiration.")] = 2,
    n_refine: Annotated[int, typer.Option(min=0, help="Pipeline: refinements per mutation.")] = 1,
    ranking_negatives: Annotated[str, typer.Option(
        help="auto, generated or given (ranking.jsonl).")] = "auto",
    n_negatives: Annotated[int, typer.Option(min=1, help="Generated negatives per paper.")] = 5,
    inspirations_per_negative: Annotated[int, typer.Option(min=1, help="Non-gold inspirations per "
                                                           "generated negative.")] = 2,
    parity: Annotated[bool, typer.Option(help="Published ranking: the gold's published text, always "
                                         "candidate 1 (default: rewritten, both orders).")] = False,
    published_after: Annotated[str | None, typer.Option(help="Also report the 'strict' subset of papers "
                                                        "published after DATE (YYYY-MM-DD).")] = None,
    max_attempts: Annotated[int, typer.Option(min=1, max=10, help="Tries per step on parse failure.")] = 3,
    generation_max_tokens: Annotated[int, typer.Option(min=16, help="Generation reply tokens.")] = 512,
    judge_max_tokens: Annotated[int, typer.Option(min=16, help="Screening/judge reply tokens.")] = 512,
    base_url: BaseUrlOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    max_concurrency: MaxConcurrencyOption = 4,
    rpm: RpmOption = None,
    no_cache: NoCacheOption = False,
    shard: ShardOption = None,
) -> None:
    """Run ResearchBench: inspiration retrieval (hit ratio, negative selection ratio), hypothesis
    composition (matched score) and two-order hypothesis ranking."""
    tasks: list[Any] = list(TASKS) if task == "all" else [_choice("--task", task, (*TASKS, "all"))]
    methods = [_choice("--method", m, METHODS) for m in (method or list(METHODS))]
    config = ResearchBenchConfig(
        tasks=tasks, data=data, corpus=corpus, corpus_size=corpus_size, dedupe=dedupe, generator=generator,
        judge=judge, seed=seed, pool_size=pool_size, per_level=per_level,
        level3_fill=_choice("--level3-fill", level3_fill, ("level2", "empty")), window_size=window_size,
        keep_size=keep_size, title_threshold=title_threshold, use_background_survey=use_background_survey,
        methods=methods, n_mutations=n_mutations, n_refine=n_refine,
        ranking_negatives=_choice("--ranking-negatives", ranking_negatives, ("auto", "generated", "given")),
        n_negatives=n_negatives, inspirations_per_negative=inspirations_per_negative, parity=parity,
        published_after=_date(published_after), max_attempts=max_attempts,
        generation_max_tokens=generation_max_tokens, judge_max_tokens=judge_max_tokens,
    )
    options = ExecutionOptions(
        out=out, limit=limit, base_url=base_url, judge_base_url=judge_base_url,
        max_concurrency=max_concurrency, rpm=rpm, use_cache=not no_cache, shard=parse_shard(shard),
    )
    results = run_researchbench(config, options)
    print_tables(results_tables(results))
    finish_run(results, options.out)
