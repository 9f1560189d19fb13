"""What a source tool's name and description say it does, for the planner: which verbs make
a record, which names only read, what a listing's description says its rows are, and the
tools the arena leaves out because what it would build is not what they say (a read of a
record they do not name, a write that makes nothing, a query in another language, a read
that echoes its own arguments)."""

from __future__ import annotations

import re
from typing import Any

from agent_world.design.offline.plans import VERB_STATUS, ToolPlan, range_bounds, status_column
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.offline.naming import singular, snake, tokens, with_article
from agent_world.mining.offline.signatures import OTHER_QUERY_LANGUAGES
from agent_world.mining.offline.vocabulary import (
    ACT_NOUNS,
    DELETE_VERBS,
    PURE_READS,
    STATE_VERBS,
    UI_VERBS,
    VERBS,
    WRITE_VERBS,
)
from agent_world.mining.offline.vocabulary import CREATE_VERBS as MAKING_VERBS

# verbs a planned write makes a record with
CREATE_VERBS = frozenset({"add", "create", "register", "book", "place", "append", "insert",
                          "new", "write", "open", "submit", "make", "log", "record", "enroll",
                          "schedule", "issue", "post", "upload", "commit", "start"})
# verbs that change a record that exists: without an argument naming it there is nothing to do
UPDATE_VERBS = frozenset({"update", "edit", "modify", "patch", "change", "rename", "resize",
                          "upgrade"})


# verbs that only make a record, even told nothing to put in it
PLAIN_CREATES = frozenset({"create", "add", "new", "insert", "register", "generate", "make"})
# write verbs that are also the things a read gets: get_issue, get_post, list_commits,
# get_place_info, get_record, list_schedules
_NOUN_VERBS = frozenset({"issue", "post", "open", "record", "log", "commit", "start", "place",
                         "book", "schedule", "upload", "new", "write", "make", "submit",
                         "enroll", "order", "run", "build", "deploy", "release", "export",
                         "import", "comment", "message", "note", "draft", "report", "backup"})
# a description that starts by saying it reads ("Get detailed information about ...")
_DESCRIBED_READ = re.compile(r"(?i)^(?:gets?|retrieves?|fetch(?:es)?|reads?|returns?|lists?|"
                             r"search(?:es)?|finds?|shows?|describes?|views?|look(?:s)? up|"
                             r"quer(?:y|ies))\b")


def reads_by_name(words: list[str]) -> bool:
    """A name that starts with a verb that only reads, whose other verbs are the things it
    reads (get_issue, list_issue_types), not a second act (get_or_create_user)."""
    if not words or words[0] not in PURE_READS or set(words) & {"and", "or", "then"}:
        return False
    acts = CREATE_VERBS | DELETE_VERBS | UPDATE_VERBS | set(VERB_STATUS)
    return not (set(words[1:]) - _NOUN_VERBS) & acts


def reads_by_description(description: str) -> bool:
    return bool(_DESCRIBED_READ.match(description.strip()))


def only_reads(source: str, entry: dict[str, Any], plan: ToolPlan | None) -> bool:
    """Whether a source tool only reads: its plan reads, or, left unplanned, its annotation,
    name or description says it reads (a documentation search, a flight look-up) or its name
    says no write (Variflight's flightHappinessIndex, MUI's generateReactCode)."""
    if plan is not None:
        return not plan.write
    words = tokens(source)
    verb = next((w for w in words if w in VERBS or w in INSPECTS), None)
    return bool(entry.get("read_only")) or reads_by_name(words) or verb in INSPECTS or \
        reads_by_description(entry.get("description") or "") or not set(words) & WRITE_VERBS


def first_verb(words: list[str]) -> str | None:
    """The first word of a tool's name that is a verb (update_issue: 'update', not the
    'issue' of issuing a book)."""
    return next((w for w in words if w in VERBS or w in CREATE_VERBS or w in UPDATE_VERBS
                 or w in INSPECTS), None)


# verbs that look at what exists and change none of it (Hotels' compare_hotels, ripgrep's
# count-matches, the IaC server's validate_cloudformation_template)
INSPECTS = frozenset({"compare", "count", "validate", "verify", "check", "troubleshoot",
                      "diagnose", "resolve", "expand", "scrape", "search", "analyze",
                      "analyse", "explain", "inspect", "preview", "estimate", "calculate",
                      "select", "crawl", "map", "audit"})


