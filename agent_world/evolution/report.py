"""`agent-world report`: one self-contained HTML file about a self-evolution thread, for a
researcher to audit.

* every pass rate with its count and Wilson 95 % interval (`rounds.wilson`);
* the run's settings (seed, policy, sizes, steps, versions, the split);
* per-round, per-environment and per-level tables: baseline, after the warm start (when it was
  measured), after GRPO, and each round's fresh held-out set;
* plots (matplotlib, embedded as base64 PNG, so the file needs nothing else): pass rate per
  round with its interval, per environment and per level with every bar labelled "k/n" (a 0 %
  bar reads 0/12, not a gap), failures per error class, training curves (warm-start loss, GRPO
  reward, KL, call rate);
* each round's diagnosis: its findings (which tool instead of which, which argument, where the
  value was) and the citations of its guidelines, every attempt id a link to the trajectory;
* trajectories: for each held-out environment a passing and a failing attempt, and every attempt
  the diagnoses cite — messages, calls, observations, answer and reward components;
* LangSmith links (datasets, experiments, runs) when the run was traced.
"""

from __future__ import annotations

import base64
import html
import io
import json
import re
import shutil
import subprocess
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from agent_world.errors import AgentWorldError
from agent_world.evolution.rounds import RoundRecord, rate_text, wilson
from agent_world.tasks.evaluation import AGENT_ERROR_CLASSES


def _figure() -> Any:
    # matplotlib loads only when a report is drawn (seconds of imports)
    import matplotlib

    matplotlib.use("Agg")  # headless
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    _figure().close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def _counts(cell: Any) -> tuple[int, int] | None:
    """(passes, attempts) of a summary cell, None when the cell is missing or unsized."""
    if not isinstance(cell, dict) or not cell.get("attempts"):
        return None
    passes = cell.get("passes")
    if passes is None:
        passes = round(float(cell.get("pass_rate", 0)) * cell["attempts"])
    return int(passes), int(cell["attempts"])


def _evals(r: RoundRecord) -> list[tuple[str, dict[str, Any]]]:
    """The evaluations a round made of the fixed set, in order, labelled."""
    out = []
    if r.warm:
        out.append((f"round {r.round} after warm start", r.warm))
    out.append((f"round {r.round} after GRPO", r.after))
    return out


def _pass_rate_per_round(rounds: list[RoundRecord]) -> str:
    plt = _figure()
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    points: list[tuple[float, str, dict[str, Any], str]] = [
        (0, "baseline", rounds[0].before, "#1f6feb")]
    for r in rounds:
        if r.warm:
            points.append((r.round - 0.5, f"r{r.round} warm", r.warm, "#bf8700"))
        points.append((r.round, f"round {r.round}", r.after, "#1f6feb"))
    main = [(x, c) for x, _, d, col in points if col == "#1f6feb" and (c := _counts(d))]
    for x, _label, d, color in points:
        c = _counts(d)
        if c is None:
            continue
        p = c[0] / c[1]
        lo, hi = wilson(*c)
        ax.errorbar([x], [p], yerr=[[p - lo], [hi - p]], fmt="o", color=color, capsize=4)
        ax.annotate(f"{p:.0%} ({c[0]}/{c[1]})", (x, p), textcoords="offset points",
                    xytext=(8, 4), fontsize=8)
    if main:
        ax.plot([x for x, _ in main], [c[0] / c[1] for _, c in main], color="#1f6feb", alpha=.5)
    fresh = [(r.round, c) for r in rounds if (c := _counts(r.fresh_after))]
    for x, c in fresh:
        p = c[0] / c[1]
        lo, hi = wilson(*c)
        ax.errorbar([x + 0.15], [p], yerr=[[p - lo], [hi - p]], fmt="s", color="#8250df",
                    capsize=4, label="fresh set" if x == fresh[0][0] else None)
    ax.set_xticks([x for x, *_ in points], [lbl for _, lbl, *_ in points])
    ax.set_ylim(-0.02, 1.05)
    ax.set_ylabel("held-out pass rate (95% CI)")
    ax.set_title("Held-out pass rate per round (warm start in amber)")
    ax.grid(alpha=0.3)
    if fresh:
        ax.legend()
    return _png(fig)


