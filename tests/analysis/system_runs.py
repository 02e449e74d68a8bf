"""Saved runs of idea-generation *systems* (an ideas file, a ``cmd:`` program, an HTTP service),
made from a real scripted run by writing what the runner records for a system: the ``idea_sources``
block of results.json, the config of ``--ideas``/``--system``, failed units for the instances the
system gave no answer for, and (for a step a system answered) the task JSON as the kept prompt,
the record's ``system_task`` mark and the command's stderr."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

DEFAULT_MODEL = "openai/gpt-4o-mini"
"""The generator model string a run keeps in its config when ``--ideas`` replaced it: never the
name of the system."""


def _rewrite(path: Path, change: Any) -> None:
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    path.write_text(json.dumps(value, indent=2), encoding="utf-8")


def as_system(
    source: Path,
    out: Path,
    *,
    spec: str,
    kind: str,
    system: str | None = None,
    missing: tuple[str, ...] = (),
    extra: tuple[str, ...] = (),
    block: bool = True,
) -> Path:
    """A copy of run ``source`` at ``out`` as the runner writes a run of the system ``spec``.

    Args:
        spec: the generator spec (``ideas:FILE``, ``cmd:...``, ``http://...``, or a model).
        kind: its kind as the runner records it.
        system: ``--system`` (the block's name; default the spec's default name, as CORE does).
        missing: instances the system gave no answer for: their scores become unscored (the first
            one's rows are dropped, the others' set to NaN with a reason) and they are failed units.
        extra: instances in its file that were never asked.
        block: False for a run saved before results.json listed its idea sources.
    """
    from ideaharness.analysis.systems import ideas_path, spec_name

    shutil.copytree(source, out)
    name = system or spec_name(spec)
    ideas = ideas_path(spec)[0] if spec.startswith("ideas:") else None

    def config(cfg: dict[str, Any]) -> None:
        cfg["generator"] = DEFAULT_MODEL if ideas else spec
        cfg["ideas"] = ideas
        cfg["ideas_format"] = "auto"
        cfg["system"] = system
        if ideas:
            cfg.setdefault("input_sha256", {})["--ideas"] = {ideas: hashlib.sha256(spec.encode()).hexdigest()}

    _rewrite(out / "config.json", config)
    asked = json.loads((out / "results.json").read_text())["selection"]["selected"]

    def results(res: dict[str, Any]) -> None:
        config(res["settings"]["config"])
        res["generator"] = spec
        res["settings"]["models"]["generator"] = spec
        if block:
            res["idea_sources"] = [{"role": "generator", "system": name, "kind": kind, "spec": spec,
                               "answers": {"asked": asked, "missing": list(missing),
                                           "extra_instances": list(extra)}}]
        else:
            res.pop("idea_sources", None)
        res["failed_units"] = [*res.get("failed_units", []), *(
            {"step": "generate/low", "instance_id": m, "key": "", "status": "failed",
             "error": f"no answer for instance {m} (sample 0) in {ideas or spec}"} for m in missing)]
        if missing:
            res["status"] = "partial"

    _rewrite(out / "results.json", results)
    if missing:
        lines = []
        for line in (out / "scores.jsonl").read_text().splitlines():
            row = json.loads(line)
            if row["instance_id"] == missing[0]:
                continue
            if row["instance_id"] in missing:
                row.update(value=None, reason="no answer from the system")
            lines.append(json.dumps(row))
        (out / "scores.jsonl").write_text("\n".join(lines) + "\n")
    return out


def mark_system_step(run: Path, step: str, instance_id: str, *, spec: str, stderr: str | None,
                     task_extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Make ``step`` of ``instance_id`` a step the system ``spec`` answered, as CORE records it:
    the kept prompt is the task JSON (one user message), the judgment's model the spec, its
    ``stderr`` kept and the record marked ``system_task``. Returns the task JSON."""
    path = run / "records" / f"{step.replace('/', '_')}.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    row = next(r for r in rows if r["instance_id"] == instance_id and r["step"] == step)
    task = {"format": "ideaharness.task/1", "task_id": f"ideabench/{step}/{instance_id}/",
            "benchmark": "ideabench", "step": step, "instance_id": instance_id, "key": "",
            "sample_index": 0, "seed": 0, "inputs": {"domain": "chemistry", "n_ideas": 3},
            **(task_extra or {})}
    content = json.dumps(task, sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(content.encode()).hexdigest()[:16]
    with (run / "prompts.jsonl").open("a", encoding="utf-8") as fh:
        message = {"role": "user", "content": content}
        fh.write(json.dumps({"prompt_hash": digest, "messages": [message]}) + "\n")
    data = row["data"]
    data["judgment"].update(judge_model=spec, prompt_hash=digest, stderr=stderr)
    data["system_task"] = True
    with path.open("a", encoding="utf-8") as fh:  # the last line of a unit is the one read
        fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return task
