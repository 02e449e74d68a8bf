"""System specs: the strings that name a system where a model string goes.

``ideas:PATH[#format=F]`` (answers from a file), ``cmd:COMMAND ARGS`` (a program run once per task)
and ``http://HOST:PORT/PATH`` / ``https://...`` (a service answering POSTed tasks); anything else
is a model string (``provider/model``). :data:`CAPTURE_SPEC` is the generator of ``tasks export``
(never asked: its tasks are written out).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

SystemKind = Literal["model", "ideas-file", "command", "http", "capture"]

IDEAS_PREFIX = "ideas:"
CMD_PREFIX = "cmd:"
HTTP_PREFIXES = ("http://", "https://")
CAPTURE_PREFIX = "capture:"
CAPTURE_SPEC = "capture:tasks-export"
"""The generator a ``tasks export`` run is given: a system (so no benchmark rule that depends on
the generator model applies, e.g. judges of its family or a rewriter defaulting to it), never asked."""


def is_system(spec: str | None) -> bool:
    """Whether ``spec`` names a system (``ideas:``, ``cmd:``, ``http://``, ``https://``, or the
    ``tasks export`` capture), not a model."""
    return bool(spec) and str(spec).startswith((IDEAS_PREFIX, CMD_PREFIX, *HTTP_PREFIXES, CAPTURE_PREFIX))


def system_kind(spec: str) -> SystemKind:
    """``"ideas-file"``, ``"command"``, ``"http"``, ``"capture"`` or ``"model"`` (any other string)."""
    if spec.startswith(CAPTURE_PREFIX):
        return "capture"
    if spec.startswith(IDEAS_PREFIX):
        return "ideas-file"
    if spec.startswith(CMD_PREFIX):
        return "command"
    if spec.startswith(HTTP_PREFIXES):
        return "http"
    return "model"


def split_ideas_spec(spec: str) -> tuple[str, str]:
    """``"ideas:PATH#format=F"`` -> ``(PATH, F)``; the format defaults to ``"auto"``.

    Raises:
        ValueError: an empty path or a fragment other than ``format=...``.
    """
    body = spec.removeprefix(IDEAS_PREFIX)
    path, sep, fragment = body.partition("#")
    fmt = "auto"
    if sep:
        name, eq, value = fragment.partition("=")
        if name != "format" or not eq or not value:
            raise ValueError(f"{spec}: the part after '#' is format=<name>, got {fragment!r}")
        fmt = value
    if not path:
        raise ValueError(f"{spec}: no file after 'ideas:'")
    return path, fmt


def default_system_name(spec: str) -> str:
    """A system's default name: the file stem (``ideas:``), the script's basename (``cmd:``: the
    first argument ending ``.py``/``.sh``, else the program), ``host:port/path`` (http), or the
    model string itself."""
    kind = system_kind(spec)
    if kind == "ideas-file":
        try:
            path, _ = split_ideas_spec(spec)
        except ValueError:
            path = spec.removeprefix(IDEAS_PREFIX)
        return Path(path).stem or path
    if kind == "command":
        body = spec.removeprefix(CMD_PREFIX)
        try:
            argv = shlex.split(body)
        except ValueError:
            argv = body.split()
        if not argv:
            return "command"
        script = next((a for a in argv[1:] if a.endswith((".py", ".sh"))), argv[0])
        return Path(script).name
    if kind == "http":
        parts = urlsplit(spec)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        return f"{host}{port}{parts.path.rstrip('/') or ''}" or spec
    return spec
