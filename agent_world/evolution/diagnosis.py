"""The diagnosis agent: failure traces + error statistics + environment metadata → a diagnosis.

    diagnosis = diagnose(attempts, envs, trajectories, tasks)

`attempts` are scored evaluation attempts (`agent_world.tasks.evaluation.Attempt`), `envs` the
metadata of every environment involved (held-out and training), `trajectories` the failure traces
and `tasks` the tasks they attempted, by id. The diagnosis is read from the failures themselves:

* **per failed attempt** (`AttemptFinding`, from its trace against the task's gold chain): which
  tool it called instead of which (`wrong_tool`), which argument was wrong, what it gave, what
  the chain needed and where that value was (stated in the request, or in an earlier
  observation), or that it answered without a call / stopped after k of n calls (`gave_up`);
* **weak environments and tools** are those these failures involve (the tools it should have
  called, the tools it called instead, the tools whose arguments it got wrong), worst first;
* **skills**: what the failures have in common (`choose_tool` between the confusable tools it
  mixed up, `fill_arguments` from the request or from an observation, `call_before_answering`,
  `finish_chain`, `track_state`, `call_format`);
* **guidelines** for the synthesizer — training environments, their tools analogous to the weak
  ones (name, verb, parameters and description compared; a held-out tool is never trained on),
  `confusable` pairs the targeted tasks' tool views must hold (for `choose_tool`), difficulty
  features from the failed tasks' chains, databases to grow — each with a `Citation` naming the
  attempt ids behind it.

Two strategies, chosen by `chat_model("diagnoser")`:

* Offline: the reading above, deterministic.
* LLM: the model gets the statistics, the failure traces (calls, observations, answer, gold
  chain) and the offline draft, and answers a `Diagnosis` (structured output, JSON in the text
  where the model has none). Answers are checked — every evidence id must be a real failing
  attempt, every environment and tool must exist, guideline tools must be training tools — and
  retried with the error up to twice; then the offline diagnosis is used and the note says why.
"""

from __future__ import annotations

import json
import logging
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, Literal

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from agent_world.envs.spec import EnvSpec, format_validation_error
from agent_world.evolution import diagnosis_prompts as prompts
from agent_world.mining.llm_miner import ask_structured
from agent_world.models import chat_model
from agent_world.tasks.difficulty import level_of
from agent_world.tasks.evaluation import (
    AGENT_ERROR_CLASSES,
    Attempt,
    ErrorClass,
    EvalReport,
    score,
)
from agent_world.tasks.model import Task, Trajectory

log = logging.getLogger(__name__)

LLM_ATTEMPTS = 3
MAX_EVIDENCE = 8  # trajectory ids cited per claim
MAX_TRACES = 12  # failure traces shown to the LLM

AgentErrorClass = Literal["format", "wrong_tool", "wrong_arguments", "gave_up",
                          "state_not_tracked"]
SkillName = Literal["choose_tool", "fill_arguments", "call_before_answering", "finish_chain",
                    "track_state", "call_format"]

# What trains against each error class (difficulty features the synthesizer understands).
REMEDY: dict[str, dict[str, Any]] = {
    "state_not_tracked": {"chain_length": +1, "aggregation": True,
                          "why": "longer chains whose answer combines several observations"},
    "wrong_arguments": {"chain_length": +1, "branching": 1,
                        "why": "chains where one call's output is the next call's input"},
    "wrong_tool": {"distractors": 3, "why": "tool views that hold the tools it mixed up"},
    "gave_up": {"chain_length": -1, "why": "shorter chains the policy can finish"},
    "format": {"chain_length": -1, "why": "short single-call tasks that practise the format"},
}
EXPLAIN = {
    "state_not_tracked": "calls were right but the answer or final state was wrong: the policy "
                         "loses track of what earlier observations said",
    "wrong_arguments": "the right tools were called with arguments the task does not need "
                       "(ids or filters misread from the request or earlier observations)",
    "wrong_tool": "the policy calls tools that do not exist or that the task does not need",
    "gave_up": "the policy stops, or answers before making the calls the task needs",
    "format": "the policy's output is not a readable tool call or answer",
}


class ToolMeta(BaseModel):
    """What the diagnoser compares tools by."""

    description: str = ""
    parameters: list[str] = Field(default_factory=list)
    required: list[str] = Field(default_factory=list)
    mutates: bool = False


class EnvMeta(BaseModel):
    """What the diagnoser knows about an environment."""

    name: str
    split: Literal["train", "heldout"] = "train"
    taxonomy: str = ""
    tools: list[str] = Field(default_factory=list)
    tool_info: dict[str, ToolMeta] = Field(default_factory=dict)
    tables: int = 0
    rows: int = 0

    @classmethod
    def from_spec(cls, spec: EnvSpec, split: Literal["train", "heldout"] = "train") -> EnvMeta:
        info = {t.name: ToolMeta(description=t.description,
                                 parameters=sorted(t.parameters.get("properties") or {}),
                                 required=list(t.parameters.get("required") or []),
                                 mutates=t.mutates) for t in spec.tools}
        return cls(name=spec.name, split=split, taxonomy=str(spec.theme.taxonomy),
                   tools=[t.name for t in spec.tools], tool_info=info, tables=len(spec.tables),
                   rows=spec.row_count())


class AttemptFinding(BaseModel):
    """What went wrong in one failed attempt, read from its trace and the task's gold chain."""

    trajectory_id: str
    task_id: str = ""
    env_name: str
    level: int = 1
    error_class: AgentErrorClass
    skill: SkillName
    expected: str | None = None  # the gold tool it should have called (or whose args it missed)
    called: str | None = None  # the tool it called instead (its visible name when not offered)
    offered: bool = True  # `called` was a tool of the task's view
    argument: str | None = None  # the argument it got wrong
    given: Any = None  # what it passed
    wanted: Any = None  # what the gold chain passes
    source: str | None = None  # where `wanted` was: "request", "observation 2 (get_order)", ...
    calls: int = 0  # tool calls it made
    gold_calls: int = 0  # calls of the gold chain
    chain: list[str] = Field(default_factory=list)  # the gold chain's tools
    detail: str = ""  # the finding as a sentence


