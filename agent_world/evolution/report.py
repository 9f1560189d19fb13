"""`agent-world report`: one self-contained HTML file about a self-evolution thread.

Plots (matplotlib, embedded as base64 PNG, so the file needs nothing else): held-out pass rate
per round, per environment and per difficulty level (baseline vs. last round), the error
distribution before/after, the warm start's supervised loss and the training reward curve; a
table of environment/tool/task counts and of per-round pass rates; the diagnosis text of every
round.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

from agent_world.errors import AgentWorldError
from agent_world.evolution.rounds import RoundRecord
from agent_world.tasks.evaluation import AGENT_ERROR_CLASSES


def _figure() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    _figure().close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _pass_rate_per_round(rounds: list[RoundRecord]) -> str:
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 3.2))
    xs = [0] + [r.round for r in rounds]
    ys = [rounds[0].before.get("pass_rate", 0.0)] + [r.after.get("pass_rate", 0.0) for r in rounds]
    ax.plot(xs, ys, marker="o", color="#1f6feb")
    for x, y in zip(xs, ys, strict=True):
        ax.annotate(f"{y:.0%}", (x, y), textcoords="offset points", xytext=(0, 6), ha="center")
    ax.set_xticks(xs, ["baseline"] + [f"round {x}" for x in xs[1:]])
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("held-out pass rate")
    ax.set_title("Held-out pass rate per round")
    ax.grid(alpha=0.3)
    return _png(fig)


def _grouped(title: str, before: dict[str, Any], after: dict[str, Any], xlabel: str,
             key: str = "pass_rate", labels: tuple[str, str] = ("baseline", "last round")) -> str:
    plt = _figure()
    names = sorted(set(before) | set(after), key=lambda k: (len(k), k))
    fig, ax = plt.subplots(figsize=(max(5, 0.9 * len(names) + 2), 3.2))
    width = 0.38
    xs = range(len(names))

    def val(d: dict[str, Any], n: str) -> float:
        v = d.get(n, 0)
        return float(v.get(key, 0) if isinstance(v, dict) else v)

    ax.bar([x - width / 2 for x in xs], [val(before, n) for n in names], width, label=labels[0],
           color="#8b949e")
    ax.bar([x + width / 2 for x in xs], [val(after, n) for n in names], width, label=labels[1],
           color="#1f6feb")
    ax.set_xticks(list(xs), names, rotation=20 if len(names) > 4 else 0, ha="right"
                  if len(names) > 4 else "center")
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    if key == "pass_rate":
        ax.set_ylim(0, 1.05)
    ax.legend()
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def _per_round(series: list[tuple[int, list[float]]], xlabel: str, ylabel: str,
               title: str) -> str:
    """One line per round ((round, values)), each continuing the step count of the one
    before."""
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6, 3.2))
    offset = 0
    for number, values in series:
        if not values:
            continue
        xs = list(range(offset + 1, offset + len(values) + 1))
        ax.plot(xs, values, marker=".", label=f"round {number}")
        offset = xs[-1]
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if offset:
        ax.legend()
    return _png(fig)


def _table(headers: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _short(checkpoint: str) -> str:
    """A checkpoint path from its round folder on (`round-2/checkpoints/step-000003/model`)."""
    if not checkpoint:
        return "-"
    parts = Path(checkpoint).parts
    at = next((i for i, p in enumerate(parts) if p.startswith("round-")), len(parts) - 1)
    return "/".join(parts[at:])


def _pct(v: Any) -> str:
    return "-" if v is None else f"{float(v):.0%}"


CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1100px;color:#1f2328}
h1{margin-bottom:.2rem} .sub{color:#656d76;margin-top:0}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
.card{border:1px solid #d0d7de;border-radius:8px;padding:.8rem}
.card img{max-width:100%} table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:right}
th{background:#f6f8fa} pre{white-space:pre-wrap;background:#f6f8fa;padding:.7rem;border-radius:6px}
"""