# verbs whose call makes no record: it acts on a connection, a process or what exists, or
# checks or answers something (a write told no record with such a verb had become an insert
# into the table its name suggests: Desktop Commander's kill_process inserted a process)
_MAKES_NOTHING = frozenset({
    "kill", "terminate", "reconnect", "disconnect", "restart", "reload", "refresh", "reset",
    "clear", "cleanup", "empty", "check", "validate", "verify", "diagnose", "troubleshoot",
    "ping", "login", "logout", "stop", "shutdown", "mark", "expand", "ask", "recommend",
    "assess", "detect", "introspect", "prepare", "rerun", "select", "hide", "sort", "format",
    "reorder", "move"})


def makes_nothing(words: list[str]) -> bool:
    """Whether a write's verb, the first found in its name, makes no record."""
    verb = next((w for w in words if w in VERBS), None)
    return verb in _MAKES_NOTHING


# verbs that make a record: a write whose name has none inserts nothing (AMap's
# maps_regeocode, Memcached's cache_incr and Roblox's execute_luau had each inserted a record
# of the call into a table named for it)
_MAKES = frozenset(CREATE_VERBS | MAKING_VERBS | PLAIN_CREATES | {
    "put", "push", "reply", "forward", "broadcast", "publish", "share", "compose", "store",
    "fork", "install",
    "enqueue", "draft", "comment", "order", "buy", "purchase", "reserve", "provision",
    "request"})
# verbs that change a record that exists; a copy is a new record, not an edit of its source
_EDITS = frozenset(WRITE_VERBS | UPDATE_VERBS | {
    "mark", "toggle", "enable", "disable", "configure", "upgrade", "scale", "resize", "tag",
    "label", "pin", "unpin", "star", "unstar", "watch", "unwatch", "follow", "unfollow",
    "snooze", "mute", "unmute", "protect", "unprotect", "unarchive", "unlock", "reorder",
    "link", "unlink", "attach", "detach", "add", "remove", "save", "upsert", "respond",
    "reply", "share", "unshare", "hide", "unhide", "flag", "unflag", "rate", "vote", "react",
    "subscribe", "unsubscribe", "sync", "assign"})
_COPIES = frozenset({"copy", "duplicate", "clone", "fork"})


def makes_by_name(words: list[str], description: str = "", table: str = "") -> bool:
    """Whether a tool's name says it makes a record (create_issue, kv_put, send_message), or
    its description opens saying it makes one of `table`'s (Excel's set_note: "Add a note to
    a cell"; not Word's protect_document: "Add password protection to a document")."""
    if set(words) & _MAKES:
        return True
    m = re.match(r"\s*([A-Za-z]+)((?:\s+[A-Za-z]+){0,4})", description)
    if m is None:
        return False
    said = m.group(1).lower()
    made = {singular(w) for w in m.group(2).lower().split()} - {"a", "an", "the", "new", "one"}
    return any(v in _MAKES for v in (said, said.removesuffix("s"), said.removesuffix("es"))) \
        and bool(made & {singular(w) for w in table.split("_")})


def edits_by_name(words: list[str]) -> bool:
    """Whether a tool's name says it changes a record that exists: Airflow's trigger_dag had
    written its run's conf onto the DAG, Trello's copy_card renamed the card it copies,
    arXiv's download_paper set the paper's `start`."""
    return bool(set(words) & _EDITS) and not set(words) & _COPIES


def acts_on_existing(words: list[str]) -> bool:
    """Whether a tool's verb acts on something that exists, so that, told no record, it
    cannot be an insert: a state it sets or undoes (mute, pause, cancel; unmute, unpin) or an
    act on a screen (click, hover)."""
    verb = next((w for w in words if w in VERBS or w.startswith("un") and w[2:] in VERBS),
                None)  # unassign, unfollow: undoing an act on what exists
    if verb is None or verb in CREATE_VERBS or verb in MAKING_VERBS:
        return False  # a deploy or a send makes a record (a deployment, a message)
    return verb in UI_VERBS or verb in STATE_VERBS or verb.startswith("un")


