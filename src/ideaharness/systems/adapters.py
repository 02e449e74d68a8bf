"""The three system providers: ``ideas:FILE``, ``cmd:COMMAND`` and ``http(s)://URL``.

Each implements :class:`~ideaharness.llm.providers.Provider` (``complete(request)``, ``aclose()``)
and is registered in :mod:`ideaharness.llm.providers` under its spec prefix, so
``get_llm("cmd:python agent.py")`` builds it behind the usual façade (cache, concurrency limit,
retries, accounting). The request's one user message is the task JSON
(:func:`~ideaharness.systems.read_task`); the completion's text is the answer JSON, parsed by the
benchmark's contract in the step.

* :class:`IdeasFileProvider` (``ideas:PATH`` or ``ideas:PATH#format=F``): answers looked up in a file
  read once (:func:`ideaharness.systems.converters.read_idea_rows`); not cached (``cacheable =
  False``: the file is the cache); the answer's ``provenance`` is the row's, then what the
  contract's ``from_row`` put there, then ``source``, ``line`` and ``where`` (the idea's place: "line
  3", "item 2", "key 'x', idea 2"); an instance the file lacks raises
  :class:`~ideaharness.llm.errors.MissingAnswer` (that unit fails; the run goes on).
* :class:`CommandProvider` (``cmd:COMMAND ARGS``, shlex-split, no shell): one process per task,
  the task JSON on stdin, the answer JSON on stdout, ``IDEAHARNESS_TASK_ID`` in its environment; a
  non-zero exit, an empty stdout or running past ``--timeout`` is a retryable attempt failure (the
  façade retries ``--max-retries`` times); the process group is killed on timeout and on
  cancellation (Ctrl-C), so no agent outlives the run. Its stderr (last 4,000 characters, secrets
  redacted) is kept with the reply (``Completion.stderr``, then the record's ``judgment.stderr``).
* :class:`HTTPSystemProvider` (``http://...``, ``https://...``, httpx): the task JSON POSTed, a 2xx
  body is the answer; 408/429/5xx, timeouts and connection errors are retryable, any other status
  is not (the error names the status and the body's first 200 characters, redacted).

No provider stores a key: every error and stderr text goes through :func:`ideaharness.redaction.redact`,
and a spec holding a secret is refused (it would be recorded with the run).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shlex
import shutil
import signal
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ideaharness.errors import UserError
from ideaharness.llm.errors import MissingAnswer, ProviderError
from ideaharness.llm.types import ChatRequest, Completion
from ideaharness.redaction import redact
from ideaharness.systems.checks import SCHEMA_KEYS
from ideaharness.systems.contract import get_contract
from ideaharness.systems.converters import INSTANCE_KEYS, VOCABULARY, read_idea_rows
from ideaharness.systems.spec import CMD_PREFIX, IDEAS_PREFIX, split_ideas_spec
from ideaharness.systems.task import GenerationTask, read_task

__all__ = ["STDERR_CHARS", "CommandProvider", "HTTPSystemProvider", "IdeasFileProvider", "MissingAnswer",
           "redact_spec", "refuse_secrets"]

STDERR_CHARS = 4000
"""How much of a command's stderr is kept with its reply (the end of it)."""

BODY_CHARS = 200
"""How much of an HTTP error body an error message shows."""


def _task_of(request: ChatRequest, label: str) -> tuple[dict[str, Any], GenerationTask]:
    try:
        data = read_task(request.messages)
        return data, GenerationTask.from_json(data)
    except ValueError as exc:
        raise ProviderError(f"{label}: {exc}", retryable=False) from None


def redact_spec(spec: str) -> str:
    """``spec`` safe to record: secrets redacted (:func:`~ideaharness.redaction.redact`), and for a
    URL the user/password part and the query string's values removed."""
    if spec.startswith(("http://", "https://")):
        parts = urlsplit(spec)
        netloc = parts.hostname or ""
        if parts.port:
            netloc += f":{parts.port}"
        query = "&".join(f"{kv.partition('=')[0]}=…" for kv in parts.query.split("&") if kv)
        spec = urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    return redact(spec)


def refuse_secrets(spec: str) -> None:
    """Refuse a system spec that holds a secret: the spec is recorded (config.json, records, results).

    Raises:
        UserError: a key-like token or a known secret value (:func:`~ideaharness.redaction.redact`
            changes the spec), or a URL with a password.
    """
    has_password = spec.startswith(("http://", "https://")) and urlsplit(spec).password is not None
    if has_password or redact(spec) != spec:
        raise UserError(f"{redact_spec(spec)}: the system spec holds a secret, and the spec is recorded "
                        "with the run; give the secret to the system in its environment instead")


