"""Programmatic tasks that write: one write for every list element that matches a condition.

"Cancel every pending hold of member 48", "mark all of customer 5's unpaid orders as paid",
"move every slot of clinician 3 that is 'open' to status 'blocked'": a read plan ends in a list
(`agent_world.tasks.walks`), a condition on one of its categorical fields picks the targets, and
a write tool that the tool-dependency graph feeds from the list elements' key runs once per
target. A **bulk spec** (`task.origin["bulk"]`) records it:

    {"step": i,                         the plan step whose list is filtered
     "where": {field: value},           the condition on the list elements
     "write": tool, "key_param": p,     the write and the argument fed by each element's
     "key_field": f, "args": {...},     key field; its other arguments (the same every time)
     "table": T, "key_column": k,       the table the write changes and its key column
     "sql_where": {column: value},      the targets as a condition on T (list filters + where)
     "effect": "update" | "delete",
     "sets": {column: value},           columns every target ends with (updates)
     "answer": "count" | "none"}        whether the reply must say how many were changed

`find_bulk` builds one from an executed read plan, or says why there is none; it accepts a
write only when its changes are confined to T's target rows and the SQL condition selects, on
the initial state, exactly the elements the list filter picks (so the verification script's
recomputation agrees with the tools). The solution (`bulk_solution_source`) is tool calls plus
a filter and a loop; the verification script (`bulk_verify_source`) recomputes the targets
from `initial_db` with SQL and checks `final_db`: every target changed as asked, every other
row of every table untouched, and the count in the answer when one is asked for. Known-wrong
solutions (`bulk_wrong_sources`) skip the writes, stop after the first target, or ignore the
condition.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Any

from agent_world.envs.database import audit_logs, read_rows
from agent_world.envs.episode import EnvRuntime, Observation
from agent_world.envs.spec import EnvSpec
from agent_world.tasks.check import answer_rule_source, episode_changes
from agent_world.tasks.model import ToolCall
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.walks import Plan, execute_plan, field_value, scalar_fields
from agent_world.tasks.words import PAGING, added_labels

MIN_TARGETS, MAX_TARGETS = 2, 6
STEP_SHIFT = 5


def _categorical(items: list[dict[str, Any]]) -> dict[str, list[Any]]:
    """Fields whose string values repeat across the list: candidates for a condition."""
    out = {}
    for k in scalar_fields(items[0]):
        values = [field_value(x, k) for x in items]
        if all(isinstance(v, str) for v in values) and 2 <= len(set(values)) <= 8 \
                and len(set(values)) < len(values):
            out[k] = sorted(set(values))
    return out


def _write_options(spec: EnvSpec, graph: Any, tool: str) -> list[tuple[str, str, str, float]]:
    """(write tool, argument, element field, strength) for writes a list element's key feeds."""
    out = []
    for _, dst, data in graph.out_edges(tool, data=True):
        if not spec.tool(dst).mutates:
            continue
        for b in data.get("bindings", []):
            if b.get("required") and (b["field"] == "id" or b["field"].endswith("_id")):
                out.append((dst, b["param"], b["field"], b["strength"]))
    return out


