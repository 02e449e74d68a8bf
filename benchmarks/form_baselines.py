"""Form-only baselines next to chance and the fixture's judge, for every benchmark with a gold step.

For each registered benchmark that declares gold steps (``Benchmark.gold_steps``), its small real
run of ``tests/runner/test_one_number.py`` (scripted models on the test fixtures: every bundled
data set needs a model to generate or rewrite what is judged) is made in a temporary directory, and
for each gold headline the table shows: the judge's value and n, the best form-only baseline of
``results["form_baselines"]`` (which rule, its value), the content-blind chance level, and the
evidence verdict. Benchmarks without gold steps are listed with their reasons (no baseline applies).

Usage (from the repository root): python benchmarks/form_baselines.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from tests.runner.test_one_number import recipes

    from ideaharness.runner.registry import benchmarks

    rows = [("benchmark", "metric", "group", "n", "judge", "best form-only (rule)", "chance", "verdict")]
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["IDEAHARNESS_CACHE_DIR"] = str(Path(tmp) / "cache")
        for name, cls in sorted(benchmarks().items()):
            if not cls.gold_steps:
                reasons = "; ".join(f"{s}: {r}" for s, r in cls.no_gold_steps.items())
                print(f"{name}: no gold step ({reasons})")
                continue
            recipe = next(iter(recipes()[name].values()))[0]
            out = Path(tmp) / name
            recipe(out)
            results = json.loads((out / "results.json").read_text())
            forms = {(e["metric"], e["group"], e["system"]): e for e in results["form_baselines"]}
            verdicts = {(v["metric"], v["group"], v["system"]): v["verdict"]
                        for v in (results.get("evidence") or {}).get("verdicts") or []}
            for m in results["metrics"]:
                key = (m["metric"], m["group"], m.get("system"))
                e = forms.get(key)
                if e is None:
                    continue
                chance = "-" if e["chance"] is None else f"{e['chance']:.3f}"
                judge = "-" if m["value"] is None else f"{m['value']:.3f}"
                rows.append((name, m["metric"], m["group"] or "-", str(e["n"]), judge,
                             f"{e['best_value']:.3f} ({e['best']})", chance, verdicts.get(key, "-")))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)))


if __name__ == "__main__":
    main()
