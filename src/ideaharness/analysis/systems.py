"""Which system a saved run evaluates, and how its ideas were produced.

A *system* is whatever answered the run's generation tasks: a model that ideaharness prompted
(kind ``model``), a file of answers (``ideas:PATH`` or ``--ideas``, kind ``ideas-file``), a command
run once per task (``cmd:...``, kind ``command``) or an HTTP service (``http(s)://...``, kind
``http``). The runner writes one entry per generator-like role in ``results.json``'s
``idea_sources`` block (a LigBench run's ``systems`` key is its own per-system scores)::

    "idea_sources": [{"role": "generator", "system": "my-agent", "kind": "command",
                      "spec": "cmd:python agent.py", "answers": {"asked": 40, "missing": ["i7"],
                                                                "failed": ["i7", "i9"],
                                                                "extra_instances": []}}]

:func:`run_systems` reads that block; for a run saved before it, it derives the same entries from
the recorded config (``system``, ``ideas``/``ideas_file``, ``generator``/``generators``), so a model
run is kind ``model`` named by its model string, and a run of an ``ideas:``/``cmd:``/``http:``
generator is never named by a model string it did not use. Kind and default name follow the
spec rules of :mod:`ideaharness.systems.spec`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ideaharness.systems.spec import IDEAS_PREFIX, default_system_name, split_ideas_spec, system_kind

SOURCES_KEY = "idea_sources"
"""The results.json key of the runner's block: one entry per generator-like role."""
KIND_LABELS: dict[str, str] = {
    "model": "model",
    "ideas-file": "ideas file",
    "command": "command",
    "http": "HTTP service",
}
"""kind -> how compare, the report and the viewer name it."""


def spec_kind(spec: str) -> str:
    """The kind of a generator spec (:func:`ideaharness.systems.system_kind`): ``ideas-file``
    (``ideas:``), ``command`` (``cmd:``), ``http`` (``http://``, ``https://``), else ``model``."""
    return system_kind(spec)


def ideas_path(spec: str) -> tuple[str, str | None]:
    """(file, format or None when not given) of an ``ideas:PATH[#format=F]`` spec."""
    try:
        path, fmt = split_ideas_spec(spec)
    except ValueError:  # a spec recorded by hand or by an older version: show what it names
        return spec.removeprefix(IDEAS_PREFIX).partition("#")[0], None
    return path, fmt if "#" in spec else None


def spec_name(spec: str) -> str:
    """The default system name of a spec (:func:`ideaharness.systems.default_system_name`): an
    ideas file's stem; a command's script (the first argument ending ``.py``/``.sh``, else the
    program), by basename; an HTTP service's ``host:port/path``; a model's own string."""
    return default_system_name(spec)


@dataclass(frozen=True)
class SystemInfo:
    """One system of a run and how its ideas were produced.

    Attributes:
        role: ``generator`` or ``generator:<spec>`` (a LigBench run holds several).
        system: its name (``--system``, else :func:`spec_name` of its spec).
        kind: ``model``, ``ideas-file``, ``command`` or ``http`` (:data:`KIND_LABELS`).
        spec: the generator spec as recorded (secrets redacted by the runner).
        ideas_file, ideas_format: the answers file and its format (kind ``ideas-file``).
        asked: tasks asked of it (None: not recorded, a run saved before the ``idea_sources`` block).
        missing: instances it gave no answer for (failed units, never scored).
        failed: instances with no usable answer: missing, a failed call or a reply that did not
            parse (failed units, never scored; ``missing`` for a run saved before ``failed``).
        extra_instances: instances its file holds that the run never asked (ignored).
        recorded: True when read from results.json's ``idea_sources`` block, False when derived from
            the config of an older run.
    """

    role: str
    system: str
    kind: str
    spec: str
    ideas_file: str | None = None
    ideas_format: str | None = None
    asked: int | None = None
    missing: tuple[str, ...] = ()
    extra_instances: tuple[str, ...] = ()
    recorded: bool = False
    failed: tuple[str, ...] = ()

    @property
    def kind_label(self) -> str:
        """``"model"``, ``"ideas file"``, ``"command"`` or ``"HTTP service"``."""
        return KIND_LABELS.get(self.kind, self.kind)

    def matches(self, name: str) -> bool:
        """Whether scores naming system ``name`` belong to this system (its name, spec or the
        spec's default name: LigBench names its systems by one of them)."""
        return name in (self.system, self.spec, spec_name(self.spec))

    def as_dict(self) -> dict[str, Any]:
        """The JSON form compare and the viewer embed."""
        return {
            "role": self.role,
            "system": self.system,
            "kind": self.kind,
            "kind_label": self.kind_label,
            "spec": self.spec,
            "ideas_file": self.ideas_file,
            "ideas_format": self.ideas_format,
            "answers": {
                "asked": self.asked,
                "missing": list(self.missing),
                "failed": list(self.failed),
                "extra_instances": list(self.extra_instances),
            },
            "recorded": self.recorded,
        }


