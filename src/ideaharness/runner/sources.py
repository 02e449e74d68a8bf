"""Where a run's ideas come from: the ``idea_sources`` block of results.json, the identity of a
system run, and the console line on a system's extra instances.

Every generator-like role (``generator``, ``generator:<...>``) of a run is an *idea source*: a model
(``kind`` "model") or a system (``ideas:`` file, ``cmd:`` command, ``http(s)://`` service;
:mod:`ideaharness.systems`). The runner, not the benchmark, writes for each::

    {"role": "generator", "system": name, "kind": "ideas-file", "spec": spec (secrets redacted),
     "answers": {"asked": n, "missing": [instance ids], "failed": [instance ids],
                 "extra_instances": [instance ids]}}

``asked`` counts the distinct task instances the benchmark asked the source for (this process's
``generate_step`` calls and every generation record of the run directory: resumed units and Ray
workers' included), ``missing`` the instances an ``ideas:`` file had no answer for (failed units, exit 3),
``failed`` every asked instance with no usable answer: missing, a generation whose call failed for
good, or whose reply did not parse (after this run's re-ask rounds; failed units, exit 3),
``extra_instances`` the instances of the file nobody asked for (ignored; instances of the data left
out by ``--limit``/``--shard`` are not extra: an item's task instance id is
``bench.task_instance_id(item)`` when the benchmark defines it, else ``item.id``). A benchmark that
does not ask a unit because it knows the file lacks it calls
:meth:`~ideaharness.runner.steps.StepRunner.missing_answer`.

The ``coverage`` block (:func:`coverage_block`) says the same per source in one number: ``asked``,
``answered`` (asked and not failed), ``failed`` and ``rate`` = answered / asked, the share of the
instances a system's headline can rest on; ``compare`` ranks systems on the instances they all
answered and marks a system whose rate differs (:mod:`ideaharness.analysis.compare`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic_core import to_jsonable_python

from ideaharness.runner.steps import TASK_INSTANCE_KEY
from ideaharness.systems.adapters import redact_spec
from ideaharness.systems.config import SystemFields
from ideaharness.systems.spec import default_system_name, is_system, split_ideas_spec, system_kind

IDEAS_FLAG = "--ideas"
"""The input-files key of an ``--ideas`` file (its sha256 is part of the run's identity)."""


def is_generator_role(role: str) -> bool:
    """``generator`` or ``generator:<...>`` (LigBench's several generators)."""
    return role == "generator" or role.startswith("generator:")


class CaptureClient:
    """The generator of a capture run (``tasks export``): carries the role's model string and is
    never asked (:meth:`~ideaharness.runner.steps.StepRunner.generate_step` captures the task)."""

    def __init__(self, model: str) -> None:
        self.model = model

    async def chat(self, messages: Any, **sampling: Any) -> Any:
        """Refuses: a benchmark asked its generator outside ``generate_step``.

        Raises:
            UserError: always.
        """
        from ideaharness.errors import UserError

        raise UserError(f"tasks export: the generator {self.model} was asked outside generate_step "
                        "(this benchmark cannot export its tasks)")


def config_defaults(config: BaseModel) -> dict[str, Any]:
    """Config key -> its default in JSON form (fields without a default are left out): a key an old
    run's config.json lacks is compared as its default on resume."""
    out: dict[str, Any] = {}
    for name, info in type(config).model_fields.items():
        if info.is_required():
            continue
        try:
            out[name] = to_jsonable_python(info.get_default(call_default_factory=True))
        except Exception:  # a default that has no JSON form cannot have been recorded either
            continue
    return out


def identity_inputs(inputs: Mapping[str, Sequence[Path]], config: Any,
                    roles: Mapping[str, str]) -> dict[str, list[Path]]:
    """The benchmark's input files plus every file a system reads its answers from: ``--ideas``
    (:meth:`SystemFields.ideas_files`) and each ``ideas:FILE`` generator spec, so an edited file of
    ideas is never resumed into the run of the old one."""
    out = {flag: list(files) for flag, files in inputs.items()}
    files: list[Path] = []
    if isinstance(config, SystemFields):
        files += config.ideas_files()
    for role, spec in roles.items():
        if is_generator_role(role) and system_kind(spec) == "ideas-file":
            try:
                files.append(Path(split_ideas_spec(spec)[0]))
            except ValueError:
                continue
    known = {Path(p) for paths in out.values() for p in paths}
    new = [p for p in dict.fromkeys(files) if p not in known]
    if new:
        out.setdefault(IDEAS_FLAG, []).extend(new)
    return out


def check_ideas_files(benchmark: str, roles: Mapping[str, str], given: Mapping[str, Any]) -> None:
    """Check every ``ideas:FILE`` generator of a run for ``benchmark`` before the run folder is made
    (:func:`~ideaharness.systems.checks.check_ideas_file`: another benchmark's answers, duplicate
    answers), so a refused file leaves nothing behind; roles with a ready client in ``given`` are
    not checked.

    Raises:
        DataError: one line naming the file, the lines and the field (exit 1).
    """
    from ideaharness.systems.checks import check_ideas_file

    for role, spec in roles.items():
        if role not in given and is_generator_role(role) and system_kind(str(spec)) == "ideas-file":
            check_ideas_file(str(spec), benchmark)


def system_roles(models: Mapping[str, Any]) -> list[str]:
    """The generator-like roles whose client is a system (``is_system`` of its model string)."""
    return [r for r, m in models.items() if is_generator_role(r) and is_system(str(getattr(m, "model", "")))]


def _name(bench: Any, config: Any, role: str, spec: str) -> str:
    names = getattr(bench, "system_names", None)
    if callable(names):
        try:
            mapping = names()
        except Exception:
            mapping = {}
        if isinstance(mapping, Mapping) and spec in mapping:
            return str(mapping[spec])
    if role == "generator":
        own = getattr(config, "system", None)
        if isinstance(own, str) and own:
            return own
    return default_system_name(spec)


def idea_sources_block(bench: Any, ctx: Any, available: Sequence[Any],
                       items: Sequence[Any]) -> list[dict[str, Any]]:
    """The ``idea_sources`` block (module docstring) of a run: one entry per generator-like role."""
    steps = ctx.steps
    ids = getattr(bench, "task_instance_id", None)

    def task_id(item: Any) -> str | None:
        if callable(ids):
            value = ids(item)
            return None if value is None else str(value)
        return str(getattr(item, "id", item))

    selected = {task_id(i) for i in items}
    left_out = {task_id(i) for i in available} - selected - {None}
    recorded: dict[str, set[str]] = {}  # generator spec -> task instance ids of its generation records
    unparsed: dict[str, set[str]] = {}  # generator spec -> those whose record's reply did not parse
    for _step, _iid, _key, data in ctx.store.iter_records():
        if isinstance(data, dict) and TASK_INSTANCE_KEY in data and isinstance(data.get("judgment"), dict):
            spec = str(data["judgment"].get("judge_model"))
            recorded.setdefault(spec, set()).add(str(data[TASK_INSTANCE_KEY]))
            if data["judgment"].get("parse_ok") is False:
                unparsed.setdefault(spec, set()).add(str(data[TASK_INSTANCE_KEY]))
    failed_calls: dict[str, set[str]] = {}  # generator spec -> task ids of its failed generation units
    failures = getattr(steps, "failures", {})
    for unit, (spec, task) in getattr(steps, "generation_units", {}).items():
        if unit in failures:
            failed_calls.setdefault(spec, set()).add(task)
    out = []
    for role, model in ctx.models.items():
        if not is_generator_role(role):
            continue
        spec = str(getattr(model, "model", type(model).__name__))
        asked = set(getattr(steps, "generated", {}).get(spec, set())) | recorded.get(spec, set())
        missing = sorted(getattr(steps, "missing_answers", {}).get(spec, set()))
        failed = sorted((set(missing) | failed_calls.get(spec, set()) | unparsed.get(spec, set())) & asked)
        provider = getattr(getattr(model, "inner", model), "provider", None)
        unused = getattr(provider, "rows_unused", None)
        extra = [i for i in unused(asked) if i not in left_out] if callable(unused) else []
        out.append({"role": role, "system": _name(bench, ctx.config, role, spec), "kind": system_kind(spec),
                    "spec": redact_spec(spec),
                    "answers": {"asked": len(asked), "missing": missing, "failed": failed,
                                "extra_instances": extra}})
    return out


def coverage_block(sources: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The ``coverage`` block of results.json from the ``idea_sources`` block: per generator-like
    role ``{"role", "system", "asked": int, "answered": int, "failed": [instance ids], "rate":
    answered / asked (float in [0, 1]; None when asked is 0)}``, where ``failed`` are the asked
    instances with a generation that failed, did not parse or was missing from an ideas file (the
    source's ``answers.failed``) and ``answered`` = asked - len(failed). ``[]`` for a run without
    generation (``ligbench-judge``)."""
    out = []
    for source in sources:
        answers = source.get("answers") or {}
        asked = int(answers.get("asked") or 0)
        failed = [str(i) for i in answers.get("failed") or answers.get("missing") or []]
        answered = max(asked - len(failed), 0)
        out.append({"role": str(source.get("role")), "system": str(source.get("system")), "asked": asked,
                    "answered": answered, "failed": failed, "rate": answered / asked if asked else None})
    return out


def extras_line(sources: Sequence[Mapping[str, Any]]) -> str | None:
    """One console line naming the extra instances of the systems (None when there are none)."""
    parts = []
    for source in sources:
        extra = list((source.get("answers") or {}).get("extra_instances") or [])
        if extra:
            shown = ", ".join(extra[:5]) + (f" and {len(extra) - 5} more" if len(extra) > 5 else "")
            parts.append(f"{source.get('system')} ({source.get('spec')}): {len(extra)} ({shown})")
    if not parts:
        return None
    return ("extra instances, answered by a system but not asked by this run, ignored (listed under "
            f"'idea_sources' in results.json): {'; '.join(parts)}")
