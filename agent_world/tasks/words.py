"""Names read as words: the words of a tool or field name and the thing a tool is about (its
entity). Walks and phrasing read names alike; singular and plural are the miner's
(`mining.offline.naming`), so a task names a table's rows as the miner named the table."""

from __future__ import annotations

import functools
import re

from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import (
    ADDED_LABEL,
    is_plural_word,
    is_version,
    plural_word,
    singular_word,
    tool_identifier,
    unversioned_camel,
)
from agent_world.mining.offline.signatures import later_verb, namespace_prefix, sql_argument
from agent_world.mining.offline.value_pools import is_named_value
from agent_world.mining.offline.vocabulary import (
    MAKES_RECORD,
    PHRASAL_VERBS,
    QUALIFIERS,
    QUALITY_WORDS,
    VALUE_NOUNS,
    VERBS,
    WHERE_WORDS,
    past_prefix,
)


def source_tools(spec: EnvSpec) -> frozenset[str]:
    """The tools the mined service itself serves (git's git_checkout, the fetcher's fetch),
    as built; the rest are the database's own look-ups and edits."""
    coverage = (spec.provenance.stats or {}).get("tool_coverage") or {}
    served = {tool_identifier(name) for name in coverage.get("tools") or {}}
    return frozenset(t.name for t in spec.tools if t.name in served)


def lost_inputs(spec: EnvSpec, tool: str) -> list[str]:
    """The arguments the service requires of its tool that the built tool does not take
    (exa's web_fetch_exa(urls) built as a listing of past fetches): a call of it is no call
    the service would answer."""
    coverage = ((spec.provenance.stats or {}).get("tool_coverage") or {}).get("tools") or {}
    entry = next((e for name, e in coverage.items() if tool_identifier(name) == tool), None)
    if entry is None:
        return []
    takes = {_plain(p) for p in spec.tool(tool).parameters.get("properties", {})}
    return [a for a, info in (entry.get("arguments") or {}).items()
            if info.get("required") and _plain(a) not in takes]


def _plain(argument: str) -> str:
    """An argument's name as spelled apart from escapes: 'If-Match', 'If_Match' and
    'ifMatch' alike, 'from' and 'from_'."""
    return re.sub(r"[^a-z0-9]", "", argument.lower())


# a tool finding the record it acts on by a field of it: `row = _row(ctx, table, pk, column,
# arg, ...)`
_LOOKUP = re.compile(r"^    row = _row\(ctx, '(\w+)', '(\w+)', '(\w+)', (\w+),", re.M)
_MATCHED_IN = re.compile(r"^    row = _row_where\(ctx, '(\w+)', '(\w+)', match,", re.M)
_MATCH = re.compile(r"^    match = \{(.*)\}$", re.M)
_PAIR = re.compile(r"'(\w+)': (\w+)")
_MATCH_ADD = re.compile(r"^ +match\['(\w+)'\] = (\w+)$", re.M)


def own_keys(spec: EnvSpec, tool: str) -> dict[str, str]:
    """Arguments a tool finds its own record by that are no id (HubSpot's propertyName: the
    property by its name; a REST resource by its path), each with the column it matches: a
    request names the record by them, it does not set them."""
    source = next((t.source for t in spec.tools if t.name == tool), "")
    if "_insert(ctx" in source:
        return {}  # a create's lookups are what the new record refers to (a base branch)
    mine = entity(tool, tool_namespace(spec))
    keys = {arg: column for table, pk, column, arg in _LOOKUP.findall(source)
            if column != pk and table_entity(table) == mine}
    # an edit that finds its record by several values (`match = {...}`, `_row_where`):
    # GitLab's update_issue_note(project_id, issue_iid, note_id, body) finds the note in its
    # issue, never sets its issue
    found = _MATCHED_IN.search(source)
    if found and table_entity(found.group(1)) == mine:
        said = _MATCH.search(source)
        pairs = _PAIR.findall(said.group(1)) if said else []
        keys.update({arg: column for column, arg in [*pairs, *_MATCH_ADD.findall(source)]
                     if column != found.group(2)})
    return keys


