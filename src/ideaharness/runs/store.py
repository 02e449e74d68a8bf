"""The run directory: config, append-only records, results. Resume by re-running the same command.

Layout of ``--out runs/NAME``::

    config.json          the full configuration of the run (no secrets), the sha256 of every
                         input file and (``produced_by``) of every prompt template the benchmark
                         can render, written once (updated when an old run gains a field, or a
                         re-judge accepts new templates)
    records/<step>.jsonl one line per finished unit of work, appended and fsynced as it finishes
    records/<step>.torn  line fragments a crash left at the end of a records file (kept aside)
    prompts.jsonl        the rendered messages of every recorded judgment, once per distinct prompt:
                         ``{"prompt_hash", "messages"}`` keyed by the hash the judgment carries
                         (:func:`~ideaharness.llm.judge.prompt_hash`); appended and fsynced before
                         the record that names it (:meth:`RunStore.put_prompt`, :func:`read_prompts`)
    usage/<process>.json model calls, tokens and cost of each process that worked on the run
    batches/             batch mode's submitted batches and collected requests (ideaharness.llm.batch)
    results.json         aggregate results, rewritten at the end of each run
    report.html          self-contained report (when the benchmark writes one)
    .run.lock(.json)     held by the one process working on the directory (and who it is)
    superseded/<time>/   earlier runs replaced with ``force=True`` (``--force``)

A record line is ``{"step", "instance_id", "key", "data", "created"}``; ``(step, instance_id,
key)`` identifies a unit of work, so a re-run skips every unit already recorded, and records can
be split by instance id into deterministic shards (:func:`shard_of`) and merged by concatenation.
A line cut short by a crash is cut off when the store opens (so the next record starts a line of
its own), kept in ``records/<step>.torn`` and counted in ``corrupt_record_lines``.

A judge panel asking several models the same prompt, repeated samples and re-asked rounds share
one line of ``prompts.jsonl``; known secret values are removed from the messages before they are
written (:func:`ideaharness.redaction.redact_values`).

What produced a record: a judgment's record carries ``produced_by`` (its template's hash and its
parser's version, :mod:`ideaharness.runner.provenance`). When the run is opened again with a
``provenance`` (the runner gives one), the templates in ``config.json`` and the templates and
parsers its records name are compared with the current ones: a change refuses the run (one line
naming what changed) unless ``provenance.rejudge`` (``--rejudge-changed``: the step runner then
re-judges only the affected units, counted in :attr:`RunStore.rejudged` and reported in
``results.json``) or ``force`` (a new run; the old one is moved aside). Records without
``produced_by`` (runs recorded before it) are never compared.

A unit is recorded once, except that :meth:`RunStore.replace` (a parse failure re-asked by a later
run, :meth:`~ideaharness.runner.steps.StepRunner.judge_step`) appends its new record: the last line
of a unit is its record, and the store drops the lines it superseded (:meth:`RunStore.compact`,
when it drains, closes and opens), so every reader of the files sees one line per unit.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Protocol

import orjson

from ideaharness.errors import StorageError, UserError, storage_error
from ideaharness.fileio import append_line, append_lines, atomic_write_text
from ideaharness.jsonl import dumps_line, repair_torn_tail
from ideaharness.metrics.reliability.sampling import original_key
from ideaharness.redaction import redact_values
from ideaharness.results import BenchmarkResults, validate_results
from ideaharness.runs.inputs import INPUTS_KEY, InputHashes, changed_input, hash_inputs
from ideaharness.runs.lock import HOLDER_FILE, LOCK_FILE, RunLock
from ideaharness.runs.usage import USAGE_DIR, UsageLog, cost_block, price_totals

CONFIG_FILE = "config.json"
RESULTS_FILE = "results.json"
REPORT_FILE = "report.html"
RECORDS_DIR = "records"
SUPERSEDED_DIR = "superseded"
TORN_SUFFIX = ".torn"
PROMPTS_FILE = "prompts.jsonl"
COMMIT_DELAY_S = 0.005
"""Longest wait of a group of records for more while its last record's unit said other units are
still working (``siblings``), as PostgreSQL's ``commit_delay``/``commit_siblings``: each group costs
two fsyncs (~150 us of CPU each here), so units finishing a few ms apart share them."""
GROUP_MAX = 64
"""Records a group waits for at most (it is written at once when it has this many)."""
PRODUCED_BY_KEY = "produced_by"
"""The ``config.json`` key of what produces the run's records: ``{"templates": {name: sha256},
"rejudged": true}`` (``rejudged`` once a unit was re-judged after a change: from then on a unit
whose prompt differs from the one it was judged with is affected too)."""

ProducedKey = tuple[str, str | None, str | None, str | None, str | None, bool]
"""``(step, template, template_sha256, parser, parser_version, parser_by_name)`` of a record's
``produced_by``: what :meth:`Provenance.changes` compares when a run opens."""


class Provenance(Protocol):
    """What a store checks about what produced its records when it opens
    (:class:`ideaharness.runner.provenance.RunProvenance`).

    Attributes:
        templates: template name -> sha256 of the templates the benchmark can render now.
        rejudge: accept a change (the affected units are re-judged) instead of refusing.
    """

    templates: dict[str, str]
    rejudge: bool

    def changes(self, recorded: Mapping[str, str] | None, seen: Iterable[ProducedKey]) -> list[str]:
        """What changed, as parts of one line (``[]`` when nothing did); ``recorded``: the template
        hashes of ``config.json`` (None before they were recorded); ``seen``: the records' keys."""
        ...


