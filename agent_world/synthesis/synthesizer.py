"""The task synthesizer: turns executed walks into tasks (instruction, reference, rubric, code).

Two kinds of candidates, both grown from a weighted random walk on the tool-dependency graph
(`agent_world.tasks.walks`) and grounded by executing it (`agent_world.tasks.truth`):

- **graph** tasks: the answer is one field of the chain's last observation (or nothing, when
  the chain ends in a write and is checked on the state); checked by `check_task` against the
  reference answer and the expected changes.
- **programmatic** tasks: the chain ends in a list and the answer aggregates it (how many match
  a value, a total, a maximum or minimum); they carry a Python solution (`solve(env)`, tool
  calls plus logic) and a verification script (`verify(initial_db, final_db, answer)`), both
  run isolated.

The instruction and rubric come from the "synthesizer" chat model when one is configured
(`models.chat_model("synthesizer")`, prompts in `synthesizer_prompts`); offline — or when the
model's text breaks a rule (names a tool, drops a stated value) — from templates with varied
phrasing built from the tools' descriptions and the walk's data. A task never names its tools.

This module grows the candidates; their words are written in `task_text`, what they ask
is chosen in `task_answers` and a programmatic task's code is in `task_code`.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.synthesis import phrasing
from agent_world.synthesis.phrasing_values import field_words, noun, role, value_text
from agent_world.synthesis.task_answers import answer_options, echoed
from agent_world.synthesis.task_code import solution_source, verify_source
from agent_world.synthesis.task_text import (
    bulk_text,
    llm_bulk_text,
    llm_text,
    names_a_tool,
    offline_text,
    request_writer,
    rubric_for,
)
from agent_world.tasks.check import normalise, stated_values
from agent_world.tasks.difficulty import MANY_DISTRACTORS, Recipe, difficulty
from agent_world.tasks.flaws import chain_flaws
from agent_world.tasks.model import Task
from agent_world.tasks.programs import bulk_solution_source, bulk_verify_source, find_bulk
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.sql_questions import request, sql_change, sql_question
from agent_world.tasks.truth import Truth, ground_truth, run_plan
from agent_world.tasks.walks import (
    Plan,
    PlanStep,
    _bind_step,
    _selector,
    _timestamp,
    collapse_rereads,
    prune_detours,
    random_walk,
    scalar_fields,
)
from agent_world.tasks.words import (
    added_labels,
    lost_inputs,
    runs_sql,
    sql_param,
    table_entity,
    tool_entity,
)


# ---- tool views -----------------------------------------------------------------------------
def tool_view(spec: EnvSpec, plan: Plan, recipe: Recipe, rng: random.Random,
              salt: str) -> dict[str, str]:
    """The tools the agent sees: the chain's tools plus distractors, maybe under opaque names."""
    needed = list(dict.fromkeys(s.tool for s in plan.steps))
    others = [t.name for t in spec.tools if t.name not in needed]
    if recipe.many_distractors:
        k = len(others) if len(others) < MANY_DISTRACTORS else \
            rng.randint(MANY_DISTRACTORS, len(others))
    else:
        k = rng.randint(0, min(MANY_DISTRACTORS - 1, len(others), 4))
    names = needed + rng.sample(others, k)
    rng.shuffle(names)
    if not recipe.obscured:
        return {n: n for n in names}
    view: dict[str, str] = {}
    for n in names:
        opaque = "tool_" + hashlib.sha256(f"{salt}:{n}".encode()).hexdigest()[:6]
        view[opaque] = n
    return view


# ---- candidates -------------------------------------------------------------------------------
def _one_record_twice(plan: Plan) -> bool:
    """A call given one record under two roles ("timezone 1 as the source and as the
    target"): a conversion from a zone to itself is nothing a person asks for."""
    for s in plan.steps:
        keys = [(b.step, b.field) for p, b in s.bound.items() if role(p) == "key"]
        given = [normalise(v) for p, v in s.given.items() if role(p, v) == "key"]
        if len(set(keys)) < len(keys) or len(set(given)) < len(given) and len({
                noun(p).split()[-1] for p, v in s.given.items()
                if role(p, v) == "key"}) < len(given):
            return True
    return False