def _other_args(spec: EnvSpec, write: str, key_param: str, sampler: ValueSampler,
                rng: random.Random, listed: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The write's other arguments: each required one sampled; for a tool that needs nothing
    but the key (an edit), one optional field to set. A value some listed element already
    shows is avoided: it would blur which elements the request is about."""
    tool = spec.tool(write)
    props = tool.parameters.get("properties", {})
    required = [p for p in tool.parameters.get("required", []) if p != key_param]
    shown = {str(v) for x in listed for v in scalar_fields(x).values()}

    def sample(p: str) -> Any:
        for _ in range(6):
            v = sampler.sample(write, p, props.get(p, {}), rng)
            if v is None or str(v) not in shown:
                return v
        return None

    args: dict[str, Any] = {}
    for p in required:
        v = sample(p)
        if v is None:
            return None
        args[p] = v
    if not required:
        optional = [p for p in props if p != key_param and p not in PAGING
                    and sampler.candidates(write, p, props[p])]
        if optional and rng.random() < 0.8:
            p = rng.choice(sorted(optional))
            v = sample(p)
            if v is not None:
                args[p] = v
    return args


def _pk(spec: EnvSpec, table: str) -> str | None:
    pk = spec.table(table).primary_key
    return pk[0] if len(pk) == 1 else None


def _run(spec: EnvSpec, runtime: EnvRuntime, plan: Plan, seed: int, calls: list[ToolCall],
         shift: int = 0) -> tuple[list[Observation | None], list[Observation], dict[str, Any],
                                  str]:
    ep = runtime.open(spec, seed=seed)
    try:
        ep.steps = shift
        reads = execute_plan(plan, ep)
        writes = [ep.step(c.tool, c.arguments) for c in calls]
        return reads, writes, episode_changes(ep), ep.state_hash()
    finally:
        ep.close()


def _initial_keys(runtime: EnvRuntime, spec: EnvSpec, seed: int, table: str, key: str,
                  where: dict[str, Any]) -> set[Any] | None:
    cond = " AND ".join(f'"{c}" = ?' for c in where) or "1=1"
    params = [int(v) if isinstance(v, bool) else v for v in where.values()]
    ep = runtime.open(spec, seed=seed)
    try:
        rows = read_rows(ep.template, f'SELECT "{key}" AS k FROM "{table}" WHERE {cond}', params)
    except Exception:  # a condition the table cannot take: no SQL recomputation possible
        return None
    finally:
        ep.close()
    return {r["k"] for r in rows}




def find_bulk(spec: EnvSpec, graph: Any, runtime: EnvRuntime, plan: Plan, results: list[Any],
              step: int, rng: random.Random, sampler: ValueSampler,
              seed: int, tries: int = 6) -> tuple[dict[str, Any], list[ToolCall], dict[str, Any]] | str:
    """A bulk spec over the list of plan step `step`, its gold calls (reads then writes) and
    the changes they make; or why there is none."""
    # the whole list, not a page of it: "every" means every
    steps = [s.model_copy(deep=True) for s in plan.steps[: step + 1]]
    steps[step].select = None  # every element is looked at: none is picked
    paged = {p: steps[step].given.pop(p) for p in PAGING if p in steps[step].given}
    read_plan = Plan(steps=steps)
    listed = results[step]
    if paged:
        listed = _listed(spec, runtime, read_plan, seed)
    items = [x for x in listed if isinstance(x, dict)] if isinstance(listed, list) else []
    if not _complete(spec, steps[step].tool, steps[step].given, items):
        # a full page: narrow the list by a filter an element offers ("holds of member 48"),
        # else ask for the largest page the tool allows
        narrowed = _narrowed(spec, runtime, read_plan, step, items, rng, seed) or \
            _largest_page(spec, runtime, read_plan, step, seed)
        if narrowed is None:
            return "the list is a page of a longer one"
        read_plan, items = narrowed
    cats = _categorical(items) if len(items) >= MIN_TARGETS + 1 else {}
    list_entity = entity_words(plan.steps[step].tool)
    options = _write_options(spec, graph, plan.steps[step].tool)
    if not cats or not options:
        return "no write to repeat over the list"
    # writes on the listed entity first ("cancel every hold"), then the others
    rng.shuffle(options)
    options.sort(key=lambda o: not entity_words(o[0]) & list_entity)
    # never "every one named analytics-tool": a name the miner gave records is none to ask by
    labels = added_labels(spec)
    conds = [(k, v) for k, vs in cats.items() for v in vs if str(v) not in labels
             and MIN_TARGETS <= sum(field_value(x, k) == v for x in items) <= MAX_TARGETS]
    if not conds:
        return "no condition picks 2-6 elements of the list"
    trials = [(o, c) for o in options[:3] for c in rng.sample(conds, min(len(conds), 3))]
    why = "no write changes just the targets"
    logs = {log for log, _, _ in audit_logs(spec)}  # their entries follow from the change
    for (write, key_param, key_field, _), (k, v) in trials[:tries]:
        targets = [x for x in items if field_value(x, k) == v]
        args = _other_args(spec, write, key_param, sampler, rng, items)
        if args is None or any(str(a) in labels for a in args.values()):
            continue
        keys = [field_value(x, key_field) for x in targets]
        if any(sampler.sets_back(write, args, {key_param: key})
               for key in keys):  # "mark every shipped order as paid" sets states back
            why = "the write would move a target's state back"
            continue
        if len(set(map(str, keys))) != len(keys):
            why = "two targets share the key the write takes"
            continue
        calls = [ToolCall(tool=write, arguments={**args, key_param: key}) for key in keys]
        reads, writes, changes, _ = _run(spec, runtime, read_plan, seed, calls)
        if not all(o is not None and o.ok for o in reads) or not all(o.ok for o in writes):
            why = "a write fails for one of the targets"
            continue
        changes = {t: d for t, d in changes.items() if t not in logs}
        if len(changes) != 1:
            why = "the write changes more than one table" if changes else "the write is a no-op"
            continue
        (table, delta), = changes.items()
        key_column = _pk(spec, table)
        if key_column is None or delta["inserted"]:
            why = "the write inserts rows or its table has a composite key"
            continue
        effect = "delete" if delta["deleted"] and not delta["updated"] else "update"
        touched = [d[key_column] for d in delta["deleted"]] if effect == "delete" else \
            [u["key"][key_column] for u in delta["updated"]]
        if effect == "update" and delta["deleted"] or sorted(map(str, touched)) != \
                sorted(map(str, keys)):
            why = "the write changes other rows than the targets"
            continue
        # the targets as SQL on the table: the list step's stated or bound filters that are
        # columns of it, plus the condition
        columns = {c.name for c in spec.table(table).columns}
        list_args = reads[step].arguments if reads[step] is not None else {}
        sql_where = {p: val for p, val in list_args.items() if p in columns}
        if k not in columns:
            why = "the condition's field is not a column of the changed table"
            continue
        sql_where[k] = v
        if _initial_keys(runtime, spec, seed, table, key_column, sql_where) != set(touched):
            why = "the list and its table disagree on the targets"
            continue
        sets: dict[str, Any] = {}
        if effect == "update":
            # columns every target ends with, in any order and later in the episode
            _, _, later, _ = _run(spec, runtime, read_plan, seed, list(reversed(calls)),
                                  shift=STEP_SHIFT)
            rows = delta["updated"] + later.get(table, {}).get("updated", [])
            for col in rows[0]["after"]:
                values = {repr(r["after"].get(col, "<missing>")) for r in rows}
                if len(values) == 1:
                    sets[col] = rows[0]["after"][col]
        bulk = {"step": step, "where": {k: v}, "write": write, "key_param": key_param,
                "key_field": key_field, "args": args, "table": table, "key_column": key_column,
                "sql_where": sql_where, "effect": effect, "sets": sets,
                "answer": "count" if rng.random() < 0.5 else "none"}
        gold = [ToolCall(tool=o.tool, arguments=o.arguments) for o in reads if o is not None]
        return bulk, read_plan, gold + calls, changes
    return why


def _listed(spec: EnvSpec, runtime: EnvRuntime, plan: Plan, seed: int) -> Any:
    reads, _, _, _ = _run(spec, runtime, plan, seed, [])
    if len(reads) != len(plan.steps) or not all(o is not None and o.ok for o in reads):
        return None
    return reads[-1].result


def _complete(spec: EnvSpec, tool: str, args: dict[str, Any], items: list[Any]) -> bool:
    """Whether a list result is all there is (shorter than the tool's page size)."""
    props = spec.tool(tool).parameters.get("properties", {})
    limit = next((args.get(p, props[p].get("default")) for p in PAGING if p in props), None)
    return not isinstance(limit, int) or len(items) < limit


def _narrowed(spec: EnvSpec, runtime: EnvRuntime, plan: Plan, step: int, items: list[dict],
              rng: random.Random, seed: int) -> tuple[Plan, list[dict]] | None:
    tool = plan.steps[step].tool
    props = spec.tool(tool).parameters.get("properties", {})
    filters = [p for p in props if p not in PAGING and p not in plan.steps[step].given
               and p in items[0]]
    filters.sort(key=lambda p: not p.endswith("_id"))  # "of member 48" reads best
    for attempt in range(4):
        if attempt == 2:  # ids did not narrow enough: any filter an element offers
            rng.shuffle(filters)
        if not filters:
            return None
        p = rng.choice([f for f in filters if f.endswith("_id")] or filters) \
            if attempt < 2 else filters[0]
        value = field_value(rng.choice(items), p)
        steps = [s.model_copy(deep=True) for s in plan.steps]
        steps[step].given[p] = value
        narrowed = Plan(steps=steps)
        listed = _listed(spec, runtime, narrowed, seed)
        got = [x for x in listed if isinstance(x, dict)] if isinstance(listed, list) else []
        if len(got) > MIN_TARGETS and _complete(spec, tool, steps[step].given, got):
            return narrowed, got
    return None


def _largest_page(spec: EnvSpec, runtime: EnvRuntime, plan: Plan, step: int,
                  seed: int) -> tuple[Plan, list[dict]] | None:
    tool = plan.steps[step].tool
    props = spec.tool(tool).parameters.get("properties", {})
    page = next((p for p in PAGING if isinstance(props.get(p, {}).get("maximum"), int)), None)
    if page is None:
        return None
    steps = [s.model_copy(deep=True) for s in plan.steps]
    steps[step].given[page] = props[page]["maximum"]
    widened = Plan(steps=steps)
    listed = _listed(spec, runtime, widened, seed)
    got = [x for x in listed if isinstance(x, dict)] if isinstance(listed, list) else []
    if len(got) > MIN_TARGETS and _complete(spec, tool, steps[step].given, got):
        return widened, got
    return None


def entity_words(tool: str) -> set[str]:
    """A tool's name words minus its verb, singular (`list_holds` → {hold})."""
    words = [w for w in re.split(r"[_\W]+", re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", tool)
                                 .lower()) if w]
    rest = words[1:] or words
    return {w[:-1] if w.endswith("s") and len(w) > 3 else w for w in rest}


# ---- code ------------------------------------------------------------------------------------
def _loop_lines(bulk: dict[str, Any], variant: str) -> list[str]:
    i = bulk["step"]
    where = bulk["where"]
    lines = []
    if variant == "condition ignored":
        lines.append(f"    targets = [x for x in r{i} if isinstance(x, dict)]")
    else:
        lines.append(f"    targets = [x for x in r{i} if all(field(x, k) == v for k, v in "
                     f"{where!r}.items())]")
    if variant == "first target only":
        lines.append("    targets = targets[:1]")
    if variant != "writes skipped":
        call = (f"env.call({bulk['write']!r}, **{bulk['args']!r}, "
                f"**{{{bulk['key_param']!r}: field(item, {bulk['key_field']!r})}})")
        lines.append("    for item in targets:")
        if variant == "condition ignored":  # writes the tools refuse are skipped, not fatal
            lines += ["        try:", f"            {call}", "        except ToolCallError:",
                      "            pass"]
        else:
            lines.append(f"        {call}")
    lines.append("    return len(targets)" if bulk["answer"] == "count" else "    return 'done'")
    return lines


SOLUTION_HELPERS = '''
def field(obj, name):
    """A field of a result: top level first, then nested objects."""
    if not isinstance(obj, dict):
        return None
    if name in obj:
        return obj[name]
    for v in obj.values():
        if isinstance(v, dict) and field(v, name) is not None:
            return field(v, name)
    return None


def pick(result, where):
    """The element of a list result whose fields have the given values."""
    if not isinstance(result, list):
        return result
    for item in result:
        if all(field(item, k) == v for k, v in where.items()):
            return item
    raise LookupError(f"no item with {where}")
'''


def call_lines(plan: Plan) -> list[str]:
    """`solve(env)`'s opening: the plan's calls, each result in r0, r1, ..."""
    lines = ["def solve(env):"]
    for i, step in enumerate(plan.steps):
        args = [f"{k}={v!r}" for k, v in step.given.items()]
        for param, b in step.bound.items():
            src = f"r{b.step}"
            sel = plan.steps[b.step].select
            if sel:
                src = f"pick(r{b.step}, {sel!r})"
            args.append(f"{param}=field({src}, {b.field!r})")
        lines.append(f"    r{i} = env.call({step.tool!r}, {', '.join(args)})")
    return lines


def bulk_solution_source(plan: Plan, bulk: dict[str, Any], variant: str = "gold") -> str:
    """`solve(env)`: the read plan's calls, the condition and one write per target."""
    lines = call_lines(Plan(steps=plan.steps[: bulk["step"] + 1])) + _loop_lines(bulk, variant)
    return SOLUTION_HELPERS.lstrip() + "\n\n" + "\n".join(lines) + "\n"


WRONG_VARIANTS = ("writes skipped", "first target only", "condition ignored")


def bulk_wrong_sources(plan: Plan, bulk: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v, bulk_solution_source(plan, bulk, v)) for v in WRONG_VARIANTS]


_VERIFY = '''TABLE = {table!r}
KEY = {key!r}
TARGETS_WHERE = {where!r}
EFFECT = {effect!r}
SETS = {sets!r}
ANSWER = {answer!r}
STATED = {stated!r}


def _targets(db):
    """Keys of the rows the task is about, recomputed from a database state."""
    cond = " AND ".join(f'"{{c}}" = ?' for c in TARGETS_WHERE) or "1=1"
    params = [int(v) if isinstance(v, bool) else v for v in TARGETS_WHERE.values()]
    return {{r["k"] for r in db.query(f'SELECT "{{KEY}}" AS k FROM "{{TABLE}}" WHERE {{cond}}',
                                       params)}}


def _rows(db, table, key):
    return {{r[key]: r for r in db.query(f'SELECT * FROM "{{table}}"')}}


def _tables(db):
    return [r["name"] for r in db.query(
        "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' "
        "AND name NOT LIKE '\\\\_aw\\\\_%' ESCAPE '\\\\'")]


def _states_count(answer, n):
    """The answer is n: the one number it states (`answer_values`, above) beside those the
    request stated (STATED), which a sentence may repeat."""
    numbers = answer_values(answer, MAX_ANSWER_CHARS).get("number", [])
    return [x for x in numbers if x == float(n) or x not in STATED] == [float(n)]


def verify(initial_db, final_db, answer):
    targets = _targets(initial_db)
    if not targets:
        return False
    before, after = _rows(initial_db, TABLE, KEY), _rows(final_db, TABLE, KEY)
    for k in targets:
        if EFFECT == "delete":
            if k in after:
                return False
            continue
        row = after.get(k)
        if row is None or row == before[k]:
            return False
        if any(row.get(c) != v for c, v in SETS.items()):
            return False
    # nothing else changed: the other rows of the table, every other table
    if {{k: r for k, r in before.items() if k not in targets}} != \\
            {{k: r for k, r in after.items() if k not in targets}}:
        return False
    for t in _tables(initial_db):
        if t != TABLE and initial_db.query(f'SELECT * FROM "{{t}}" ORDER BY rowid') != \\
                final_db.query(f'SELECT * FROM "{{t}}" ORDER BY rowid'):
            return False
    return ANSWER != "count" or _states_count(answer, len(targets))
'''


def bulk_verify_source(bulk: dict[str, Any], stated: Sequence[float] = ()) -> str:
    """`verify(initial_db, final_db, answer)`: recomputes the targets from `initial_db` with
    SQL, then checks `final_db` (and the count in the answer when one is asked for, read by the
    check's answer rule: `answer_rule_source`; `stated`: the numbers the request gave)."""
    sets = {c: (int(v) if isinstance(v, bool) else v) for c, v in bulk["sets"].items()}
    return answer_rule_source() + _VERIFY.format(
        table=bulk["table"], key=bulk["key_column"], where=bulk["sql_where"],
        effect=bulk["effect"], sets=sets, answer=bulk["answer"], stated=list(stated))


__all__ = ["MAX_TARGETS", "MIN_TARGETS", "SOLUTION_HELPERS", "WRONG_VARIANTS", "call_lines",
           "bulk_solution_source",
           "bulk_verify_source", "bulk_wrong_sources", "find_bulk"]
