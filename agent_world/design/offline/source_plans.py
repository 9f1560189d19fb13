"""Plans from the source's own tools (the coverage map): each covered tool keeps its name and
arguments, planned from its behaviour contract; `plan_tools` puts them first and fills the
set with schema tools.
"""

from __future__ import annotations

import keyword
import re
from typing import Any

from agent_world.design.offline.contract_derivation import derive_contract
from agent_world.design.offline.contract_holds import book_parent
from agent_world.design.offline.contracts import plan_contract
from agent_world.design.offline.plans import (
    VERB_STATUS,
    ParamPlan,
    ToolPlan,
    _key_param,
    children_of,
    name_column,
    own_reference,
    pk_column,
    status_column,
)
from agent_world.design.offline.raw_coverage import fallback_coverage
from agent_world.design.offline.schema_plans import Owned, create_plan, schema_plans
from agent_world.design.offline.source_acts import (
    CREATE_VERBS,
    INSPECTS,
    PLAIN_CREATES,
    UPDATE_VERBS,
    acts_on_existing,
    as_locators,
    call_logs,
    echoes_its_calls,
    edits_a_record_it_does_not_name,
    edits_by_name,
    first_verb,
    found_by_another_id,
    makes_by_name,
    makes_nothing,
    only_reads,
    reads_a_record_it_does_not_name,
    reads_by_description,
    reads_by_name,
    reads_what_it_does_not_do,
    speaks_another_language,
    stated_conditions,
    stated_span,
)
from agent_world.design.offline.source_params import source_param
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.naming import (
    safe_name,
    singular,
    snake,
    tokens,
    tool_identifier,
    with_article,
)
from agent_world.mining.offline.signatures import (
    RESULT_COLUMNS,
    SELECTORS,
    is_option,
    new_value_field,
)
from agent_world.mining.offline.vocabulary import (
    DELETE_VERBS,
    READ_VERBS,
    WRITE_VERBS,
)

_PLAIN_ROLES = frozenset({"key", "eq", "like", "ge", "le", "ref", "set", "limit", "ignore"})
_VERB_PHRASES = {("check", "in"): "checked_in", ("check", "out"): "checked_out",
                 ("checkin",): "checked_in", ("checkout",): "checked_out"}
# the mining vocabulary's read verbs, and `log` as a read (git_log) where a tool's name is
# planned: mining reads `log` as a write verb ("log a call")
PLAN_READ_VERBS = frozenset(READ_VERBS | {"log"})
SEARCH_VERBS = frozenset({"search", "find", "lookup", "browse", "query"})
# ---- plans from the source's tools (coverage map) ----------------------------------------------
def _verb_tokens(name: str) -> list[str]:
    return tokens(name)


def _status_for(words: list[str], status: ColumnSpec | None) -> str | None:
    if status is None or not status.enum:
        return None
    for phrase, value in _VERB_PHRASES.items():
        n = len(phrase)
        if any(tuple(words[i:i + n]) == phrase for i in range(len(words))) and value in status.enum:
            return value
    for w in words:
        value = VERB_STATUS.get(w)
        if value and value in status.enum:
            return value
    return None


def _keyed(table: TableSpec, params: list[ParamPlan]) -> list[ParamPlan]:
    """`params` led by the table's key; an argument of the key's name the source declared
    otherwise (GitLab's issue_link_id as a string) is that key, not a second parameter."""
    key = _key_param(table)
    return [key, *(p for p in params if p.name != key.name)]


# the operations of a command router a plan of each kind performs (Coolify's
# projects(action: list|get|create|update|delete))
_OPERATIONS = {"create": {"create", "add", "new", "insert"}, "list": {"list", "search", "find"},
               "get": {"get", "read", "describe", "show", "view", "info"},
               "update": {"update", "edit", "modify", "patch"},
               "delete": {"delete", "remove", "destroy"}}


