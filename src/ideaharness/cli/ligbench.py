"""``ideaharness score-idea``: one idea scored LigBench-style (``run ligbench`` and
``run ligbench-judge`` are generated from their registered benchmarks)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from ideaharness.benchmarks.ligbench.config import ScoreIdeaConfig
from ideaharness.benchmarks.ligbench.score_idea import score_idea_async
from ideaharness.benchmarks.ligbench.steps import IdeaScore
from ideaharness.cli.app import app
from ideaharness.cli.generate import config_parameter, make_command, option_parameters
from ideaharness.errors import ParseError, PartialRunError, UserError
from ideaharness.report.console import print_tables
from ideaharness.report.html import Table
from ideaharness.runner.arguments import load_config_file
from ideaharness.runner.fields import keyword_index, set_path
from ideaharness.runner.options import ExecutionOptions
from ideaharness.textio import read_text

SCORE_IDEA_SKIP = ("limit", "shard", "judge_base_url", "max_concurrency", "rpm", "progress")
"""Execution options that do not apply to one idea."""


def read_idea(value: str) -> tuple[str, str, str | None]:
    """``(idea id, text, cut-off date)`` from a ScholarIdeas folder, a text file, or literal text.

    Raises:
        UserError: an empty argument, a path-like value that does not exist, or an empty idea.
    """
    from ideaharness.data.scholarideas import load_plan

    if not value.strip():  # Path("") is ".", the current folder: never read it as a plan folder
        raise UserError("the IDEA argument is empty: give a file, a ScholarIdeas folder, or the idea text")
    path = Path(value)
    if len(value) < 4096 and path.exists():
        if path.is_dir():
            plan = load_plan(path)
            return plan.id, plan.text, plan.cutoff.isoformat() if plan.cutoff else None
        if path.stem == path.parent.name and (path.parent / "cutoff.txt").is_file():
            plan = load_plan(path.parent)
            return plan.id, plan.text, plan.cutoff.isoformat() if plan.cutoff else None
        return path.stem, _idea_prose(read_text(path), f"{path}: the idea file"), None
    if "\n" not in value and " " not in value and path.suffix in (".txt", ".md", ".json"):
        raise UserError(f"{value}: no such file (give a file, a ScholarIdeas folder, or the idea text)")
    return "idea", _idea_prose(value, "the idea text"), None


def _idea_prose(text: str, what: str) -> str:
    """``text`` unless it is empty or degenerate (whitespace, zero-width characters, punctuation)."""
    from ideaharness.llm.parsing import check_text

    try:
        check_text(text, what, min_words=3)
    except ParseError as exc:
        raise UserError(str(exc)) from None
    return text


def parse_failure_table(result: IdeaScore) -> Table | None:
    """The judgments of ``result`` whose replies did not parse, each with its last parse error and
    whether running again re-asks it (None when every reply parsed)."""
    rows = [[u["step"], u.get("key") or "–", u.get("attempts"), u.get("rounds"),
             "no (final)" if u.get("final") else "yes", u.get("error")]
            for u in result.failed_units if u.get("status") == "unparsed"]
    if not rows:
        return None
    return Table(title=f"{result.idea_id}: replies that did not parse (counted, never scored)",
                 columns=["step", "key", "samples", "runs", "re-asked by a re-run", "parse error"], rows=rows)


def score_tables(result: IdeaScore) -> list[Table]:
    """The four scores with their start values, and the comparisons that produced them; then the
    replies that did not parse, with their parse errors."""
    failures = parse_failure_table(result)
    if result.scores is None:
        return [Table(title=f"{result.idea_id}: not scored", columns=["status", "parse failures"],
                      rows=[[result.status, json.dumps(result.parse_failures)]]),
                *([failures] if failures else [])]
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
        *([failures] if failures else []),
    ]


def score_idea_command(idea: str, out: Path | None = None, as_json: bool = False,
                       config_file: Path | None = None,
                       **values: Any) -> None:
    """Score one idea LigBench-style: rating, contribution, soundness by pairwise Elo against the
    corpus, and hybrid novelty; prints the comparisons that produced them."""
    idea_id, text, cutoff = read_idea(idea)
    flat = {**(load_config_file(config_file) if config_file else {}), **values}
    index = keyword_index(ScoreIdeaConfig)
    settings: dict[str, Any] = {}
    opts: dict[str, Any] = {"progress": False}
    for key, value in flat.items():
        if key in index:
            set_path(settings, index[key].path, value)
        elif key in ExecutionOptions.model_fields and key not in SCORE_IDEA_SKIP:
            opts[key] = value
        else:
            from ideaharness.runner.arguments import did_you_mean

            known = [*index, *(k for k in ExecutionOptions.model_fields if k not in SCORE_IDEA_SKIP)]
            raise UserError(f"--config {config_file}: unknown setting {key!r}{did_you_mean([key], known)}")
    config = ScoreIdeaConfig.model_validate(settings)
    options = ExecutionOptions.model_validate(opts)
    from ideaharness.benchmarks.ligbench.cutoff import as_date
    from ideaharness.cutoff import effective_cutoff

    stricter = effective_cutoff(as_date(cutoff), config.cutoff)  # a plan's cutoff.txt, --cutoff: the earlier
    cutoff = stricter.isoformat() if stricter else None
    result = asyncio.run(score_idea_async(
        text, config.corpus, config.judge, settings=config.scoring, options=options, out=out,
        idea_id=idea_id, cutoff=cutoff, debias_means=config.debias_means,
        max_prompt_tokens=config.max_prompt_tokens,
    ))
    if as_json:
        typer.echo(result.model_dump_json(indent=2))
    else:
        print_tables(score_tables(result))
        if result.novelty and result.novelty.get("note"):
            typer.echo(result.novelty["note"])
    if result.scores is None:  # the one unit asked for is missing: a partial run (exit 3)
        raise PartialRunError(not_scored_message(result))


def not_scored_message(result: IdeaScore) -> str:
    """The one line of a ``score-idea`` that scored nothing: the status, every failed unit with its
    error (parse errors included), and what running the same command again does."""
    failed = "; ".join(f"{u['step']}: {'reply did not parse: ' if u.get('status') == 'unparsed' else ''}"
                       f"{u['error']}" for u in result.failed_units)
    unparsed = [u for u in result.failed_units if u.get("status") == "unparsed"]
    if unparsed and all(u.get("final") for u in unparsed) and len(unparsed) == len(result.failed_units):
        then = ("re-asking is spent (each reply was asked in "
                f"{max(int(u.get('rounds') or 1) for u in unparsed)} runs): try another judge or "
                "--free-text/--structured")
    elif unparsed:
        then = "run the same command again to retry (it re-asks with new samples)"
    else:
        then = "run the same command again to retry"
    return f"{result.idea_id} not scored ({result.status}" + (f"; {failed}" if failed else "") + f"); {then}"


def _score_idea_parameters() -> list[Any]:
    import inspect

    fixed = [
        inspect.Parameter("idea", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Annotated[str,
                                                                                                typer.Argument(
            help="A file with the idea, a ScholarIdeas plan folder, or the idea text itself.")]),
        inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Annotated[
            Path | None, typer.Option(help="Record every judgment here (re-running resumes).")]),
        inspect.Parameter("as_json", inspect.Parameter.KEYWORD_ONLY, default=False, annotation=Annotated[
            bool, typer.Option("--json", help="Print the full result as JSON.")]),
    ]
    generated = option_parameters([ScoreIdeaConfig, ExecutionOptions], skip=(*SCORE_IDEA_SKIP, "out"))
    return [*fixed, *generated, config_parameter()]


app.command("score-idea")(make_command(_score_idea_parameters(), score_idea_command,
                                       score_idea_command.__doc__ or ""))
