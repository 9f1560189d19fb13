"""Do two commits give the same outputs for the same seed? Runs `agent-world evolve` at each
commit (a git worktree each, a fresh arena home each) and compares what it wrote: the policy
checkpoints byte for byte (a trainer state's timings aside), the environments' fingerprints
and the task ids. For a refactor, every row should say `same`.

    python benchmarks/same_outputs.py REV_A REV_B [-- EVOLVE ARGS]
    python benchmarks/same_outputs.py 99d608f^ 92947d1 -- --rounds 1 --policy tiny \\
        --tasks-per-env 2 --heldout-tasks 2 --train-steps 1 --warm-start-steps 2
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]


def _digest(items: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(items)).encode()).hexdigest()[:16]


def _file_digest(path: Path) -> str:
    if path.name == "trainer.json":  # its timings differ run to run; its state must not
        state = json.loads(path.read_text())

        def untimed(x: object) -> object:
            if isinstance(x, dict):
                return {k: untimed(v) for k, v in x.items() if not k.endswith("_s")}
            return [untimed(v) for v in x] if isinstance(x, list) else x
        return hashlib.sha256(json.dumps(untimed(state), sort_keys=True).encode()).hexdigest()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def outputs(home: Path) -> dict[str, str]:
    """What a run wrote, one digest per kind and one per checkpoint file."""
    out = {}
    for f in sorted((home / "policies").rglob("*")):
        if f.is_file():
            rel = str(f.relative_to(home / "policies")).replace("checkpoints/", "")
            out[rel.replace("/model/", "/")] = _file_digest(f)
    with sqlite3.connect(home / "catalog.sqlite") as db:
        out["task ids"] = _digest([r[0] for r in db.execute("SELECT id FROM tasks")])
        out["environment fingerprints"] = _digest(
            [r[0] for r in db.execute("SELECT fingerprint FROM env_versions")])
    return out


def run(rev: str, work: Path, args: list[str], console: Console) -> tuple[dict[str, str], float]:
    tree, home = work / f"tree-{len(list(work.iterdir()))}", work / f"home-{rev}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "-q", "--detach", str(tree), rev],
                   check=True)
    try:
        console.print(f"[bold]{rev}[/]: evolve {' '.join(args)}")
        env = {**os.environ, "AGENT_WORLD_HOME": str(home), "PYTHONPATH": str(tree)}
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "agent_world.cli", "evolve", *args], cwd=tree,
                       env=env, check=True, stdout=subprocess.DEVNULL)
        return outputs(home), time.perf_counter() - start
    finally:
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                       check=False)


def main() -> None:
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rev_a")
    parser.add_argument("rev_b")
    ns = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    console = Console()
    with tempfile.TemporaryDirectory(prefix="same-outputs-") as tmp:
        (a, wall_a), (b, wall_b) = (run(r, Path(tmp), extra, console)
                                    for r in (ns.rev_a, ns.rev_b))
    table = Table(title=f"{ns.rev_a} against {ns.rev_b}: evolve {' '.join(extra)}")
    for col in ("output", ns.rev_a, ns.rev_b, ""):
        table.add_column(col)
    for key in sorted(set(a) | set(b)):
        table.add_row(key, a.get(key, "—")[:16], b.get(key, "—")[:16],
                      "same" if a.get(key) == b.get(key) else "[red]differs[/]")
    table.add_row("wall", f"{wall_a:.0f} s", f"{wall_b:.0f} s", "")
    console.print(table)
    sys.exit(0 if a == b else 1)


if __name__ == "__main__":
    main()