def build_candidate(spec: EnvSpec, graph: Any, runtime: EnvRuntime, rng: random.Random,
                    recipe: Recipe, kind: str, seed: int, sampler: ValueSampler,
                    model: Any = None, start: str | None = None,
                    origin: dict[str, Any] | None = None,
                    bulk_share: float | None = None) -> Task | str:
    """One candidate task (not yet gated or verified), or why none came out of this walk.
    `bulk_share`: how often a programmatic walk first tries a task that writes."""
    if kind == "programmatic" and start is None and rng.random() < LIST_START:
        # a programmatic task needs a list: most of its walks start at a tool that lists
        lists = sorted(n for n in graph if graph.nodes[n].get("returns") == "list"
                       and not spec.tool(n).mutates)
        start = rng.choice(lists) if lists else None
    conditional = kind == "graph" and recipe.condition
    ep = runtime.open(spec, seed=seed)
    try:
        # a few calls past the recipe's length: the detours pruned below shorten the walk
        plan = random_walk(spec, graph, ep, rng, recipe.length + WALK_SLACK, start=start,
                           sampler=sampler, writes=kind == "graph" and not conditional)
    finally:
        ep.close()
    if plan is None:
        return "the walk's first call failed"
    if runs_sql(spec, plan.steps[0].tool):
        # a statement's rows feed no other tool: the walk is the statement alone, asked as a
        # question over the data (or a change of it)
        if kind != "graph" or conditional:
            return "a SQL tool is asked a question, not aggregated or branched on"
        return _sql_candidate(spec, runtime, rng, recipe, plan.steps[0].tool, seed, origin)
    if _one_record_twice(plan):
        return "one record in two roles of a call"
    plan = _fit_length(plan, spec, recipe.length)
    observations, changes = run_plan(spec, runtime, plan, seed)
    results = [o.result if o is not None and o.ok else None for o in observations]
    if len(results) == len(plan.steps):
        # a read that only repeats what an earlier one showed goes (the no-shortcut gate
        # would reject the longer chain), then what fed only it
        plan, results = collapse_rereads(plan, results, spec)
        plan, kept = prune_detours(plan, spec)
        results = [results[i] for i in kept]
        # what the collapse left may be a chain no walk would take (Expo's "open the
        # DevTools, then rename that devtool" once the re-read between them went)
        flaws = chain_flaws({"origin": {"plan": plan.model_dump()}}, spec)
        if flaws:
            return f"the chain has a flaw: {flaws[0].replace('_', ' ')}"
    if conditional:
        return _conditional_candidate(spec, graph, runtime, rng, recipe, plan, results, seed,
                                      sampler, origin, model)
    if kind == "programmatic":
        last_list = max((i for i, r in enumerate(results)
                         if isinstance(r, list) and len(r) >= 2), default=None)
        if last_list is None:
            return "no list to aggregate in the walk"
        if rng.random() < (BULK_SHARE if bulk_share is None else bulk_share):
            found = find_bulk(spec, graph, runtime, plan, results, last_list, rng, sampler, seed)
            if not isinstance(found, str):
                return _bulk_candidate(spec, found, recipe, rng, seed, origin, model)
        plan = Plan(steps=[s.model_copy(deep=True) for s in plan.steps[: last_list + 1]])
        plan.steps[-1].select = None  # the whole list is aggregated: no element is picked
        plan, kept = prune_detours(plan, spec)
        results = [results[i] for i in kept]
    changed = _changed_columns(changes) if plan.writes(spec) else None
    if changed is not None and not spec.tool(plan.steps[-1].tool).mutates:
        changed = None  # a read after the write: its fields are what it shows
    labels = added_labels(spec)
    options = answer_options(plan, results[-1], rng, aggregate=kind == "programmatic",
                             changed=changed, labels=labels,
                             listing=spec.tool(plan.steps[-1].tool))
    while not options and kind == "graph" and len(plan.steps) > 1 and \
            not spec.tool(plan.steps[-1].tool).mutates:
        # the last read gives nothing to ask: the walk up to the call before it may
        plan, kept = prune_detours(Plan(steps=plan.steps[:-1]), spec)
        results = [results[i] for i in kept]
        options = answer_options(plan, results[-1], rng, aggregate=False, labels=labels,
                                 listing=spec.tool(plan.steps[-1].tool))
    last_tool = spec.tool(plan.steps[-1].tool)
    if last_tool.mutates:
        options.append({"kind": "none"})
    if not options:
        return "nothing to ask about the walk's last observation"
    truth: Truth | str = "no answer option"
    answer: dict[str, Any] = {}
    for answer in options:
        truth = ground_truth(spec, runtime, plan, answer, seed)
        if isinstance(truth, Truth) and answer["kind"] == "field" and _given_key(answer, truth):
            # "open that run's project: what is the project's id?" asks back the key a call
            # was given: known before the call
            truth = "the answer is a key the chain's calls were given"
        if isinstance(truth, Truth):
            break
    if isinstance(truth, str):
        return truth
    flaws = chain_flaws({"origin": {"plan": plan.model_dump()},
                         "reference_answer": truth.answer}, spec)
    if flaws:  # what a walk's own rules let through (a name the miner gave a record)
        return f"the chain has a flaw: {flaws[0].replace('_', ' ')}"
    view = tool_view(spec, plan, recipe, rng, salt=f"{seed}:{rng.random()}")
    text = llm_text(model, spec, plan, answer, truth) if model is not None else None
    writer = request_writer(model, text)
    instruction, rubric = text or offline_text(
        spec, plan, answer, rng, changed=_asked_changes(spec, plan, answer,
                                                        truth.expected_changes or {}),
        value=truth.answer)
    if names_a_tool(instruction, spec, view):
        return "the instruction names a tool"
    diff = _difficulty(spec, truth, plan, view, recipe,
                       aggregation=answer.get("kind") in ("count", "sum", "max", "min"))
    task = Task(
        kind=kind, env_name=spec.name, env_fingerprint=spec.fingerprint, seed=seed,
        instruction=instruction, tool_view=view, chain=truth.chain,
        reference_answer=truth.answer, rubric=rubric or rubric_for(spec, plan, answer, truth),
        expected_changes=truth.expected_changes, difficulty=diff,
        origin={**(origin or {}), "plan": plan.model_dump(mode="json"), "answer": answer,
                "writer": writer, "recipe": recipe.__dict__})
    if kind == "programmatic":
        task = task.model_copy(update={"solution": solution_source(plan, answer),
                                       "verify": verify_source(
                                           truth, stated_values(instruction).get("number", []))})
    return _with_state_hash(task, spec, runtime)