# --------------------------------------------------------------------------------------- ideas file


class IdeasFileProvider:
    """Answers from a file of ideas (module docstring). Read once when built.

    Args:
        spec: ``"ideas:PATH"`` or ``"ideas:PATH#format=F"`` (formats: :mod:`ideaharness.systems.converters`).

    Raises:
        UserError: a malformed spec; :class:`~ideaharness.errors.DataError` (a UserError) from the
            converter for an unreadable file, bad JSON or a row without instance id (names file,
            line/item and field).
    """

    cacheable = False

    def __init__(self, spec: str) -> None:
        try:
            path, fmt = split_ideas_spec(spec if spec.startswith(IDEAS_PREFIX) else IDEAS_PREFIX + spec)
        except ValueError as exc:
            raise UserError(str(exc)) from None
        self.path = Path(path)
        self.format = fmt
        self.label = f"ideas:{path}"
        self.base_url: str | None = None
        rows = read_idea_rows(self.path, fmt)
        self.rows: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            self.rows.setdefault(str(row["instance_id"]), []).append(row)
        self._asked: set[str] = set()
        self._missing: set[str] = set()

    def asked(self) -> set[str]:
        """Instance ids this provider was asked for (in this process)."""
        return set(self._asked)

    def missing(self) -> set[str]:
        """Instance ids asked for that the file has no answer for."""
        return set(self._missing)

    def instance_ids(self) -> list[str]:
        """Every instance id in the file, in file order."""
        return list(self.rows)

    def rows_unused(self, asked: set[str] | None = None) -> list[str]:
        """Instance ids in the file never asked for (extras), in file order; ``asked`` defaults to
        :meth:`asked` (the runner passes every instance its benchmark asked, resumed ones included)."""
        seen = self._asked if asked is None else asked
        return [iid for iid in self.rows if iid not in seen]

    def _pick(self, task: GenerationTask, group: str) -> list[dict[str, Any]]:
        rows = self.rows.get(task.instance_id, [])
        if group == "all" or not rows:
            return rows
        if any(row.get("sample_index") is not None for row in rows):
            chosen = [row for row in rows if _int_or_none(row.get("sample_index")) == task.sample_index]
            return chosen[:1]
        return rows[task.sample_index:task.sample_index + 1]

    async def complete(self, request: ChatRequest) -> Completion:
        """The answer JSON of the task in ``request``.

        Raises:
            MissingAnswer: the file has no row for the task's instance (and sample).
            ProviderError: (not retryable) the request holds no task, or the contract's
                ``from_row``/``from_rows`` failed on the row (names file and line).
            UserError: no contract for the task's benchmark.
        """
        _data, task = _task_of(request, self.label)
        contract = get_contract(task.benchmark)
        self._asked.add(task.instance_id)
        rows = self._pick(task, contract.group)
        if not rows:
            self._missing.add(task.instance_id)
            sample = f" (sample {task.sample_index})" if contract.group == "one" else ""
            raise MissingAnswer(f"no answer for instance {task.instance_id}{sample} in {self.path}",
                                instance_id=task.instance_id)
        first = rows[0]
        place = _place(rows if contract.group == "all" else [first])
        where = f"{first.get('_source') or self.path} {place}"
        try:
            if contract.group == "all":
                assert contract.from_rows is not None
                fields = contract.from_rows(rows, task)
            else:
                fields = contract.from_row(first, task)
        except Exception as exc:  # a row the contract cannot map: this unit's failure, named
            raise ProviderError(redact(f"{where}: {exc}"), retryable=False) from None
        provenance: dict[str, Any] = {"source": str(first.get("_source") or self.path),
                                      "line": first.get("_line"), "where": place}
        if contract.group == "all" and len(rows) > 1:
            provenance["lines"] = [row.get("_line") for row in rows]
        own = first.get("provenance")
        mapped = fields.get("provenance")
        provenance = {**(own if isinstance(own, dict) else {}),
                      **(mapped if isinstance(mapped, dict) else {}), **provenance}
        answer = {**fields, "instance_id": task.instance_id, "provenance": provenance}
        for row in rows:  # a contract row's misspelt field is refused, as in a cmd:/http answer
            if not isinstance(row.get("provenance"), dict) or "format" not in row["provenance"]:
                answer.update({k: v for k, v in row.items() if _unknown_row_key(k, contract)})
        text = json.dumps(answer, ensure_ascii=False, sort_keys=True)
        return Completion(text=text, model=self.label, finish_reason="stop")

    async def aclose(self) -> None:
        return None