class Confusion(BaseModel):
    """The policy called `called` where the chain needed `expected` ("env/tool" names)."""

    expected: str
    called: str
    count: int
    offered: bool = True  # False: `called` is no tool the task offered (an invented name)
    evidence: list[str] = Field(default_factory=list)


class ArgumentSlip(BaseModel):
    """A wrong value for `argument` of `tool` ("env/tool"); `source` says where the right one was."""

    tool: str
    argument: str
    source: str
    count: int
    evidence: list[str] = Field(default_factory=list)


class Skill(BaseModel):
    """A skill the failures lack, with the held-out tools where it showed."""

    name: SkillName
    error_class: AgentErrorClass
    count: int
    detail: str = ""
    tools: list[str] = Field(default_factory=list)
    evidence: list[str] = Field(default_factory=list)


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


class Citation(BaseModel):
    """Why one guideline entry is there: the failing attempts behind it."""

    kind: Literal["environment", "tool", "skill", "difficulty", "complexify", "confusable"]
    name: str
    why: str = ""
    evidence: list[str] = Field(default_factory=list)


class Guidelines(BaseModel):
    """What the synthesizer should generate next (its `guidelines` input)."""

    environments: list[str] = Field(default_factory=list)  # training environments to target
    tools: list[str] = Field(default_factory=list)  # "env/tool" in those environments
    error_classes: list[AgentErrorClass] = Field(default_factory=list)  # what to train against
    skills: list[SkillName] = Field(default_factory=list)
    # "env/tool" → tools of the same environment the targeted tasks' views must also show (the
    # analogues of the tools the policy mixed up); the key is a tool the walk starts at
    confusable: dict[str, list[str]] = Field(default_factory=dict)
    difficulty: DifficultyTarget = Field(default_factory=DifficultyTarget)
    # levels to synthesize at (empty: around `difficulty.level`)
    levels: list[Annotated[int, Field(ge=1, le=5)]] = Field(default_factory=list)
    complexify_databases: list[str] = Field(default_factory=list)
    cites: list[Citation] = Field(default_factory=list)
    notes: str = ""


class Diagnosis(BaseModel):
    summary: str
    pass_rate: float
    attempts: int
    weak_environments: list[WeakSpot] = Field(default_factory=list)
    weak_tools: list[WeakSpot] = Field(default_factory=list)
    errors: list[ErrorFinding] = Field(default_factory=list)
    findings: list[AttemptFinding] = Field(default_factory=list)
    confusions: list[Confusion] = Field(default_factory=list)
    argument_slips: list[ArgumentSlip] = Field(default_factory=list)
    skills: list[Skill] = Field(default_factory=list)
    guidelines: Guidelines = Field(default_factory=Guidelines)
    strategy: str = "offline"
    notes: list[str] = Field(default_factory=list)

    @property
    def target_error(self) -> str | None:
        return self.errors[0].error_class if self.errors else None

    def evidence_ids(self) -> set[str]:
        """Every attempt id the diagnosis cites."""
        ids = {f.trajectory_id for f in self.findings}
        for group in (self.weak_environments, self.weak_tools, self.errors, self.confusions,
                      self.argument_slips, self.skills, self.guidelines.cites):
            for item in group:
                ids.update(item.evidence)
        return ids

    def text(self) -> str:
        """The diagnosis as readable text (reports, CLI)."""
        cite = lambda ids: f" [evidence: {', '.join(ids[:4])}]" if ids else ""  # noqa: E731
        lines = [self.summary]
        if self.weak_environments:
            lines.append("Weak environments: " + ", ".join(
                f"{w.name} ({w.pass_rate:.0%} of {w.attempts})" for w in self.weak_environments))
        if self.weak_tools:
            lines.append("Weak tools: " + ", ".join(
                f"{w.name} ({w.pass_rate:.0%} of {w.attempts})" for w in self.weak_tools))
        for e in self.errors:
            lines.append(f"{e.error_class}: {e.count} failures ({e.share:.0%}) — {e.explanation}"
                         f"{cite(e.evidence)}")
        for c in self.confusions[:4]:
            lines.append(f"called {c.called} instead of {c.expected}: {c.count}x"
                         f"{cite(c.evidence)}")
        for a in self.argument_slips[:4]:
            lines.append(f"wrong {a.argument} for {a.tool} ({where_phrase(a.source)}): "
                         f"{a.count}x{cite(a.evidence)}")
        for s in self.skills[:4]:
            lines.append(f"skill {s.name}: {s.detail}{cite(s.evidence)}")
        g = self.guidelines
        d = g.difficulty
        conf = "; ".join(f"{k} beside {', '.join(v)}" for k, v in g.confusable.items())
        lines.append(
            f"Guidelines: target {', '.join(g.environments) or 'all environments'}"
            f"{' (tools ' + ', '.join(g.tools) + ')' if g.tools else ''}; "
            f"{'levels ' + ', '.join(map(str, g.levels)) if g.levels else f'level {d.level}'}, "
            f"chains of {d.chain_length}{', aggregation' if d.aggregation else ''}"
            f"{f', {d.distractors} distractors' if d.distractors else ''}"
            f"{f', branching {d.branching}' if d.branching else ''}"
            f"{'; views with ' + conf if conf else ''}"
            f"{'; complexify ' + ', '.join(g.complexify_databases) if g.complexify_databases else ''}"
            f". {g.notes}".rstrip())
        return "\n".join(lines)