_RUN_FILES = (CONFIG_FILE, RECORDS_DIR, PROMPTS_FILE, RESULTS_FILE, REPORT_FILE, USAGE_DIR, "batches")
"""What a run owns in its directory (moved aside by ``force``)."""
_LEFTOVERS = frozenset({RECORDS_DIR, USAGE_DIR, LOCK_FILE, HOLDER_FILE, SUPERSEDED_DIR})
"""What a run directory may hold before its config.json is written (an interrupted start)."""


def shard_of(instance_id: str, num_shards: int) -> int:
    """Deterministic shard index in [0, num_shards) of an instance id (sha256, not Python's hash)."""
    if num_shards < 1:
        raise ValueError("num_shards must be >= 1")
    return int(hashlib.sha256(instance_id.encode()).hexdigest(), 16) % num_shards


class RunStore:
    """Append-only store of one run's records, held by one process at a time.

    Args:
        out_dir: run directory; created if missing. An existing directory must be empty or hold a
            run (``config.json``): anything else is refused, never overwritten.
        config: JSON-serialisable configuration. If the directory already holds a run, the
            ``identity`` part of both configs must match (a different generator, dataset or seed
            in the same directory is refused rather than mixed).
        identity_keys: the config keys that must match to resume; default all keys.
        inputs: flag (``"--data"``) -> the files read for it; their sha256 is recorded and must
            match on resume.
        force: when the recorded run has other settings or inputs, or (with ``provenance``)
            other templates or parsers, move it to ``superseded/<time>/`` and start a new run
            instead of refusing.
        defaults: config key -> its default (JSON form): a key the recorded config.json lacks (a
            setting added since that run started) equals its default, so old run directories resume.
        provenance: what produces the records now (:class:`Provenance`): its templates are
            recorded in ``config.json`` and compared, with those and the parsers the records name,
            when the run is opened again; None compares nothing (the records' own ``produced_by``
            is still compared unit by unit by the step runner).

    Raises:
        UserError: ``out_dir`` is a file or a folder that is not a run directory; its
            ``config.json`` is unreadable; it holds a run with a different configuration or
            changed inputs (without ``force``); its templates or parsers changed (without
            ``force`` or ``provenance.rejudge``); or another process holds it.
        StorageError: the directory cannot be written (disk full, read-only).

    Use as a context manager or call :meth:`close` to release the directory.
    """

    def __init__(
        self,
        out_dir: str | Path,
        config: dict[str, Any],
        *,
        identity_keys: tuple[str, ...] | None = None,
        inputs: Mapping[str, Sequence[Path]] | None = None,
        force: bool = False,
        defaults: Mapping[str, Any] | None = None,
        provenance: Provenance | None = None,
    ) -> None:
        self.dir = Path(out_dir)
        self.config = config
        self.defaults = dict(defaults or {})
        self.provenance = provenance
        self.corrupt_lines = 0
        self.rejudged: dict[str, int] = {}
        """Step -> units re-judged by this process because what produced them changed."""
        self.rejudged_before = False
        """Whether ``config.json`` says units of this run were re-judged after a change (or a change
        was accepted when it opened): units whose prompt differs are then affected too."""
        self._seen: dict[ProducedKey, int] = {}  # what produced the records -> how many
        # key digest -> where its line is (records file number, byte offset, byte length, packed in
        # one int by _pack): the data stays on disk, so memory per record is ~0.2 KB whatever the
        # record holds (streamed runs)
        self._index: dict[bytes, int] = {}
        self._files: list[Path] = []
        self._file_no: dict[Path, int] = {}
        self._readers: dict[int, int] = {}
        self._batch: list[tuple[Path, str, bytes | str, asyncio.Future[None]]] = []
        self._pending: dict[bytes | str, asyncio.Future[None]] = {}
        self._gathering: set[bytes | str] = set()  # the keys of _batch (the group not yet being written)
        self._siblings = 0  # the units still working, as the last aput of _batch said
        self._records = 0  # the records in _batch (prompt lines aside)
        self._full: asyncio.Future[None] | None = None  # the gathering group's wait (commit delay)
        self._hurry = False  # drain(): no group waits for more records
        self._step_files: dict[str, Path] = {}  # step -> its records file
        self._prompts: dict[str, int] = {}  # prompt hash -> where its line is (as _index)
        self._flusher: asyncio.Task[None] | None = None
        self._usage: UsageLog | None = None
        self._written: set[bytes] = set()  # units this store recorded (not an earlier process)
        self._superseded: set[Path] = set()  # records files holding lines a later record replaced
        _check_out_dir(self.dir)
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise storage_error(self.dir, exc) from exc
        self._lock = RunLock(self.dir)
        self._lock.acquire()
        try:
            self._open(identity_keys, hash_inputs(inputs or {}), force)
        except BaseException:
            self._lock.release()
            raise

    # -- opening -------------------------------------------------------------
    def _open(self, identity_keys: tuple[str, ...] | None, hashes: InputHashes, force: bool) -> None:
        config_path = self.dir / CONFIG_FILE
        old = _read_config(config_path) if config_path.exists() else None
        if old is not None:
            problem = _identity_problem(old, self.config, identity_keys, hashes, self.defaults)
            if problem and not force:
                raise UserError(
                    f"{config_path}: {problem}; use another --out, or --force to start a new run "
                    f"here (the old one is moved to {self.dir / SUPERSEDED_DIR})"
                )
            if problem:
                self._supersede()
                old = None
        self._index_records()
        if old is not None and self.provenance is not None:
            found = old.get(PRODUCED_BY_KEY)
            block: dict[str, Any] = found if isinstance(found, dict) else {}
            self.rejudged_before = bool(block.get("rejudged"))
            recorded = block.get("templates") if isinstance(block.get("templates"), dict) else None
            changed = self.provenance.changes(recorded, list(self._seen))
            if changed and not self.provenance.rejudge:
                if not force:
                    raise UserError(
                        f"{config_path}: {'; '.join(changed)}; run again with --rejudge-changed to "
                        "re-judge only the affected units, or with --force to start a new run here (the "
                        f"old one is moved to {self.dir / SUPERSEDED_DIR}), or use another --out")
                self._reset()
                self._supersede()
                self._index_records()
                self.rejudged_before = False
                old = None
            elif changed:
                self.rejudged_before = True
        if old is None:
            self._write_config(hashes)
        elif (set(hashes) - set(old.get(INPUTS_KEY) or {})  # recorded before inputs were hashed
              or self._produced_block(old) != old.get(PRODUCED_BY_KEY)):
            self._write_config({**hashes, **(old.get(INPUTS_KEY) or {})}, base=old)
        self.compact()  # a crash between a replace and its compaction left two lines of one unit

    def _index_records(self) -> None:
        records = self.dir / RECORDS_DIR
        try:
            records.mkdir(exist_ok=True)
        except OSError as exc:
            raise storage_error(records, exc) from exc
        for path in sorted(records.glob("*.jsonl")):
            repair_torn_tail(path, path.with_suffix(TORN_SUFFIX))
            self._index_file(path)
        for torn in records.glob(f"*{TORN_SUFFIX}"):
            self.corrupt_lines += _count_lines(torn)
        prompts = self.dir / PROMPTS_FILE
        if prompts.exists():
            repair_torn_tail(prompts, prompts.with_suffix(TORN_SUFFIX))
            self._index_prompts(prompts)

    def _reset(self) -> None:
        """Forget every record indexed (before the run is moved aside)."""
        for fd in self._readers.values():
            os.close(fd)
        self._readers.clear()
        self._index.clear()
        self._files.clear()
        self._file_no.clear()
        self._prompts.clear()
        self._superseded.clear()
        self._seen.clear()
        self.corrupt_lines = 0

    def _produced_block(self, old: Mapping[str, Any] | None) -> dict[str, Any] | None:
        """``config.json``'s :data:`PRODUCED_BY_KEY` for this run: the current templates (the old
        block when the store has no provenance), and ``rejudged`` once set."""
        previous = (old or {}).get(PRODUCED_BY_KEY)
        if self.provenance is None:
            return previous if isinstance(previous, dict) else None
        block: dict[str, Any] = {"templates": dict(self.provenance.templates)}
        if self.rejudged_before:
            block["rejudged"] = True
        return block

    def _index_file(self, path: Path) -> None:
        number = self._number(path)
        try:
            with path.open("rb") as fh:
                for start, line in _record_lines(fh):
                    try:
                        record = json.loads(line.decode("utf-8"))
                        key = _digest(record["step"], record["instance_id"], record["key"])
                        record["data"]  # noqa: B018 (a record without data is corrupt)
                    except (UnicodeDecodeError, ValueError, TypeError, KeyError):
                        self.corrupt_lines += 1
                        continue
                    if key in self._index:
                        self._superseded.add(path)
                        self._unsee(self._read(self._index[key]))
                    self._index[key] = _pack(number, start, len(line))
                    seen = _produced_key(record)
                    if seen is not None:
                        self._seen[seen] = self._seen.get(seen, 0) + 1
        except OSError as exc:
            raise storage_error(path, exc) from exc

    def _index_prompts(self, path: Path) -> None:
        number = self._number(path)
        try:
            with path.open("rb") as fh:
                for start, line in _record_lines(fh):
                    entry = _prompt_entry(line)
                    if entry is not None:
                        self._prompts.setdefault(entry[0], _pack(number, start, len(line)))
        except OSError as exc:
            raise storage_error(path, exc) from exc

    def _append(self, path: Path, line: str) -> int:
        """Append ``line`` to ``path`` (fsynced) and return where it lies, packed for the index.

        Raises:
            StorageError: the line cannot be written or the file's size read.
        """
        append_line(path, line)
        length = len(line.encode("utf-8"))
        try:
            end = path.stat().st_size
        except OSError as exc:
            raise storage_error(path, exc) from exc
        return _pack(self._number(path), end - length - 1, length)

    def _number(self, path: Path) -> int:
        if path not in self._file_no:
            self._file_no[path] = len(self._files)
            self._files.append(path)
        return self._file_no[path]

    def _read(self, where: int) -> dict[str, Any]:
        number, offset, length = _unpack(where)
        fd = self._readers.get(number)
        try:
            if fd is None:
                fd = self._readers[number] = os.open(self._files[number], os.O_RDONLY)
            return json.loads(os.pread(fd, length, offset).decode("utf-8"))  # type: ignore[no-any-return]
        except OSError as exc:
            raise storage_error(self._files[number], exc) from exc

    def _unsee(self, record: dict[str, Any]) -> None:
        """Forget what produced a record line that a later line of its unit replaced."""
        seen = _produced_key(record)
        if seen is not None and self._seen.get(seen):
            self._seen[seen] -= 1
            if not self._seen[seen]:
                del self._seen[seen]

    def _write_config(self, hashes: InputHashes, base: dict[str, Any] | None = None) -> None:
        content = {**(base if base is not None else self.config), INPUTS_KEY: hashes}
        block = self._produced_block(base)
        if block is not None:
            content[PRODUCED_BY_KEY] = block
        atomic_write_text(self.dir / CONFIG_FILE, json.dumps(content, indent=2, sort_keys=True, default=str))

    def note_rejudged(self, step: str) -> None:
        """Count a unit re-judged because what produced it changed (``--rejudge-changed``); the
        first one marks ``config.json`` (``rejudged``), so later runs also treat units whose prompt
        differs as affected.

        Raises:
            StorageError: ``config.json`` cannot be rewritten.
        """
        self.rejudged[step] = self.rejudged.get(step, 0) + 1
        if not self.rejudged_before:
            self.rejudged_before = True
            path = self.dir / CONFIG_FILE
            current = _read_config(path)
            block = dict(current.get(PRODUCED_BY_KEY) or {})
            block["rejudged"] = True
            atomic_write_text(path, json.dumps({**current, PRODUCED_BY_KEY: block}, indent=2, sort_keys=True,
                                               default=str))

    def rejudged_block(self) -> dict[str, Any] | None:
        """``results["rejudged"]``: ``{"units", "steps": {step: n}, "templates", "parsers", "line"}``
        of the units this process re-judged because their template or parser changed; None when
        none was."""
        if not self.rejudged:
            return None
        total = sum(self.rejudged.values())
        steps = dict(sorted(self.rejudged.items()))
        changed = [*getattr(self.provenance, "changed_templates", []),
                   *getattr(self.provenance, "changed_parsers", [])]
        what = f" (changed: {', '.join(changed)})" if changed else ""
        line = (f"{total} unit(s) re-judged because their prompt template, reply parser or prompt "
                f"changed{what}: " + ", ".join(f"{step} {n}" for step, n in steps.items()))
        return {"units": total, "steps": steps,
                "templates": list(getattr(self.provenance, "changed_templates", [])),
                "parsers": list(getattr(self.provenance, "changed_parsers", [])), "line": line}

    def _supersede(self) -> None:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
        target = self.dir / SUPERSEDED_DIR / stamp
        n = 1
        while target.exists():
            n += 1
            target = self.dir / SUPERSEDED_DIR / f"{stamp}-{n}"
        try:
            target.mkdir(parents=True)
            for name in _RUN_FILES:
                if (self.dir / name).exists():
                    shutil.move(str(self.dir / name), str(target / name))
        except OSError as exc:
            raise storage_error(target, exc) from exc

    # -- records -------------------------------------------------------------
    def get(self, step: str, instance_id: str, key: str = "") -> dict[str, Any] | None:
        """The recorded data of a unit of work (read back from its records file), or None if not
        done yet.

        Raises:
            StorageError: the records file can no longer be read.
        """
        where = self._index.get(_digest(step, instance_id, key))
        return None if where is None else self._read(where)["data"]  # type: ignore[no-any-return]

    def has(self, step: str, instance_id: str, key: str = "") -> bool:
        return _digest(step, instance_id, key) in self._index

    def written_here(self, step: str, instance_id: str, key: str = "") -> bool:
        """Whether this store (this process) recorded the unit, rather than an earlier run."""
        return _digest(step, instance_id, key) in self._written

    # -- prompts -------------------------------------------------------------
    def put_prompt(self, prompt_hash: str, messages: Sequence[Mapping[str, Any]]) -> None:
        """Keep the rendered ``messages`` of a prompt under ``prompt_hash`` (the hash its judgments
        carry) in ``prompts.jsonl``, fsynced before returning; a hash already kept is not written
        again. Known secret values are removed from the text first.

        Raises:
            StorageError: the line cannot be written (the file is left as it was).
        """
        if prompt_hash in self._prompts:
            return
        line = _prompt_line(prompt_hash, messages)
        self._prompts[prompt_hash] = self._append(self.dir / PROMPTS_FILE, line)

    async def aput_prompt(self, prompt_hash: str, messages: Sequence[Mapping[str, Any]]) -> None:
        """:meth:`put_prompt` for coroutines, group-committed with the records (:meth:`aput`): call
        it before the ``aput`` of the record whose judgment names the prompt, so no record on disk
        names a prompt that is not.

        Raises:
            StorageError: the line could not be written.
        """
        if prompt_hash in self._prompts:
            return
        waiting = self._pending.get(prompt_hash)
        if waiting is None:
            waiting = self._enqueue(self.dir / PROMPTS_FILE, _prompt_line(prompt_hash, messages), prompt_hash)
        await asyncio.shield(waiting)

    async def _prompt_first(self, prompt_hash: str, messages: Sequence[Mapping[str, Any]]) -> None:
        """Make sure a record queued next is written after the prompt it names: queue the prompt in
        the group being gathered (whose prompts are written before its records), or wait for the
        group that is writing it; nothing when it is on disk.

        Raises:
            StorageError: the group writing the prompt failed.
        """
        if prompt_hash in self._prompts or prompt_hash in self._gathering:
            return
        waiting = self._pending.get(prompt_hash)
        if waiting is None:
            self._enqueue(self.dir / PROMPTS_FILE, _prompt_line(prompt_hash, messages), prompt_hash)
        else:  # in the group being written
            await asyncio.shield(waiting)

    def _records_file(self, step: str) -> Path:
        path = self._step_files.get(step)
        if path is None:
            path = self._step_files[step] = self.dir / RECORDS_DIR / f"{_safe(step)}.jsonl"
        return path

    def _enqueue(self, path: Path, line: str, key: bytes | str, siblings: int = 0) -> asyncio.Future[None]:
        """Queue ``line`` for ``path`` in the group being gathered (started by a flusher task when
        none runs); the future is done once it is on disk and indexed."""
        loop = asyncio.get_running_loop()
        waiting = self._pending[key] = loop.create_future()
        self._batch.append((path, line, key, waiting))
        self._gathering.add(key)
        if not isinstance(key, str):  # a record (a prompt's key is its hash)
            self._records += 1
            self._siblings = siblings
        if self._full is not None and self._complete():
            _wake(self._full)
        if self._flusher is None or self._flusher.done():
            self._flusher = loop.create_task(self._flush())
        return waiting

    def prompt(self, prompt_hash: str) -> list[dict[str, Any]] | None:
        """The messages kept under ``prompt_hash``, or None when none are (a run recorded before
        prompts were kept, or a step that does not keep them).

        Raises:
            StorageError: ``prompts.jsonl`` can no longer be read.
        """
        where = self._prompts.get(prompt_hash)
        return None if where is None else self._read(where)["messages"]  # type: ignore[no-any-return]

    def replace(self, step: str, instance_id: str, data: dict[str, Any], key: str = "") -> None:
        """Record ``data`` as the unit's record, in place of the one it has (or as :meth:`put`
        when it has none): the new line is appended and fsynced, and the old one dropped at the
        next :meth:`compact`.

        Raises:
            StorageError: the record cannot be written; the unit keeps its old record.
        """
        digest = _digest(step, instance_id, key)
        old = self._index.pop(digest, None)
        try:
            self.put(step, instance_id, data, key)
        except BaseException:
            if old is not None:
                self._index[digest] = old
            raise
        if old is not None:
            self._superseded.add(self._files[_unpack(old)[0]])

    async def areplace(self, step: str, instance_id: str, data: dict[str, Any], key: str = "", *,
                       prompt: tuple[str, Sequence[Mapping[str, Any]]] | None = None,
                       siblings: int = 0) -> None:
        """:meth:`replace` for coroutines (group-committed like :meth:`aput`, ``prompt`` and
        ``siblings`` as there).

        Raises:
            StorageError: the record cannot be written; the unit keeps its old record.
        """
        digest = _digest(step, instance_id, key)
        old = self._index.pop(digest, None)
        try:
            await self.aput(step, instance_id, data, key, prompt=prompt, siblings=siblings)
        except BaseException:
            if old is not None and digest not in self._index:
                self._index[digest] = old
            raise
        if old is not None:
            self._superseded.add(self._files[_unpack(old)[0]])

    def compact(self) -> None:
        """Rewrite (atomically) each records file holding lines that a later record of the same
        unit replaced, keeping one line per unit (the current one) and every unreadable line as it
        was; a no-op when nothing was replaced.

        Raises:
            StorageError: a records file cannot be rewritten (it is left as it was).
        """
        for path in sorted(self._superseded):
            self._compact_file(path)
        self._superseded.clear()

    def _compact_file(self, path: Path) -> None:
        number = self._number(path)
        current = {where: digest for digest, where in self._index.items() if _unpack(where)[0] == number}
        kept: list[bytes] = []
        moved: dict[bytes, int] = {}
        new_offset = 0
        try:
            with path.open("rb") as fh:
                for start, line in _record_lines(fh):
                    digest = current.get(_pack(number, start, len(line)))
                    if digest is None and _is_record(line):
                        continue  # a line a later record of its unit replaced
                    if digest is not None:
                        moved[digest] = _pack(number, new_offset, len(line))
                    kept.append(line)
                    new_offset += len(line) + 1
            tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            try:
                with open(tmp, "wb") as out:
                    out.write(b"".join(line + b"\n" for line in kept))
                    out.flush()
                    os.fsync(out.fileno())
                os.replace(tmp, path)
            finally:
                tmp.unlink(missing_ok=True)
        except OSError as exc:
            raise storage_error(path, exc) from exc
        fd = self._readers.pop(number, None)
        if fd is not None:  # it reads the file that was replaced
            os.close(fd)
        self._index.update(moved)

    def put(self, step: str, instance_id: str, data: dict[str, Any], key: str = "") -> None:
        """Append one record and fsync it before returning (crash-safe); all or nothing.

        A unit already recorded is not written twice. Strings holding lone surrogates are stored
        as JSON escapes and read back exactly.

        Raises:
            StorageError: the record cannot be written (e.g. disk full); the file is left as it was.
        """
        digest = _digest(step, instance_id, key)
        if digest in self._index:
            return
        self._written.add(digest)
        line = dumps_line(
            {
                "step": step,
                "instance_id": instance_id,
                "key": key,
                "data": data,
                "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            }
        )
        self._index[digest] = self._append(self._records_file(step), line)
        if self._usage is not None:
            self._usage.maybe_save()

    async def aput(self, step: str, instance_id: str, data: dict[str, Any], key: str = "", *,
                   prompt: tuple[str, Sequence[Mapping[str, Any]]] | None = None, siblings: int = 0) -> None:
        """:meth:`put` for coroutines: returns once the record is on disk, without blocking the event
        loop; records put while a write is under way are written together, one write and one fsync
        per file (group commit) in one trip to a worker thread, so C concurrent units pay ~one
        fsync, not C in a row.

        ``prompt``: ``(prompt_hash, messages)`` of the judgment the record holds, kept in
        ``prompts.jsonl`` as :meth:`aput_prompt` does, in the record's group: a group writes its
        prompts before its records, so no record on disk names a prompt that is not (one group
        instead of two in a row).

        ``siblings``: other units still working (whose records will come soon): while the last
        record queued says so, its group waits for them, up to :data:`COMMIT_DELAY_S` and
        :data:`GROUP_MAX` records, so units finishing a few ms apart share one fsync; 0: written
        at once. :meth:`drain` cuts the wait short.

        All or nothing per file of a group, in order (prompts first; after a file fails, the
        group's later files are not written); a unit already recorded (or being recorded) is not
        written twice. If the awaiting task is cancelled, its record is still written with its group.

        Raises:
            StorageError: the record's group could not be written (e.g. disk full): it was not kept.
        """
        digest = _digest(step, instance_id, key)
        if digest in self._index:
            return
        waiting = self._pending.get(digest)
        if waiting is None and prompt is not None:
            await self._prompt_first(*prompt)
            if digest in self._index:
                return
            waiting = self._pending.get(digest)
        if waiting is None:
            self._written.add(digest)
            line = dumps_line({"step": step, "instance_id": instance_id, "key": key, "data": data,
                               "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds")})
            waiting = self._enqueue(self._records_file(step), line, digest, siblings)
        await asyncio.shield(waiting)

    async def drain(self) -> None:
        """Wait until every record handed to :meth:`aput` is written and indexed (also when the
        putting tasks were cancelled): call before reading records after an abort.

        Then drops the lines that replaced records superseded (:meth:`compact`).

        Raises:
            StorageError: a records file could not be compacted (a group that failed to write is
                reported to its own ``aput`` callers).
        """
        self._hurry = True
        try:
            while self._flusher is not None and not self._flusher.done():
                if self._full is not None:
                    _wake(self._full)
                with contextlib.suppress(Exception):
                    await asyncio.shield(self._flusher)
        finally:
            self._hurry = False
        self.compact()

    def _complete(self) -> bool:
        """Whether the gathering group is written now: its last record's unit said no other is
        working, it has :data:`GROUP_MAX` records, or :meth:`drain` waits."""
        return self._hurry or self._siblings <= 0 or self._records >= GROUP_MAX

    async def _gather(self) -> None:
        """Commit delay: wait up to :data:`COMMIT_DELAY_S` while the group is not :meth:`_complete`."""
        if self._complete():
            return
        loop = asyncio.get_running_loop()
        self._full = loop.create_future()
        timer = loop.call_later(COMMIT_DELAY_S, _wake, self._full)
        try:
            await self._full
        finally:
            timer.cancel()
            self._full = None

    async def _flush(self) -> None:
        prompts = self.dir / PROMPTS_FILE
        while self._batch:
            await self._gather()
            batch, self._batch, self._gathering = self._batch, [], set()
            self._siblings = self._records = 0
            by_path: dict[Path, list[tuple[str, bytes | str, asyncio.Future[None]]]] = {prompts: []}
            for path, line, digest, done in batch:
                by_path.setdefault(path, []).append((line, digest, done))
            files = [(path, items) for path, items in by_path.items() if items]  # prompts first
            outcomes = await asyncio.to_thread(_append_files, [(p, [line for line, _, _ in items])
                                                               for p, items in files])
            for (path, items), outcome in zip(files, outcomes, strict=True):
                if not isinstance(outcome, int):
                    for _, digest, done in items:
                        self._pending.pop(digest, None)
                        done.set_exception(outcome)
                    continue
                lengths = [len(line.encode("utf-8")) for line, _, _ in items]
                offset = outcome - sum(lengths) - len(lengths)
                number = self._number(path)
                for (_, digest, done), length in zip(items, lengths, strict=True):
                    if isinstance(digest, str):  # a prompt (aput_prompt)
                        self._prompts.setdefault(digest, _pack(number, offset, length))
                    else:
                        self._index[digest] = _pack(number, offset, length)
                    offset += length + 1
                    self._pending.pop(digest, None)
                    done.set_result(None)
            if self._usage is not None:
                self._usage.maybe_save()

    def iter_records(self, step: str | None = None) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        """Records as ``(step, instance_id, key, data)`` in insertion order, read from disk one at
        a time (of ``step`` only when given): passes over large runs without building a list."""
        for where in list(self._index.values()):
            record = self._read(where)
            if step is None or record["step"] == step:
                yield record["step"], record["instance_id"], record["key"], record["data"]

    def records(self, step: str, *, reasks: bool = False) -> list[tuple[str, str, dict[str, Any]]]:
        """The records of a step as ``(instance_id, key, data)``, in insertion order: what a
        benchmark's results read. Consistency re-asks (keys ending in ``#reask``,
        ``--consistency-sample``) are extra calls that measure the judge, never results: they are
        left out unless ``reasks`` (the reliability block reads them through :meth:`all_records`)."""
        return [(i, k, d) for _, i, k, d in self.iter_records(step) if reasks or not original_key(k)[1]]

    def all_records(self) -> list[tuple[str, str, str, dict[str, Any]]]:
        """Every record as ``(step, instance_id, key, data)``, in insertion order."""
        return list(self.iter_records())

    # -- usage and results ---------------------------------------------------
    def track_usage(self, roles: Mapping[str, Any]) -> None:
        """Record the counters of these model clients (role -> client) in ``usage/``; results then
        report them summed over every process of the run (see :mod:`ideaharness.runs.usage`)."""
        self._usage = UsageLog(self.dir, roles)

    def write_results(self, results: dict[str, Any], *,
                      block_class: type[BenchmarkResults] | None = None) -> Path:
        """Validate ``results`` (:func:`ideaharness.results.validate_results`: the common blocks
        typed, the benchmark's block through ``block_class``, its ``results_class``) and write
        ``results.json`` atomically, in the layout of the dict; returns its path.

        Adds to ``results`` (in place): ``corrupt_record_lines``; with a provenance,
        ``settings.template_sha256`` (the templates' hashes, as in ``config.json``); when units
        were re-judged, ``rejudged`` (:meth:`rejudged_block`, its line also in ``notes``); and when
        usage is tracked,
        ``llm_stats`` (per role, summed over every process of the run), ``llm_stats_this_process``,
        ``llm_stats_processes``, ``cost_usd`` (USD over every role and process: every recorded
        token priced at the role's current price, :func:`~ideaharness.runs.usage.price_totals`;
        None when no client has a price) and ``cost`` (which tokens were billed at which price,
        :func:`~ideaharness.runs.usage.cost_block`). As a last guard, every secret value known to
        the process (:func:`ideaharness.redaction.known_secrets`) is removed from the file (not
        from ``results``).

        Raises:
            InvalidResults: a block does not fit its model (one line naming the field); nothing
                is written.
            StorageError: the file cannot be written (the previous one stays intact).
        """
        results["corrupt_record_lines"] = self.corrupt_lines
        if self.provenance is not None and isinstance(results.get("settings"), dict):
            results["settings"]["template_sha256"] = dict(self.provenance.templates)
        rejudged = self.rejudged_block()
        if rejudged is not None:  # --rejudge-changed: how many units, of which steps
            results["rejudged"] = rejudged
            if isinstance(results.get("notes"), list) and rejudged["line"] not in results["notes"]:
                results["notes"].append(rejudged["line"])
        if self._usage is not None:
            results["llm_stats_this_process"] = self._usage.save()
            results["llm_stats"], results["llm_stats_processes"] = self._usage.totals()
            results["cost_usd"] = price_totals(results["llm_stats"], self._usage.prices())
            results["cost"] = cost_block(results["llm_stats"], self._usage.prices(), self._usage.sharing())
        validate_results(json.loads(json.dumps(results, default=str)), block_class)
        text = json.dumps(redact_values(results), indent=2, default=str)
        return atomic_write_text(self.dir / RESULTS_FILE, text)

    def close(self) -> None:
        """Save this process's usage and release the directory; safe to call twice."""
        try:
            if self._usage is not None:
                self._usage.save()
            self.compact()
        except StorageError:
            pass  # the counters (or the compaction: redone at the next open) are lost, not the run
        finally:
            for fd in self._readers.values():
                os.close(fd)
            self._readers.clear()
            self._lock.release()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_FIELD = 1 << 48


