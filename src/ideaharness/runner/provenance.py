"""What produced a recorded step: its prompt template and its reply parser, so a resumed run never
reuses a judgment made with another prompt or parser beside new ones.

Every record :meth:`~ideaharness.runner.steps.StepRunner.judge_step` writes (judgments, generations,
consistency re-asks) carries ``record["produced_by"]`` (:func:`produced_by`)::

    {"template": "ideabench_rank", "template_sha256": "<64 hex>",
     "parser": "ideaharness.benchmarks.ideabench.parsing.parse_rank", "parser_version": "<16 hex>"}

``template`` is the :class:`~ideaharness.prompts.Prompt`'s ``step`` (None for messages not rendered
from a template), ``template_sha256`` its :func:`~ideaharness.prompts.template_sha256`;
``parser_version`` a fingerprint of the parser's code (:func:`parser_version`).

The run's ``config.json`` keeps, under :data:`~ideaharness.runs.store.PRODUCED_BY_KEY`, the hash of
every template the benchmark can render (its package's ``prompts/`` folder and the shared one:
:func:`benchmark_templates`). When the run directory is opened again, :class:`RunProvenance`
compares those hashes, and those of every template and (importable) parser its records name, with
the current ones; a change refuses the run with one line naming what changed (exit 1), unless
``--rejudge-changed`` (then only the affected units are judged again) or ``--force`` (a new run;
the old one is moved aside). A parser that cannot be looked up by name (a lambda, a closure) is
compared when its unit is met: :meth:`~ideaharness.runner.steps.StepRunner.judge_step` refuses
there, naming the step and the parser, or re-judges the unit. Records written before this scheme
(no ``produced_by``) resume as before.

The parser fingerprint is of code, not of text: comments, docstrings and line numbers do not
change it; a change to the bytecode, the constants, the names used, or to anything the parser
reaches does. It follows :func:`functools.partial` (its function; arguments that are callables),
bound methods (the function and the methods and callable attributes of ``self`` that the code
names), closures (the same for each cell's value), nested functions (constants of the code),
default values, ``__wrapped__``, and every global the code names that is a function, a class (its
annotations, validators, class constants and the methods the code names) or an immutable
constant (a string, a number, a tuple, a compiled regular expression; a dict, list or set only
when its name is UPPER_CASE, a constant by convention, since other containers may be caches
filled at run time), transitively, within ``ideaharness`` and the parser's own top-level package
(a benchmark registered from outside). Values a closure or partial holds (a unit's options, a
letter count) are data and never part of the version. The reachable code is hashed as a set, so
the version does not depend on the order of traversal (recursion included).

Limits: the version is of CPython bytecode, so a new Python minor version may give every parser a
new version (a run resumed under it refuses; ``--rejudge-changed`` then re-parses the cached
replies without asking a model, since a parser change alone leaves the prompt, and its response
cache key, unchanged). Code outside those packages (pydantic, the standard library) is not
followed.

Cost: the fingerprint is memoised by the parser's shape (code objects and the types of what it
holds), so a call after the first for a parser rebuilt per unit (a lambda) is a few tuple
look-ups; template hashes are computed once per process (:func:`~ideaharness.prompts.template_sha256`).
"""

from __future__ import annotations

import dis
import enum
import functools
import hashlib
import importlib
import re
import sys
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ideaharness.prompts import (
    SHARED_PACKAGE,
    package_of,
    package_templates,
    reload_templates,
    template_sha256,
)
from ideaharness.runs.store import ProducedKey

__all__ = ["PRODUCED_BY", "RunProvenance", "benchmark_templates", "parser_name", "parser_version",
           "produced_by", "recorded_changes", "template_sha256"]

PRODUCED_BY = "produced_by"
"""The record key holding what produced a step (:func:`produced_by`)."""

VERSION_CHARS = 16
"""Hex digits of a parser version (64 bits of sha256)."""

_MAX_SHAPE_DEPTH = 4


