"""A small OpenAI-compatible HTTP server (stdlib only) with scripted replies, for tests and benchmarks.

It serves ``POST /v1/chat/completions`` on 127.0.0.1 in a background thread, records every request
(path, headers, JSON body), and answers from a script of :class:`Reply` objects (status, headers,
body) before falling back to a responder function. ``latency_s`` delays every answer, to measure
orchestration overhead (benchmarks/orchestration.py). ``faults`` (:class:`Faults`) makes it a
fault-injecting endpoint: a seeded share of requests get a 429, a 500, a hang, a garbled reply text
or a body that is not JSON (benchmarks/soak.py, tests of the LLM layer). It also emulates the
OpenAI Files and Batch APIs (``/v1/files``, ``/v1/batches``; see :class:`BatchPlan`), answering each
batch line with the same responder. Not for production use.
"""

from __future__ import annotations

import email.parser
import email.policy
import hashlib
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ideaharness.testing._http import Answered, RecordedRequest, Reply, ThreadedServer, echo_responder

Responder = Callable[[dict[str, Any]], str]

__all__ = ["BatchPlan", "Faults", "OpenAICompatServer", "RecordedRequest", "Reply", "chat_completion",
           "echo_responder", "garble"]

FAULT_KINDS: tuple[str, ...] = ("429", "500", "hang", "garbled", "broken_body")


@dataclass
class Faults:
    """Seeded fault injection: a share ``rate`` of requests fail, each with one of ``kinds``.

    Whether (and how) a request fails depends only on ``seed``, the request body and how many
    times that same body was seen before, so a run's faults do not depend on the order in which
    concurrent requests arrive, and a retry of a failed request is a new draw.

    Kinds: ``"429"`` (with ``Retry-After: retry_after_s``), ``"500"``, ``"hang"`` (the answer comes
    after ``hang_s`` seconds, past a client's timeout), ``"garbled"`` (HTTP 200 whose reply text
    is the right text with its words shuffled and cut to half), ``"broken_body"`` (HTTP 200 whose
    body is a chat completion cut in half: not JSON).
    """

    rate: float = 0.3
    kinds: tuple[str, ...] = FAULT_KINDS
    seed: int = 0
    hang_s: float = 3.0
    retry_after_s: float = 0.05

    def draw(self, body: dict[str, Any], occurrence: int) -> str | None:
        """The fault kind for the ``occurrence``-th request with this body, or None (no fault)."""
        blob = json.dumps(body, sort_keys=True, ensure_ascii=False)
        digest = hashlib.sha256(f"{self.seed}|{occurrence}|{blob}".encode()).digest()
        u = int.from_bytes(digest[:8], "big") / 2**64
        if u >= self.rate:
            return None
        return self.kinds[int.from_bytes(digest[8:12], "big") % len(self.kinds)]


BATCH_ENDPOINT = "/v1/chat/completions"


@dataclass
class BatchPlan:
    """How the emulated Batch API treats one batch (the n-th created batch uses the n-th plan).

    A batch goes ``validating`` → ``in_progress`` → ``completed`` (or ``failed`` when its input
    file is not valid Batch JSONL, or ``expired`` when ``expire_after`` is set), one state per
    ``polls_per_state`` retrievals. Lines listed in ``failed_lines`` (0-based) are answered HTTP
    500 in the error file; with ``expire_after = k`` only the first k lines are answered and the
    rest go to the error file as ``batch_expired``.
    """

    expire_after: int | None = None
    failed_lines: frozenset[int] = frozenset()
    polls_per_state: int = 1


