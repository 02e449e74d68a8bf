"""Content hashes of a run's input files: part of the run's identity.

A run directory resumes only over the inputs it started with: editing the ``--data`` or
``--ideas`` file in place between two invocations would otherwise mix records computed from two
versions of the data. The store records the sha256 of every file a benchmark reads
(``config.json`` key :data:`INPUTS_KEY`) and refuses a resume when any of them changed, was
added or went missing, naming the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path

from ideaharness.errors import DataError
from ideaharness.fileio import file_sha256

INPUTS_KEY = "input_sha256"

InputHashes = dict[str, dict[str, str]]
"""flag (``--data``) -> file name -> sha256 hex digest."""


def _bundled_dir() -> Path:
    return Path(str(resources.files("ideaharness.data").joinpath("bundled"))).resolve()


def _benchmarks_dir() -> Path:
    return Path(str(resources.files("ideaharness.benchmarks"))).resolve()


def file_label(path: Path) -> str:
    """How a file is named in ``config.json``: as given, ``bundled/<name>`` for the package's
    shared data, ``benchmarks/<benchmark>/data/<name>`` for a built-in benchmark's own bundled data
    (no machine-specific path in the run's identity)."""
    resolved = path.resolve()
    try:
        return f"bundled/{resolved.relative_to(_bundled_dir()).as_posix()}"
    except ValueError:
        pass
    try:
        inner = resolved.relative_to(_benchmarks_dir())
    except ValueError:
        return str(path)
    return f"benchmarks/{inner.as_posix()}" if inner.parts[1:2] == ("data",) else str(path)


def hash_inputs(inputs: Mapping[str, Sequence[Path]]) -> InputHashes:
    """sha256 of every file of every input.

    Args:
        inputs: flag -> the files read for it.

    Raises:
        DataError: a listed file cannot be read.
    """
    out: InputHashes = {}
    for flag, files in inputs.items():
        hashes: dict[str, str] = {}
        for path in files:
            try:
                hashes[file_label(Path(path))] = file_sha256(path)
            except OSError as exc:
                raise DataError(path, f"cannot be read ({exc.strerror or exc})") from None
        out[flag] = hashes
    return out


def changed_input(old: InputHashes, new: InputHashes) -> str | None:
    """Why ``new`` is not the input ``old`` was recorded with (names flag and file), or None.

    Flags present in only one of the two are not compared (a run recorded before a flag's files
    were hashed).
    """
    for flag in sorted(set(old) & set(new)):
        before, now = old[flag], new[flag]
        for name in sorted(set(before) | set(now)):
            if name not in now:
                return f"{flag} {name}: part of this run's input when it started, missing now"
            if name not in before:
                return f"{flag} {name}: not part of this run's input when it started"
            if before[name] != now[name]:
                return (
                    f"{flag} {name}: changed since this run started "
                    f"(sha256 {before[name][:12]}... now {now[name][:12]}...)"
                )
    return None
