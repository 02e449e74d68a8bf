"""A small Anthropic-API HTTP server (stdlib only) with scripted replies, for tests and dry runs.

It serves, on 127.0.0.1 in a background thread, what the ``anthropic`` SDK calls:

* ``POST /v1/messages``: checks the request as the API version 2026-10-21 does (``model``,
  ``max_tokens``, ``messages`` of user/assistant turns, a top-level ``system``; no
  ``temperature``/``top_p``/``top_k``; ``thinking.budget_tokens`` >= 1024 and < ``max_tokens``), and
  answers with ``thinking`` and ``text`` content blocks, a stop reason and a usage with
  ``cache_read_input_tokens``, ``cache_creation_input_tokens`` and
  ``output_tokens_details.thinking_tokens``. Tokens are words (whitespace-separated): the prompt's
  words are its input tokens; thinking and text words count against ``max_tokens`` in that order,
  and a reply cut there ends with stop reason ``max_tokens`` (thinking that fills the whole cap
  leaves no text: the "reasoning ran out of tokens" shape).
* errors with the API's error JSON (``{"type": "error", "error": {"type", "message"}}``): 400
  ``invalid_request_error`` (also "prompt is too long" past ``context_window``), 401
  ``authentication_error`` (a key other than ``api_key``), 404 ``not_found_error`` (a model not in
  ``models``), and scripted ones (429 ``rate_limit_error`` with ``retry-after``, 529
  ``overloaded_error``, 500 ``api_error``) through :class:`Reply`.
* ``POST /v1/messages/batches``, ``GET /v1/messages/batches/{id}`` and
  ``GET /v1/messages/batches/{id}/results`` (Message Batches): a batch is ``in_progress`` for
  ``polls_per_state`` retrievals, then ``ended`` with a ``results_url``; each request is answered
  like ``/v1/messages`` (a request the API would refuse is an ``errored`` result), and
  :class:`BatchPlan` makes chosen lines ``errored`` or ``expired``.

Every ``/v1/messages`` request is recorded (path, headers, body) in ``requests``. Not for production use.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from ideaharness.testing._http import Answered, RecordedRequest, Reply, ThreadedServer, echo_responder

__all__ = ["API_VERSION_WITHOUT_SAMPLING", "AnthropicServer", "Answer", "BatchPlan", "RecordedRequest",
           "Reply", "Responder", "api_error", "echo_responder"]

API_VERSION_WITHOUT_SAMPLING = "2026-10-21"
"""The ``anthropic-version`` from which ``temperature``, ``top_p`` and ``top_k`` are refused."""
CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
"""What a Message Batches ``custom_id`` must look like."""
MIN_THINKING_BUDGET = 1024


@dataclass
class Answer:
    """What the model "says" to one request: its ``text``, optional ``thinking`` (sent as a thinking
    block when the request enables thinking) and how many prompt tokens the prompt cache read or
    wrote (at most the prompt's tokens)."""

    text: str
    thinking: str | None = None
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


Responder = Callable[[dict[str, Any]], "str | Answer"]
"""Request body -> the reply text or an :class:`Answer`."""


@dataclass
class BatchPlan:
    """How the n-th created batch is answered: lines in ``errored_lines`` (0-based) get an
    ``api_error``; with ``expire_after = k`` only the first k lines are answered and the rest are
    ``expired``; the batch ends after ``polls_per_state`` retrievals."""

    errored_lines: frozenset[int] = frozenset()
    expire_after: int | None = None
    polls_per_state: int = 1


def api_error(status: int, kind: str, message: str) -> tuple[int, dict[str, Any]]:
    """``(status, the API's error JSON)`` for an error of type ``kind``."""
    return status, {"type": "error", "error": {"type": kind, "message": message}, "request_id": "req_test"}


def _words(text: Any) -> list[str]:
    if isinstance(text, list):  # content blocks
        return [w for block in text if isinstance(block, dict) for w in str(block.get("text", "")).split()]
    return str(text or "").split()


def _now(offset_h: float = 0.0) -> str:
    return (datetime.now(UTC) + timedelta(hours=offset_h)).isoformat().replace("+00:00", "Z")


class AnthropicServer(ThreadedServer):
    """Scripted Anthropic Messages (and Message Batches) API on 127.0.0.1 (port chosen by the OS).

    Args:
        responder: body -> reply (text or :class:`Answer`), used when the script is exhausted.
        script: replies given in order to the first ``/v1/messages`` requests.
        latency_s: seconds every ``/v1/messages`` answer waits.
        api_key: the only key accepted (``x-api-key`` or ``Authorization: Bearer``); None accepts any.
            The 401 message echoes the key it got (to test that clients redact it).
        models: the models that exist (others are 404); None: every model exists.
        context_window: prompt tokens (words) above which a request is "prompt is too long"; None: no limit.
        adaptive_only: models that refuse ``thinking.type = enabled`` (naming adaptive thinking).
        no_thinking: models that refuse any ``thinking`` parameter.
        no_structured_output: models that refuse ``output_config.format``.
        batch_plans: how the 1st, 2nd, ... batch is answered (default: every line succeeds).
    """

    def __init__(
        self,
        responder: Responder = echo_responder,
        *,
        script: list[Reply] | None = None,
        latency_s: float = 0.0,
        api_key: str | None = None,
        models: set[str] | None = None,
        context_window: int | None = None,
        adaptive_only: set[str] | None = None,
        no_thinking: set[str] | None = None,
        no_structured_output: set[str] | None = None,
        batch_plans: list[BatchPlan] | None = None,
    ) -> None:
        self.responder = responder
        self.script = list(script or [])
        self.latency_s = latency_s
        self.api_key = api_key
        self.models = models
        self.context_window = context_window
        self.adaptive_only = adaptive_only or set()
        self.no_thinking = no_thinking or set()
        self.no_structured_output = no_structured_output or set()
        self.batch_plans = list(batch_plans or [])
        self.requests: list[RecordedRequest] = []
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_requests: dict[str, list[dict[str, Any]]] = {}
        self._results: dict[str, list[dict[str, Any]]] = {}
        self._polls: Counter[str] = Counter()
        self._version = API_VERSION_WITHOUT_SAMPLING
        self._lock = threading.RLock()  # message() is also called under it (batch lines)
        super().__init__()

    @property
    def base_url(self) -> str:
        """The API root, ``http://127.0.0.1:<port>`` (the SDK adds ``/v1/...``)."""
        return f"http://127.0.0.1:{self.port}"

    # -- routing -----------------------------------------------------------------
    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> Answered:
        """Answer one HTTP request: ``(status, extra headers, JSON value or bytes)``."""
        lowered = {k.lower(): v for k, v in headers.items()}
        parts = path.split("?")[0].rstrip("/").split("/")[1:]  # ["v1", ...]
        refused = self._auth(lowered)
        if refused is not None:
            return refused[0], {}, refused[1]
        try:
            body = json.loads(raw) if raw else {}
        except json.JSONDecodeError:
            status, payload = api_error(400, "invalid_request_error", "the body is not JSON")
            return status, {}, payload
        if method == "POST" and parts == ["v1", "messages"]:
            return self._messages(path, headers, lowered, body)
        with self._lock:
            if method == "POST" and parts == ["v1", "messages", "batches"]:
                status, payload = self._create_batch(body, lowered)
                return status, {}, payload
            if method == "GET" and parts[:3] == ["v1", "messages", "batches"] and len(parts) >= 4:
                batch_id = parts[3]
                if batch_id in self.batches and len(parts) == 4:
                    return 200, {}, self._advance(batch_id)
                if batch_id in self.batches and parts[4:] == ["results"]:
                    if self.batches[batch_id]["processing_status"] != "ended":
                        status, payload = api_error(400, "invalid_request_error", "batch has not ended")
                        return status, {}, payload
                    lines = "".join(json.dumps(row) + "\n" for row in self._results[batch_id])
                    return 200, {"Content-Type": "application/binary"}, lines.encode()
        status, payload = api_error(404, "not_found_error", f"no route {method} {path}")
        return status, {}, payload

    def _auth(self, headers: dict[str, str]) -> tuple[int, dict[str, Any]] | None:
        if self.api_key is None:
            return None
        got = headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ").strip()
        if got == self.api_key:
            return None
        return api_error(401, "authentication_error", f"invalid x-api-key: {got}")

    # -- /v1/messages ------------------------------------------------------------
    def _messages(self, path: str, headers: dict[str, str], lowered: dict[str, str], body: Any) -> Answered:
        with self._lock:
            self.requests.append(RecordedRequest(path, headers, body if isinstance(body, dict) else {}))
            scripted = self.script.pop(0) if self.script else None
        if self.latency_s:
            time.sleep(self.latency_s)
        if scripted is not None and (scripted.status != 200 or scripted.body is not None):
            return scripted.status, scripted.headers, scripted.body
        status, payload = self.message(body, lowered.get("anthropic-version", API_VERSION_WITHOUT_SAMPLING))
        return status, {}, payload

    def message(self, body: Any, version: str = API_VERSION_WITHOUT_SAMPLING) -> tuple[int, dict[str, Any]]:
        """``(status, JSON)`` of one Messages request ``body``: the message, or the API's error."""
        problem = self._check(body, version)
        if problem is not None:
            return problem
        assert isinstance(body, dict)
        prompt = len(_words(body.get("system")))
        prompt += sum(len(_words(m.get("content"))) for m in body["messages"])
        if self.context_window is not None and prompt > self.context_window:
            return api_error(400, "invalid_request_error",
                             f"prompt is too long: {prompt} tokens > {self.context_window} maximum")
        reply = self.responder(body)
        answer = reply if isinstance(reply, Answer) else Answer(text=str(reply))
        thinking_on = (body.get("thinking") or {}).get("type") in ("enabled", "adaptive")
        cap = int(body["max_tokens"])
        thought = _words(answer.thinking)[:cap] if thinking_on and answer.thinking else []
        room = cap - len(thought)
        words = answer.text.split()
        text = answer.text if len(words) <= room else " ".join(words[:room])
        cut = len(words) > room or (thinking_on and answer.thinking is not None
                                    and len(_words(answer.thinking)) > len(thought))
        content: list[dict[str, Any]] = []
        if thought:
            content.append({"type": "thinking", "thinking": " ".join(thought), "signature": "sig-test"})
        if text or not thought:
            content.append({"type": "text", "text": text if room > 0 else "", "citations": None})
        read = min(max(answer.cache_read_input_tokens, 0), prompt)
        written = min(max(answer.cache_creation_input_tokens, 0), prompt - read)
        output = len(thought) + min(len(words), max(room, 0))
        usage: dict[str, Any] = {"input_tokens": prompt - read - written, "output_tokens": output,
                                 "cache_read_input_tokens": read, "cache_creation_input_tokens": written}
        if thought:
            usage["output_tokens_details"] = {"thinking_tokens": len(thought)}
        with self._lock:
            number = len(self.requests) + sum(len(r) for r in self._results.values())
        return 200, {
            "id": f"msg_{number}", "type": "message", "role": "assistant", "model": body["model"],
            "content": content, "stop_reason": "max_tokens" if cut else "end_turn", "stop_sequence": None,
            "usage": usage,
        }

    def _check(self, body: Any, version: str) -> tuple[int, dict[str, Any]] | None:
        def bad(message: str) -> tuple[int, dict[str, Any]]:
            return api_error(400, "invalid_request_error", message)

        if not isinstance(body, dict):
            return bad("the body must be an object")
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return bad("model: Field required")
        if self.models is not None and model not in self.models:
            return api_error(404, "not_found_error", f"model: {model}")
        cap = body.get("max_tokens")
        if not isinstance(cap, int) or isinstance(cap, bool) or cap < 0:
            return bad("max_tokens: Field required (an integer >= 0)")
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return bad("messages: at least one message is required")
        for i, m in enumerate(messages):
            if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
                return bad(f'messages.{i}.role: Input should be "user" or "assistant" '
                           "(system prompts go in the top-level system parameter)")
        if version >= API_VERSION_WITHOUT_SAMPLING:
            for name in ("temperature", "top_p", "top_k"):
                if name in body:
                    return bad(f"{name}: Extra inputs are not permitted")
        thinking = body.get("thinking")
        if thinking is not None:
            kind = thinking.get("type") if isinstance(thinking, dict) else None
            if model in self.no_thinking:
                return bad("thinking: this model does not support thinking")
            if kind == "enabled" and model in self.adaptive_only:
                return bad("thinking.type.enabled is not supported for this model; "
                           "use thinking.type.adaptive")
            if kind == "enabled":
                budget = thinking.get("budget_tokens")
                if not isinstance(budget, int) or budget < MIN_THINKING_BUDGET:
                    return bad("thinking.enabled.budget_tokens: Input should be greater than or "
                               "equal to 1024")
                if budget >= cap:
                    return bad("`max_tokens` must be greater than `thinking.budget_tokens`")
            elif kind not in ("adaptive", "disabled"):
                return bad(f"thinking.type: unknown type {kind!r}")
        output = body.get("output_config") or {}
        if "format" in output and model in self.no_structured_output:
            return bad("output_config.format: structured outputs are not supported for this model")
        return None

    # -- Message Batches ---------------------------------------------------------
    def _create_batch(self, body: Any, headers: dict[str, str]) -> tuple[int, dict[str, Any]]:
        requests = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(requests, list) or not requests:
            return api_error(400, "invalid_request_error", "requests: at least one request is required")
        seen: set[str] = set()
        for i, item in enumerate(requests):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id) or custom_id in seen:
                return api_error(400, "invalid_request_error",
                                 f"requests.{i}.custom_id: 1-64 characters of [a-zA-Z0-9_-], unique")
            if not isinstance(item.get("params"), dict):
                return api_error(400, "invalid_request_error", f"requests.{i}.params: Field required")
            seen.add(custom_id)
        batch_id = f"msgbatch_{len(self.batches) + 1:04d}"
        self.batch_requests[batch_id] = requests
        self.batches[batch_id] = {
            "id": batch_id, "type": "message_batch", "processing_status": "in_progress",
            "request_counts": _counts(processing=len(requests)), "created_at": _now(),
            "expires_at": _now(24), "ended_at": None, "archived_at": None, "cancel_initiated_at": None,
            "results_url": None,
        }
        self._version = headers.get("anthropic-version", API_VERSION_WITHOUT_SAMPLING)
        return 200, self.batches[batch_id]

    def _advance(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        index = list(self.batches).index(batch_id)
        plan = self.batch_plans[index] if index < len(self.batch_plans) else BatchPlan()
        self._polls[batch_id] += 1
        if batch["processing_status"] == "in_progress" and self._polls[batch_id] >= plan.polls_per_state:
            rows = [self._result(i, item, plan) for i, item in enumerate(self.batch_requests[batch_id])]
            self._results[batch_id] = rows
            kinds = Counter(row["result"]["type"] for row in rows)
            batch.update(processing_status="ended", ended_at=_now(),
                         results_url=f"{self.base_url}/v1/messages/batches/{batch_id}/results",
                         request_counts=_counts(succeeded=kinds["succeeded"], errored=kinds["errored"],
                                                expired=kinds["expired"], canceled=kinds["canceled"]))
        return batch

    def _result(self, index: int, item: dict[str, Any], plan: BatchPlan) -> dict[str, Any]:
        row: dict[str, Any] = {"custom_id": item["custom_id"]}
        if plan.expire_after is not None and index >= plan.expire_after:
            return {**row, "result": {"type": "expired"}}
        if index in plan.errored_lines:
            _, error = api_error(500, "api_error", "internal error (planned)")
            return {**row, "result": {"type": "errored", "error": error}}
        status, payload = self.message(item["params"], self._version)
        if status != 200:
            return {**row, "result": {"type": "errored", "error": payload}}
        return {**row, "result": {"type": "succeeded", "message": payload}}


def _counts(processing: int = 0, succeeded: int = 0, errored: int = 0, canceled: int = 0,
            expired: int = 0) -> dict[str, int]:
    return {"processing": processing, "succeeded": succeeded, "errored": errored, "canceled": canceled,
            "expired": expired}