def _given_key(answer: dict[str, Any], truth: Truth) -> bool:
    """Whether the answer is a record's key that one of the chain's calls was given."""
    field = str(answer.get("field", ""))
    return (field == "id" or field.endswith(("_id", "Id"))) and normalise(truth.answer) in {
        normalise(v) for c in truth.chain for v in c.arguments.values()
        if not isinstance(v, dict | list)}


WALK_SLACK = 2  # calls a walk may take past its recipe's length before the detours go


def _sql_candidate(spec: EnvSpec, runtime: EnvRuntime, rng: random.Random, recipe: Recipe,
                   tool: str, seed: int, origin: dict[str, Any] | None) -> Task | str:
    """A question over the stored data for a tool that runs SQL, its statement the gold
    call (`tasks.sql_questions`). A runner built without what its service requires beside
    the statement (Cosmos DB's mcp_cosmos_query without its container) asks nothing the
    service would answer."""
    if lost_inputs(spec, tool):
        return "the tool was built without an input its service requires"
    writes = spec.tool(tool).mutates
    question = (sql_change if writes else sql_question)(spec, rng)
    if question is None:
        return "no question over the stored data"
    plan = Plan(steps=[PlanStep(tool=tool, given={sql_param(spec, tool): question.sql})])
    answer = {"kind": "none"} if writes else {"kind": "field", "step": 0,
                                              "field": question.column}
    truth = ground_truth(spec, runtime, plan, answer, seed)
    if isinstance(truth, str):
        return truth
    rows = truth.observations[0].result
    if writes and sum(len(d.get("updated", [])) for d in truth.expected_changes.values()) != 1:
        return "the statement does not change one record"
    if not writes and (not isinstance(rows, list) or len(rows) != 1 or
                       truth.answer in (0, None)):
        return "the statement does not answer with one value"
    if question.form in ("count", "link_count") and truth.answer < 2:
        return "a count of one is a guess away"
    view = tool_view(spec, plan, recipe, rng, salt=f"{seed}:{rng.random()}")
    return _with_state_hash(Task(
        kind="graph", env_name=spec.name, env_fingerprint=spec.fingerprint, seed=seed,
        instruction=request(question, rng), tool_view=view, chain=truth.chain,
        reference_answer=truth.answer, rubric=rubric_for(spec, plan, answer, truth),
        expected_changes=truth.expected_changes,
        difficulty=_difficulty(spec, truth, plan, view, recipe,
                               aggregation=question.aggregation),
        origin={**(origin or {}), "plan": plan.model_dump(mode="json"), "answer": answer,
                "writer": "offline", "recipe": recipe.__dict__,
                "sql": {"form": question.form}}), spec, runtime)


