"""Loopback servers for tests and offline dry runs (stdlib only; not used by any runtime module).

- :mod:`ideaharness.testing.openai_server` — :class:`OpenAICompatServer`, an OpenAI-compatible
  ``/v1/chat/completions`` (plus Files and Batch) server on 127.0.0.1 answering from a script of
  :class:`Reply` objects or a responder function, with seeded fault injection (:class:`Faults`).
  Point any run at it with ``--base-url http://127.0.0.1:<port>/v1``.
- :mod:`ideaharness.testing.fast_server` — ``FastServer``, an OpenAI-compatible chat-completions
  server on one asyncio event loop (0.1–0.3 ms of CPU per request, latency by a timer) for
  benchmarks; ``serve_in_child`` runs it as a child process
  (``python -m ideaharness.testing.fast_server --latency 0.1 --port 0`` prints its base URL).
  Imported from its module (not re-exported here, so ``python -m`` runs it cleanly).
- :mod:`ideaharness.testing.scholarly_replay` — :class:`ReplayServer`, replaying recorded HTTP
  responses (VCR cassettes or routes added in code) for the scholarly clients' ``base_url``.
- :mod:`ideaharness.testing.s2_emulator` — :class:`S2Emulator`, a Semantic Scholar Graph API
  emulator over recorded real paper records (served on a :class:`ReplayServer`).

For a dry run without any server, the ``scripted/`` provider answers from a file of replies
(``--judge scripted/<file>``; see :mod:`ideaharness.llm.scripted`). Nothing here is imported by
the runtime package: ``tests/test_layers.py`` checks that no module outside ``testing`` imports it.
"""

from ideaharness.testing.openai_server import (
    BatchPlan,
    Faults,
    OpenAICompatServer,
    Reply,
    echo_responder,
    garble,
)
from ideaharness.testing.s2_emulator import S2Emulator, corpus_from_recordings
from ideaharness.testing.scholarly_replay import ReplayServer
from ideaharness.testing.scholarly_replay import Reply as ReplayReply

__all__ = [
    "BatchPlan",
    "Faults",
    "OpenAICompatServer",
    "ReplayReply",
    "ReplayServer",
    "Reply",
    "S2Emulator",
    "corpus_from_recordings",
    "echo_responder",
    "garble",
]
