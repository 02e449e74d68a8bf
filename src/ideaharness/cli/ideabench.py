"""``ideaharness run ideabench`` and ``ideaharness demo``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ideaharness.benchmarks._common import ExecutionOptions
from ideaharness.benchmarks.ideabench import (
    DEFAULT_INDICATORS,
    DEFAULT_MODEL,
    IdeaBenchConfig,
    Indicator,
    results_tables,
    run_ideabench,
)
from ideaharness.cli.app import app, run_app
from ideaharness.cli.options import (
    BaseUrlOption,
    JudgeBaseUrlOption,
    MaxConcurrencyOption,
    NoCacheOption,
    PriceOption,
    RpmOption,
    ShardOption,
    finish_run,
    parse_price,
    parse_shard,
)
from ideaharness.errors import UserError
from ideaharness.report.console import print_tables


def _indicators(values: list[str] | None) -> list[Indicator]:
    if not values:
        return list(DEFAULT_INDICATORS)
    out = []
    for value in values:
        name, _, definition = value.partition("=")
        if not name.strip():
            raise UserError(f"--indicator {value!r}: expected NAME or NAME=DEFINITION")
        name = name.strip()
        # a bare default name keeps its default definition, so the prompt matches a default run
        default = next((d.definition for d in DEFAULT_INDICATORS if d.name == name), None)
        out.append(Indicator(name=name, definition=definition.strip() or default))
    return out


@run_app.command("ideabench")
def ideabench_command(
    generator: Annotated[
        str,
        typer.Option(
            help="Generator model: local/qwen2.5-coder-1.5b, local/qwen2.5-coder-0.5b or openai/<model>."
        ),
    ] = DEFAULT_MODEL,
    judge: Annotated[str, typer.Option(help="Judge model (same forms).")] = DEFAULT_MODEL,
    data: Annotated[
        str,
        typer.Option(
            help="'tomato-chem' (bundled), an Instance JSONL file, or a directory with the IdeaBench CSVs."
        ),
    ] = "tomato-chem",
    out: Annotated[Path, typer.Option(help="Run directory; the same command again resumes.")] = Path(
        "runs/ideabench"
    ),
    limit: Annotated[int | None, typer.Option(min=1, help="Use the first N instances.")] = None,
    seed: Annotated[int, typer.Option(help="Run seed (reference sampling, idea order).")] = 0,
    n_ideas: Annotated[int, typer.Option("--n-ideas", min=1, max=25, help="Ideas per instance (n).")] = 3,
    scenario: Annotated[list[str] | None, typer.Option(help="low and/or high resource (repeat).")] = None,
    k_references: Annotated[int, typer.Option(min=1, help="References in the low-resource scenario.")] = 5,
    reference_filter: Annotated[str, typer.Option(help="auto, relevance, random or none.")] = "auto",
    indicator: Annotated[
        list[str] | None,
        typer.Option(
            help="Insight Score indicator NAME or NAME=DEFINITION (repeat); default novelty, feasibility."
        ),
    ] = None,
    parity: Annotated[bool, typer.Option(help="Published ranking: the target idea's published text, "
                                         "always shown first (default: rewritten, shuffled).")] = False,
    bertscore_model: Annotated[
        str, typer.Option(help="BERTScore model name or directory.")
    ] = "all-MiniLM-L6-v2",
    bertscore_layers: Annotated[int | None, typer.Option(help="BERTScore layer.")] = None,
    max_attempts: Annotated[
        int, typer.Option(min=1, max=10, help="Tries per judgment on parse failure.")
    ] = 3,
    base_url: BaseUrlOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    max_concurrency: MaxConcurrencyOption = 4,
    rpm: RpmOption = None,
    no_cache: NoCacheOption = False,
    shard: ShardOption = None,
    price: PriceOption = None,
) -> None:
    """Run IdeaBench: generate ideas from reference abstracts; score them by BERTScore, idea overlap
    and the Insight Score."""
    config = IdeaBenchConfig(
        data=data,
        generator=generator,
        judge=judge,
        seed=seed,
        n_ideas=n_ideas,
        scenarios=_scenarios(scenario),
        k_references=k_references,
        reference_filter=_choice(
            "--reference-filter", reference_filter, ("auto", "relevance", "random", "none")
        ),
        indicators=_indicators(indicator),
        parity=parity,
        bertscore_model=bertscore_model,
        bertscore_layers=bertscore_layers,
        max_attempts=max_attempts,
    )
    options = ExecutionOptions(
        out=out,
        limit=limit,
        base_url=base_url,
        judge_base_url=judge_base_url,
        max_concurrency=max_concurrency,
        rpm=rpm,
        use_cache=not no_cache,
        shard=parse_shard(shard),
        price_per_mtok=parse_price(price),
    )
    results = run_ideabench(config, options)
    print_tables(results_tables(results))
    finish_run(results, options.out)


def _scenarios(values: list[str] | None) -> list:  # type: ignore[type-arg]
    values = values or ["low"]
    return [_choice("--scenario", v, ("low", "high")) for v in values]


def _choice(flag: str, value: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise UserError(f"{flag} {value!r}: choose one of {', '.join(allowed)}")
    return value


@app.command("demo")
def demo_command(
    model: Annotated[str, typer.Option(help="Generator and judge model.")] = DEFAULT_MODEL,
    limit: Annotated[int, typer.Option(min=1, help="Bundled TOMATO-Chem papers to use.")] = 3,
    out: Annotated[Path, typer.Option(help="Run directory.")] = Path("runs/demo"),
) -> None:
    """The main job: IdeaBench on bundled TOMATO-Chem papers with the embedded model (no keys)."""
    config = IdeaBenchConfig(data="tomato-chem", generator=model, judge=model)
    options = ExecutionOptions(out=out, limit=limit)
    results = run_ideabench(config, options)
    print_tables(results_tables(results))
    stats = results.get("llm_stats", {}).get("generator") or {}
    typer.echo(
        f"model calls this run: {stats.get('calls', '?')} (cache hits: {stats.get('cache_hits', '?')})"
    )
    finish_run(results, options.out.resolve())
