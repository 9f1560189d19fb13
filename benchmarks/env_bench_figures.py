"""The engine figures of `env_bench.py` (and `sandbox_bench.py`), every mode in one run:
sandboxed, unsandboxed and the same tool code on an in-process SQLite connection; and the
targets the engine is held to."""

from __future__ import annotations

import os
import statistics
import sys
import time
from typing import Any

from env_bench_phases import bench_cold_open, bench_concurrency, bench_large, check, mib, pct
from large_env import InProcess
from rich.console import Console
from rich.table import Table

from agent_world.envs import EnvRuntime, EnvSpec

# the targets of env_bench's table, the large environment and the figures below
TARGET_RESET_P50_MS = 5.0
TARGET_STEP_P50_MS = 2.0
TARGET_RSS_BYTES = 4 * 1024**3
TARGET_LARGE_RATIO = 3.0  # large env: engine step p50 / same tool code in-process
TARGET_LARGE_P95_MS = 1.0
TARGET_LARGE_RESET_P50_MS = 0.3
TARGET_SANDBOX_RATIO = 1.5  # sandboxed / unsandboxed, reset and step p50
TARGET_STEPS_PER_S = 3000.0  # 1,024 concurrent episodes, sandboxed

# ---------------------------------------------------------------------------------------------
# The figures of the engine and sandbox targets, every mode in one run: sandboxed, unsandboxed
# and the same tool code on an in-process SQLite connection (sandbox_bench.py prints them too)
# ---------------------------------------------------------------------------------------------

MODES = {"sandboxed": True, "unsandboxed": False}
NO_TURNS = "sandboxed, no turns"
NO_SPIN = "sandboxed, workers sleep at once"
PINNED = "sandboxed, stepping threads on one core"


def bench_paired(spec: EnvSpec, workers: int, n_reset: int, n_step: int) -> dict[str, Any]:
    """Read steps, write steps and resets of the benchmark environment, sandboxed, unsandboxed
    and in-process taking turns call by call (so load that comes and goes hits all three
    alike): p50 per mode."""
    runtimes = {mode: EnvRuntime(workers=workers, sandbox=sandbox)
                for mode, sandbox in MODES.items()}
    try:
        eps = {mode: rt.open(spec, seed=2) for mode, rt in runtimes.items()}
        rt = runtimes["unsandboxed"]
        base = InProcess(spec, rt.prepare(spec), rt.workdir)
        steppers = {**{m: ep.step for m, ep in eps.items()}, "inprocess": base.step}
        samples: dict[str, dict[str, list[float]]] = {m: {"read": [], "write": [], "reset": []}
                                                      for m in steppers}
        calls = {"read": ("get_item", lambda i: {"id": 1 + i % 150}),
                 "write": ("restock", lambda i: {"id": 1 + i % 150, "quantity": 1})}
        for kind, (tool, args) in calls.items():
            for i in range(-50, n_step):  # the first 50: warm-up
                for mode, step in steppers.items():
                    t = time.perf_counter()
                    out = step(tool, args(i))
                    took = (time.perf_counter() - t) * 1e3
                    if mode != "inprocess":
                        check(out)
                    if i >= 0:
                        samples[mode][kind].append(took)
        for i in range(n_reset):
            for mode, ep in eps.items():
                if i % 10 == 0:  # a dirty episode now and then: reset must bring it back
                    check(ep.step("restock", {"id": 1 + i % 150, "quantity": 1}))
                t = time.perf_counter()
                ep.reset()
                samples[mode]["reset"].append((time.perf_counter() - t) * 1e3)
        for ep in eps.values():
            assert ep.diff().empty, "reset did not restore the seed state"
            ep.close()
        base.close()
    finally:
        for rt in runtimes.values():
            rt.close()
    return {mode: {f"{kind}_p50_ms": pct(xs, 50) for kind, xs in kinds.items() if xs}
            for mode, kinds in samples.items()}