def _pack(number: int, offset: int, length: int) -> int:
    """One int for (file number, byte offset, byte length): an int is ~half a tuple of three."""
    return (number * _FIELD + offset) * _FIELD + length


def _unpack(packed: int) -> tuple[int, int, int]:
    rest, length = divmod(packed, _FIELD)
    number, offset = divmod(rest, _FIELD)
    return number, offset, length


def _digest(step: str, instance_id: str, key: str) -> bytes:
    """16-byte identity of a unit of work (the index keeps this, not three strings; it lives in
    memory only, rebuilt from the records when a store opens)."""
    try:
        blob = orjson.dumps([step, instance_id, key])
    except TypeError:  # a lone surrogate (or not a string): json's ASCII escapes, which have
        blob = json.dumps([step, instance_id, key], ensure_ascii=True).encode()  # ", " between items
    return hashlib.blake2b(blob, digest_size=16).digest()


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def _append_files(files: list[tuple[Path, list[str]]]) -> list[int | StorageError]:
    """Append each file's lines (one write and one fsync per file, :func:`append_lines`), in order;
    per file, its size after the write, or the error (then the later files are not written)."""
    out: list[int | StorageError] = []
    failed: StorageError | None = None
    for path, lines in files:
        if failed is not None:
            out.append(failed)
            continue
        try:
            append_lines(path, lines)
            out.append(path.stat().st_size)
        except (StorageError, OSError) as exc:
            failed = exc if isinstance(exc, StorageError) else storage_error(path, exc)
            out.append(failed)
    return out