def garble(text: str, seed: int = 0) -> str:
    """``text`` with its words shuffled (seeded) and only the first half kept."""
    words = text.split()
    random.Random(f"{seed}|{text}").shuffle(words)
    return " ".join(words[: max(1, len(words) // 2)])


def chat_completion(body: dict[str, Any], text: str, number: int) -> dict[str, Any]:
    """The chat completion answering request ``body`` with ``text``: id ``chatcmpl-<number>``, the
    request's ``model``, one choice (``finish_reason`` ``stop``), usage counted in words (the
    prompt's: every message's ``content``)."""
    messages = body.get("messages")
    prompt_words = sum(len(str(m.get("content", "")).split())
                       for m in (messages if isinstance(messages, list) else []) if isinstance(m, dict))
    words = len(text.split())
    return {
        "id": f"chatcmpl-{number}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "fake"),
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt_words, "completion_tokens": words,
                  "total_tokens": prompt_words + words},
    }


class OpenAICompatServer(ThreadedServer):
    """Scripted ``/v1/chat/completions`` server on 127.0.0.1 (port chosen by the OS).

    Args:
        responder: body -> reply text, used when the script is exhausted.
        script: replies given in order to the first requests.
        latency_s: seconds every answer waits before it is sent.
        reject_response_format: answer HTTP 400 to any request carrying ``response_format``.
        faults: inject faults into the answers of the responder (not into scripted replies);
            ``fault_counts`` counts the faults served by kind.
        batch_plans: how the Batch API treats the 1st, 2nd, ... batch (default: all lines answered).

    ``requests`` records chat-completion requests only; ``files`` (id -> bytes) and ``batches``
    (id -> batch object, in creation order) hold what the Files and Batch APIs received.
    """

    def __init__(
        self,
        responder: Responder = echo_responder,
        *,
        script: list[Reply] | None = None,
        latency_s: float = 0.0,
        reject_response_format: bool = False,
        faults: Faults | None = None,
        batch_plans: list[BatchPlan] | None = None,
    ) -> None:
        self.responder = responder
        self.script = list(script or [])
        self.latency_s = latency_s
        self.reject_response_format = reject_response_format
        self.faults = faults
        self.fault_counts: Counter[str] = Counter()
        self._seen: Counter[str] = Counter()
        self.requests: list[RecordedRequest] = []
        self.batch_plans = list(batch_plans or [])
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self._batch_polls: Counter[str] = Counter()
        self._lock = threading.Lock()
        super().__init__()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answered:
        """Answer one HTTP request: the Files/Batch APIs and ``GET /v1/models``, else a chat
        completion (a POST; a body that is not JSON reaches the responder as ``{"_raw": text}``)."""
        api = self._api(method, path, headers, raw)
        if api is not None:
            return api[0], {}, api[1]
        if method != "POST":
            return 404, {}, {"error": {"message": f"no route {method} {path}", "type": "not_found"}}
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = {"_raw": raw.decode("utf-8", "replace")}
        return self._answer(path, headers, body)

    def _draw_fault(self, body: dict[str, Any]) -> str | None:
        if self.faults is None:
            return None
        blob = json.dumps(body, sort_keys=True, ensure_ascii=False)
        with self._lock:
            occurrence = self._seen[blob]
            self._seen[blob] += 1
        kind = self.faults.draw(body, occurrence)
        if kind is not None:
            with self._lock:
                self.fault_counts[kind] += 1
        return kind

    def _answer(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Answered:
        with self._lock:
            self.requests.append(RecordedRequest(path, headers, body))
            scripted = self.script.pop(0) if self.script else None
        if self.latency_s:
            time.sleep(self.latency_s)
        if path.rstrip("/") != "/v1/chat/completions":
            return 404, {}, {"error": {"message": f"no route {path}", "type": "not_found"}}
        if scripted is not None and (scripted.status != 200 or scripted.body is not None):
            return scripted.status, scripted.headers, scripted.body
        if self.reject_response_format and "response_format" in body:
            return 400, {}, {"error": {"message": "response_format is not supported",
                                       "type": "invalid_request_error"}}
        fault = self._draw_fault(body)
        if fault == "429":
            assert self.faults is not None
            return 429, {"Retry-After": f"{self.faults.retry_after_s:g}"}, {
                "error": {"message": "rate limited (injected fault)", "type": "rate_limit"}}
        if fault == "500":
            return 500, {}, {"error": {"message": "internal error (injected fault)", "type": "server_error"}}
        if fault == "hang":
            assert self.faults is not None
            time.sleep(self.faults.hang_s)
        text = self.responder(body)
        if fault == "garbled":
            text = garble(text, self.faults.seed if self.faults else 0)
        completion = self._completion(body, text)
        if fault == "broken_body":
            blob = json.dumps(completion)
            return 200, {}, blob[: len(blob) // 2]
        return 200, {}, completion

    # -- Files and Batch APIs ---------------------------------------------------
    def _api(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> tuple[int, Any] | None:
        """Answer a Files/Batches API request or ``GET /v1/models``, or None when ``path`` is not one
        of theirs."""
        parts = path.split("?")[0].rstrip("/").split("/")[2:]  # after "/v1"
        if parts == ["models"] and method == "GET":  # what `ideaharness doctor --base-url` asks
            return 200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]}
        if not parts or parts[0] not in ("files", "batches"):
            return None
        with self._lock:
            if parts == ["files"] and method == "POST":
                return self._upload(headers, raw)
            if parts[0] == "files" and len(parts) == 3 and parts[2] == "content" and parts[1] in self.files:
                return 200, self.files[parts[1]]
            if parts == ["batches"] and method == "POST":
                return self._create_batch(json.loads(raw or b"{}"))
            if parts[0] == "batches" and len(parts) == 2 and parts[1] in self.batches and method == "GET":
                return 200, self._advance(parts[1])
        return 404, {"error": {"message": f"no route {method} {path}", "type": "not_found"}}

    def _upload(self, headers: dict[str, str], raw: bytes) -> tuple[int, Any]:
        ctype = next((v for k, v in headers.items() if k.lower() == "content-type"), "")
        message = email.parser.BytesParser(policy=email.policy.default).parsebytes(
            f"Content-Type: {ctype}\r\n\r\n".encode() + raw
        )
        fields = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        if "file" not in fields:
            return 400, _invalid("multipart field 'file' missing")
        payload = fields["file"].get_payload(decode=True)
        content = payload if isinstance(payload, bytes) else b""
        purpose = fields["purpose"].get_content().strip() if "purpose" in fields else ""
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = content
        return 200, _file_object(file_id, content, fields["file"].get_filename() or "upload", purpose)

    def _create_batch(self, body: dict[str, Any]) -> tuple[int, Any]:
        input_id = body.get("input_file_id")
        if input_id not in self.files or body.get("endpoint") != BATCH_ENDPOINT:
            return 400, _invalid("unknown input_file_id or endpoint")
        batch_id = f"batch_{len(self.batches) + 1}"
        self.batches[batch_id] = {
            "id": batch_id, "object": "batch", "endpoint": BATCH_ENDPOINT, "input_file_id": input_id,
            "completion_window": body.get("completion_window", "24h"), "status": "validating",
            "created_at": int(time.time()), "metadata": body.get("metadata"), "output_file_id": None,
            "error_file_id": None, "errors": None, "request_counts": _counts(0, 0, 0),
        }
        return 200, self.batches[batch_id]

    def _advance(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        index = list(self.batches).index(batch_id)
        plan = self.batch_plans[index] if index < len(self.batch_plans) else BatchPlan()
        self._batch_polls[batch_id] += 1
        if self._batch_polls[batch_id] % plan.polls_per_state:
            return batch
        if batch["status"] == "validating":
            lines, errors = _validate_batch(self.files[batch["input_file_id"]])
            if errors:
                batch.update(status="failed", errors={"object": "list", "data": errors})
            else:
                batch.update(status="in_progress", request_counts=_counts(len(lines), 0, 0))
        elif batch["status"] == "in_progress":
            lines, _ = _validate_batch(self.files[batch["input_file_id"]])
            self._run_batch(batch, lines, plan)
        return batch

    def _run_batch(self, batch: dict[str, Any], lines: list[dict[str, Any]], plan: BatchPlan) -> None:
        out: list[dict[str, Any]] = []
        err: list[dict[str, Any]] = []
        for i, line in enumerate(lines):
            row: dict[str, Any] = {"id": f"batch_req_{i}", "custom_id": line["custom_id"]}
            if plan.expire_after is not None and i >= plan.expire_after:
                err.append({**row, "response": None, "error": {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion window expired."}})
            elif i in plan.failed_lines:
                error = {"error": {"message": "internal error (planned)", "type": "server_error"}}
                err.append({**row, "error": None,
                            "response": {"status_code": 500, "request_id": row["id"], "body": error}})
            else:
                body = self._completion(line["body"], self.responder(line["body"]))
                out.append({**row, "error": None,
                            "response": {"status_code": 200, "request_id": row["id"], "body": body}})
        for rows, field_name in ((out, "output_file_id"), (err, "error_file_id")):
            if rows:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[field_name] = file_id
        expired = plan.expire_after is not None and plan.expire_after < len(lines)
        batch.update(status="expired" if expired else "completed",
                     request_counts=_counts(len(lines), len(out), len(err)))

    def _completion(self, body: dict[str, Any], text: str) -> dict[str, Any]:
        return chat_completion(body, text, len(self.requests))


def _invalid(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _counts(total: int, completed: int, failed: int) -> dict[str, int]:
    return {"total": total, "completed": completed, "failed": failed}


def _file_object(file_id: str, content: bytes, filename: str, purpose: str) -> dict[str, Any]:
    return {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
            "filename": filename, "purpose": purpose, "status": "processed"}


def _validate_batch(content: bytes) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(lines, errors) of a Batch input file, checked as the OpenAI Batch API documents it: one
    JSON object a line with a unique ``custom_id``, ``method`` POST, ``url`` the batch endpoint
    and a ``body`` holding ``model`` and ``messages``, all lines for one model."""
    lines: list[dict[str, Any]] = []
    errors: list[dict[str, Any]] = []
    seen: set[str] = set()
    models: set[str] = set()
    for number, text in enumerate(content.decode("utf-8", "replace").split("\n"), 1):
        if not text.strip():
            continue
        try:
            line = json.loads(text)
        except json.JSONDecodeError:
            errors.append({"code": "invalid_json_line", "line": number, "message": "not JSON"})
            continue
        body = line.get("body") if isinstance(line, dict) else None
        problem = (
            "not an object" if not isinstance(line, dict)
            else "custom_id missing or repeated" if not isinstance(line.get("custom_id"), str)
            or line["custom_id"] in seen
            else "method must be POST" if line.get("method") != "POST"
            else f"url must be {BATCH_ENDPOINT}" if line.get("url") != BATCH_ENDPOINT
            else "body needs model and messages" if not isinstance(body, dict)
            or not body.get("model") or not isinstance(body.get("messages"), list)
            else None
        )
        if problem or not isinstance(body, dict):
            errors.append({"code": "invalid_request", "line": number, "message": problem})
            continue
        seen.add(line["custom_id"])
        models.add(body["model"])
        lines.append(line)
    if len(models) > 1:
        errors.append({"code": "mismatched_model", "line": None, "message": "one model per batch"})
    if not lines and not errors:
        errors.append({"code": "empty_file", "line": None, "message": "no requests"})
    return lines, errors

