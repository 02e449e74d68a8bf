"""Registries read by both the Python API and the CLI: benchmarks, metrics, result enrichers.

Benchmarks register with a decorator::

    @register_benchmark("mybench")
    class MyBench(Benchmark): ...

The built-in ones are found by importing every subpackage of :mod:`ideaharness.benchmarks` (no
hand-kept list); a third-party package adds one through the entry-point group
``ideaharness.benchmarks`` (``mybench = "mypkg.bench:MyBench"``, the module may also register
itself). :func:`benchmarks` returns them all, built-ins first.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import TypeVar

from ideaharness.errors import UserError
from ideaharness.prompts import add_template_package, package_of
from ideaharness.runner.protocol import Benchmark, Enricher, MetricSpec
from ideaharness.systems.contract import set_discovery

ENTRY_POINT_GROUP = "ideaharness.benchmarks"

B = TypeVar("B", bound=type[Benchmark])

_BENCHMARKS: dict[str, type[Benchmark]] = {}
_METRICS: dict[str, MetricSpec] = {}
_ENRICHERS: list[Enricher] = []
_DISCOVERED: list[bool] = []


def register_benchmark(name: str) -> Callable[[B], B]:
    """Class decorator registering a :class:`Benchmark` subclass as ``ideaharness run <name>``.

    The class's package joins the prompt-template search path (its ``prompts/`` folder, see
    :mod:`ideaharness.prompts`).

    Raises:
        ValueError: ``name`` is empty or has characters other than letters, digits and ``-``.
    """
    if not name or not all(c.isalnum() or c == "-" for c in name):
        raise ValueError(f"benchmark name {name!r}: letters, digits and '-' only")

    def decorate(cls: B) -> B:
        cls.name = name
        _BENCHMARKS[name] = cls
        add_template_package(package_of(cls))
        return cls

    return decorate


def discover() -> None:
    """Import the built-in benchmark packages and load the entry points (once per process; a
    benchmark registered later with the decorator is seen at once)."""
    if _DISCOVERED:
        return
    _DISCOVERED.append(True)
    import ideaharness.benchmarks as package

    for module in pkgutil.iter_modules(package.__path__):
        if module.ispkg and not module.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{module.name}")
    load_entry_points()


set_discovery(discover)  # a contract is looked up after its benchmark's package is imported


def load_entry_points() -> None:
    """Register the benchmarks of the ``ideaharness.benchmarks`` entry-point group not yet known.

    Raises:
        UserError: an entry point that does not load or is not a Benchmark subclass.
    """
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in _BENCHMARKS:
            continue
        try:
            loaded = ep.load()
        except Exception as exc:
            raise UserError(f"entry point {ep.name} = {ep.value} ({ENTRY_POINT_GROUP}): cannot load: "
                            f"{exc}") from exc
        if ep.name not in _BENCHMARKS:
            if not (isinstance(loaded, type) and issubclass(loaded, Benchmark)):
                raise UserError(f"entry point {ep.name} = {ep.value}: not a Benchmark subclass")
            register_benchmark(ep.name)(loaded)


def benchmarks() -> dict[str, type[Benchmark]]:
    """Every registered benchmark, name -> class."""
    discover()
    return dict(_BENCHMARKS)


def get_benchmark(name: str) -> type[Benchmark]:
    """The benchmark class registered as ``name``.

    Raises:
        UserError: no benchmark of that name (the message lists the known ones).
    """
    known = benchmarks()
    if name not in known:
        load_entry_points()
        known = dict(_BENCHMARKS)
    if name not in known:
        raise UserError(f"unknown benchmark {name!r}; choose one of {', '.join(sorted(known))}")
    return known[name]


def register_metric(spec: MetricSpec) -> MetricSpec:
    """Register a metric (name ``benchmark.metric``); returns it. Re-registering replaces it."""
    _METRICS[spec.name] = spec
    return spec


def metrics() -> dict[str, MetricSpec]:
    """Every registered metric, name -> spec (built-in benchmarks discovered first)."""
    discover()
    return dict(_METRICS)


def get_metric(name: str) -> MetricSpec:
    """The spec of a registered metric.

    Raises:
        UserError: no metric of that name.
    """
    found = metrics().get(name)
    if found is None:
        raise UserError(f"unknown metric {name!r}")
    return found


def register_enricher(fn: Enricher) -> Enricher:
    """Register a result enricher, called for every run after the benchmark's aggregate (in
    registration order) with ``(ctx, results)``; it adds blocks to ``results`` in place. Usable as
    a decorator; registering the same function twice has no effect."""
    if fn not in _ENRICHERS:
        _ENRICHERS.append(fn)
    return fn


def enrichers() -> list[Enricher]:
    """The registered result enrichers, in order."""
    return list(_ENRICHERS)
