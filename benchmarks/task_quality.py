"""Task quality of the offline synthesis, per environment and level.

    python benchmarks/task_quality.py [--per-env 12] [--env airline --env ecommerce]
    python benchmarks/task_quality.py --home H --env book_lending_prd ...   # mined ones

Synthesizes `--per-env` tasks for each environment into a fresh catalog with the full pipeline
(walks, trust gates, the baseline agent's five runs as a measurement) and prints, per
environment and level:

- `tasks`: kept tasks; `cand`: gated candidates that reached this level;
- `artef %`: emitted requests the artefact suite flags (`agent_world.tasks.artefacts`; it is a
  gate, so this should read 0) and, in `cand artef %`, the share of gated candidates it
  rejected;
- `dup`: pairs of kept tasks with the same gold chain and target (`chain_target`);
- `chain`, `tools`: mean chain length and mean distinct tools of the gold chains;
- `cond %`: tasks that branch on an observed value (a condition, or a loop over the matching
  elements); `agg %`: aggregations;
- `no-op`: kept tasks whose gold chain holds a write that leaves the database as it was
  ("set its currency to USD" on a product in USD; should read 0);
- `clock/world`: kept tasks whose answer is the engine's clock, an id it generated or world
  knowledge (re-checked with the answer gate: should read 0);
- `survive %`: gated candidates of the level that were kept (survival per level);
- `baseline %`: the baseline agent's pass rate over the kept tasks (a measurement offline);
- `obsc %`, `distr`: opaque tool names and mean distractor tools, reported apart from the
  level;
- `src %`: kept tasks whose gold chain calls one of the service's own tools (a mined
  environment's source tools; – for an example environment, all of whose tools are its own);
- `cheats`: kept tasks that some shortcut attempt passes (`agent_world.rollout.shortcuts`:
  number spray, candidate list, clock time, generic sentence, first call only, wrong-target
  write, repeated reads, a yes-saying judge; should read 0). A second table counts, per
  shortcut, the tasks it applies to and the tasks it passes.

Also prints the wall time and the mean gold-chain length (training sequences grow with it).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.envs import EnvRuntime, example_names, load_example  # noqa: E402
from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.rollout.shortcuts import SHORTCUTS, shortcut_attempts  # noqa: E402
from agent_world.synthesis.gates import gate_answer_from_state  # noqa: E402
from agent_world.synthesis.loop import (  # noqa: E402
    SynthesisConfig,
    stored_tasks,
    synthesize_env,
)
from agent_world.synthesis.synthesizer import chain_target  # noqa: E402
from agent_world.tasks.artefacts import artefacts  # noqa: E402
from agent_world.tasks.words import source_tools  # noqa: E402


def _holds_no_op_write(task, spec, rt) -> bool:
    """The gold chain, replayed from the task's start: does a write change nothing?"""
    with rt.open(spec, seed=task.seed) as episode:
        for call in task.chain:
            writes = spec.tool(call.tool).mutates
            before = episode.state_hash() if writes else ""
            obs = episode.step(call.tool, call.arguments)
            if not obs.ok:
                return False
            if writes and episode.state_hash() == before:
                return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-env", type=int, default=12)
    parser.add_argument("--env", action="append", help="example or catalog environment")
    parser.add_argument("--home", type=Path, help="arena home to read environments from")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="also write the raw numbers here")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="task-quality-"))
    source = Catalog.open(args.home) if args.home else None
    rows: list[dict] = []
    totals = {"seconds": 0.0, "tasks": 0, "calls": 0}
    suite = {name: {"applies": 0, "passes": 0, "examples": []} for name in SHORTCUTS}
    with EnvRuntime() as rt, Catalog.open(work) as cat:
        for name in args.env or example_names():
            spec = source.get_env(name) if source is not None else load_example(name)
            cat.put_env(spec, stage="example")
            t0 = time.perf_counter()
            synthesize_env(spec, SynthesisConfig(per_env=args.per_env, seed=args.seed), cat,
                           rt, run_id="quality")
            totals["seconds"] += time.perf_counter() - t0
            tasks = stored_tasks(cat, spec.fingerprint)
            totals["tasks"] += len(tasks)
            totals["calls"] += sum(len(t.chain) for t in tasks)
            rejected = defaultdict(Counter)
            for e in cat.ledger("synthesize", run_id="quality"):
                if e.subject.startswith(f"{spec.name}:"):
                    rejected[e.payload.get("level")][e.payload.get("gate")] += 1
            by_level = defaultdict(list)
            for t in tasks:
                by_level[t.difficulty.level].append(t)
            served = source_tools(spec)
            cheated: dict[str, int] = {}
            for t in tasks:
                results = shortcut_attempts(t, spec, rt)
                for r in results:
                    suite[r.name]["applies"] += 1
                    if r.passed:
                        suite[r.name]["passes"] += 1
                        suite[r.name]["examples"].append(f"{t.id}: {t.instruction[:90]}")
                cheated[t.id] = sum(r.passed for r in results)
            for level in sorted(set(by_level) | {lv for lv in rejected if lv}):
                kept = by_level.get(level, [])
                gated = len(kept) + sum(rejected[level].values())
                n = max(len(kept), 1)
                pairs = Counter(chain_target(t) for t in kept)
                bad = sum(not gate_answer_from_state(t, spec, rt).passed for t in kept)
                rows.append({
                    "env": name, "level": level, "tasks": len(kept), "candidates": gated,
                    "artefact_rate": sum(bool(artefacts(t.instruction, spec, t.chain))
                                         for t in kept) / n,
                    "candidate_artefact_rate": rejected[level]["artefacts"] / max(gated, 1),
                    "duplicates": sum(c - 1 for c in pairs.values()),
                    "chain": sum(t.difficulty.chain_length for t in kept) / n,
                    "tools": sum(t.difficulty.distinct_tools for t in kept) / n,
                    "condition": sum(t.difficulty.condition for t in kept) / n,
                    "aggregation": sum(t.difficulty.aggregation for t in kept) / n,
                    "no_op": sum(_holds_no_op_write(t, spec, rt) for t in kept),
                    "clock_world": bad, "survival": len(kept) / max(gated, 1),
                    "baseline": sum(t.pass_rate or 0 for t in kept) / n,
                    "obscured": sum(t.difficulty.obscured for t in kept) / n,
                    "distractors": sum(t.difficulty.distractors for t in kept) / n,
                    "cheats": sum(cheated[t.id] > 0 for t in kept),
                    # kept tasks whose gold chain calls one of the service's own tools
                    "source": sum(any(c.tool in served for c in t.chain) for t in kept) / n
                    if served else None,
                    "rejected": dict(rejected[level])})
    if source is not None:
        source.close()
    table = Table(title=f"Task quality: {args.per_env} tasks per environment, seed {args.seed}")
    cols = ["env", "L", "tasks", "cand", "artef %", "cand artef %", "dup", "chain", "tools",
            "cond %", "agg %", "no-op", "clock/world", "survive %", "baseline %", "obsc %", "distr",
            "src %", "cheats"]
    for c in cols:
        table.add_column(c, justify="left" if c == "env" else "right")
    for r in rows:
        table.add_row(r["env"], str(r["level"]), str(r["tasks"]), str(r["candidates"]),
                      f"{100 * r['artefact_rate']:.0f}", f"{100 * r['candidate_artefact_rate']:.0f}",
                      str(r["duplicates"]), f"{r['chain']:.2f}", f"{r['tools']:.2f}",
                      f"{100 * r['condition']:.0f}", f"{100 * r['aggregation']:.0f}",
                      str(r["no_op"]), str(r["clock_world"]), f"{100 * r['survival']:.0f}",
                      f"{100 * r['baseline']:.0f}", f"{100 * r['obscured']:.0f}",
                      f"{r['distractors']:.1f}",
                      "–" if r["source"] is None else f"{100 * r['source']:.0f}", str(r["cheats"]))
    console = Console(width=200)
    console.print(table)
    cheats = Table(title="Shortcut attempts over the kept tasks (a pass is a cheat that works)")
    for c in ("shortcut", "applies to", "passes"):
        cheats.add_column(c, justify="left" if c == "shortcut" else "right")
    for name, r in suite.items():
        cheats.add_row(name, str(r["applies"]), str(r["passes"]))
    console.print(cheats)
    for name, r in suite.items():
        for example in r["examples"][:3]:
            console.print(f"  {name} passes {example}")
    console.print(f"synthesis wall {totals['seconds']:.0f} s for {totals['tasks']} tasks; "
                  f"mean gold chain {totals['calls'] / max(totals['tasks'], 1):.2f} calls")
    # the catalog stays for reading the tasks and the synthesize ledger: say where it is
    console.print(f"tasks and ledger kept in {work} (an arena home; delete it when done)")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "totals": totals, "shortcuts": suite},
                                        indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
