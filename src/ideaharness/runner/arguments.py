"""From flat arguments (CLI flags, ``ideaharness.run`` keywords, a ``--config`` file) to a run:
the benchmark's config, the execution options, ready model clients and runtime extras.

Precedence: the model defaults, then the config file, then the explicit arguments (so flags given
on the command line override file values). Keys are field names or flag names, with ``_`` or ``-``;
a nested setting (LigBench ``scoring.elo.clamp``) may be given flat (``clamp``) or nested.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from ideaharness.errors import DataError, UserError
from ideaharness.jsonl import decode_json
from ideaharness.runner.fields import deep_merge, keyword_index, set_path
from ideaharness.runner.options import LEGACY_NAMES, ExecutionOptions, apply_consistency_sample
from ideaharness.runner.protocol import Benchmark
from ideaharness.textio import read_text

MODEL_FIELDS = ("generator", "judge", "generators", "rewriter")
"""Config fields whose value may be given as a model object instead of a model string."""


@dataclass
class RunArguments:
    """Everything a run needs besides the benchmark class."""

    config: BaseModel
    options: ExecutionOptions
    models: dict[str, Any] = field(default_factory=dict)
    extras: dict[str, Any] = field(default_factory=dict)


MAX_CONFIG_BYTES = 1024 * 1024
"""Largest settings file read, in bytes (1 MiB): a settings file is a few hundred bytes (the longest
value is a list of models or paths); the bound refuses a wrong file (a dataset, a 50 MB line) by
its size before parsing, instead of after minutes in the YAML parser."""


def did_you_mean(unknown: list[str], known: list[str]) -> str:
    """``"; did you mean 'n_ideas'?"`` for keys close to a known one (:func:`difflib.get_close_matches`,
    ratio >= 0.75, ``-`` read as ``_``), ``""`` when none is close. With several unknown keys each
    suggestion names its key: ``"; did you mean 'n_ideas' (for 'n_idea'), 'judge' (for 'juge')?"``."""
    import difflib

    names = sorted({k.replace("-", "_") for k in known})
    hits = [(key, match[0]) for key in unknown
            if (match := difflib.get_close_matches(key.replace("-", "_"), names, n=1, cutoff=0.75))]
    if not hits:
        return ""
    if len(unknown) == 1:
        return f"; did you mean {hits[0][1]!r}?"
    return "; did you mean " + ", ".join(f"{match!r} (for {key!r})" for key, match in hits) + "?"


def load_config_file(path: str | Path) -> dict[str, Any]:
    """The settings of a YAML (``.yaml``/``.yml``) or JSON file: one mapping of field or flag names
    (``no-progress: true`` is the flag ``--no-progress``). A key given twice is an error, in every
    spelling and at every level: twice verbatim, or once with ``-`` and once with ``_``
    (``n-ideas`` / ``n_ideas``); :func:`resolve` also refuses two keys naming one setting (a flag
    and its ``no-`` side, a flat and a nested spelling, a field and its flag name). A number that
    is not finite (``.nan``, ``NaN``, ``.inf``) is refused: no setting takes one.

    A file with no setting in it (empty, only blanks or comments, ``{}``, ``null``) is refused: it
    is a mistake (a file not yet written, the wrong file), and running on every default would start
    a long run nobody asked for. A file over :data:`MAX_CONFIG_BYTES` is refused by its size, before
    it is read.

    Raises:
        UserError: the file is missing or a folder; DataError: it is empty, larger than 1 MiB, not
            UTF-8 (names line and byte), does not parse, repeats a key, holds a non-finite number
            or is not a mapping (names the file and the key).
    """
    file = Path(path)
    if file.is_dir():
        raise UserError(f"--config {file}: is a folder, not a settings file")
    if not file.is_file():
        raise UserError(f"--config {file}: no such file")
    size = file.stat().st_size
    if size > MAX_CONFIG_BYTES:
        raise DataError(file, f"{size:,} bytes, over the {MAX_CONFIG_BYTES // 1024 ** 2} MiB a settings file "
                        "may have; is this the right file?")
    text = read_text(file)
    try:
        if file.suffix.lower() in (".yaml", ".yml"):
            data = yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)
        else:
            data = decode_json(text, object_pairs_hook=_unique_pairs)
    except _DuplicateKey as exc:
        raise DataError(file, str(exc)) from None
    except json.JSONDecodeError as exc:
        raise DataError(file, f"line {exc.lineno}: not valid JSON ({exc.msg})") from None
    except RecursionError:
        raise DataError(file, "not valid YAML: nested too deeply") from None
    except ValueError as exc:  # YAML's int(): "Exceeds the limit (4300 digits) ..."
        if "digits" not in str(exc):
            raise DataError(file, f"not valid YAML: {' '.join(str(exc).split())}") from None
        import sys

        raise DataError(file, f"not valid YAML: an integer with more than {sys.get_int_max_str_digits()} "
                        "digits") from None
    except Exception as exc:  # yaml.YAMLError carries the line in its message
        raise DataError(file, f"not valid YAML: {' '.join(str(exc).split())}") from None
    if data is None or data == {}:
        raise DataError(file, "no settings in the file (it is empty); write settings in it, or leave "
                        "out --config to run on the defaults")
    if not isinstance(data, dict):
        raise DataError(file, f"expected a mapping of settings, got {type(data).__name__}")
    try:
        settings: dict[str, Any] = _normalised(data, "")
    except _DuplicateKey as exc:
        raise DataError(file, str(exc)) from None
    return settings


def _normalised(value: Any, where: str) -> Any:
    """``value`` with its top-level keys spelled with ``_`` for ``-`` (nested keys may be data, such
    as indicator names, and are kept), refusing two top-level keys that become one and any number
    that is not finite, at any level."""
    _check_finite(value, where)
    out: dict[str, Any] = {}
    spelled: dict[str, str] = {}
    for key, item in value.items():
        name = str(key).replace("-", "_")
        if name in out:
            raise _DuplicateKey(f"keys {spelled[name]!r} and {str(key)!r} name the same setting")
        spelled[name] = str(key)
        out[name] = item
    return out


def _check_finite(value: Any, where: str) -> None:
    stack: list[tuple[Any, str]] = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise _DuplicateKey(f"key {path!r}: {item} is not a finite number")
        if isinstance(item, dict):
            stack.extend((v, f"{path}.{k}" if path else str(k)) for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{path}[{i}]") for i, v in enumerate(item))


class _DuplicateKey(ValueError):
    """A key given twice (or a value no setting takes): reported as a DataError naming the file."""


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(f"key {key!r} given twice")
        out[key] = value
    return out


class _UniqueKeyLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
    """YAML's safe loader, refusing a key given twice in one mapping (YAML 1.2 forbids it; PyYAML
    keeps the last) and any alias (``*name``): an alias can make a value contain itself
    (``a: &a [*a]``) or expand exponentially ("billion laughs"), and a settings file needs none."""

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise _DuplicateKey(f"line {mark.line + 1}: an alias (*name) is not read in a settings file; "
                                "write the value out")
        node: yaml.Node | None = super().compose_node(parent, index)
        return node

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if key in seen:
                raise _DuplicateKey(f"line {key_node.start_mark.line + 1}: key {key!r} given twice")
            seen.add(key)
        mapping: dict[Any, Any] = super().construct_mapping(node, deep=deep)
        return mapping


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
        _one_key_per_setting(bench, base, config)
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
        known = [*bench.config_class.model_fields, *index, *option_names, "benchmark", "benchmark_version"]
        raise UserError(f"{where}unknown argument(s) {', '.join(sorted(unknown))} for {bench.name}"
                        f"{did_you_mean(sorted(unknown), known)}")
    settings = deep_merge(nested_given, settings)
    for name in MODEL_FIELDS:
        if name in settings:
            as_strings = _take_models(name, settings[name], chosen)
            # a model object given next to a config that names the model keeps the config's name
            settings[name] = base[name] if name in base and as_strings != settings[name] else as_strings
    try:
        return RunArguments(
            config=bench.config_class.model_validate(settings),
            options=apply_consistency_sample(ExecutionOptions.model_validate(opts), benchmark=bench.name,
                                             supported=bench.consistency_sample),
            models=chosen,
            extras=extras,
        )
    except ValidationError as exc:  # a value from the file: name the file and its key
        file_key = _file_key_of(exc, base, kwargs) if source else None
        if file_key is None:
            raise
        error = exc.errors()[0]
        given = error.get("input")
        scalar = isinstance(given, str | int | float) and not isinstance(given, bool)
        shown = f" ({given!r})" if scalar else ""
        raise DataError(config, f"key {file_key!r}{shown}: {error['msg']}") from None


def _file_key_of(exc: ValidationError, base: Mapping[str, Any], kwargs: Mapping[str, Any]) -> str | None:
    """The config-file key whose value ``exc`` refuses, or None when it came from elsewhere."""
    loc = [str(p) for p in exc.errors()[0]["loc"] if not isinstance(p, int)]
    given = {k.replace("-", "_") for k in kwargs}
    for key in base:
        if key in given:
            continue
        if loc and (key == loc[0] or key == loc[-1] or LEGACY_NAMES.get(key) == loc[0]):
            return key
    return None


def _one_key_per_setting(bench: type[Benchmark], base: Mapping[str, Any], file: str | Path) -> None:
    """Refuse a settings file naming one setting under two keys: a field and its flag name
    (``judges`` / ``judge``), a flag and its ``no-`` side (``progress`` / ``no-progress``), an old
    and a new option name, or a flat and a nested spelling (``clamp`` / ``scoring.elo.clamp``).

    Raises:
        DataError: names the file and both keys.
    """
    index = keyword_index(bench.config_class)
    fields = bench.config_class.model_fields
    options = set(ExecutionOptions.model_fields)
    seen: dict[tuple[str, ...], str] = {}
    for key, value in base.items():
        name = key
        if name not in index and name not in options and name not in LEGACY_NAMES and name.startswith("no_"):
            name = name.removeprefix("no_")
        if name in LEGACY_NAMES and name not in index:
            path: tuple[str, ...] = ("option", LEGACY_NAMES[name].removeprefix("no_"))
        elif name in options and name not in index:
            path = ("option", name.removeprefix("no_"))
        elif name in fields and isinstance(value, Mapping):
            for leaf in _leaves(value, (name,)):
                _claim(seen, ("config", *leaf), f"{key}.{'.'.join(leaf[1:])}", file)
            continue
        elif name in index:
            path = ("config", *index[name].path)
        else:
            continue  # unknown keys are reported by resolve
        _claim(seen, path, key, file)


def _leaves(value: Mapping[str, Any], prefix: tuple[str, ...]) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for key, item in value.items():
        path = (*prefix, str(key))
        out.extend(_leaves(item, path) if isinstance(item, Mapping) and item else [path])
    return out


def _claim(seen: dict[tuple[str, ...], str], path: tuple[str, ...], key: str, file: str | Path) -> None:
    for other, owner in seen.items():
        shorter = min(len(other), len(path))
        if other[:shorter] == path[:shorter]:
            raise DataError(file, f"keys {owner!r} and {key!r} name the same setting; keep one")
    seen[path] = key
