"""``ideaharness data build ideabench|aiideabench|pairiq|hindsight`` and ``ideaharness data validate PATH``.

API keys and logins come from the environment only (``S2_API_KEY``, ``OPENREVIEW_USERNAME`` /
``OPENREVIEW_PASSWORD``), never from flags, so they do not land in shell history or manifests.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from ideaharness.cli.app import data_app, new_app
from ideaharness.errors import UserError
from ideaharness.textio import read_text

build_app = new_app(help="Build a dataset from scholarly APIs (re-running resumes).")
data_app.add_typer(build_app, name="build")

def _checked_url(value: str | None) -> str | None:
    """``--base-url`` refused before any request when it is no http(s) URL with a host."""
    from ideaharness.net.urls import check_base_url

    if value is None:
        return None
    try:
        return check_base_url(value)
    except ValueError as exc:
        raise UserError(f"--base-url {value!r}: {exc}") from None


BaseUrl = Annotated[
    str | None, typer.Option(help="API root (e.g. a local replay server); default the service.",
                             callback=_checked_url)
]
CacheDir = Annotated[Path | None, typer.Option(help="Response cache folder; default <out>/cache.")]
MinInterval = Annotated[
    float | None, typer.Option(help="Seconds between requests; default the service's etiquette.")
]


def _date(value: str | None, flag: str) -> dt.date | None:
    if value is None:
        return None
    from ideaharness.schema import read_date

    try:
        return read_date(value)
    except ValueError as exc:
        raise UserError(f"{flag}: {exc}") from None


def _print_result(result: object) -> None:
    data = result.model_dump() if hasattr(result, "model_dump") else result  # type: ignore[union-attr]
    typer.echo(json.dumps(data, indent=2, default=str))


@build_app.command("ideabench")
def build_ideabench_command(
    out: Annotated[Path, typer.Option(help="Output folder; the same command again resumes.")] = Path(
        "data/ideabench"
    ),
    year: Annotated[str | None, typer.Option(help="Publication year or range '2023-2024'.")] = "2024",
    query: Annotated[str | None, typer.Option(help="Bulk-search query terms (optional).")] = None,
    venue: Annotated[
        list[str] | None, typer.Option(help="Top venue of strategy 1 (repeat); default list.")
    ] = None,
    field_of_study: Annotated[
        list[str] | None,
        typer.Option(help="Field of study of strategy 2 (repeat); default Medicine, Biology."),
    ] = None,
    min_citations_top: Annotated[int, typer.Option(min=0)] = 1,
    min_citations_other: Annotated[int, typer.Option(min=0)] = 20,
    max_targets: Annotated[int, typer.Option(min=1, help="Targets per strategy.")] = 100,
    max_references: Annotated[
        int | None, typer.Option(min=1, help="References per target (300 = original).")
    ] = None,
    min_reference_citations: Annotated[int, typer.Option(min=0)] = 5,
    min_references: Annotated[int, typer.Option(min=1)] = 3,
    published_after: Annotated[str | None, typer.Option(help="Window start YYYY-MM-DD.")] = None,
    published_before: Annotated[str | None, typer.Option(help="Window end YYYY-MM-DD.")] = None,
    fulltext: Annotated[
        Path | None, typer.Option(help="S2ORC/unarXive JSONL(.gz) for the section filter.")
    ] = None,
    base_url: BaseUrl = None,
    cache_dir: CacheDir = None,
    min_interval: MinInterval = None,
) -> None:
    """Target papers by the two IdeaBench strategies, their references, the original CSVs + JSONL."""
    from ideaharness.data.builders.ideabench import IdeaBenchSettings, build_ideabench

    start, end = _date(published_after, "--published-after"), _date(published_before, "--published-before")
    defaults = IdeaBenchSettings()
    settings = IdeaBenchSettings(
        year=int(year) if year and year.isdigit() else year,
        query=query,
        top_venues=venue or defaults.top_venues,
        fields_of_study=field_of_study or defaults.fields_of_study,
        min_citations_top=min_citations_top,
        min_citations_other=min_citations_other,
        max_targets=max_targets,
        max_references=max_references,
        min_reference_citations=min_reference_citations,
        min_references=min_references,
        publication_date_window=(start, end) if start or end else None,
        fulltext=str(fulltext) if fulltext else None,
    )

    _print_result(asyncio.run(_with_s2(build_ideabench, out, settings, base_url, cache_dir, min_interval)))


async def _with_s2(
    builder: Any, out: Path, settings: Any, base_url: str | None, cache_dir: Path | None,
    min_interval: float | None,
) -> object:
    """Run a Semantic Scholar dataset builder with a client opened (and closed) around it."""
    from ideaharness.data.builders.ideabench import default_cache_dir
    from ideaharness.scholarly import SemanticScholar

    async with SemanticScholar(
        base_url=base_url or "https://api.semanticscholar.org",
        cache_dir=cache_dir or default_cache_dir(out),
        min_interval_s=min_interval,
    ) as client:
        return await builder(out, settings, client)


@build_app.command("aiideabench")
def build_aiideabench_command(
    targets: Annotated[
        Path | None, typer.Option(help="File with one target title or S2 id per line.")
    ] = None,
    target: Annotated[list[str] | None, typer.Option(help="A target title or id (repeat).")] = None,
    out: Annotated[Path, typer.Option(help="Output folder; the same command again resumes.")] = Path(
        "data/aiideabench"
    ),
    cutoff: Annotated[str, typer.Option(help="Keep targets published after this date.")] = "2023-10-03",
    n_inspirations: Annotated[int, typer.Option(min=1)] = 5,
    fulltext: Annotated[
        Path | None, typer.Option(help="S2ORC/unarXive JSONL(.gz) for in-text counts.")
    ] = None,
    base_url: BaseUrl = None,
    cache_dir: CacheDir = None,
    min_interval: MinInterval = None,
) -> None:
    """Targets after the cutoff with their 5 most-cited-in-text references as inspirations."""
    from ideaharness.data.builders.aiideabench import AIIdeaBenchSettings, build_aiideabench

    items = list(target or [])
    if targets is not None:
        if not targets.is_file():
            raise UserError(f"--targets {targets}: no such file")
        items += [line.strip() for line in read_text(targets).splitlines() if line.strip()]
    if not items:
        raise UserError("give --targets FILE or at least one --target")
    settings = AIIdeaBenchSettings(
        targets=items,
        cutoff=_date(cutoff, "--cutoff") or dt.date(2023, 10, 3),
        n_inspirations=n_inspirations,
        fulltext=str(fulltext) if fulltext else None,
    )

    _print_result(asyncio.run(_with_s2(build_aiideabench, out, settings, base_url, cache_dir, min_interval)))


@build_app.command("pairiq")
def build_pairiq_command(
    venue: Annotated[
        list[str] | None, typer.Option(help="OpenReview venue id (repeat), e.g. ICLR.cc/2024/Conference.")
    ] = None,
    out: Annotated[Path, typer.Option(help="Output folder; the same command again resumes.")] = Path(
        "data/pairiq"
    ),
    include_withdrawn: Annotated[bool, typer.Option(help="Keep withdrawn / desk-rejected papers.")] = False,
    min_reviews: Annotated[int, typer.Option(min=1)] = 1,
    base_url: BaseUrl = None,
    cache_dir: CacheDir = None,
    min_interval: MinInterval = None,
) -> None:
    """PAIR-IQ records (scores projected to 0-5, venue-debiased) from OpenReview venues."""
    from ideaharness.data.builders.ideabench import default_cache_dir
    from ideaharness.data.builders.pairiq import PairIQSettings, build_pairiq
    from ideaharness.scholarly import OpenReview

    settings = PairIQSettings(
        venues=venue or PairIQSettings().venues, include_withdrawn=include_withdrawn, min_reviews=min_reviews
    )

    async def go() -> object:
        async with OpenReview(
            base_url=base_url or "https://api2.openreview.net",
            cache_dir=cache_dir or default_cache_dir(out),
            min_interval_s=0.5 if min_interval is None else min_interval,
        ) as c:
            return await build_pairiq(out, settings, c)

    _print_result(asyncio.run(go()))


@build_app.command("hindsight")
def build_hindsight_command(
    topic: Annotated[list[str] | None, typer.Option(
        metavar="TEXT", help="A research topic (repeat for several).")] = None,
    cutoff: Annotated[list[str] | None, typer.Option(
        metavar="DATE",
        help="Knowledge cutoff T, YYYY-MM-DD: one for every topic, or one per --topic.")] = None,
    query: Annotated[list[str] | None, typer.Option(
        metavar="TEXT", help="Search query per --topic (default: the topic itself).")] = None,
    field: Annotated[str | None, typer.Option(
        metavar="TEXT", help="Field of study impact falls back on.")] = None,
    topics: Annotated[Path | None, typer.Option(
        metavar="FILE",
        help="JSONL file of topics: {\"topic\", \"cutoff\", \"query\", \"field\", \"id\"} a line.")] = None,
    horizon: Annotated[str, typer.Option(
        metavar="MONTHS", help="Future window after T, e.g. 30m or 2y.")] = "30m",
    n_literature: Annotated[int, typer.Option(
        min=0, metavar="INT", help="Works of the literature up to T per topic.")] = 30,
    n_future: Annotated[int, typer.Option(
        min=1, metavar="INT", help="Works of the window per topic (the pool).")] = 100,
    source: Annotated[list[str] | None, typer.Option(
        metavar="SOURCE", help="s2 (default) and/or openalex (repeat).")] = None,
    as_of: Annotated[str | None, typer.Option(
        metavar="DATE",
        help="Day the citation counts are from, YYYY-MM-DD (default: the day of the first run).")] = None,
    out: Annotated[Path, typer.Option(
        metavar="DIR", help="Output folder; the same command again resumes.")] = Path("data/hindsight"),
    base_url: Annotated[str | None, typer.Option(
        metavar="URL", help="API root (e.g. a local replay server); default the service.",
        callback=_checked_url)] = None,
    openalex_base_url: Annotated[str | None, typer.Option(
        metavar="URL", help="OpenAlex API root (e.g. a local replay server).", callback=_checked_url)] = None,
    cache_dir: Annotated[Path | None, typer.Option(
        metavar="DIR", help="Response cache folder; default <out>/cache.")] = None,
    min_interval: Annotated[float | None, typer.Option(
        metavar="SECONDS", help="Seconds between requests; default the service's etiquette.")] = None,
) -> None:
    """HindSight topics: each topic's literature up to its cutoff T and its candidate pool, the papers
    of (T, T + horizon]."""
    from ideaharness.data.builders.hindsight import (
        HindsightSettings,
        TopicSpec,
        build_hindsight,
        check_distinct,
        parse_horizon,
    )
    from ideaharness.jsonl import iter_jsonl_models

    specs: list[TopicSpec] = []
    origins: list[str] = []
    if topics is not None:
        if not topics.is_file():
            raise UserError(f"--topics {topics}: no such file")
        for lineno, spec in iter_jsonl_models(topics, TopicSpec, noun="a topic"):
            specs.append(spec)
            origins.append(f"{topics} line {lineno}")
    given = list(topic or [])
    cutoffs = [_date(c, "--cutoff") for c in cutoff or []]
    if given and not cutoffs:
        raise UserError("--cutoff: each --topic needs a knowledge cutoff, YYYY-MM-DD")
    if given and len(cutoffs) not in (1, len(given)):
        raise UserError(f"--cutoff: give one for every topic or one per --topic ({len(given)} topics, "
                        f"{len(cutoffs)} cutoffs)")
    queries = list(query or [])
    if queries and len(queries) != len(given):
        raise UserError(f"--query: give one per --topic ({len(given)} topics, {len(queries)} queries)")
    for i, text in enumerate(given):
        if not text.strip() or (queries and not queries[i].strip()):
            raise UserError(f"--topic {text!r}: empty topic or --query (give non-blank text)")
        specs.append(TopicSpec(topic=text, cutoff=cutoffs[i if len(cutoffs) > 1 else 0] or dt.date.min,
                               query=queries[i] if queries else None, field=field))
        origins.append(f"--topic {text!r}")
    if not specs:
        raise UserError("give --topic TEXT --cutoff YYYY-MM-DD, or --topics FILE")
    check_distinct(specs, origins)
    sources = list(dict.fromkeys(source or ["s2"]))
    unknown = [s for s in sources if s not in ("s2", "openalex")]
    if unknown:
        raise UserError(f"--source {unknown[0]!r}: choose s2 or openalex")
    try:
        months = parse_horizon(horizon)
    except ValueError as exc:
        raise UserError(f"--horizon: {exc}") from None
    settings = HindsightSettings(topics=specs, horizon_months=months, n_literature=n_literature,
                                 n_future=n_future, sources=sources,  # type: ignore[arg-type]
                                 as_of=_date(as_of, "--as-of"))

    async def go() -> object:
        from ideaharness.data.builders.ideabench import default_cache_dir
        from ideaharness.scholarly import OpenAlex, SemanticScholar

        cache = cache_dir or default_cache_dir(out)
        clients: dict[str, Any] = {}
        try:
            if "s2" in sources:
                clients["s2"] = SemanticScholar(base_url=base_url or "https://api.semanticscholar.org",
                                                cache_dir=cache, min_interval_s=min_interval)
            if "openalex" in sources:
                clients["openalex"] = OpenAlex(base_url=openalex_base_url or "https://api.openalex.org",
                                               cache_dir=cache, min_interval_s=0.1 if min_interval is None
                                               else min_interval)
            return await build_hindsight(out, settings, clients)
        finally:
            for client in clients.values():
                await client.aclose()

    _print_result(asyncio.run(go()))


@data_app.command("validate")
def validate_command(
    path: Annotated[Path, typer.Argument(
        help="A dataset in any form --data takes: Instance JSONL (or a folder with instances.jsonl), "
        "IdeaBench CSVs, a ResearchBench release or .xlsx sheets, AI Idea Bench target_paper_data.json, "
        "a HindSight topics file or build folder.")],
    min_references: Annotated[int, typer.Option(min=0, help="Warn below this many references.")] = 3,
    max_issues: Annotated[int, typer.Option(min=1, help="Issues to print (errors first, then "
                                            "warnings); every kind is counted whatever the cap.")] = 50,
) -> None:
    """Counts, empty/duplicated fields, too few references, local paths, API-key-like strings.

    Prints the counts, then the number of issues of each kind (errors first), then the issues
    themselves, errors before warnings, at most --max-issues of them. Exit 0 when clean (warnings
    allowed), 1 when errors were found or PATH holds no dataset."""
    from ideaharness.benchmarks.hindsight.validate import topics_file, validate_topics
    from ideaharness.data.validate import validate_dataset

    if topics_file(path) is not None:  # HindSight topics: the run's own loader (not instances)
        report = validate_topics(path)
    else:
        report = validate_dataset(path, min_references=min_references)
    typer.echo(f"{report.path}: " + ", ".join(f"{k} {v}" for k, v in report.counts.items()))
    for (level, kind), count in report.kind_counts().items():
        typer.echo(f"{level}s of kind {kind}: {count}")
    ordered = report.ordered()
    for issue in ordered[:max_issues]:
        typer.echo(f"{issue.level}: {issue.where}: {issue.message}")
    if len(ordered) > max_issues:
        hidden = ordered[max_issues:]
        n_err = sum(1 for i in hidden if i.level == "error")
        typer.echo(f"... {len(hidden)} more not shown ({n_err} error(s), {len(hidden) - n_err} "
                   "warning(s)); --max-issues N shows more")
    if not report.ok:
        raise SystemExit(1)  # click would swallow typer.Exit under standalone_mode=False