# ----------------------------------------------------------------------------- templates


def benchmark_templates(bench_cls: type) -> dict[str, str]:
    """Template name -> sha256 of every template a benchmark can render: those in its package's
    ``prompts/`` folder and in the shared one (:data:`~ideaharness.prompts.SHARED_PACKAGE`).

    Re-reads the template files first (:func:`~ideaharness.prompts.reload_templates`), so a run
    renders and hashes the templates as they are when it opens.

    Raises:
        TemplateConflict: a template name is in two template folders.
        jinja2.TemplateSyntaxError: a template does not parse.
    """
    reload_templates()
    names = package_templates([SHARED_PACKAGE, package_of(bench_cls)])
    hashes = {name: template_sha256(name) for name in names}
    return {name: digest for name, digest in hashes.items() if digest is not None}


# ----------------------------------------------------------------------------- parser names


def parser_name(parse: Any) -> str:
    """``"<module>.<qualname>"`` of a parser: of the function a :func:`functools.partial` wraps,
    of a bound method's function, of a callable object's class."""
    target = _unwrap_partial(parse)
    if isinstance(target, types.MethodType):
        target = target.__func__
    if isinstance(target, types.FunctionType | types.BuiltinFunctionType | type):
        return f"{getattr(target, '__module__', None) or '?'}.{target.__qualname__}"
    cls = type(target)
    return f"{cls.__module__}.{cls.__qualname__}"


def _unwrap_partial(fn: Any) -> Any:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return fn


# ----------------------------------------------------------------------------- parser versions

_VERSIONS: dict[Any, str] = {}
"""Parser shape (:func:`_shape`) -> its version: the memo of :func:`parser_version`."""
_CODE_TEXTS: dict[types.CodeType, str] = {}
_CODE_NAMES: dict[types.CodeType, frozenset[str]] = {}


def parser_version(parse: Any) -> str:
    """The fingerprint (:data:`VERSION_CHARS` hex digits) of a parser's code and of the code it
    reaches (see the module docstring for what is followed and what is ignored).

    Memoised by the parser's shape: the same function (or lambda, rebuilt per call) holding values
    of the same types gets the same version without being walked again.
    """
    try:
        shape = _shape(parse, 0)
        found = _VERSIONS.get(shape)
    except TypeError:  # an unhashable part: walk it each time (correct, slower)
        shape, found = None, None
    if found is not None:
        return found
    walk = _Walk(_roots(parse))
    walk.ref(parse, frozenset(), data=False, label="parser")
    blob = "\n".join(sorted(walk.items)).encode("utf-8", "surrogatepass")
    version = hashlib.sha256(blob).hexdigest()[:VERSION_CHARS]
    if shape is not None:
        _VERSIONS[shape] = version
    return version


def _roots(parse: Any) -> frozenset[str]:
    """Top-level packages whose code is followed: ``ideaharness`` and the parser's own."""
    module = parser_name(parse).split(".", 1)[0]
    return frozenset({"ideaharness", module})


def _shape(obj: Any, depth: int) -> Any:
    """A hashable key that is equal for two parsers whose version is equal by construction: code
    objects, classes and the shapes of the callables they hold (never data values)."""
    if depth > _MAX_SHAPE_DEPTH:
        return type(obj)
    if isinstance(obj, types.FunctionType):
        cells = tuple(_shape(_cell(c), depth + 1) for c in obj.__closure__ or ())
        return obj.__code__, obj.__module__, cells
    if isinstance(obj, functools.partial):
        return ("partial", _shape(obj.func, depth + 1), tuple(_shape(a, depth + 1) for a in obj.args),
                tuple(sorted((k, _shape(v, depth + 1)) for k, v in obj.keywords.items())))
    if isinstance(obj, types.MethodType):
        return "method", _shape(obj.__func__, depth + 1), _shape(obj.__self__, depth + 1)
    if isinstance(obj, type):
        return "class", obj
    attrs = getattr(obj, "__dict__", None)
    if isinstance(attrs, dict):
        held = tuple((k, _shape(v, depth + 1)) for k, v in attrs.items() if callable(v))
        return "object", type(obj), held
    return type(obj)


