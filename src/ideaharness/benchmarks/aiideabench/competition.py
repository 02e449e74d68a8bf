"""Idea competition between systems (AI Idea Bench 2025, Eq. 5-6) and a Bradley-Terry fit.

Systems are this run and the ``compare`` run directories (same data). On every topic each system
contributes one of its ideas (chosen with the run seed; the published code picks one at random,
unseeded); a Swiss tournament of ``tournament_rounds`` rounds is played per topic and points are
summed over topics. A match is the judge's ``final_choice`` between two ideas (six criteria are
recorded too). By default each pair is judged in both orders: the same winner in both is a win;
different winners is an *inconsistent* pair, recorded as such and counted as a tie (each side gets
the mean of win and loss points, half a win in Bradley-Terry) or, with ``inconsistent="exclude"``,
giving no points and no battle. ``parity``: judged once with the higher-ranked player as idea 0 and
1 point per loss, as in the published ``competition.py``. A pair that meets again in a later round
reuses its verdict. Judgments that never parse give no verdict and are counted.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import ValidationError

from ideaharness.benchmarks.aiideabench import judges as J
from ideaharness.benchmarks.aiideabench.blinding import judge_topic
from ideaharness.errors import UserError
from ideaharness.generation.aiideabench import idea_text
from ideaharness.jsonl import scan_jsonl
from ideaharness.metrics.stats import bootstrap_ci
from ideaharness.metrics.tournament import (
    Battle,
    Outcome,
    TournamentResult,
    bradley_terry_topic_bootstrap,
    swiss_tournament,
)
from ideaharness.runner.steps import Reask
from ideaharness.runs.store import CONFIG_FILE, RECORDS_DIR
from ideaharness.schema import Idea, Instance
from ideaharness.seeding import derive_seed
from ideaharness.systems.spec import system_kind

if TYPE_CHECKING:
    from ideaharness.benchmarks.aiideabench.run import AIIdeaBench


def run_system(run_dir: Path, config: dict[str, Any]) -> tuple[str, str]:
    """(name, kind) of the system whose ideas an AI Idea Bench run holds, as ``compare`` names it
    (:func:`ideaharness.analysis.systems.run_systems`: results.json's ``idea_sources`` entry of
    the ``generator`` role, else derived from the config: ``system``, the ideas file, a model or a
    ``cmd:``/``http://`` spec). Kind: ``model``, ``ideas-file``, ``command`` or ``http``."""
    from ideaharness.analysis.load import run_system as compare_name
    from ideaharness.analysis.systems import run_systems

    try:
        results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        results = {}
    results = results if isinstance(results, dict) else {}
    main = next((s for s in run_systems(config, results) if s.role == "generator"), None)
    if main is not None:
        return main.system, main.kind
    return compare_name(config, results, run_dir), "model"


def load_run_ideas(run_dir: Path) -> tuple[str, dict[str, list[Idea]]]:
    """(system name, {instance_id: ideas}) of another AI Idea Bench run directory (of any system:
    a model, ``--ideas``, ``cmd:`` or ``http://``; :func:`run_system`).

    Raises:
        UserError: not a run directory of this benchmark.
    """
    return _load_run(run_dir)[:2]


def _load_run(run_dir: Path) -> tuple[str, dict[str, list[Idea]], str]:
    config_path = run_dir / CONFIG_FILE
    if not config_path.exists():
        raise UserError(f"--compare {run_dir}: no {CONFIG_FILE}; give an AI Idea Bench run directory")
    try:
        config = json.loads(config_path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UserError(f"--compare {run_dir}: {CONFIG_FILE} is not readable ({exc})") from None
    if not isinstance(config, dict) or config.get("benchmark") != "aiideabench":
        raise UserError(f"--compare {run_dir}: not an AI Idea Bench run "
                        f"(benchmark={config.get('benchmark') if isinstance(config, dict) else None!r})")
    name, kind = run_system(run_dir, config)
    ideas: dict[str, list[Idea]] = {}
    path = run_dir / RECORDS_DIR / "ideas.jsonl"
    for _, rec in scan_jsonl(path).rows:  # a torn or damaged line is that unit missing, as in a resume
        try:
            ideas[rec["instance_id"]] = [Idea.model_validate(i) for i in rec["data"]["ideas"]]
        except (TypeError, KeyError, ValidationError):
            continue
    return name, ideas, kind


def compete_text(idea: Idea) -> str:
    """An idea as the competition judge sees it: motivation and experiment plan only, so that both
    sides show the same fields (a title on one side only would tell the systems apart)."""
    if idea.motivation and idea.experiment_plan:
        return idea_text(idea.motivation, idea.experiment_plan)
    return idea.text


def verdict(first: dict[str, Any] | None, second: dict[str, Any] | None, inconsistent: str) -> dict[str, Any]:
    """Combine the two orders' judgments of systems (x, y): x shown first, then y shown first.

    Returns ``{"outcome": "a" (x wins) | "b" | "tie" | None, "consistent": bool | None}``.
    """
    if first is None or second is None or not first["parse_ok"] or not second["parse_ok"]:
        return {"outcome": None, "consistent": None}
    x_wins_first = first["parsed"]["final_choice"] == 0
    x_wins_second = second["parsed"]["final_choice"] == 1
    if x_wins_first == x_wins_second:
        return {"outcome": "a" if x_wins_first else "b", "consistent": True}
    return {"outcome": "tie" if inconsistent == "tie" else None, "consistent": False}


class _Competition:
    """State of one competition: verdict cache per topic, battles, counters."""

    def __init__(self, bench: AIIdeaBench) -> None:
        self.bench = bench
        self.cfg = bench.config
        self.battles: list[Battle] = []
        self.by_topic: dict[str, list[Battle]] = {}  # the resampled unit of the intervals
        self.counts = {"judgments": 0, "parse_failures": 0, "inconsistent_pairs": 0, "pairs": 0,
                       "no_verdict": 0, "idea0_chosen": 0}

    async def judge_order(self, inst: Instance, picked: dict[str, Idea], first: str,
                          second: str) -> dict[str, Any] | None:
        topic = judge_topic(self.bench, inst)

        def shown(a: str, b: str) -> Reask:
            return Reask(J.compete_messages(topic, compete_text(picked[a]), compete_text(picked[b])),
                         extra={"idea0_system": a, "idea1_system": b})

        asked = shown(first, second)
        rec = await self.bench.steps.judge_step(
            "compete", inst.id, f"{first}|{second}", self.bench.judge, asked.messages,
            J.parse_compete, positions=[picked[first].id, picked[second].id],
            extra=asked.extra, json_schema=J.COMPETE_SCHEMA,
            reorder=lambda order: shown(*[(first, second)[i] for i in order]),  # --consistency-sample
            **self.bench._sampling(),
        )
        if rec is None:
            return None
        self.counts["judgments"] += 1
        judgment: dict[str, Any] = rec["judgment"]
        if not judgment["parse_ok"]:
            self.counts["parse_failures"] += 1
        elif judgment["parsed"]["final_choice"] == 0:
            self.counts["idea0_chosen"] += 1
        return judgment

    async def pair_verdict(self, inst: Instance, picked: dict[str, Idea], x: str, y: str) -> dict[str, Any]:
        first = await self.judge_order(inst, picked, x, y)
        if self.cfg.parity:
            if first is None or not first["parse_ok"]:
                v: dict[str, Any] = {"outcome": None, "consistent": None}
            else:
                v = {"outcome": "a" if first["parsed"]["final_choice"] == 0 else "b", "consistent": None}
        else:
            second = await self.judge_order(inst, picked, y, x)
            v = verdict(first, second, self.cfg.inconsistent)
        self.counts["pairs"] += 1
        self.counts["inconsistent_pairs"] += v["consistent"] is False
        self.counts["no_verdict"] += v["outcome"] is None and v["consistent"] is not False
        if v["outcome"] is not None:
            battle = Battle(a=x, b=y, winner=v["outcome"])
            self.battles.append(battle)
            self.by_topic.setdefault(inst.id, []).append(battle)
        return v

    async def topic(self, inst: Instance, picked: dict[str, Idea], names: list[str]) -> TournamentResult:
        verdicts: dict[tuple[str, str], dict[str, Any]] = {}

        async def play(a: str, b: str, _round: int) -> Outcome | None:
            x, y = (a, b) if self.cfg.parity else sorted((a, b))
            if (x, y) not in verdicts:
                verdicts[(x, y)] = await self.pair_verdict(inst, picked, x, y)
            outcome: Outcome | None = verdicts[(x, y)]["outcome"]
            if outcome is None or outcome == "tie" or x == a:
                return outcome
            return "b" if outcome == "a" else "a"

        return await swiss_tournament(
            names, play, rounds=self.cfg.tournament_rounds, win_points=3.0, loss_points=self.cfg.loss_points,
            seed=derive_seed(self.cfg.seed, inst.id, "swiss"),
        )


async def run_competition(
    bench: AIIdeaBench, instances: list[Instance], compare_dirs: list[Path]
) -> dict[str, Any]:
    """Swiss tournament per topic + Bradley-Terry over all verdicts; judgments recorded in ``bench``."""
    cfg = bench.config
    own = cfg.system_label
    systems: dict[str, dict[str, list[Idea]]] = {own: {i.id: bench.ideas(i) or [] for i in instances}}
    run_dirs = {own: str(bench.options.out)}
    kinds: dict[str, str] = {own: system_kind(cfg.generator_role)}
    for run_dir in compare_dirs:
        name, ideas, kind = _load_run(run_dir)
        if name in systems:
            name = f"{name} ({run_dir.name})"
        systems[name] = ideas
        run_dirs[name] = str(run_dir)
        kinds[name] = kind
    names = list(systems)
    if len(names) < 2:
        raise UserError("the competition needs at least 2 systems: give --compare RUN_DIR")
    comp = _Competition(bench)
    points = {n: 0.0 for n in names}
    per_topic: list[dict[str, Any]] = []
    topics = [i for i in instances if all(systems[n].get(i.id) for n in names)]
    for inst in topics:
        picked: dict[str, Idea] = {}
        for n in names:
            options = systems[n][inst.id]
            rng = random.Random(derive_seed(cfg.seed, inst.id, "compete-pick", n))
            picked[n] = options[rng.randrange(len(options))]
        result = await comp.topic(inst, picked, names)
        for n, p in result.points.items():
            points[n] += p
        per_topic.append({"instance_id": inst.id, "points": result.points, "rounds": result.rounds,
                          "ideas": {n: picked[n].id for n in names}})
    values = sorted(points.values(), reverse=True)
    n_boot = min(cfg.bootstrap_resamples, 1000)
    bt: dict[str, Any] = {}
    if len({s for b in comp.battles for s in (b.a, b.b)}) >= 2:
        anchor = own if any(own in (b.a, b.b) for b in comp.battles) else None
        intervals = bradley_terry_topic_bootstrap(comp.by_topic, anchor=anchor, n_resamples=n_boot,
                                                  seed=cfg.seed)
        bt = {n: iv.model_dump() for n, iv in intervals.items()}
    # total points resample topics too: a topic's matches share its ideas and difficulty
    points_ci = {n: bootstrap_ci([t["points"][n] for t in per_topic], np.sum, n_resamples=n_boot,
                                 seed=cfg.seed) for n in names}
    bt_note = _separation_note(comp.battles)
    return {
        "systems": names,
        "system_kinds": kinds,
        "run_dirs": run_dirs,
        "topics": len(topics),
        "rounds": cfg.tournament_rounds,
        "win_points": 3.0,
        "loss_points": cfg.loss_points,
        "both_orders": not cfg.parity,
        "bradley_terry_bootstrap": {"method": "percentile", "resampled_unit": "topic", "confidence": 0.95,
                                    "n_resamples": n_boot, "seed": cfg.seed,
                                    "implementation": "numpy (metrics.tournament."
                                                      "bradley_terry_topic_bootstrap)"},
        "points_bootstrap": {"method": "percentile", "resampled_unit": "topic", "confidence": 0.95,
                             "n_resamples": n_boot, "seed": cfg.seed, "statistic": "sum over topics",
                             "implementation": "scipy.stats.bootstrap"},
        "inconsistent_counts_as": cfg.inconsistent,
        "points": points,
        "points_ci": points_ci,
        "rank": {n: 1 + values.index(p) for n, p in points.items()},
        "bradley_terry": bt,
        "bradley_terry_anchor": own,
        "bradley_terry_note": bt_note,
        "battles": len(comp.battles),
        **comp.counts,
        "per_topic": per_topic,
    }


def _separation_note(battles: list[Battle]) -> str | None:
    """Names systems that never won or never lost: their maximum-likelihood rating is infinite."""
    score: dict[str, list[float]] = {}
    for b in battles:
        sa = {"a": 1.0, "b": 0.0, "tie": 0.5}[b.winner]
        for name, s in ((b.a, sa), (b.b, 1.0 - sa)):
            won_lost = score.setdefault(name, [0.0, 0.0])
            won_lost[0] += s
            won_lost[1] += 1.0 - s
    extreme = sorted(n for n, (w, lost) in score.items() if w == 0 or lost == 0)
    if not extreme:
        return None
    return (f"{', '.join(extreme)} never lost or never won: the maximum-likelihood rating is not finite; "
            "the shown value is held finite only by a tiny ridge penalty")
