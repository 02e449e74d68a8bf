"""The child process that runs one embedded model: ``python -m ideaharness.llm.local_worker``.

llama.cpp is native code: a segmentation fault, an illegal instruction or the kernel's
out-of-memory killer ends the process it runs in. Running it here, one process per loaded model,
turns such a death into one failed request of the parent (:mod:`ideaharness.llm.local`) instead
of the end of the run.

Protocol: one JSON object per line. Requests arrive on stdin; replies leave on the process's
original stdout, which is reserved for them (the C library's own output is sent to stderr).

* ``{"op": "load", "path", "n_ctx", "n_threads"}`` → ``{"ok": true, "system_info": str}``
* ``{"op": "count", "messages"}`` → ``{"ok": true, "tokens": int}`` (after the chat template)
* ``{"op": "complete", "messages", "temperature", "top_p", "max_tokens", "seed", "json_schema"}``
  → ``{"ok": true, "text", "finish_reason", "prompt_tokens", "completion_tokens", "latency_s"}``;
  ``max_tokens`` null caps the reply at what the context has left (``n_ctx`` - prompt tokens).

A failure that leaves the process alive answers ``{"ok": false, "kind": "context" | "error",
"message": str, ...}``. The worker exits when stdin closes or when its parent is gone (it is
re-parented), so a parent killed with SIGKILL leaves no model process behind.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from typing import IO, Any

PARENT_POLL_S = 0.5


class _Model:
    def __init__(self, path: str, n_ctx: int, n_threads: int) -> None:
        from llama_cpp import Llama
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter

        self.n_ctx = n_ctx
        self.llama = Llama(model_path=path, n_ctx=n_ctx, n_threads=n_threads,
                           n_threads_batch=n_threads, verbose=False)
        self.formatter = None
        template = self.llama.metadata.get("tokenizer.chat_template")
        if template:
            model = self.llama._model  # the access llama-cpp-python uses to build its own formatter
            eos_id, bos_id = self.llama.token_eos(), self.llama.token_bos()
            self.formatter = Jinja2ChatFormatter(
                template=template,
                eos_token=model.token_get_text(eos_id) if eos_id != -1 else "",
                bos_token=model.token_get_text(bos_id) if bos_id != -1 else "",
            )

    def count(self, messages: list[dict[str, str]]) -> int:
        if self.formatter is None:  # no template in the GGUF: content plus a margin per message
            text = "\n".join(m["content"] for m in messages)
            return len(self.llama.tokenize(text.encode("utf-8"), add_bos=True, special=False)) + 8 * len(
                messages
            )
        prompt = self.formatter(messages=messages).prompt  # type: ignore[arg-type]
        return len(self.llama.tokenize(prompt.encode("utf-8"), add_bos=False, special=True))

    def complete(self, msg: dict[str, Any]) -> dict[str, Any]:
        n_prompt = self.count(msg["messages"])
        max_tokens = msg["max_tokens"] if msg.get("max_tokens") is not None else self.n_ctx - n_prompt
        if max_tokens < 1 or n_prompt + max_tokens > self.n_ctx:
            return {"ok": False, "kind": "context", "prompt_tokens": n_prompt,
                    "message": f"prompt of {n_prompt} tokens + max_tokens {max_tokens} exceeds "
                               f"the context of {self.n_ctx} tokens; shorten the inputs (or raise n_ctx)"}
        kwargs: dict[str, Any] = {"messages": msg["messages"], "temperature": msg["temperature"],
                                  "max_tokens": max_tokens}
        if msg.get("top_p") is not None:
            kwargs["top_p"] = msg["top_p"]
        if msg.get("seed") is not None:
            kwargs["seed"] = msg["seed"]
        if msg.get("json_schema") is not None:
            kwargs["response_format"] = {"type": "json_object", "schema": msg["json_schema"]}
        start = time.monotonic()
        try:
            reply = self.llama.create_chat_completion(**kwargs)
        except ValueError as exc:
            kind = "context" if "context window" in str(exc) else "error"
            return {"ok": False, "kind": kind, "prompt_tokens": n_prompt, "message": str(exc)}
        choice = reply["choices"][0]  # type: ignore[index]
        text = choice["message"].get("content") or ""
        return {
            "ok": True,
            "text": text,
            "finish_reason": choice.get("finish_reason"),
            "prompt_tokens": n_prompt,
            "completion_tokens": len(self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)),
            "latency_s": time.monotonic() - start,
        }


def _watch_parent(parent: int) -> None:
    """Exit at once when the parent is gone (re-parented), even in the middle of a generation."""
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(0)


def _handle(model: _Model | None, msg: dict[str, Any]) -> tuple[_Model | None, dict[str, Any]]:
    op = msg.get("op")
    if op == "load":
        import llama_cpp

        model = _Model(msg["path"], int(msg["n_ctx"]), int(msg["n_threads"]))
        info = llama_cpp.llama_print_system_info()
        return model, {"ok": True, "system_info": info.decode() if isinstance(info, bytes) else str(info)}
    if model is None:
        return model, {"ok": False, "kind": "error", "message": f"{op!r} before 'load'"}
    if op == "count":
        return model, {"ok": True, "tokens": model.count(msg["messages"])}
    if op == "complete":
        return model, model.complete(msg)
    return model, {"ok": False, "kind": "error", "message": f"unknown op {op!r}"}


def serve(requests: IO[bytes], replies: IO[str]) -> None:
    """Answer requests line by line until ``requests`` closes."""
    model: _Model | None = None
    for line in requests:
        try:
            model, reply = _handle(model, json.loads(line))
        except Exception as exc:  # reported to the parent; the process itself is fine
            reply = {"ok": False, "kind": "error", "message": f"{type(exc).__name__}: {exc}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main() -> None:
    # Ctrl-C belongs to the parent, which stops this process itself
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # whatever the C library prints goes to stderr, never into the protocol
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    main()