# -- reading one failure -------------------------------------------------------------------------
SKILL_OF = {"wrong_tool": "choose_tool", "wrong_arguments": "fill_arguments",
            "state_not_tracked": "track_state", "format": "call_format"}


def _leaves(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return float(a) == float(b)
    return str(a).strip().lower() == str(b).strip().lower()


def _in_text(value: Any, text: str) -> bool:
    s = str(value).strip()
    if not s or isinstance(value, bool):
        return False
    return re.search(rf"(?<![\w.]){re.escape(s)}(?![\w])", text, re.IGNORECASE) is not None


def where_value(value: Any, instruction: str, earlier: list[tuple[int, str, Any]]) -> str:
    """Where an argument value was for the agent to take: "request", "observation k (tool)"
    (the first earlier successful call whose result holds it), or "nowhere before the call"."""
    if _in_text(value, instruction):
        return "request"
    for k, tool, result in earlier:
        if any(_same(leaf, value) for leaf in _leaves(result)):
            return f"observation {k} ({tool})"
    return "nowhere before the call"


EXTRA_ARGUMENT = "no such argument in the chain"


def where_phrase(source: str | None) -> str:
    """A `where_value` source (or `EXTRA_ARGUMENT`) as the end of a sentence about the value."""
    if source == EXTRA_ARGUMENT:
        return "the chain passes no such argument"
    if not source or source.startswith("nowhere"):
        return "the value appeared nowhere before the call"
    return f"the value was in the {source}"


def _args_key(args: Any) -> str:
    return json.dumps(args or {}, sort_keys=True, default=str)


def _real(task: Task, visible: str | None) -> str | None:
    return task.real_tool(visible) if visible else None


def read_failure(a: Attempt, task: Task | None, traj: Trajectory | None) -> AttemptFinding | None:
    """The finding of one failed attempt (None: it passed or an environment fault). Without the
    task or trace only the stored class and failing tool are known."""
    if a.passed or a.error_class in (None, "environment"):
        return None
    cls = a.error_class
    base = {"trajectory_id": a.trajectory_id, "task_id": a.task_id, "env_name": a.env_name,
            "level": a.level, "error_class": cls}
    if task is None or traj is None:
        # the stored failing tool is the foreign call for wrong_tool, else the gold tool missed
        foreign = cls == "wrong_tool"
        return AttemptFinding(**base, skill=SKILL_OF.get(cls, "finish_chain"),
                              expected=None if foreign else a.failing_tool,
                              called=a.failing_tool if foreign else None, offered=False,
                              chain=list(a.tools),
                              detail=f"{cls} at {a.failing_tool or 'an unknown tool'}")
    gold = [c.tool for c in task.chain]
    calls = [s for s in traj.steps if s.tool]
    used = [_real(task, s.tool) for s in calls]
    f = AttemptFinding(**base, skill=SKILL_OF.get(cls, "finish_chain"), calls=len(calls),
                       gold_calls=len(gold), chain=list(dict.fromkeys(gold)))
    done: list[str] = []  # gold tools called so far, in order
    earlier: list[tuple[int, str, Any]] = []
    for k, (s, real) in enumerate(zip(calls, used, strict=True), start=1):
        if cls == "wrong_tool" and (real is None or (gold and real not in gold)
                                    or s.error_kind in ("unknown_tool", "tool_not_in_view")):
            missing = [g for g in gold if g not in done]
            f.expected = missing[0] if missing else (gold[-1] if gold else None)
            f.called = real or s.tool
            f.offered = real is not None and s.error_kind not in ("unknown_tool",
                                                                  "tool_not_in_view")
            offered = "" if f.offered else " (not a tool it was offered)"
            f.detail = f"call {k}: {f.called}{offered} instead of {f.expected}"
            return f
        if cls == "wrong_arguments" and real in gold:
            got = s.arguments if isinstance(s.arguments, dict) else {}
            slots = [c for c in task.chain if c.tool == real]
            exact = any(_args_key(c.arguments) == _args_key(got) for c in slots)
            if not exact or s.ok is False:
                # the gold call it meant: the one sharing the most argument values
                slot = max(slots, key=lambda c: sum(
                    k in got and _same(got[k], v) for k, v in c.arguments.items()))
                keys = sorted(set(slot.arguments) | set(got),
                              key=lambda x: (x not in slot.arguments, x))
                bad = next((x for x in keys if x not in got or x not in slot.arguments
                            or not _same(got[x], slot.arguments[x])), None)
                f.expected = real
                f.argument = bad
                f.given = got.get(bad) if bad else None
                f.wanted = slot.arguments.get(bad) if bad else None
                if bad is not None and bad in slot.arguments:
                    f.source = where_value(slot.arguments[bad], task.instruction, earlier)
                elif bad is not None:
                    f.source = EXTRA_ARGUMENT
                refused = f" (refused: {s.error_kind})" if s.ok is False else ""
                f.detail = (f"call {k}: {real}({bad}={json.dumps(f.given, default=str)}) where "
                            f"the chain passes {json.dumps(f.wanted, default=str)}"
                            f"{refused}; {where_phrase(f.source)}" if bad else
                            f"call {k}: {real} refused ({s.error_kind}: "
                            f"{(s.error_message or '')[:80]})")
                return f
        if real in gold:
            done.append(real)
        if s.ok and real:
            earlier.append((k, real, s.result))
    if cls == "gave_up":
        missing = [g for g in gold if g not in done]
        f.expected = missing[0] if missing else None
        if not calls:
            f.skill = "call_before_answering"
            f.detail = ("answered without a call" if traj.finished and
                        traj.final_answer not in (None, "") else "stopped without a call")
            f.detail += f"; the chain starts with {f.expected}" if f.expected else ""
        else:
            f.skill = "finish_chain"
            made = ", ".join(done) or "none of the chain"
            f.detail = (f"stopped after {len(calls)} call(s) ({made}) of {len(gold)}; next was "
                        f"{f.expected}")
        return f
    if cls == "state_not_tracked":
        ref = task.reference_answer
        seen = where_value(ref, "", earlier) if ref not in (None, "") else ""
        held = re.match(r"observation \d+ \((.+)\)$", seen or "")
        f.expected = held.group(1) if held else (gold[-1] if gold else None)
        f.wanted, f.given = ref, traj.final_answer
        f.source = seen if seen.startswith("observation") else None
        f.detail = (f"right calls, answered {json.dumps(traj.final_answer, default=str)[:60]} "
                    f"for {json.dumps(ref, default=str)[:60]}"
                    + (f" (it was in {seen})" if f.source else ""))
        return f
    if cls == "format":
        said = next((s.text for s in traj.steps if s.text.strip()), "")
        f.detail = f"unreadable output: {said[:80]!r}"
        return f
    # a class the walk above did not place (e.g. a refused gold call without arguments)
    f.expected = a.failing_tool
    f.detail = f"{cls} at {a.failing_tool or '?'}"
    return f


# -- tool and environment similarity -----------------------------------------------------------
VERB_ROLE = {
    **dict.fromkeys(("get", "fetch", "read", "show", "lookup", "describe", "view", "status",
                     "info", "detail", "details"), "read"),
    **dict.fromkeys(("list", "search", "find", "query", "count", "browse", "filter", "log",
                     "diff"), "search"),
    **dict.fromkeys(("create", "add", "book", "insert", "new", "place", "register", "open",
                     "make", "post", "commit", "write", "init", "buy", "purchase", "reserve",
                     "lend", "borrow", "issue", "send"), "create"),
    **dict.fromkeys(("update", "set", "change", "edit", "modify", "cancel", "pay", "return",
                     "renew", "close", "assign", "approve", "waive", "checkout", "move",
                     "rename", "convert", "apply"), "update"),
    **dict.fromkeys(("delete", "remove", "drop", "reset", "clear"), "delete"),
}


def _tokens(text: str) -> set[str]:
    text = re.sub(r"([a-z])([A-Z])", r"\1_\2", text)
    # "reservations" and "reservation" name the same thing
    return {t[:-1] if len(t) > 4 and t.endswith("s") and not t.endswith("ss") else t
            for t in re.split(r"[^a-z0-9]+", text.lower()) if len(t) > 2}


def _head(name: str) -> str:
    """The thing a tool is about: the last word of its name that is no verb
    (list_customer_reservations → reservation)."""
    words = [t for t in re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
                                 .lower()) if t and t not in VERB_ROLE]
    return next(iter(_tokens(words[-1])), words[-1]) if words else name.lower()


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _role(name: str, meta: ToolMeta | None) -> str:
    for tok in re.split(r"[^a-z0-9]+", name.lower()):
        if tok in VERB_ROLE:
            return VERB_ROLE[tok]
    return "update" if meta is not None and meta.mutates else "read"