def _cell(cell: Any) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell (a name assigned after the closure was made)
        return None


class _Walk:
    """One traversal of the code a parser reaches; ``items`` collects one text per piece of code
    (function, class), hashed as a sorted set."""

    def __init__(self, roots: frozenset[str]) -> None:
        self.roots = roots
        self.items: set[str] = set()
        self._seen: set[Any] = set()

    def in_scope(self, module: str | None) -> bool:
        return bool(module) and (module == "__main__" or str(module).split(".", 1)[0] in self.roots)

    def ref(self, obj: Any, names: frozenset[str], *, data: bool, label: str) -> str | None:
        """Follow ``obj`` (reached through ``label``; ``names`` are the names the code using it
        uses); returns its text when it is a constant to include (``data``), else None."""
        if isinstance(obj, functools.partial):
            self.ref(obj.func, names, data=False, label=label)
            for value in (*obj.args, *obj.keywords.values()):
                self.ref(value, names, data=False, label=label)
            return None
        if isinstance(obj, types.MethodType):
            self.ref(obj.__func__, names, data=False, label=label)
            code = getattr(obj.__func__, "__code__", None)
            if isinstance(code, types.CodeType):
                self.instance(obj.__self__, _names(code))
            return None
        if isinstance(obj, staticmethod | classmethod):
            return self.ref(obj.__func__, names, data=False, label=label)
        if isinstance(obj, property):
            for part in (obj.fget, obj.fset):
                if part is not None:
                    self.ref(part, names, data=False, label=label)
            return None
        if isinstance(obj, types.FunctionType):
            self.function(obj)
            return None
        if isinstance(obj, type):
            if self.in_scope(obj.__module__):
                self.klass(obj, names)
            return None
        if isinstance(obj, types.ModuleType):
            self.module(obj, names)
            return None
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None and callable(obj):  # functools.wraps, lru_cache
            self.ref(wrapped, names, data=False, label=label)
            return None
        if data:
            text = _constant(obj, upper=label.isupper())
            if text is not None:
                return text
        if self.in_scope(type(obj).__module__) and not isinstance(obj, enum.Enum):
            self.instance(obj, names)
        return None

    def function(self, fn: types.FunctionType) -> None:
        if not self.in_scope(fn.__module__):
            return
        key = ("function", fn.__code__, fn.__module__)
        if key in self._seen:
            return
        self._seen.add(key)
        code = fn.__code__
        names = _names(code)
        constants = []
        module_level = "<locals>" not in fn.__qualname__
        for name in sorted(names):
            if name in fn.__globals__:
                text = self.ref(fn.__globals__[name], names, data=True, label=name)
                if text is not None:
                    constants.append(f"{name}={text}")
        for cell in fn.__closure__ or ():
            self.ref(_cell(cell), names, data=False, label="")
        defaults = [*(fn.__defaults__ or ()), *(fn.__kwdefaults__ or {}).values()]
        for value in defaults:
            text = self.ref(value, names, data=module_level, label="")
            if text is not None:
                constants.append(f"default={text}")
        wrapped = getattr(fn, "__wrapped__", None)
        if wrapped is not None:
            self.ref(wrapped, names, data=False, label="")
        self.items.add(f"def {fn.__module__}.{fn.__qualname__}:{_code_text(code)}|{';'.join(constants)}")

    def klass(self, cls: type, names: frozenset[str]) -> None:
        key = ("class", cls, names)
        if key in self._seen:
            return
        self._seen.add(key)
        own = [c for c in cls.__mro__ if self.in_scope(c.__module__)]
        parts = []
        for base in own:
            annotations = base.__dict__.get("__annotations__") or {}
            parts.append(f"{base.__qualname__}:" + ",".join(
                f"{k}:{_annotation(v)}" for k, v in sorted(annotations.items())))
        for name in sorted(names):
            for base in own:
                if name in base.__dict__:
                    text = self.ref(base.__dict__[name], names, data=True, label=name)
                    if text is not None:
                        parts.append(f"{name}={text}")
                    break
        for validator in _validators(cls):
            self.ref(validator, names, data=False, label="")
        for sub in _field_classes(cls):
            if self.in_scope(sub.__module__):
                self.klass(sub, frozenset())
        label = f"{cls.__module__}.{cls.__qualname__}[{','.join(sorted(names))}]"
        self.items.add(f"class {label}:{'|'.join(parts)}")

    def instance(self, obj: Any, names: frozenset[str]) -> None:
        """An object the code holds (``self``, a cell value): its class's methods the code names,
        and its own callable attributes the code names; never its data."""
        cls = type(obj)
        if self.in_scope(cls.__module__):
            self.klass(cls, names)
        attrs = getattr(obj, "__dict__", None)
        if not isinstance(attrs, dict):
            return
        for name in sorted(names & attrs.keys()):
            value = attrs[name]
            if callable(value):
                key = ("attribute", id(obj), name)
                if key not in self._seen:
                    self._seen.add(key)
                    self.ref(value, names, data=False, label=name)

    def module(self, module: types.ModuleType, names: frozenset[str]) -> None:
        """A module the code names (``text.normalise(...)``): the attributes the code names."""
        if not self.in_scope(module.__name__):
            return
        key = ("module", module.__name__, names)
        if key in self._seen:
            return
        self._seen.add(key)
        namespace = vars(module)
        for name in sorted(names):
            if name in namespace:
                text = self.ref(namespace[name], names, data=True, label=name)
                if text is not None:
                    self.items.add(f"constant {module.__name__}.{name}={text}")