def _selector(entry: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """A command router's operation argument (Coolify's `action`) and its coverage."""
    return next(((arg, info) for arg, info in (entry.get("arguments") or {}).items()
                 if snake(arg) in SELECTORS and info.get("role") == "control"
                 and isinstance(info.get("enum"), list)
                 and is_option(snake(arg), str(info.get("description") or ""), info["enum"])),
                None)


def _operations(entry: dict[str, Any]) -> list[str]:
    """The verbs of a router's operations ('create', 'update', ...), none for other tools."""
    selector = _selector(entry)
    return [(tokens(str(v)) or [""])[0] for v in selector[1]["enum"]] if selector else []


def source_plan(spec: EnvSpec, tool_name: str, entry: dict[str, Any]) -> ToolPlan | None:
    """The plan of a source tool from its coverage `entry`, None if none serves it; a command
    router (an `action` selector) serves the one operation its plan performs, and its
    selector takes only that value: a router planned as an insert inserted on `list` too."""
    plan = _plan(spec, tool_name, entry)
    selector = _selector(entry)
    if plan is None or selector is None:
        return plan
    arg, info = selector
    wanted = _OPERATIONS.get(plan.kind, set())

    def performs(operation: str) -> bool:
        verb = (tokens(operation) or [""])[0]
        return verb in wanted or bool(plan.target_status) and \
            VERB_STATUS.get(verb) == plan.target_status

    value = next((str(v) for v in info["enum"] if performs(str(v))), None)
    if value is None:
        return None  # none of its operations is what the plan does
    params = [p.model_copy(update={"enum": [value], "required": True,
                                   "description": f"{p.description} Only {value!r} is served."})
              if p.name == safe_name(arg) else p for p in plan.params]
    return plan.model_copy(update={"params": params})


def _plan(spec: EnvSpec, tool_name: str, entry: dict[str, Any]) -> ToolPlan | None:
    """The plan implementing one covered source tool under its own name and arguments."""
    tables = {t.name: t for t in spec.tables}
    table = tables.get(entry.get("table") or "")
    if table is None or pk_column(table) is None or not tool_name.isidentifier() \
            or keyword.iskeyword(tool_name):  # plan_tools passes `tool_identifier` names
        return None
    words = _verb_tokens(tool_name)
    # the first verb of its name says what it does: update_issue and delete_cycle_issue do
    # not issue anything
    first = first_verb(words)
    status = status_column(table)
    read_only = entry.get("read_only")
    desc = " ".join(str(entry.get("description") or "").split())[:400]
    if read_only is not True and reads_by_name(words):
        # readOnlyHint false on a get_/list_ tool is a server's default, not a write: arXiv's
        # get_paper_latex_section was planned as an update that moved the section; with no
        # hint, Backlog's get_issue and Plane's get_issue_comments were inserts ('issue')
        read_only = True
    elif read_only is None and not set(words) & WRITE_VERBS and (
            reads_by_description(desc) or first in INSPECTS):
        # a name with no writing verb, described as a read or looking at what exists:
        # Terraform's providerDetails ("Get detailed information about a provider"),
        # OpenSearch's IndexMappingTool ("Retrieves index mapping") and analyze_video had
        # inserted a record per call
        read_only = True
    if read_only is None:
        read_only = not (set(words) & (CREATE_VERBS | DELETE_VERBS | set(VERB_STATUS))
                         or _status_for(words, status)) and bool(set(words) & PLAN_READ_VERBS)
    params: list[ParamPlan] = []
    used: set[str] = set()
    is_create = not read_only and first in CREATE_VERBS and not _status_for(words, status)
    for arg, info in (entry.get("arguments") or {}).items():
        if is_create and info.get("role") == "reference" and info.get("table") == table.name:
            info = own_reference(table, info)
            if info["role"] == "control" and info.get("required"):
                # it must be told records of its own table, which an insert would drop:
                # Plane's add_module_issues(issues) files existing issues under a module,
                # update_issue(issue_id) edits one ("issue" read as a verb)
                return None
        p = source_param(spec, table, arg, info, read_only, words)
        if not read_only and p.required and p.role == "ignore" \
                and info.get("role") == "reference":
            # a write told which record to act on that it could not tie to its own: it would
            # change the same rows whatever record it is given
            return None
        if p.name in used:
            continue
        used.add(p.name)
        params.append(p)
    description = desc or f"{tool_name.replace('_', ' ')}."
    if read_only:
        has_key = any(p.role == "key" for p in params)
        if has_key and all(p.role in ("key", "ignore") for p in params):
            return ToolPlan(name=tool_name, kind="get", table=table.name, params=params,
                            description=description, source_tool=tool_name)
        if not params and spec.theme.source_kind in _UNDECLARED \
                and (set(words) & {"get", "view", "show", "describe"}) \
                and not (set(words) & {"list", "search"}) and len(spec.rows.get(table.name, [])):
            # a document's feature declares no arguments: "view title details" views one
            # title, by its id; a tool list's get_priorities() that takes none reads what the
            # table holds, not a record by an id its source never takes
            params = [_key_param(table)]
            return ToolPlan(name=tool_name, kind="get", table=table.name, params=params,
                            description=description, source_tool=tool_name)
        params = [p if p.role != "key" else p.model_copy(update={"role": "eq"}) for p in params]
        if set(words) & SEARCH_VERBS:
            params = [p.model_copy(update={"role": "like", "enum": None, "pattern": None})
                      if p.role == "eq" and p.type == "string" and not p.enum
                      and p.column != pk_column(table) else p for p in params]
        return ToolPlan(name=tool_name, kind="list", table=table.name, params=params,
                        description=description, source_tool=tool_name)
    # writes
    target = _status_for(words, status)
    key = next((p for p in params if p.role == "key"), None)
    if is_create and key is not None and not key.required and not target:
        # a create's optional id is one the new record may be given (Microsoft Graph's
        # create_calendar body lists `id`), not a record to find: an insert, not an update
        params = [p.model_copy(update={"role": "ignore"}) if p is key else p for p in params]
        key = None
    if key is None and set(words) & (DELETE_VERBS | UPDATE_VERBS | {"put"}) \
            and not set(words) & CREATE_VERBS:
        # a write told which record by a unique field of it (a REST resource's path): that
        # field finds the record, it is not a value to set
        named = name_column(table)
        # never by the value it sets: rename_symbol_strict(new_name) had found its symbol by
        # the new name
        finders = [p for p in params if p.role == "set" and p.column
                   and new_value_field(snake(p.name), frozenset()) is None]
        key = next((p for p in finders if table.column(p.column).unique), None) or next(
            # or by the name it is known by, when the source requires it (a Helm release
            # uninstalled by its name): the first record of that name, as `_row` finds it
            (p for p in finders if p.required and named is not None
             and p.column == named.name), None)
        if key is not None:
            key = key.model_copy(update={"role": "key"})
            params = [key if p.name == key.name else p for p in params]
    sets = [p for p in params if p.role in ("set", "ref")]
    if set(words) & DELETE_VERBS and not target:
        if _unlinks(table, params, words, desc):
            return None
        # what else a delete requires names the record (delete_note(path, sheet, cell)): a
        # value it must hold, or the record it belongs to (kv_delete(namespaceId, key)), not
        # one to set; without them the table's own key, an argument the arena adds
        params = [p.model_copy(update={"role": "eq"}) if p.role == "set" and p.required
                  and p.column and p.type != "object" else p for p in params]
        plan = ToolPlan(name=tool_name, kind="delete", table=table.name, params=params,
                        children=children_of(spec, table), description=description,
                        source_tool=tool_name)
        if key is None and not any(p.required for p in plan.key_matches()):
            keyed = _keyed(table, params)
            if entry.get("arguments") and keyed[0].name not in entry["arguments"]:
                # what it is told does not name one record (Todoist's delete_projects(items),
                # Gmail's batch_delete_messages(ids)): a key of the arena's would be a
                # different tool
                return None
            plan = plan.model_copy(update={"params": keyed})
        return plan
    now = [c.name for c in table.columns if c.name in ("updated_at", "modified_at")]
    if target and (key is not None or not (set(words) & CREATE_VERBS)):
        if key is None:
            params = _keyed(table, params)
        return ToolPlan(name=tool_name, kind="set_status", table=table.name, params=params,
                        status_column=status.name if status else None, target_status=target,
                        now_columns=now, description=description, source_tool=tool_name)
    # a router's operations are its verbs (Coolify's projects(action: list|create|...))
    acts = words + _operations(entry)
    if key is not None:
        if not edits_by_name(acts):
            return None  # a trigger, a copy, a download or a screenshot edits no record
        params = as_locators(spec, params, words)
        sets = [p for p in params if p.role in ("set", "ref")]
        if not sets:
            # an action with nothing to write but its timestamp: record that it happened
            if not now:
                return None
        return ToolPlan(name=tool_name, kind="update", table=table.name, params=params,
                        now_columns=now, description=description, source_tool=tool_name)
    if set(words) & UPDATE_VERBS and not set(words) & CREATE_VERBS:
        return None  # "updates an existing app" with no key to find it: not an insert
    if acts_on_existing(words):
        return None  # mute_host(hostname) had inserted a host: no record to insert
    if not is_create and makes_nothing(words):
        return None  # kill_process(pid), figma_reconnect(), check_alerts(topic) had inserted
    if not is_create and first is not None and len(words) > 2 and words[-1] == table.name:
        # a verb that makes nothing, said of the table's own records by their plural:
        # transfer_cycle_issues moves issues from one cycle to another, it inserts none
        return None
    if not is_create and not makes_by_name(acts, desc, table.name):
        return None  # a call that makes nothing is no record of the call
    creating = [p.model_copy(update={"role": "set"}) if p.role == "eq" else p for p in params]
    if entry.get("arguments") and not any(p.role in ("set", "ref") for p in creating) and \
            not set(words) & PLAIN_CREATES:
        # nothing it is told goes into a record (Dokploy's application_start(applicationId),
        # Azure's mysql(command, parameters)): an insert of an empty row per call (a tool a
        # document lists without arguments, a PRD's place_hold, is the arena's create)
        return None
    if not any(p.role in ("set", "ref") for p in creating) and not entry.get("arguments"):
        plan = create_plan(spec, table, tool_name)
        return plan.model_copy(update={"description": description, "source_tool": tool_name}) \
            if plan else None
    columns = [p.column for p in creating if p.role == "set" and p.column]
    if len(columns) != len(set(columns)):
        # two arguments for one field (copy_sheet(sheet, new_name): the sheet copied and the
        # copy's name): a copy of a record, which an insert of the arguments is not
        return None
    plan = create_plan(spec, table, tool_name, params=creating)
    if plan is None:
        return None
    return plan.model_copy(update={"description": description, "source_tool": tool_name})


_UNLINKS = frozenset({"remove", "unassign", "detach", "unlink", "untag"})


def _unlinks(table: TableSpec, params: list[ParamPlan], words: list[str], desc: str) -> bool:
    """A removal that ends a link, not the record: told the parent it is removed from, which
    the record need not have (Plane's delete_module_issue: "Remove an issue from a module",
    Trello's remove_member_from_card), or two records by one field (Backlog's
    remove_related_issue): a delete had deleted the issue, the member."""
    keys = [p.column for p in params if p.role == "key" and p.column]
    if len(set(keys)) < len(keys):
        return True
    said = " ".join(words) + " " + desc.lower()
    if not set(words + re.findall(r"[a-z]+", said)) & _UNLINKS:
        return False
    after = {singular(w) for m in re.finditer(r"\bfrom\b((?:\s+[a-z_]+){1,4})", said)
             for w in m.group(1).replace("_", " ").split()}
    for p in params:
        column = table.column(p.column) if p.role == "ref" and p.required and p.column else None
        parent = set(singular(column.foreign_key.split(".")[0]).split("_")) \
            if column is not None and column.nullable and column.foreign_key else set()
        # a parent its table is named for owns it (an issue note's emoji reactions)
        if parent & after and not parent & {singular(w) for w in table.name.split("_")}:
            return True
    return False


# sources that declare no tool arguments: what a feature is told is the arena's to choose
_UNDECLARED = frozenset({"prd", "manual"})

_VERB_KINDS = {"read_one": "get", "list": "list", "search": "list", "create": "create",
               "delete": "delete"}


def _served(plan: ToolPlan) -> set[tuple[str, str]]:
    """(schema kind, table) a source tool already serves: no schema tool repeats it under
    another name (get_patient beside getPatient, create_appointment beside bookAppointment).
    A listing by a text fragment serves the search; one with no required argument serves the
    plain list too (a listing that needs a record to list under, a patient's appointments,
    serves no plain list of its table)."""
    kind = _VERB_KINDS.get(plan.contract.verb) if plan.kind == "contract" and plan.contract \
        else plan.kind
    if kind != "list":
        return {(str(kind), plan.table)}
    out = {("search", plan.table)} if _searches(plan.params) else set()
    if not any(p.required and p.role not in ("limit",) for p in plan.params):
        out.add(("list", plan.table))
    return out


def _searches(params: list[Any]) -> bool:
    return any(p.role in ("like", "any_like") for p in params)


def _schema_kind(plan: ToolPlan) -> str:
    return "search" if plan.kind == "list" and _searches(plan.params) else plan.kind


def plan_tools(spec: EnvSpec, max_tools: int = 40) -> tuple[list[ToolPlan], dict[str, str]]:
    """Every covered source tool first (name and arguments kept), then schema tools, at most
    `max_tools` in all with at least 30 % writes. Also (source tool -> why not implemented)."""
    coverage = (spec.provenance.stats or {}).get("tool_coverage") or fallback_coverage(spec)
    plans: list[ToolPlan] = []
    skipped: dict[str, str] = {}
    for source, entry in (coverage.get("tools") or {}).items():
        if not entry.get("covered", True):
            skipped[source] = "not covered by the database: " + \
                "; ".join(entry.get("missing", []))
            continue
        name = tool_identifier(source)  # 'certificate-list' is served as certificate_list
        if any(p.name == name for p in plans):
            skipped[source] = f"its name as an identifier, {name!r}, is another tool's"
            continue
        if speaks_another_language(entry):
            skipped[source] = ("it runs queries in a language the environment's database does "
                               "not speak (Cypher, PromQL, a search DSL, ...)")
            continue
        plan = contract_plan(spec, name, entry)
        if plan is None:
            skipped[source] = "no implementable plan (no keyed table or nothing to act on)"
            continue
        if reads_a_record_it_does_not_name(plan, entry):
            skipped[source] = (f"it names no {singular(plan.table).replace('_', ' ')}, and "
                               "nothing the database holds is what it reads")
            continue
        misread = reads_what_it_does_not_do(plan)
        if misread is not None:
            skipped[source] = misread
            continue
        if edits_a_record_it_does_not_name(plan, str(entry.get("description") or "")):
            skipped[source] = (f"what it changes is not {with_article(singular(plan.table))}"
                               ": neither its name nor its description names one")
            continue
        if found_by_another_id(plan):
            skipped[source] = (f"it names no {singular(plan.table).replace('_', ' ')}: what it is "
                               "told is another thing's id")
            continue
        plan, twice = _one_column_twice(plan)
        if twice is not None:
            skipped[source] = twice
            continue
        if echoes_its_calls(spec, plan, entry):
            skipped[source] = ("it reads back only what its calls were given: no column holds "
                               "what it returns")
            continue
        plans.append(plan)
    # the schema's own tools never take a source tool's name: one the design left out stays
    # out (the travel planner's search_attractions was the arena's search under its name)
    names = {p.name for p in plans} | {tool_identifier(s) for s in coverage.get("tools") or {}}
    served = set().union(*(_served(p) for p in plans))
    # a service whose every tool only reads (a fetcher, a clock, a documentation index, a
    # flight tracker) stays one: no edited web page, time zone, documentation page or flight
    # beside it (AWS documentation had gained delete_documentation, Obsidian's reader a note
    # on each note)
    planned = {p.name: p for p in plans}
    reading = {source for source, entry in (coverage.get("tools") or {}).items()
               if only_reads(source, entry, planned.get(tool_identifier(source)))}
    reads_only = bool(coverage.get("tools")) and len(reading) == len(coverage["tools"])
    # nor an edited web search result: the web finds those, no user keeps them (jina's
    # "edit that search result: set its snippet to ...")
    found = {t.name for t in spec.tables if set(RESULT_COLUMNS) <= {c.name for c in t.columns}}
    logs = call_logs(spec, coverage, reading)
    extra = [_schema_contract(spec, p) for p in schema_plans(spec, _owned_states(plans))
             if p.name not in names and (_schema_kind(p), p.table) not in served
             and not (p.write and (reads_only or p.table in found)) and p.table not in logs]
    room = max(0, max_tools - len(plans))
    writes = [p for p in extra if p.write]
    # under the cap, the look-ups of what the service's own tools act on come first (the
    # fines a check-in charges and waive_fine waives, before a history table nothing names)
    touched = {p.table for p in plans} | {e.table for p in plans if p.contract is not None
                                          for e in p.contract.effects}
    reads = sorted((p for p in extra if not p.write), key=lambda p: p.table not in touched)
    want_writes = max(0, int(0.4 * max_tools) - sum(p.write for p in plans))
    chosen = writes[:min(len(writes), want_writes, room)]
    chosen += reads[:room - len(chosen)]
    if len(chosen) < room:
        chosen += [p for p in writes if p not in chosen][:room - len(chosen)]
    order = {id(p): i for i, p in enumerate(extra)}
    plans.extend(sorted(chosen, key=lambda p: order[id(p)]))
    return plans, skipped


def _one_column_twice(plan: ToolPlan) -> tuple[ToolPlan, str | None]:
    """A plan that finds its record by two arguments on one column: the optional one of them
    is left unread (Microsoft 365's update_todo_task takes the task's id as `todoTaskId` and
    again as an optional `id`); two required ones are no buildable plan, with the reason
    (Excel's import_csv(path, csv_path) had both as the record's `path`, and its lookup kept
    one of them: `match = {'path': csv_path, 'path': path}`)."""
    seen: dict[str, ParamPlan] = {}
    params = list(plan.params)
    unread: set[str] = set()
    for p in list(params):
        if p.role not in ("key", "eq") or not p.column:
            continue
        other = seen.get(p.column)
        if other is None:
            seen[p.column] = p
        elif not p.required or not other.required:
            spare = p if not p.required else other
            params[params.index(spare)] = spare.model_copy(
                update={"role": "ignore", "column": None})
            unread.add(spare.name)
            seen[p.column] = other if spare is p else p
        else:
            return plan, (f"its arguments {other.name} and {p.name} both name the "
                          f"{singular(plan.table).replace('_', ' ')}'s {p.column}")
    if not unread:
        return plan, None
    contract = plan.contract.model_copy(update={"params": [
        q.model_copy(update={"role": "ignore", "column": None}) if q.name in unread else q
        for q in plan.contract.params]}) if plan.contract is not None else None
    return plan.model_copy(update={"params": params, "contract": contract}), None


def _owned_states(plans: list[ToolPlan]) -> Owned:
    """The states a source tool reaches with writes to other rows too (git_checkout leaves
    the branch checked out before it; a cancellation frees the slot)."""
    owned: Owned = {}
    for plan in plans:
        effects = plan.contract.effects if plan.contract is not None else []
        if not any(e.coupled or e.rows != "entity" for e in effects):
            continue
        for e in effects:
            if e.rows != "entity" or e.op != "update":
                continue
            for column, v in e.set.items():
                states = [v.value] if v.source == "const" else \
                    [v.value, v.alt_value] if v.source == "notice" else []
                for state in states:
                    owned.setdefault((e.table, column), {}).setdefault(state, plan.name)
    return owned


def _schema_contract(spec: EnvSpec, plan: ToolPlan) -> ToolPlan:
    """A schema tool with its contract; a create that books a record (a new appointment's
    slot) takes it, as the source's booking tool does."""
    contract = plan_contract(plan)
    if plan.kind != "create":
        return plan.model_copy(update={"contract": contract})
    table = spec.table(plan.table)
    params = []
    for p in plan.params:
        col = table.column(p.column) if p.column and p.role == "set" else None
        if col is not None and col.foreign_key and p.ref_table is None:
            parent, parent_col = col.foreign_key.split(".")
            p = p.model_copy(update={"ref_table": parent, "ref_column": parent_col})
        params.append(p)
    status = status_column(table)
    booked, guards = book_parent(spec, table, params,
                                 plan.fixed.get(status.name) if status is not None else None)
    named = {g.row for g in guards}
    params = [p.model_copy(update={"required": True}) if p.name in named else p
              for p in params]
    if not booked:
        return plan.model_copy(update={"contract": contract})
    contract = contract.model_copy(update={
        "params": params, "effects": [*contract.effects, *booked], "guards": guards,
        "options": {"plan": plan.model_dump()}})
    return plan.model_copy(update={"kind": "contract", "params": params, "contract": contract})


def contract_plan(spec: EnvSpec, name: str, entry: dict[str, Any]) -> ToolPlan | None:
    """The plan of one source tool, from its behaviour contract: the plain kinds (a lookup, a
    listing, an insert, a field edit, a delete) keep their renderer and test writer; anything
    with coupled effects, guards or a computation is rendered from the contract itself."""
    contract = derive_contract(spec, name, entry, source_plan)
    if contract is None:
        return None
    plain = contract.options.get("plan")
    roles = {p.role for p in contract.params}
    if plain is not None and len(contract.effects) <= 1 and not contract.guards:
        return ToolPlan.model_validate({**plain, "contract": contract})
    if contract.verb in ("read_one", "list", "search") and roles <= _PLAIN_ROLES \
            and not contract.embed and contract.computation is None:
        kind = "get" if contract.verb == "read_one" else "list"
        if kind == "get" and not any(p.role == "key" for p in contract.params):
            return None
        where = stated_conditions(spec.table(contract.entity), contract.description) \
            if kind == "list" else {}
        return ToolPlan(name=name, kind=kind, table=contract.entity,
                        description=contract.description, params=contract.params,
                        where=where, source_tool=name, contract=contract,
                        max_span_days=stated_span(contract.params, contract.description))
    if contract.verb == "delete":
        plan = source_plan(spec, name, entry)
        return plan.model_copy(update={"contract": contract}) if plan else None
    base = ToolPlan.model_validate(plain) if plain is not None else None
    return ToolPlan(name=name, kind="contract", table=contract.entity,
                    description=contract.description, params=contract.params,
                    fixed=base.fixed if base else {}, now_columns=base.now_columns if base else [],
                    code_columns=base.code_columns if base else [],
                    copied=base.copied if base else {}, unique=base.unique if base else [],
                    unique_groups=base.unique_groups if base else [],
                    source_tool=name, contract=contract)


__all__ = ["contract_plan", "plan_tools", "source_plan"]