def render(rounds: list[RoundRecord], title: str = "Agent-World self-evolution") -> str:
    """The report's HTML for the rounds of one thread (oldest first)."""
    if not rounds:
        raise AgentWorldError("no self-evolution rounds recorded yet: run `agent-world evolve`")
    first, last = rounds[0], rounds[-1]
    plots = {
        "Held-out pass rate per round": _pass_rate_per_round(rounds),
        "Per environment": _grouped("Held-out pass rate per environment",
                                    first.before.get("by_env", {}), last.after.get("by_env", {}),
                                    "environment"),
        "Per difficulty": _grouped("Held-out pass rate per difficulty level",
                                   first.before.get("by_level", {}),
                                   last.after.get("by_level", {}), "level"),
        "Errors": _grouped("Failures per error class",
                           {c: first.before.get("errors", {}).get(c, 0)
                            for c in AGENT_ERROR_CLASSES},
                           {c: last.after.get("errors", {}).get(c, 0)
                            for c in AGENT_ERROR_CLASSES},
                           "error class", key="count", labels=("before round 1", "after last")),
        "Warm start": _per_round([(r.round, r.warm_start) for r in rounds], "supervised step",
                                 "loss on gold replies", "Warm start (supervised, before GRPO)"),
        "Training": _per_round([(r.round, [p.reward for p in r.curve]) for r in rounds],
                               "training step", "mean reward", "Training reward"),
    }
    per_round = _table(
        ["round", "held-out before", "after", "targeted error", "its failures before → after",
         "targeted tasks", "training tasks", "train steps", "checkpoint"],
        [[r.round, _pct(r.before.get("pass_rate")), _pct(r.after.get("pass_rate")),
          r.target_error or "-", f"{row['target_before']} → {row['target_after']}",
          row["targeted_tasks"], row["train_tasks"], row["steps"], _short(r.checkpoint)]
         for r in rounds for row in [r.row()]])
    count_keys = sorted({k for r in rounds for k in r.counts})
    counts = _table(["round", *count_keys],
                    [[r.round, *[r.counts.get(k, 0) for k in count_keys]] for r in rounds])
    diag = "".join(f"<h3>Round {r.round}</h3><pre>{html.escape(r.diagnosis_text or '-')}</pre>"
                   for r in rounds)
    cards = "".join(f'<div class="card"><h3>{html.escape(k)}</h3><img alt="{html.escape(k)}" '
                    f'src="{v}"></div>' for k, v in plots.items())
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>{CSS}</style></head><body>
<h1>{html.escape(title)}</h1>
<p class="sub">thread {html.escape(first.thread)} · {len(rounds)} round(s) · held-out pass rate
{_pct(first.before.get('pass_rate'))} → {_pct(last.after.get('pass_rate'))}</p>
<h2>Rounds</h2>{per_round}
<h2>Environments, tools and tasks</h2>{counts}
<h2>Plots</h2><div class="grid">{cards}</div>
<h2>Diagnosis</h2>{diag}
</body></html>
"""


def write_report(rounds: list[RoundRecord], path: str | Path) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render(rounds), encoding="utf-8")
    return out


def load_rounds(catalog: Any, thread: str | None = None) -> list[RoundRecord]:
    """Rounds of `thread` (default: the thread with the latest round) from the catalog."""
    rows = catalog.list_rounds(thread)
    if not rows:
        raise AgentWorldError(f"no self-evolution rounds recorded{' on ' + thread if thread else ''}"
                              ": run `agent-world evolve` first")
    if thread is None:
        thread = max(rows, key=lambda r: r["created_at"])["thread"]
    return [RoundRecord.model_validate(r["record"]) for r in rows if r["thread"] == thread]




def screenshot(html_path: str | Path, png_path: str | Path, width: int = 1200,
               height: int = 2400, timeout: float = 120) -> Path:
    """Render the report in headless Chromium and save a PNG (checks that it renders)."""
    import shutil
    import subprocess

    browser = next((b for b in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(b)), None)
    if browser is None:
        raise AgentWorldError("no headless Chromium found (Debian: apt-get install chromium)")
    out = Path(png_path).resolve()
    cmd = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           f"--window-size={width},{height}", f"--screenshot={out}",
           Path(html_path).resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not out.exists():
        raise AgentWorldError(f"chromium could not render {html_path}: {proc.stderr[-400:]}")
    return out


__all__ = ["load_rounds", "render", "screenshot", "write_report"]