_QUERY_ARGS = frozenset({"query", "cypher", "statement", "expr", "expression", "promql", "q"})


def speaks_another_language(entry: dict[str, Any]) -> bool:
    """A tool that takes a query in another language than SQL (neo4j's read_neo4j_cypher,
    Prometheus' PromQL): searching its records by the query's text, or running it as SQL,
    is not what it does."""
    args = {a: i for a, i in (entry.get("arguments") or {}).items() if snake(a) in _QUERY_ARGS}
    said = " ".join([str(entry.get("description") or ""),
                     *(str((i or {}).get("description") or "") for i in args.values())])
    # "supports KQL syntax" (Teams' message search) is a text search that also takes filters
    return bool(args) and any("support" not in said[max(0, m.start() - 25):m.start()].lower()
                              for m in OTHER_QUERY_LANGUAGES.finditer(said))


def reads_a_record_it_does_not_name(plan: ToolPlan, entry: dict[str, Any]) -> bool:
    """A read of a table its name does not name, taking nothing (a listing of it) or found by
    a key the source does not take (Airflow's get_system_health() became
    get_system_health(dag_id), Coolify's get_mcp_version() read a server) or by its
    container's reference (Plane's list_states(project_id) returned the project), or that
    neither its name nor its description names at all (Desktop Commander's get_config listed
    files, EKS' list_api_versions VPCs): the source reads something the database has no table
    for."""
    if plan.kind not in ("get", "list") or plan.source_tool is None:
        return False
    if not names_its_table(plan.source_tool, str(entry.get("description") or ""), plan.table):
        return True
    named = {singular(w) for w in tokens(plan.source_tool)}
    if {singular(w) for w in singular(plan.table).split("_")} & named:
        return False
    said = {snake(a) for a in entry.get("arguments") or {}}
    if plan.kind == "list":  # a read taking nothing, of a table it does not name
        return not said
    keys = [p for p in plan.params if p.role == "key"]
    own_key = f"{singular(plan.table)}_id"
    return not said or any(snake(p.name) not in said or snake(p.name) == own_key for p in keys)


# verbs a read's name may not start with: what it does changes something (Mastra's
# clearMastraCourseHistory, Backlog's reset_unread_notification_count and Figma's
# figma_set_slides_view_mode had each become a listing); a verb that is also a thing read
# (issue_list, log_search) does not count
_CHANGES = frozenset((CREATE_VERBS | UPDATE_VERBS | DELETE_VERBS | {
    "clear", "reset", "set", "toggle", "cancel", "kill", "terminate", "stop", "restart",
    "enable", "disable"}) - _NOUN_VERBS)
# what a read named for an amount returns: a number, not the records it counts (LINE's
# get_message_quota had listed messages, Backlog's get_wikis_count the wikis)
_AMOUNTS = frozenset({"count", "quota", "usage", "consumption"})


def reads_what_it_does_not_do(plan: ToolPlan) -> str | None:
    """Why a get or list is not what its source does: its name's first verb changes
    something, or its name ends in an amount (a count, a quota) while it returns records."""
    if plan.kind not in ("get", "list") or plan.source_tool is None:
        return None
    words = tokens(plan.source_tool)
    verb = first_verb(words)
    if verb in _CHANGES:
        return f"its name says it changes something ({verb!r}), and a read changes nothing"
    if words and singular(words[-1]) in _AMOUNTS:
        return (f"it returns {with_article(singular(words[-1]))}, not the records of "
                f"{plan.table.replace('_', ' ')} a read returns")
    return None


_MOVES = frozenset({"move", "transfer", "assign", "reassign", "relocate"})
_TARGETS = ("target_", "new_", "to_", "dest_", "destination_")


def _names_a_place(name: str) -> bool:
    return name in ("path", "file_path", "uuid") or name.endswith(("_id", "_iid", "_uuid"))


def _by_key(spec: EnvSpec, p: Any) -> bool:
    table = next((t for t in spec.tables if t.name == p.ref_table), None)
    return table is not None and table.primary_key == [p.ref_column]