def engine_figures(spec: EnvSpec, large_spec: EnvSpec | None, *, workers: int, threads: int,
                   rounds: int, n_reset: int, n_step: int, target_steps: int,
                   n_large: int) -> dict[str, Any]:
    """Reset, read and write steps in both modes and in-process taking turns call by call;
    1,024 concurrent episodes in both modes in interleaved rounds (medians over rounds); the
    large environment in both modes against its in-process baseline."""
    res: dict[str, Any] = bench_paired(spec, workers, n_reset, n_step)
    # sandboxed without turns: stepping threads contending for the interpreter lock freely
    # (what EnvRuntime(take_turns=False) does; see agent_world.envs.pool.Turns)
    variants = {**{m: {"sandbox": sb} for m, sb in MODES.items()},
                NO_TURNS: {"sandbox": True, "take_turns": False},
                # workers that sleep as soon as they sent a frame (worker.InputWaiter)
                NO_SPIN: {"sandbox": True, "worker_spin_us": 0}}
    # the stepping threads pinned to one core (the workers keep every CPU): the application's
    # lever on machines where waking a thread on another core is slow (docs/environments.md)
    cpus = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    one_core = min(cpus, default=None)
    if len(cpus) > 1:
        variants[PINNED] = {"sandbox": True}
    conc: dict[str, list[dict[str, Any]]] = {m: [] for m in variants}
    for _ in range(rounds):
        for mode, kwargs in variants.items():
            with EnvRuntime(workers=workers, **kwargs) as rt:
                bench_cold_open(rt, spec)
                conc[mode].append(bench_concurrency(rt, spec, 1024, threads, target_steps,
                                                    one_core if mode == PINNED else None))
    for mode, runs in conc.items():
        res.setdefault(mode, {})
        res[mode]["conc_steps_per_s"] = statistics.median(r["steps_per_s"] for r in runs)
        res[mode]["conc_bytes"] = statistics.median(
            r["peak_tree_rss_bytes"] + r["episode_files_bytes"] for r in runs)
    res["rounds"] = rounds
    if large_spec is not None:
        res["large"] = {mode: bench_large(large_spec, sandbox, n_large, 0.02)
                        for mode, sandbox in MODES.items()}
    return res