def tool_similarity(a: str, ma: ToolMeta | None, b: str, mb: ToolMeta | None) -> float:
    """How alike two tools are for the agent: name tokens, verb role, whether they write,
    parameter names and description words."""
    sim = _jaccard(_tokens(a), _tokens(b)) + 0.5 * (_role(a, ma) == _role(b, mb))
    if ma is not None and mb is not None:
        sim += 0.25 * (ma.mutates == mb.mutates)
        sim += 0.5 * _jaccard(set().union(*map(_tokens, ma.parameters or [""])),
                              set().union(*map(_tokens, mb.parameters or [""])))
        sim += 0.25 * _jaccard(_tokens(ma.description), _tokens(mb.description))
    return sim


def _env_similarity(a: EnvMeta, b: EnvMeta) -> float:
    """Taxonomy path overlap (L1 counts most) plus tool-name token overlap."""
    pa, pb = [p.strip() for p in a.taxonomy.split("/")], [p.strip() for p in b.taxonomy.split("/")]
    tax = sum(w for w, x, y in zip((0.5, 0.3, 0.2), pa, pb, strict=False) if x and x == y)
    ta = set().union(*(_tokens(t) for t in a.tools)) if a.tools else set()
    tb = set().union(*(_tokens(t) for t in b.tools)) if b.tools else set()
    return tax + _jaccard(ta, tb)


def _split_ref(ref: str) -> tuple[str, str]:
    env, _, tool = ref.partition("/")
    return env, tool


def _meta_of(envs: Mapping[str, EnvMeta], ref: str) -> ToolMeta | None:
    env, tool = _split_ref(ref)
    m = envs.get(env)
    return m.tool_info.get(tool) if m is not None else None


def _analogue(ref: str, env: EnvMeta, envs: Mapping[str, EnvMeta],
              exclude: Iterable[str] = ()) -> tuple[float, str]:
    """The tool of training environment `env` most like `ref` ("env/tool"): (score, "env/t")."""
    src_env, tool = _split_ref(ref)
    if src_env == env.name and tool in env.tools:
        return 10.0, ref
    skip = set(exclude)
    meta = _meta_of(envs, ref)
    return max(((tool_similarity(tool, meta, t, env.tool_info.get(t)), f"{env.name}/{t}")
                for t in env.tools if t not in skip), default=(0.0, ""))


# -- offline strategy ----------------------------------------------------------------------------
def _weak_envs(report: EvalReport, overall: float, limit: int) -> list[WeakSpot]:
    weak = [WeakSpot(name=k, pass_rate=round(c.pass_rate, 4), attempts=c.attempts,
                     evidence=c.failures[:MAX_EVIDENCE])
            for k, c in report.by_env.items()
            if c.failures and (c.pass_rate < overall or c.pass_rate < 0.5)]
    weak.sort(key=lambda w: (w.pass_rate, -len(w.evidence), w.name))
    return weak[:limit]


