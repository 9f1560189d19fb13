"""Trust gates: what every task must pass before it is emitted.

- `initial_state_fails`: the check fails on the untouched initial state, with no answer and
  with an empty one (no free reward).
- `gold_replay`: the gold solution — the task's chain for graph tasks, its solution script
  (isolated) for programmatic ones — passes the check in a fresh episode, twice, with the same
  outcome (answer and state hash); anything that depends on more than the seed is dropped.
- `known_wrong`: solutions known to be wrong fail the check: the last call dropped, a stated
  argument perturbed to another valid value, a read-only run that skips the writes, each write
  aimed at another record it accepts; for a programmatic task that writes in a loop, solution
  scripts that skip the writes, stop after the first target or ignore the condition. Each
  variant that differs from the gold run must fail (`agent_world.synthesis.solution_gates`).

- `artefacts`: the request reads like a person's (`agent_world.tasks.artefacts`: no ": of",
  no argument names before their values, no machine timestamps, ...).
- `answer_from_state`: the answer is a value of the database or computed from it: not the
  engine's clock (or a time a write computed from it), not an id the engine generated, not
  a value the request gives away or world knowledge answers (a time zone's offset).
- `solvable`: every gold argument is stated in the request, read from an earlier
  observation of the gold chain, or read from another chain of the environment's tools (a
  bounded search: up to two rounds of look-ups fed by what is stated and observed, whose
  single record holds the value); every list element the chain picks is picked by a stated
  value that singles it out; a list the answer is computed from is whole (no page size
  that another, as valid, would change); a condition's value is stated.
- `no_shortcut`: no look-up of the gold chain can be left out: a chain without it, its
  dependents fed the same values by an earlier call, does not pass the check (a task that
  passes with fewer calls claims a level it does not have: "find the member, open their full
  record, tell me their status", when the first call already shows the status); nor do the
  first calls alone, with the reference answer (a walk back to where it started).

- `natural` (last): with a "judge" chat model configured, the judge rates the request at least
  3 of 5 for how a user would write it (`agent_world.synthesis.naturalness`).

Gates need the task's plan and answer spec (`task.origin["plan"]`, `task.origin["answer"]`,
written by the synthesizer). `run_gates` stops at the first failure; the synthesizer writes
that failure to the ledger with the gate's name.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, available_timezones

from agent_world.envs.database import read_rows
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import slug
from agent_world.synthesis.naturalness import gate_natural
from agent_world.synthesis.phrasing_values import date_text
from agent_world.synthesis.solution_gates import gate_gold_replay, gate_known_wrong, task_plan
from agent_world.tasks.artefacts import artefacts
from agent_world.tasks.check import check_episode, normalise
from agent_world.tasks.model import GateResult, Step, Task
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.toolgraph import record_tables, table_columns
from agent_world.tasks.truth import STEP_SHIFT, extract_answer
from agent_world.tasks.walks import (
    execute_plan,
    scalar_fields,
    selected,
    without_step,
)
from agent_world.tasks.words import PAGING, source_tools, sql_param

GATES = ("serves_source", "artefacts", "answer_from_state", "solvable", "initial_state_fails",
         "gold_replay", "known_wrong", "no_shortcut", "natural")


def gate_serves_source(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    """A task calls at least one of the service's own tools: 54 % of the corpus's tasks (and
    43 of the 72 default ones: time zones looked up, never converted) used only the lookups
    and edits the arena adds over the mined tables, and trained nothing of the service."""
    served = source_tools(spec)
    called = [s.tool for s in task.chain or []]
    if not served or set(called) & served:
        return GateResult(name="serves_source", passed=True,
                          detail="calls " + ", ".join(sorted(set(called) & served))
                          if served else "no source tools: an authored environment")
    return GateResult(name="serves_source", passed=False,
                      detail=f"calls none of the service's tools ({', '.join(sorted(served)[:4])}"
                             f"{', ...' if len(served) > 4 else ''}), only the arena's own")


def gate_initial_state(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    ep = runtime.open(spec, seed=task.seed)
    try:
        for answer in (None, ""):
            res = check_episode(task, ep, answer)
            if res.passed:
                return GateResult(name="initial_state_fails", passed=False,
                                  detail=f"the untouched initial state passes ({res.detail})")
        return GateResult(name="initial_state_fails", passed=True,
                          detail=f"initial state scores {res.score:g}")
    finally:
        ep.close()


# ---- the request ------------------------------------------------------------------------------
def gate_artefacts(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    found = artefacts(task.instruction, spec, task.chain)
    if found:
        return GateResult(name="artefacts", passed=False,
                          detail="the request reads like a template: " + ", ".join(found))
    return GateResult(name="artefacts", passed=True, detail="no template artefact")


# ---- the answer comes from the state ----------------------------------------------------------
# a zone by its name (UTC and GMT too: "+00:00" is no more looked up for them than for Paris)
_ZONE = re.compile(r"\b(?:(?:Africa|America|Antarctica|Asia|Atlantic|Australia|Europe|Indian|"
                   r"Pacific|Etc)/[A-Za-z_]+(?:/[A-Za-z_]+)?|UTC|GMT)\b")
_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?")


def _db_values(path: Any) -> set[str]:
    """Every value of every user table of a database, normalised."""
    out: set[str] = set()
    tables = [r["name"] for r in read_rows(
        path, "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
              "AND name NOT LIKE '\\_aw\\_%' ESCAPE '\\'")]
    for t in tables:
        for row in read_rows(path, f'SELECT * FROM "{t}"'):
            out |= {normalise(v) for v in row.values() if v is not None}
    return out


def clock_values(spec: EnvSpec, calls: int) -> set[str]:
    """What the engine's clock reads during a chain of `calls` calls run at any step offset:
    every call's time (a minute per committed write) and its date."""
    start = datetime.fromisoformat(spec.clock_start)
    out = set()
    for minutes in range(0, calls + STEP_SHIFT + 2):
        t = start + timedelta(minutes=minutes)
        out |= {normalise(t.isoformat(timespec="seconds")), normalise(t.date().isoformat()),
                normalise(t.isoformat(timespec="minutes"))}
    return out


