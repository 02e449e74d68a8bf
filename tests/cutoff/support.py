"""What the knowledge-cutoff tests share: the registry of per-benchmark cutoff tests, a CLI runner,
and readers of what a run recorded (prompts, cutoff records) and what a loopback server received.

A benchmark that reaches literature (``Benchmark.literature.sources`` not empty) needs at least
one test decorated ``@covers("<name>")`` in a ``tests/<package>/test_*cutoff*.py`` module: it
injects a work dated after an instance's cutoff into what the benchmark reads (references, a
corpus, search replies) and asserts the work reaches no recorded prompt and no request, and that
the exclusion is counted (``tests/cutoff/test_every_benchmark_cutoff.py`` fails otherwise).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import tests

F = TypeVar("F", bound=Callable[..., Any])

COVERED: dict[str, list[str]] = {}
"""Benchmark name -> the cutoff tests covering it (``module::function``), filled by :func:`covers`."""


def covers(*names: str) -> Callable[[F], F]:
    """Mark a test as the cutoff test of the benchmarks ``names``."""

    def mark(fn: F) -> F:
        for name in names:
            COVERED.setdefault(name, []).append(f"{fn.__module__}::{fn.__name__}")
        return fn

    return mark


def discover() -> dict[str, list[str]]:
    """Import every ``tests/<package>/test_*cutoff*.py`` module and return :data:`COVERED`."""
    root = Path(tests.__file__).parent
    for package in pkgutil.iter_modules(tests.__path__):
        if not package.ispkg:
            continue
        for module in pkgutil.iter_modules([str(root / package.name)]):
            if module.name.startswith("test_") and "cutoff" in module.name:
                importlib.import_module(f"tests.{package.name}.{module.name}")
    return COVERED


def prompt_texts(run_dir: Path) -> list[str]:
    """Every recorded prompt of a run, as one text each."""
    from ideaharness.runs.store import prompt_text, read_prompts

    return [prompt_text(m) for m in read_prompts(run_dir).values()]


def step_prompts(run_dir: Path, step_prefix: str) -> list[str]:
    """The recorded prompts of the records of steps starting with ``step_prefix``."""
    from ideaharness.runs.store import prompt_text, read_prompts

    prompts = read_prompts(run_dir)
    out = []
    for path in sorted((run_dir / "records").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            judgment = (row.get("data") or {}).get("judgment")
            if row["step"].startswith(step_prefix) and isinstance(judgment, dict):
                out.append(prompt_text(prompts[judgment["prompt_hash"]]))
    return out


def cutoff_records(run_dir: Path) -> list[dict[str, Any]]:
    """The run's ``cutoff`` records (``{"instance_id", "key", "data"}``)."""
    path = run_dir / "records" / "cutoff.jsonl"
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def request_texts(requests: Iterable[Any]) -> list[str]:
    """The bodies a loopback OpenAI-compatible server received, as JSON text (unescaped)."""
    return [json.dumps(r.body, ensure_ascii=False) for r in requests]


def results(run_dir: Path) -> dict[str, Any]:
    return json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