def _place(rows: list[dict[str, Any]]) -> str:
    """Where an answer's rows are in their file: ``"line 3"``, or every row's place when one answer
    is made of several rows (``"lines 1, 4"``: an instance given twice is named at both lines)."""
    more = f" and {len(rows) - 4} more rows" if len(rows) > 5 else ""
    places = [str(row.get("_where") or f"line {row.get('_line', '?')}")
              for row in (rows[:4] if more else rows)]
    if len(places) > 1 and all(p.startswith("line ") for p in places):
        return "lines " + ", ".join(p.removeprefix("line ") for p in places) + more
    return "; ".join(places) + more


ROW_SPELLINGS = frozenset({"model", "stage", "scenario", "idea", "proposal", "ideas"})
"""Fields of contract rows that the benchmarks' ``from_row`` read besides the common vocabulary and
their answer fields (MLR-Bench's ``idea``/``proposal``/``model``/``stage``, IdeaBench's ``ideas``
and ``scenario``, LiveIdeaBench's ``idea``)."""


def _unknown_row_key(key: str, contract: Any) -> bool:
    """Whether a contract row's ``key`` is no field the file adapter knows (the common vocabulary,
    an instance-id spelling, the contract's answer fields, :data:`ROW_SPELLINGS`, a contract id
    field (:data:`~ideaharness.systems.checks.SCHEMA_KEYS`, checked before the run)): it is then
    passed on, and the contract refuses it as an unknown field."""
    return not (key.startswith("_") or key in VOCABULARY or key in INSTANCE_KEYS or key in ROW_SPELLINGS
                or key in SCHEMA_KEYS or key in contract.answer.model_fields)


def _int_or_none(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


# ------------------------------------------------------------------------------------------ command


class CommandProvider:
    """A program run once per task (module docstring).

    Args:
        spec: ``"cmd:COMMAND ARGS"`` (shlex-split; no shell).
        timeout_s: per-task limit (``--timeout``), seconds.

    Raises:
        UserError: an empty or unsplittable command, a program that is not found, or a secret in
            the command (:func:`refuse_secrets`).
    """

    cacheable = True

    def __init__(self, spec: str, *, timeout_s: float = 300.0) -> None:
        refuse_secrets(spec)
        body = spec.removeprefix(CMD_PREFIX).strip()
        try:
            self.argv = shlex.split(body)
        except ValueError as exc:
            raise UserError(f"{spec}: the command cannot be split ({exc})") from None
        if not self.argv:
            raise UserError(f"{spec}: no command after 'cmd:'")
        program = self.argv[0]
        if shutil.which(program) is None and not Path(program).is_file():
            raise UserError(f"{redact(spec)}: program {program!r} not found")
        self.label = f"cmd:{body}"
        self.timeout_s = timeout_s
        self.base_url = self._fingerprint()
        self._running: set[asyncio.subprocess.Process] = set()

    def _fingerprint(self) -> str | None:
        """``cmd:sha256=<digest>`` of the script files named in the command (the first argument
        ending .py/.sh, or the program when it is a file): part of the cache key, so an edited
        agent is never answered from the cache of the old one."""
        files = [a for a in self.argv[1:] if a.endswith((".py", ".sh"))][:1] or [self.argv[0]]
        digest = hashlib.sha256()
        found = False
        for name in files:
            path = Path(name)
            if path.is_file() and path.suffix in (".py", ".sh", ""):
                with contextlib.suppress(OSError):
                    digest.update(path.read_bytes())
                    found = True
        return f"cmd:sha256={digest.hexdigest()}" if found else None

    async def complete(self, request: ChatRequest) -> Completion:
        """Run the command on the task in ``request``.

        Raises:
            ProviderError: retryable: the process exited non-zero, wrote nothing on stdout, ran
                past the timeout (its process group is killed) or could not start; not retryable:
                the request holds no task.
        """
        _data, task = _task_of(request, self.label)
        stdin = request.messages[0]["content"].encode("utf-8")
        env = {**os.environ, "IDEAHARNESS_TASK_ID": task.task_id}
        started = time.perf_counter()
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, env=env, start_new_session=True)
        except OSError as exc:
            raise ProviderError(redact(f"{self.label}: cannot start ({exc.strerror or exc})"),
                                retryable=True) from None
        self._running.add(proc)
        try:
            try:
                out, err = await asyncio.wait_for(proc.communicate(stdin), timeout=self.timeout_s)
            except TimeoutError:
                await _kill_group(proc)
                raise ProviderError(f"{self.label}: task {task.task_id} ran past the timeout of "
                                    f"{self.timeout_s:g} s (--timeout); its processes were killed",
                                    retryable=True) from None
            except BaseException:  # cancelled (Ctrl-C, another unit's error): no orphan agent
                await asyncio.shield(_kill_group(proc))
                raise
        finally:
            self._running.discard(proc)
        stderr = _tail(err)
        if proc.returncode != 0:
            detail = f"; stderr: {stderr[-300:]}" if stderr else ""
            raise ProviderError(redact(f"{self.label}: exited with status {proc.returncode} on task "
                                       f"{task.task_id}{detail}"), retryable=True)
        text = out.decode("utf-8", errors="replace").strip()
        if not text:
            raise ProviderError(f"{self.label}: wrote no answer on stdout for task {task.task_id}",
                                retryable=True)
        return Completion(text=text, model=self.label, latency_s=time.perf_counter() - started,
                          finish_reason="stop", stderr=stderr or None)

    async def aclose(self) -> None:
        """Kill any process still running."""
        for proc in list(self._running):
            await _kill_group(proc)
        self._running.clear()