_LINE_ENDS_UTF8 = (b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xc2\x85")  # U+2028, U+2029, U+0085


def _prompt_line(prompt_hash: str, messages: Sequence[Mapping[str, Any]]) -> str:
    """The ``prompts.jsonl`` line of a prompt: :func:`~ideaharness.jsonl.dumps_line`'s JSON (read back
    the same), written by orjson when every value is a string without a lone surrogate or a
    character readers take for a line end."""
    kept = redact_values([{str(k): v for k, v in m.items()} for m in messages])
    entry = {"prompt_hash": prompt_hash, "messages": kept}
    if type(prompt_hash) is str and all(type(v) is str for m in kept for v in m.values()):
        try:
            line = orjson.dumps(entry)
        except TypeError:  # a lone surrogate: dumps_line escapes it
            pass
        else:
            if line.isascii() or not any(end in line for end in _LINE_ENDS_UTF8):
                return line.decode("utf-8")
    return dumps_line(entry)


def _prompt_entry(line: bytes) -> tuple[str, list[dict[str, Any]]] | None:
    """``(prompt_hash, messages)`` of a ``prompts.jsonl`` line, or None when it is unreadable."""
    try:
        entry = json.loads(line.decode("utf-8"))
        prompt_hash, messages = entry["prompt_hash"], entry["messages"]
    except (UnicodeDecodeError, ValueError, TypeError, KeyError):
        return None
    if not isinstance(prompt_hash, str) or not isinstance(messages, list):
        return None
    if not all(isinstance(m, dict) for m in messages):
        return None
    return prompt_hash, messages


def read_prompts(run_dir: str | Path, hashes: Iterable[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    """The rendered prompts a run kept (``<run>/prompts.jsonl``), read without taking the run's
    lock (a run in progress can be read).

    Args:
        run_dir: the run directory.
        hashes: keep only these prompt hashes (all when None).

    Returns:
        prompt hash -> messages (``[{"role", "content"}, ...]``, as sent); ``{}`` when the run kept
        none. Unreadable lines (a torn tail) are skipped; a hash kept twice (shards merged by
        concatenation) reads as its first line.
    """
    path = Path(run_dir) / PROMPTS_FILE
    wanted = None if hashes is None else set(hashes)
    out: dict[str, list[dict[str, Any]]] = {}
    try:
        with path.open("rb") as fh:
            for _, line in _record_lines(fh):
                entry = _prompt_entry(line)
                if entry is not None and (wanted is None or entry[0] in wanted):
                    out.setdefault(*entry)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise storage_error(path, exc) from exc
    return out


def prompt_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """Messages as one text: each as ``[role]`` on a line of its own, then its content; blank
    lines between messages (the export's ``prompt`` column)."""
    return "\n\n".join(f"[{m.get('role', '?')}]\n{m.get('content', '')}" for m in messages)


async def keep_prompt(store: Any, prompt_hash: str, messages: Sequence[Mapping[str, Any]]) -> None:
    """Keep a judgment's rendered messages in ``store`` when it keeps prompts (a :class:`RunStore`,
    a Ray worker's record buffer); a store without ``aput_prompt`` keeps none."""
    keep = getattr(store, "aput_prompt", None)
    if keep is not None:
        await keep(prompt_hash, messages)


def _is_record(line: bytes) -> bool:
    """Whether ``line`` is a readable record line (one :meth:`RunStore._index_file` indexes)."""
    try:
        record = json.loads(line.decode("utf-8"))
        _digest(record["step"], record["instance_id"], record["key"])
        record["data"]  # noqa: B018
    except (UnicodeDecodeError, ValueError, TypeError, KeyError):
        return False
    return True


def _record_lines(fh: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """The non-blank lines of a records file, each with its byte offset, without the newline."""
    offset = 0
    for raw in fh:
        start, offset = offset, offset + len(raw)
        line = raw.rstrip(b"\n")
        if line.strip(b" \t\r"):
            yield start, line


def _count_lines(path: Path) -> int:
    try:
        return sum(1 for line in path.read_bytes().split(b"\n") if line)
    except OSError:
        return 0


def _check_out_dir(path: Path) -> None:
    """Refuse an ``--out`` that is a file or a folder holding something other than a run."""
    if path.exists() and not path.is_dir():
        raise UserError(f"--out {path}: is a file; give a run directory (new, empty, or an earlier run)")
    if not path.is_dir() or (path / CONFIG_FILE).exists():
        return
    try:
        foreign = sorted(p.name for p in path.iterdir() if p.name not in _LEFTOVERS and not _is_tmp(p.name))
    except OSError as exc:
        raise UserError(f"--out {path}: cannot be read ({exc.strerror or exc})") from None
    if not foreign and any(p.stat().st_size for p in (path / RECORDS_DIR).glob("*.jsonl")):
        raise UserError(
            f"--out {path}: holds records but no {CONFIG_FILE} (a damaged run); restore {CONFIG_FILE} "
            "or use another --out"
        )
    if foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise UserError(
            f"--out {path}: exists and is not a run directory (it holds {shown} and no {CONFIG_FILE}); "
            "nothing was written: give a new or empty folder"
        )


def _is_tmp(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


def _read_config(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(
            f"{path}: not a readable run configuration ({exc}); restore it, or use another --out"
        ) from None
    if not isinstance(value, dict):
        raise UserError(f"{path}: not a run configuration (expected a JSON object); use another --out")
    return value


def _identity_problem(
    old: dict[str, Any], new: dict[str, Any], keys: tuple[str, ...] | None, hashes: InputHashes,
    defaults: Mapping[str, Any] | None = None,
) -> str | None:
    names = keys or tuple(sorted((set(old) | set(new)) - {INPUTS_KEY, PRODUCED_BY_KEY}))
    defaults = defaults or {}
    diff = [k for k in names if (old[k] if k in old else defaults.get(k)) != new.get(k)]
    if diff:
        return f"this run directory holds a run with different settings ({', '.join(diff)})"
    return changed_input(old.get(INPUTS_KEY) or {}, hashes)


def _produced_key(record: Mapping[str, Any]) -> ProducedKey | None:
    """The :data:`ProducedKey` of a record line (``{"step", ..., "data": {"produced_by"}}``), or
    None when it has no ``produced_by`` (not a judgment, or recorded before it)."""
    data = record.get("data")
    produced = data.get("produced_by") if isinstance(data, dict) else None
    if not isinstance(produced, dict):
        return None
    def text(key: str) -> str | None:
        value = produced.get(key)
        return value if isinstance(value, str) else None
    return (str(record.get("step")), text("template"), text("template_sha256"), text("parser"),
            text("parser_version"), produced.get("parser_by_name") is True)


def _safe(step: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in step)