def _zone_facts(zone: str) -> set[str]:
    """What anyone knows about a time zone without looking: its region, city and offsets."""
    try:
        tz = ZoneInfo(zone)
    except Exception:  # not a zone this Python knows: nothing to compare with
        return set()
    out = {normalise(p.replace("_", " ")) for p in zone.split("/")} | {normalise(zone)}
    for month in (1, 7):
        off = datetime(2026, month, 15, tzinfo=tz).utcoffset()
        if off is None:
            continue
        minutes = int(off.total_seconds() // 60)
        sign = "-" if minutes < 0 else "+"
        h, m = divmod(abs(minutes), 60)
        out |= {normalise(f"{sign}{h:02d}:{m:02d}"), normalise(f"UTC{sign}{h:02d}:{m:02d}")}
        if minutes:  # UTC's 0 hours is any count's or day offset's 0, not a fact about it
            out |= {normalise(f"{sign}{h:02d}{m:02d}"), normalise(minutes / 60),
                    normalise(minutes)}
        out.add(normalise(datetime(2026, month, 15, tzinfo=tz).tzname() or ""))
    return out


_ZONES = frozenset(available_timezones())


def gate_answer_from_state(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    """The answer is a value of the database (or computed from it), not one the engine's
    clock or id counter made, nor one the request or world knowledge gives away."""
    def fail(why: str) -> GateResult:
        return GateResult(name="answer_from_state", passed=False, detail=why)

    answer = task.origin.get("answer") or {"kind": "none"}
    ref = task.reference_answer
    if answer.get("kind", "none") == "none" or ref is None:
        return GateResult(name="answer_from_state", passed=True, detail="checked on the state")
    if answer.get("kind") in ("count", "sum", "max", "min") or answer.get("kind") == "bulk":
        return GateResult(name="answer_from_state", passed=True,
                          detail=f"{answer['kind']} computed from the listed records")
    want = normalise(ref)
    if want in clock_values(spec, len(task.chain)):
        return fail(f"the answer {ref!r} is the engine's clock")
    ep = runtime.open(spec, seed=task.seed)
    try:
        initial = _db_values(ep.template)
        for c in task.chain:
            ep.step(c.tool, c.arguments)
        final = _db_values(ep.path)
    finally:
        ep.close()
    if isinstance(ref, str) and _TIMESTAMP.fullmatch(ref.strip()) and want not in initial:
        return fail(f"the answer {ref!r} is a time a write computed from the engine's clock")
    for delta in (task.expected_changes or {}).values():
        for row in delta.get("inserted", []):
            keys = [k for k in row if k == "id" or k.endswith("_id")]
            if any(normalise(row[k]) == want for k in keys[:1]):
                return fail(f"the answer {ref!r} is an id the engine generated")
    text = task.instruction
    if re.search(r"(?<![\w-])" + re.escape(str(ref)) + r"(?![\w-])", text, re.I) and \
            not isinstance(ref, bool) and len(str(ref)) > 1:
        return fail(f"the request gives the answer {ref!r} away")
    said = slug(str(ref))
    if isinstance(ref, str) and "-" in said and \
            re.search(r"(?<![\w-])" + re.escape(said) + r"(?![\w])", text.lower()):
        # a URL or path that names its page: "the url '.../docs/data-fetching'" gives the
        # page's title 'Data fetching' away
        return fail(f"the request gives the answer {ref!r} away (as {said!r})")
    if answer.get("kind") == "section":  # read from a body the chain's call shows
        return GateResult(name="answer_from_state", passed=True,
                          detail=f"an item of the {answer['section']!r} section of a body")
    for zone in set(_ZONE.findall(text)) & _ZONES:
        if want in _zone_facts(zone):
            return fail(f"the answer {ref!r} is world knowledge about {zone}")
    if want not in initial | final and not (isinstance(ref, int | float) and
                                            not spec.tool(task.chain[-1].tool).mutates):
        return fail(f"the answer {ref!r} is not a value of the database")
    return GateResult(name="answer_from_state", passed=True,
                      detail="the answer is a value of the database")


# ---- solvable from the request ----------------------------------------------------------------
_NUMBER = re.compile(r"-?\$?\d[\d,]*(?:\.\d+)?")


def stated(value: Any, text: str) -> bool:
    """Whether a request states a value (in any of the forms the phrasing writes it)."""
    if isinstance(value, bool):
        return True  # a flag is said in words ("the active ones"): not checked here
    if isinstance(value, int | float):
        for m in _NUMBER.findall(text):
            try:
                if abs(float(m.replace(",", "").replace("$", "")) - float(value)) < 1e-9:
                    return True
            except ValueError:
                continue
        return False
    if isinstance(value, list) and value and all(
            isinstance(v, str | int | float) and not isinstance(v, bool) for v in value):
        return all(stated(v, text) for v in value)  # "the urls 'a' and 'b'"
    if isinstance(value, dict | list):
        return False
    v = str(value).strip()
    low = text.lower()
    forms = {v.lower(), v.lower().replace("_", " ")}
    d = date_text(v)
    if d:
        forms.add(d.lower())
    return any(re.search(r"(?<![\w])" + re.escape(f) + r"(?![\w])", low) for f in forms if f)


def _values(result: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(result, dict):
        for v in result.values():
            out |= _values(v) if isinstance(v, dict | list) else {normalise(v)}
    elif isinstance(result, list):
        for v in result:
            out |= _values(v)
    elif result is not None:
        out.add(normalise(result))
    return out




# what a designed listing returns at most when nothing bounds it (design's MAX_ROWS)
_LIST_CAP = 100


def _full_page(spec: EnvSpec, tool: str, args: dict[str, Any], result: Any) -> int | None:
    """The page size a list result fills (its tool's default page, or the listing cap): a
    count over it may miss records (Google Calendar's 6 declined of the first 20 responses,
    23 of all 100). None: the result is all there is, or the call chose its page."""
    if not isinstance(result, list) or any(p in args for p in PAGING):
        return None
    props = spec.tool(tool).parameters.get("properties", {})
    page = next((props[p]["default"] for p in PAGING if isinstance(
        props.get(p, {}).get("default"), int)), _LIST_CAP)
    return page if len(result) >= page else None


def _names_many(spec: EnvSpec, ep: Any, tool: str, args: dict[str, Any], result: Any) -> int:
    """How many records hold the values the arguments give for the record a call returned
    (0: one, or no record of a table): a look-up by a name five services share returns the
    first, and the task's answer takes it for the one ('data-related-service')."""
    if not isinstance(result, dict) or result.get("id") is None or spec.tool(tool).mutates:
        return 0  # a write's arguments are what it sets, not what it finds the record by
    fields = {f: v for f, v in result.items() if f != "id" and not f.endswith("_id")
              and isinstance(v, str | int | float) and not isinstance(v, bool)
              and any(v == a for p, a in args.items() if p not in PAGING)}
    if not fields:
        return 0  # the arguments name no field of it: nothing to count
    columns = table_columns(spec)
    tables = record_tables(set(result), columns, tool)
    if len(tables) != 1:
        return 0
    (table,) = tables
    fields = {f: v for f, v in fields.items() if f in columns[table]}
    if not fields:
        return 0
    where = " AND ".join(f'"{f}" = ?' for f in fields)
    n = ep.query(f'SELECT count(*) AS n FROM "{table}" WHERE {where}', list(fields.values()))
    return n[0]["n"] if n and n[0]["n"] > 1 else 0


def gate_solvable(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    """Everything the gold chain needs is in the request or in what earlier calls return."""
    def fail(why: str) -> GateResult:
        return GateResult(name="solvable", passed=False, detail=why)

    text = task.instruction
    via: list[str] = []
    ep = runtime.open(spec, seed=task.seed)
    try:
        observed: set[str] = set()
        named: dict[str, Any] = {}  # values known by name: stated, or one record's fields
        answer = task.origin.get("answer") or {}
        for k, c in enumerate(task.chain):
            obs = ep.step(c.tool, c.arguments)
            many = _names_many(spec, ep, c.tool, c.arguments, obs.result)
            if many:
                return fail(f"call {k + 1} ({c.tool}) finds one of {many} records its "
                            "arguments name alike: the request does not single it out")
            page = _full_page(spec, c.tool, c.arguments, obs.result)
            if page and answer.get("kind") in ("count", "sum", "max", "min") and \
                    answer.get("step") == k:
                return fail(f"call {k + 1} ({c.tool}) returns a full page of {page}: the "
                            f"{answer['kind']} of one page is not that of all the records")
            written = sql_param(spec, c.tool)  # the attempt writes its own statement
            for param, value in c.arguments.items():
                if param == written and (task.origin.get("sql") or {}).get("form"):
                    continue
                if param in PAGING:
                    if isinstance(obs.result, list) and isinstance(value, int) and \
                            len(obs.result) >= value and not stated(value, text):
                        return fail(f"call {k + 1} ({c.tool}) reads a page of {value}: another "
                                    "page size gives another list, and the request gives none")
                    continue
                if stated(value, text) or normalise(value) in observed:
                    continue
                other = _other_chain(task, spec, runtime, k, param, value, named, text)
                if other:
                    via.append(f"{param} of call {k + 1} via {other}")
                    continue
                return fail(f"argument {param}={value!r} of call {k + 1} ({c.tool}) is neither "
                            "stated in the request nor read from an earlier observation or "
                            "another chain of the tools")
            for param, value in c.arguments.items():
                if stated(value, text):
                    named.setdefault(param, value)
            if obs.ok:
                observed |= _values(obs.result)
                item = obs.result if isinstance(obs.result, dict) else \
                    obs.result[0] if isinstance(obs.result, list) and len(obs.result) == 1 \
                    else None
                for f, v in scalar_fields(item).items():
                    named.setdefault(f, v)
    finally:
        ep.close()
    plan = task_plan(task)
    picks = [(k, v) for s in plan.steps for k, v in (s.select or {}).items()]
    answer = task.origin.get("answer") or {}
    picks += list((answer.get("where") or {}).items())
    picks += list(((task.origin.get("bulk") or {}).get("where") or {}).items())
    cond = task.origin.get("condition")
    if cond:
        picks.append((cond["field"], cond["value"]))
    for k, v in picks:
        if not stated(v, text):
            return fail(f"the request does not say which: {k} = {v!r} is not stated")
    return GateResult(name="solvable", passed=True,
                      detail="every argument is stated or observed" +
                      (f" ({'; '.join(via)})" if via else "") + "; every pick is stated")


OTHER_CHAIN_ROUNDS, OTHER_CHAIN_CALLS = 2, 24


def stated_value(values: list[Any], text: str) -> str | None:
    """The first of a column's text `values` (longer than 2 characters) that `text` states.
    Strings only: a JSON column holds dicts and lists, which neither hash nor are stated."""
    texts = dict.fromkeys(v for v in values if isinstance(v, str) and len(v) > 2)
    return next((v for v in texts if stated(v, text)), None)


def _other_chain(task: Task, spec: EnvSpec, runtime: EnvRuntime, k: int, param: str,
                 value: Any, named: dict[str, Any], text: str) -> str | None:
    """Another chain of the environment's read tools that yields `value` for `param` of call
    `k`, from what is known by name before that call (stated values: the chain's arguments
    and the database values of an argument's name that the request states; fields of the
    records observed): up to `OTHER_CHAIN_ROUNDS` rounds of look-ups whose arguments are all
    known by their names; the value must be a field named like the argument (or its entity's
    bare `id`) of a single record, not one of a list's many. The tools it called, or None."""
    want = normalise(value)
    known = dict(named)
    reads = [t for t in spec.tools if not t.mutates]
    sampler = ValueSampler(spec)
    for t in reads:  # "the customer with email ann@example.com": a value the request states
        for p in t.parameters.get("properties", {}):
            if p not in known and p not in PAGING:
                hit = stated_value(sampler.columns.get(p, []), text)
                if hit is not None:
                    known[p] = hit
    tried: set[str] = set()
    path: list[str] = []
    ep = runtime.open(spec, seed=task.seed)
    try:
        for c in task.chain[:k]:  # the state the call sees
            ep.step(c.tool, c.arguments)
        calls = 0
        for _ in range(OTHER_CHAIN_ROUNDS):
            learned: dict[str, Any] = {}
            for t in reads:
                required = t.parameters.get("required", [])
                args = {p: known[p] for p in t.parameters.get("properties", {}) if p in known}
                if t.name in tried or not args or any(r not in known for r in required):
                    continue
                if calls >= OTHER_CHAIN_CALLS:
                    return None
                tried.add(t.name)
                calls += 1
                obs = ep.step(t.name, args)
                if not obs.ok:
                    continue
                item = obs.result if isinstance(obs.result, dict) else \
                    obs.result[0] if isinstance(obs.result, list) and len(obs.result) == 1 \
                    else None
                fields = scalar_fields(item)
                path.append(t.name)
                entity = param.removesuffix("_id")
                if normalise(fields.get(param)) == want or (
                        entity in t.name and normalise(fields.get("id")) == want):
                    return " -> ".join(path)
                for f, v in fields.items():
                    learned.setdefault(f, v)
            if not learned:
                return None
            for f, v in learned.items():
                known.setdefault(f, v)
    finally:
        ep.close()
    return None


# ---- no shorter chain passes ------------------------------------------------------------------
def gate_no_shortcut(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    """No read of the gold chain can be left out: for each one, its dependents are fed the
    same values by an earlier call (a field of the same name) and, when it is the answer's
    call, the answer is read from that earlier call; if that shorter chain passes the check,
    the task claims more steps than it needs."""
    ok = GateResult(name="no_shortcut", passed=True, detail="no call of the gold chain can be "
                                                            "left out")
    early = _answered_early(task, spec, runtime)
    if early is not None:
        return GateResult(name="no_shortcut", passed=False,
                          detail=f"the first {early} of {len(task.chain)} calls already show "
                                 "the answer")
    if task.origin.get("bulk") or task.origin.get("condition") or len(task.chain) < 2:
        return ok
    plan = task_plan(task)
    answer = task.origin.get("answer") or {"kind": "none"}
    # a state task's later writes must matter: the first k calls that already reach the asked
    # state (a status set by one call and set back by the next), checked as the chain runs
    reached: list[int] = []

    def check_prefix(i: int) -> None:
        if not reached and i + 1 < len(plan.steps) and check_episode(task, ep, None).passed:
            reached.append(i + 1)

    ep = runtime.open(spec, seed=task.seed)
    try:
        results = [o.result if o is not None and o.ok else None for o in execute_plan(
            plan, ep, after_step=check_prefix if answer.get("kind", "none") == "none" else None)]
    finally:
        ep.close()
    if len(results) != len(plan.steps):
        return ok
    if reached:
        return GateResult(name="no_shortcut", passed=False,
                          detail=f"the first {reached[0]} of {len(plan.steps)} calls reach the "
                                 "state the task asks for")
    seen = [selected(r, s.select) for r, s in zip(results, plan.steps, strict=True)]
    for j, step in enumerate(plan.steps):
        if spec.tool(step.tool).mutates:
            continue
        shorter = without_step(plan, seen, answer, j)
        if shorter is None:
            continue
        short_plan, short_answer = shorter
        ep = runtime.open(spec, seed=task.seed)
        try:
            observations = execute_plan(short_plan, ep)
            if len(observations) != len(short_plan.steps) or \
                    not all(o is not None and o.ok for o in observations):
                continue
            res = check_episode(task, ep, extract_answer(short_answer, short_plan, observations))
        finally:
            ep.close()
        if res.passed:
            return GateResult(name="no_shortcut", passed=False,
                              detail=f"call {j + 1} ({step.tool}) can be left out: "
                                     f"{len(short_plan.steps)} calls pass the check, the level "
                                     f"counts {len(plan.steps)}")
    return ok


def _answered_early(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> int | None:
    """The fewest first calls of the gold chain after which the reference answer passes the
    check, grounded (None: only the whole chain). A walk that comes back to where it started
    ("the returned loan of member 15 ... the member of that loan ... count that member's
    returned loans") shows its answer in its first call."""
    if task.reference_answer is None or len(task.chain) < 2:
        return None
    visible = {real: shown for shown, real in (task.tool_view or {}).items()}
    ep = runtime.open(spec, seed=task.seed)
    try:
        steps: list[Step] = []
        for k, call in enumerate(task.chain[:-1], start=1):
            obs = ep.step(call.tool, call.arguments)
            if not obs.ok:
                return None
            steps.append(Step(tool=visible.get(call.tool, call.tool), arguments=call.arguments,
                              ok=True, result=obs.result))
            if not spec.tool(call.tool).mutates and \
                    check_episode(task, ep, task.reference_answer, steps=steps).passed:
                return k
    finally:
        ep.close()
    return None


def run_gates(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> list[GateResult]:
    """The gates in order, stopping at the first that fails (cheap ones first)."""
    out = []
    for gate in (gate_serves_source, gate_artefacts, gate_answer_from_state, gate_solvable,
                 gate_initial_state, gate_gold_replay, gate_known_wrong, gate_no_shortcut,
                 gate_natural):
        result = gate(task, spec, runtime)
        out.append(result)
        if not result.passed:
            break
    return out


__all__ = ["GATES", "clock_values", "gate_answer_from_state", "gate_artefacts",
           "gate_initial_state", "gate_no_shortcut", "gate_serves_source", "gate_solvable",
           "run_gates", "stated"]
