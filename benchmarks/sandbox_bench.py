"""Sandbox benchmark: the escape-attempt table, cold vs warm `run_code`, and the environment
engine with its tool workers sandboxed vs unsandboxed (same run, interleaved rounds).

    .venv/bin/python benchmarks/sandbox_bench.py            # full run (a few minutes on 2 cores)
    .venv/bin/python benchmarks/sandbox_bench.py --quick    # smoke run
    .venv/bin/python benchmarks/sandbox_bench.py --json out.json

The security table runs the attempts the test suite runs (tests/integration/escape_attempts.py).
Engine figures are env_bench's (`engine_figures`): its benchmark environment (10 tables, 1,000
rows) sandboxed, unsandboxed and in-process, each round measuring both modes back to back (the
table shows medians over rounds, so machine load hits both columns alike), and the large
environment (benchmarks/large_env.py) in both modes against its in-process baseline.
"""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "benchmarks"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from env_bench_figures import engine_figures, figures_title, render_figures  # noqa: E402
from env_bench_phases import DEFAULT_THREADS, DEFAULT_WORKERS, load_average  # noqa: E402
from env_bench_store import build_spec  # noqa: E402

from agent_world.sandbox import LocalSandbox  # noqa: E402
from tests.integration.escape_attempts import ATTEMPTS, Arena  # noqa: E402

TARGET_WARM_RATIO = 10.0


def security() -> list[dict[str, Any]]:
    arena = Arena()
    rows = []
    try:
        for name, attempt in ATTEMPTS:
            t = time.perf_counter()
            out = attempt(arena)
            rows.append({"attempt": name, "contained": out.contained, "host_saw": out.host_saw,
                         "s": time.perf_counter() - t})
    finally:
        arena.close()
    return rows


def run_code_figures(n_cold: int, n_warm: int) -> dict[str, Any]:
    cold = []
    for _ in range(n_cold):
        t = time.perf_counter()
        with LocalSandbox() as sbx:
            assert sbx.run_code("1 + 1").value == 2
            cold.append((time.perf_counter() - t) * 1e3)
    blobs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, n in (("initial.sqlite", 100), ("final.sqlite", 101)):
            with sqlite3.connect(Path(tmp) / name) as conn:
                conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
                conn.executemany("INSERT INTO t (v) VALUES (?)", [(str(i),) for i in range(n)])
            blobs[name] = (Path(tmp) / name).read_bytes()
    verify = ("import sqlite3\n"
              "def n(p):\n    return sqlite3.connect(p).execute('SELECT count(*) FROM t')"
              ".fetchone()[0]\n{'added': n('final.sqlite') - n('initial.sqlite')}")
    warm, fresh, evaluate = [], [], []
    with LocalSandbox() as sbx:
        sbx.run_code("1")
        for _ in range(n_warm):
            t = time.perf_counter()
            sbx.run_code("1 + 1")
            warm.append((time.perf_counter() - t) * 1e3)
        for _ in range(max(10, n_warm // 5)):
            t = time.perf_counter()
            sbx.run_code("1 + 1", fresh=True)
            fresh.append((time.perf_counter() - t) * 1e3)
        for _ in range(max(10, n_warm // 5)):
            t = time.perf_counter()
            assert sbx.evaluate(verify, files=blobs) == {"added": 1}
            evaluate.append((time.perf_counter() - t) * 1e3)
    return {"cold_p50_ms": statistics.median(cold), "warm_p50_ms": statistics.median(warm),
            "fresh_p50_ms": statistics.median(fresh),
            "evaluate_p50_ms": statistics.median(evaluate), "n_cold": n_cold, "n_warm": n_warm,
            "db_bytes": sum(len(b) for b in blobs.values())}


def render(res: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(width=None if sys.stdout.isatty() else 170)
    sec = Table(title="Escape attempts against the sandboxed engine (one worker, two "
                      "environments) and run_code")
    sec.add_column("Attempt")
    sec.add_column("Contained?", justify="center")
    sec.add_column("What the host saw")
    for row in res["security"]:
        sec.add_row(row["attempt"], "[green]yes[/]" if row["contained"] else "[red]NO[/]",
                    row["host_saw"])
    console.print(sec)

    rc = res["run_code"]
    ratio = rc["cold_p50_ms"] / rc["warm_p50_ms"]
    t1 = Table(title="run_code: cold start vs warm sandbox")
    for col in ("Metric", "Value", "Target", "Met?"):
        t1.add_column(col, justify="left" if col == "Metric" else "right")
    t1.add_row("Cold: new sandbox + first run_code (p50)", f"{rc['cold_p50_ms']:.1f} ms", "", "")
    t1.add_row("Warm run_code (p50)", f"{rc['warm_p50_ms']:.3f} ms", "", "")
    t1.add_row("Cold / warm", f"{ratio:.0f}x", f">= {TARGET_WARM_RATIO:g}x",
               "[green]yes[/]" if ratio >= TARGET_WARM_RATIO else "[red]NO[/]")
    t1.add_row("Warm run_code, fresh=True (forked copy of the kernel, p50)",
               f"{rc['fresh_p50_ms']:.2f} ms", "", "")
    t1.add_row("Warm evaluate (fresh): write 2 SQLite files + verify -> JSON (p50)",
               f"{rc['evaluate_p50_ms']:.2f} ms", "", f"{rc['db_bytes'] >> 10} KiB of files")
    console.print(t1)

    render_figures(res["engine"], figures_title(
        res["engine"], res["config"]["workers"], res["config"]["threads"],
        res["config"]["load_start"], res["config"]["load_end"]))
    console.print(f"wall time {res['wall_s']:.0f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run with smaller counts")
    ap.add_argument("--json", metavar="PATH", help="also write the raw figures as JSON here")
    ap.add_argument("--workers", type=int, default=DEFAULT_WORKERS)
    ap.add_argument("--threads", type=int, default=DEFAULT_THREADS)
    ap.add_argument("--no-large", action="store_true",
                    help="leave out the large environment (benchmarks/large_env.py)")
    args = ap.parse_args(argv)
    args.rounds = 2 if args.quick else 3
    args.n_reset = 300 if args.quick else 1000
    args.n_step = 600 if args.quick else 2000
    args.target_steps = 2048 if args.quick else 4096
    logging.getLogger("agent_world").setLevel(logging.ERROR)  # the unsandboxed runs warn

    started = time.perf_counter()
    res: dict[str, Any] = {"config": {"quick": args.quick, "workers": args.workers,
                                      "threads": args.threads, "rounds": args.rounds,
                                      "load_start": load_average()}}
    res["security"] = security()
    res["run_code"] = run_code_figures(5 if args.quick else 15, 200 if args.quick else 1000)
    from large_env import build_spec as build_large_spec

    res["engine"] = engine_figures(
        build_spec(), None if args.no_large else build_large_spec(), workers=args.workers,
        threads=args.threads, rounds=args.rounds, n_reset=args.n_reset, n_step=args.n_step,
        target_steps=args.target_steps, n_large=200 if args.quick else 600)
    res["config"]["load_end"] = load_average()
    res["wall_s"] = time.perf_counter() - started
    render(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return 0 if all(r["contained"] for r in res["security"]) else 1


if __name__ == "__main__":
    sys.exit(main())