def render_figures(res: dict[str, Any], title: str) -> None:
    table = Table(title=title)
    for col in ("Figure", "Sandboxed", "Unsandboxed", "In-process SQLite",
                "Sandboxed / unsandboxed", "Target", "Met?"):
        table.add_column(col, justify="left" if col == "Figure" else "right")
    sb, un, ip = res["sandboxed"], res["unsandboxed"], res["inprocess"]

    def met(ok: bool) -> str:
        return "[green]yes[/]" if ok else "[red]NO[/]"

    def ratio_row(label: str, key: str, ip_key: str | None, fmt: str = "{:.3f} ms") -> None:
        r = sb[key] / un[key]
        table.add_row(label, fmt.format(sb[key]), fmt.format(un[key]),
                      fmt.format(ip[ip_key]) if ip_key else "", f"{r:.2f}x",
                      f"<= {TARGET_SANDBOX_RATIO:g}x", met(r <= TARGET_SANDBOX_RATIO))

    ratio_row("Reset p50 (after a write every 10th)", "reset_p50_ms", None, "{:.4f} ms")
    ratio_row("Step p50, read tool (1 statement)", "read_p50_ms", "read_p50_ms")
    ratio_row("Step p50, write tool (2 statements)", "write_p50_ms", "write_p50_ms")
    table.add_row("1,024 episodes: steps/s (read + write)", f"{sb['conc_steps_per_s']:,.0f}",
                  f"{un['conc_steps_per_s']:,.0f}", "",
                  f"{sb['conc_steps_per_s'] / un['conc_steps_per_s']:.2f}x",
                  f">= {TARGET_STEPS_PER_S:,.0f}",
                  met(sb["conc_steps_per_s"] >= TARGET_STEPS_PER_S))
    # the default against a variant that turns one of its mechanisms off
    for mode, label, ratio in ((NO_TURNS, "threads not taking turns", "turns / none"),
                               (NO_SPIN, "workers sleeping at once (worker_spin_us=0)",
                                "spin / none")):
        off = res.get(mode)
        if off:
            gain = sb["conc_steps_per_s"] / off["conc_steps_per_s"]
            table.add_row(f"1,024 episodes: steps/s, {label}", f"{off['conc_steps_per_s']:,.0f}",
                          "", "", f"{ratio} {gain:.2f}x", "", "")
    pinned = res.get(PINNED)
    if pinned:
        table.add_row("1,024 episodes: steps/s, stepping threads pinned to one core",
                      f"{pinned['conc_steps_per_s']:,.0f}", "", "",
                      f"pinned / not {pinned['conc_steps_per_s'] / sb['conc_steps_per_s']:.2f}x",
                      f">= {TARGET_STEPS_PER_S:,.0f}",
                      met(pinned["conc_steps_per_s"] >= TARGET_STEPS_PER_S))
    table.add_row("1,024 episodes: RSS + episode files", mib(sb["conc_bytes"]),
                  mib(un["conc_bytes"]), "", "", f"<= {mib(TARGET_RSS_BYTES)}",
                  met(sb["conc_bytes"] <= TARGET_RSS_BYTES))
    large = res.get("large")
    if large:
        ls, lu = large["sandboxed"], large["unsandboxed"]
        base = (ls["inprocess_p50_ms"] + lu["inprocess_p50_ms"]) / 2
        table.add_row("Large env step p50, 20 ms gaps (x in-process)",
                      f"{ls['engine_p50_ms']:.3f} ms ({ls['ratio_p50']:.1f}x)",
                      f"{lu['engine_p50_ms']:.3f} ms ({lu['ratio_p50']:.1f}x)",
                      f"{base:.3f} ms", f"{ls['engine_p50_ms'] / lu['engine_p50_ms']:.2f}x",
                      f"<= {TARGET_LARGE_RATIO:g}x in-process",
                      met(ls["ratio_p50"] <= TARGET_LARGE_RATIO))
        table.add_row("Large env step p95, 20 ms gaps", f"{ls['engine_p95_ms']:.3f} ms",
                      f"{lu['engine_p95_ms']:.3f} ms",
                      f"{(ls['inprocess_p95_ms'] + lu['inprocess_p95_ms']) / 2:.3f} ms", "",
                      f"<= {TARGET_LARGE_P95_MS:g} ms",
                      met(ls["engine_p95_ms"] <= TARGET_LARGE_P95_MS))
        table.add_row("Large env step p50, back to back", f"{ls['engine_tight_p50_ms']:.3f} ms",
                      f"{lu['engine_tight_p50_ms']:.3f} ms", "",
                      f"{ls['engine_tight_p50_ms'] / lu['engine_tight_p50_ms']:.2f}x", "", "")
        table.add_row("Large env reset p50 (after one write)", f"{ls['reset_p50_ms']:.3f} ms",
                      f"{lu['reset_p50_ms']:.3f} ms", "",
                      f"{ls['reset_p50_ms'] / lu['reset_p50_ms']:.2f}x",
                      f"<= {TARGET_LARGE_RESET_P50_MS:g} ms",
                      met(ls["reset_p50_ms"] <= TARGET_LARGE_RESET_P50_MS))
    Console(width=None if sys.stdout.isatty() else 170).print(table)


def figure_targets(res: dict[str, Any]) -> dict[str, dict[str, Any]]:
    sb, un = res["sandboxed"], res["unsandboxed"]
    out = {f"sandboxed_{k}_ratio": {"target": TARGET_SANDBOX_RATIO, "value": sb[k] / un[k],
                                    "met": sb[k] / un[k] <= TARGET_SANDBOX_RATIO}
           for k in ("reset_p50_ms", "read_p50_ms", "write_p50_ms")}
    out["sandboxed_1024_steps_per_s"] = {
        "target": TARGET_STEPS_PER_S, "value": sb["conc_steps_per_s"],
        "met": sb["conc_steps_per_s"] >= TARGET_STEPS_PER_S}
    out["sandboxed_1024_bytes"] = {"target": TARGET_RSS_BYTES, "value": sb["conc_bytes"],
                                   "met": sb["conc_bytes"] <= TARGET_RSS_BYTES}
    return out


def figures_title(res: dict[str, Any], workers: int, threads: int, load_start: str,
                  load_end: str) -> str:
    return (f"Engine figures, sandboxed vs unsandboxed vs in-process (steps and resets taking "
            f"turns; 1,024 episodes: medians of {res['rounds']} interleaved round(s); "
            f"workers={workers}, threads={threads}, "
            f"{os.cpu_count()} CPUs; load average {load_start} at the start, {load_end} at "
            "the end)")
