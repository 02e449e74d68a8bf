"""Generation tasks for systems outside ideaharness: ``ideaharness tasks schema`` and ``tasks export``.

:func:`export_tasks` runs a benchmark in *capture mode* (:attr:`StepRunner.capture
<ideaharness.runner.steps.StepRunner.capture>`): every phase before generation runs as in a real
run (selection, blinding, inspiration digests: the judge is asked and recorded), and each
generation call, instead of being asked, is written as the task JSON a ``cmd:`` system would read
on stdin (one per line, the same bytes). A system answers them offline; ``run <benchmark> --ideas
answers.jsonl`` then scores the answers.

Reuse of the pre-generation work: it goes through the response cache like every model call. A later
``run`` with the same data, flags, judge and seed sends the identical judge requests and is answered
from the cache, so its tasks' inputs are identical to the exported ones (also for a sampled judge;
with ``--no-cache`` only deterministic judges, temperature 0 and seeded, give them again). ``--work
DIR`` is the run directory of the export (default: a temporary one, removed afterwards); exporting
again with the same ``--work`` resumes it (its judge records are reused, nothing is asked twice).
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
from pathlib import Path
from typing import Any

from ideaharness.errors import PartialRunError, UserError, storage_error
from ideaharness.fileio import atomic_write_text
from ideaharness.runner.arguments import RunArguments, resolve
from ideaharness.runner.registry import benchmarks, get_benchmark
from ideaharness.runner.run import arun_benchmark
from ideaharness.systems.contract import IdeaContract, contracts, get_contract
from ideaharness.systems.spec import CAPTURE_SPEC

SCHEMA_DIR = Path("docs") / "schemas"
"""Where the committed answer schemas live (``<benchmark>.idea.v<N>.json``)."""


def schema_file_name(contract: IdeaContract) -> str:
    """``"<benchmark>.idea.v<version>.json"``."""
    return f"{contract.benchmark}.idea.v{contract.version}.json"


def schema_text(contract: IdeaContract) -> str:
    """The contract's JSON Schema as written to files and printed (2-space indent, a final newline)."""
    return json.dumps(contract.json_schema(), indent=2, ensure_ascii=False) + "\n"


def benchmark_contract(name: str) -> IdeaContract:
    """The idea contract of benchmark ``name`` (the benchmark packages are imported first).

    Raises:
        UserError: unknown benchmark (lists the known ones), or a benchmark without a contract.
    """
    get_benchmark(name)
    return get_contract(name)


def all_contracts() -> dict[str, IdeaContract]:
    """Every registered benchmark's contract, by name (benchmark packages imported first; a
    contract whose benchmark is not registered is left out)."""
    known = benchmarks()
    return {name: c for name, c in sorted(contracts().items()) if name in known}


def write_schemas(folder: Path) -> list[Path]:
    """Write ``<benchmark>.idea.v<N>.json`` for every contract into ``folder``; returns the paths.

    Raises:
        StorageError: a file cannot be written.
    """
    return [atomic_write_text(folder / schema_file_name(c), schema_text(c)) for c in all_contracts().values()]


def check_writable(path: Path) -> None:
    """Refuse an output file that cannot be written, before any work.

    Raises:
        UserError: ``path`` is a folder, or its folder does not exist or cannot be written.
    """
    if path.is_dir():
        raise UserError(f"--out {path}: is a folder; give the tasks file to write")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise UserError(f"--out {path}: the folder {parent} does not exist")
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=f".{path.name}.", suffix=".tmp"):
            pass
    except OSError as exc:
        raise storage_error(path, exc) from None


