"""What a diagnosis is made of: the metadata of the environments it reads, the finding of each
failed attempt, the weak spots, confusions, argument slips and skills the failures share, the
synthesizer's guidelines with their citations, and the `Diagnosis` itself
(`agent_world.evolution.diagnosis.diagnose` makes one)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field

from agent_world.envs.spec import EnvSpec

AgentErrorClass = Literal["format", "wrong_tool", "wrong_arguments", "gave_up",
                          "state_not_tracked"]
SkillName = Literal["choose_tool", "fill_arguments", "call_before_answering", "finish_chain",
                    "track_state", "call_format"]


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
    # the failed task's shape (what targeted tasks imitate): its kind, opaque names, distractors
    kind: Literal["graph", "programmatic"] = "graph"
    obscured: bool = False
    distractors: int = 0
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


class FailureShape(BaseModel):
    """The shape of the failed tasks (levels, opaque names, many distractors, programs):
    targeted tasks take its opaque names and distractors, so they look like what the policy
    fails instead of like a fixed remedy's idea of it; its levels and programs are read, not
    imitated (drawn in them, round-1 targeted tasks held half the gold calls and the held-out
    reward fell: docs/ablation.md)."""

    failures: int = Field(default=0, ge=0)  # failed tasks read
    levels: dict[int, int] = Field(default_factory=dict)  # level -> failures at it
    obscured: float = Field(default=0.0, ge=0.0, le=1.0)  # share with opaque tool names
    many_distractors: float = Field(default=0.0, ge=0.0, le=1.0)  # share with many distractors
    programmatic: float = Field(default=0.0, ge=0.0, le=1.0)  # share of programmatic tasks

    def text(self) -> str:
        return ("levels " + ", ".join(f"L{lv} {k}" for lv, k in self.levels.items())
                + f"; {self.obscured:.0%} opaque names, {self.many_distractors:.0%} many "
                f"distractors, {self.programmatic:.0%} programs")


class Citation(BaseModel):
    """Why one guideline entry is there: the failing attempts behind it."""

    kind: Literal["environment", "tool", "skill", "difficulty", "shape", "complexify",
                  "confusable"]
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
    # None: no failures read (a hand-written guidelines file): `difficulty`'s features alone
    shape: FailureShape | None = None
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
            f"{'; drawn like the failed tasks (' + g.shape.text() + ')' if g.shape else ''}"
            f"{'; complexify ' + ', '.join(g.complexify_databases) if g.complexify_databases else ''}"
            f". {g.notes}".rstrip())
        return "\n".join(lines)



EXTRA_ARGUMENT = "no such argument in the chain"


def where_phrase(source: str | None) -> str:
    """A `where_value` source (or `EXTRA_ARGUMENT`) as the end of a sentence about the value."""
    if source == EXTRA_ARGUMENT:
        return "the chain passes no such argument"
    if not source or source.startswith("nowhere"):
        return "the value appeared nowhere before the call"
    return f"the value was in the {source}"



__all__ = ["AgentErrorClass", "ArgumentSlip", "AttemptFinding", "Citation", "Confusion",
           "Diagnosis", "DifficultyTarget", "EXTRA_ARGUMENT", "EnvMeta", "ErrorFinding", "FailureShape",
           "Guidelines", "Skill", "SkillName", "ToolMeta", "WeakSpot", "where_phrase"]