def _tail(data: bytes | None) -> str:
    text = (data or b"").decode("utf-8", errors="replace")
    return redact(text[-STDERR_CHARS:]).strip()


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group of ``proc`` (its own session) and reap it."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    else:  # the leader is gone; children of its group may not be
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(proc.wait(), timeout=5)


# --------------------------------------------------------------------------------------------- http


class HTTPSystemProvider:
    """A service answering POSTed tasks (module docstring), on httpx.

    Args:
        url: ``http://HOST:PORT/PATH`` or ``https://...``.
        timeout_s: per-attempt timeout (``--timeout``), seconds.

    Raises:
        UserError: a URL without a host, or with a secret (:func:`refuse_secrets`).
    """

    cacheable = True

    def __init__(self, url: str, *, timeout_s: float = 300.0) -> None:
        refuse_secrets(url)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise UserError(f"{redact_spec(url)}: a system URL is http(s)://HOST[:PORT]/PATH")
        self.url = url
        self.label = redact_spec(url)
        self.base_url: str | None = None
        self.timeout_s = timeout_s
        self._http: Any = None

    def _client(self) -> Any:
        import httpx

        if self._http is None:
            self._http = httpx.AsyncClient(timeout=self.timeout_s)
        return self._http

    async def complete(self, request: ChatRequest) -> Completion:
        """POST the task in ``request``; the 2xx body is the answer.

        Raises:
            ProviderError: retryable on 408/429/5xx, timeouts and connection errors (with the
                server's Retry-After); not retryable on other statuses or a request without a task.
        """
        import httpx

        from ideaharness.net.retry import is_retryable_status, parse_retry_after

        _data, task = _task_of(request, self.label)
        started = time.perf_counter()
        try:
            reply = await self._client().post(
                self.url, content=request.messages[0]["content"].encode("utf-8"),
                headers={"content-type": "application/json", "x-ideaharness-task-id": task.task_id})
        except httpx.TimeoutException:
            raise ProviderError(f"{self.label}: no answer to task {task.task_id} within {self.timeout_s:g} s",
                                retryable=True) from None
        except httpx.HTTPError as exc:
            raise ProviderError(redact(f"{self.label}: {type(exc).__name__}: {exc}"),
                                retryable=True) from None
        if not 200 <= reply.status_code < 300:
            body = " ".join(reply.text.split())[:BODY_CHARS]
            raise ProviderError(redact(f"{self.label}: HTTP {reply.status_code} on task {task.task_id}: "
                                       f"{body}"),
                                status=reply.status_code, retryable=is_retryable_status(reply.status_code),
                                retry_after_s=parse_retry_after(dict(reply.headers)))
        text = reply.text.strip()
        if not text:
            raise ProviderError(f"{self.label}: empty answer to task {task.task_id}", retryable=True)
        return Completion(text=text, model=self.label, latency_s=time.perf_counter() - started,
                          finish_reason="stop")

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