def _names(code: types.CodeType) -> frozenset[str]:
    """The global and attribute names a code object and the code nested in it use."""
    found = _CODE_NAMES.get(code)
    if found is None:
        names = set(code.co_names)
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                names |= _names(const)
        found = _CODE_NAMES[code] = frozenset(names)
    return found


def _code_text(code: types.CodeType) -> str:
    """A code object as text without its line numbers, file name or docstring: argument counts,
    flags, its instructions with each constant written out (so a docstring added or removed,
    which renumbers the constants, changes nothing; nested code objects recursively), the
    exception table and the names."""
    found = _CODE_TEXTS.get(code)
    if found is not None:
        return found
    shown = []
    for ins in dis.get_instructions(code):
        if ins.opcode in dis.hasconst:
            value = ins.argval
            arg = f"code({_code_text(value)})" if isinstance(value, types.CodeType) else _literal(value)
        else:
            arg = "" if ins.arg is None else str(ins.arg)
        shown.append(f"{ins.opname} {arg}")
    parts = [code.co_name, str(code.co_argcount), str(code.co_posonlyargcount), str(code.co_kwonlyargcount),
             str(code.co_flags), getattr(code, "co_exceptiontable", b"").hex(), repr(code.co_names),
             repr(code.co_varnames), repr(code.co_freevars), repr(code.co_cellvars), "[" + ";".join(shown) + "]"]  # noqa: E501
    text = _CODE_TEXTS[code] = "/".join(parts)
    return text


def _literal(value: Any) -> str:
    """A code constant as text (frozensets sorted: their order depends on string hashing)."""
    if isinstance(value, frozenset):
        return "frozenset(" + ",".join(sorted(_literal(v) for v in value)) + ")"
    if isinstance(value, tuple):
        return "(" + ",".join(_literal(v) for v in value) + ")"
    return repr(value)


_IMMUTABLE = (str, bytes, int, float, complex, bool, type(None), type(Ellipsis))


