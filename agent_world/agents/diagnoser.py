"""The diagnosis agent: failure traces + error statistics + environment metadata → a diagnosis.

    diagnosis = diagnose(attempts, envs, trajectories)

`attempts` are scored evaluation attempts (`agent_world.tasks.evaluation.Attempt`), `envs` the
metadata of every environment involved (held-out and training), `trajectories` the failure traces
by id. The diagnosis names weak environments and tools, the error classes that dominate, and
task-generation guidelines for the synthesizer: which training environments and tools to target,
which difficulty features, whether to complexify databases. Every claim carries the trajectory
ids it rests on.

Two strategies, chosen by `chat_model("diagnoser")`:

* Offline (the statistics): environments and tools below the overall pass rate are weak (worst
  first); error classes are ranked by count; guidelines target the training environments closest
  to the weak held-out ones (taxonomy path and tool-name overlap), the difficulty level where the
  pass rate first drops below one half, and the features that train against the top error class
  (longer chains and aggregation for state_not_tracked, distractors for wrong_tool, ...).
* LLM: the model gets the same statistics, failure traces and the offline draft, and answers a
  `Diagnosis` (structured output). Answers are checked — every evidence id must be a real failing
  trajectory, every environment and tool must exist — and retried with the error up to twice;
  then the offline diagnosis is used and the note says why.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from agent_world.agents import diagnoser_prompts as prompts
from agent_world.envs.spec import EnvSpec, format_validation_error
from agent_world.models import chat_model
from agent_world.tasks.evaluation import (
    AGENT_ERROR_CLASSES,
    Attempt,
    ErrorClass,
    EvalReport,
    score,
)
from agent_world.tasks.model import Trajectory

log = logging.getLogger(__name__)

LLM_ATTEMPTS = 3
MAX_EVIDENCE = 8  # trajectory ids cited per claim
MAX_TRACES = 12  # failure traces shown to the LLM

AgentErrorClass = Literal["format", "wrong_tool", "wrong_arguments", "gave_up",
                          "state_not_tracked"]

# What trains against each error class (difficulty features the synthesizer understands).
REMEDY: dict[str, dict[str, Any]] = {
    "state_not_tracked": {"chain_length": +1, "aggregation": True,
                          "why": "longer chains whose answer combines several observations"},
    "wrong_arguments": {"chain_length": +1, "branching": 1,
                        "why": "chains where one call's output is the next call's input"},
    "wrong_tool": {"distractors": 3, "why": "more visible tools the solution does not need"},
    "gave_up": {"chain_length": -1, "why": "shorter chains the policy can finish"},
    "format": {"chain_length": -1, "why": "short single-call tasks that practise the format"},
}
EXPLAIN = {
    "state_not_tracked": "calls were right but the answer or final state was wrong: the policy "
                         "loses track of what earlier observations said",
    "wrong_arguments": "the right tools were called with arguments the task does not need "
                       "(ids or filters misread from earlier observations)",
    "wrong_tool": "the policy calls tools that do not exist or that the task does not need",
    "gave_up": "the policy stops, or answers before making the calls the task needs",
    "format": "the policy's output is not a readable tool call or answer",
}


class EnvMeta(BaseModel):
    """What the diagnoser knows about an environment."""

    name: str
    split: Literal["train", "heldout"] = "train"
    taxonomy: str = ""
    tools: list[str] = Field(default_factory=list)
    tables: int = 0
    rows: int = 0

    @classmethod
    def from_spec(cls, spec: EnvSpec, split: Literal["train", "heldout"] = "train") -> EnvMeta:
        return cls(name=spec.name, split=split, taxonomy=str(spec.theme.taxonomy),
                   tools=[t.name for t in spec.tools], tables=len(spec.tables),
                   rows=spec.row_count())


class WeakSpot(BaseModel):
    """A weak environment or tool ("env/tool"), with its pass rate and the failures behind it."""

    name: str
    pass_rate: float
    attempts: int
    evidence: list[str] = Field(default_factory=list)


class ErrorFinding(BaseModel):
    error_class: AgentErrorClass
    count: int
    share: float  # of all attempts
    environments: list[str] = Field(default_factory=list)  # where it concentrates, worst first
    tools: list[str] = Field(default_factory=list)
    explanation: str = ""
    evidence: list[str] = Field(default_factory=list)


class DifficultyTarget(BaseModel):
    level: int = Field(default=2, ge=1, le=5)
    chain_length: int = Field(default=2, ge=1, le=8)
    branching: int = Field(default=0, ge=0)
    aggregation: bool = False
    distractors: int = Field(default=0, ge=0)
    obscured: bool = False


class Guidelines(BaseModel):
    """What the synthesizer should generate next (its `guidelines` input)."""

    environments: list[str] = Field(default_factory=list)  # training environments to target
    tools: list[str] = Field(default_factory=list)  # "env/tool" in those environments
    error_classes: list[AgentErrorClass] = Field(default_factory=list)  # what to train against
    difficulty: DifficultyTarget = Field(default_factory=DifficultyTarget)
    complexify_databases: list[str] = Field(default_factory=list)
    notes: str = ""


class Diagnosis(BaseModel):
    summary: str
    pass_rate: float
    attempts: int
    weak_environments: list[WeakSpot] = Field(default_factory=list)
    weak_tools: list[WeakSpot] = Field(default_factory=list)
    errors: list[ErrorFinding] = Field(default_factory=list)
    guidelines: Guidelines = Field(default_factory=Guidelines)
    strategy: str = "offline"
    notes: list[str] = Field(default_factory=list)

    @property
    def target_error(self) -> str | None:
        return self.errors[0].error_class if self.errors else None

    def text(self) -> str:
        """The diagnosis as readable text (reports, CLI)."""
        lines = [self.summary]
        if self.weak_environments:
            lines.append("Weak environments: " + ", ".join(
                f"{w.name} ({w.pass_rate:.0%} of {w.attempts})" for w in self.weak_environments))
        if self.weak_tools:
            lines.append("Weak tools: " + ", ".join(
                f"{w.name} ({w.pass_rate:.0%} of {w.attempts})" for w in self.weak_tools))
        for e in self.errors:
            lines.append(f"{e.error_class}: {e.count} failures ({e.share:.0%}) — {e.explanation}"
                         f" [evidence: {', '.join(e.evidence[:4])}]")
        g = self.guidelines
        d = g.difficulty
        lines.append(
            f"Guidelines: target {', '.join(g.environments) or 'all environments'}"
            f"{' (tools ' + ', '.join(g.tools) + ')' if g.tools else ''}; level {d.level}, "
            f"chains of {d.chain_length}{', aggregation' if d.aggregation else ''}"
            f"{f', {d.distractors} distractors' if d.distractors else ''}"
            f"{f', branching {d.branching}' if d.branching else ''}"
            f"{'; complexify ' + ', '.join(g.complexify_databases) if g.complexify_databases else ''}"
            f". {g.notes}".rstrip())
        return "\n".join(lines)


# -- offline strategy ----------------------------------------------------------------------------
def _weak(cells: Mapping[str, Any], overall: float, limit: int) -> list[WeakSpot]:
    weak = [WeakSpot(name=k, pass_rate=round(c.pass_rate, 4), attempts=c.attempts,
                     evidence=c.failures[:MAX_EVIDENCE])
            for k, c in cells.items()
            if c.failures and (c.pass_rate < overall or c.pass_rate < 0.5)]
    weak.sort(key=lambda w: (w.pass_rate, -len(w.evidence), w.name))
    return weak[:limit]


def _tokens(text: str) -> set[str]:
    return {t for t in re.split(r"[^a-z0-9]+", text.lower()) if len(t) > 2}


def _similarity(a: EnvMeta, b: EnvMeta) -> float:
    """Taxonomy path overlap (L1 counts most) plus tool-name token overlap."""
    pa, pb = [p.strip() for p in a.taxonomy.split("/")], [p.strip() for p in b.taxonomy.split("/")]
    tax = sum(w for w, x, y in zip((0.5, 0.3, 0.2), pa, pb, strict=False) if x and x == y)
    ta = set().union(*(_tokens(t) for t in a.tools)) if a.tools else set()
    tb = set().union(*(_tokens(t) for t in b.tools)) if b.tools else set()
    tools = len(ta & tb) / len(ta | tb) if ta | tb else 0.0
    return tax + tools


def _targets(weak_envs: list[str], envs: Mapping[str, EnvMeta], limit: int = 3) -> list[str]:
    """Training environments to target: the weak ones themselves when they are training
    environments, else the training environments closest to the weak held-out ones."""
    train = [m for m in envs.values() if m.split == "train"]
    if not train:
        return weak_envs[:limit]
    scores: dict[str, float] = {}
    for rank, name in enumerate(weak_envs):
        meta = envs.get(name)
        if meta is not None and meta.split == "train":
            scores[name] = scores.get(name, 0) + 10.0 / (rank + 1)
            continue
        if meta is None:
            continue
        for t in train:
            scores[t.name] = scores.get(t.name, 0) + _similarity(meta, t) / (rank + 1)
    ranked = sorted(scores, key=lambda n: (-scores[n], n))
    return ranked[:limit] or [t.name for t in train][:limit]


def _level_target(report: EvalReport) -> int:
    """The lowest difficulty level whose pass rate is below one half (the policy's edge)."""
    for level in sorted(report.by_level, key=int):
        if report.by_level[level].pass_rate < 0.5:
            return int(level)
    top = max((int(k) for k in report.by_level), default=1)
    return min(5, top + 1)


def offline_diagnosis(report: EvalReport, envs: Mapping[str, EnvMeta]) -> Diagnosis:
    overall = report.pass_rate
    weak_envs = _weak(report.by_env, overall, limit=3)
    weak_tools = _weak(report.by_tool, overall, limit=5)
    findings: list[ErrorFinding] = []
    for cls in AGENT_ERROR_CLASSES:
        ids = report.errors.get(cls, [])
        if not ids:
            continue
        by_env = sorted(((n, c.get(cls, 0)) for n, c in report.errors_by_env.items()
                         if c.get(cls)), key=lambda x: (-x[1], x[0]))
        by_tool = sorted(((n, c.get(cls, 0)) for n, c in report.errors_by_tool.items()
                          if c.get(cls)), key=lambda x: (-x[1], x[0]))
        findings.append(ErrorFinding(
            error_class=cls, count=len(ids), share=round(report.error_share(cls), 4),
            environments=[n for n, _ in by_env[:3]], tools=[n for n, _ in by_tool[:3]],
            explanation=EXPLAIN[cls], evidence=ids[:MAX_EVIDENCE]))
    findings.sort(key=lambda f: (-f.count, AGENT_ERROR_CLASSES.index(f.error_class)))
    targets = _targets([w.name for w in weak_envs]
                       + [n for f in findings for n in f.environments], envs)
    top = [f.error_class for f in findings[:2]]
    level = _level_target(report)
    diff = DifficultyTarget(level=level, chain_length=max(1, level))
    for cls in top[:1]:  # the remedy of the dominant class decides the features
        r = REMEDY[cls]
        diff.chain_length = max(1, min(8, diff.chain_length + r.get("chain_length", 0)))
        diff.aggregation = r.get("aggregation", False)
        diff.branching = r.get("branching", 0)
        diff.distractors = r.get("distractors", 0)
    target_tools = [t for t in _map_tools([w.name for w in weak_tools], targets, envs)]
    data_bound = {"state_not_tracked", "wrong_arguments"}
    complexify = [t for t in targets if top and top[0] in data_bound][:2]
    notes = "; ".join(f"{c}: {REMEDY[c]['why']}" for c in top)
    summary = (f"Held-out pass rate {overall:.0%} over {report.attempts} attempts"
               + (f"; dominant error: {top[0]} ({findings[0].count} failures)" if top else
                  "; no agent errors")
               + (f"; weakest environment: {weak_envs[0].name} ({weak_envs[0].pass_rate:.0%})"
                  if weak_envs else "") + ".")
    return Diagnosis(summary=summary, pass_rate=round(overall, 4), attempts=report.attempts,
                     weak_environments=weak_envs, weak_tools=weak_tools, errors=findings,
                     guidelines=Guidelines(environments=targets, tools=target_tools,
                                           error_classes=top, difficulty=diff,
                                           complexify_databases=complexify, notes=notes),
                     strategy="offline")


def _map_tools(weak_tools: list[str], targets: list[str], envs: Mapping[str, EnvMeta],
               limit: int = 6) -> list[str]:
    """Weak "env/tool" names → tools of the target environments with the most similar names."""
    out: list[str] = []
    for wt in weak_tools:
        env, _, tool = wt.partition("/")
        if env in targets:
            out.append(wt)
            continue
        want = _tokens(tool)
        best = max(((len(want & _tokens(t)), f"{n}/{t}") for n in targets if n in envs
                    for t in envs[n].tools), default=(0, ""))
        if best[0] > 0:
            out.append(best[1])
    return list(dict.fromkeys(out))[:limit]


# -- LLM strategy --------------------------------------------------------------------------------
def _check(d: Diagnosis, report: EvalReport, envs: Mapping[str, EnvMeta]) -> Diagnosis:
    """Reject invented evidence, environments or tools (ValueError with what is wrong)."""
    failing = {i for ids in report.errors.values() for i in ids}
    failing |= {i for c in report.by_env.values() for i in c.failures}
    env_names = set(envs) | set(report.by_env)
    tools = {f"{n}/{t}" for n, m in envs.items() for t in m.tools} | set(report.by_tool)
    problems: list[str] = []
    claims: list[tuple[str, list[str]]] = [(f"weak environment {w.name}", w.evidence)
                                           for w in d.weak_environments]
    claims += [(f"weak tool {w.name}", w.evidence) for w in d.weak_tools]
    claims += [(f"error {e.error_class}", e.evidence) for e in d.errors]
    for what, evidence in claims:
        if not evidence:
            problems.append(f"{what} cites no evidence")
        bad = [i for i in evidence if i not in failing]
        if bad:
            problems.append(f"{what} cites unknown trajectory ids {bad[:3]}")
    for name in [w.name for w in d.weak_environments] + d.guidelines.environments \
            + d.guidelines.complexify_databases:
        if name not in env_names:
            problems.append(f"unknown environment {name!r}")
    for name in [w.name for w in d.weak_tools] + d.guidelines.tools:
        if name not in tools:
            problems.append(f"unknown tool {name!r} (write tools as env/tool)")
    if problems:
        raise ValueError("; ".join(problems[:8]))
    return d.model_copy(update={"pass_rate": round(report.pass_rate, 4),
                                "attempts": report.attempts, "strategy": "llm"})


def _trace_text(tid: str, traj: Trajectory, limit: int = 900) -> str:
    steps = []
    for s in traj.steps[:8]:
        if s.tool:
            out = "ok" if s.ok else f"{s.error_kind}: {s.error_message or ''}"
            steps.append(f"{s.tool}({json.dumps(s.arguments, default=str)[:120]}) -> {out[:120]}")
        elif s.text:
            steps.append(f"said: {s.text[:120]}")
    answer = json.dumps(traj.final_answer, default=str)[:120]
    text = f"- {tid} [task {traj.task_id}] " + " | ".join(steps) + f" | answer: {answer}"
    return text[:limit]


def _user_prompt(report: EvalReport, envs: Mapping[str, EnvMeta],
                 trajectories: Mapping[str, Trajectory], draft: Diagnosis) -> str:
    rows = lambda cells: "\n".join(  # noqa: E731
        f"- {k}: {c.passes}/{c.attempts} = {c.pass_rate:.2f}" for k, c in sorted(cells.items()))
    failing = [i for ids in report.errors.values() for i in ids]
    traces = [_trace_text(i, trajectories[i]) for i in failing[:MAX_TRACES] if i in trajectories]
    return prompts.USER.format(
        pass_rate=report.pass_rate, attempts=report.attempts, by_env=rows(report.by_env),
        by_level=rows(report.by_level),
        errors="\n".join(f"- {k}: {v}" for k, v in report.errors.items()) or "(none)",
        errors_by_tool=json.dumps(report.errors_by_tool, sort_keys=True),
        envs="\n".join(f"- {m.name} [{m.split}] {m.taxonomy}: {', '.join(m.tools)}"
                       for m in envs.values()) or "(none)",
        traces="\n".join(traces) or "(none)", draft=draft.model_dump_json(indent=1))


def _llm_diagnosis(model: Any, report: EvalReport, envs: Mapping[str, EnvMeta],
                   trajectories: Mapping[str, Trajectory], draft: Diagnosis
                   ) -> tuple[Diagnosis | None, list[str]]:
    from langchain_core.messages import HumanMessage, SystemMessage

    from agent_world.agents.miner import ask_structured

    messages: list[Any] = [SystemMessage(content=prompts.SYSTEM),
                           HumanMessage(content=_user_prompt(report, envs, trajectories, draft))]
    errors: list[str] = []
    for _ in range(LLM_ATTEMPTS):
        try:
            answer = ask_structured(model, Diagnosis, messages)
            return _check(answer, report, envs), errors
        except ValidationError as exc:
            err = format_validation_error(exc, "Diagnosis")
        except Exception as exc:  # transport, JSON, or a check above
            err = f"{type(exc).__name__}: {exc}"
        errors.append(err)
        log.info("diagnoser: LLM answer rejected (%s)", err.splitlines()[0][:200])
        messages = [*messages, HumanMessage(content=prompts.RETRY.format(error=err[:1500]))]
    return None, errors


def diagnose(attempts: Iterable[Attempt], envs: Iterable[EnvMeta] = (),
             trajectories: Mapping[str, Trajectory] | None = None) -> Diagnosis:
    """Diagnose an evaluation (see the module docstring)."""
    report = score(attempts)
    env_map = {m.name: m for m in envs}
    draft = offline_diagnosis(report, env_map)
    model = chat_model("diagnoser")
    if model is None or report.attempts == 0:
        return draft
    answer, errors = _llm_diagnosis(model, report, env_map, trajectories or {}, draft)
    if answer is not None:
        return answer
    note = (f"LLM diagnosis rejected {len(errors)} times "
            f"({errors[-1].splitlines()[0][:200] if errors else 'no answer'}); offline used")
    return draft.model_copy(update={"notes": [*draft.notes, note]})


__all__ = ["Diagnosis", "DifficultyTarget", "EnvMeta", "ErrorClass", "ErrorFinding",
           "Guidelines", "WeakSpot", "diagnose", "offline_diagnosis"]