def as_locators(spec: EnvSpec, params: list[Any], words: list[str]) -> list[Any]:
    """An edit's required references and ids beside its key say where the record is, not
    what to change (Chatwork's update_room_message(room_id, message_id, body) had moved the
    message to `room_id`, Excel's rename_sheet(path, sheet, new_name) re-filed the sheet):
    they become matches (`eq`) the record must hold. A move keeps its destination (Dokploy's
    application_move(targetEnvironmentId), Monday's move_item_to_group(groupId)). A reference
    by another column than its table's key (a project by its path) stays one: a match compares
    ids."""
    if not any(p.role == "key" for p in params):
        return params
    moving = bool(set(words) & _MOVES)
    target = None
    if moving:
        refs = [p for p in params if p.role in ("ref", "set") and p.required and p.column]
        target = next((p for p in refs if snake(p.name).startswith(_TARGETS)), None) or \
            next((p for p in reversed(refs) if p.role == "ref"), None)
    out = []
    for p in params:
        place = p.required and p.column and p is not target and p.type != "object" and (
            (p.role == "ref" and _by_key(spec, p))
            or (p.role == "set" and _names_a_place(snake(p.name))))
        out.append(p.model_copy(update={"role": "eq"}) if place else p)
    return out


def edits_a_record_it_does_not_name(plan: ToolPlan, description: str) -> bool:
    """An update or delete whose name and description name none of its table's words: the
    record it changes is not what it acts on (DigitalOcean's key-delete deleted an app,
    Plane's update_state a project, MongoDB's delete-many a connection, a browser's click
    set a page's `uid`)."""
    if plan.kind not in ("update", "delete", "set_status") or plan.source_tool is None:
        return False
    return not names_its_table(plan.source_tool, description, plan.table)


def names_its_table(tool: str, description: str, table: str) -> bool:
    """Whether a tool's name or description says a word of `table` (a name's short form
    counts: delete_text_in_doc names documents)."""
    named = {_stem(w) for w in tokens(tool)}
    said = named | {_stem(w) for w in re.findall(r"[a-z]+", snake(re.sub(r"\W+", "_",
                                                                        description)))}
    return any(_stem(w) in said or any(len(n) >= 3 and _stem(w).startswith(n) for n in named)
               for w in table.split("_"))


_ID_TAIL = re.compile(r"_(?:id|ids|gid|uuid|uid)$")


def found_by_another_id(plan: ToolPlan) -> bool:
    """Every argument the write finds its record by is the id of another thing: Asana's
    asana_delete_project_status(project_status_gid) had deleted the project whose column of
    that name matched."""
    if plan.kind not in ("update", "delete", "set_status") or plan.source_tool is None:
        return False
    finders = [p for p in plan.params if p.required and p.role in ("key", "eq", "ref")]
    if not finders or any(p.role != "eq" for p in finders):
        # its key is the record's own whatever its name; a reference names its parent, whose
        # records the source may well find it among (a slide by its presentation)
        return False
    own = singular(plan.table)
    return all(_ID_TAIL.search(n) and _ID_TAIL.sub("", n) not in ("", own)
               for n in (snake(p.name) for p in finders))


def _stem(word: str) -> str:
    # singular() keeps 'kvs' and 'ais'
    stem = singular(word)
    return stem[:-1] if stem.endswith("s") and len(stem) > 2 else stem


# bookkeeping columns a record of calls has besides the call's arguments
_CALL_META = frozenset({"created_at", "updated_at", "status"})


def echoes_its_calls(spec: EnvSpec, plan: ToolPlan, entry: dict[str, Any]) -> bool:
    """A read whose table holds nothing but its own arguments: the table is a log of its
    calls (open-meteo's weather_forecast(latitude, longitude, ...) over weather_forecasts of
    those columns, a browser's cookies of get_cookies(name), ripgrep's searches), so the tool
    returns what it was asked and a task reads back what the request said ("look up the flood
    forecast for latitude 59.8 ... tell me its latitude"). A computation (a SQL statement, a
    time conversion, a fetch) computes its result and is none."""
    if plan.write or plan.contract is not None and plan.contract.computation is not None:
        return False
    table = next((t for t in spec.tables if t.name == entry.get("table")), None)
    if table is None:
        return False
    data = {c.name for c in table.columns if not c.primary_key and not c.foreign_key} - _CALL_META
    own = {a.get("column") for a in (entry.get("arguments") or {}).values()
           if a.get("role") == "column" and a.get("table") == table.name}
    return bool(data) and data <= own