def _constant(value: Any, *, upper: bool, depth: int = 0) -> str | None:
    """An immutable global (or an UPPER_CASE container of such values) as stable text; None for
    anything else (objects, mutable containers that may be caches)."""
    if depth > 6:
        return None
    if isinstance(value, _IMMUTABLE):
        return repr(value)
    if isinstance(value, enum.Enum):
        return f"{type(value).__qualname__}.{value.name}"
    if isinstance(value, re.Pattern):
        return f"re({value.pattern!r},{value.flags})"
    mutable = isinstance(value, list | dict | set)
    if mutable and not upper:
        return None
    if isinstance(value, tuple | list | frozenset | set):
        texts = [_constant(v, upper=upper, depth=depth + 1) for v in value]
        items = [t for t in texts if t is not None]
        if len(items) < len(texts):
            return None
        if isinstance(value, frozenset | set):
            return "{" + ",".join(sorted(items)) + "}"
        return "(" + ",".join(items) + ")"
    if isinstance(value, dict):
        pairs = [(_constant(k, upper=upper, depth=depth + 1), _constant(v, upper=upper, depth=depth + 1))
                 for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ",".join(sorted(f"{k}:{v}" for k, v in pairs)) + "}"
    return None


def _annotation(value: Any) -> str:
    if isinstance(value, str):
        return value
    return getattr(value, "__qualname__", None) or repr(value)


def _validators(cls: type) -> list[Any]:
    """The functions of a pydantic model's validators and serializers (run by ``model_validate``
    without being named by the parser's code)."""
    decorators = cls.__dict__.get("__pydantic_decorators__")
    out: list[Any] = []
    for kind in _PYDANTIC_DECORATORS:
        group = getattr(decorators, kind, None)
        if isinstance(group, dict):
            out.extend(getattr(d, "func", None) for d in group.values())
    return [getattr(f, "__func__", f) for f in out if f is not None]  # a classmethod's function


_PYDANTIC_DECORATORS = ("validators", "field_validators", "root_validators", "field_serializers",
                        "model_serializers", "model_validators", "computed_fields")


def _field_classes(cls: type) -> list[type]:
    """The classes a pydantic model's field annotations name (nested models)."""
    fields = cls.__dict__.get("__pydantic_fields__") or {}
    found: list[type] = []

    def walk(tp: Any) -> None:
        if isinstance(tp, type) and tp is not cls:
            found.append(tp)
        for arg in typing.get_args(tp):
            walk(arg)

    for info in fields.values():
        walk(getattr(info, "annotation", None))
    return found


# ----------------------------------------------------------------------------- records


def produced_by(template: str | None, parse: Any) -> dict[str, Any]:
    """``record["produced_by"]`` of a step rendered from ``template`` (a template name, or None
    for messages not rendered from one) and parsed by ``parse``; ``"parser_by_name": True`` is
    added when the parser is a module-level function (its version is then compared when the run
    opens, not only when its unit is met).

    Raises:
        TemplateConflict: the template name is in two template folders.
    """
    out: dict[str, Any] = {"template": template,
                           "template_sha256": template_sha256(template) if template else None,
                           "parser": parser_name(parse), "parser_version": parser_version(parse)}
    if _by_name(parse):
        out["parser_by_name"] = True
    return out


def _by_name(parse: Any) -> bool:
    """Whether ``parse`` is what its name looks up (:func:`resolve_parser`): a module-level
    function without a closure, so a run can compare its version when it opens."""
    return (isinstance(parse, types.FunctionType) and parse.__closure__ is None
            and "." not in parse.__qualname__ and "<" not in parse.__qualname__)


def recorded_changes(record: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between what produced a recorded unit (its ``produced_by``) and what would
    produce it now (``now``, :func:`produced_by`): ``["template liveideabench_fluency changed",
    "parser m.parse_x changed"]``; ``[]`` when nothing did or the record predates ``produced_by``."""
    old = record.get(PRODUCED_BY)
    if not isinstance(old, dict):
        return []
    out = []
    if old.get("template") != now["template"]:
        out.append(f"template {old.get('template')} is now {now['template']}")
    elif old.get("template_sha256") != now["template_sha256"]:
        out.append(f"template {now['template']} changed")
    if old.get("parser") != now["parser"]:
        out.append(f"parser {old.get('parser')} is now {now['parser']}")
    elif old.get("parser_version") != now["parser_version"]:
        out.append(f"parser {now['parser']} changed")
    return out


def resolve_parser(name: str) -> Any | None:
    """The function or method named ``"<module>.<qualname>"`` when it can be imported (a
    module-level function, a class's method); None for a lambda, a closure or a name gone."""
    if "<" in name:
        return None
    parts = name.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        module_name = ".".join(parts[:cut])
        module = sys.modules.get(module_name)
        if module is None:
            try:
                module = importlib.import_module(module_name)
            except Exception:  # noqa: BLE001 (not importable here: compared when met)
                continue
        target: Any = module
        try:
            for attr in parts[cut:]:
                target = getattr(target, attr)
        except AttributeError:
            return None
        return target if callable(target) else None
    return None


@dataclass
class RunProvenance:
    """What a run's store checks when it opens (:class:`~ideaharness.runs.store.RunStore`'s
    ``provenance``), and how its units are treated when what produced them changed.

    Attributes:
        templates: template name -> sha256 of the benchmark's templates now
            (:func:`benchmark_templates`), recorded in ``config.json``.
        rejudge: ``--rejudge-changed``: re-judge the affected units instead of refusing.
        changed_templates, changed_parsers: what the open found changed (``"step: parser"``).
    """

    templates: dict[str, str] = field(default_factory=dict)
    rejudge: bool = False
    changed_templates: list[str] = field(default_factory=list)
    changed_parsers: list[str] = field(default_factory=list)
    _versions: dict[str, str | None] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, bench_cls: type, *, rejudge: bool = False) -> RunProvenance:
        """The provenance of a run of ``bench_cls``: its templates read and hashed now, and
        parser versions computed afresh (a module reloaded in this process is seen as it is).

        Raises:
            TemplateConflict: a template name is in two template folders.
        """
        _VERSIONS.clear()
        return cls(templates=benchmark_templates(bench_cls), rejudge=rejudge)

    def current_version(self, parser: str) -> str | None:
        """The version of the module-level function named ``parser`` now, or None when no such
        function can be looked up by that name (its units are compared when met)."""
        if parser not in self._versions:
            found = resolve_parser(parser)
            self._versions[parser] = parser_version(found) if _by_name(found) else None
        return self._versions[parser]

    def changes(self, recorded: Mapping[str, str] | None, seen: Iterable[ProducedKey]) -> list[str]:
        """What changed since the run was recorded, as parts of one line (``[]``: nothing).

        Args:
            recorded: the template hashes in ``config.json`` (None: a run recorded before them).
            seen: ``(step, template, template_sha256, parser, parser_version, parser_by_name)``
                of the records (:data:`~ideaharness.runs.store.ProducedKey`).
        """
        templates = {name for name, digest in (recorded or {}).items()
                     if name in self.templates and self.templates[name] != digest}
        parsers: set[str] = set()
        for step, template, digest, parser, version, by_name in seen:
            if template and digest:
                now = self.templates.get(template) or template_sha256(template)
                if now is not None and now != digest:
                    templates.add(template)
            if by_name and parser and version:
                current = self.current_version(parser)
                if current is not None and current != version:
                    parsers.add(f"{step}: {parser}")
        self.changed_templates, self.changed_parsers = sorted(templates), sorted(parsers)
        parts = []
        if templates:
            parts.append(f"prompt templates changed since it was recorded ({', '.join(sorted(templates))})")
        if parsers:
            parts.append(f"reply parsers changed ({'; '.join(sorted(parsers))})")
        return parts
