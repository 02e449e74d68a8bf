"""Flat parameters from pydantic config models: one place declares a setting, and the CLI flag,
the Python keyword and the config-file key all follow from it.

Rules: every field is a parameter named after it (``n_ideas`` -> ``--n-ideas``); a nested model
field (LigBench ``scoring``) is flattened, its fields becoming parameters of their own name; a
field marked ``json_schema_extra={"cli": False}`` has no flag; ``{"cli": "--name"}`` renames the
flag (``"--yes/--no"`` for a boolean pair), and the flag's name is also accepted as a keyword.
Lists are repeatable flags, and so is a field marked ``{"repeatable": True}`` (its model parses the
list of texts, e.g. ``--price``); ``Literal`` choices are listed in the help; values that are not plain
text, numbers or booleans (dates, pairs, nested items) are given as text and parsed by the model.
"""

from __future__ import annotations

import datetime as dt
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

HIDDEN = frozenset({"benchmark", "benchmark_version"})
"""Config fields that identify the benchmark in config.json; never a flag."""


@dataclass(frozen=True)
class Param:
    """One flat parameter of a config model.

    Attributes:
        name: the Python keyword (unique among the model's parameters).
        path: where the value goes in the model (``("scoring", "elo", "clamp")``).
        flag: the CLI declaration (``"--n-ideas"``, ``"--structured/--free-text"``; a boolean
            that is off by default is one switch, ``"--parity"``).
        cli_type: the type the CLI parses (str, int, float, bool or Path).
        multiple: a repeatable flag (a list field).
        help: the field description plus its choices.
        default_text: the default as shown in help, or None.
        aliases: other keywords accepted for it (the flag's name with underscores).
    """

    name: str
    path: tuple[str, ...]
    flag: str
    cli_type: type
    multiple: bool
    help: str
    default_text: str | None
    aliases: tuple[str, ...] = ()


def _unwrap_optional(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0]
    return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _scalar(annotation: Any) -> tuple[type, tuple[str, ...]]:
    """(CLI type, Literal choices) of a scalar annotation."""
    if typing.get_origin(annotation) is Literal:
        return str, tuple(str(a) for a in typing.get_args(annotation))
    if annotation in (bool, int, float, str, Path):
        return annotation, ()
    return str, ()  # dates, pairs, nested items: text the model parses


def _default(info: FieldInfo) -> Any:
    if info.default_factory is not None:
        return info.default_factory()  # type: ignore[call-arg]
    return None if info.default is PydanticUndefined else info.default


def _default_text(value: Any) -> str | None:
    if value is None or value == [] or value is False:
        return None
    if isinstance(value, BaseModel):
        return None
    if isinstance(value, list | tuple):
        shown = [v.name if hasattr(v, "name") else str(v) for v in value]
        return ", ".join(shown) if len(", ".join(shown)) <= 60 else f"{len(shown)} built-in values"
    if isinstance(value, dt.date | Path):
        return str(value)
    return str(value)


def _cli_extra(info: FieldInfo, key: str = "cli") -> Any:
    extra = info.json_schema_extra
    return extra.get(key) if isinstance(extra, dict) else None


def params(model: type[BaseModel], *, prefix: tuple[str, ...] = ()) -> list[Param]:
    """The flat parameters of ``model`` (nested models flattened), in field order.

    Raises:
        ValueError: two parameters would have the same name.
    """
    out: list[Param] = []
    for name, info in model.model_fields.items():
        cli = _cli_extra(info)
        if name in HIDDEN or cli is False:
            continue
        annotation = _unwrap_optional(info.annotation)
        if _is_model(annotation):
            out.extend(params(annotation, prefix=(*prefix, name)))
            continue
        repeatable = bool(_cli_extra(info, "repeatable"))
        multiple = typing.get_origin(annotation) is list or repeatable
        inner = typing.get_args(annotation)[0] if multiple and not repeatable else annotation
        cli_type, choices = (str, ()) if repeatable else _scalar(_unwrap_optional(inner))
        help_text = (info.description or "").strip()
        if choices:
            help_text += f" One of: {', '.join(choices)}."
        if multiple:
            help_text += " Repeatable."
        if info.is_required():
            help_text += " [required]"
        flag = cli if isinstance(cli, str) else "--" + name.replace("_", "-")
        if cli_type is bool and "/" not in flag and _default(info) is not False:
            flag = f"{flag}/--no-{flag[2:]}"  # a flag that is off by default needs no off switch
        alias = flag.split("/")[0][2:].replace("-", "_")
        out.append(Param(
            name=name, path=(*prefix, name), flag=flag, cli_type=cli_type, multiple=multiple,
            help=help_text, default_text=_default_text(_default(info)),
            aliases=(alias,) if alias != name else (),
        ))
    names = [p.name for p in out]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates and not prefix:
        raise ValueError(f"{model.__name__}: parameters {sorted(duplicates)} appear twice")
    return out


def keyword_index(model: type[BaseModel]) -> dict[str, Param]:
    """Every accepted keyword (names and aliases) of ``model`` -> its parameter."""
    index: dict[str, Param] = {}
    for param in params(model):
        index[param.name] = param
        for alias in param.aliases:
            index.setdefault(alias, param)
    return index


def set_path(data: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """``data[path[0]][path[1]]... = value``, creating (or copying) the dicts on the way."""
    for key in path[:-1]:
        inner = data.get(key)
        if isinstance(inner, BaseModel):
            inner = inner.model_dump()
        data[key] = dict(inner) if isinstance(inner, Mapping) else {}
        data = data[key]
    data[path[-1]] = value


def deep_merge(base: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``update`` applied; nested dicts are merged key by key."""
    out = dict(base)
    for key, value in update.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def iter_flags(model: type[BaseModel]) -> Iterator[str]:
    """Every CLI flag declaration of ``model``."""
    for param in params(model):
        yield param.flag