def capture_generators(args: RunArguments) -> RunArguments:
    """``args`` with the config's generator(s) left at their defaults set to
    :data:`~ideaharness.systems.spec.CAPTURE_SPEC`, unless ``--ideas`` is set (a benchmark may
    export the tasks that follow a file's answers, e.g. MLR-Bench's proposals after its ideas).
    The tasks do not depend on who answers them, so no rule that depends on the default generator
    model (judges of its family, a rewriter defaulting to it) may refuse or change an export; a
    generator given explicitly is kept.

    Raises:
        ValidationError: the config refuses a system generator (no benchmark does).
    """
    config = args.config
    fields = type(config).model_fields
    if getattr(config, "ideas", None):
        return args
    update: dict[str, Any] = {}
    for name, value in (("generator", CAPTURE_SPEC), ("generators", [CAPTURE_SPEC])):
        if name in fields and name not in config.model_fields_set:  # a generator given is kept
            update[name] = value
    if not update:
        return args
    captured = type(config).model_validate({**config.model_dump(), **update})
    return dataclasses.replace(args, config=captured)


async def export_tasks(benchmark: str, out: Path, *, work: Path | None = None, config: Any = None,
                       **kwargs: Any) -> dict[str, Any]:
    """Write the generation tasks of a run of ``benchmark`` to ``out`` (JSON Lines).

    Args:
        out: the tasks file (one task JSON per line, sorted keys: the exact text a ``cmd:``
            system receives on stdin).
        work: the capture run's directory (resumable); None: a temporary one, removed after.
        config, kwargs: the run's settings, as :func:`ideaharness.run` takes them (``out`` excluded).

    Returns:
        ``{"tasks": n, "out": str, "work": str | None, "contract": schema id}``.

    Raises:
        UserError: unknown benchmark, a benchmark without contract, an unwritable ``out``, bad
            settings, or no task captured (the benchmark's generation does not go through
            ``generate_step``).
        PartialRunError: units before generation failed (exit 3): the tasks captured are written,
            theirs are missing; the same command again retries them.
    """
    bench = get_benchmark(benchmark)
    contract = get_contract(benchmark)
    check_writable(out)
    inputs = [kwargs.get("ideas"), kwargs.get("data"), kwargs.get("corpus"), config]
    if any(isinstance(f, str | Path) and Path(f).resolve() == out.resolve() for f in inputs):
        raise UserError(f"--out {out}: is an input of the export; write the tasks to another file")
    captured: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="ideaharness-export-") as scratch:
        run_dir = work if work is not None else Path(scratch) / "run"
        args = capture_generators(resolve(bench, config=config, **{**kwargs, "out": run_dir}))
        outcome = await arun_benchmark(bench, args, capture=captured)
    unique: dict[str, dict[str, Any]] = {}
    for task in captured:
        unique.setdefault(str(task["task_id"]), task)
    if not unique:
        unparsed = outcome.get("unparsed_units") or []
        if unparsed:
            first = unparsed[0]
            raise PartialRunError(
                f"tasks export {benchmark}: no task written: {len(unparsed)} judgment(s) before generation "
                f"did not parse, so no instance got its generation inputs (first: {first['step']} "
                f"{first['instance_id']}: {first['error']}); a judge that answers the blinding prompts "
                "is needed (run the same command again to re-ask them)")
        raise UserError(f"tasks export {benchmark}: no generation task was captured (the selection is empty, "
                        "or this benchmark's generation does not go through StepRunner.generate_step)")
    text = "".join(json.dumps(t, sort_keys=True, ensure_ascii=False) + "\n" for t in unique.values())
    atomic_write_text(out, text)
    failed = [u for u in outcome.get("failed_units") or [] if u.get("status") != "skipped"]
    if failed:
        shown = "; ".join(f"{u['step']} {u['instance_id']}: {u['error']}" for u in failed[:3])
        raise PartialRunError(f"tasks export {benchmark}: wrote {len(unique)} task(s) to {out}, but "
                              f"{len(failed)} unit(s) before generation failed and their tasks are missing "
                              f"({shown}); run the same command again to retry them")
    return {"tasks": len(unique), "out": str(out), "work": str(work) if work is not None else None,
            "contract": contract.schema_id}
