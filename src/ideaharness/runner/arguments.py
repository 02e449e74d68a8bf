"""From flat arguments (CLI flags, ``ideaharness.run`` keywords, a ``--config`` file) to a run:
the benchmark's config, the execution options, ready model clients and runtime extras.

Precedence: the model defaults, then the config file, then the explicit arguments (so flags given
on the command line override file values). Keys are field names or flag names, with ``_`` or ``-``;
a nested setting (LigBench ``scoring.elo.clamp``) may be given flat (``clamp``) or nested.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel

from ideaharness.data.textio import read_text
from ideaharness.errors import DataError, UserError
from ideaharness.runner.fields import deep_merge, keyword_index, set_path
from ideaharness.runner.options import LEGACY_NAMES, ExecutionOptions
from ideaharness.runner.protocol import Benchmark

MODEL_FIELDS = ("generator", "judge", "generators")
"""Config fields whose value may be given as a model object instead of a model string."""


@dataclass
class RunArguments:
    """Everything a run needs besides the benchmark class."""

    config: BaseModel
    options: ExecutionOptions
    models: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)


def load_config_file(path: str | Path) -> dict[str, Any]:
    """The settings of a YAML (``.yaml``/``.yml``) or JSON file: one mapping of field or flag names
    (``no-progress: true`` is the flag ``--no-progress``). A key given twice is an error.

    Raises:
        UserError: the file is missing or a folder; DataError: it does not parse, repeats a key or
            is not a mapping.
    """
    file = Path(path)
    if file.is_dir():
        raise UserError(f"--config {file}: is a folder, not a settings file")
    if not file.is_file():
        raise UserError(f"--config {file}: no such file")
    text = read_text(file)
    try:
        if file.suffix.lower() in (".yaml", ".yml"):
            data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
        else:
            data = json.loads(text, object_pairs_hook=_unique_pairs)
    except _DuplicateKey as exc:
        raise DataError(file, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise DataError(file, f"line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except Exception as exc:  # yaml.YAMLError carries the line in its message
        raise DataError(file, f"not valid YAML: {' '.join(str(exc).split())}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise DataError(file, f"expected a mapping of settings, got {type(data).__name__}")
    return {str(k).replace("-", "_"): v for k, v in data.items()}


class _DuplicateKey(ValueError):
    pass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"key {key!r} given twice")
        out[key] = value
    return out


class _UniqueKeyLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (YAML 1.2 forbids it; PyYAML
    keeps the last)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise _DuplicateKey(f"line {key_node.start_mark.line + 1}: key {key!r} given twice")
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _is_model_object(value: Any) -> bool:
    return not isinstance(value, str | Mapping | list | tuple) and callable(getattr(value, "chat", None))


def _take_models(name: str, value: Any, models: dict[str, Any]) -> Any:
    """Model objects in ``value`` -> their model strings; the objects go to ``models`` by role."""
    role = name[:-1] if name.endswith("s") else name
    if _is_model_object(value):
        model = getattr(value, "model", type(value).__name__)
        if name.endswith("s"):
            models[f"{role}:{model}"] = value
            return [model]
        models[role] = value
        return model
    if isinstance(value, Mapping) and name.endswith("s"):  # {"name": model object}
        for model, obj in value.items():
            models[f"{role}:{model}"] = obj
        return list(value)
    if isinstance(value, list | tuple) and any(_is_model_object(v) for v in value):
        return [_take_models(name, v, models)[0] if _is_model_object(v) else v for v in value]
    return value


def resolve(
    bench: type[Benchmark],
    *,
    config: str | Path | Mapping[str, Any] | BaseModel | None = None,
    options: ExecutionOptions | Mapping[str, Any] | None = None,
    models: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> RunArguments:
    """Split flat arguments into a validated :class:`RunArguments`.

    Args:
        config: a YAML/JSON file, a dict of settings, or a config object of the benchmark; may
            hold execution options too.
        options: execution options (an object or a dict), overridden by ``kwargs``.
        models: role -> ready model client (e.g. ``{"judge": ScriptedModel(...)}``).
        kwargs: config fields, execution options, ``generator``/``judge`` as model objects (their
            ``model`` string becomes the config's, unless ``config`` names one), and the
            benchmark's runtime extras (``Benchmark.extras``).

    Raises:
        UserError: an unknown argument (named), a bad file; ValidationError: a bad value.
    """
    base: dict[str, Any] = {}
    source = ""
    if isinstance(config, BaseModel):
        base = config.model_dump()
    elif isinstance(config, str | Path):
        base = load_config_file(config)
        source = f"{config}: "
    elif isinstance(config, Mapping):
        base = {str(k).replace("-", "_"): v for k, v in config.items()}
    flat = {**base, **{k.replace("-", "_"): v for k, v in kwargs.items()}}
    chosen: dict[str, Any] = dict(models or {})
    extras = {k: flat.pop(k) for k in bench.extras if k in flat}
    option_names = set(ExecutionOptions.model_fields) | set(LEGACY_NAMES)
    opts: dict[str, Any] = {}
    if isinstance(options, ExecutionOptions):
        opts = options.model_dump(exclude_unset=True)
    elif isinstance(options, Mapping):
        opts = dict(options)
    index = keyword_index(bench.config_class)
    settings: dict[str, Any] = {}
    nested_given: dict[str, Any] = {}
    unknown = []
    for key, value in flat.items():
        if key in option_names and key not in index:
            opts[key] = value
        elif key in bench.config_class.model_fields:  # a whole field, also a nested one as a dict
            nested_given[key] = value
        elif key in index:
            set_path(settings, index[key].path, value)
        elif key in ("benchmark", "benchmark_version"):
            continue
        else:
            unknown.append(key)
    for key in list(unknown):  # ``no_progress: true`` is the "no" side of ``--progress/--no-progress``
        name = key.removeprefix("no_")
        if name != key and isinstance(flat[key], bool):
            field = ExecutionOptions.model_fields.get(name) or bench.config_class.model_fields.get(name)
            if field is not None and field.annotation is bool:
                unknown.remove(key)
                (opts if name in option_names else nested_given)[name] = not flat[key]
    if unknown:
        from_file = sorted(k for k in unknown if source and k in base and k not in kwargs)
        where = source if from_file and len(from_file) == len(unknown) else ""
        raise UserError(f"{where}unknown argument(s) {', '.join(sorted(unknown))} for {bench.name}")
    settings = deep_merge(nested_given, settings)
    for name in MODEL_FIELDS:
        if name in settings:
            as_strings = _take_models(name, settings[name], chosen)
            # a model object given next to a config that names the model keeps the config's name
            settings[name] = base[name] if name in base and as_strings != settings[name] else as_strings
    return RunArguments(
        config=bench.config_class.model_validate(settings),
        options=ExecutionOptions.model_validate(opts),
        models=chosen,
        extras=extras,
    )
