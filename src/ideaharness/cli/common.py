"""Shared CLI commands: ``ideaharness cache info`` and ``ideaharness cache clear`` (the LLM response
cache and, without ``--path``, the embedding store)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer

from ideaharness.cli.app import app, cache_app
from ideaharness.llm.cache import cache_info, clear_cache, default_cache_path
from ideaharness.llm.client import DEFAULT_MODEL

_PATH_HELP = "Cache file (default: $IDEAHARNESS_CACHE_DIR/llm-cache.sqlite or ~/.cache/ideaharness/...)."
PathOption = Annotated[Path | None, typer.Option("--path", help=_PATH_HELP)]


@cache_app.command("info")
def info(path: PathOption = None) -> None:
    """Print the cache file, its number of entries (per model) and its size on disk; without
    ``--path`` also the embedding store's (embeddings per model and layer)."""
    result = cache_info(path)
    if not result.exists:
        typer.echo(f"{result.path}: no cache yet (0 entries)")
    else:
        typer.echo(f"{result.path}: {result.entries} entries, {_human(result.size_bytes)}")
        for model, count in sorted(result.entries_by_model.items()):
            typer.echo(f"  {model}: {count}")
    if path is None:
        from ideaharness.metrics.embedding_store import store_info

        store = store_info()
        if not store.exists:
            typer.echo(f"{store.path}: no embedding store yet (0 embeddings)")
            return
        typer.echo(f"{store.path}: {store.entries} embeddings, {_human(store.size_bytes)}")
        for space, count in sorted(store.entries_by_space.items()):
            typer.echo(f"  {space}: {count}")


EmbeddingsOption = Annotated[bool, typer.Option("--embeddings", help="Delete the embedding store "
                                                "(BERTScore and sentence embeddings) instead.")]


@cache_app.command("clear")
def clear(path: PathOption = None, embeddings: EmbeddingsOption = False) -> None:
    """Delete the response cache (the next run calls the models again), or with ``--embeddings``
    the embedding store (the next run embeds every text again)."""
    if embeddings:
        from ideaharness.metrics.embedding_store import clear_store, default_store_path

        target = default_store_path()
        typer.echo(f"{target}: cleared ({_human(clear_store(target))} freed)")
        return
    target = path or default_cache_path()
    freed = clear_cache(target)
    typer.echo(f"{target}: cleared ({_human(freed)} freed)")


def _human(n_bytes: int) -> str:
    size = float(n_bytes)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


@app.command("demo")
def demo_command(
    model: Annotated[str, typer.Option(help="Generator and judge model.")] = DEFAULT_MODEL,
    limit: Annotated[int, typer.Option(min=1, help="Bundled TOMATO-Chem papers to use.")] = 3,
    out: Annotated[Path, typer.Option(help="Run directory.")] = Path("runs/demo"),
) -> None:
    """The main job: IdeaBench on bundled TOMATO-Chem papers with the embedded model (no keys)."""
    from ideaharness.api import run
    from ideaharness.benchmarks.ideabench import results_tables
    from ideaharness.errors import Terminated
    from ideaharness.report.console import print_banner, print_reliability, print_tables
    from ideaharness.runner.run import finish_run

    try:
        results = run("ideabench", data="tomato-chem", generator=model, judge=model, out=out, limit=limit)
    except Terminated as exc:  # click would turn it into Ctrl-C's 130
        raise typer.Exit(exc.exit_code) from None
    print_banner(results)
    print_tables(results_tables(results))
    print_reliability(results)
    typer.echo(model_calls_line(results))
    finish_run(results, out.resolve())


def model_calls_line(results: Mapping[str, Any]) -> str:
    """``"model calls this run: 14 (generator 9, rewriter 5; judge shares generator's client)
    (cache hits: 3)"``: the calls and cache hits of this process summed over every role's client,
    each client once (``llm_stats_this_process`` gives a role sharing another's client None; the
    ``cost`` block's ``shares_client_of`` names whose), with the calls per client."""
    stats = results.get("llm_stats_this_process") or {}
    roles = ((results.get("cost") or {}).get("roles") or {})
    own = {role: s for role, s in stats.items() if isinstance(s, Mapping)}
    shared = [f"{role} shares {owner}'s client" for role in stats
              if (owner := (roles.get(role) or {}).get("shares_client_of"))]
    if not own:
        return "model calls this run: ? (no model client counted its calls)"
    calls = sum(int(s.get("calls") or 0) for s in own.values())
    hits = sum(int(s.get("cache_hits") or 0) for s in own.values())
    detail = ", ".join(f"{role} {int(s.get('calls') or 0)}" for role, s in own.items())
    return f"model calls this run: {calls} ({'; '.join([detail, *shared])}) (cache hits: {hits})"
