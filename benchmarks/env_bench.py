"""Environment-engine benchmark: reset / step latency, concurrency, memory, and a contrast with
one web-server process per environment instance.

    .venv/bin/python benchmarks/env_bench.py            # full run (about a minute on 2 cores)
    .venv/bin/python benchmarks/env_bench.py --quick    # smoke run (well under 30 s)
    .venv/bin/python benchmarks/env_bench.py --json out.json

Everything is measured in one run against a benchmark EnvSpec built in code: 10 tables,
1,000 seed rows (generated with random.Random(0)), foreign keys between tables, one read tool
(`get_item`, one product row by primary key) and one write tool (`restock`). The script prints
one Rich table; `--json PATH` also writes the raw figures. Beside it: the environment
(env_bench_store.py), the phases measured (env_bench_phases.py) and the sandboxed /
unsandboxed / in-process figures with the targets (env_bench_figures.py).

Memory is reported as RSS summed over the process tree (this process + its worker children),
sampled in a background thread. Episode databases are files in the runtime's working directory,
which is /dev/shm (RAM-backed) where available: that RAM is not in any process's RSS, so the
table reports it separately and the per-episode memory figure includes it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import httpx
import psutil
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a plain script from anywhere
    sys.path.insert(0, str(ROOT))
if str(ROOT / "benchmarks") not in sys.path:  # the large environment lives next to this file
    sys.path.insert(0, str(ROOT / "benchmarks"))

from env_bench_figures import (  # noqa: E402
    TARGET_LARGE_P95_MS,
    TARGET_LARGE_RATIO,
    TARGET_LARGE_RESET_P50_MS,
    TARGET_RESET_P50_MS,
    TARGET_RSS_BYTES,
    TARGET_STEP_P50_MS,
    engine_figures,
    figure_targets,
    figures_title,
    render_figures,
)
from env_bench_phases import (  # noqa: E402
    DEFAULT_THREADS,
    DEFAULT_WORKERS,
    bench_cold_open,
    bench_concurrency,
    bench_large,
    bench_open_plus_step,
    bench_reset,
    bench_step,
    load_average,
    mib,
)
from env_bench_store import build_spec  # noqa: E402
from large_env import build_spec as build_large_spec  # noqa: E402

from agent_world.envs import EnvRuntime  # noqa: E402

# ---------------------------------------------------------------------------------------------
# Contrast: one FastAPI/uvicorn process per environment instance
# ---------------------------------------------------------------------------------------------

SERVER_APP = textwrap.dedent('''\
    """One environment instance as its own web server: own SQLite copy, GET /items/{id}."""
    import socket
    import sqlite3
    import sys

    import uvicorn
    from fastapi import FastAPI, HTTPException

    source, target, fd = sys.argv[1], sys.argv[2], int(sys.argv[3])
    src = sqlite3.connect(source)
    db = sqlite3.connect(target, check_same_thread=False)
    src.backup(db)  # this instance's own copy of the benchmark database
    src.close()
    db.row_factory = sqlite3.Row
    app = FastAPI()


    @app.get("/items/{item_id}")
    async def get_item(item_id: int):
        row = db.execute("SELECT * FROM products WHERE id = ?", (item_id,)).fetchone()
        if row is None:
            raise HTTPException(404, f"no item with id {item_id}")
        return dict(row)


    # The parent bound 127.0.0.1:0 and listens; the socket is inherited (no port race).
    sock = socket.socket(fileno=fd)
    uvicorn.Server(uvicorn.Config(app, log_level="warning", access_log=False)).run(sockets=[sock])
    ''')


def bench_servers(template: Path, n: int) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="agent-world-bench-servers-"))
    procs: list[subprocess.Popen[bytes]] = []
    try:
        app = tmp / "instance_app.py"
        app.write_text(SERVER_APP)
        source = tmp / "benchmark.sqlite"
        shutil.copyfile(template, source)
        first_answer_s: list[float] = []
        with httpx.Client(timeout=httpx.Timeout(60.0)) as client:
            for i in range(n):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                try:
                    sock.bind(("127.0.0.1", 0))
                    sock.listen(64)
                    port = sock.getsockname()[1]
                    t0 = time.perf_counter()
                    proc = subprocess.Popen(
                        [sys.executable, str(app), str(source), str(tmp / f"instance{i}.sqlite"),
                         str(sock.fileno())],
                        pass_fds=(sock.fileno(),), cwd=tmp, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                    procs.append(proc)
                finally:
                    sock.close()  # the child holds the listening socket now
                # The kernel queues the connection until the server accepts: this call waits
                # for start-up, then is served (a poll loop would only add its sleep interval).
                try:
                    r = client.get(f"http://127.0.0.1:{port}/items/{1 + i}")
                except httpx.HTTPError as exc:
                    err = proc.stderr.read().decode(errors="replace") if proc.poll() is not None else ""
                    raise RuntimeError(f"server instance {i} did not answer: {exc}\n{err}") from exc
                first_answer_s.append(time.perf_counter() - t0)
                if r.status_code != 200 or r.json().get("id") != 1 + i:
                    raise RuntimeError(f"server instance {i} answered {r.status_code}: {r.text[:200]}")
        rss = []
        for proc in procs:  # all n instances are up, each has served one request
            p = psutil.Process(proc.pid)
            rss.append(sum(q.memory_info().rss for q in [p, *p.children(recursive=True)]))
        return {"instances": n, "first_answer_s": first_answer_s,
                "mean_first_answer_ms": sum(first_answer_s) / n * 1e3,
                "rss_per_instance_bytes": rss, "mean_rss_bytes": sum(rss) / n,
                "db_bytes_per_instance": (tmp / "instance0.sqlite").stat().st_size}
    finally:
        for proc in procs:  # every server this run started, by its own pid
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            if proc.stderr:
                proc.stderr.close()
        shutil.rmtree(tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------
def render(res: dict[str, Any]) -> None:
    cfg = res["config"]
    table = Table(title=(f"agent_world env engine: {cfg['spec_tables']} tables, "
                         f"{cfg['spec_rows']:,} rows; workers={cfg['workers']}, "
                         f"threads={cfg['threads']}, {cfg['cpus']} CPUs"
                         + (" [--quick]" if cfg["quick"] else "")))
    table.add_column("Metric")
    table.add_column("Value", justify="right")
    table.add_column("Target", justify="right")
    table.add_column("Met?", justify="center")
    table.add_column("Detail")

    def met(ok: bool) -> str:
        return "[green]yes[/]" if ok else "[red]NO[/]"

    c = res["cold"]
    table.add_row("First open + first step (cold)",
                  f"{c['first_open_ms']:.1f} + {c['first_step_ms']:.1f} ms", "", "",
                  "template build; worker compiles the tools")
    r = res["reset"]
    table.add_row("Reset p50", f"{r['p50_ms']:.3f} ms", f"<= {TARGET_RESET_P50_MS:g} ms",
                  met(r["p50_ms"] <= TARGET_RESET_P50_MS),
                  f"n={r['n']:,}; template {r['template_bytes'] / 1024:.0f} KiB")
    table.add_row("Reset p95", f"{r['p95_ms']:.3f} ms", "", "", "")
    s = res["step"]
    table.add_row("Step p50 (get_item via worker)", f"{s['p50_ms']:.3f} ms",
                  f"<= {TARGET_STEP_P50_MS:g} ms", met(s["p50_ms"] <= TARGET_STEP_P50_MS),
                  f"n={s['n']:,}; one episode, {s['steps_per_s']:,.0f} steps/s")
    table.add_row("Step p95 (get_item via worker)", f"{s['p95_ms']:.3f} ms", "", "", "")
    for lv in res["concurrency"]:
        table.add_row(f"Concurrent: {lv['episodes']:,} open episode(s)",
                      f"{lv['steps_per_s']:,.0f} steps/s", "", "",
                      f"{lv['steps']:,} steps (read+write x{lv['rounds']} each), "
                      f"{lv['threads']} thread(s); opened in {lv['open_s'] * 1e3:,.0f} ms")
    big = res["concurrency"][-1]
    peak = big["peak_tree_rss_bytes"]
    table.add_row(f"Peak RSS, {big['episodes']:,} episodes (process tree)", mib(peak),
                  f"<= {mib(TARGET_RSS_BYTES)}", met(peak <= TARGET_RSS_BYTES),
                  f"this process + {cfg['workers']} workers; baseline "
                  f"{mib(big['baseline_tree_rss_bytes'])}")
    table.add_row(f"Episode DB files, {big['episodes']:,} episodes", mib(big["episode_files_bytes"]),
                  "", "", f"under {cfg['workdir_fs']}: RAM-backed if tmpfs, and in no RSS")
    total = peak + big["episode_files_bytes"]
    table.add_row(f"RSS + episode files, {big['episodes']:,} episodes", mib(total),
                  f"<= {mib(TARGET_RSS_BYTES)}", met(total <= TARGET_RSS_BYTES), "")
    o = res["open_step"]
    table.add_row("open_episode + 1 step (warm, new file)", f"{o['mean_ms']:.2f} ms", "", "",
                  f"mean of {o['n']}; p50 {o['p50_ms']:.2f} ms")
    table.add_row("open_episode + 1 step (closed one reused)", f"{o['reused_mean_ms']:.2f} ms",
                  "", "", f"mean of {o['n']}; p50 {o['reused_p50_ms']:.2f} ms")
    table.add_row("Memory per episode", f"{res['per_episode_bytes'] / 1024:,.0f} KiB", "", "",
                  "(peak RSS - baseline + DB files) / episodes; all-in (workers and this "
                  f"process included) {res['all_in_per_episode_bytes'] / 1024:,.0f} KiB")
    w = res["servers"]
    table.add_row(f"Web server per instance: first answer ({w['instances']} inst.)",
                  f"{w['mean_first_answer_ms']:,.0f} ms", "", "",
                  "FastAPI+uvicorn process start + own SQLite copy + 1 GET, mean")
    table.add_row("Web server per instance: RSS", mib(w["mean_rss_bytes"]), "", "",
                  "mean per instance process")
    table.add_row("Ratio: time to first answer", f"{res['ratio_time']:,.0f}x", "", "",
                  "web server / (open_episode + 1 step)")
    table.add_row("Ratio: memory per instance", f"{res['ratio_memory']:,.0f}x", "", "",
                  "web server RSS / memory per episode")
    table.add_row("Benchmark wall time", f"{res['wall_s']:.1f} s", "", "", "")
    # a pipe or a log gets a wide table too (Rich assumes 80 columns when not on a terminal)
    Console(width=None if sys.stdout.isatty() else 160).print(table)


def render_large(res: dict[str, Any]) -> None:
    """The large-environment rows only (--large-only)."""
    table = Table(title=f"agent_world env engine: large environment, {res['config']['cpus']} CPUs")
    for col in ("Mode", "Step p50", "In-process p50", "Ratio", "Step p95", "In-process p95",
                "No-gap p50", "Reset p50", "Reset p95", "Clean reset p50"):
        table.add_column(col, justify="left" if col == "Mode" else "right")
    for lg in res["large"]:
        table.add_row("sandboxed" if lg["sandbox"] else "no sandbox",
                      f"{lg['engine_p50_ms']:.3f} ms", f"{lg['inprocess_p50_ms']:.3f} ms",
                      f"{lg['ratio_p50']:.1f}x", f"{lg['engine_p95_ms']:.3f} ms",
                      f"{lg['inprocess_p95_ms']:.3f} ms", f"{lg['engine_tight_p50_ms']:.3f} ms",
                      f"{lg['reset_p50_ms']:.3f} ms", f"{lg['reset_p95_ms']:.3f} ms",
                      f"{lg['clean_reset_p50_ms']:.3f} ms")
    lg = res["large"][0]
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    print(f"load average {res['load_start']} at the start, {res['load_end']} at the end")
    print(f"{lg['tables']} tables, {lg['rows']:,} rows, {mib(lg['db_bytes'])}; {lg['n']} steps "
          f"each way, {lg['gap_ms']:.0f} ms between steps; targets: ratio <= "
          f"{TARGET_LARGE_RATIO:g}x, p95 <= {TARGET_LARGE_P95_MS:g} ms, reset p50 <= "
          f"{TARGET_LARGE_RESET_P50_MS:g} ms")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run with smaller counts")
    ap.add_argument("--json", metavar="PATH", help="also write the raw figures as JSON here")
    ap.add_argument("--workers", type=int, default=DEFAULT_WORKERS, help="tool worker processes")
    ap.add_argument("--threads", type=int, default=DEFAULT_THREADS, help="stepping threads")
    ap.add_argument("--servers", type=int, default=None,
                    help="web-server instances in the contrast (default 8, 3 with --quick)")
    ap.add_argument("--large-only", action="store_true",
                    help="only the large-environment case (both sandbox modes)")
    args = ap.parse_args(argv)

    q = args.quick
    n_reset = 500 if q else 2000
    n_step = 1000 if q else 5000
    n_open_step = 100 if q else 300
    levels = [1, 64, 1024]
    target_steps = 2048 if q else 8192
    n_servers = args.servers if args.servers is not None else (3 if q else 8)

    started = time.perf_counter()
    spec = build_spec()
    res: dict[str, Any] = {"load_start": load_average()}
    large_spec = build_large_spec()
    n_large = 200 if q else 600

    def large_targets(large: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
        return {f"large_{'sandboxed' if lg['sandbox'] else 'unsandboxed'}_{key}": {
                "target": target, "value": lg[key], "met": lg[key] <= target}
                for lg in large
                for key, target in (("ratio_p50", TARGET_LARGE_RATIO),
                                    ("engine_p95_ms", TARGET_LARGE_P95_MS),
                                    ("reset_p50_ms", TARGET_LARGE_RESET_P50_MS))}

    if args.large_only:
        res["large"] = [bench_large(large_spec, sandbox, n_large, 0.02)
                        for sandbox in (False, True)]
        res["config"] = {"quick": q, "workers": 1, "threads": 1, "cpus": os.cpu_count(),
                         "spec_tables": len(large_spec.tables),
                         "spec_rows": large_spec.row_count()}
        res["targets"] = large_targets(res["large"])
        res["wall_s"] = time.perf_counter() - started
        res["load_end"] = load_average()
        render_large(res)
        if args.json:
            Path(args.json).write_text(json.dumps(res, indent=2))
        return 0 if all(t["met"] for t in res["targets"].values()) else 1
    with EnvRuntime(workers=args.workers) as runtime:
        mounts = [m for m in psutil.disk_partitions(all=True)
                  if str(runtime.workdir).startswith(m.mountpoint.rstrip("/") + "/")]
        mount = max(mounts, key=lambda m: len(m.mountpoint), default=None)
        fs = f"{mount.mountpoint} ({mount.fstype})" if mount else str(runtime.workdir)
        res["config"] = {
            "quick": q, "workers": args.workers, "threads": args.threads, "levels": levels,
            "cpus": os.cpu_count(), "python": platform.python_version(),
            "spec_tables": len(spec.tables), "spec_rows": spec.row_count(),
            "spec_fingerprint": spec.fingerprint, "workdir_fs": fs,
        }
        res["cold"] = bench_cold_open(runtime, spec)
        res["reset"] = bench_reset(runtime, spec, n_reset)
        res["step"] = bench_step(runtime, spec, n_step)
        res["concurrency"] = [bench_concurrency(runtime, spec, lv, args.threads, target_steps)
                              for lv in levels]
        res["open_step"] = bench_open_plus_step(runtime, spec, n_open_step)
        template = runtime.prepare(spec)
        big = res["concurrency"][-1]
        res["per_episode_bytes"] = (
            max(0, big["peak_tree_rss_bytes"] - big["baseline_tree_rss_bytes"])
            + big["episode_files_bytes"]) / big["episodes"]
        res["all_in_per_episode_bytes"] = (
            big["peak_tree_rss_bytes"] + big["episode_files_bytes"]) / big["episodes"]
        res["servers"] = bench_servers(template, n_servers)
    res["figures"] = engine_figures(
        spec, large_spec, workers=args.workers, threads=args.threads, rounds=1 if q else 2,
        n_reset=n_reset // 2, n_step=n_step // 2, target_steps=target_steps, n_large=n_large)
    res["load_end"] = load_average()
    res["ratio_time"] = res["servers"]["mean_first_answer_ms"] / res["open_step"]["mean_ms"]
    res["ratio_memory"] = res["servers"]["mean_rss_bytes"] / res["per_episode_bytes"]
    res["targets"] = {
        "reset_p50_ms": {"target": TARGET_RESET_P50_MS, "value": res["reset"]["p50_ms"],
                         "met": res["reset"]["p50_ms"] <= TARGET_RESET_P50_MS},
        "step_p50_ms": {"target": TARGET_STEP_P50_MS, "value": res["step"]["p50_ms"],
                        "met": res["step"]["p50_ms"] <= TARGET_STEP_P50_MS},
        "rss_1024_bytes": {"target": TARGET_RSS_BYTES, "value": big["peak_tree_rss_bytes"],
                           "met": big["peak_tree_rss_bytes"] <= TARGET_RSS_BYTES},
        **figure_targets(res["figures"]),
        **large_targets(list(res["figures"]["large"].values())),
    }
    res["wall_s"] = time.perf_counter() - started
    render(res)
    render_figures(res["figures"], figures_title(res["figures"], args.workers, args.threads,
                                                 res["load_start"], res["load_end"]))
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return 0 if all(t["met"] for t in res["targets"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