def _grouped(title: str, series: list[tuple[str, dict[str, Any]]], xlabel: str,
             count: bool = False) -> str:
    """Bars per key and series; pass-rate bars carry their Wilson interval and a "k/n" label
    (a 0 % bar is labelled 0/n, a missing one "n/a")."""
    plt = _figure()
    names = sorted({k for _, d in series for k in d}, key=lambda k: (len(k), k))
    fig, ax = plt.subplots(figsize=(max(5.5, 1.3 * len(names) * max(1, len(series)) / 2 + 2),
                                    3.4))
    width = 0.8 / max(1, len(series))
    colors = ["#8b949e", "#bf8700", "#1f6feb", "#8250df", "#1a7f37"]
    for i, (label, d) in enumerate(series):
        xs = [x + (i - (len(series) - 1) / 2) * width for x in range(len(names))]
        for x, n in zip(xs, names, strict=True):
            v = d.get(n)
            if count:
                h = float(v or 0)
                ax.bar([x], [h], width, color=colors[i % len(colors)])
                ax.annotate(f"{int(h)}", (x, h), ha="center", fontsize=7,
                            textcoords="offset points", xytext=(0, 2))
                continue
            c = _counts(v)
            if c is None:
                ax.annotate("n/a", (x, 0.01), ha="center", fontsize=7, color="#656d76")
                continue
            p = c[0] / c[1]
            lo, hi = wilson(*c)
            ax.bar([x], [p], width, color=colors[i % len(colors)], yerr=[[p - lo], [hi - p]],
                   capsize=2, ecolor="#1f2328")
            ax.annotate(f"{c[0]}/{c[1]}", (x, max(p, 0)), ha="center", fontsize=7,
                        textcoords="offset points", xytext=(0, 2))
        ax.bar([], [], color=colors[i % len(colors)], label=label)
    ax.set_xticks(list(range(len(names))), names, rotation=20 if len(names) > 4 else 0,
                  ha="right" if len(names) > 4 else "center")
    ax.axhline(0, color="#1f2328", linewidth=0.8)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    if not count:
        ax.set_ylim(0, 1.1)
        ax.set_ylabel("pass rate (95% CI)")
    ax.legend(fontsize=7)
    ax.grid(axis="y", alpha=0.3)
    return _png(fig)