def split_words(name: str) -> list[str]:
    """`listPatientAppointments` / `list_patient_appointments` → list, patient, appointments."""
    name = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", unversioned_camel(name))
    return [w for w in re.split(r"[_\W]+", name.lower()) if w]


_HOW = frozenset({"with", "using", "via", "from", "into", "as"})
_WHERE_OR_HOW = frozenset({"by", *WHERE_WORDS})
# arguments that page a list, not ask for anything: never sampled as values, never a record's
# key, said as "(just the first N)"
PAGING = ("limit", "offset", "page", "page_size", "max_results", "per_page", "cursor")
# the role words of a pair of ends ("source_timezone", "target_timezone"): said "from" / "to"
FROM_ROLES = frozenset({"source", "from", "origin"})
TO_ROLES = frozenset({"target", "to", "destination"})


def table_entity(table: str) -> str:
    """What a table's rows are called, as `entity` calls a tool's: `dst_transitions` → dst
    transition."""
    return " ".join(split_words(singular_word(table)))


def tool_namespace(spec: EnvSpec) -> str | None:
    """The word every tool name of `spec` starts with, if one does (git's `git_`), as the
    miner finds it (`signatures.namespace_prefix`)."""
    return _namespace(spec.name, tuple(t.name for t in spec.tools))


def added_labels(spec: EnvSpec) -> frozenset[str]:
    """The names the miner gave records their source names no label for (`ADDED_LABEL`):
    'inventory-shard', 'frontend-rate'; and the values of columns it filled from their names
    alone ('sync-calculation'). No request names a record by one nor asks for one."""
    # asked several times for every candidate task: kept per spec object (its fingerprint
    # hashes the whole spec, rows and all, on every read)
    seen = _LABELS_SEEN.get(id(spec))
    if seen is None or seen[0] is not spec:
        if len(_LABELS_SEEN) >= 8:
            _LABELS_SEEN.clear()
        seen = _LABELS_SEEN[id(spec)] = (spec, frozenset(
            str(row[c.name]) for t in spec.tables for c in t.columns
            if c.description == ADDED_LABEL or _stand_ins(spec, t.name, c.name)
            for row in spec.rows.get(t.name, []) if row.get(c.name) is not None))
    return seen[1]


_LABELS_SEEN: dict[int, tuple[EnvSpec, frozenset[str]]] = {}


def _stand_ins(spec: EnvSpec, table: str, column: str) -> bool:
    """A column every value of which the miner made up from its name ('payments-doc-property'
    in Excel's doc_properties): said of no record ("the workbook whose doc properties is
    'payments-doc-property'")."""
    values = [row[column] for row in spec.rows.get(table, []) if row.get(column) is not None]
    return bool(values) and all(is_named_value(column, v) for v in values)


# the times every mined record keeps of its own life: no fact about what it is
TIMESTAMPS = frozenset({"created_at", "updated_at"})


def empty_tables(spec: EnvSpec) -> frozenset[str]:
    """Tables whose records hold nothing but their id, timestamps, keys to other records and
    a name the miner made up (Glean's company searches, a ccxt cache of `cache_stats`): a
    request about one can only ask when it was made ("when was icon search 13 created?")."""
    return frozenset(t.name for t in spec.tables if not any(
        not c.primary_key and c.name not in TIMESTAMPS and not c.foreign_key
        and c.description != ADDED_LABEL for c in t.columns))


@functools.lru_cache(maxsize=256)  # asked for every step of every task phrased
def _namespace(env: str, tools: tuple[str, ...]) -> str | None:
    return namespace_prefix(env, list(tools))