def find_system(systems: Sequence[SystemInfo], name: str, run_system: str | None = None) -> SystemInfo | None:
    """The system of ``systems`` that scores naming ``name`` belong to: the one of that name, else
    the one whose spec (or the spec's default name) it is, else, for the run's own system
    ``run_system`` of a one-system run, that system; None when none is (a LigBench reference set)."""
    found = next((s for s in systems if s.system == name), None)
    if found is None:
        found = next((s for s in systems if s.matches(name)), None)
    if found is None and name == run_system and len(systems) == 1:
        found = systems[0]
    return found


def _ids(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list | tuple) else ()


def _from_block(entry: Mapping[str, Any], config: Mapping[str, Any]) -> SystemInfo:
    spec = str(entry.get("spec") or "")
    kind = str(entry.get("kind") or spec_kind(spec))
    name = entry.get("system")
    given = entry.get("answers")
    answers: Mapping[str, Any] = given if isinstance(given, Mapping) else {}
    asked = answers.get("asked")
    ideas_file, ideas_format = ideas_path(spec) if spec.startswith("ideas:") else (None, None)
    if kind == "ideas-file" and not ideas_file:
        ideas_file = _str(config.get("ideas")) or _str(config.get("ideas_file"))
    if kind == "ideas-file" and ideas_format is None:
        ideas_format = _str(config.get("ideas_format"))
    return SystemInfo(
        role=str(entry.get("role") or "generator"),
        system=str(name) if name else (spec_name(spec) if spec else "?"),
        kind=kind,
        spec=spec,
        ideas_file=ideas_file,
        ideas_format=ideas_format,
        asked=int(asked) if isinstance(asked, int | float) and not isinstance(asked, bool) else None,
        missing=_ids(answers.get("missing")),
        extra_instances=_ids(answers.get("extra_instances")),
        recorded=True,
        failed=_ids(answers.get("failed")) if "failed" in answers else _ids(answers.get("missing")),
    )


def _str(value: Any) -> str | None:
    return str(value) if isinstance(value, str) and value else None


def _derived(spec: str, role: str, name: str | None, config: Mapping[str, Any]) -> SystemInfo:
    kind = spec_kind(spec)
    ideas_file, ideas_format = ideas_path(spec) if kind == "ideas-file" else (None, None)
    if kind == "ideas-file" and ideas_format is None:
        ideas_format = _str(config.get("ideas_format"))
    return SystemInfo(role=role, system=name or spec_name(spec), kind=kind, spec=spec,
                      ideas_file=ideas_file, ideas_format=ideas_format)


def recorded_config(config: Mapping[str, Any], results: Mapping[str, Any]) -> Mapping[str, Any]:
    """The run's settings: results.json's ``settings.config`` when written, else config.json."""
    settings = results.get("settings")
    recorded = settings.get("config") if isinstance(settings, Mapping) else None
    return recorded if isinstance(recorded, Mapping) and recorded else config


def run_systems(config: Mapping[str, Any], results: Mapping[str, Any]) -> list[SystemInfo]:
    """The systems of a run: results.json's ``idea_sources`` block, else derived from its config
    (``--system``, an ideas file, the generator or LigBench's generators; kind from the spec);
    ``[]`` for a run with no generator (a judge-accuracy run)."""
    cfg = recorded_config(config, results)
    block = results.get(SOURCES_KEY)
    if isinstance(block, list) and block:
        return [_from_block(e, cfg) for e in block if isinstance(e, Mapping)]
    name = _str(cfg.get("system"))
    generators = cfg.get("generators")
    if isinstance(generators, Sequence) and not isinstance(generators, str) and generators:
        specs = [str(g) for g in generators]
        return [_derived(s, f"generator:{s}", name if len(specs) == 1 else None, cfg) for s in specs]
    ideas = _str(cfg.get("ideas")) or _str(cfg.get("ideas_file"))
    if ideas:
        fmt = _str(cfg.get("ideas_format"))
        spec = f"ideas:{ideas}" + (f"#format={fmt}" if fmt and fmt != "auto" else "")
        return [_derived(spec, "generator", name, cfg)]
    generator = _str(results.get("generator")) or _str(cfg.get("generator"))
    if generator:
        return [_derived(generator, "generator", name, cfg)]
    return []


__all__ = ["KIND_LABELS", "SOURCES_KEY", "SystemInfo", "find_system", "ideas_path", "recorded_config",
           "run_systems", "spec_kind", "spec_name"]