def _per_round(series: list[tuple[int, list[float | None]]], xlabel: str, ylabel: str,
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
        pts = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        if pts:
            ax.plot([x for x, _ in pts], [v for _, v in pts], marker=".",
                    label=f"round {number}")
        offset = xs[-1]
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if ax.lines:  # rounds whose every value is missing draw nothing and get no legend entry
        ax.legend()
    else:
        ax.annotate("not recorded", (0.5, 0.5), xycoords="axes fraction", ha="center")
    return _png(fig)


# -- HTML ------------------------------------------------------------------------------------------
def _esc(v: Any) -> str:
    return html.escape(str(v))


def _table(headers: list[str], rows: list[list[Any]], raw: bool = False) -> str:
    """A table; `raw` cells are HTML already (links), others are escaped."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    cell = (lambda c: str(c)) if raw else _esc  # noqa: E731
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in row) + "</tr>"
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


def _rate(cell: Any) -> str:
    c = _counts(cell)
    return rate_text(*c) if c else "-"


def anchor(trajectory_id: str) -> str:
    """The HTML id of an embedded trajectory."""
    return "traj-" + re.sub(r"[^A-Za-z0-9_-]", "-", trajectory_id)


def _link(tid: str, embedded: set[str]) -> str:
    if tid in embedded:
        return f'<a href="#{anchor(tid)}">{_esc(tid)}</a>'
    return f"{_esc(tid)} (not stored)"


def _links(ids: Iterable[str], embedded: set[str]) -> str:
    return ", ".join(_link(i, embedded) for i in ids) or "-"


def _json(v: Any, limit: int = 600) -> str:
    text = json.dumps(v, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + f" … ({len(text)} chars)"


def _trajectory(row: dict[str, Any]) -> str:
    """One attempt as a <details> block: request, calls with observations, answer, reward
    components, the raw messages."""
    tid = row["trajectory_id"]
    t = row.get("trajectory") or {}
    verdict = "pass" if row.get("passed") else f"fail ({row.get('error_class') or '?'})"
    steps = []
    for i, s in enumerate(t.get("steps") or [], start=1):
        if s.get("tool"):
            out = (_json(s.get("result")) if s.get("ok")
                   else f"{s.get('error_kind')}: {s.get('error_message') or ''}")
            steps.append([i, s["tool"], _json(s.get("arguments"), 300),
                          "ok" if s.get("ok") else "refused", out])
        elif s.get("text"):
            steps.append([i, "(text)", "", "", s["text"][:600]])
    comps = t.get("reward_components") or {}
    messages = "".join(f"<li><b>{_esc(m.get('type', m.get('role', '?')))}</b>: "
                       f"{_esc(_json(m.get('content'), 800))}"
                       f"{' calls ' + _esc(_json(m.get('tool_calls'), 400)) if m.get('tool_calls') else ''}"
                       "</li>" for m in t.get("messages") or [])
    return (f'<details class="traj" id="{anchor(tid)}"><summary><b>{_esc(tid)}</b> · '
            f"{_esc(row.get('env_name'))} · level {_esc(row.get('level'))} · {_esc(verdict)} · "
            f"reward {float(row.get('reward') or 0):.3f}</summary>"
            f"<p><b>Request:</b> {_esc(row.get('instruction', ''))}</p>"
            f"<p><b>Task</b> {_esc(row.get('task_id'))} · gold tools "
            f"{_esc(', '.join(row.get('tools') or []))}</p>"
            + (_table(["#", "call", "arguments", "", "observation"], steps) if steps
               else "<p>No call.</p>")
            + f"<p><b>Answer:</b> {_esc(_json(t.get('final_answer'), 400))} "
            f"({'finished' if t.get('finished') else 'not finished'})</p>"
            + (_table(["reward component", "value"],
                      [[k, f"{float(v):.3f}"] for k, v in sorted(comps.items())])
               if comps else "<p>No reward components stored.</p>")
            + (f"<details><summary>messages ({len(t.get('messages') or [])})</summary>"
               f"<ol>{messages}</ol></details>" if messages else "")
            + "</details>")


def _chosen(rounds: list[RoundRecord], attempts: Mapping[str, list[dict[str, Any]]]
            ) -> list[dict[str, Any]]:
    """Trajectories to embed: every one a diagnosis cites, and for each held-out environment a
    passing and a failing one (from the latest evaluation that has one)."""
    rows = {r["trajectory_id"]: r for evs in attempts.values() for r in evs}
    wanted: list[str] = []
    for r in rounds:
        d = r.diagnosis or {}
        for key in ("weak_environments", "weak_tools", "errors", "confusions",
                    "argument_slips", "skills"):
            for item in d.get(key) or []:
                wanted += item.get("evidence") or []
        wanted += [f["trajectory_id"] for f in d.get("findings") or []]
        wanted += [i for c in (d.get("guidelines") or {}).get("cites") or []
                   for i in c.get("evidence") or []]
    order = [e for r in reversed(rounds) for e in (r.after_eval, r.warm_eval, r.before_eval,
                                                     r.fresh_after_eval, r.diagnosed_eval) if e]
    envs = sorted({r["env_name"] for evs in attempts.values() for r in evs})
    for env in envs:
        for want_pass in (True, False):
            for e in order:
                hit = next((r for r in attempts.get(e, []) if r["env_name"] == env
                            and bool(r.get("passed")) == want_pass), None)
                if hit is not None:
                    wanted.append(hit["trajectory_id"])
                    break
    return [rows[i] for i in dict.fromkeys(wanted) if i in rows]


def _diagnosis(r: RoundRecord, embedded: set[str]) -> str:
    d = r.diagnosis or {}
    out = [f"<h3>Round {r.round}</h3>"]
    if r.diagnosed_eval:
        out.append(f"<p>Read from evaluation <code>{_esc(r.diagnosed_eval)}</code>"
                   f"{' (a fresh held-out set)' if r.fresh_before else ''}.</p>")
    out.append(f"<pre>{_esc(r.diagnosis_text or '-')}</pre>")
    findings = d.get("findings") or []
    if findings:
        out.append(_table(["attempt", "environment", "level", "class", "skill", "what happened"],
                          [[_link(f["trajectory_id"], embedded), _esc(f["env_name"]),
                            _esc(f.get("level")), _esc(f["error_class"]), _esc(f["skill"]),
                            _esc(f.get("detail", ""))] for f in findings], raw=True))
    cites = (d.get("guidelines") or {}).get("cites") or []
    if cites:
        out.append("<p>Guidelines and the failures behind them:</p>")
        out.append(_table(["kind", "guideline", "why", "evidence"],
                          [[_esc(c["kind"]), _esc(c["name"]), _esc(c.get("why", "")),
                            _links(c.get("evidence") or [], embedded)] for c in cites],
                          raw=True))
    for key, label in (("errors", "error class"), ("confusions", "confusion"),
                       ("argument_slips", "argument")):
        items = d.get(key) or []
        if items:
            out.append(_table([label, "count", "evidence"], [[
                _esc(i.get("error_class") or (f"{i.get('called')} for {i.get('expected')}"
                                              if key == "confusions" else
                                              f"{i.get('argument')} of {i.get('tool')} (in "
                                              f"the {i.get('source')})")),
                _esc(i.get("count")), _links(i.get("evidence") or [], embedded)]
                for i in items], raw=True))
    return "".join(out)


CSS = """
body{font-family:system-ui,sans-serif;margin:2rem auto;max-width:1150px;color:#1f2328}
h1{margin-bottom:.2rem} .sub{color:#656d76;margin-top:0}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:1rem}
.card{border:1px solid #d0d7de;border-radius:8px;padding:.8rem}
.card img{max-width:100%} table{border-collapse:collapse;margin:.5rem 0}
td,th{border:1px solid #d0d7de;padding:.25rem .6rem;text-align:right;vertical-align:top}
th{background:#f6f8fa} pre{white-space:pre-wrap;background:#f6f8fa;padding:.7rem;border-radius:6px}
details.traj{border:1px solid #d0d7de;border-radius:6px;padding:.4rem .7rem;margin:.4rem 0}
details.traj td{text-align:left;max-width:520px;word-break:break-word}
details.traj:target{outline:3px solid #1f6feb}
"""


def _settings(rounds: list[RoundRecord]) -> str:
    s = next((r.settings for r in reversed(rounds) if r.settings), {})
    if not s:
        return "<p>Not recorded (a thread from before settings were kept).</p>"
    rows = [[k, ", ".join(map(str, v)) if isinstance(v, list) else
             ", ".join(f"{a} {b}" for a, b in v.items()) if isinstance(v, dict) else v]
            for k, v in sorted(s.items()) if v not in (None, "", [], {})]
    return _table(["setting", "value"], rows)


def _slices(rounds: list[RoundRecord], key: str) -> tuple[list[str], list[list[Any]]]:
    evals = [("baseline", rounds[0].before)] + [e for r in rounds for e in _evals(r)]
    names = sorted({k for _, d in evals for k in (d.get(key) or {})}, key=lambda k: (len(k), k))
    return (["", *[label for label, _ in evals]],
            [[n, *[_rate((d.get(key) or {}).get(n)) for _, d in evals]] for n in names])


def render(rounds: list[RoundRecord], title: str = "Agent-World self-evolution",
           attempts: Mapping[str, list[dict[str, Any]]] | None = None) -> str:
    """The report's HTML for the rounds of one thread (oldest first); `attempts` (evaluation id →
    stored attempt rows, `load_attempts`) supplies the embedded trajectories."""
    if not rounds:
        raise AgentWorldError("no self-evolution rounds recorded yet: run `agent-world evolve`")
    attempts = attempts or {}
    first, last = rounds[0], rounds[-1]
    chosen = _chosen(rounds, attempts)
    embedded = {r["trajectory_id"] for r in chosen}
    last_series = [("baseline", first.before), *([("after warm start", last.warm)]
                                                  if last.warm else []),
                   (f"round {last.round}", last.after)]
    plots = {
        "Held-out pass rate per round": _pass_rate_per_round(rounds),
        "Per environment": _grouped("Held-out pass rate per environment",
                                    [(lbl, d.get("by_env") or {}) for lbl, d in last_series],
                                    "environment"),
        "Per difficulty": _grouped("Held-out pass rate per difficulty level",
                                   [(lbl, d.get("by_level") or {}) for lbl, d in last_series],
                                   "level"),
        "Errors": _grouped("Failures per error class",
                           [(lbl, {c: (d.get("errors") or {}).get(c, 0)
                                   for c in AGENT_ERROR_CLASSES}) for lbl, d in last_series],
                           "error class", count=True),
        "Warm start": _per_round([(r.round, list(r.warm_start)) for r in rounds],
                                 "supervised step", "loss on gold replies",
                                 "Warm start (supervised, before GRPO)"),
        "Training reward": _per_round([(r.round, [p.reward for p in r.curve]) for r in rounds],
                                      "GRPO step", "mean reward", "GRPO reward"),
        "KL": _per_round([(r.round, [p.kl for p in r.curve]) for r in rounds], "GRPO step",
                         "KL to the reference", "GRPO KL"),
        "Call rate": _per_round([(r.round, [p.call_rate for p in r.curve]) for r in rounds],
                                "GRPO step", "rollouts with a call", "GRPO call rate"),
    }
    warm = any(r.warm for r in rounds)
    fresh = any(r.fresh_after for r in rounds)
    per_round = _table(
        ["round", "held-out before", *(["after warm start"] if warm else []), "after GRPO",
         *(["fresh set after"] if fresh else []), "diagnosis read", "targeted error",
         "its failures before → after", "targeted tasks", "training tasks", "GRPO steps",
         "checkpoint"],
        [[r.round, _rate(r.before), *([_rate(r.warm)] if warm else []), _rate(r.after),
          *([_rate(r.fresh_after)] if fresh else []), r.diagnosed_eval or r.before_eval or "-",
          r.target_error or "-", f"{row['target_before']} → {row['target_after']}",
          row["targeted_tasks"], row["train_tasks"], row["steps"], _short(r.checkpoint)]
         for r in rounds for row in [r.row()]])
    env_head, env_rows = _slices(rounds, "by_env")
    lvl_head, lvl_rows = _slices(rounds, "by_level")
    count_keys = sorted({k for r in rounds for k in r.counts})
    counts = _table(["round", *count_keys],
                    [[r.round, *[r.counts.get(k, 0) for k in count_keys]] for r in rounds])
    diag = "".join(_diagnosis(r, embedded) for r in rounds)
    cards = "".join(f'<div class="card"><h3>{_esc(k)}</h3><img alt="{_esc(k)}" '
                    f'src="{v}"></div>' for k, v in plots.items())
    trajs = "".join(_trajectory(r) for r in chosen) or \
        "<p>No trajectories stored with these rounds.</p>"
    links = [(f"round {r.round}: {k}", v) for r in rounds for k, v in r.links.items()]
    smith = ("<h2>LangSmith</h2><ul>" + "".join(
        f'<li>{_esc(k)}: <a href="{_esc(v)}">{_esc(v)}</a></li>' for k, v in links) + "</ul>"
             if links else "")
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>
<style>{CSS}</style></head><body>
<h1>{_esc(title)}</h1>
<p class="sub">thread {_esc(first.thread)} · {len(rounds)} round(s) · held-out pass rate
{_pct(first.before.get('pass_rate'))} → {_pct(last.after.get('pass_rate'))} · baseline
{_esc(_rate(first.before))}, last round {_esc(_rate(last.after))} (Wilson 95% intervals)</p>
<h2>Run settings</h2>{_settings(rounds)}
<h2>Rounds</h2>{per_round}
<h2>Per environment</h2>{_table(env_head, env_rows)}
<h2>Per difficulty level</h2>{_table(lvl_head, lvl_rows)}
<h2>Environments, tools and tasks</h2>{counts}
<h2>Plots</h2><div class="grid">{cards}</div>
<h2>Diagnosis</h2>{diag}
<h2>Trajectories</h2>
<p>For each held-out environment a passing and a failing attempt, and every attempt a diagnosis
cites (click an attempt id above to jump here).</p>{trajs}
{smith}
</body></html>
"""


def load_attempts(catalog: Any, rounds: list[RoundRecord]) -> dict[str, list[dict[str, Any]]]:
    """The stored attempts (with traces) of every evaluation the rounds refer to."""
    ids = {e for r in rounds for e in (r.before_eval, r.warm_eval, r.after_eval,
                                       r.diagnosed_eval, r.fresh_after_eval) if e}
    return {e: catalog.evaluation_attempts(e) for e in sorted(ids)}


def write_report(rounds: list[RoundRecord], path: str | Path, catalog: Any = None) -> Path:
    """Write the report; with `catalog`, the trajectories it cites are embedded."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    attempts = load_attempts(catalog, rounds) if catalog is not None else None
    out.write_text(render(rounds, attempts=attempts), encoding="utf-8")
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


__all__ = ["anchor", "load_attempts", "load_rounds", "render", "screenshot", "write_report"]