def call_logs(spec: EnvSpec, coverage: dict[str, Any], reading: set[str]) -> set[str]:
    """Tables that log a reading source tool's calls, not records a user keeps: named for an
    act (git's fetches of git_fetch, Terraform's module_searches, ripgrep's advanced_searches),
    with at least two data columns, three in four of them the tool's own arguments; and the
    tables whose rows belong to one of those. The arena's own look-ups and edits of such a
    table ("look up module search 8", "delete that advanced search") ask about a past call,
    which no one does. (A table named for a thing stays, however many of its columns a
    listing's filters made: SonarQube's issues, Vercel's deployments.) `reading`: the source
    tools that only read (`only_reads`)."""
    logs: set[str] = set()
    tables = {t.name: t for t in spec.tables}
    for source, entry in (coverage.get("tools") or {}).items():
        table = tables.get(entry.get("table") or "")
        if table is None or source not in reading:
            continue
        data = {c.name for c in table.columns if not c.primary_key and not c.foreign_key} - \
            _CALL_META
        own = {a.get("column") for a in (entry.get("arguments") or {}).values()
               if a.get("role") == "column" and a.get("table") == table.name}
        last = singular(table.name).split("_")[-1]
        # named for an act or its noun (searxng's suggestions); a post or a record is a thing
        acts = (last in VERBS or last in ACT_NOUNS) and last not in _NOUN_VERBS
        # or one argument and a link to what the call read (the fetcher's fetches: a url
        # and the page fetched): "find fetch 37" asked for a past call, and the policy took
        # the look-up of past fetches for the fetch itself
        linked = data and data <= own and any(
            c.foreign_key and c.foreign_key.split(".")[0] in tables for c in table.columns)
        if acts and (len(data) >= 2 and 4 * len(data & own) >= 3 * len(data) or linked):
            logs.add(table.name)
    return logs | {t.name for t in spec.tables if any(
        c.foreign_key and c.foreign_key.split(".")[0] in logs for c in t.columns)}


_NOT = r"(?:not(?: yet)?|never|un)\s*"


_SPAN = re.compile(r"\brange of (?:at most|up to|no more than) (\d+) days\b", re.I)


def stated_span(params: list[Any], description: str) -> int | None:
    """"Within a date range of at most 31 days": the longest span a listing's two bounds on
    one column may cover (None when it says none or has no such pair)."""
    m = _SPAN.search(description)
    return int(m.group(1)) if m is not None and range_bounds(params) else None


def stated_conditions(table: TableSpec, description: str) -> dict[str, list[Any]]:
    """What a listing's description says its rows are: "slots that are published and not yet
    booked" -> status in (published), booked = false. Only the table's own states and flags,
    named as words; a state said with "not" is left out."""
    text = " " + " ".join(description.lower().replace("_", " ").split()) + " "
    if not re.search(r"\b(?:that|which|who) (?:are|is)\b", text):
        return {}
    out: dict[str, list[Any]] = {}
    status = status_column(table)
    if status is not None:
        said = [st for st in status.enum or [] if re.search(
            rf"(?<!not )(?<!not yet )(?<!un)\b{re.escape(st.replace('_', ' '))}\b", text)]
        if said and len(said) < len(status.enum or []):
            out[status.name] = said
    for c in table.columns:
        if c.type == "boolean" and re.search(rf"\b{_NOT}{re.escape(c.name.replace('_', ' '))}\b",
                                             text):
            out[c.name] = [False]
    return out


__all__ = ["CREATE_VERBS", "PLAIN_CREATES", "UPDATE_VERBS", "acts_on_existing", "as_locators",
           "echoes_its_calls", "edits_a_record_it_does_not_name", "edits_by_name",
           "found_by_another_id",
           "makes_by_name", "makes_nothing", "names_its_table",
           "reads_a_record_it_does_not_name", "reads_what_it_does_not_do",
           "reads_by_description", "reads_by_name", "speaks_another_language",
           "stated_conditions", "stated_span"]
