"""Platform figures: graph invocations through `langgraph dev`, and catalog write throughput on
SQLite vs PostgreSQL with 1 and 8 writer processes.

    python benchmarks/server_bench.py                 # both parts
    python benchmarks/server_bench.py --runs 20 --clients 8 --writes 30
    python benchmarks/server_bench.py --skip-server   # only the catalog part

Server: a `langgraph dev --no-browser --no-reload` server on a free port serves the project's
graphs; the cheap graph is `diagnoser` on one stored evaluation (two attempts, offline
diagnoser: milliseconds of work, so the figure is the server's own cost). Each invocation is
a run on a new thread, waited for through `langgraph_sdk`: one client after another, then
`--clients` clients at once; beside them the same graph in-process, compiled without a
checkpointer and through the project's runner (SQLite checkpointer, durable thread).

Catalog: `benchmarks/catalog_bench.py`'s soak (mixed imports, mine runs and task writes on a
fresh catalog, audited for failures, lost and duplicated rows) with 1 and 8 processes on a
SQLite file and on PostgreSQL (the `pgserver` wheel).
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import httpx  # noqa: E402
from catalog_bench import _postgres, soak  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

console = Console()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_server(home: Path) -> tuple[subprocess.Popen, str]:
    exe = Path(sys.executable).parent / "langgraph"
    port = _free_port()
    env = dict(os.environ, LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false",
               AGENT_WORLD_HOME=str(home), PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([str(exe) if exe.exists() else "langgraph", "dev", "--no-browser",
                             "--no-reload", "--port", str(port)], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("langgraph dev exited; is langgraph-cli[inmem] installed?")
        try:
            if httpx.get(f"{url}/ok", timeout=1).status_code == 200:
                return proc, url
        except httpx.HTTPError:
            time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)
    raise RuntimeError("langgraph dev did not come up in 120 s")


def _seed_evaluation(home: Path) -> str:
    """Two airline tasks and one stored baseline evaluation of them: the diagnoser's input."""
    from agent_world.graphs import evaluate_graph as evaluate
    from agent_world.graphs.runner import invoke
    from agent_world.graphs.synthesize_graph import synthesize_tasks

    ids = synthesize_tasks(["airline"], home=home, per_env=2, levels=[1, 2])
    invoke(evaluate.build_graph(), {"tasks": ids, "policy": "baseline",
                                    "evaluation_id": "bench"}, home=home)
    return "bench"


def _rate(n: int, seconds: float) -> tuple[str, str, str]:
    return f"{seconds:.1f}", f"{60 * n / seconds:.0f}", f"{1000 * seconds / n:.0f}"


def server_part(runs: int, clients: int) -> Table:
    from langgraph_sdk import get_sync_client

    from agent_world.graphs.agents import diagnoser_agent as diagnoser
    from agent_world.graphs.runner import invoke

    table = Table(title=f"Graph invocations ({runs} runs of `diagnoser` per row)")
    for col in ("path", "runs", "s", "per min", "ms/run", "x in-process"):
        table.add_column(col, justify="left" if col == "path" else "right")
    with tempfile.TemporaryDirectory(prefix="aw-server-bench-") as tmp:
        home = Path(tmp)
        evaluation = _seed_evaluation(home)
        inputs = {"evaluation_id": evaluation}
        config = {"configurable": {"home": str(home)}}

        compiled = diagnoser.graph
        compiled.invoke(inputs, config)  # warm: imports, catalog schema
        t0 = time.perf_counter()
        for _ in range(runs):
            assert compiled.invoke(inputs, config)["text"]
        local = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in range(runs):
            assert invoke(diagnoser.build_graph(), inputs, thread_id=f"b{i}", home=home)["text"]
        runner = time.perf_counter() - t0

        proc, url = _start_server(home)
        try:
            client = get_sync_client(url=url)

            def one(_: int) -> None:
                thread = client.threads.create()["thread_id"]
                out = client.runs.wait(thread, "diagnoser", input=inputs)
                if not isinstance(out, dict) or not out.get("text"):
                    raise RuntimeError(f"diagnoser run failed: {out}")

            one(0)  # warm: the server imports the graph's modules on first use
            t0 = time.perf_counter()
            for i in range(runs):
                one(i)
            sequential = time.perf_counter() - t0
            t0 = time.perf_counter()
            with ThreadPoolExecutor(clients) as pool:
                list(pool.map(one, range(runs)))
            concurrent = time.perf_counter() - t0
        finally:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
    for label, seconds in (("in-process", local), ("runner (SQLite)", runner),
                           ("server, 1 client", sequential),
                           (f"server, {clients} clients", concurrent)):
        table.add_row(label, str(runs), *_rate(runs, seconds), f"{seconds / local:.1f}")
    return table


def catalog_part(writes: int, writers: list[int]) -> tuple[Table, bool]:
    table = Table(title=f"Catalog writes ({writes} mixed writes per writer process)")
    for col in ("backend", "writers", "writes", "fail", "lost", "dupes", "s", "w/s", "x SQLite"):
        table.add_column(col, justify="left" if col == "backend" else "right")
    bad = False
    with tempfile.TemporaryDirectory(prefix="aw-server-bench-pg-") as tmp:
        url, server = _postgres(Path(tmp))
        try:
            for n in writers:
                results: dict[str, dict[str, Any]] = {}
                sqlite_url = f"sqlite:///{Path(tmp) / f'catalog-{n}.sqlite'}"
                results["sqlite"] = soak(sqlite_url, n, writes)
                server.psql(f"CREATE DATABASE writers_{n};")
                results["postgres"] = soak(url.replace("/bench?", f"/writers_{n}?"), n, writes)
                for backend, r in results.items():
                    bad |= bool(r["failures"] or r["lost"] or r["duplicated"])
                    ratio = r["writes_per_s"] / max(results["sqlite"]["writes_per_s"], 1e-9)
                    table.add_row(backend, str(n), str(r["ok"]), str(len(r["failures"])),
                                  str(r["lost"]), str(r["duplicated"]), f"{r['seconds']:.1f}",
                                  f"{r['writes_per_s']:.0f}", f"{ratio:.2f}")
        finally:
            server.cleanup()
    return table, bad


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20, help="graph invocations per row")
    parser.add_argument("--clients", type=int, default=8, help="concurrent SDK clients")
    parser.add_argument("--writes", type=int, default=30, help="catalog writes per writer")
    parser.add_argument("--writers", default="1,8", help="writer process counts")
    parser.add_argument("--skip-server", action="store_true")
    parser.add_argument("--skip-catalog", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("LANGSMITH_TRACING", "false")
    bad = False
    if not args.skip_server:
        console.print(server_part(args.runs, args.clients))
    if not args.skip_catalog:
        table, bad = catalog_part(args.writes, [int(n) for n in args.writers.split(",")])
        console.print(table)
    console.print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
