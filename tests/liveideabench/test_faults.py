"""A reply that is not the model's answer is never read as one (issue 18, item 12).

The same LiveIdeaBench run goes twice through the real CLI against a real loopback endpoint
(:class:`~ideaharness.testing.openai_server.OpenAICompatServer`) whose model answers every prompt with a
well-formed reply that depends only on the prompt: once clean, once through the server's seeded
fault injection, where 30 % of replies are replaced by their words shuffled and half dropped
(:class:`~ideaharness.testing.openai_server.Faults`, kind ``garbled``). Every value parsed in the faulty
run (idea, critique scores, fluency grade) must equal the clean run's; a garbled reply may only be
a parse failure (retried, then counted).
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from ideaharness.cli import main
from ideaharness.seeding import derive_seed
from ideaharness.testing.openai_server import Faults, OpenAICompatServer

KEYWORDS = ["meteorology", "periodic table", "galaxies", "tsunamis", "earthquakes", "volcanoes", "comets",
            "phycology", "stars", "proton"]
WORDS = ("ionic gel redox couple thermopower membrane catalyst lattice dopant solvent interface polymer "
         "electrode spectroscopy diffusion crystal").split()
DATA_BLOCK = re.compile(r"<([a-z][a-z0-9_]*)>\n(.*?)\n</\1>", re.S)


IDEA_SEEDS = {derive_seed(0, kw, k) % 2**31: (kw, k) for kw in KEYWORDS for k in range(2)}
"""Request seed of each idea's first attempt (run seed 0; ``LiveIdeaBench.generate``)."""
_INVERSE = pow(1_000_003, -1, 2**31)


def idea_index(seed: int) -> tuple[str, int]:
    """The (keyword, idea) a generation request is for, from its seed: attempt ``a`` of a request
    with seed ``s`` is sent with ``(s * 1_000_003 + 1000 a) mod 2**31`` (``derived_seed``), so the
    model answers a retry like the first attempt, as a deterministic model would."""
    for attempt in range(10):
        base = seed if attempt == 0 else (seed - 1000 * attempt) * _INVERSE % 2**31
        if base in IDEA_SEEDS:
            return IDEA_SEEDS[base]
    raise AssertionError(f"no idea has the seed {seed}")


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16)


def _phrase(seed: int, n: int = 3) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(n))


def reply(body: dict[str, Any]) -> str:
    """The model: an idea, a critique in one of several well-formed shapes, or a fluency grade."""
    user = body["messages"][-1]["content"]
    h = _h(user)
    blocks = dict(DATA_BLOCK.findall(user))
    if "ONLY ANSWER A/B/C/D" in user:
        return ["B", "C", "B. Different ideas but addressing similar problems."][h % 3]
    if "Please evaluate the following scientific idea" in user:
        scores = {"originality": 1 + h % 10, "feasibility": 1 + (h >> 4) % 10, "clarity": 1 + (h >> 8) % 10}
        analysis = (f"The idea links {_phrase(h)} to {_phrase(h + 1)}; the method is vague (about "
                    f"{_phrase(h + 2, 2)}).")
        compact = json.dumps(scores, separators=(",", ":"))
        return [
            f"{analysis}\n```json\n{json.dumps(scores, indent=4)}\n```",
            f"{analysis}\n```json\n{json.dumps(scores)}\n```",
            f"{analysis} Scores: {compact}",
            # a judge that restates an example object before its own scores: not one answer
            f"Following the format, e.g. {json.dumps(dict.fromkeys(scores, 5), separators=(',', ':'))}, "
            f"my scores: {compact}",
        ][h % 4]
    keyword, k = idea_index(body["seed"])
    assert blocks["keyword"] == keyword
    h = _h(f"{keyword}/{k}")
    return (f"Idea on {keyword}: we propose pairing {_phrase(h)} with {_phrase(h + 1)} (after Smith et "
            f"al. 2020) to improve {keyword} forecasts, e.g. of rare events. The {_phrase(h + 2, 2)} couples "
            f"to the {_phrase(h + 3, 2)} in thin films. A controlled field trial would test it against a "
            "baseline.")


def run(server: OpenAICompatServer, out: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv("IDEAHARNESS_CACHE_DIR", str(cache))
    args = ["run", "liveideabench", "--generator", "openai/gen", "--judge", "openai/j1", "--judge",
            "openai/j2", "--judge", "openai/j3", "--fluency-judges", "1", "--base-url", server.base_url,
            "--no-progress", "--bootstrap-resamples", "20", "--out", str(out)]
    for keyword in KEYWORDS:
        args += ["--keyword", keyword]
    with pytest.raises(SystemExit) as exc:
        main(args)
        raise SystemExit(0)
    return int(exc.value.code or 0)


def judgments(run_dir: Path) -> dict[tuple[str, str, str], dict[str, Any]]:
    out = {}
    for path in (run_dir / "records").glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            out[(rec["step"], rec["instance_id"], rec["key"])] = rec["data"]["judgment"]
    return out


def test_garbled_replies_are_parse_failures_never_other_values(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with OpenAICompatServer(reply) as clean:
        assert run(clean, tmp_path / "clean", tmp_path / "cache-clean", monkeypatch) == 0
    faults = Faults(rate=0.3, kinds=("garbled",), seed=7)
    with OpenAICompatServer(reply, faults=faults) as faulty:
        run(faulty, tmp_path / "faulty", tmp_path / "cache-faulty", monkeypatch)
        garbled = faulty.fault_counts.get("garbled", 0)
    a, b = judgments(tmp_path / "clean"), judgments(tmp_path / "faulty")
    critiques = [k for k in a if k[0] == "critique"]
    assert len(critiques) >= 48
    assert garbled >= 20  # the faults were served ...
    retried = [k for k, j in b.items() if j["errors"] and a[k]["parse_ok"]]
    assert len(retried) >= 15  # ... and read as parse failures, then retried
    differing = [k for k in set(a) & set(b) if b[k]["parse_ok"]
                 and (not a[k]["parse_ok"] or a[k]["parsed"] != b[k]["parsed"])]
    assert differing == []
    # the restated-example critiques are parse failures in both runs, never scores
    assert any(not j["parse_ok"] for k, j in a.items() if k[0] == "critique")
