"""Episodes per second through each ecosystem adapter's own client vs the project's direct API,
side by side in one run.

    python benchmarks/adapter_bench.py [--episodes 200] [--concurrency 8] [--only openenv|trl|verifiers]

An episode is the same work on both sides: open a fresh episode for a task (the airline
example's look-up drill: one read, then the answer), make the task's gold tool calls, submit
the answer and run the task check. "direct" is `EnvRuntime.open` / `Episode.step` /
`check_episode` in this process; the peer column goes through the adapter and the peer's own
client (for OpenEnv: an exported environment served by `python -m server.app`, driven by
OpenEnv's `MCPToolClient` over its WebSocket protocol; for TRL: the environment_factory
protocol as `GRPOTrainer` calls it; for verifiers: its own `evaluate` with an OpenAI client whose
model replays the gold chains in-process). Each row runs one episode at a time
(1 client) and `--concurrency` at once (clients or threads).

Adding a row: write `def bench_NAME(args, tasks, spec) -> list[Row]` and decorate it with
`@adapter_row("NAME")`; `direct_rate` gives the matching direct-API figure and `side_by_side`
alternates the two (best of `--repeats`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_world.envs import load_example  # noqa: E402
from agent_world.envs.episode import EnvRuntime  # noqa: E402
from agent_world.tasks.check import check_episode  # noqa: E402
from agent_world.training.drills import drill_tasks  # noqa: E402


@dataclass
class Row:
    adapter: str
    client: str
    concurrency: int
    episodes: int
    peer_eps: float
    direct_eps: float

    @property
    def ratio(self) -> float:
        return self.peer_eps / self.direct_eps if self.direct_eps else float("nan")


ROWS: dict[str, Callable[..., list[Row]]] = {}


def adapter_row(name: str) -> Callable[[Callable[..., list[Row]]], Callable[..., list[Row]]]:
    def register(fn: Callable[..., list[Row]]) -> Callable[..., list[Row]]:
        ROWS[name] = fn
        return fn
    return register


# -- the direct API ----------------------------------------------------------------------------
def _direct_episode(runtime: EnvRuntime, spec, task) -> float:
    ep = runtime.open(spec, seed=task.seed)
    try:
        for call in task.chain:
            ep.step(call.tool, call.arguments)
        return check_episode(task, ep, task.reference_answer).score
    finally:
        ep.close()


def direct_rate(spec, tasks, episodes: int, concurrency: int) -> float:
    """Episodes/s of the direct API: `episodes` episodes, `concurrency` threads at once."""
    with EnvRuntime(workers=2) as runtime:
        _direct_episode(runtime, spec, tasks[0])  # warm: template, worker
        start = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            scores = list(pool.map(lambda i: _direct_episode(runtime, spec,
                                                             tasks[i % len(tasks)]),
                                   range(episodes)))
        elapsed = time.perf_counter() - start
    assert all(s == 1.0 for s in scores), scores
    return episodes / elapsed


def side_by_side(peer: Callable[[], float], direct: Callable[[], float],
                 repeats: int) -> tuple[float, float]:
    """Best of `repeats` alternating runs of each (the machine is shared and noisy)."""
    peers, directs = [], []
    for _ in range(repeats):
        directs.append(direct())
        peers.append(peer())
    return max(peers), max(directs)


# -- OpenEnv -----------------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@adapter_row("openenv")
def bench_openenv(args: argparse.Namespace, tasks: list, spec) -> list[Row]:
    import httpx
    from openenv.core.env_server.mcp_types import CallToolAction

    from agent_world.integrations.openenv import SUBMIT_TOOL, ArenaEnvClient
    from agent_world.integrations.openenv_export import export_openenv

    out = Path(tempfile.mkdtemp(prefix="adapter-bench-")) / "openenv"
    export_openenv(spec, tasks, out, max_concurrent_envs=max(args.concurrency, 1) + 1)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                        os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-m", "server.app", "--host", "127.0.0.1",
                             "--port", str(port)], cwd=out, env=env, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("the OpenEnv server did not start")
            time.sleep(0.3)

        async def client_run(n: int, offset: int) -> list[float]:
            rewards = []
            async with ArenaEnvClient(base_url=url) as client:
                for i in range(n):
                    task = tasks[(offset + i) % len(tasks)]
                    await client.reset(task_id=task.id)
                    for call in task.chain:
                        await client.step(CallToolAction(tool_name=call.tool,
                                                         arguments=call.arguments))
                    last = await client.step(CallToolAction(tool_name=SUBMIT_TOOL, arguments={
                        "answer": json.dumps(task.reference_answer)}))
                    rewards.append(last.reward)
            return rewards

        async def run(episodes: int, clients: int) -> float:
            per = [episodes // clients + (1 if c < episodes % clients else 0)
                   for c in range(clients)]
            await client_run(2, 0)  # warm: the server's first session and template
            start = time.perf_counter()
            done = await asyncio.gather(*(client_run(n, c * 997) for c, n in enumerate(per)))
            elapsed = time.perf_counter() - start
            rewards = [r for part in done for r in part]
            assert rewards and all(r == 1.0 for r in rewards), rewards
            return episodes / elapsed

        rows = []
        for conc in sorted({1, args.concurrency}):
            peer, direct = side_by_side(
                lambda c=conc: asyncio.run(run(args.episodes, c)),
                lambda c=conc: direct_rate(spec, tasks, args.episodes, c), args.repeats)
            rows.append(Row("openenv", "MCPToolClient (WebSocket)", conc, args.episodes, peer,
                            direct))
        return rows
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


# -- TRL ---------------------------------------------------------------------------------------
@adapter_row("trl")
def bench_trl(args: argparse.Namespace, tasks: list, spec) -> list[Row]:
    """TRL's environment_factory protocol as GRPOTrainer drives it: instances from the factory
    (pooled and reused across batches), `reset(**row)`, the tool methods called with the
    parsed arguments from the trainer's threads, then the reward function with
    `environments=` (the arena check). No model: the calls are the gold chain."""
    from agent_world.integrations.trl import trl_setup

    by_id = {t.id: t for t in tasks}

    def rollout(env, row: dict) -> list[dict]:
        env.reset(**row)
        task = by_id[row["task_id"]]
        completion = []
        for call in task.chain:
            result = getattr(env, call.tool)(**call.arguments)
            completion.append({"role": "tool", "name": call.tool, "content": result})
        completion.append({"role": "assistant", "content": json.dumps(task.reference_answer)})
        return completion

    def run(episodes: int, batch: int) -> float:
        with EnvRuntime(workers=2) as runtime:
            setup = trl_setup(tasks, [spec], runtime=lambda: runtime)
            envs = [setup.environment_factory() for _ in range(batch)]
            rows = [setup.rows[i % len(setup.rows)] for i in range(episodes)]
            rewards: list = []
            with ThreadPoolExecutor(batch) as pool:
                for i, env in enumerate(envs):  # warm: template, worker
                    rollout(env, setup.rows[i % len(setup.rows)])
                start = time.perf_counter()
                for at in range(0, episodes, batch):
                    part = rows[at:at + batch]
                    completions = list(pool.map(rollout, envs[:len(part)], part))
                    rewards += setup.reward_funcs[0](completions=completions,
                                                     environments=envs[:len(part)])
                elapsed = time.perf_counter() - start
            for env in envs:
                env._close()
        assert rewards and all(r == 1.0 for r in rewards), rewards
        return episodes / elapsed

    rows = []
    for conc in sorted({1, args.concurrency}):
        peer, direct = side_by_side(lambda c=conc: run(args.episodes, c),
                                    lambda c=conc: direct_rate(spec, tasks, args.episodes, c),
                                    args.repeats)
        rows.append(Row("trl", "env factory", conc, args.episodes, peer, direct))
    return rows


# -- verifiers ---------------------------------------------------------------------------------
@adapter_row("verifiers")
def bench_verifiers(args: argparse.Namespace, tasks: list, spec) -> list[Row]:
    """verifiers' own `evaluate` (its rollout loop, tool calls through its OpenAI chat client,
    rubric scoring) on `load_environment()`; the model replays the gold chains behind an
    in-process OpenAI-compatible transport (no server, no network)."""
    import logging

    import verifiers as vf

    from agent_world.integrations.replay import replay_openai_client
    from agent_world.integrations.verifiers_env import load_environment

    logging.getLogger("verifiers").setLevel(logging.WARNING)

    def run(episodes: int, concurrency: int) -> float:
        with EnvRuntime(workers=2) as runtime:
            # one row per episode (tasks cycled), one rollout each: verifiers runs a group's
            # rollouts together, so only single-rollout groups keep `max_concurrent` exact
            env = load_environment([tasks[i % len(tasks)] for i in range(episodes)], [spec],
                                   runtime=runtime)
            client = vf.OpenAIChatCompletionsClient(replay_openai_client(tasks))
            env.evaluate_sync(client, model="replay", num_examples=2)  # warm
            start = time.perf_counter()
            out = env.evaluate_sync(client, model="replay", max_concurrent=concurrency)[
                "outputs"]
            elapsed = time.perf_counter() - start
        assert out and all(o["reward"] == 1.0 for o in out), [o["reward"] for o in out]
        return len(out) / elapsed

    rows = []
    for conc in sorted({1, args.concurrency}):
        peer, direct = side_by_side(lambda c=conc: run(args.episodes, c),
                                    lambda c=conc: direct_rate(spec, tasks, args.episodes, c),
                                    args.repeats)
        rows.append(Row("verifiers", "vf evaluate", conc, args.episodes, peer, direct))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=2,
                        help="Alternating runs of each side; the best of them is shown.")
    parser.add_argument("--only", action="append", help="Only this adapter (repeatable).")
    args = parser.parse_args()
    spec = load_example("airline")
    tasks = drill_tasks("lookup", limit=16)
    rows: list[Row] = []
    for name, bench in ROWS.items():
        if args.only and name not in args.only:
            continue
        try:
            rows += bench(args, tasks, spec)
        except ImportError as exc:
            Console().print(f"[yellow]{name}: skipped ({exc.name or exc} is not installed)")
    table = Table(title=f"Episodes/s: peer client vs direct API ({args.episodes} episodes, "
                        f"{len(tasks)} look-up tasks, airline)")
    for col in ("adapter", "client", "at once", "peer ep/s", "direct ep/s", "peer/direct"):
        table.add_column(col, justify="left" if col in ("adapter", "client") else "right")
    for r in rows:
        table.add_row(r.adapter, r.client, str(r.concurrency), f"{r.peer_eps:.1f}",
                      f"{r.direct_eps:.1f}", f"{r.ratio:.2f}x")
    Console().print(table)


if __name__ == "__main__":
    main()
