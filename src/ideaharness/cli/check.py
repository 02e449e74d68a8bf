"""``ideaharness check leakage RUN_DIR``: the knowledge-cutoff leakage check of a saved run (no
model calls; :func:`ideaharness.runner.leakage.check_run`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ideaharness.cli.app import new_app, register_app
from ideaharness.errors import UserError

EXIT_LEAKAGE = 4
"""Exit status of ``check leakage`` when a work dated after its instance's cutoff reached a prompt
or a search."""

check_app = register_app(new_app(help="Checks of saved run directories."), "check")


class LeakageFound(UserError):
    """Works dated after their instance's cutoff reached a prompt or a search (exit 4)."""

    exit_code = EXIT_LEAKAGE


@check_app.command("leakage")
def leakage_command(
    run_dir: Annotated[Path, typer.Argument(help="A run directory (the --out of a run).")],
    model_cutoff: Annotated[list[str] | None, typer.Option(
        "--model-cutoff", help="DATE or ROLE=DATE (YYYY-MM-DD or 'unknown'): a role's model training "
        "cutoff, over the table's (repeat the flag).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the leakage block as JSON.")] = False,
) -> None:
    """Works excluded by the knowledge cutoff, works dated after an instance's cutoff found in the
    run's recorded prompts and accesses (exit 4 when any), and the models' training cutoffs."""
    from ideaharness.report.console import print_tables
    from ideaharness.runner.leakage import check_run, leakage_lines, leakage_table
    from ideaharness.runner.options import ExecutionOptions

    overrides = ExecutionOptions(model_cutoff=model_cutoff or None).model_cutoff
    block = check_run(run_dir, overrides)
    if as_json:
        typer.echo(json.dumps(block, indent=2, ensure_ascii=False))
    else:
        table = leakage_table({"leakage": block})
        if table is not None:
            print_tables([table.model_copy(update={"note": None})])
        for line in leakage_lines({"leakage": block}):
            typer.echo(line)
    leaks = int(block["check"]["leaks"])
    if leaks:
        examples = block["check"]["examples"]
        first = examples[0] if examples else {}
        where = first.get("step") or first.get("source")
        title = (first.get("work") or {}).get("title", "")
        raise LeakageFound(f"{run_dir}: {leaks} work(s) dated after their instance's cutoff reached a prompt "
                           f"or a search (e.g. {first.get('kind')} {where} of {first.get('instance_id')}: "
                           f"{title!r})")