def _weak_tools(findings: list[AttemptFinding], report: EvalReport,
                limit: int) -> list[WeakSpot]:
    """Tools the failures involve: the ones it should have called or filled, and the ones it
    called instead; most failures first."""
    ids: dict[str, list[str]] = defaultdict(list)
    for f in findings:
        # a state not tracked spans the chain: every call's observation was the agent's to read
        span = f.chain if f.error_class == "state_not_tracked" else []
        for tool in dict.fromkeys(t for t in (f.expected, f.called if f.offered else None,
                                              *span) if t):
            ids[f"{f.env_name}/{tool}"].append(f.trajectory_id)
    out = []
    for name, evidence in ids.items():
        cell = report.by_tool.get(name)
        out.append(WeakSpot(name=name, pass_rate=round(cell.pass_rate, 4) if cell else 0.0,
                            attempts=cell.attempts if cell else len(evidence),
                            evidence=evidence[:MAX_EVIDENCE]))
    out.sort(key=lambda w: (-len(ids[w.name]), w.pass_rate, w.name))
    return out[:limit]


def _source_kind(source: str | None) -> str:
    """"observation 2 (get_customer)" → "observation of get_customer" (any step)."""
    return re.sub(r"^observation \d+ \((.+)\)$", r"observation of \1", source or "?")


def _group(findings: list[AttemptFinding], key: Any) -> dict[Any, list[str]]:
    out: dict[Any, list[str]] = defaultdict(list)
    for f in findings:
        k = key(f)
        if k is not None:
            out[k].append(f.trajectory_id)
    return dict(sorted(out.items(), key=lambda kv: (-len(kv[1]), str(kv[0]))))


def _skills(findings: list[AttemptFinding]) -> list[Skill]:
    out = []
    for (name, cls), ids in _group(findings, lambda f: (f.skill, f.error_class)).items():
        mine = [f for f in findings if f.skill == name and f.error_class == cls]
        tools = list(dict.fromkeys(f"{f.env_name}/{f.expected}" for f in mine if f.expected))
        if name == "choose_tool":
            pairs = Counter(f"{f.called}{'' if f.offered else ' (not offered)'} for "
                            f"{f.expected or '?'}" for f in mine if f.called)
            detail = ("it called " + ", ".join(f"{p} ({n}x)" for p, n in pairs.most_common(3))
                      if pairs else "it called tools the task does not need")
        elif name == "fill_arguments":
            srcs = Counter(_source_kind(f.source) for f in mine)
            detail = "wrong argument values: " + ", ".join(
                f"{where_phrase(s)} ({n}x)" for s, n in srcs.most_common())
        elif name == "call_before_answering":
            detail = "it answered or stopped without a single call"
        elif name == "finish_chain":
            detail = "it stopped before the chain's last call"
        elif name == "track_state":
            detail = "it made the calls but answered something else"
        else:
            detail = "its output was not a readable call or answer"
        out.append(Skill(name=name, error_class=cls, count=len(ids), detail=detail,
                         tools=tools[:5], evidence=ids[:MAX_EVIDENCE]))
    return out


def _cite(cites: dict[tuple[str, str], Citation], kind: str, name: str, why: str,
          evidence: Iterable[str]) -> None:
    c = cites.setdefault((kind, name), Citation(kind=kind, name=name, why=why))  # type: ignore[arg-type]
    if why and why not in c.why:
        c.why = f"{c.why}; {why}" if c.why else why
    c.evidence = list(dict.fromkeys([*c.evidence, *evidence]))[:MAX_EVIDENCE]


def _confusable_pair(exp: str, called: str, env: EnvMeta, envs: Mapping[str, EnvMeta]
                     ) -> tuple[float, str, str] | None:
    """The pair of `env`'s tools most like the confusion (expected, called): each like its
    counterpart, and alike to each other (a pair an agent can mix up)."""
    if exp.startswith(env.name + "/") and called.startswith(env.name + "/") and \
            _split_ref(called)[1] in env.tools:
        return 10.0, _split_ref(exp)[1], _split_ref(called)[1]
    me, mc = _meta_of(envs, exp), _meta_of(envs, called)
    want = (_role(_split_ref(exp)[1], me), _role(_split_ref(called)[1], mc))
    roles = {t: _role(t, env.tool_info.get(t)) for t in env.tools}
    # the same kind of mix-up (one by id for a list, a read for a write...) where there is one
    same = any(roles[e] == want[0] and roles[c] == want[1] for e in env.tools
               for c in env.tools if c != e)
    best: tuple[float, str, str] | None = None
    for e in env.tools:
        se = tool_similarity(_split_ref(exp)[1], me, e, env.tool_info.get(e))
        for c in env.tools:
            if c == e or (same and (roles[e], roles[c]) != want):
                continue
            sc = tool_similarity(_split_ref(called)[1], mc, c, env.tool_info.get(c))
            pair = tool_similarity(e, env.tool_info.get(e), c, env.tool_info.get(c))
            # the same relation: both about one thing (get_order / list_orders) or not
            related = (_head(e) == _head(c)) == (_head(_split_ref(exp)[1]) ==
                                                 _head(_split_ref(called)[1]))
            score = se + sc + pair + 1.0 * related
            if best is None or score > best[0]:
                best = (score, e, c)
    return best


