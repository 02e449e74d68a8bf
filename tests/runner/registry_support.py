"""What the registry-parametrised tests share: every registered benchmark's declarations merged
(judgment adapters, generator indexes), and each benchmark's own test data
(``tests/<package>/registry_fixtures.py``, see :func:`registry_fixtures`)."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tests
from ideaharness.metrics.reliability.adapters import Adapters, Record
from ideaharness.runner.registry import benchmarks


def every_adapter() -> Adapters:
    """The ``judgment_adapters`` of every registered benchmark in one mapping (for tests that read
    records of several benchmarks at once).

    Raises:
        AssertionError: two benchmarks declare the same step with different adapters.
    """
    merged: dict[str, Any] = {}
    for name, cls in sorted(benchmarks().items()):
        for step, adapter in cls.judgment_adapters.items():
            assert merged.get(step, adapter) is adapter, f"{name}: step {step!r} declared twice"
            merged[step] = adapter
    return merged


def every_generator(records: Sequence[Record]) -> dict[str, str]:
    """Every registered benchmark's ``generator_models`` of ``records``, merged."""
    out: dict[str, str] = {}
    for cls in benchmarks().values():
        out.update(cls.generator_models(records))
    return out


Reply = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class RegistryFixture:
    """What the registry-wide tests need to run one benchmark for real, cheaply.

    Attributes:
        data_args: ``tmp_path -> CLI flags`` selecting the benchmark's cheapest real data (files it
            writes go under ``tmp_path``); ``[]`` when its defaults are cheap.
        reply: a loopback server's reply to a chat-completions body (``body["messages"]`` the
            prompt) that parses for every step the benchmark records, so a one-instance run
            records parsed judgments (both the generator's and the judge's server use it).
        reask_steps: steps whose judgments ``--consistency-sample`` re-asks (those judge_step
            calls given ``reorder``); empty for a benchmark declaring ``consistency_sample = False``.
        extra_args: further CLI flags for the reliability and re-ask runs (e.g. ``--pairs 4``).
        batch: whether these flags run under ``--batch`` (the re-ask test then checks the re-asks go
            through the Batch API); False with the reason in ``batch_note``.
    """

    data_args: Callable[[Path], list[str]]
    reply: Reply
    reask_steps: tuple[str, ...] = ()
    extra_args: tuple[str, ...] = field(default_factory=tuple)
    batch: bool = True
    batch_note: str = ""


def registry_fixtures() -> dict[str, RegistryFixture]:
    """Benchmark name -> its :class:`RegistryFixture`, from every ``tests/<package>/registry_fixtures.py``
    (a module-level ``FIXTURES: dict[str, RegistryFixture]``); a new benchmark adds its own file.

    Raises:
        AssertionError: two files declare the same benchmark.
    """
    found: dict[str, RegistryFixture] = {}
    for module in pkgutil.iter_modules(tests.__path__):
        name = f"tests.{module.name}.registry_fixtures"
        if module.ispkg and importlib.util.find_spec(name):
            for bench, fixture in importlib.import_module(name).FIXTURES.items():
                assert bench not in found, f"{name}: {bench} already has registry fixtures"
                found[bench] = fixture
    return found


def fixture_for(name: str) -> RegistryFixture:
    """The registry fixture of benchmark ``name``.

    Raises:
        AssertionError: the benchmark's test package declares none (naming the file to add).
    """
    found = registry_fixtures().get(name)
    assert found is not None, (
        f"{name}: registered but no tests/<package>/registry_fixtures.py declares it "
        f"(FIXTURES = {{{name!r}: RegistryFixture(data_args=..., reply=...)}})")
    return found