def entity(tool: str, namespace: str | None = None) -> str:
    """The thing a tool is about, singular: `list_holds` → hold, `set_member_status` →
    member, `count_loans_by_status` → loan; a verb after the noun too: `version_get` →
    version, `db-cluster-list-topics` → topic. `namespace`: the server's word that starts
    every tool name (`tool_namespace`), which is no verb: `git_diff_unstaged` → diff unstaged."""
    words = [w for w in split_words(tool) if not is_version(w)]  # hostinger's ...V1
    if namespace and len(words) > 1 and words[0] == namespace:
        words = words[1:]
        if words[0] not in VERBS:  # no verb first: 'git' stood where the verb would
            verb, obj = later_verb(words)
            words = [verb, *obj] if verb else ["", *words]
    elif words and words[0] not in VERBS and "_".join(words[:2]) not in PHRASAL_VERBS:
        verb, obj = later_verb(words)
        if verb is not None and obj:
            words = [verb, *obj]
        elif len(words) > 1 and words[1] in QUALIFIERS:
            words = ["", *words]  # no verb: domain_byComposeId is about a domain
    # "retrieve-a-comment" is about a comment, not "a comment"; read_multiple_files about
    # files, not "multiple files"
    words = [w for i, w in enumerate(words) if i == 0 or w not in _HOW_MANY]
    return _thing(words)


# words that say how many records a name acts on, or whose, or which it reaches, not what
# they are ("a", "multiple", get_my_cards' "my", list_available_documents' "available": Word's
# tasks read "the document of that available document")
_HOW_MANY = frozenset({"a", "an", "the", "multiple", "many", "single", "bulk", "my",
                       "available"})


# words a tool name adds to its record's kind without naming another (suspend_member_account
# acts on a member: "that member account's member" is no English)
_ASPECTS = frozenset({"account", "profile", "record", "details", "info"})


def sql_param(spec: EnvSpec, tool: str) -> str | None:
    """The argument a tool that runs the SQL it is given takes the statement in (sqlite's
    read_query(query), Postgres' query(sql)); None for any other tool."""
    t = next((x for x in spec.tools if x.name == tool), None)
    if t is None:
        return None
    return sql_argument(list(t.parameters.get("properties") or {}), t.description)


def runs_sql(spec: EnvSpec, tool: str) -> bool:
    """A tool that runs the SQL it is given: its records are the rows the query returns,
    not "queries"."""
    return sql_param(spec, tool) is not None


# words joining a tool's record to what it belongs to (tasks_for_project, tag_to_task)
_RELATIONS = frozenset({"for", "of", "to", "from", "in", "on"})


def tool_entity(spec: EnvSpec, tool: str) -> str:
    """`entity` of one of `spec`'s tools, its namespace word known; where no table is called
    that, an aspect word of a table's record (member account) or its owner's name (patient
    appointment) is dropped (a bank account or a branch commit with a table stays one)."""
    if runs_sql(spec, tool):
        return "row"
    ent = entity(tool, tool_namespace(spec))
    words = ent.split()
    kinds = {table_entity(t.name) for t in spec.tables}
    bare_verb = len(words) == 1 and words[0] in VERBS
    if words and (words[0] in VERBS or words[0] in VALUE_NOUNS) and \
            (ent not in kinds or bare_verb):
        # a command named by its verb or its output (git_show, git_log, git_diff_unstaged):
        # the records it acts on ("the commit whose sha is ...", not "the show whose ..."),
        # also where a log of its calls is named after it (fetch reads pages: "the page's
        # content type", not "the fetch's")
        acted = acted_table(spec, tool, looked_up=bare_verb)
        return table_entity(acted) if acted else ent
    # a name whose plural is a table's ('aks' -> akses) is that table's record as the source
    # says it; singular_word would read the table back as 'akse' ('redise', 'servicebuse')
    if words and "_".join([*words[:-1], plural_word(words[-1])]) in {t.name for t in spec.tables}:
        return ent
    if len(words) < 2:
        if ent in kinds:
            return ent
        # a word no record is called (search_catalogue reads titles: "the titles", not "the
        # catalogues"); a qualified name (child loan, available slot) stays as it is
        acted = acted_table(spec, tool)
        return table_entity(acted) if acted else ent
    if ent in kinds:
        return ent
    at = next((k for k, w in enumerate(words) if w in _RELATIONS), 0)
    if at and singular_word(" ".join(words[:at])) in kinds:
        # the record and what it belongs to (asana_get_tasks_for_project, add_tag_to_task):
        # "the tasks of that task's project", not "the tasks for project of ..."
        return singular_word(" ".join(words[:at]))
    if words[-1] in _ASPECTS and " ".join(words[:-1]) in kinds:
        return " ".join(words[:-1])
    if words[0] in kinds and " ".join(words[1:]) in kinds and not spec.tool(tool).mutates:
        # the owner's name before the record's in a read (list_patient_appointments): "the
        # cancelled appointments of patient 4", not "... patient appointments of patient 4"
        # (a write's "reservation flight" is a record of its own: a link)
        return " ".join(words[1:])
    return ent