def offline_diagnosis(report: EvalReport, envs: Mapping[str, EnvMeta],
                      findings: list[AttemptFinding] | None = None) -> Diagnosis:
    findings = list(findings or [])
    overall = report.pass_rate
    weak_envs = _weak_envs(report, overall, limit=3)
    weak_tools = _weak_tools(findings, report, limit=6)
    errors: list[ErrorFinding] = []
    for cls in AGENT_ERROR_CLASSES:
        ids = report.errors.get(cls, [])
        if not ids:
            continue
        mine = [f for f in findings if f.error_class == cls]
        by_env = Counter(f.env_name for f in mine)
        by_tool = Counter(f"{f.env_name}/{f.expected}" for f in mine if f.expected)
        errors.append(ErrorFinding(
            error_class=cls, count=len(ids), share=round(report.error_share(cls), 4),
            environments=[n for n, _ in sorted(by_env.items(), key=lambda x: (-x[1], x[0]))][:3],
            tools=[n for n, _ in sorted(by_tool.items(), key=lambda x: (-x[1], x[0]))][:3],
            explanation=EXPLAIN[cls], evidence=ids[:MAX_EVIDENCE]))
    errors.sort(key=lambda f: (-f.count, AGENT_ERROR_CLASSES.index(f.error_class)))
    confusions = [Confusion(expected=f"{env}/{exp}", called=f"{env}/{called}", count=len(ids),
                            offered=offered, evidence=ids[:MAX_EVIDENCE])
                  for (env, exp, called, offered), ids in _group(
                      [f for f in findings if f.error_class == "wrong_tool"],
                      lambda f: (f.env_name, f.expected, f.called, f.offered)
                      if f.expected and f.called else None).items()]
    slips = [ArgumentSlip(tool=f"{env}/{tool}", argument=arg, source=src, count=len(ids),
                          evidence=ids[:MAX_EVIDENCE])
             for (env, tool, arg, src), ids in _group(
                 [f for f in findings if f.error_class == "wrong_arguments"],
                 lambda f: (f.env_name, f.expected, f.argument, _source_kind(f.source))
                 if f.expected and f.argument else None).items()]
    skills = _skills(findings)
    top = [e.error_class for e in errors[:2]]
    guidelines = _guidelines(report, envs, findings, weak_envs, weak_tools, errors, confusions,
                             slips, skills)
    summary = (f"Held-out pass rate {overall:.0%} over {report.attempts} attempts"
               + (f"; dominant error: {top[0]} ({errors[0].count} failures)" if top else
                  "; no agent errors")
               + (f"; weakest environment: {weak_envs[0].name} ({weak_envs[0].pass_rate:.0%})"
                  if weak_envs else "")
               + (f"; most frequent confusion: {confusions[0].called} for "
                  f"{confusions[0].expected} ({confusions[0].count}x)" if confusions else "")
               + ".")
    return Diagnosis(summary=summary, pass_rate=round(overall, 4), attempts=report.attempts,
                     weak_environments=weak_envs, weak_tools=weak_tools, errors=errors,
                     findings=findings, confusions=confusions, argument_slips=slips,
                     skills=skills, guidelines=guidelines, strategy="offline")


def _guidelines(report: EvalReport, envs: Mapping[str, EnvMeta], findings: list[AttemptFinding],
                weak_envs: list[WeakSpot], weak_tools: list[WeakSpot],
                errors: list[ErrorFinding], confusions: list[Confusion],
                slips: list[ArgumentSlip], skills: list[Skill]) -> Guidelines:
    train = {n: m for n, m in envs.items() if m.split == "train"}
    top = [e.error_class for e in errors[:2]]
    cites: dict[tuple[str, str], Citation] = {}
    # training environments: alike to the weak held-out ones, and holding analogues of the
    # weak tools (a weak training environment is its own target)
    score: dict[str, float] = defaultdict(float)
    behind: dict[str, list[str]] = defaultdict(list)
    for rank, w in enumerate(weak_envs):
        meta = envs.get(w.name)
        for t in train.values():
            s = 10.0 if t.name == w.name else (_env_similarity(meta, t) if meta else 0.0)
            if s > 0:
                score[t.name] += s / (rank + 1)
                behind[t.name] += w.evidence
    for rank, w in enumerate(weak_tools):
        for t in train.values():
            s, _ = _analogue(w.name, t, envs)
            if s > 0:
                score[t.name] += s / (rank + 1)
                behind[t.name] += w.evidence
    targets = sorted(score, key=lambda n: (-score[n], n))[:3]
    if not targets and findings:  # nothing alike: every training environment, on the evidence
        targets = sorted(train)[:3]
        for n in targets:
            behind[n] = [f.trajectory_id for f in findings]
    for n in targets:
        _cite(cites, "environment", n, "alike to the environments and tools the failures "
              "involve", behind[n])
    # tools: the analogues of the weak tools in the target environments
    tools: list[str] = []
    for w in weak_tools:
        options = [(s, ref) for s, ref in (_analogue(w.name, envs[n], envs) for n in targets)
                   if ref]
        if not options:
            continue
        s, ref = max(options)
        if s <= 0.5:  # nothing more alike than a shared verb role
            continue
        tools.append(ref)
        _cite(cites, "tool", ref, f"like {w.name}", w.evidence)
    # wrong_tool: views holding the analogues of the tools it mixed up
    confusable: dict[str, list[str]] = {}
    for c in confusions:
        if not c.offered:
            continue  # an invented name: nothing to show beside the right tool
        options = [(p[0], n, p[1], p[2]) for n in targets
                   if (p := _confusable_pair(c.expected, c.called, envs[n], envs))]
        if not options:
            continue
        _, env, exp, called = max(options)
        key = f"{env}/{exp}"
        # both ways: tasks calling the right tool beside the one it called, and tasks calling
        # that one beside the right tool, so each is practised where it belongs
        for a, b in ((exp, called), (called, exp)):
            confusable.setdefault(f"{env}/{a}", [])
            if b not in confusable[f"{env}/{a}"]:
                confusable[f"{env}/{a}"].append(b)
        tools += [key, f"{env}/{called}"]
        _cite(cites, "confusable", f"{key} ~ {env}/{called}",
              f"it called {c.called} instead of {c.expected}", c.evidence)
        _cite(cites, "tool", key, f"stands for {c.expected}, mixed up with {c.called}",
              c.evidence)
    # wrong_arguments: tools of the targets whose parameters are like the slipped argument
    for slip in slips[:3]:
        arg = _tokens(slip.argument)
        options = [(len(arg & _tokens(p)) + 0.1 * len(m.required), f"{n}/{t}")
                   for n in targets for t, m in envs[n].tool_info.items()
                   for p in (m.required or m.parameters)]
        options = [o for o in options if o[0] >= 1]
        if options:
            _, ref = max(options)
            tools.append(ref)
            _cite(cites, "tool", ref, f"takes an argument like {slip.argument} (wrong for "
                  f"{slip.tool}; {where_phrase(slip.source)})", slip.evidence)
    for s in skills:
        _cite(cites, "skill", s.name, s.detail, s.evidence)
    # difficulty: around the failed tasks of the dominant class, moved by its remedy
    diff = _difficulty(report, findings, top, cites)
    data_bound = {"state_not_tracked", "wrong_arguments"}
    complexify = [t for t in targets if top and top[0] in data_bound][:2]
    for n in complexify:
        _cite(cites, "complexify", n, f"{top[0]} failures depend on the data", behind[n])
    notes = "; ".join(f"{c}: {REMEDY[c]['why']}" for c in top)
    # the levels the failed tasks sit at and those around the remedy's: targeted tasks have
    # the shape of what the policy fails (the remedy's level alone held every targeted task at
    # L1-L2 while the failures spread over L1-L4)
    levels = sorted({f.level for f in findings} |
                    {lv for lv in (diff.level - 1, diff.level, diff.level + 1) if 1 <= lv <= 5})
    return Guidelines(environments=targets, tools=list(dict.fromkeys(tools))[:8],
                      error_classes=top, skills=[s.name for s in skills[:3]],
                      confusable=confusable, difficulty=diff, levels=levels,
                      complexify_databases=complexify, cites=list(cites.values()), notes=notes)


