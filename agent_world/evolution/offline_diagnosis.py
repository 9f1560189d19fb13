"""The offline diagnosis: weak environments and tools, error classes, confusions, argument slips
and skills read from the failures' findings, and the synthesizer's guidelines (training
environments and tools alike to the weak ones, confusable pairs, difficulty, the failed tasks'
shape, databases to grow), each claim citing the failing attempts behind it. Deterministic."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

from agent_world.evolution.diagnosis_model import (
    ArgumentSlip,
    AttemptFinding,
    Citation,
    Confusion,
    Diagnosis,
    DifficultyTarget,
    EnvMeta,
    ErrorFinding,
    FailureShape,
    Guidelines,
    Skill,
    WeakSpot,
    where_phrase,
)
from agent_world.evolution.similarity import (
    analogue,
    env_similarity,
    head_noun,
    meta_of,
    split_ref,
    tokens,
    tool_similarity,
    verb_role,
)
from agent_world.tasks.difficulty import MANY_DISTRACTORS, level_of
from agent_world.tasks.evaluation import AGENT_ERROR_CLASSES, EvalReport

MAX_EVIDENCE = 8  # trajectory ids cited per claim

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
            split_ref(called)[1] in env.tools:
        return 10.0, split_ref(exp)[1], split_ref(called)[1]
    me, mc = meta_of(envs, exp), meta_of(envs, called)
    want = (verb_role(split_ref(exp)[1], me), verb_role(split_ref(called)[1], mc))
    roles = {t: verb_role(t, env.tool_info.get(t)) for t in env.tools}
    # the same kind of mix-up (one by id for a list, a read for a write...) where there is one
    same = any(roles[e] == want[0] and roles[c] == want[1] for e in env.tools
               for c in env.tools if c != e)
    best: tuple[float, str, str] | None = None
    for e in env.tools:
        se = tool_similarity(split_ref(exp)[1], me, e, env.tool_info.get(e))
        for c in env.tools:
            if c == e or (same and (roles[e], roles[c]) != want):
                continue
            sc = tool_similarity(split_ref(called)[1], mc, c, env.tool_info.get(c))
            pair = tool_similarity(e, env.tool_info.get(e), c, env.tool_info.get(c))
            # the same relation: both about one thing (get_order / list_orders) or not
            related = (head_noun(e) == head_noun(c)) == (head_noun(split_ref(exp)[1]) ==
                                                 head_noun(split_ref(called)[1]))
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
            s = 10.0 if t.name == w.name else (env_similarity(meta, t) if meta else 0.0)
            if s > 0:
                score[t.name] += s / (rank + 1)
                behind[t.name] += w.evidence
    for rank, w in enumerate(weak_tools):
        for t in train.values():
            s, _ = analogue(w.name, t, envs)
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
        options = [(s, ref) for s, ref in (analogue(w.name, envs[n], envs) for n in targets)
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
        arg = tokens(slip.argument)
        options = [(len(arg & tokens(p)) + 0.1 * len(m.required), f"{n}/{t}")
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
    shape = _shape(findings, cites)
    return Guidelines(environments=targets, tools=list(dict.fromkeys(tools))[:8],
                      error_classes=top, skills=[s.name for s in skills[:3]],
                      confusable=confusable, difficulty=diff, shape=shape, levels=levels,
                      complexify_databases=complexify, cites=list(cites.values()), notes=notes)


def _shape(findings: list[AttemptFinding], cites: dict[tuple[str, str], Citation]
           ) -> FailureShape | None:
    """The failed tasks' shape, cited by them (None: no failure read)."""
    if not findings:
        return None
    n = len(findings)
    shape = FailureShape(
        failures=n, levels=dict(sorted(Counter(f.level for f in findings).items())),
        obscured=round(sum(f.obscured for f in findings) / n, 4),
        many_distractors=round(sum(f.distractors >= MANY_DISTRACTORS for f in findings) / n, 4),
        programmatic=round(sum(f.kind == "programmatic" for f in findings) / n, 4))
    _cite(cites, "shape", f"{n} failed tasks", shape.text(), [f.trajectory_id for f in findings])
    return shape


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


__all__ = ["EXPLAIN", "MAX_EVIDENCE", "REMEDY", "offline_diagnosis"]