_WRITTEN = re.compile(r"""(?:UPDATE|INSERT INTO|DELETE FROM) "(\w+)"|_insert\(ctx, '(\w+)'""")
_RETURNED = re.compile(r'SELECT \* FROM "(\w+)"')
_LOOKED_UP = re.compile(r"_row(?:_in)?\(ctx, '(\w+)'")


def acted_table(spec: EnvSpec, tool: str, looked_up: bool = False) -> str | None:
    """The table a tool's code writes first, else the one whose rows it returns (or, with
    `looked_up`, the one it finds a record in by a helper)."""
    source = spec.tool(tool).source or ""
    written = _WRITTEN.search(source)
    if written:
        return written.group(1) or written.group(2)
    returned = _RETURNED.findall(source) or (_LOOKED_UP.findall(source) if looked_up else [])
    return returned[-1] if returned else None


def _thing(words: list[str]) -> str:
    words = past_prefix(words)  # git_create_branch → branch, not "create branch"
    rest = words[1:] if len(words) > 1 else words
    particles = ("in", "out", "up", "off", "on", "back", "all")
    while len(rest) > 1 and rest[0] in particles:
        rest = rest[1:]  # check_in_copy → copy, not "in copy"
    if rest == words[1:] and len(rest) == 1 and rest[0] in particles:
        return "record"  # check_in names no thing: "that in's reservation" is no English
    if len(rest) > 1 and rest[0] in _HOW:
        return "record"  # a name that says how, not what: upgrade_with_miles is no "with mile"
    # what follows says where or how, not what: insert_header_near_text adds a header, not
    # a "header near text"; add_footnote_robust a footnote
    cut = next((i for i, w in enumerate(rest) if w in _WHERE_OR_HOW), len(rest))
    rest = [w for w in rest[:cut] if w not in QUALITY_WORDS] or rest
    # a history is records of its own (copy_history rows), not the copy it tells of
    # and what a read names after its record is what it reads of it, as the miner reads it:
    # get_document_outline reads a document ("the document outline titled ..." had been no
    # record any table holds); a create makes one (create_commit_status: a commit status)
    if len(rest) > 1 and words[0] not in MAKES_RECORD and (
            rest[-1] in ("status", "details", "count", "outline", "xml") or rest[-1] == "list"
            and is_plural_word(rest[-2])):  # get_comments_list
        rest = rest[:-1]
    return " ".join([*rest[:-1], singular_word(rest[-1])]) if rest else "record"


# the records of a mass noun counted one by one: "how many loan history entries", not "how
# many loan history"
_COUNTED_AS = {"history": "entries", "audit": "entries", "feedback": "entries", "news": "items",
               "inventory": "items", "equipment": "items", "media": "items", "mail": "messages",
               "staff": "members", "music": "tracks", "data": "records", "metadata": "records",
               "information": "records", "analytics": "records", "research": "records"}


def entity_plural(ent: str) -> str:
    words = ent.split()
    if words and words[-1] in _COUNTED_AS:
        return " ".join([*words, _COUNTED_AS[words[-1]]])
    return " ".join([*words[:-1], plural_word(words[-1])])


__all__ = ["FROM_ROLES", "PAGING", "TO_ROLES", "acted_table", "entity", "entity_plural", "runs_sql", "source_tools",
           "split_words", "sql_param", "table_entity", "tool_entity", "tool_namespace"]