def _fit_length(plan: Plan, spec: EnvSpec, length: int) -> Plan:
    """The longest prefix of the walk whose steps, detours left out, are at most `length`."""
    for n in range(len(plan.steps), 0, -1):
        fitted, _ = prune_detours(Plan(steps=plan.steps[:n]), spec)
        if len(fitted.steps) <= length:
            return fitted
    return Plan(steps=plan.steps[:1])


def _with_state_hash(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> Task:
    ep = runtime.open(spec, seed=task.seed)
    try:
        for c in task.chain:
            ep.step(c.tool, c.arguments)
        task.expected_state_hash = ep.state_hash()
    finally:
        ep.close()
    return task.with_id()


def _changed_columns(changes: dict[str, Any]) -> set[str]:
    """Columns a change set updated (or filled in a row it inserted)."""
    out: set[str] = set()
    for delta in (changes or {}).values():
        for u in delta.get("updated", []):
            out |= {c for c in u.get("after", {}) if u.get("before", {}).get(c) !=
                    u["after"][c]}
    return out


def _asked_changes(spec: EnvSpec, plan: Plan, answer: dict[str, Any],
                   changes: dict[str, Any]) -> set[str]:
    """Columns the chain changed on the kind of record the question asks about ("the
    repository's new updated at" was asked of a repository after a branch was edited; "the
    project's new name" after a section was renamed and the project recoloured)."""
    step = answer.get("step")
    if step is None or step >= len(plan.steps):
        return _changed_columns(changes)
    ent = tool_entity(spec, plan.steps[step].tool)
    return _changed_columns({t: d for t, d in changes.items()
                             if table_entity(t) == ent})


def _difficulty(spec: EnvSpec, truth: Truth, plan: Plan, view: dict[str, str], recipe: Recipe,
                aggregation: bool, condition: bool = False, tools: set[str] | None = None
                ) -> Any:
    tools = tools or {c.tool for c in truth.chain}
    needed = len(set(view.values()) & (tools | {s.tool for s in plan.steps}))
    return difficulty(chain_length=len(truth.chain), branching=plan.branching,
                      aggregation=aggregation, distractors=len(view) - needed,
                      obscured=recipe.obscured, distinct_tools=len(tools), condition=condition)


# ---- conditional tasks ---------------------------------------------------------------------
CONDITION_DOMAIN = (2, 12)  # distinct values a condition's field takes in the database


def _conditional_candidate(spec: EnvSpec, graph: Any, runtime: EnvRuntime, rng: random.Random,
                           recipe: Recipe, plan: Plan, results: list[Any], seed: int,
                           sampler: ValueSampler, origin: dict[str, Any] | None,
                           model: Any) -> Task | str:
    """A request that branches on a value the agent observes: the walk's reads, then "if
    its status is X, <write>; otherwise tell me its Y". The gold chain is the branch the
    observed value takes; the other branch is a known-wrong solution (`gates`)."""
    i = len(plan.steps) - 1
    last = results[i]
    if isinstance(last, list):
        items = [x for x in last if isinstance(x, dict)]
        if len(items) < 2:
            return "nothing to branch on"
        item = rng.choice(items)
        plan.steps[i].select = _selector(items, item, set(plan.steps[i].given), rng,
                                         added_labels(spec), spec.tool(plan.steps[i].tool)) or None
        if plan.steps[i].select is None:
            return "nothing to branch on"
        last = item
    if not isinstance(last, dict):
        return "nothing to branch on"
    fields = scalar_fields(last)
    echo = echoed(plan) | {normalise(v) for v in (plan.steps[i].select or {}).values()}
    # a field an earlier pick or filter fixed is known before the read: no condition on it
    fixed = {k for s in plan.steps for k in [*(s.select or {}), *s.given]}
    conds = []
    for f, v in fields.items():
        domain = sorted({str(x) for x in sampler.columns.get(f, []) if isinstance(x, str)})
        if isinstance(v, str) and not _timestamp(f, v) and not f.endswith("id") and \
                CONDITION_DOMAIN[0] <= len(domain) <= CONDITION_DOMAIN[1] and v in domain and \
                f not in fixed:
            conds.append((f, v, domain))
    # a write the branch's record feeds first; one a record read before it feeds after
    # ("if the copy is damaged, suspend that loan's member"): with them, a walk of 5 reads
    # and a write reaches level 5
    writes = sorted({dst for _, dst in graph.out_edges(plan.steps[i].tool)
                     if spec.tool(dst).mutates})
    writes += sorted({dst for s in plan.steps[:i] for _, dst in graph.out_edges(s.tool)
                      if spec.tool(dst).mutates} - set(writes))
    if not conds or not writes:
        return "nothing to branch on"
    f, observed, domain = rng.choice(conds)
    holds = rng.random() < 0.5
    value = observed if holds else rng.choice([d for d in domain if d != observed])
    labels = added_labels(spec)
    others = [k for k, v in fields.items() if k != f and v is not None and
              not isinstance(v, bool) and normalise(v) not in echo and not _timestamp(k, v)
              and len(str(v)) <= 60 and str(v).strip() and not k.endswith("id")
              and str(v) not in labels]
    if not others:
        return "nothing to ask when the condition fails"
    else_field = rng.choice(sorted(others))
    near = [w for w in writes if w in _fed_by(graph, plan, i, spec)]
    far = [w for w in writes if w not in near]
    rng.shuffle(near)
    rng.shuffle(far)
    for write in (near + far)[:4]:
        step = _bind_step(spec, graph, plan, results, write, sampler, rng)
        if step is None or normalise(step.given.get(f, object())) == normalise(value):
            continue  # "if its region is Pacific, set its region to Pacific" asks nothing
        then_plan = Plan(steps=[*plan.steps, step])
        if chain_flaws({"origin": {"plan": then_plan.model_dump()}}, spec):
            continue
        cond = {"step": i, "field": f, "value": value, "holds": holds,
                "write": step.model_dump(mode="json"), "else_field": else_field}
        else_answer = {"kind": "field", "step": i, "field": else_field}
        then_truth = ground_truth(spec, runtime, then_plan, {"kind": "none"}, seed)
        if isinstance(then_truth, str) or not then_truth.expected_changes:
            continue  # the write must do something in either branch's world
        gold_plan, answer = (then_plan, {"kind": "none"}) if holds else (plan, else_answer)
        truth = then_truth if holds else ground_truth(spec, runtime, plan, else_answer, seed)
        if isinstance(truth, str):
            return truth
        view = tool_view(spec, then_plan, recipe, rng, salt=f"{seed}:{rng.random()}")
        instruction = phrasing.conditional_instruction(spec, plan, cond, rng)
        text = None
        if model is not None:
            text = llm_text(model, spec, plan, {"kind": "condition", **cond}, truth)
            if text is not None:
                instruction = text[0]
        writer = request_writer(model, text)
        if names_a_tool(instruction, spec, view):
            return "the instruction names a tool"
        diff = _difficulty(spec, truth, gold_plan, view, recipe, aggregation=False,
                           condition=True, tools={s.tool for s in then_plan.steps})
        rubric = [f"Reads the {field_words(f)} before deciding.",
                  ("Makes the change, since the condition holds, and nothing else." if holds
                   else "Changes nothing, since the condition does not hold, and states the "
                        f"{field_words(else_field)}: {value_text(truth.answer)}.")]
        task = Task(
            kind="graph", env_name=spec.name, env_fingerprint=spec.fingerprint, seed=seed,
            instruction=instruction, tool_view=view, chain=truth.chain,
            reference_answer=truth.answer, rubric=rubric,
            expected_changes=truth.expected_changes, difficulty=diff,
            origin={**(origin or {}), "plan": gold_plan.model_dump(mode="json"),
                    "answer": answer, "condition": cond, "writer": writer,
                    "recipe": recipe.__dict__})
        return _with_state_hash(task, spec, runtime)
    return "no write the observed record feeds"


def _fed_by(graph: Any, plan: Plan, i: int, spec: EnvSpec) -> set[str]:
    return {dst for _, dst in graph.out_edges(plan.steps[i].tool) if spec.tool(dst).mutates}


def chain_target(task: Task) -> str:
    """What a task asks of which records: its gold calls and the element, condition or
    list filter its answer is about. Two tasks of a set with the same pair are the same
    task asked twice (one order looked up for four different fields)."""
    answer = task.origin.get("answer") or {}
    target = {"where": answer.get("where"), "bulk": (task.origin.get("bulk") or {}).get("where"),
              "condition": bool(task.origin.get("condition"))}
    calls = [[c.tool, sorted((k, str(v)) for k, v in c.arguments.items())] for c in task.chain]
    return hashlib.sha256(json.dumps([calls, target], sort_keys=True, default=str)
                          .encode()).hexdigest()[:16]


def _bulk_candidate(spec: EnvSpec, found: tuple[dict, Plan, list, dict], recipe: Recipe,
                    rng: random.Random, seed: int, origin: dict[str, Any] | None,
                    model: Any = None) -> Task | str:
    """A programmatic task that writes (see `agent_world.tasks.programs`)."""
    bulk, reads, chain, changes = found
    flaws = chain_flaws({"origin": {"plan": reads.model_dump()}}, spec)
    if flaws:
        return f"the chain has a flaw: {flaws[0].replace('_', ' ')}"
    view = tool_view(spec, Plan(steps=[*reads.steps, PlanStep(tool=bulk["write"])]), recipe,
                     rng, salt=f"{seed}:{rng.random()}")
    text = llm_bulk_text(model, spec, reads, bulk) if model is not None else None
    writer = request_writer(model, text)
    instruction, rubric = text or bulk_text(spec, reads, bulk, rng)
    if names_a_tool(instruction, spec, view):
        return "the instruction names a tool"
    tools = {s.tool for s in reads.steps} | {bulk["write"]}
    # the loop is one step of the chain, however many targets it writes
    diff = difficulty(chain_length=len(reads.steps) + 1, branching=reads.branching,
                      aggregation=True,
                      distractors=len(view) - len(tools), obscured=recipe.obscured,
                      distinct_tools=len(tools), condition=True)
    n = len([c for c in chain if c.tool == bulk["write"]])
    task = Task(
        kind="programmatic", env_name=spec.name, env_fingerprint=spec.fingerprint, seed=seed,
        instruction=instruction, tool_view=view, chain=chain,
        reference_answer=n if bulk["answer"] == "count" else None, rubric=rubric,
        expected_changes=changes, difficulty=diff,
        solution=bulk_solution_source(reads, bulk),
        verify=bulk_verify_source(bulk, stated_values(instruction).get("number", [])),
        origin={**(origin or {}), "plan": reads.model_dump(mode="json"),
                "answer": {"kind": "bulk"}, "bulk": bulk, "writer": writer,
                "recipe": recipe.__dict__})
    return task.with_id()


BULK_SHARE = 0.5  # share of programmatic walks that try a task that writes first
LIST_START = 0.7  # share of programmatic walks that start at a tool returning a list



__all__ = ["BULK_SHARE", "LIST_START", "build_candidate", "chain_target", "tool_view"]
