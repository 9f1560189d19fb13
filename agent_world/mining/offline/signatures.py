"""Reading tool signatures (steps 2b and 2c). `tool_shape` splits a tool name into verb, object
noun, trailing value nouns and qualifier context (the shared namespace prefix dropped),
`resolve_object` resolves compound objects against known entities; `classify_argument` tells
whether an argument is a filter, a reference to an entity (by name, alias or description), an
array or a scalar; `column_type` gives a column's SQL type from JSON type, format, name and
description.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from agent_world.mining.offline.naming import (
    is_plural_word,
    is_version,
    singular,
    singular_word,
    snake,
    tokens,
)
from agent_world.mining.offline.reference_data import CURATED, MIME_TYPES
from agent_world.mining.offline.vocabulary import (
    ALIASES,
    ANSWER_VERBS,
    CREATE_VERBS,
    DRAWING_VERBS,
    DRAWINGS,
    FILE_PLACES,
    FILTER_ARGS,
    GENERIC_TAILS,
    ID_SUFFIXES,
    ID_WORDS,
    KEY_SUFFIXES,
    MAKES_RECORD,
    MODIFIERS,
    NOUN_VERBS,
    PERSON_ROLES,
    PHRASAL_VERBS,
    QUALIFIERS,
    READ_VERBS,
    ROLE_PREFIXES,
    SEARCH_ARGS,
    TRANSFORM_VERBS,
    UI_OBJECTS,
    UI_VERBS,
    VALUE_NOUNS,
    VERBS,
)

# ---- tool names ----------------------------------------------------------------------------


def namespace_prefix(doc_name: str, tool_names: list[str]) -> str | None:
    firsts = [tokens(n)[0] for n in tool_names if tokens(n)]
    if len(firsts) < 2:
        return None
    word, n = Counter(firsts).most_common(1)[0]
    doc_words = set(tokens(doc_name))
    if word in VERBS or word in NOUN_VERBS:
        return None
    if n >= max(2, math.ceil(0.6 * len(firsts))) or (word in doc_words and n >= 2):
        return word
    return None


@dataclass
class ToolShape:
    verb: str | None
    obj: str | None  # entity noun (singular) or None
    value_words: list[str]  # value nouns named by the tool (time, status, ...)
    read: bool
    creates: bool
    context: str | None = None  # the noun after a qualifier: reply_to_THREAD, get_x_by_Y
    recordless: bool = False  # acts on a screen or draws a picture: no record of its calls


REST_RESOURCE = "resource"  # what a bare HTTP method ('jira_post') acts on
_HTTP_METHODS = {"get": "get", "post": "create", "put": "update", "patch": "update",
                 "delete": "delete"}


def tool_shape(name: str, read_only: bool | None, ns: str | None,
               rest: bool = True, service: str = "") -> ToolShape:
    """`rest`: the tool takes an API path, so a bare HTTP method after the prefix is a REST
    pass-through (memcached's `cache_get(key)` is no such thing). `service`: the source's
    name; a read of the service itself names no record (`service_object`)."""
    verb: str | None = None
    if "/" in name:  # REST style: "GET /patients/{patient_id}/appointments"
        method, _, path = name.strip().partition(" ")
        segs = [s for s in path.split("/") if s and not s.startswith("{") and not s.startswith(":")]
        m = method.lower()
        verb = _HTTP_METHODS.get(m)
        words = tokens(segs[-1]) if segs else []
        toks = words
    else:
        toks = tokens(name)
        if ns and len(toks) > 1 and toks[0] == ns:
            toks = toks[1:]
            if rest and len(toks) == 1 and toks[0] in _HTTP_METHODS:
                # a REST pass-through ('bb_post', 'jira_get'): the method acts on whatever
                # resource its path names, never a record named after the method ('posts')
                verb = _HTTP_METHODS[toks[0]]
                read = verb == "get" if read_only is None else bool(read_only)
                return ToolShape(verb, REST_RESOURCE, [], read, verb == "create")
        if len(toks) > 1 and f"{toks[0]}_{toks[1]}" in PHRASAL_VERBS:  # checkInAppointment
            toks = [f"{toks[0]}_{toks[1]}", *toks[2:]]
        toks = [t for t in toks if not is_version(t)]  # hostinger's ...V1
        if toks and toks[0] in NOUN_VERBS and len(toks) == 1:
            pass
        elif toks and toks[0] in VERBS:
            verb, toks = toks[0], toks[1:]
        else:
            verb, toks = later_verb(toks)
    words: list[str] = []
    context = None
    for i, t in enumerate(toks):
        if t in QUALIFIERS:
            rest = [x for x in toks[i + 1:] if x not in ID_WORDS and x not in MODIFIERS
                    and x not in QUALIFIERS]
            context = singular_word(rest[0]) if rest else None
            break
        if t in ID_WORDS or t in MODIFIERS:
            continue
        words.append(t)
    if len(words) > 1 and words[-1] == "list" and is_plural_word(words[-2]):
        words.pop()  # get_comments_list: the comments, listed
    words = words[:4]
    if not words and verb in NOUN_VERBS and context:  # reply_to_thread: a reply on a thread
        words = [verb]
    value_words: list[str] = []
    # what a create makes is a record of its own: create_project_status makes a project
    # status, create_commit_status a commit status (both had inserted the project, the commit)
    makes = verb in MAKES_RECORD and len(words) > 1
    while words and (singular_word(words[-1]) in VALUE_NOUNS or words[-1] in VALUE_NOUNS) \
            and not makes:
        value_words.insert(0, words.pop())
    obj = None
    if words:
        obj = "_".join([*words[:-1], singular_word(words[-1])])
    if service_object(obj, verb, service):
        obj = None
    read = bool(read_only) if read_only is not None else \
        (verb in READ_VERBS or verb in ANSWER_VERBS if verb else False)
    if read_only is None and verb is None and obj is None:
        read = True
    # an act on a screen, or a picture drawn from the arguments: no record of its own
    recordless = verb in UI_VERBS or obj in UI_OBJECTS or \
        verb in DRAWING_VERBS and (obj or "").split("_")[-1] in DRAWINGS
    if recordless:
        obj, value_words, read = None, [], bool(read_only)
    creates = not recordless and not read and (verb in CREATE_VERBS or verb is None or
                                               verb in NOUN_VERBS)
    if context in VALUE_NOUNS or context == obj:
        context = None
    return ToolShape(verb, obj, value_words, read, creates, context, recordless)


def service_object(obj: str | None, verb: str | None, service: str) -> bool:
    """Whether a read's object is the one-word service it reads from, not a record of it
    (Exa's web_search_exa, search_reddit, query_omnifocus, test_wikipedia_connectivity had
    made tables 'exas', 'reddits', 'omnifocuses', 'wikipedias' of their calls); a file type
    named as a service (read_pdf of 'pdf') is still the record read."""
    return bool(obj) and obj == snake(service) and "_" not in obj and \
        verb in READ_VERBS | ANSWER_VERBS | {"test"} and \
        obj not in {kind for kind, _ in MIME_TYPES}


# what a search named by its kind looks in ('brave_web_search', 'brave_local_search')
_SEARCH_KINDS = frozenset({"web", "local", "news", "image", "video", "site", "content",
                           "semantic", "full_text", "internet"})


# the columns of what a web search finds (a page's title, url and snippet): records the
# service finds on the web, not ones its users keep or edit
RESULT_COLUMNS = ("title", "url", "snippet")


def new_value_field(arg: str, siblings: set[str] | frozenset[str]) -> str | None:
    """The field a write's `new_X` argument sets (renameItem(newName) sets the item's name,
    not a column 'new_name'); None for any other argument, or where the tool also takes X
    itself (`siblings`: the snake names of its arguments)."""
    field = arg[4:] if arg.startswith("new_") else ""
    return field if field and field not in siblings else None


def search_results(shape: ToolShape, arguments: list[str]) -> str | None:
    """The record kind a search for free text finds, when the tool names no record of its
    own ('search(query)', 'brave_local_search(query)': web or local results; was a table of
    the searches made, one row per call, and tasks such as "find local search 27")."""
    named = shape.verb is None and (shape.obj or "").endswith("search")  # 'web search'
    if shape.verb != "search" and not named or \
            not any(snake(a) in SEARCH_ARGS for a in arguments):
        return None
    obj = (shape.obj or "").removesuffix("search").strip("_") if named else shape.obj
    kind = [w for w in ([obj] if obj else []) + shape.value_words if w]
    if any(w not in _SEARCH_KINDS for w in kind):
        return None
    return "_".join([*kind, "result"]) if kind else "search_result"


# a tool that runs the SQL it is given: its statement argument, and a description that says
# it runs SQL (sqlite's read_query "Execute a SELECT query", Postgres' query(sql) "Run a
# read-only SQL query"; not a PromQL or Cypher query, not a search's free-text query, not
# PostgREST's sqlToRest, which converts a statement)
SQL_ARGS = ("query", "sql", "statement", "sql_query")
_SQL_DESCRIPTION = re.compile(r"\b(?:SELECT|INSERT|UPDATE|DELETE)\b.*\bquery\b|\bSQL\b")
_RUNS = re.compile(r"\b(?:run|runs|execute|executes|executing)\b", re.I)
OTHER_QUERY_LANGUAGES = re.compile(r"\b(?:Cypher|PromQL|LogQL|KQL|GraphQL|DSL|MQL|SPARQL)\b")


def sql_argument(arguments: list[str], description: str) -> str | None:
    """The argument a tool takes its SQL statement in, when the tool runs SQL over the
    database; None for any other tool."""
    text = description or ""
    if not (_SQL_DESCRIPTION.search(text) and _RUNS.search(text)) or \
            OTHER_QUERY_LANGUAGES.search(text):
        return None
    return next((a for a in arguments if snake(a).strip("_") in SQL_ARGS), None)


# verbs that still act when a name puts them after a noun; the others read as nouns there
# ('domain-record-edit', 'prepare_call_hierarchy', 'list_merge_requests')
_LATE_NOUNS = {"record", "log", "test", "link", "share", "view", "call", "plan", "upload",
               "download", "like", "rate", "print", "release", "track", "place", "build", "run",
               "check", "count", "new", "make", "take", "lock", "mark", "scan", "load", "select",
               "return", "order", "watch", "fill", "render", "apply", "collect", "receive",
               "merge", "pull", "push", "forward", "duplicate", "archive",
               # verbs of harvested names that, after a noun, are nouns too
               # ('performance_trace_start', 'site_map_list', 'index_stats')
               "format", "index", "filter", "sort", "trace", "star", "change", "audit",
               "empty", "clean", "exec", "poll", "research", "trigger", "type",
               "press", "wait", "focus", "scroll", "drag", "tap", "ping", "pin", "toggle",
               "measure", "transform", "preview", "replace", "interact", "hover"}
_LATE_VERBS = VERBS - NOUN_VERBS - _LATE_NOUNS
# last in a name, these name a kind of thing: 'semantic_search', 'web_fetch', 'text_generate'
_LAST_VERBS = _LATE_VERBS - set(TRANSFORM_VERBS)
_VAGUE_OBJECTS = GENERIC_TAILS | {"information", "detail", "details", "settings", "config",
                                   "active", "upcoming", "default"}


def later_verb(toks: list[str]) -> tuple[str | None, list[str]]:
    """(verb, object words) of a name whose verb is not first: 'hosting_createCronJob' and
    'db-cluster-list-topics' (a product area or parent before the verb: the object is what
    follows, or what precedes when what follows says nothing: 'account-get-information'),
    else 'alert-policy-create' (the verb last: what comes before is the object).
    (None, toks) when no later word is such a verb."""
    at = next((i for i in range(1, len(toks) - 1) if toks[i] in _LATE_VERBS), None)
    if at is None:
        if len(toks) > 1 and (toks[-1] in _LAST_VERBS or toks[-1] in _LATE_VERBS
                              and is_plural_word(toks[-2])):  # 'stories-search': search stories
            return toks[-1], toks[:-1]
        return None, toks
    after = toks[at + 1:]
    # 'projects-get-by-id', 'users-get-current': what follows says how, not what
    if after[0] in QUALIFIERS or all(t in _VAGUE_OBJECTS or t in MODIFIERS for t in after):
        return toks[at], toks[:at]
    return toks[at], after


def resolve_object(shape: ToolShape, known: set[str]) -> ToolShape:
    """Resolve a compound object against known entities: member_account -> member (generic
    tail), patient_appointment -> appointment with context patient, retire_copy -> verb retire
    + copy, child_loan -> loan (a modifier); get_project_status -> project_status where that
    is a record of its own (Asana's status updates of a project), not a project's status."""
    whole = singular("_".join([shape.obj or "", *shape.value_words]))
    if shape.obj and shape.value_words and whole in known:
        return ToolShape(shape.verb, whole, [], shape.read, shape.creates, shape.context)
    if not shape.obj or "_" not in shape.obj or shape.obj in known:
        return shape
    toks = shape.obj.split("_")
    head = singular("_".join(toks[:-1]))
    if shape.verb is None and toks[-1] == "search" and head in known:
        # Terraform's moduleSearch searches the modules: no 'module_searches' of its calls
        return ToolShape("search", head, shape.value_words, True, False, shape.context)
    for i in range(len(toks) - 1, 0, -1):
        head = singular("_".join(toks[:i]))
        if head in known and all(t in GENERIC_TAILS for t in toks[i:]):
            return ToolShape(shape.verb, head, shape.value_words, shape.read, shape.creates,
                             shape.context)
    for i in range(1, len(toks)):
        suffix = singular("_".join(toks[i:]))
        if suffix not in known:
            continue
        prefix = singular("_".join(toks[:i]))
        verb, context, creates = shape.verb, shape.context, shape.creates
        if prefix in known:
            context = context or prefix
        elif verb is None and i == 1:
            verb = toks[0]  # an unlisted verb: it acts on an existing record
            creates = False
        return ToolShape(verb, suffix, shape.value_words, shape.read, creates, context)
    return shape


# ---- arguments -----------------------------------------------------------------------------


@dataclass
class ArgRole:
    kind: str  # filter, ref, array, scalar
    entity: str | None = None
    role: str | None = None
    ident: str | None = None  # own-identifier column it names (name, path, sha, ...)
    via: str = "name"  # name, alias, description, numbered (vpc1: one of two vpcs)
    many: bool = False


# value nouns an id names as a record: a page_id is a browser tab's or a wiki's page, never a
# page of results
_ID_NAMED = frozenset({"page"})


def _entity_word(base: str, known: set[str], strong: bool) -> tuple[str | None, str | None]:
    """Map a word to (entity, identifier column via alias) if it names an entity."""
    if base in ALIASES:
        return ALIASES[base]
    s = singular(base)
    if s in CURATED:
        return s, None
    if s in known:
        return s, None
    if s in PERSON_ROLES or base in PERSON_ROLES:
        return "@person", None
    if strong and re.fullmatch(r"[a-z][a-z0-9_]*", s) and (s not in VALUE_NOUNS or s in _ID_NAMED):
        return s, None
    return None, None


_DESC_REF = re.compile(r"\b([a-z][a-z_ ]{1,30}?)\s+(sha|id|identifier|hash|name|key|path|"
                       r"number|uuid|slug)s?\b")


def known_suffix(toks: list[str], known: set[str]) -> tuple[str | None, str | None]:
    """('captain', 'employee') for ['captain', 'employee'] when employee is an entity."""
    for i in range(1, len(toks)):
        cand = singular("_".join(toks[i:]))
        if cand in known:
            return "_".join(toks[:i]), cand
    return None, None


# a bound on when ('created_before', 'updated_after', 'since'): a filter on a time column,
# which the coverage map finds (`coverage._RANGE`), not a column of its own
# a bound on the record's own ids is a page cursor (Backlog's minId/maxId, since_id), not a
# reference to a 'min' or 'max' record (mined as tables 'mins' and 'maxes')
_BOUND = re.compile(r"(^|_)(before|after|since|until)$|^date_(from|to)$|^(from|to)_date$|"
                    r"^(min|max|since|until|before|after)_id$")
# how to answer, not what a record holds ('include_headers', 'fetch_all_pages', 'confirm',
# OData's '$top' / '$skiptoken' / '$orderby'): options of the call, never columns
_OPTION = re.compile(r"^(?:include|exclude|with|fetch|return|skip|dry|force|verbose|opt|"
                     r"retry|ignore|disable|need|wait_for)_|_(?:timeout|timeout_ms|base_url)$|"
                     r"^(?:select|top|skip|skiptoken|orderby|order_by|sort|sort_by|confirm|force|"
                     r"expand|dry_run|verbose|debug|opts|jq|query_params|output_format|"
                     r"response_format|"
                     # how the call is made: its retries, time limit, connection, display
                     # units and a command router's help switch (Azure's learn)
                     r"timeout|timeout_ms|timeformat|cell_selection|learn|auth_method|"
                     r"connection_string|base_url|next_token|next_page_token|page_token|page_offset|"
                     r"page_cursor|page_num|page_no|page_number|page_index|output_options|limit_bytes|"
                     r"tail_lines|since_seconds|"
                     # how much of the answer to return ('max_chars' of a paper's LaTeX: was
                     # a column, and tasks asked for "the lowest number of max chars")
                     r"max_(?:chars|characters|tokens\w*|lines|bytes|errors|depth|node_depth|"
                     r"result_length|sections|steps)|"
                     r"(?:temperature|wind_speed|precipitation|length|distance|pressure)_unit|"
                     # a placeholder a server declares for a tool without arguments
                     r"no_param|random_string|placeholder|dummy|ignore|unused|"
                     # the order and shape of the answer (Discourse's asc, GitLab's unidiff)
                     r"asc|desc|sort_dir|sort_direction|sort_field|sort_order|order_direction|"
                     r"explain|"
                     # where a search looks, how fresh a read is, how much of a series an edit
                     # reaches (Apple Docs' searchIn, Microsoft Graph's ConsistencyLevel header,
                     # Google Calendar's modificationScope had been asked as fields)
                     r"search_in|consistency_level|modification_scope|"
                     r"unidiff|pagination|detail_level|resolve_aliases|split_by_mode|"
                     r"(?:color|date|time|number|export)_format)$|"
                     # a search over related records (Asana's assignee.any, followers.not):
                     # which records to match, not a field any record holds
                     r"^[a-z]\w*_(?:any|not)$")


# "Output mode: 'summary' or 'raw'": how the answer is shaped, whatever the argument's name;
# a command router's sub-command, its arguments and why it is called (Azure's `aks(command,
# parameters, intent)`); which of the user's accounts the call speaks for
_OPTION_SAID = re.compile(r"^\W*(?:(?:output|response|result|return|display) (?:mode|format|"
                          r"style|verbosity|detail)\b|the (?:command|parameters) to (?:execute|"
                          r"pass)\b.*\btool\b|the intent of\b|account (?:nickname|alias|email)"
                          r"(?:\(s\)|s)? to (?:use|query)\b|(?:alias|nickname|email) of the "
                          r"(?:\w+ )?account to (?:use|target|query)\b|"
                          # how much of a found record comes back, how a search matches, or
                          # a trial run: arXiv's compact ("If true, return arXiv IDs only")
                          # had become a column that every listing filtered on
                          r"if (?:true|set),? (?:returns? (?:the )?(?:complete|full|entire|raw|"
                          r"(?:\w+ )?ids? only|preview|effective)|only (?:validate|preview))\b|"
                          r"(?:which fields to search|search mode)\b|"
                          # the order, page and amount of detail of an answer, and its format
                          # (Airtable's detailLevel, Datadog's sort_dir, GitLab's unidiff had
                          # each become a column that the listing filtered on)
                          r"(?:detail level|level of detail|pagination method|page number|"
                          r"sort(?:ing)? (?:direction|field|order|ascending|descending)|"
                          r"field to sort|(?:the )?(?:direction|order) to sort|"
                          r"present\w* .*\bformat|\w+ value format|"
                          r"whether to (?:include|rerank|return|show|resolve|overwrite|"
                          r"autocorrect)|"
                          r"number of \w+ (?:per \w+ )?to include|"
                          r"(?:automatically )?resolve \w+ aliases|"
                          r"if provided, returns? only the (?:first|last) n|"
                          r"include (?!only\b)|hide\b|page size|"
                          r"(?:the )?maximum number of \w+(?: \(\w+\))? to (?:return|fetch)|"
                          r"(?:match|operation|facet) mode|mode:|mode for\b|"
                          r"output directory|file name to save|approximate response size|"
                          r"return only (?:this part|component counts|the match count)|"
                          r"follow logs|diff view type|"
                          # how the call is made, not what it finds or writes: NotebookLM's
                          # show_browser had become a column every audio listing filtered on
                          r"return all fields|returns? (?:summary )?statistics|"
                          r"show (?:the )?browser|run in headless|use user (?:access token|identity)|"
                          r"enable streaming|if true, block until|wait for the \w+ to|"
                          # how deep or how widely a search or crawl goes, where its answer is
                          # saved and how it is shaped (Apple Docs' searchDepth had become a
                          # column its similar-API listing filtered on)
                          r"how thoroughly to|(?:the|max(?:imum)?) depth of the|limit the depth|"
                          r"defines the degree of|save \w+ to a file|(?:optional )?response shape|"
                          r"how to handle existing|prefix prepended|whether to export|"
                          r"boost (?:search )?results|the format of the|"
                          r"(?:optional )?(?:region|language|country) code for (?:search )?"
                          r"results)\b)", re.I)
# a router's selector: which operation the one tool performs ('manageApps(action, ...)')
SELECTORS = frozenset({"action", "operation", "op", "subcommand", "sub_command"})
_SELECTOR_SAID = re.compile(r"^\W*(?:the )?(?:action|operation)s? to (?:perform|take|run|"
                            r"execute|do)\b", re.I)


def is_option(name: str, description: str = "", enum: list[Any] | None = None) -> bool:
    """Whether an argument (snake case) says how to answer, not what a record holds."""
    if name in SELECTORS:
        verbs = [v for v in enum or () if isinstance(v, str) and tokens(v)
                 and tokens(v)[0] in VERBS]
        return not description.strip() or bool(_SELECTOR_SAID.search(description)) or \
            2 * len(verbs) > len(enum or ())
    return bool(_OPTION.search(name) or _OPTION_SAID.search(description))


# kinds of identifier a name can say before its id word: the id of the record still
ID_KINDS = {"public", "external", "internal", "global", "unique"}


def classify_argument(info: dict[str, Any], known: set[str]) -> ArgRole:
    name = snake(info["argument"]) or "value"
    jtype = info["type"]
    items = info.get("items") or {}
    if name in ("parent_id", "parent"):
        return ArgRole("ref", entity="@self", role="parent")
    if name in FILTER_ARGS or re.fullmatch(r"(max|min)_(count|results|items|length|tokens)",
                                            name) or _BOUND.search(name) or \
            is_option(name, str(info.get("description") or ""), info.get("enum")):
        return ArgRole("filter")
    if name in ALIASES:
        ent, ident = ALIASES[name]
        return ArgRole("ref", entity=ent, ident=ident, via="alias")
    toks = name.split("_")
    role = None
    if len(toks) > 1 and toks[0] in ROLE_PREFIXES:
        role, toks = toks[0], toks[1:]
    if len(toks) > 2 and toks[-1] in ID_SUFFIXES and toks[-2] in ID_KINDS:
        toks = [*toks[:-2], toks[-1]]  # Shortcut's storyPublicId: a story's id
    last = toks[-1]
    if jtype == "array":
        if last in KEY_SUFFIXES and len(toks) > 1:
            ent, _ = _entity_word("_".join(toks[:-1]), known, True)
            if ent:
                return ArgRole("ref", entity=ent, role=role, via="name", many=True)
        ent, _ = _entity_word("_".join(toks), known, False)
        if ent and ent != "@person" and items.get("type") in ("integer", None):
            return ArgRole("ref", entity=ent, role=role, many=True)
        return ArgRole("array")
    if last in ID_SUFFIXES and len(toks) > 1:
        base = "_".join(toks[:-1])
        strong = last in KEY_SUFFIXES
        prefix, suffix_entity = known_suffix(toks[:-1], known)
        if suffix_entity and prefix:  # captain_employee_id -> employees, role "captain"
            return ArgRole("ref", entity=suffix_entity, role="_".join(filter(None, [
                role, prefix])), ident=None if last in KEY_SUFFIXES else last)
        if base in ("first", "last", "middle", "full", "display", "file", "nick", "given",
                    "family", "host", "domain", "user"):
            if base == "user" and last in ("id", "name"):
                return ArgRole("ref", entity="user", role=role,
                               ident=None if last == "id" else last)
            return ArgRole("scalar")
        ent, alias_ident = _entity_word(base, known, strong or base in ALIASES)
        if ent:
            ident = alias_ident or (None if last in KEY_SUFFIXES else last)
            return ArgRole("ref", entity=ent, role=role, ident=ident,
                           via="alias" if base in ALIASES else "name")
    whole = "_".join(toks)
    numbered = re.fullmatch(r"([a-z]+)[1-9]", whole)
    if numbered and jtype in ("string", "integer"):  # DigitalOcean's Vpc1: "ID of the first VPC"
        ent, _ = _entity_word(numbered.group(1), known, bool(
            re.search(r"\b(id|identifier)\b", str(info.get("description") or ""), re.I)))
        if ent and ent != "@person":
            return ArgRole("ref", entity=ent, role=role, via="numbered")
    if singular(whole) in CURATED or whole in ALIASES:
        ent, ident = _entity_word(whole, known, False)
        return ArgRole("ref", entity=ent, role=role, ident=ident, via="name")
    if role and singular(whole) in known:
        return ArgRole("ref", entity=singular(whole), role=role, ident="name", via="name")
    if info.get("enum") or jtype not in ("string", "integer"):
        return ArgRole("scalar")
    # "The commit sha that branch should contain" -> reference to commit, via the description
    for m in _DESC_REF.finditer(info.get("description", "").lower()):
        phrase = m.group(1).strip().split()
        for n in (2, 1):
            if len(phrase) >= n:
                cand = singular("_".join(phrase[-n:]))
                if cand in known or cand in ALIASES:
                    ent = ALIASES[cand][0] if cand in ALIASES else cand
                    return ArgRole("ref", entity=ent, via="description")
    return ArgRole("scalar")



# ---- column typing ---------------------------------------------------------------------------

_DATETIME_NAMES = re.compile(r"(^|_)(at|timestamp|datetime|time|start|end|starts|ends|"
                             r"begin|until|since|deadline|when)$")
_DATE_NAMES = re.compile(r"(^|_)(date|dob|birthday|day)$|^date_|_on$")
_BOOL_NAMES = re.compile(r"^(is|has|can|should|allow|enable|enabled|active|archived|"
                         r"verified|public|private|pinned|paid|done)(_|$)")
_INT_NAMES = re.compile(r"(^|_)(count|quantity|qty|number|num|age|year|minutes|seconds|"
                        r"hours|days|duration|capacity|stock|size|bytes|seats|rank|priority|"
                        r"position|lines|nights|guests|floor|level)$")
_REAL_NAMES = re.compile(r"(^|_)(price|amount|cost|total|balance|fee|salary|subtotal|tax|"
                         r"rate|latitude|longitude|lat|lng|lon|score|rating|weight|height|"
                         r"percent|percentage|discount|budget)$")


_ID_NUMBERS = re.compile(r"(^|_)(card|account|phone|order|invoice|tracking|serial|member|policy|"
                         r"license|licence|passport|reference|confirmation|record|ticket|"
                         r"registration|routing|case)_number$")


_WHOLE_NUMBERS = frozenset({"id", "idx", "index", "number", "count", "priority", "rank",
                            "year", "port", "status", "page", "position", "retries", "attempts",
                            "head", "tail", "lines", "limit", "depth",
                            # a return code, a replica count, a TTL in seconds (Coolify's
                            # health check return code had been 19.7, a job's replicas 4.0)
                            "code", "replicas", "ttl"})
_TIME_UNITS = frozenset({"minutes", "seconds", "days", "weeks", "months", "years"})


def column_type(name: str, jtype: str | None, fmt: str | None, desc: str = "") -> str:
    n = name.lower()
    d = desc.lower()
    if _ID_NUMBERS.search(n) and jtype in (None, "string"):
        return "text"  # an identifier written with digits, not a quantity
    if n in ("opening_hours", "business_hours", "hours_of_operation") and jtype in (None,
                                                                                 "string"):
        return "text"  # a schedule, not a number of hours
    if fmt in ("date-time", "datetime"):
        return "datetime"
    if fmt == "date":
        return "date"
    if jtype == "boolean":
        return "boolean"
    if jtype == "integer":
        return "integer"
    if jtype == "number":
        # an id, index, number or count declared as a JSON number counts things: page 17 and
        # pull request 60, not 17.39 and 60.62; so do whole units of time, ports, an HTTP
        # status and a position in a list (reminder minutes 65.87, status 132.64)
        words = n.split("_")
        return "integer" if words[-1] in FILE_PLACES or words[-1] in _WHOLE_NUMBERS or (
            _TIME_UNITS & set(words) and not any(_REAL_NAMES.search(w) for w in words)) else "real"
    if jtype in ("object", "array"):
        return "json"
    if "hh:mm" in d and "yyyy" not in d and "iso" not in d:
        return "text"
    if n == "at" and re.search(r"\b(?:cell|position|place|location|where)\b", d):
        return "text"  # Excel's copy_range(at='C3'): "Top-left destination cell."
    if _DATE_NAMES.search(n) and not n.endswith("_at"):
        return "date"
    if _DATETIME_NAMES.search(n) or "iso 8601" in d or "timestamp" in d:
        return "datetime"
    if jtype is None:
        if _BOOL_NAMES.search(n):
            return "boolean"
        if _REAL_NAMES.search(n):
            return "real"
        if _INT_NAMES.search(n):
            return "integer"
    return "text"
