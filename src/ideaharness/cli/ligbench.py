"""``ideaharness score-idea`` and ``ideaharness run ligbench`` (LigBench)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from ideaharness.benchmarks._common import ExecutionOptions
from ideaharness.benchmarks.ligbench.run import (
    DEFAULT_MODEL,
    DEFAULT_TOPICS,
    LigBenchConfig,
    results_tables,
    run_ligbench,
    score_idea_async,
)
from ideaharness.benchmarks.ligbench.steps import IdeaScore, ScoringSettings
from ideaharness.cli.app import app, run_app
from ideaharness.cli.options import (
    BaseUrlOption,
    JudgeBaseUrlOption,
    MaxConcurrencyOption,
    NoCacheOption,
    RpmOption,
    finish_run,
)
from ideaharness.data.textio import read_text
from ideaharness.errors import UserError
from ideaharness.metrics.elo import EloSettings
from ideaharness.report.console import print_tables
from ideaharness.report.html import Table

_CHOICES = {
    "--order": ("both", "random", "fixed"),
    "--clamp": ("output", "each-step"),
    "--debias-means": ("corpus", "paper", "none"),
}


def _choice(flag: str, value: str) -> str:
    if value not in _CHOICES[flag]:
        raise UserError(f"{flag} {value!r}: choose one of {', '.join(_CHOICES[flag])}")
    return value


def _settings(order: str, clamp: str, max_comparisons: int, min_comparisons: int, epsilon: float,
              n_calibration: int, scholar_base_url: str | None, online: bool, seed: int,
              parity: bool, structured: bool = True) -> ScoringSettings:
    if parity:  # the paper's choices: one fixed order, C applied at every Elo step, published analyses
        order, clamp = "fixed", "each-step"
    if min_comparisons > max_comparisons:
        raise UserError(f"--min-comparisons {min_comparisons} exceeds --max-comparisons {max_comparisons}")
    return ScoringSettings(
        order=_choice("--order", order), n_calibration=n_calibration, seed=seed,  # type: ignore[arg-type]
        elo=EloSettings(clamp=_choice("--clamp", clamp), max_comparisons=max_comparisons,  # type: ignore[arg-type]
                        min_comparisons=min_comparisons, epsilon=epsilon),
        novelty_source="semantic-scholar" if (online or scholar_base_url) else "corpus",
        scholar_base_url=scholar_base_url, structured_output=structured, blind_references=not parity,
    )


def read_idea(value: str) -> tuple[str, str, str | None]:
    """``(idea id, text, cut-off date)`` from a ScholarIdeas folder, a text file, or literal text.

    Raises:
        UserError: a path-like value that does not exist, or an empty idea.
    """
    from ideaharness.data.scholarideas import load_plan

    path = Path(value)
    if len(value) < 4096 and path.exists():
        if path.is_dir():
            plan = load_plan(path)
            return plan.id, plan.text, plan.cutoff.isoformat() if plan.cutoff else None
        if path.stem == path.parent.name and (path.parent / "cutoff.txt").is_file():
            plan = load_plan(path.parent)
            return plan.id, plan.text, plan.cutoff.isoformat() if plan.cutoff else None
        text = read_text(path)
        if not text.strip():
            raise UserError(f"{path}: the idea file is empty")
        return path.stem, text, None
    if "\n" not in value and " " not in value and path.suffix in (".txt", ".md", ".json"):
        raise UserError(f"{value}: no such file (give a file, a ScholarIdeas folder, or the idea text)")
    if not value.strip():
        raise UserError("the idea text is empty")
    return "idea", value, None


def score_tables(result: IdeaScore) -> list[Table]:
    """The four scores with their start values, and the comparisons that produced them."""
    if result.scores is None:
        return [Table(title=f"{result.idea_id}: not scored", columns=["status", "parse failures"],
                      rows=[[result.status, json.dumps(result.parse_failures)]])]
    initial = result.initial or {}
    rows: list[list[Any]] = []
    for dim in ("rating", "contribution", "soundness"):
        t = result.trajectories[dim]
        rows.append([dim, initial.get(dim), result.scores[dim], len(t.steps), t.stopped])
    nov = result.novelty or {}
    rows.append(["novelty", initial.get("novelty"), result.scores["novelty"], nov.get("n_related"),
                 f"β·s_sim + (1−β)·s_llm; s_weighted {nov.get('s_weighted', 0):.3f}, "
                 f"s_sim {nov.get('s_sim', 0):.2f} ({nov.get('source')})"])
    comp_rows = []
    for c in result.comparisons:
        orders = "; ".join(
            f"{o}: " + (", ".join(f"{k[0]}={v:g}" for k, v in out.items()) if out else "parse failed")
            for o, out in c.outcomes.items())
        comp_rows.append([c.title, *(c.s_ref[d] for d in ("rating", "soundness", "contribution")),
                          *((c.outcome or {}).get(d) for d in ("rating", "soundness", "contribution")),
                          orders, ", ".join(d for d, v in c.disagreement.items() if v) or "–"])
    return [
        Table(title=f"LigBench scores of {result.idea_id} (0-5)",
              columns=["dimension", "initial s0", "final", "comparisons / related", "how"], rows=rows,
              note=f"calibration papers: {', '.join(result.calibration)}; parse failures: "
                   f"{json.dumps(result.parse_failures)}"),
        Table(title="Comparisons (outcome 1 = the idea better; s_ref = debiased reference score)",
              columns=["reference", "s_ref rating", "s_ref soundness", "s_ref contribution", "rating",
                       "soundness", "contribution", "per order", "orders disagree on"], rows=comp_rows),
    ]


@app.command("score-idea")
def score_idea_command(
    idea: Annotated[str, typer.Argument(help="A file with the idea, a ScholarIdeas plan folder, or the idea "
                                        "text itself.")],
    corpus: Annotated[Path, typer.Option(help="PAIR-IQ-format reference corpus (.json/.jsonl file or "
                                         "directory).")],
    judge: Annotated[str, typer.Option(help="Judge model: local/qwen2.5-coder-1.5b, local/qwen2.5-coder-0.5b "
                                       "or openai/<model>.")] = DEFAULT_MODEL,
    order: Annotated[str, typer.Option(help="Comparison orders: both (averaged), random (one, seeded) or "
                                       "fixed (idea first).")] = "both",
    clamp: Annotated[str, typer.Option(help="output (bound only the reported score) or each-step "
                                       "(the paper's C at every Elo step).")] = "output",
    max_comparisons: Annotated[int, typer.Option(min=1, help="T_max: most comparisons per idea.")] = 8,
    min_comparisons: Annotated[int, typer.Option(min=1, help="Comparisons before the ε rule may stop.")] = 3,
    epsilon: Annotated[float, typer.Option(min=0.0, help="Stop when the score moves less than this.")] = 0.01,
    n_calibration: Annotated[int, typer.Option(min=1, help="Calibration papers for the initial score.")] = 3,
    debias_means: Annotated[str, typer.Option(help="corpus, paper (published means) or none.")] = "corpus",
    online: Annotated[bool, typer.Option(help="Novelty from Semantic Scholar search.")] = False,
    scholar_base_url: Annotated[str | None, typer.Option(help="Semantic Scholar API base URL (implies "
                                                         "--online).")] = None,
    parity: Annotated[bool, typer.Option(help="The paper's settings: fixed order, each-step clamp, "
                                         "reference papers as published (not rewritten).")] = False,
    seed: Annotated[int, typer.Option(help="Seed (random orders, judge sampling).")] = 0,
    structured: Annotated[bool, typer.Option("--structured/--free-text", help="Ask the backend for JSON "
                                             "matching the reply schema, or let the judge reason.")] = True,
    out: Annotated[Path | None, typer.Option(help="Record every judgment here (re-running resumes).")] = None,
    base_url: BaseUrlOption = None,
    no_cache: NoCacheOption = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the full result as JSON.")] = False,
) -> None:
    """Score one idea LigBench-style: rating, contribution, soundness by pairwise Elo against the
    corpus, and hybrid novelty; prints the comparisons that produced them."""
    idea_id, text, cutoff = read_idea(idea)
    settings = _settings(order, clamp, max_comparisons, min_comparisons, epsilon, n_calibration,
                         scholar_base_url, online, seed, parity, structured)
    options = ExecutionOptions(base_url=base_url, use_cache=not no_cache, progress=False)
    result = asyncio.run(score_idea_async(
        text, corpus, judge, settings=settings, options=options, out=out, idea_id=idea_id, cutoff=cutoff,
        debias_means=_choice("--debias-means", debias_means),  # type: ignore[arg-type]
    ))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        print_tables(score_tables(result))
        if result.novelty and result.novelty.get("note"):
            typer.echo(result.novelty["note"])
    if result.scores is None:
        raise typer.Exit(1)


def _topics(path: Path | None) -> list[str]:
    if path is None:
        return list(DEFAULT_TOPICS)
    if not path.is_file():
        raise UserError(f"--topics {path}: no such file (one topic per line)")
    topics = [line.strip() for line in read_text(path).splitlines()
              if line.strip() and not line.lstrip().startswith("#")]
    if not topics:
        raise UserError(f"--topics {path}: no topics (one per line; '#' starts a comment)")
    return topics


@run_app.command("ligbench")
def ligbench_command(
    corpus: Annotated[Path, typer.Option(help="PAIR-IQ-format reference corpus (file or directory).")],
    generator: Annotated[list[str] | None, typer.Option(help="Generator model (repeat for several "
                                                        "systems).")] = None,
    judge: Annotated[str, typer.Option(help="Judge model.")] = DEFAULT_MODEL,
    topics: Annotated[Path | None, typer.Option(help="File with one topic per line; default: our 11 "
                                                "topics (the paper's list is not public).")] = None,
    ideas_per_topic: Annotated[int, typer.Option(min=1, help="Ideas per topic and generator.")] = 1,
    scholarideas: Annotated[int, typer.Option(min=0, help="Also score the first N ScholarIdeas plans as a "
                                              "human-written system.")] = 0,
    scholarideas_root: Annotated[Path | None, typer.Option(help="The ScholarIdeas folder (ScholarEval "
                                                       "release) for --scholarideas.")] = None,
    order: Annotated[str, typer.Option(help="both, random or fixed.")] = "both",
    clamp: Annotated[str, typer.Option(help="output or each-step.")] = "output",
    max_comparisons: Annotated[int, typer.Option(min=1, help="T_max.")] = 8,
    min_comparisons: Annotated[int, typer.Option(min=1)] = 3,
    epsilon: Annotated[float, typer.Option(min=0.0)] = 0.01,
    n_calibration: Annotated[int, typer.Option(min=1)] = 3,
    debias_means: Annotated[str, typer.Option(help="corpus, paper or none.")] = "corpus",
    online: Annotated[bool, typer.Option(help="Novelty from Semantic Scholar search.")] = False,
    scholar_base_url: Annotated[str | None, typer.Option(help="Semantic Scholar API base URL.")] = None,
    parity: Annotated[bool, typer.Option(help="The paper's settings: fixed order, each-step clamp, "
                                         "reference papers as published (not rewritten).")] = False,
    seed: Annotated[int, typer.Option()] = 0,
    structured: Annotated[bool, typer.Option("--structured/--free-text", help="Ask the backend for JSON "
                                             "matching the reply schema, or let the judge reason.")] = True,
    out: Annotated[Path, typer.Option(help="Run directory; the same command again resumes.")] = Path(
        "runs/ligbench"),
    limit: Annotated[int | None, typer.Option(min=1, help="Score only the first N ideas.")] = None,
    base_url: BaseUrlOption = None,
    judge_base_url: JudgeBaseUrlOption = None,
    max_concurrency: MaxConcurrencyOption = 4,
    rpm: RpmOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Run LigBench: generate ideas per topic with each generator and score them against the corpus."""
    config = LigBenchConfig(
        generators=generator or [DEFAULT_MODEL], judge=judge, corpus=str(corpus), topics=_topics(topics),
        ideas_per_topic=ideas_per_topic, scholarideas=scholarideas, seed=seed,
        scholarideas_root=str(scholarideas_root) if scholarideas_root else None,
        debias_means=_choice("--debias-means", debias_means),  # type: ignore[arg-type]
        scoring=_settings(order, clamp, max_comparisons, min_comparisons, epsilon, n_calibration,
                          scholar_base_url, online, seed, parity, structured),
    )
    options = ExecutionOptions(out=out, limit=limit, base_url=base_url, judge_base_url=judge_base_url,
                               max_concurrency=max_concurrency, rpm=rpm, use_cache=not no_cache)
    results = run_ligbench(config, options)
    print_tables(results_tables(results))
    finish_run(results, out)