def _difficulty(report: EvalReport, findings: list[AttemptFinding], top: list[str],
                cites: dict[tuple[str, str], Citation]) -> DifficultyTarget:
    level = None
    for lv in sorted(report.by_level, key=int):  # the policy's edge: the first level it fails
        if report.by_level[lv].pass_rate < 0.5:
            level = int(lv)
            break
    if level is None:
        level = min(5, max((int(k) for k in report.by_level), default=1) + 1)
    mine = [f for f in findings if top and f.error_class == top[0]]
    chains = sorted(f.gold_calls for f in mine if f.gold_calls)
    chain = chains[len(chains) // 2] if chains else max(1, level)
    if top and top[0] == "gave_up":
        # stopped mid-chain: one call past where it stopped; no call at all: single calls
        reached = sorted(f.calls for f in mine)
        chain = max(1, reached[len(reached) // 2] + 1) if reached else 1
    diff = DifficultyTarget(level=level, chain_length=max(1, min(8, chain)))
    if top:
        r = REMEDY[top[0]]
        if top[0] not in ("gave_up",):
            diff.chain_length = max(1, min(8, diff.chain_length + r.get("chain_length", 0)))
        diff.aggregation = r.get("aggregation", False)
        diff.branching = r.get("branching", 0)
        diff.distractors = r.get("distractors", 0)
        if top[0] == "wrong_arguments" and mine and \
                all((f.source or "").startswith("request") for f in mine):
            diff.branching = 0  # the values were in the request: no chaining needed
        # a level counts reasoning steps: the remedy's features may lie above the policy's edge
        diff.level = max(diff.level, level_of(diff.chain_length, diff.branching,
                                              diff.aggregation))
        at_level = [f.trajectory_id for f in mine if f.level == level] or \
            [f.trajectory_id for f in mine]
        _cite(cites, "difficulty", f"level {diff.level}, chains of {diff.chain_length}",
              f"{top[0]}: {r['why']}", at_level)
    return diff


# -- LLM strategy --------------------------------------------------------------------------------
def _check(d: Diagnosis, report: EvalReport, envs: Mapping[str, EnvMeta]) -> Diagnosis:
    """Reject invented evidence, environments or tools (ValueError with what is wrong)."""
    failing = {i for ids in report.errors.values() for i in ids}
    failing |= {i for c in report.by_env.values() for i in c.failures}
    env_names = set(envs) | set(report.by_env)
    train = {n for n, m in envs.items() if m.split == "train"}
    tools = {f"{n}/{t}" for n, m in envs.items() for t in m.tools} | set(report.by_tool)
    problems: list[str] = []
    claims: list[tuple[str, list[str]]] = [(f"weak environment {w.name}", w.evidence)
                                           for w in d.weak_environments]
    claims += [(f"weak tool {w.name}", w.evidence) for w in d.weak_tools]
    claims += [(f"error {e.error_class}", e.evidence) for e in d.errors]
    claims += [(f"confusion {c.called} for {c.expected}", c.evidence) for c in d.confusions]
    claims += [(f"argument {a.argument} of {a.tool}", a.evidence) for a in d.argument_slips]
    claims += [(f"skill {s.name}", s.evidence) for s in d.skills]
    claims += [(f"guideline {c.kind} {c.name}", c.evidence) for c in d.guidelines.cites]
    claims += [(f"finding on {f.trajectory_id}", [f.trajectory_id]) for f in d.findings]
    for what, evidence in claims:
        if not evidence:
            problems.append(f"{what} cites no evidence")
        bad = [i for i in evidence if i not in failing]
        if bad:
            problems.append(f"{what} cites unknown trajectory ids {bad[:3]}")
    for name in [w.name for w in d.weak_environments]:
        if name not in env_names:
            problems.append(f"unknown environment {name!r}")
    for name in d.guidelines.environments + d.guidelines.complexify_databases:
        if name not in train:
            problems.append(f"{name!r} is not a training environment")
    for name in [w.name for w in d.weak_tools]:
        if name not in tools:
            problems.append(f"unknown tool {name!r} (write tools as env/tool)")
    for name in d.guidelines.tools:
        if name not in tools or _split_ref(name)[0] not in train:
            problems.append(f"guideline tool {name!r} is not a training tool (env/tool)")
    for key, others in d.guidelines.confusable.items():
        env = _split_ref(key)[0]
        if key not in tools or env not in train or any(f"{env}/{o}" not in tools
                                                      for o in others):
            problems.append(f"confusable {key!r}: {others} are not tools of one training "
                            "environment")
    cited = {(c.kind, c.name) for c in d.guidelines.cites}
    for name in d.guidelines.environments:
        if ("environment", name) not in cited:
            problems.append(f"guideline environment {name!r} has no citation")
    if problems:
        raise ValueError("; ".join(problems[:8]))
    return d.model_copy(update={"pass_rate": round(report.pass_rate, 4),
                                "attempts": report.attempts, "strategy": "llm"})


def _trace_text(tid: str, traj: Trajectory, task: Task | None, limit: int = 1500) -> str:
    steps = []
    for s in traj.steps[:8]:
        if s.tool:
            out = (json.dumps(s.result, default=str)[:160] if s.ok
                   else f"{s.error_kind}: {s.error_message or ''}")
            steps.append(f"{s.tool}({json.dumps(s.arguments, default=str)[:120]}) -> {out[:160]}")
        elif s.text:
            steps.append(f"said: {s.text[:120]}")
    answer = json.dumps(traj.final_answer, default=str)[:120]
    text = f"- {tid} [task {traj.task_id}]"
    if task is not None:
        gold = ", ".join(f"{c.tool}({json.dumps(c.arguments, default=str)[:80]})"
                         for c in task.chain)
        text += (f" request: {task.instruction[:240]!r}; gold: {gold}; reference: "
                 f"{json.dumps(task.reference_answer, default=str)[:80]}; tools offered: "
                 f"{', '.join(f'{k}={v}' if k != v else k for k, v in task.tool_view.items())}")
    text += " | calls: " + (" | ".join(steps) or "none") + f" | answer: {answer}"
    return text[:limit]


def _user_prompt(report: EvalReport, envs: Mapping[str, EnvMeta],
                 trajectories: Mapping[str, Trajectory], tasks: Mapping[str, Task],
                 draft: Diagnosis) -> str:
    rows = lambda cells: "\n".join(  # noqa: E731
        f"- {k}: {c.passes}/{c.attempts} = {c.pass_rate:.2f}" for k, c in sorted(cells.items()))
    failing = [i for ids in report.errors.values() for i in ids]
    traces = [_trace_text(i, trajectories[i], tasks.get(trajectories[i].task_id))
              for i in failing[:MAX_TRACES] if i in trajectories]
    return prompts.USER.format(
        pass_rate=report.pass_rate, attempts=report.attempts, by_env=rows(report.by_env),
        by_level=rows(report.by_level),
        errors="\n".join(f"- {k}: {v}" for k, v in report.errors.items()) or "(none)",
        errors_by_tool=json.dumps(report.errors_by_tool, sort_keys=True),
        envs="\n".join(f"- {m.name} [{m.split}] {m.taxonomy}: {', '.join(m.tools)}"
                       for m in envs.values()) or "(none)",
        traces="\n".join(traces) or "(none)", draft=draft.model_dump_json(indent=1))


def _llm_diagnosis(model: Any, report: EvalReport, envs: Mapping[str, EnvMeta],
                   trajectories: Mapping[str, Trajectory], tasks: Mapping[str, Task],
                   draft: Diagnosis) -> tuple[Diagnosis | None, list[str]]:
    messages: list[Any] = [SystemMessage(content=prompts.SYSTEM), HumanMessage(
        content=_user_prompt(report, envs, trajectories, tasks, draft))]
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
             trajectories: Mapping[str, Trajectory] | None = None,
             tasks: Mapping[str, Task] | None = None) -> Diagnosis:
    """Diagnose an evaluation (see the module docstring). `tasks` by task id (their gold
    chains say which tool and which argument each failure missed)."""
    attempts = list(attempts)
    report = score(attempts)
    env_map = {m.name: m for m in envs}
    trajectories, tasks = trajectories or {}, tasks or {}
    findings = [f for a in attempts
                if (f := read_failure(a, tasks.get(a.task_id),
                                      trajectories.get(a.trajectory_id))) is not None]
    draft = offline_diagnosis(report, env_map, findings)
    model = chat_model("diagnoser")
    if model is None or report.attempts == 0:
        return draft
    answer, errors = _llm_diagnosis(model, report, env_map, trajectories, tasks, draft)
    if answer is not None:
        return answer
    note = (f"LLM diagnosis rejected {len(errors)} times "
            f"({errors[-1].splitlines()[0][:200] if errors else 'no answer'}); offline used")
    return draft.model_copy(update={"notes": [*draft.notes, note]})


__all__ = ["ArgumentSlip", "AttemptFinding", "Citation", "Confusion", "Diagnosis",
           "DifficultyTarget", "EnvMeta", "ErrorClass", "ErrorFinding", "Guidelines", "Skill",
           "ToolMeta", "WeakSpot", "diagnose", "offline_diagnosis", "read_failure",
           "tool_similarity", "where_value"]
