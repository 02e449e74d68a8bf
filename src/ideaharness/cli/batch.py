"""``ideaharness batch export RUN`` and ``ideaharness batch import RUN FILE``.

The requests a ``--batch`` run collected (``RUN/batches/*.requests.jsonl``) as OpenAI Batch JSONL
for ``vllm run-batch`` or any provider's batch console, and that tool's output file back into the
response cache; re-running the benchmark then finds every answer in the cache.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from ideaharness.cli.app import app
from ideaharness.errors import EXIT_PARTIAL, UserError
from ideaharness.fileio import atomic_write_text
from ideaharness.llm.batch_files import BATCHES_DIR, export_lines, import_output
from ideaharness.llm.cache import ResponseCache, default_cache_path

batch_app = typer.Typer(help="Batch JSONL of a run's uncached requests (vllm run-batch, batch consoles).",
                        no_args_is_help=True)
app.add_typer(batch_app, name="batch")

RunDir = Annotated[Path, typer.Argument(help="Run directory of a --batch run.")]
CacheOption = Annotated[
    Path | None, typer.Option("--cache", help="Response cache file (default: the usual one).")
]
OutputOption = Annotated[Path | None, typer.Option("--output", "-o", help="JSONL file (default: stdout).")]


def _run_dir(path: Path) -> Path:
    if not (path / BATCHES_DIR).is_dir():
        raise UserError(f"{path}: no {BATCHES_DIR}/ folder (run the benchmark with --batch first)")
    return path


@batch_app.command("export")
def export(
    run_dir: RunDir,
    output: OutputOption = None,
    cache: CacheOption = None,
) -> None:
    """Write the run's requests that have no cached answer as Batch JSONL (custom_id = cache key)."""
    _run_dir(run_dir)
    store = ResponseCache(cache or default_cache_path())
    try:
        text = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in export_lines(run_dir, store))
    finally:
        store.close()
    if output is None:
        sys.stdout.write(text)
        return
    atomic_write_text(output, text)
    typer.echo(f"{output}: {text.count(chr(10))} request(s)", err=True)


@batch_app.command("import")
def import_(
    run_dir: RunDir,
    file: Annotated[Path, typer.Argument(help="Batch output (or error) JSONL file.")],
    cache: CacheOption = None,
) -> None:
    """Put the answers of a Batch output file into the response cache; exit 3 if lines failed or a
    recorded request has no line in the file and no answer in the cache (missing)."""
    _run_dir(run_dir)
    store = ResponseCache(cache or default_cache_path())
    try:
        report = import_output(run_dir, file, store)
    finally:
        store.close()
    typer.echo(f"{file}: {report.imported} answers imported, {len(report.failed)} line(s) without an answer, "
               f"{len(report.missing)} request(s) with no line in the file and no answer yet, "
               f"{report.unreadable} unreadable")
    for key, reason in list(report.failed.items())[:5]:
        typer.echo(f"  {key[:12]}: {reason}", err=True)
    for key in report.missing[:5]:
        typer.echo(f"  {key[:12]}: no line in {file} (missing: import the output file that holds it, or "
                   "'batch export' it again)", err=True)
    if report.failed or report.unreadable or report.missing:
        raise typer.Exit(EXIT_PARTIAL)