@run_app.command("ligbench-judge")
def ligbench_judge_command(
    corpus: Annotated[Path, typer.Option(help="PAIR-IQ-format reference corpus (file or directory).")],
    judge: Annotated[str, typer.Option(help="Judge model to evaluate.")] = DEFAULT_MODEL,
    pairs: Annotated[int, typer.Option(min=1, help="Held-out pairs (LigBench used 269).")] = 269,
    min_gap: Annotated[float, typer.Option(min=0.0, help="Least debiased-rating gap in a pair.")] = 0.25,
    order: Annotated[str, typer.Option(help="both (averaged) or fixed.")] = "both",
    debias_means: Annotated[str, typer.Option(help="corpus, paper or none.")] = "corpus",
    seed: Annotated[int, typer.Option()] = 0,
    structured: Annotated[bool, typer.Option("--structured/--free-text", help="Ask the backend for JSON "
                                             "matching the reply schema, or let the judge reason.")] = True,
    out: Annotated[Path, typer.Option(help="Run directory; the same command again resumes.")] = Path(
        "runs/ligbench-judge"),
    limit: Annotated[int | None, typer.Option(min=1, help="Judge only the first N pairs.")] = None,
    base_url: BaseUrlOption = None,
    max_concurrency: MaxConcurrencyOption = 4,
    rpm: RpmOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Judge accuracy: agreement of a pairwise judge with debiased scores on similar-paper pairs."""
    from ideaharness.benchmarks.ligbench.judge_eval import (
        JudgeAccuracyConfig,
        accuracy_table,
        run_judge_accuracy,
    )

    if order not in ("both", "fixed"):
        raise UserError(f"--order {order!r}: choose one of both, fixed")
    config = JudgeAccuracyConfig(judge=judge, corpus=str(corpus), n_pairs=pairs, min_gap=min_gap,
                                 order=order,  # type: ignore[arg-type]
                                 debias_means=_choice("--debias-means", debias_means),  # type: ignore[arg-type]
                                 seed=seed, structured_output=structured)
    options = ExecutionOptions(out=out, limit=limit, base_url=base_url, max_concurrency=max_concurrency,
                               rpm=rpm, use_cache=not no_cache)
    results = run_judge_accuracy(config, options)
    print_tables([accuracy_table(results)])
    typer.echo(f"report: {out / 'report.html'}")
