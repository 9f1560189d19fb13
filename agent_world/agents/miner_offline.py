"""The miner's offline strategy: evidence-driven schema derivation and seeded data generation.

No LLM and no network: everything is derived from what the source document says (tool names,
argument schemas and descriptions, features, entity hints) plus optional web-search snippets.
The same functions serve the LLM path for filling volumes (see `RowFactory`).

Algorithm
=========

1. **Evidence** (`collect_evidence`). One record per tool (name, read-only flag, argument list),
   per tool argument (JSON type and format seen through anyOf/nullable, enum — from the schema,
   or from quoted lower-case values in the description unless they are examples ("e.g.") —,
   required flag, item schema; request-body objects are flattened), per feature sentence, per
   entity hint, plus up to 3 web snippets per question from `search(question)` when configured
   (a failing search is recorded, not raised). Each record is linked to the research question
   it shares most words with.

2. **Entities** (`derive_model`), singular snake_case names; tables are their plurals:
   a. entity hints (PRD entities, OpenAPI components) give entities and fields directly
      (request/response/error schemas such as ``AppointmentRequest`` or ``Error`` are skipped);
      a PRD without hints is mined sentence by sentence: known nouns (order, project, ...),
      objects of verbs ("upload models" -> model) and the person subject that owns them;
   b. a tool name is split (snake/camel/REST path) into an optional verb, an object phrase and
      a context after a qualifier (``list_appointments_by_doctor``): the namespace prefix shared
      by the tools (``git_``) is dropped, modifiers (``current``, ``staged``) and id words are
      removed; phrasal verbs (``checkInAppointment``) are kept whole; trailing *value nouns*
      (time, status, diff, log, balance, ...) are no entity; a noun-verb alone (``git_commit``,
      ``transfer``) is one; a compound is resolved against known entities
      (``listPatientAppointments`` -> appointment in the context of a patient, ``retire_copy``
      -> an unlisted verb on copy, ``suspend_member_account`` -> member); an argument-less
      read of an unknown noun (``search_catalogue``, ``read_graph``) is a view, not an entity;
   c. identifier-like arguments name entities: ``X_id`` always, ``X_path``/``X_name``/``X_key``/
      ``X_code``/``X_slug`` when X is a known entity or alias (``repo_path`` -> repository,
      ``revision`` -> commit.sha), a known entity after a role prefix (``captain_employee_id``,
      ``source_timezone``), reference nouns (timezone, currency, country, language), person
      roles (``assignee_id``, ``owner_id``, ``lead_id`` -> the person entity), and descriptions
      that say ``"<entity> sha|id|name|..."``.
3. **Primary entity of a tool**: its object noun; else, for transform verbs (convert, fetch,
   send, ...), an *activity* entity named value noun + nominalised verb (``convert_time`` ->
   time_conversion) recording each call; else the last entity-referencing argument. The
   qualifier context becomes a parent (``reply_to_thread`` -> replies.thread_id); a value noun
   read from a referenced entity becomes its attribute (``get_balance(account_id)`` ->
   accounts.balance).
4. **Fields and relations** on the primary entity: a reference to another entity becomes a
   foreign key ``<role>_<entity>_id`` (NOT NULL when a creating tool requires it), a reference
   to itself with a role a nullable self-FK (``base_branch`` -> branches.base_branch_id), its own
   identifier a unique column (``repo_path`` -> repositories.path, ``branch_name`` ->
   branches.name unique per repository); an argument named like the entity is its content
   (``write_query(query)``); arrays of ids and description-detected references become join
   tables (many-to-many), arrays of scalars/objects child tables (``attendees[]`` ->
   event_attendees), an array of the entity itself (``create_entities(entities=[...])``) its
   columns; scalar arguments become typed columns (JSON type + format + name semantics) when a
   tool writes them or reads its own object by them (``listDoctors(specialty)``), never for
   derived views (``git_diff(target)``), filters (limit, max_count, cursor, ...) or ranges
   (start_*, since). An FK that would close a cycle becomes a join table instead. Entity-hint
   fields ``X_id`` become FKs the same way. Feature sentences add what their verbs imply
   (comment -> E_comments, attach/upload -> E_attachments, invite -> E_members, review ->
   E_reviews, assign -> E.assignee_id, tag -> E_tags).
5. **States**: enums of ``status``/``state`` arguments, state verbs of tools and features
   (cancel -> cancelled, archive -> archived, check_out -> checked_out, "suspend a member"),
   and state words attributed to the entity they are said of (the noun right after an
   adjective, else the nearest preceding mention, else the sentence's only entity; a lifecycle
   sentence naming several wins) give a ``status`` CHECK enum with the initial state first
   (``active`` when none was named); a status field with no known values gets
   active/inactive/archived.
6. **Completion**: every table gets an integer ``id``; person entities name + unique email;
   root entities without a label column get ``name``; core entities created_at (+ updated_at
   when written), activity records created_at, joins created_at; reference entities use curated
   real-world values (IANA time zones with offsets, ISO currencies, countries, languages).
7. **Rows** (`RowFactory`): seeded Faker + `random.Random`, tables in FK order, values by column
   semantics (names, emails derived from them, phone numbers, URLs, file paths with a matching
   MIME type, SHAs, commit messages, money, HH:MM times, IANA zones, ...), temporal consistency
   (child created after parent, end after start, updated after created), uniqueness (columns
   and unique_together) and enums respected. Volumes by role: roots 15-20, children ~3 per
   parent, activity logs 40, joins ~1.5x, reference tables their curated size.

Complexification (`complexify_offline`) applies, per iteration, two structural operations from
a rotating schedule (actors: a users table and an ownership FK; audit history; tags
many-to-many; status lifecycle; lookup table extracted from a low-cardinality column, or a
self-referencing category tree; notes/attachments child records), each on the most central
drafted table it has not been applied to; then grows every table by ~30% with Zipf-skewed
parent popularity (weight 1/rank^1.1 over a seeded ranking), and adds edge cases: rows with
every nullable column NULL, duplicate-by-name rows with new ids, terminal states (cancelled/
expired/archived widen the status enum), boundary dates (leap day, year end, the episode clock
start). History entries record real old -> new values.
"""

from __future__ import annotations

import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal

from faker import Faker
from pydantic import BaseModel, Field

from agent_world.envs.spec import ColumnSpec, EnvSpec, TableSpec
from agent_world.tools.sources.base import SourceDocument, ToolDescription

# ============================================================================================
# Evidence
# ============================================================================================

EvidenceKind = Literal["source", "tool", "argument", "entity", "feature", "web"]
SearchFn = Callable[[str], list[str]]


class Evidence(BaseModel):
    """One fact the miner found, where it came from, and the research question it bears on."""

    kind: EvidenceKind
    ref: str  # "tool:git_commit", "arg:git_commit.message", "feature:2", "web:<query>#0"
    text: str
    question: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)


# ============================================================================================
# Lexicons
# ============================================================================================

VERBS = {
    "get", "list", "create", "update", "delete", "remove", "add", "set", "search", "find",
    "fetch", "read", "write", "show", "convert", "book", "cancel", "schedule", "send", "make",
    "new", "edit", "modify", "patch", "put", "query", "lookup", "retrieve", "check", "run",
    "execute", "start", "stop", "open", "close", "archive", "publish", "approve", "reject",
    "complete", "confirm", "assign", "submit", "upload", "download", "move", "copy", "rename",
    "reset", "checkout", "merge", "pay", "refund", "ship", "register", "subscribe",
    "unsubscribe", "invite", "reschedule", "count", "describe", "view", "browse", "calculate",
    "compute", "generate", "translate", "export", "import", "sync", "enable", "disable", "lock",
    "unlock", "resolve", "mark", "track", "apply", "validate", "verify", "insert", "upsert",
    "save", "load", "analyze", "summarize", "transcribe", "render", "scrape", "evaluate",
    "navigate", "click", "fill", "select", "take", "clear", "push", "pull", "clone", "post",
    "reply", "forward", "like", "follow", "unfollow", "share", "rate", "return", "transfer",
    "withdraw", "deposit", "refresh", "restore", "duplicate", "attach", "detach", "link",
    "unlink", "invoke", "call", "read_only", "release", "deploy", "build", "test", "install",
    "append", "log", "record", "create_or_update", "order", "buy", "sell", "rent", "plan",
    "manage", "organize", "print", "retire", "renew", "place", "waive", "suspend", "reactivate",
    "reserve", "borrow", "lend", "collect", "receive", "scan", "expire", "revoke", "check_in", "check_out", "sign_in", "sign_up", "log_in", "log_out", "opt_in", "opt_out",
    "roll_back", "set_up", "clean_up", "look_up", "pick_up", "drop_off",
}
PHRASAL_VERBS = {"check_in", "check_out", "sign_in", "sign_up", "log_in", "log_out", "opt_in",
                 "opt_out", "roll_back", "set_up", "clean_up", "look_up", "pick_up", "drop_off"}
GENERIC_TAILS = {"account", "profile", "record", "details", "entry", "info", "data"}
DTO_WORDS = {"error", "errors", "problem", "exception", "request", "response", "input",
             "output", "payload", "body", "envelope", "dto", "params", "parameters"}
NOUN_VERBS = {"commit", "comment", "review", "message", "post", "order", "note", "bookmark",
              "tag", "label", "vote", "tweet", "reply", "transfer", "deposit", "return"}
READ_VERBS = {"get", "list", "search", "find", "fetch", "read", "show", "query", "lookup",
              "retrieve", "check", "count", "describe", "view", "browse", "export", "download",
              "scrape", "navigate", "look_up", "scan"}
CREATE_VERBS = {"create", "add", "new", "book", "schedule", "register", "insert", "upsert",
                "make", "submit", "upload", "send", "invite", "post", "save", "write", "open",
                "import", "clone", "attach", "deploy", "build", "append", "record", "log"}
TRANSFORM_VERBS = {
    "convert": "conversion", "translate": "translation", "calculate": "calculation",
    "compute": "computation", "fetch": "fetch", "search": "search", "run": "run",
    "execute": "execution", "send": "delivery", "generate": "generation",
    "evaluate": "evaluation", "analyze": "analysis", "summarize": "summary",
    "transcribe": "transcription", "render": "render", "scrape": "scrape", "query": "query",
    "invoke": "invocation", "call": "call", "download": "download", "export": "export",
    "navigate": "navigation", "transfer": "transfer",
}
STATE_VERBS = {
    "cancel": "cancelled", "archive": "archived", "close": "closed", "publish": "published",
    "approve": "approved", "reject": "rejected", "complete": "completed", "confirm": "confirmed",
    "checkout": "checked_out", "merge": "merged", "resolve": "resolved", "assign": "assigned",
    "start": "started", "stop": "stopped", "submit": "submitted", "ship": "shipped",
    "pay": "paid", "refund": "refunded", "reschedule": "rescheduled", "lock": "locked",
    "unlock": "unlocked", "enable": "enabled", "disable": "disabled", "release": "released",
    "deploy": "deployed", "book": "booked", "open": "open", "retire": "retired",
    "renew": "renewed", "suspend": "suspended", "waive": "waived", "reactivate": "active",
    "reserve": "reserved", "borrow": "borrowed", "collect": "collected", "receive": "received",
    "return": "returned", "expire": "expired", "revoke": "revoked", "check_in": "checked_in",
    "check_out": "checked_out", "pick_up": "picked_up", "roll_back": "rolled_back",
}
STATE_WORDS = [
    "draft", "pending", "scheduled", "booked", "todo", "open", "new", "active", "confirmed",
    "in_progress", "in_review", "review", "assigned", "started", "running", "queued", "paused",
    "blocked", "on_hold", "submitted", "approved", "rejected", "published", "shipped",
    "delivered", "paid", "unpaid", "refunded", "completed", "done", "resolved", "closed",
    "merged", "checked_out", "checked_in", "cancelled", "canceled", "failed", "succeeded",
    "expired", "waiting", "ready", "collected", "in_transit", "on_loan", "retired", "waived",
    "suspended", "renewed", "returned", "borrowed", "reserved",
    "archived", "inactive", "suspended", "deleted", "no_show", "overdue", "released",
    "deployed", "locked", "enabled", "disabled", "available", "unavailable", "sold_out",
]
_STATE_SET = set(STATE_WORDS)
TERMINAL_FOR = [  # (if any of these states exist, add this terminal state)
    ({"scheduled", "confirmed", "booked", "pending", "submitted", "queued"}, "cancelled"),
    ({"active", "available", "enabled", "published"}, "expired"),
    ({"active", "open", "todo", "in_progress", "draft", "new", "done", "completed"}, "archived"),
]
MODIFIERS = {"current", "all", "new", "existing", "my", "staged", "unstaged", "latest",
             "recent", "details", "detail", "info", "single", "many", "multiple", "batch",
             "bulk", "one", "the", "a", "an", "full", "raw", "local", "remote", "specific",
             "available", "v1", "v2", "v3", "api"}
QUALIFIERS = {"by", "for", "with", "from", "to", "in", "of", "on", "at", "and", "or", "via",
              "into", "as"}
ID_WORDS = {"id", "ids", "uuid", "guid", "key", "pk"}
VALUE_ATTRS = {"balance": "real", "price": "real", "score": "real", "rating": "real",
               "total": "real", "quota": "integer", "usage": "real"}
VALUE_NOUNS = {"balance", "price", "score", "rating", "total", "quota", "usage",
               "time", "status", "diff", "log", "logs", "content", "contents", "summary",
               "stats", "statistics", "health", "version", "result", "results", "data", "text",
               "help", "count", "value", "values", "state", "overview", "report", "metadata",
               "config", "settings", "date", "now", "history", "changes", "output", "tree",
               "info", "url", "web", "page", "html", "markdown", "json", "response"}
ID_SUFFIXES = {"id", "ids", "path", "name", "key", "code", "slug", "uuid", "sha", "number",
               "handle", "email", "url", "uri"}
ROLE_PREFIXES = {"source", "target", "src", "dst", "dest", "destination", "from", "to",
                 "parent", "base", "head", "new", "old", "default", "primary", "secondary",
                 "origin", "home", "main", "related", "original", "previous", "next", "other"}
FILTER_ARGS = {"limit", "max_count", "offset", "page", "page_size", "per_page", "cursor",
               "sort", "sort_by", "order", "order_by", "q", "query", "max_results", "top_k",
               "context_lines", "start_index", "max_length", "raw", "format", "fields",
               "include", "expand", "verbose", "dry_run", "page_token", "skip", "count",
               "filter", "direction", "ascending", "descending",
               "recursive", "depth", "timeout"}
FILTER_ENUM_DROP = {"all", "any", "both", "none", "asc", "desc", "*"}
ALIASES: dict[str, tuple[str, str | None]] = {  # word -> (entity, identifier column it names)
    "repo": ("repository", None), "repos": ("repository", None),
    "tz": ("timezone", None), "time_zone": ("timezone", None), "zone": ("timezone", None),
    "revision": ("commit", "sha"), "rev": ("commit", "sha"), "commit_sha": ("commit", "sha"),
    "org": ("organization", None), "msg": ("message", None), "doc": ("document", None),
    "dir": ("directory", None), "folder": ("directory", None), "cal": ("calendar", None),
    "pr": ("pull_request", None), "img": ("image", None), "acct": ("account", None),
    "txn": ("transaction", None), "locale": ("language", "code"), "lang": ("language", "code"),
    "currency_code": ("currency", "code"), "country_code": ("country", "code"),
}
PERSON_NOUNS = {
    "user", "customer", "patient", "doctor", "physician", "employee", "member", "author",
    "attendee", "participant", "student", "teacher", "instructor", "guest", "passenger",
    "driver", "owner", "assignee", "reviewer", "contact", "person", "client", "staff", "agent",
    "seller", "buyer", "host", "speaker", "artist", "player", "candidate", "applicant",
    "tenant", "landlord", "nurse", "manager", "subscriber", "follower", "friend", "traveler",
    "volunteer", "account_holder", "recipient", "sender", "organizer", "reporter", "creator",
    "approver", "therapist", "dentist", "pharmacist", "coach", "trainer", "learner", "vendor",
    "clinician", "practitioner", "librarian", "caregiver", "guardian", "surgeon",
}
PERSON_ROLES = {"assignee", "owner", "author", "reviewer", "creator", "reporter", "organizer",
                "lead", "manager", "supervisor", "captain", "mentor", "approver", "requester",
                "host", "sender", "recipient", "updated_by",
                "created_by", "assigned_to"}
COMMON_ENTITIES = {
    "user", "customer", "order", "product", "item", "project", "task", "issue", "ticket",
    "invoice", "payment", "account", "transaction", "event", "calendar", "meeting", "booking",
    "reservation", "appointment", "flight", "hotel", "room", "trip", "document", "file",
    "folder", "note", "comment", "message", "channel", "team", "organization", "company",
    "repository", "branch", "commit", "pull_request", "course", "lesson", "enrollment",
    "recipe", "ingredient", "playlist", "song", "album", "movie", "venue", "page",
    "post", "article", "category", "tag", "list", "board", "card", "sprint", "release",
    "deployment", "server", "cluster", "container", "image", "bucket", "table", "dataset",
    "model", "pipeline", "job", "workflow", "subscription", "plan", "cart", "review", "coupon",
    "shipment", "warehouse", "store", "location", "address", "contact", "lead", "deal",
    "campaign", "email", "thread", "doctor", "patient", "prescription", "medication",
    "vehicle", "route", "stop", "driver", "ride", "entity", "relation", "observation", "node",
    "memory", "record", "form", "survey", "question", "answer", "quiz", "grade", "student",
}
FILE_WORDS = {"file", "files", "path", "paths", "filename", "attachment"}

WINDOW_START = datetime(2023, 1, 1, 8, 0, 0)


# ============================================================================================
# Words
# ============================================================================================

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_IRREGULAR = {"person": "people", "child": "children", "man": "men", "woman": "women",
              "analysis": "analyses", "criterion": "criteria", "diagnosis": "diagnoses",
              "mouse": "mice", "foot": "feet", "tooth": "teeth", "medium": "media"}
_IRREGULAR_INV = {v: k for k, v in _IRREGULAR.items()}
_SINGULAR_EXCEPTIONS = {"statuses": "status", "buses": "bus", "campuses": "campus",
                        "aliases": "alias", "viruses": "virus", "caches": "cache",
                        "movies": "movie", "cookies": "cookie", "species": "species",
                        "series": "series", "news": "news", "indices": "index",
                        "analyses": "analysis", "diagnoses": "diagnosis", "lives": "life",
                        "knives": "knife", "leaves": "leaf", "heroes": "hero",
                        "potatoes": "potato", "tomatoes": "tomato", "quizzes": "quiz",
                        "gas": "gas", "canvas": "canvas", "atlas": "atlas"}
_UNCOUNTABLE = {"history", "data", "information", "metadata", "news", "equipment", "feedback",
                "software", "staff", "inventory", "media", "audit", "weather", "music",
                "research", "mail", "traffic", "health", "analytics", "species", "series"}


def tokens(name: str) -> list[str]:
    """'createAppointment' / 'git_create_branch' / 'GET /a/{b}' -> lower-case word tokens."""
    spaced = _CAMEL.sub("_", name)
    return [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]


def snake(name: str) -> str:
    return "_".join(tokens(name))


def _singular_word(word: str) -> str:
    if word in _SINGULAR_EXCEPTIONS:
        return _SINGULAR_EXCEPTIONS[word]
    if word in _UNCOUNTABLE or len(word) <= 3:
        return word
    if word in _IRREGULAR_INV:
        return _IRREGULAR_INV[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _plural_word(word: str) -> str:
    if word in _UNCOUNTABLE:
        return word
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def singular(name: str) -> str:
    parts = snake(name).split("_")
    return "_".join([*parts[:-1], _singular_word(parts[-1])]) if parts else name


def plural(name: str) -> str:
    parts = snake(name).split("_")
    return "_".join([*parts[:-1], _plural_word(parts[-1])]) if parts else name


def identifier(name: str, fallback: str = "env") -> str:
    """A valid EnvSpec identifier from any string."""
    s = snake(name) or fallback
    if s[0].isdigit():
        s = f"{fallback}_{s}"
    import keyword

    if keyword.iskeyword(s):
        s += "_"
    return s[:63]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?;\n])\s+|\n", text) if s.strip()]


def _word_set(text: str) -> set[str]:
    return {_singular_word(t) for t in tokens(text) if len(t) > 2}


# ============================================================================================
# 1. Evidence
# ============================================================================================

_BODY_KEYS = {"body", "requestbody", "request_body", "payload", "data", "json", "input"}
_QUOTED = re.compile(r"['\"`]([A-Za-z0-9_\-]+)['\"`]")


def tool_arguments(tool: ToolDescription) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """A tool's arguments (flattening a request-body object) and the required ones."""
    schema = tool.input_schema or {}
    props = dict(schema.get("properties") or {})
    required = set(schema.get("required") or [])
    for key in list(props):
        sub = props[key]
        if (key.lower() in _BODY_KEYS and isinstance(sub, dict) and sub.get("type") == "object"
                and sub.get("properties")):
            props.pop(key)
            for k, v in sub["properties"].items():
                props.setdefault(k, v)
            required |= set(sub.get("required") or [])
    return props, required


def _json_type(prop: dict[str, Any]) -> tuple[str, str | None, dict[str, Any]]:
    """(type, format, the schema branch it came from), looking through anyOf/oneOf/nullable."""
    if not isinstance(prop, dict):
        return "string", None, {}
    t = prop.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    if t is None:
        for key in ("anyOf", "oneOf", "allOf"):
            for branch in prop.get(key) or []:
                if isinstance(branch, dict) and branch.get("type") not in (None, "null"):
                    bt, bf, bb = _json_type(branch)
                    return bt, prop.get("format") or bf, bb
        t = "string"
    return str(t), prop.get("format"), prop


def argument_info(name: str, prop: dict[str, Any], required: bool) -> dict[str, Any]:
    jtype, fmt, branch = _json_type(prop)
    desc = str(prop.get("description") or prop.get("title") or "")
    enum = prop.get("enum") or branch.get("enum")
    enum_from = "schema" if enum else None
    if not enum and desc:
        quoted = _QUOTED.findall(desc)
        lowered = desc.lower()
        examples = any(w in lowered for w in ("e.g", "for example", "such as", "like '"))
        if (len(set(quoted)) >= 2 and not examples
                and all(re.fullmatch(r"[a-z][a-z0-9_]*", q) for q in quoted)):
            enum, enum_from = list(dict.fromkeys(quoted)), "description"
    items = prop.get("items") if isinstance(prop.get("items"), dict) else None
    return {
        "argument": name, "type": jtype, "format": fmt,
        "enum": [str(e) for e in enum] if enum else None, "enum_from": enum_from,
        "required": required, "description": desc,
        "items": ({"type": _json_type(items)[0], "format": _json_type(items)[1],
                   "properties": items.get("properties") or {}} if items else None),
    }


def _best_question(text: str, questions: list[str]) -> str | None:
    if not questions:
        return None
    words = _word_set(text)
    scored = [(len(words & _word_set(q)), -i, q) for i, q in enumerate(questions)]
    best = max(scored)
    return best[2] if best[0] > 0 else None


def collect_evidence(doc: SourceDocument, questions: list[str], search: SearchFn | None = None,
                     *, max_web_queries: int = 6, max_web_results: int = 3) -> list[Evidence]:
    """Evidence from the source itself and, when `search` is given, from web snippets."""
    ev: list[Evidence] = []
    if doc.title or doc.description:
        ev.append(Evidence(kind="source", ref=f"source:{doc.name}",
                           text=" - ".join(p for p in (doc.title, doc.description) if p),
                           data={"name": doc.name, "kind": doc.kind}))
    for tool in doc.tools:
        props, required = tool_arguments(tool)
        sig = ", ".join(f"{a}{'' if a in required else '?'}" for a in props)
        ev.append(Evidence(kind="tool", ref=f"tool:{tool.name}",
                           text=f"{tool.name}({sig}): {tool.description}".strip(),
                           data={"tool": tool.name, "read_only": tool.read_only,
                                 "arguments": list(props), "required": sorted(required),
                                 "description": tool.description, "tags": list(tool.tags)}))
        for arg, prop in props.items():
            info = argument_info(arg, prop if isinstance(prop, dict) else {}, arg in required)
            bits = [info["type"]] + ([f"format={info['format']}"] if info["format"] else [])
            if info["enum"]:
                bits.append("one of " + "|".join(info["enum"]))
            ev.append(Evidence(kind="argument", ref=f"arg:{tool.name}.{arg}",
                               text=f"{tool.name}.{arg} ({', '.join(bits)}"
                                    f"{', required' if info['required'] else ''}): "
                                    f"{info['description']}".strip(),
                               data={"tool": tool.name, "read_only": tool.read_only, **info}))
    for i, feat in enumerate(doc.features):
        ev.append(Evidence(kind="feature", ref=f"feature:{i}", text=feat))
    for hint in doc.entities:
        ev.append(Evidence(kind="entity", ref=f"entity:{hint.name}",
                           text=f"{hint.name}: {', '.join(hint.fields)} {hint.description}".strip(),
                           data={"name": hint.name, "fields": list(hint.fields),
                                 "description": hint.description}))
    if search is not None:
        for q in questions[:max_web_queries]:
            try:
                results = list(search(q) or [])
            except Exception as exc:  # a flaky search backend must not stop mining
                ev.append(Evidence(kind="web", ref=f"web:{q}", text=f"search failed: {exc}",
                                   question=q, data={"error": True}))
                continue
            for j, r in enumerate(results[:max_web_results]):
                ev.append(Evidence(kind="web", ref=f"web:{q}#{j}", text=str(r)[:2000],
                                   question=q))
    for e in ev:
        if e.question is None:
            e.question = _best_question(e.text, questions)
    return ev


# ============================================================================================
# 2-6. Domain model
# ============================================================================================


@dataclass
class _Col:
    name: str
    type: str = "text"
    nullable: bool = True
    unique: bool = False
    enum: list[str] | None = None
    fk: str | None = None  # target entity
    description: str = ""


@dataclass
class _Entity:
    name: str
    kind: str  # core, reference, activity, child, join
    cols: dict[str, _Col] = field(default_factory=dict)
    states: list[str] = field(default_factory=list)
    unique_together: list[list[str]] = field(default_factory=list)
    description: str = ""
    written: bool = False  # some tool changes it
    wants_status: bool = False  # a status field without known values
    from_hint: bool = False  # documented by an entity hint (its fields are authoritative)

    def add(self, col: _Col) -> _Col:
        have = self.cols.get(col.name)
        if have is None:
            self.cols[col.name] = col
            return col
        have.nullable = have.nullable and col.nullable
        have.unique = have.unique or col.unique
        if col.enum:
            have.enum = list(dict.fromkeys((have.enum or []) + col.enum))
        if col.fk and not have.fk:
            have.fk, have.type = col.fk, "integer"
        have.description = have.description or col.description
        return have

    def parents(self) -> list[str]:
        return [c.fk for c in self.cols.values() if c.fk and c.fk != self.name]


@dataclass
class DomainModel:
    entities: dict[str, _Entity] = field(default_factory=dict)

    def ensure(self, name: str, kind: str = "core", description: str = "") -> _Entity:
        name = identifier(singular(name), "entity")
        ent = self.entities.get(name)
        if ent is None:
            if name in CURATED and kind == "core":
                kind = "reference"
            ent = self.entities[name] = _Entity(name=name, kind=kind, description=description)
        elif description and not ent.description:
            ent.description = description
        return ent

    def person(self) -> _Entity:
        for e in self.entities.values():
            if is_person(e.name):
                return e
        return self.ensure("user", "core", "people using the system")

    def reaches(self, start: str, goal: str) -> bool:
        seen, stack = set(), [start]
        while stack:
            cur = stack.pop()
            if cur == goal:
                return True
            if cur in seen or cur not in self.entities:
                continue
            seen.add(cur)
            stack.extend(self.entities[cur].parents())
        return False

    def link(self, child: _Entity, col: str, parent: str, required: bool,
             description: str = "") -> None:
        """child.col -> parent.id, or a join table if that FK would close a cycle."""
        if parent != child.name and self.reaches(parent, child.name):
            self.join(child.name, parent)
            return
        child.add(_Col(col, "integer", nullable=not required or parent == child.name,
                       fk=parent, description=description))

    def raw(self, name: str, kind: str, description: str = "") -> _Entity:
        """An entity whose name is used as is (join and child tables)."""
        name = identifier(name, "t")
        if name not in self.entities:
            self.entities[name] = _Entity(name=name, kind=kind, description=description)
        return self.entities[name]

    def join(self, a: str, b: str) -> _Entity:
        a, b = singular(a), singular(b)
        if f"{b}_{plural(a)}" in self.entities:
            return self.entities[f"{b}_{plural(a)}"]
        ent = self.raw(f"{a}_{plural(b)}", "join", f"which {plural(b)} each {a} relates to")
        other = f"related_{b}_id" if a == b else f"{b}_id"
        ent.add(_Col(f"{a}_id", "integer", nullable=False, fk=a))
        ent.add(_Col(other, "integer", nullable=False, fk=b))
        if [f"{a}_id", other] not in ent.unique_together:
            ent.unique_together.append([f"{a}_id", other])
        return ent


def is_person(name: str) -> bool:
    return singular(name).split("_")[-1] in PERSON_NOUNS


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


def tool_shape(name: str, read_only: bool | None, ns: str | None) -> ToolShape:
    verb: str | None = None
    if "/" in name:  # REST style: "GET /patients/{patient_id}/appointments"
        method, _, path = name.strip().partition(" ")
        segs = [s for s in path.split("/") if s and not s.startswith("{") and not s.startswith(":")]
        m = method.lower()
        verb = {"get": "get", "post": "create", "put": "update", "patch": "update",
                "delete": "delete"}.get(m)
        words = tokens(segs[-1]) if segs else []
        toks = words
    else:
        toks = tokens(name)
        if ns and len(toks) > 1 and toks[0] == ns:
            toks = toks[1:]
        if len(toks) > 1 and f"{toks[0]}_{toks[1]}" in PHRASAL_VERBS:  # checkInAppointment
            toks = [f"{toks[0]}_{toks[1]}", *toks[2:]]
        if toks and toks[0] in NOUN_VERBS and len(toks) == 1:
            pass
        elif toks and toks[0] in VERBS:
            verb, toks = toks[0], toks[1:]
    words: list[str] = []
    context = None
    for i, t in enumerate(toks):
        if t in QUALIFIERS:
            rest = [x for x in toks[i + 1:] if x not in ID_WORDS and x not in MODIFIERS
                    and x not in QUALIFIERS]
            context = _singular_word(rest[0]) if rest else None
            break
        if t in ID_WORDS or t in MODIFIERS:
            continue
        words.append(t)
    words = words[:4]
    if not words and verb in NOUN_VERBS and context:  # reply_to_thread: a reply on a thread
        words = [verb]
    value_words: list[str] = []
    while words and (_singular_word(words[-1]) in VALUE_NOUNS or words[-1] in VALUE_NOUNS):
        value_words.insert(0, words.pop())
    obj = None
    if words:
        obj = "_".join([*words[:-1], _singular_word(words[-1])])
    read = bool(read_only) if read_only is not None else (verb in READ_VERBS if verb else False)
    if read_only is None and verb is None and obj is None:
        read = True
    creates = (not read) and (verb in CREATE_VERBS or verb is None or verb in NOUN_VERBS)
    if context in VALUE_NOUNS or context == obj:
        context = None
    return ToolShape(verb, obj, value_words, read, creates, context)


@dataclass
class ArgRole:
    kind: str  # filter, ref, array, scalar
    entity: str | None = None
    role: str | None = None
    ident: str | None = None  # own-identifier column it names (name, path, sha, ...)
    via: str = "name"  # name, alias, description
    many: bool = False


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
    if strong and re.fullmatch(r"[a-z][a-z0-9_]*", s) and s not in VALUE_NOUNS:
        return s, None
    return None, None


_DESC_REF = re.compile(r"\b([a-z][a-z_ ]{1,30}?)\s+(sha|id|identifier|hash|name|key|path|"
                       r"number|uuid|slug)s?\b")


def _known_suffix(toks: list[str], known: set[str]) -> tuple[str | None, str | None]:
    """('captain', 'employee') for ['captain', 'employee'] when employee is an entity."""
    for i in range(1, len(toks)):
        cand = singular("_".join(toks[i:]))
        if cand in known:
            return "_".join(toks[:i]), cand
    return None, None


def classify_argument(info: dict[str, Any], known: set[str]) -> ArgRole:
    name = snake(info["argument"]) or "value"
    jtype = info["type"]
    items = info.get("items") or {}
    if name in ("parent_id", "parent"):
        return ArgRole("ref", entity="@self", role="parent")
    if name in FILTER_ARGS or re.fullmatch(r"(max|min)_(count|results|items|length|tokens)",
                                            name):
        return ArgRole("filter")
    if name in ALIASES:
        ent, ident = ALIASES[name]
        return ArgRole("ref", entity=ent, ident=ident, via="alias")
    toks = name.split("_")
    role = None
    if len(toks) > 1 and toks[0] in ROLE_PREFIXES:
        role, toks = toks[0], toks[1:]
    last = toks[-1]
    if jtype == "array":
        if last in ("ids", "id") and len(toks) > 1:
            ent, _ = _entity_word("_".join(toks[:-1]), known, True)
            if ent:
                return ArgRole("ref", entity=ent, role=role, via="name", many=True)
        ent, _ = _entity_word("_".join(toks), known, False)
        if ent and ent != "@person" and items.get("type") in ("integer", None):
            return ArgRole("ref", entity=ent, role=role, many=True)
        return ArgRole("array")
    if last in ID_SUFFIXES and len(toks) > 1:
        base = "_".join(toks[:-1])
        strong = last in ("id", "ids", "uuid")
        prefix, suffix_entity = _known_suffix(toks[:-1], known)
        if suffix_entity and prefix:  # captain_employee_id -> employees, role "captain"
            return ArgRole("ref", entity=suffix_entity, role="_".join(filter(None, [
                role, prefix])), ident=None if last in ("id", "ids", "uuid") else last)
        if base in ("first", "last", "middle", "full", "display", "file", "nick", "given",
                    "family", "host", "domain", "user"):
            if base == "user" and last in ("id", "name"):
                return ArgRole("ref", entity="user", role=role,
                               ident=None if last == "id" else last)
            return ArgRole("scalar")
        ent, alias_ident = _entity_word(base, known, strong or base in ALIASES)
        if ent:
            ident = alias_ident or (None if last in ("id", "ids", "uuid") else last)
            return ArgRole("ref", entity=ent, role=role, ident=ident,
                           via="alias" if base in ALIASES else "name")
    whole = "_".join(toks)
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
_DATE_NAMES = re.compile(r"(^|_)(date|dob|birthday|day)$|^date_")
_BOOL_NAMES = re.compile(r"^(is|has|can|should|allow|enable|enabled|active|archived|"
                         r"verified|public|private|pinned|paid|done)(_|$)")
_INT_NAMES = re.compile(r"(^|_)(count|quantity|qty|number|num|age|year|minutes|seconds|"
                        r"hours|days|duration|capacity|stock|size|bytes|seats|rank|priority|"
                        r"position|lines|nights|guests|floor|level)$")
_REAL_NAMES = re.compile(r"(^|_)(price|amount|cost|total|balance|fee|salary|subtotal|tax|"
                         r"rate|latitude|longitude|lat|lng|lon|score|rating|weight|height|"
                         r"percent|percentage|discount|budget)$")


def column_type(name: str, jtype: str | None, fmt: str | None, desc: str = "") -> str:
    n = name.lower()
    d = desc.lower()
    if fmt in ("date-time", "datetime"):
        return "datetime"
    if fmt == "date":
        return "date"
    if jtype == "boolean":
        return "boolean"
    if jtype == "integer":
        return "integer"
    if jtype == "number":
        return "real"
    if jtype in ("object", "array"):
        return "json"
    if "hh:mm" in d and "yyyy" not in d and "iso" not in d:
        return "text"
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


def _state_token(word: str) -> str:
    return word.replace("canceled", "cancelled")


def states_in(text: str) -> list[str]:
    low = " " + re.sub(r"[^a-z ]+", " ", text.lower()) + " "
    low = (low.replace(" in progress ", " in_progress ").replace(" in review ", " in_review ")
           .replace(" on hold ", " on_hold ").replace(" no show ", " no_show ")
           .replace(" checked out ", " checked_out ").replace(" sold out ", " sold_out ")
           .replace(" to do ", " todo "))
    out = []
    for w in low.split():
        if w in _STATE_SET and w not in ("new", "review", "open", "done") or w in (
                "done", "open") and ("status" in low or "state" in low or "move" in low):
            out.append(_state_token(w))
    return list(dict.fromkeys(out))


def derive_model(doc: SourceDocument, evidence: list[Evidence]) -> DomainModel:
    """Steps 2-6 of the algorithm: entities, fields, relations and states from the evidence."""
    m = DomainModel()
    tools = [e for e in evidence if e.kind == "tool"]
    args_by_tool: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for e in evidence:
        if e.kind == "argument":
            args_by_tool[e.data["tool"]].append(e.data)
    ns = namespace_prefix(doc.name, [t.data["tool"] for t in tools])

    # (a) entity hints (request/response/error schemas are no entities)
    hints = [e for e in evidence if e.kind == "entity" and not is_dto(e.data["name"])]
    for h in hints:
        m.ensure(h.data["name"], "core", h.data.get("description", "")).from_hint = True
    if not hints:
        _feature_entities(m, [e.text for e in evidence if e.kind == "feature"])
    # (b) strong identifier arguments, then tool objects (compounds resolved against what is
    #     known: listPatientAppointments -> appointment in the context of a patient)
    shapes: dict[str, ToolShape] = {t.data["tool"]: tool_shape(t.data["tool"],
                                                              t.data.get("read_only"), ns)
                                    for t in tools}
    for t in tools:
        for info in args_by_tool[t.data["tool"]]:
            role = classify_argument(info, set(m.entities))
            if role.kind == "ref" and role.via != "description" and role.entity and \
                    not role.entity.startswith("@"):
                m.ensure(role.entity, "core")
    singles = {sh.obj for sh in shapes.values() if sh.obj and "_" not in sh.obj}
    written = {sh.obj for sh in shapes.values() if sh.obj and not sh.read}
    known = set(m.entities) | singles
    for t in tools:
        tname = t.data["tool"]
        shape = shapes[tname] = resolve_object(shapes[tname], known)
        if not shape.obj or shape.obj in VALUE_NOUNS:
            continue
        if shape.read and not args_by_tool[tname] and shape.obj not in m.entities and \
                shape.obj not in written and shape.obj not in COMMON_ENTITIES:
            shapes[tname] = ToolShape(shape.verb, None, shape.value_words, shape.read,
                                      shape.creates, shape.context)
            continue  # search_catalogue(), read_graph(): a view, not a stored entity
        m.ensure(shape.obj, "core", t.data.get("description", ""))
    # (d) hint fields first: the documented structure, which the tools then refine
    _hint_fields(m, hints)

    # (c) tools: primary entity, fields and relations
    for t in tools:
        tname = t.data["tool"]
        shape = shapes[tname]
        infos = args_by_tool[tname]
        known = set(m.entities)
        roles = [classify_argument(i, known) for i in infos]
        for r in roles:
            if r.entity == "@person":
                r.entity = m.person().name
        primary: _Entity | None = None
        from_obj = bool(shape.obj and shape.obj in m.entities)
        if from_obj:
            primary = m.entities[shape.obj]  # type: ignore[index]
        elif shape.verb in TRANSFORM_VERBS and infos:
            noun = "_".join([*shape.value_words, TRANSFORM_VERBS[shape.verb]])
            primary = m.ensure(noun, "activity", f"one record per {tname} call")
        else:
            refs = [r for r in roles if r.kind == "ref" and not r.many and r.via != "description"
                    and r.entity and not r.entity.startswith("@")]
            if refs:
                primary = m.ensure(refs[-1].entity)  # type: ignore[arg-type]
        if primary is None:
            continue
        if not shape.read:
            primary.written = True
        if shape.verb in STATE_VERBS:
            primary.states.append(STATE_VERBS[shape.verb])
        creating = shape.creates or primary.kind == "activity"
        if shape.context and primary.kind != "reference":  # list_appointments_by_doctor
            ctx = shape.context
            if ctx in PERSON_ROLES or (ctx in PERSON_NOUNS and ctx not in m.entities):
                ctx = m.person().name
            if ctx in m.entities or ctx in COMMON_ENTITIES:
                m.ensure(ctx)
                if ctx != primary.name and not any(c.fk == ctx for c in primary.cols.values()):
                    m.link(primary, f"{ctx}_id", ctx, False)
        if shape.read and not from_obj:  # get_balance(account_id) -> accounts.balance
            for w in shape.value_words:
                if w in VALUE_ATTRS:
                    primary.add(_Col(w, VALUE_ATTRS[w]))
        for info, r in zip(infos, roles, strict=True):
            _apply_argument(m, primary, shape, info, r, creating, from_obj)

    # (e) states attributed to the entity they are said of
    _attribute_states(m, evidence)

    _feature_relations(m, [e.text for e in evidence if e.kind == "feature"])

    _complete(m)
    return m




def is_dto(name: str) -> bool:
    """An OpenAPI request/response/error schema rather than a domain entity."""
    toks = tokens(name)
    return bool(toks) and (toks[-1] in DTO_WORDS and (len(toks) > 1 or toks[-1] in (
        "error", "errors", "problem", "exception", "dto")))


def resolve_object(shape: ToolShape, known: set[str]) -> ToolShape:
    """Resolve a compound object against known entities: member_account -> member (generic
    tail), patient_appointment -> appointment with context patient, retire_copy -> verb retire
    + copy, child_loan -> loan (a modifier)."""
    if not shape.obj or "_" not in shape.obj or shape.obj in known:
        return shape
    toks = shape.obj.split("_")
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


def _norm_sentence(text: str) -> list[str]:
    low = " " + re.sub(r"[^a-z ]+", " ", text.lower().replace("_", " ")) + " "
    for a, b in ((" in progress ", " in_progress "), (" in review ", " in_review "),
                 (" on hold ", " on_hold "), (" no show ", " no_show "),
                 (" checked out ", " checked_out "), (" checked in ", " checked_in "),
                 (" sold out ", " sold_out "), (" to do ", " todo "),
                 (" in transit ", " in_transit "), (" on loan ", " on_loan "),
                 (" check out ", " check_out "), (" check in ", " check_in "),
                 (" pick up ", " pick_up "), (" roll back ", " roll_back ")):
        low = low.replace(a, b)
    return low.split()


def _attribute_states(m: DomainModel, evidence: list[Evidence]) -> None:
    """Step 5: a state word belongs to the entity mentioned just before it (within 6 words),
    else just after it (within 2: "an overdue loan"), else to the sentence's only entity; a
    state verb in a feature ("suspend a member account") gives its participle to the entity
    right after it. An entity hint's text speaks only of that entity. A lifecycle sentence
    (two or more states for the entity) wins over scattered words."""
    targets = {ent.name: ent for ent in m.entities.values()
               if ent.kind not in ("join", "child", "reference")}
    forms = sorted({(tuple(n.split("_")), n) for n in targets}
                   | {(tuple(singular(n).split("_")), n) for n in targets},
                   key=lambda f: -len(f[0]))
    per: dict[str, list[list[str]]] = defaultdict(list)
    for e in evidence:
        if e.kind not in ("feature", "source", "web", "entity", "tool"):
            continue
        only = identifier(singular(e.data.get("name", "")), "x") if e.kind == "entity" else None
        for sentence in _sentences(e.text):
            words = _norm_sentence(sentence)
            sing = [_singular_word(w) for w in words]
            mentions: list[tuple[int, str]] = []
            for i in range(len(words)):
                for ftoks, name in forms:
                    if tuple(sing[i:i + len(ftoks)]) == ftoks:
                        mentions.append((i + len(ftoks) - 1, name))
                        break
            lifecycle_cue = any(w in ("status", "state", "states", "move", "moves", "marked",
                                      "becomes", "lifecycle") for w in words)
            found: dict[str, list[str]] = defaultdict(list)
            for p, w in enumerate(words):
                state = None
                if w in _STATE_SET and w not in ("new", "review", "open", "done", "ready"):
                    state = _state_token(w)
                elif w in ("done", "open", "ready") and lifecycle_cue:
                    state = w
                verb = w if w in STATE_VERBS else w[:-1] if w[:-1] in STATE_VERBS else None
                if state is None and verb and e.kind == "feature" and w not in _STATE_SET:
                    nxt = [n for i, n in mentions if 0 < i - p <= 4]
                    if nxt:
                        found[nxt[0]].append(STATE_VERBS[verb])
                    continue
                if state is None:
                    continue
                if only is not None:
                    target = only if only in targets else None
                else:  # "unpaid fines" (adjective) > "a copy is available" > "overdue the loan"
                    adj = [n for i, n in mentions if i - p == 1]
                    prev = [n for i, n in mentions if 0 < p - i <= 6]
                    after = [n for i, n in mentions if 0 < i - p <= 2]
                    names = {n for _, n in mentions}
                    target = (adj or prev[-1:] or after or [None])[0] or (
                        next(iter(names)) if len(names) == 1 else None)
                if target:
                    found[target].append(state)
            for name, states in found.items():
                per[name].append(list(dict.fromkeys(states)))
    for name, lists in per.items():
        ent = targets[name]
        lifecycle = [st for st in lists if len(st) >= 2]
        states = [w for st in (lifecycle or lists) for w in st]
        if len(states) >= 2 or (states and (ent.wants_status or ent.states)):
            ent.states.extend(states)


def _apply_argument(m: DomainModel, primary: _Entity, shape: ToolShape, info: dict[str, Any],
                    r: ArgRole, creating: bool, from_obj: bool) -> None:
    """Step 4 for one argument of a tool whose primary entity is `primary`."""
    required = bool(info["required"]) and creating
    arg = snake(info["argument"]) or "value"
    if singular(arg) == primary.name and r.kind in ("filter", "scalar") and \
            info["type"] == "string":  # write_query(query), append_insight(insight)
        _scalar(primary, "content", {**info, "enum": None}, required)
        return
    if r.kind == "filter":
        return
    if r.kind == "ref" and r.entity:
        target = primary.name if r.entity == "@self" else singular(r.entity)
        m.ensure(target)
        if target == primary.name:
            if r.role:  # base_branch / parent -> self reference
                primary.add(_Col(f"{r.role}_{target}_id" if r.role != "parent" else "parent_id",
                                 "integer", fk=target, description=info["description"]))
            elif r.ident:
                _add_identifier(primary, r.ident, required, m)
            return
        related = any(c.fk == target for c in primary.cols.values()) or \
            f"{primary.name}_{plural(target)}" in m.entities or \
            f"{target}_{plural(primary.name)}" in m.entities
        if shape.read and related and not r.role:
            return  # a filter over a relation the schema already has
        if r.many or r.via == "description":
            m.join(primary.name, target)
            return
        col = arg if arg.endswith("_id") and not r.role else (
            f"{r.role}_{target}_id" if r.role else f"{target}_id")
        if singular(arg.removesuffix("_id")) in PERSON_ROLES and arg.endswith("_id"):
            col = arg
        m.link(primary, col, target, required, info["description"])
        if r.ident:
            _add_identifier(m.entities[target], r.ident, False, m)
    elif r.kind == "array":
        items = info.get("items") or {}
        if singular(arg) == primary.name and items.get("type") == "object" and \
                items.get("properties"):  # create_entities(entities=[{...}]): bulk create
            known = set(m.entities)
            for k, p in items["properties"].items():
                sub = argument_info(k, p if isinstance(p, dict) else {}, False)
                _apply_argument(m, primary, shape, sub, classify_argument(sub, known),
                                creating, from_obj)
            return
        _child_table(m, primary, arg, info)
    elif r.kind == "scalar":
        # a reading tool's scalar arguments describe its object's attributes (listDoctors(
        # specialty)); those of a derived view (git_diff(target)) do not, enums always do
        if shape.read and not info["enum"] and primary.kind != "activity" and not from_obj:
            return
        if shape.read and not info["enum"] and primary.from_hint and arg not in primary.cols:
            return  # documented entities: a search argument is a filter, not a new field
        if shape.read and not info["enum"] and re.match(
                r"^(start|end|from|to|since|until|before|after|min|max)(_|$)|_(before|after|"
                r"since|until|from|to)$", arg):
            return  # range filters
        _scalar(primary, arg, info, required and (not shape.read or primary.kind == "activity"))


def _hint_fields(m: DomainModel, hints: list[Evidence]) -> None:
    """Step 2a continued: an entity hint's fields become columns and foreign keys."""
    for h in hints:
        ent = m.ensure(h.data["name"])
        for f in h.data["fields"]:
            fname = identifier(snake(f), "field")
            if fname == "id":
                continue
            base = fname.removesuffix("_ids").removesuffix("_id")
            if fname.endswith("_ids"):
                m.join(ent.name, singular(base))
                continue
            if not (fname.endswith("_id") or (singular(fname) in m.entities
                                               and singular(fname) != ent.name)):
                _scalar(ent, fname, {"type": None, "format": None, "enum": None,
                                     "description": ""}, fname in ("name", "title", "email"))
                continue
            col = fname if fname.endswith("_id") else f"{singular(base)}_id"
            toks = base.split("_")
            prefix, suffix_ent = _known_suffix(toks, set(m.entities))
            if base in ALIASES:
                target, required = ALIASES[base][0], True
            elif singular(base) in m.entities:
                target, required = singular(base), True
            elif suffix_ent and prefix:  # captain_employee_id -> employees
                target, required = suffix_ent, False
            elif singular(base) in PERSON_ROLES or toks[-1] in PERSON_ROLES:
                target, required = m.person().name, False  # owner_id, lead_id -> people
            else:
                target, required = singular(base), True
            m.ensure(target)
            if target == ent.name:
                ent.add(_Col(col, "integer", fk=ent.name))
            else:
                m.link(ent, col, target, required)


_ARTICLES = {"a", "an", "the", "their", "its", "his", "her", "our", "your", "new", "multiple",
             "several", "all", "any", "each", "every", "own", "them", "it", "they", "and", "or",
             "can", "be", "more", "many", "some", "one", "other", "also"}


def _feature_entities(m: DomainModel, features: list[str]) -> None:
    """Without entity hints, a PRD's feature sentences name the entities: known nouns
    (customer, order, ...), objects of verbs ("upload models" -> model) and the person
    subject who owns them ("Customers upload models" -> models.customer_id)."""
    for sentence in features:
        if len(states_in(sentence)) >= 2:
            words0 = [_singular_word(w) for w in tokens(sentence)]
            for w in words0:
                if w in COMMON_ENTITIES:
                    m.ensure(w)
            continue
        words = tokens(sentence)
        subject = None
        if words and _singular_word(words[0]) in PERSON_NOUNS:
            subject = m.ensure(_singular_word(words[0]))
        for i, w in enumerate(words):
            sw = _singular_word(w)
            if sw in COMMON_ENTITIES and sw not in PERSON_NOUNS:
                m.ensure(sw)
            base = w[:-1] if w.endswith("s") and w[:-1] in VERBS else w
            if base not in VERBS or base in READ_VERBS:
                continue
            rest = [x for x in words[i + 1:] if x not in _ARTICLES]
            if not rest:
                continue
            noun = rest[0]
            if noun in VERBS or noun in QUALIFIERS or noun in _STATE_SET or len(noun) < 3 or \
                    _singular_word(noun) in VALUE_NOUNS:
                continue
            obj = m.ensure(_singular_word(noun))
            if subject is not None and obj.name != subject.name and not is_person(obj.name) \
                    and not any(c.fk == subject.name for c in obj.cols.values()):
                m.link(obj, f"{subject.name}_id", subject.name, False)


FEATURE_VERBS = {"comment": "comments", "attach": "attachments", "upload": "attachments",
                 "invite": "members", "share": "members", "review": "reviews",
                 "rate": "reviews", "assign": "assignee", "tag": "tags"}


def _feature_relations(m: DomainModel, features: list[str]) -> None:
    """Feature sentences: '<verb> ... <entity>' adds the child record or relation the verb
    implies (comment -> E_comments, attach/upload -> E_attachments, invite/share ->
    E_members, review/rate -> E_reviews, assign -> E.assignee_id, tag -> E_tags)."""
    for sentence in features:
        if len(states_in(sentence)) >= 2:
            continue  # a lifecycle sentence: "review" there is a state, not an action
        words = [_singular_word(w) for w in tokens(sentence)]
        mentions = [(i, w) for i, w in enumerate(words)
                    if w in m.entities and m.entities[w].kind in ("core", "activity")]
        for i, w in enumerate(words):
            verb = w if w in FEATURE_VERBS else w[:-1] if w[:-1] in FEATURE_VERBS else \
                w[:-2] if w[:-2] in FEATURE_VERBS else None
            if verb is None:
                continue
            after = [e for j, e in mentions if j > i and not is_person(e)]
            before = [e for j, e in mentions if j < i and not is_person(e)]
            target_name = (after or before[::-1] or [None])[0]
            if verb in ("invite", "share") and before:
                target_name = before[-1]
            if target_name is None:
                continue
            target = m.entities[target_name]
            what = FEATURE_VERBS[verb]
            person = m.person()
            if what == "assignee":
                if not any(c.fk == person.name for c in target.cols.values()) and \
                        target.name != person.name:
                    m.link(target, "assignee_id", person.name, False)
                continue
            if what == "tags":
                tags = m.ensure("tag", "core", "labels shared across records")
                m.join(target.name, tags.name)
                continue
            child = m.raw(f"{target.name}_{what}", "child", f"{what} on {plural(target.name)}")
            child.add(_Col(f"{target.name}_id", "integer", nullable=False, fk=target.name))
            if what == "members":
                child.add(_Col(f"{person.name}_id", "integer", nullable=False, fk=person.name))
                child.add(_Col("role", "text", nullable=False,
                               enum=["owner", "editor", "viewer"]))
                child.add(_Col("joined_at", "datetime", nullable=False))
                group = [f"{target.name}_id", f"{person.name}_id"]
                if group not in child.unique_together and target.name != person.name:
                    child.unique_together.append(group)
            elif what == "attachments":
                child.add(_Col("file_name", "text", nullable=False))
                child.add(_Col("file_path", "text", nullable=False, unique=True))
                child.add(_Col("mime_type", "text"))
                child.add(_Col("size_bytes", "integer"))
                child.add(_Col("uploaded_at", "datetime", nullable=False))
            else:
                if person.name != target.name:
                    child.add(_Col("author_id", "integer", fk=person.name))
                if what == "reviews":
                    child.add(_Col("rating", "integer", nullable=False))
                child.add(_Col("body", "text", nullable=what == "reviews"))
                child.add(_Col("created_at", "datetime", nullable=False))


def _add_identifier(ent: _Entity, ident: str, required: bool, m: DomainModel) -> None:
    col = {"id": None, "ids": None, "uuid": "uuid", "number": "number", "email": "email",
           "handle": "handle", "uri": "url"}.get(ident, ident)
    if col is None:
        return
    parents = ent.parents()
    if col == "name" and parents:
        ent.add(_Col("name", "text", nullable=False))
        group = [f"{parents[0]}_id" if f"{parents[0]}_id" in ent.cols else next(
            c.name for c in ent.cols.values() if c.fk == parents[0]), "name"]
        if group not in ent.unique_together:
            ent.unique_together.append(group)
    else:
        ent.add(_Col(col, "text", nullable=not required and col != "path", unique=True))


def _scalar(ent: _Entity, arg: str, info: dict[str, Any], required: bool) -> None:
    if arg in ("id",) or arg in ent.cols and ent.cols[arg].fk:
        return
    enum = [e for e in (info.get("enum") or []) if e.lower() not in FILTER_ENUM_DROP]
    desc = str(info.get("description", "")).lower()
    if arg in ("status", "state") and not re.search(r"\bcode\b|abbreviation|province|"
                                                    r"us state|country", desc):
        if enum:
            ent.states.extend(_state_token(e) for e in enum)
        else:
            ent.wants_status = True
        return
    ctype = column_type(arg, info.get("type"), info.get("format"), info.get("description", ""))
    if enum:
        ent.add(_Col(arg, "text", nullable=not required, enum=list(dict.fromkeys(enum)),
                     description=info.get("description", "")))
        return
    ent.add(_Col(arg, ctype, nullable=not required,
                 unique=arg in ("email", "sku", "slug", "isbn", "sha"),
                 description=info.get("description", "")[:200]))


def _child_table(m: DomainModel, parent: _Entity, arg: str, info: dict[str, Any]) -> None:
    items = info.get("items") or {}
    value = singular(arg)
    child = m.raw(f"{parent.name}_{plural(value)}", "child", f"{arg} of each {parent.name}")
    child.add(_Col(f"{parent.name}_id", "integer", nullable=False, fk=parent.name))
    props = items.get("properties") or {}
    if items.get("type") == "object" and props:
        for k, p in props.items():
            jt, fmt, _ = _json_type(p)
            child.add(_Col(snake(k) or "value", column_type(snake(k), jt, fmt,
                                                            str(p.get("description", "")))))
        return
    word = value.split("_")[-1]
    if word in FILE_WORDS:
        child.add(_Col("path", "text", nullable=False))
    elif word in PERSON_NOUNS or items.get("format") == "email":
        child.add(_Col("email", "text", nullable=False))
        child.add(_Col("name", "text"))
        child.unique_together.append([f"{parent.name}_id", "email"])
    elif word in ("tag", "label", "keyword", "category"):
        child.add(_Col("name", "text", nullable=False))
    elif word in ("url", "link", "uri"):
        child.add(_Col("url", "text", nullable=False))
    else:
        child.add(_Col(identifier(value, "value"), column_type(value, items.get("type"),
                                                              items.get("format")),
                       nullable=False))


_LABELS = ("name", "title", "subject", "label", "code", "email", "message", "path", "url",
           "first_name", "sha", "headline", "body", "content", "username", "full_name",
           "given_name", "display_name", "mrn", "isbn", "barcode", "card_number", "sku")


def _complete(m: DomainModel) -> None:
    for ent in m.entities.values():
        if ent.kind == "reference":
            for cname, ctype, unique in CURATED[ent.name]["columns"]:
                ent.add(_Col(cname, ctype, nullable=not unique, unique=unique))
            continue
        if ent.kind in ("join", "child"):
            if ent.kind == "join":
                ent.add(_Col("created_at", "datetime", nullable=False))
            continue
        if is_person(ent.name):
            if not any(c in ent.cols for c in ("name", "first_name", "full_name", "given_name",
                                               "display_name")):
                ent.add(_Col("name", "text", nullable=False))
            ent.add(_Col("email", "text", nullable=True, unique=True))
        elif ent.kind == "core" and not any(c in ent.cols for c in _LABELS) and \
                not ent.parents():  # roots need a label; children are known by their parents
            ent.add(_Col("name", "text", nullable=False))
        if ent.wants_status and not ent.states:
            ent.states = ["active", "inactive", "archived"]
        if ent.states:
            states = list(dict.fromkeys(_state_token(s) for s in ent.states))
            first = next((s for s in STATE_WORDS if s in states and s in (
                "draft", "pending", "scheduled", "booked", "todo", "open", "new", "active")),
                None)
            if first:
                states = [first] + [s for s in states if s != first]
            else:  # only later states were named: records start out active
                states = ["active", *states]
            ent.add(_Col("status", "text", nullable=False, enum=states))
        ent.add(_Col("created_at", "datetime", nullable=False))
        if ent.kind == "core" and (ent.written or ent.states):
            ent.add(_Col("updated_at", "datetime"))


# ============================================================================================
# Reference data (real-world values for lookup entities)
# ============================================================================================

_TZ = [("America/New_York", "-05:00", True), ("America/Chicago", "-06:00", True),
       ("America/Denver", "-07:00", True), ("America/Phoenix", "-07:00", False),
       ("America/Los_Angeles", "-08:00", True), ("America/Anchorage", "-09:00", True),
       ("Pacific/Honolulu", "-10:00", False), ("America/Toronto", "-05:00", True),
       ("America/Mexico_City", "-06:00", False), ("America/Bogota", "-05:00", False),
       ("America/Sao_Paulo", "-03:00", False), ("America/Argentina/Buenos_Aires", "-03:00", False),
       ("Europe/London", "+00:00", True), ("Europe/Dublin", "+00:00", True),
       ("Europe/Lisbon", "+00:00", True), ("Europe/Paris", "+01:00", True),
       ("Europe/Berlin", "+01:00", True), ("Europe/Madrid", "+01:00", True),
       ("Europe/Rome", "+01:00", True), ("Europe/Warsaw", "+01:00", True),
       ("Europe/Athens", "+02:00", True), ("Europe/Istanbul", "+03:00", False),
       ("Europe/Moscow", "+03:00", False), ("Africa/Cairo", "+02:00", True),
       ("Africa/Lagos", "+01:00", False), ("Africa/Johannesburg", "+02:00", False),
       ("Africa/Nairobi", "+03:00", False), ("Asia/Dubai", "+04:00", False),
       ("Asia/Karachi", "+05:00", False), ("Asia/Kolkata", "+05:30", False),
       ("Asia/Kathmandu", "+05:45", False), ("Asia/Dhaka", "+06:00", False),
       ("Asia/Bangkok", "+07:00", False), ("Asia/Shanghai", "+08:00", False),
       ("Asia/Singapore", "+08:00", False), ("Asia/Tokyo", "+09:00", False),
       ("Asia/Seoul", "+09:00", False), ("Australia/Adelaide", "+09:30", True),
       ("Australia/Sydney", "+10:00", True), ("Pacific/Auckland", "+12:00", True),
       ("Pacific/Chatham", "+12:45", True), ("UTC", "+00:00", False)]
_CURRENCIES = [("USD", "US Dollar", "$", 2), ("EUR", "Euro", "€", 2),
               ("GBP", "Pound Sterling", "£", 2), ("JPY", "Yen", "¥", 0),
               ("CHF", "Swiss Franc", "CHF", 2), ("CAD", "Canadian Dollar", "$", 2),
               ("AUD", "Australian Dollar", "$", 2), ("CNY", "Yuan Renminbi", "¥", 2),
               ("INR", "Indian Rupee", "₹", 2), ("BRL", "Brazilian Real", "R$", 2),
               ("MXN", "Mexican Peso", "$", 2), ("KRW", "Won", "₩", 0),
               ("SEK", "Swedish Krona", "kr", 2), ("NOK", "Norwegian Krone", "kr", 2),
               ("ZAR", "Rand", "R", 2), ("SGD", "Singapore Dollar", "$", 2),
               ("HKD", "Hong Kong Dollar", "$", 2), ("NZD", "New Zealand Dollar", "$", 2),
               ("KWD", "Kuwaiti Dinar", "KD", 3), ("BHD", "Bahraini Dinar", "BD", 3)]
_COUNTRIES = [("US", "United States", "Americas"), ("CA", "Canada", "Americas"),
              ("MX", "Mexico", "Americas"), ("BR", "Brazil", "Americas"),
              ("AR", "Argentina", "Americas"), ("GB", "United Kingdom", "Europe"),
              ("IE", "Ireland", "Europe"), ("FR", "France", "Europe"),
              ("DE", "Germany", "Europe"), ("ES", "Spain", "Europe"), ("IT", "Italy", "Europe"),
              ("NL", "Netherlands", "Europe"), ("PL", "Poland", "Europe"),
              ("SE", "Sweden", "Europe"), ("TR", "Türkiye", "Asia"), ("EG", "Egypt", "Africa"),
              ("NG", "Nigeria", "Africa"), ("KE", "Kenya", "Africa"),
              ("ZA", "South Africa", "Africa"), ("AE", "United Arab Emirates", "Asia"),
              ("IN", "India", "Asia"), ("CN", "China", "Asia"), ("JP", "Japan", "Asia"),
              ("KR", "South Korea", "Asia"), ("SG", "Singapore", "Asia"),
              ("AU", "Australia", "Oceania"), ("NZ", "New Zealand", "Oceania")]
_LANGUAGES = [("en", "English"), ("es", "Spanish"), ("fr", "French"), ("de", "German"),
              ("it", "Italian"), ("pt", "Portuguese"), ("nl", "Dutch"), ("pl", "Polish"),
              ("sv", "Swedish"), ("tr", "Turkish"), ("ru", "Russian"), ("ar", "Arabic"),
              ("hi", "Hindi"), ("bn", "Bengali"), ("zh", "Chinese"), ("ja", "Japanese"),
              ("ko", "Korean"), ("sw", "Swahili"), ("el", "Greek"), ("he", "Hebrew")]

CURATED: dict[str, dict[str, Any]] = {
    "timezone": {
        "columns": [("name", "text", True), ("utc_offset", "text", False),
                    ("observes_dst", "boolean", False), ("region", "text", False)],
        "rows": [{"name": n, "utc_offset": o, "observes_dst": d,
                  "region": n.split("/")[0] if "/" in n else "Etc"} for n, o, d in _TZ],
        "description": "IANA time zones with their standard UTC offsets",
    },
    "currency": {
        "columns": [("code", "text", True), ("name", "text", False), ("symbol", "text", False),
                    ("decimals", "integer", False)],
        "rows": [{"code": c, "name": n, "symbol": s, "decimals": d}
                 for c, n, s, d in _CURRENCIES],
        "description": "ISO 4217 currencies",
    },
    "country": {
        "columns": [("code", "text", True), ("name", "text", False), ("region", "text", False)],
        "rows": [{"code": c, "name": n, "region": r} for c, n, r in _COUNTRIES],
        "description": "ISO 3166 countries",
    },
    "language": {
        "columns": [("code", "text", True), ("name", "text", False)],
        "rows": [{"code": c, "name": n} for c, n in _LANGUAGES],
        "description": "ISO 639-1 languages",
    },
}
CURATED_TABLES = {plural(k): k for k in CURATED}


# ============================================================================================
# Schema from the domain model
# ============================================================================================


def model_to_tables(m: DomainModel) -> tuple[list[TableSpec], dict[str, str]]:
    """TableSpecs (FK order) and each table's kind."""
    names = {e: plural(e) if m.entities[e].kind not in ("join", "child") else e
             for e in m.entities}
    order = _entity_order(m)
    tables, kinds = [], {}
    for ename in order:
        ent = m.entities[ename]
        cols = [ColumnSpec(name="id", type="integer", primary_key=True, nullable=False)]
        fks = [c for c in ent.cols.values() if c.fk]
        rest = [c for c in ent.cols.values() if not c.fk]
        rest.sort(key=lambda c: {"status": 0, "created_at": 1, "updated_at": 2}.get(c.name, -1))
        for c in fks + rest:
            if c.name == "id":
                continue
            fk = f"{names[c.fk]}.id" if c.fk else None
            cols.append(ColumnSpec(name=identifier(c.name, "col"), type=c.type,
                                   nullable=c.nullable, unique=c.unique, enum=c.enum,
                                   foreign_key=fk, description=c.description[:200]))
        desc = ent.description or CURATED.get(ename, {}).get("description", "")
        tname = identifier(names[ename], "t")
        tables.append(TableSpec(name=tname, description=desc[:300], columns=cols,
                                unique_together=[g for g in ent.unique_together
                                                 if all(x in {c.name for c in cols} for x in g)]))
        kinds[tname] = "person" if is_person(ename) and ent.kind == "core" else ent.kind
    return tables, kinds


def _entity_order(m: DomainModel) -> list[str]:
    done: list[str] = []
    seen: set[str] = set()

    def visit(name: str, stack: tuple[str, ...] = ()) -> None:
        if name in seen or name in stack or name not in m.entities:
            return
        for p in m.entities[name].parents():
            visit(p, (*stack, name))
        seen.add(name)
        done.append(name)

    for name in m.entities:  # insertion order: hints, tool objects, references
        visit(name)
    return done


def table_order(tables: list[TableSpec]) -> list[str]:
    by = {t.name: t for t in tables}
    done: list[str] = []
    seen: set[str] = set()

    def visit(name: str, stack: tuple[str, ...] = ()) -> None:
        if name in seen or name in stack:
            return
        for c in by[name].columns:
            if c.foreign_key:
                p = c.foreign_key.split(".")[0]
                if p != name and p in by:
                    visit(p, (*stack, name))
        seen.add(name)
        done.append(name)

    for t in tables:
        visit(t.name)
    return done


def table_kinds(spec: EnvSpec) -> dict[str, str]:
    """Each table's role (core, person, reference, activity, child, join, history, lookup,
    tags, notes): recorded by the miner in provenance.stats, else inferred."""
    known = dict(spec.provenance.stats.get("table_kinds") or {})
    for t in spec.tables:
        if t.name in known:
            continue
        fks = [c.name for c in t.columns if c.foreign_key]
        if t.name.endswith("_history"):
            known[t.name] = "history"
        elif t.name in CURATED_TABLES:
            known[t.name] = "reference"
        elif len(fks) >= 2 and any(len(set(g) & set(fks)) >= 2 for g in t.unique_together):
            known[t.name] = "join"
        elif is_person(t.name) or {"email"} <= {c.name for c in t.columns} and any(
                c.name in ("name", "first_name", "full_name") for c in t.columns):
            known[t.name] = "person"
        else:
            known[t.name] = "core"
    return known


# ============================================================================================
# 7. Rows
# ============================================================================================

_BRANCH_PREFIX = ("feature", "fix", "chore", "release", "hotfix", "docs")
_MIME = [("pdf", "application/pdf"), ("png", "image/png"), ("jpg", "image/jpeg"),
         ("csv", "text/csv"), ("txt", "text/plain"), ("docx",
          "application/vnd.openxmlformats-officedocument.wordprocessingml.document")]
_SPECIALTIES = ["Cardiology", "Dermatology", "Pediatrics", "Neurology", "Oncology",
                "Orthopedics", "Psychiatry", "Radiology", "General Practice", "Ophthalmology"]
_TAG_WORDS = ["urgent", "backlog", "customer", "internal", "bug", "feature", "follow-up",
              "billing", "vip", "q1", "q2", "blocked", "docs", "security", "design", "research",
              "legal", "onboarding", "migration", "priority", "later", "archive", "team",
              "personal", "review"]
_COLORS = ["red", "orange", "yellow", "green", "teal", "blue", "indigo", "purple", "pink",
           "gray"]


def _iso(dt: datetime) -> str:
    return dt.replace(microsecond=0).isoformat()


def _parse(v: Any) -> datetime | None:
    if not isinstance(v, str):
        return None
    try:
        return datetime.fromisoformat(v[:19]) if "T" in v or len(v) > 10 else \
            datetime.fromisoformat(v + "T00:00:00")
    except ValueError:
        return None


def _time_role(name: str) -> str:
    n = name.lower()
    if re.search(r"birth|dob|birthday", n):
        return "birth"
    if n.startswith(("deleted", "archived", "cancelled", "canceled", "closed", "revoked")):
        return "deleted"
    if n.startswith(("updated", "modified", "last_", "changed")):
        return "updated"
    if re.search(r"(^|_)(end|ends|until|finish|finished|due|deadline|expires|expiry|expiration|"
                 r"arrival|checkout|check_out|closes|to)(_|$)", n):
        return "end"
    if re.search(r"(^|_)(start|starts|begin|begins|scheduled|departure|check_in|checkin|opens|"
                 r"from|since|at_time|time|date)(_|$)", n) and n not in ("created_at",):
        return "start"
    return "created"


def column_semantic(table: str, col: ColumnSpec) -> str:
    """What kind of value a column holds, from its name, type, description and table."""
    n = col.name.lower()
    words = set(n.split("_"))
    t = col.type
    if col.primary_key:
        return "pk"
    if col.foreign_key:
        return "fk"
    if col.enum:
        return "enum"
    if t == "boolean":
        return "bool"
    if t == "json":
        return "json"
    if t in ("date", "datetime"):
        return f"{t}:{_time_role(n)}"
    if t == "real":
        if words & {"latitude", "lat"}:
            return "latitude"
        if words & {"longitude", "lng", "lon"}:
            return "longitude"
        if words & {"rating", "score", "stars"}:
            return "rating"
        if words & {"percent", "percentage", "pct", "discount", "rate"}:
            return "percent"
        return "money"
    if t == "integer":
        if words & {"year"}:
            return "year"
        if words & {"age"}:
            return "age"
        if words & {"rating", "stars", "score", "priority", "level", "rank", "floor"}:
            return "small_int"
        if words & {"minutes", "duration"}:
            return "duration"
        if words & {"size", "bytes"}:
            return "bytes"
        if words & {"decimals"}:
            return "decimals"
        if words & {"order", "position"}:
            return "position"
        return "count"
    d = col.description.lower()
    single = singular(table).split("_")[-1]
    if "hh:mm" in d or n in ("time", "local_time", "start_hhmm"):
        return "hhmm"
    if "email" in words:
        return "email"
    if words & {"phone", "mobile", "fax", "telephone"}:
        return "phone"
    if n == "first_name":
        return "first_name"
    if n == "last_name":
        return "last_name"
    if n in ("full_name", "display_name") or (n == "name" and is_person(table)) or \
            n in ("author", "changed_by", "assignee", "reviewer", "owner"):
        return "person_name"
    if n in ("username", "login", "handle", "user_name"):
        return "username"
    if words & {"url", "uri", "link", "website", "homepage", "endpoint"}:
        return "url"
    if n in ("file_name", "filename"):
        return "file_name"
    if words & {"path", "directory", "dir", "file", "folder"}:
        return "repo_path" if single in ("repository", "repo") else "file_path"
    if "timezone" in words or n == "tz" or (single == "timezone" and n == "name"):
        return "timezone"
    if n in ("utc_offset", "offset"):
        return "utc_offset"
    if "currency" in words:
        return "currency"
    if n in ("country", "country_code", "nationality"):
        return "country"
    if n == "city":
        return "city"
    if words & {"address", "street", "location"}:
        return "address"
    if words & {"zip", "postcode", "postal"}:
        return "postcode"
    if words & {"language", "locale", "lang"}:
        return "language"
    if words & {"color", "colour"}:
        return "color"
    if words & {"sha", "hash", "revision", "checksum", "digest"}:
        return "sha"
    if words & {"uuid", "guid", "token"}:
        return "uuid"
    if words & {"ip"}:
        return "ip"
    if words & {"domain", "hostname", "host"}:
        return "domain"
    if "version" in words:
        return "semver"
    if words & {"mime", "content_type", "mimetype"} or n == "content_type":
        return "mime"
    if words & {"specialty", "speciality", "department"}:
        return "specialty"
    if words & {"message", "body", "content", "comment", "notes", "note", "text", "reason",
                "bio", "summary", "instructions", "answer", "question", "feedback", "value"}:
        return "sentence"
    if words & {"description", "details"}:
        return "paragraph"
    if words & {"title", "subject", "headline", "caption"}:
        return "title"
    if words & {"company", "organization", "employer", "vendor", "brand"}:
        return "company"
    if words & {"code", "sku", "reference", "ref", "isbn", "number", "slug", "key"}:
        return "code"
    if words & {"region", "continent", "area"}:
        return "region"
    if words & {"type", "kind", "category", "genre", "role", "target", "action", "method",
                "channel", "source", "unit"}:
        return "category"
    if n in ("name", "label"):
        if single in ("repository", "repo", "project", "package", "service", "bucket", "app"):
            return "slug_name"
        if single == "branch":
            return "branch_name"
        if single in ("tag", "label", "keyword", "topic"):
            return "tag"
        if single in ("company", "organization", "vendor", "supplier", "clinic", "hospital"):
            return "company"
        if single in ("city", "location", "venue", "place", "hotel", "airport", "store"):
            return "place"
        if single in ("calendar",):
            return "calendar_name"
        return "title"
    return "word"


class RowFactory:
    """Makes valid rows for a set of tables: FKs point at existing rows, unique columns and
    unique_together groups stay unique, enums and NOT NULL hold, times are consistent."""

    def __init__(self, tables: list[TableSpec], rows: dict[str, list[dict[str, Any]]] | None,
                 seed: int | str, clock: str = "2026-01-15T09:00:00") -> None:
        self.tables = {t.name: t for t in tables}
        self.rows: dict[str, list[dict[str, Any]]] = {
            t.name: [dict(r) for r in (rows or {}).get(t.name, [])] for t in tables}
        self.rng = random.Random(f"rows:{seed}")
        self.fake = Faker("en_US")
        self.fake.seed_instance(f"faker:{seed}")
        self.clock = datetime.fromisoformat(clock)
        self._unique: dict[tuple[str, tuple[str, ...]], set[Any]] = {}
        self._zipf: dict[tuple[str, int], tuple[list[Any], list[float]]] = {}
        self._by_id: dict[str, dict[Any, dict[str, Any]]] = {}
        for t in tables:
            self._index(t.name)

    # ---- bookkeeping -------------------------------------------------------------------
    def add_table(self, table: TableSpec) -> None:
        self.tables[table.name] = table
        self.rows.setdefault(table.name, [])
        self._index(table.name)

    def _groups(self, table: TableSpec) -> list[tuple[str, ...]]:
        groups = [(c.name,) for c in table.columns if c.unique and not c.primary_key]
        groups += [tuple(table.primary_key)] + [tuple(g) for g in table.unique_together]
        return groups

    def _index(self, tname: str) -> None:
        table = self.tables[tname]
        for g in self._groups(table):
            self._unique[(tname, g)] = {tuple(r.get(c) for c in g) for r in self.rows[tname]}
        pk = table.primary_key[0]
        self._by_id[tname] = {r.get(pk): r for r in self.rows[tname]}

    def reindex_column(self, tname: str) -> None:
        self._index(tname)

    def next_id(self, tname: str) -> int:
        pk = self.tables[tname].primary_key
        if len(pk) != 1:
            return len(self.rows[tname]) + 1
        ids = [r.get(pk[0]) for r in self.rows[tname] if isinstance(r.get(pk[0]), int)]
        return (max(ids) if ids else 0) + 1

    def ok_unique(self, tname: str, row: dict[str, Any]) -> bool:
        for g in self._groups(self.tables[tname]):
            key = tuple(row.get(c) for c in g)
            if any(v is None for v in key):
                continue
            if key in self._unique[(tname, g)]:
                return False
        return True

    def commit(self, tname: str, row: dict[str, Any]) -> dict[str, Any]:
        for g in self._groups(self.tables[tname]):
            key = tuple(row.get(c) for c in g)
            if not any(v is None for v in key):
                self._unique[(tname, g)].add(key)
        self.rows[tname].append(row)
        self._by_id[tname][row.get(self.tables[tname].primary_key[0])] = row
        return row

    # ---- choices -----------------------------------------------------------------------
    def zipf_choice(self, tname: str, ids: list[Any], s: float = 1.1) -> Any:
        key = (tname, len(ids))
        if key not in self._zipf:
            order = list(ids)
            random.Random(f"zipf:{tname}:{len(ids)}").shuffle(order)
            weights = [1.0 / (rank + 1) ** s for rank in range(len(order))]
            self._zipf[key] = (order, weights)
        order, weights = self._zipf[key]
        return self.rng.choices(order, weights=weights, k=1)[0]

    def pick_parent(self, table: str, col: ColumnSpec, skew: bool,
                    own_id: Any = None) -> Any:
        ptable, pcol = col.foreign_key.split(".")  # type: ignore[union-attr]
        candidates = [r.get(pcol) for r in self.rows.get(ptable, []) if r.get(pcol) is not None]
        if ptable == table:
            candidates = [c for c in candidates if own_id is None or c != own_id]
            if not candidates or self.rng.random() < 0.5:
                return None
        if not candidates:
            return None
        if skew:
            return self.zipf_choice(ptable, candidates)
        return self.rng.choice(candidates)

    def parent_row(self, col: ColumnSpec, value: Any) -> dict[str, Any] | None:
        if value is None or not col.foreign_key:
            return None
        ptable = col.foreign_key.split(".")[0]
        return self._by_id.get(ptable, {}).get(value)

    # ---- values --------------------------------------------------------------------------
    def _rand_time(self, lo: datetime, hi: datetime) -> datetime:
        if hi <= lo:
            return lo
        span = int((hi - lo).total_seconds())
        return lo + timedelta(seconds=self.rng.randint(0, span))

    def value(self, table: str, col: ColumnSpec, row: dict[str, Any]) -> Any:
        sem = column_semantic(table, col)
        f, r = self.fake, self.rng
        if sem == "enum":
            vals = col.enum or []
            return r.choices(vals, weights=[1.0 / (i + 1) for i in range(len(vals))], k=1)[0]
        if sem == "bool":
            return r.random() < (0.25 if col.name.startswith(("is_archived", "pinned",
                                                               "deleted")) else 0.6)
        if sem == "json":
            return {"source": r.choice(["web", "api", "import", "mobile"]),
                    "version": r.randint(1, 5)}
        if sem.startswith(("date:", "datetime:")):
            return self._time_value(table, col, row, sem)
        gen: dict[str, Callable[[], Any]] = {
            "latitude": lambda: round(r.uniform(-60, 70), 6),
            "longitude": lambda: round(r.uniform(-170, 170), 6),
            "rating": lambda: round(r.uniform(1, 5), 1),
            "percent": lambda: round(r.uniform(0, 100), 2),
            "money": lambda: round(r.lognormvariate(3.6, 1.0), 2),
            "year": lambda: r.randint(1990, 2026),
            "age": lambda: r.randint(1, 95),
            "small_int": lambda: r.randint(1, 5),
            "duration": lambda: r.choice([15, 30, 45, 60, 90, 120]),
            "bytes": lambda: int(r.lognormvariate(11, 2)),
            "decimals": lambda: r.choice([0, 2, 2, 2, 3]),
            "position": lambda: r.randint(1, 100),
            "count": lambda: min(int(r.expovariate(1 / 8)), 500),
            "hhmm": lambda: f"{r.randint(0, 23):02d}:{r.choice([0, 15, 30, 45]):02d}",
            "email": lambda: self._email(row),
            "phone": lambda: f.phone_number(),
            "first_name": lambda: f.first_name(),
            "last_name": lambda: f.last_name(),
            "person_name": lambda: f.name(),
            "username": lambda: f.user_name(),
            "url": lambda: f.url() + f.uri_path(),
            "file_name": lambda: f.file_name(),
            "file_path": lambda: (f"/{'/'.join(f.words(r.randint(1, 3)))}/{row['file_name']}"
                                  if isinstance(row.get("file_name"), str)
                                  else f.file_path(depth=r.randint(1, 3))),
            "repo_path": lambda: f"/srv/git/{f.user_name()}/{f.word()}-{f.word()}",
            "timezone": lambda: r.choice(_TZ)[0],
            "utc_offset": lambda: r.choice(_TZ)[1],
            "currency": lambda: r.choice(_CURRENCIES)[0],
            "country": lambda: r.choice(_COUNTRIES)[0],
            "city": lambda: f.city(),
            "address": lambda: f.address().replace("\n", ", "),
            "postcode": lambda: f.postcode(),
            "language": lambda: r.choice(_LANGUAGES)[0],
            "color": lambda: r.choice(_COLORS),
            "sha": lambda: f.sha1(),
            "uuid": lambda: f.uuid4(),
            "ip": lambda: f.ipv4_private(),
            "domain": lambda: f.domain_name(),
            "semver": lambda: f"{r.randint(0, 4)}.{r.randint(0, 20)}.{r.randint(0, 30)}",
            "mime": lambda: self._mime(row),
            "specialty": lambda: r.choice(_SPECIALTIES),
            "sentence": lambda: (self._commit_message() if singular(table) == "commit"
                                 else f.sentence(nb_words=r.randint(5, 12))),
            "paragraph": lambda: f.paragraph(nb_sentences=2),
            "title": lambda: f.catch_phrase(),
            "company": lambda: f.company(),
            "code": lambda: f.bothify("??-####").upper(),
            "region": lambda: r.choice(["North", "South", "East", "West", "Central"]),
            "category": lambda: r.choice(["standard", "premium", "basic", "internal",
                                          "external"]),
            "slug_name": lambda: f"{f.word()}-{f.word()}",
            "branch_name": lambda: (r.choice(["main", "develop"]) if r.random() < 0.2 else
                                    f"{r.choice(_BRANCH_PREFIX)}/{f.word()}-{f.word()}"),
            "tag": lambda: r.choice(_TAG_WORDS) if r.random() < 0.8 else f.word(),
            "place": lambda: f.city(),
            "calendar_name": lambda: f"{f.first_name()}'s "
                                     f"{r.choice(['Work', 'Personal', 'Team', 'On-call'])}",
            "word": lambda: f.word(),
        }
        return gen.get(sem, gen["word"])()

    def _email(self, row: dict[str, Any]) -> str:
        """An address that matches the row's person name when it has one."""
        name = row.get("name") or row.get("full_name") or " ".join(
            str(row[k]) for k in ("first_name", "last_name") if row.get(k))
        if isinstance(name, str) and name.strip():
            parts = [re.sub(r"[^a-z]", "", p.lower()) for p in name.split()
                     if p.rstrip(".").lower() not in ("mr", "mrs", "ms", "dr", "md", "phd",
                                                      "dds", "dvm", "jr", "sr", "ii", "iii")]
            parts = [p for p in parts if p]
            if parts:
                local = self.rng.choice([".".join(parts), parts[0][0] + parts[-1],
                                         parts[0] + str(self.rng.randint(1, 99))])
                return f"{local}@{self.fake.free_email_domain()}"
        return self.fake.email()

    def _mime(self, row: dict[str, Any]) -> str:
        import mimetypes

        for key in ("file_name", "filename", "file_path", "path", "name"):
            if isinstance(row.get(key), str):
                guess = mimetypes.guess_type(row[key])[0]
                if guess:
                    return guess
        return self.rng.choice(_MIME)[1]

    def _commit_message(self) -> str:
        verb = self.rng.choice(["Fix", "Add", "Update", "Refactor", "Remove", "Improve",
                                "Document", "Bump"])
        what = self.rng.choice(["handling", "tests", "docs", "config", "validation", "parser",
                                "endpoint", "logging", "types", "dependencies"])
        return f"{verb} {self.fake.word()} {what}"

    def _time_value(self, table: str, col: ColumnSpec, row: dict[str, Any], sem: str) -> Any:
        kind, role = sem.split(":")
        r = self.rng
        floor = WINDOW_START
        tcols = self.tables[table].columns
        for c in tcols:  # a child is created after its parents
            if c.foreign_key and row.get(c.name) is not None:
                parent = self.parent_row(c, row[c.name])
                if parent:
                    for k in ("created_at", "created", "joined_at", "registered_at"):
                        pt = _parse(parent.get(k))
                        if pt and pt > floor:
                            floor = pt
        created = next((_parse(row.get(c.name)) for c in tcols
                        if c.name in ("created_at", "created") and row.get(c.name)), None)
        start = next((_parse(row.get(c.name)) for c in tcols
                      if c.type in ("date", "datetime") and c.name != col.name
                      and _time_role(c.name) == "start" and row.get(c.name)), None)
        if role == "birth":
            dt = self._rand_time(datetime(1940, 1, 1), datetime(2008, 12, 31))
        elif role == "updated":
            base = created or floor
            dt = self._rand_time(base, min(self.clock, base + timedelta(days=120)))
        elif role == "deleted":
            if col.nullable and r.random() < 0.85:
                return None
            base = created or floor
            dt = self._rand_time(base, self.clock)
        elif role == "end":
            if start is not None:
                dt = start + (timedelta(days=r.randint(1, 14)) if kind == "date"
                              else timedelta(minutes=r.choice([30, 45, 60, 90, 120])))
            else:
                dt = self._rand_time(self.clock - timedelta(days=60),
                                     self.clock + timedelta(days=90))
        elif role == "start":
            lo = max(floor, self.clock - timedelta(days=150))
            dt = self._rand_time(lo, max(lo, self.clock + timedelta(days=75)))
            dt = dt.replace(minute=(dt.minute // 15) * 15, second=0)
        else:
            dt = self._rand_time(floor, self.clock - timedelta(hours=1))
        return dt.date().isoformat() if kind == "date" else _iso(dt)

    def _ordered(self, table: TableSpec) -> list[ColumnSpec]:
        def key(c: ColumnSpec) -> int:
            if c.foreign_key:
                return 1
            if c.primary_key:
                return 0
            if c.type in ("date", "datetime"):
                return {"created": 3, "birth": 3, "start": 4, "updated": 5, "deleted": 5,
                        "end": 6}[_time_role(c.name)]
            return 2
        return sorted(table.columns, key=key)

    def make(self, tname: str, *, skew: bool = False, overrides: dict[str, Any] | None = None,
             nulls: float = 0.05, tries: int = 8) -> dict[str, Any] | None:
        """Generate, check and append one row (None when uniqueness cannot be met)."""
        table = self.tables[tname]
        overrides = overrides or {}
        for attempt in range(tries):
            row: dict[str, Any] = {}
            rid = self.next_id(tname)
            for c in self._ordered(table):
                if c.name in overrides:
                    row[c.name] = overrides[c.name]
                elif c.primary_key and not c.foreign_key:
                    row[c.name] = rid if c.type == "integer" else self.fake.uuid4()
                elif c.foreign_key:
                    v = self.pick_parent(tname, c, skew, own_id=rid)
                    if v is None and not c.nullable:
                        return None  # no parent rows to point at
                    if v is not None and c.nullable and self.rng.random() < nulls:
                        v = None
                    row[c.name] = v
                elif c.nullable and not c.unique and self.rng.random() < nulls and \
                        c.name not in ("name", "title"):
                    row[c.name] = None
                else:
                    row[c.name] = self.value(tname, c, row)
            if not self.ok_unique(tname, row):
                for c in table.columns:  # make unique text columns unique by suffix
                    if (c.unique or any(c.name in g for g in table.unique_together)) and \
                            c.type == "text" and isinstance(row.get(c.name), str) and \
                            c.name not in overrides and attempt >= 2:
                        row[c.name] = _suffix(row[c.name], rid, column_semantic(tname, c))
                if not self.ok_unique(tname, row):
                    continue
            return self.commit(tname, row)
        return None

    def curated_rows(self, tname: str, n: int | None = None) -> int:
        entity = CURATED_TABLES.get(tname) or singular(tname)
        data = CURATED.get(entity, {}).get("rows", [])
        made = 0
        have = {r.get("name") or r.get("code") for r in self.rows[tname]}
        for rec in data:
            if n is not None and made >= n:
                break
            if (rec.get("name") or rec.get("code")) in have:
                continue
            over = {k: v for k, v in rec.items() if k in {c.name for c in
                                                           self.tables[tname].columns}}
            if self.make(tname, overrides=over, nulls=0.0, tries=1) is not None:
                made += 1
        return made


def _suffix(value: str, rid: Any, sem: str) -> str:
    if sem == "email" and "@" in value:
        user, _, dom = value.partition("@")
        return f"{user}{rid}@{dom}"
    if sem in ("url", "file_path", "repo_path"):
        return f"{value.rstrip('/')}-{rid}"
    return f"{value} {rid}"


def draft_volumes(tables: list[TableSpec], kinds: dict[str, str],
                  factory: RowFactory) -> None:
    """Fill tables in FK order with volumes by role (step 7)."""
    for tname in table_order(tables):
        kind = kinds.get(tname, "core")
        t = factory.tables[tname]
        if kind == "reference":
            factory.curated_rows(tname)
            continue
        parents = [c.foreign_key.split(".")[0] for c in t.columns
                   if c.foreign_key and not c.nullable and c.foreign_key.split(".")[0] != tname]
        sizes = [len(factory.rows[p]) for p in parents]
        if kind == "join":
            n = min(int(1.5 * max(sizes or [10])), (sizes[0] * sizes[1]) if len(sizes) > 1
                    else 30)
        elif kind == "child":
            n = min(120, 2 * (sizes[0] if sizes else 10))
        elif kind == "activity":
            n = 40
        elif kind == "person":
            n = 20
        elif parents:
            n = min(80, max(12, 3 * min(sizes)))
        else:
            n = 15
        for _ in range(n):
            factory.make(tname)


# ============================================================================================
# Draft (offline)
# ============================================================================================


def draft_tables_and_rows(doc: SourceDocument, evidence: list[Evidence], seed: int,
                          clock: str) -> tuple[list[TableSpec], dict[str, list[dict[str, Any]]],
                                               dict[str, str]]:
    m = derive_model(doc, evidence)
    if not m.entities:  # nothing named anything: one entity named after the source itself
        m.ensure(identifier(singular(doc.name), "item"), "core", doc.description)
        _complete(m)
    tables, kinds = model_to_tables(m)
    factory = RowFactory(tables, None, seed, clock)
    draft_volumes(tables, kinds, factory)
    return tables, factory.rows, kinds


# ============================================================================================
# Complexification (offline)
# ============================================================================================

MAIN_KINDS = {"core": 4, "person": 3, "activity": 2, "reference": 1}


def _reaches(tables: list[TableSpec], start: str, goal: str) -> bool:
    """Whether table `start` references `goal` through foreign keys (self references aside)."""
    by = {t.name: t for t in tables}
    seen, stack = set(), [start]
    while stack:
        cur = stack.pop()
        if cur == goal:
            return True
        if cur in seen or cur not in by:
            continue
        seen.add(cur)
        stack.extend(c.foreign_key.split(".")[0] for c in by[cur].columns
                     if c.foreign_key and c.foreign_key.split(".")[0] != cur)
    return False


def _degree(spec_tables: list[TableSpec], name: str) -> int:
    out = sum(1 for c in next(t for t in spec_tables if t.name == name).columns if c.foreign_key)
    inn = sum(1 for t in spec_tables for c in t.columns
              if c.foreign_key and c.foreign_key.split(".")[0] == name and t.name != name)
    return out + inn


def _candidates(tables: list[TableSpec], kinds: dict[str, str], rows: dict[str, list],
                allowed: Iterable[str], added: Iterable[str] = ()) -> list[str]:
    """Tables an operation may target, most central first; tables added by earlier
    complexification iterations come after the drafted ones."""
    allowed, added = set(allowed), set(added)
    names = [t.name for t in tables
             if kinds.get(t.name, "core") in allowed and len(t.primary_key) == 1]
    return sorted(names, key=lambda n: (n in added, -MAIN_KINDS.get(kinds.get(n, "core"), 0),
                                        -_degree(tables, n), -len(rows.get(n, [])), n))


class _Complexifier:
    def __init__(self, spec: EnvSpec, iteration: int, seed: int) -> None:
        self.tables = [t.model_copy(deep=True) for t in spec.tables]
        self.kinds = table_kinds(spec)
        self.iteration = iteration
        self.f = RowFactory(self.tables, spec.rows, f"{seed}:{iteration}", spec.clock_start)
        self.rng = random.Random(f"complexify:{seed}:{iteration}")
        self.clock = spec.clock_start
        self.notes: list[str] = []
        self.added: list[str] = list(spec.provenance.stats.get("added_tables") or [])

    def cands(self, allowed: Iterable[str]) -> list[str]:
        return _candidates(self.tables, self.kinds, self.f.rows, allowed, self.added)

    # ---- helpers -------------------------------------------------------------------------
    def table(self, name: str) -> TableSpec:
        return next(t for t in self.tables if t.name == name)

    def has(self, name: str) -> bool:
        return any(t.name == name for t in self.tables)

    def new_table(self, table: TableSpec, kind: str) -> TableSpec:
        self.tables.append(table)
        self.kinds[table.name] = kind
        self.added.append(table.name)
        self.f.add_table(table)
        return table

    def add_column(self, tname: str, col: ColumnSpec, fill: Callable[[dict], Any]) -> None:
        t = self.table(tname)
        t.columns.append(col)
        self.f.tables[tname] = t
        for row in self.f.rows[tname]:
            row[col.name] = fill(row)
        self.f.reindex_column(tname)

    def person_table(self) -> str | None:
        people = [t.name for t in self.tables if self.kinds.get(t.name) == "person"]
        return sorted(people, key=lambda n: -len(self.f.rows[n]))[0] if people else None

    def pk(self, tname: str) -> str:
        return self.table(tname).primary_key[0]

    def fk_col(self, name: str, target: str, nullable: bool = False,
               description: str = "") -> ColumnSpec:
        pk = self.table(target).primary_key[0] if self.has(target) else "id"
        ptype = next((c.type for c in self.table(target).columns if c.name == pk), "integer") \
            if self.has(target) else "integer"
        return ColumnSpec(name=name, type=ptype, nullable=nullable,
                          foreign_key=f"{target}.{pk}", description=description)

    def fill(self, tname: str, n: int, *, skew: bool = True,
             overrides: Callable[[int], dict[str, Any]] | None = None) -> int:
        made = 0
        for i in range(n):
            if self.f.make(tname, skew=skew, overrides=overrides(i) if overrides else None):
                made += 1
        return made

    # ---- structural operations -----------------------------------------------------------
    def op_actors(self) -> bool:
        person = self.person_table()
        targets = [n for n in self.cands(("core", "activity", "child")) if n != person]
        for target in targets:
            t = self.table(target)
            if person and (any(c.foreign_key and c.foreign_key.split(".")[0] == person
                               for c in t.columns) or _reaches(self.tables, person, target)):
                continue  # already owned, or the FK would close a cycle
            if person is None:
                users = TableSpec(
                    name="users" if not self.has("users") else "app_users",
                    description="people who own and act on the records",
                    columns=[ColumnSpec(name="id", type="integer", primary_key=True,
                                        nullable=False),
                             ColumnSpec(name="name", type="text", nullable=False),
                             ColumnSpec(name="email", type="text", unique=True, nullable=False),
                             ColumnSpec(name="role", type="text", nullable=False,
                                        enum=["admin", "member", "viewer"]),
                             (self.fk_col("timezone_id", "timezones", nullable=True)
                              if self.has("timezones") else
                              ColumnSpec(name="timezone", type="text")),
                             ColumnSpec(name="created_at", type="datetime", nullable=False)])
                self.new_table(users, "person")
                self.fill(users.name, 18, skew=False)
                person = users.name
            colname = "owner_id" if self.kinds.get(target) == "core" else "user_id"
            if colname in {c.name for c in t.columns}:
                colname = "created_by_id"
            if colname in {c.name for c in t.columns}:
                continue
            col = self.fk_col(colname, person, nullable=True,
                              description=f"the {singular(person)} responsible")
            ids = [r[self.pk(person)] for r in self.f.rows[person]]
            self.add_column(target, col, lambda _r, ids=ids, p=person: (
                None if self.rng.random() < 0.08 else self.f.zipf_choice(p, ids)))
            self.notes.append(f"actors: {target}.{colname} -> {person}")
            return True
        return False

    def op_history(self) -> bool:
        person = self.person_table()
        for target in self.cands(("core", "person", "reference")):
            name = identifier(f"{singular(target)}_history")
            if self.has(name) or not self.f.rows[target]:
                continue
            fk = f"{singular(target)}_id"
            cols = [ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                    self.fk_col(fk, target),
                    ColumnSpec(name="action", type="text", nullable=False,
                               enum=["created", "updated", "status_changed", "archived",
                                     "restored"]),
                    ColumnSpec(name="field_name", type="text"),
                    ColumnSpec(name="old_value", type="text"),
                    ColumnSpec(name="new_value", type="text"),
                    ColumnSpec(name="changed_at", type="datetime", nullable=False)]
            if person and person != target:
                cols.insert(2, self.fk_col("changed_by_id", person, nullable=True))
            else:
                cols.insert(2, ColumnSpec(name="changed_by", type="text"))
            t = self.new_table(TableSpec(name=name, columns=cols,
                                         description=f"audit trail of changes to {target}"),
                               "history")
            created = [c.name for c in self.table(target).columns
                       if c.type in ("datetime", "date") and _time_role(c.name) == "created"]
            for parent in list(self.f.rows[target]):
                at = parent.get(created[0]) if created else None
                self.f.make(t.name, overrides={fk: parent[self.pk(target)], "action": "created",
                                               "field_name": None, "old_value": None,
                                               "new_value": None,
                                               "changed_at": _iso(_parse(at)) if _parse(at)
                                               else _iso(WINDOW_START)})
            for _ in range(len(self.f.rows[target])):
                self.history_row(t.name)
            self.notes.append(f"history: {name} ({len(self.f.rows[name])} rows) -> {target}")
            return True
        return False

    def op_tags(self) -> bool:
        for target in self.cands(("core", "activity", "person")):
            join = identifier(f"{singular(target)}_tags")
            if self.has(join) or not self.f.rows[target]:
                continue
            if not self.has("tags"):
                tags = TableSpec(name="tags", description="labels shared across records",
                                 columns=[ColumnSpec(name="id", type="integer", primary_key=True,
                                                     nullable=False),
                                          ColumnSpec(name="name", type="text", nullable=False,
                                                     unique=True),
                                          ColumnSpec(name="color", type="text"),
                                          ColumnSpec(name="created_at", type="datetime",
                                                     nullable=False)])
                self.new_table(tags, "tags")
                self.fill("tags", 14, skew=False)
            fk = f"{singular(target)}_id"
            self.new_table(TableSpec(
                name=join, description=f"tags on {target} (many-to-many)",
                columns=[ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                         self.fk_col(fk, target), self.fk_col("tag_id", "tags"),
                         ColumnSpec(name="tagged_at", type="datetime", nullable=False)],
                unique_together=[[fk, "tag_id"]]), "join")
            want = int(1.5 * len(self.f.rows[target])) + 4
            self.fill(join, want, skew=True)
            self.notes.append(f"tags: {join} ({len(self.f.rows[join])} rows) joins "
                              f"{target} and tags")
            return True
        return False

    def op_status(self) -> bool:
        for target in self.cands(("core", "activity", "person")):
            t = self.table(target)
            if any(c.name in ("status", "state") for c in t.columns):
                continue
            vocab = (["succeeded", "failed", "pending"] if self.kinds.get(target) == "activity"
                     else ["active", "inactive", "archived"])
            col = ColumnSpec(name="status", type="text", nullable=False, enum=vocab,
                             default=vocab[0], description="lifecycle state")
            self.add_column(target, col, lambda _r, v=vocab: self.rng.choices(
                v, weights=[0.8, 0.12, 0.08], k=1)[0])
            self.notes.append(f"status: {target}.status in {vocab}")
            return True
        return False

    def _lookup_candidate(self) -> tuple[str, ColumnSpec] | None:
        for target in self.cands(("core", "person", "reference", "activity")):
            rows = self.f.rows[target]
            if len(rows) < 6:
                continue
            for c in self.table(target).columns:
                if c.primary_key or c.foreign_key or c.unique or c.type != "text" or \
                        c.name in ("status", "state", "name", "title", "email"):
                    continue
                sem = column_semantic(target, c)
                if not (c.enum or sem in ("category", "region", "specialty", "language",
                                          "currency", "country", "color", "timezone")):
                    continue
                values = [r.get(c.name) for r in rows if r.get(c.name) is not None]
                if 2 <= len(set(values)) <= max(2, len(values) // 2):
                    lookup = identifier(plural(c.name))
                    if self.has(lookup) or f"{c.name}_id" in {x.name for x in
                                                               self.table(target).columns}:
                        lookup = identifier(f"{singular(target)}_{plural(c.name)}")
                    if not self.has(lookup) and f"{c.name}_id" not in {
                            x.name for x in self.table(target).columns}:
                        return target, c
        return None

    def op_lookup(self) -> bool:
        cand = self._lookup_candidate()
        if cand is None:
            return self._op_categories()
        target, c = cand
        lookup = identifier(plural(c.name))
        if self.has(lookup):
            lookup = identifier(f"{singular(target)}_{plural(c.name)}")
        values = sorted({r.get(c.name) for r in self.f.rows[target] if r.get(c.name) is not None}
                        | set(c.enum or []))
        t = self.new_table(TableSpec(
            name=lookup, description=f"lookup of {target}.{c.name} values",
            columns=[ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                     ColumnSpec(name="code", type="text", nullable=False, unique=True),
                     ColumnSpec(name="label", type="text", nullable=False),
                     ColumnSpec(name="description", type="text"),
                     ColumnSpec(name="sort_order", type="integer", nullable=False)]), "lookup")
        ids = {}
        for i, v in enumerate(values):
            row = self.f.make(t.name, overrides={"code": v, "label": str(v).replace("_", " ")
                                                 .replace("/", " / ").title(),
                                                 "sort_order": i + 1})
            if row:
                ids[v] = row["id"]
        col = self.fk_col(f"{c.name}_id", t.name, nullable=True,
                          description=f"normalised {c.name}")
        self.add_column(target, col, lambda r: ids.get(r.get(c.name)))
        self.notes.append(f"lookup: {lookup} ({len(values)} codes) <- {target}.{c.name}_id")
        return True

    def _op_categories(self) -> bool:
        for target in self.cands(("core", "activity", "person")):
            name = identifier(f"{singular(target)}_categories")
            if self.has(name) or "category_id" in {c.name for c in self.table(target).columns}:
                continue
            t = self.new_table(TableSpec(
                name=name, description=f"hierarchical categories of {target}",
                columns=[ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                         ColumnSpec(name="name", type="text", nullable=False, unique=True),
                         ColumnSpec(name="description", type="text"),
                         self.fk_col("parent_id", name, nullable=True)]), "lookup")
            for i in range(8):
                self.f.make(t.name, overrides={"parent_id": None} if i < 3 else None)
            ids = [r["id"] for r in self.f.rows[name]]
            self.add_column(target, self.fk_col("category_id", name, nullable=True),
                            lambda _r, n=name, ids=ids: self.f.zipf_choice(n, ids)
                            if self.rng.random() > 0.1 else None)
            self.notes.append(f"lookup: {name} (self-referencing) <- {target}.category_id")
            return True
        return False

    def op_children(self) -> bool:
        person = self.person_table()
        for target in self.cands(("core", "person", "activity")):
            if not self.f.rows[target]:
                continue
            fk = f"{singular(target)}_id"
            notes = identifier(f"{singular(target)}_notes")
            files = identifier(f"{singular(target)}_attachments")
            if not self.has(notes):
                cols = [ColumnSpec(name="id", type="integer", primary_key=True, nullable=False),
                        self.fk_col(fk, target),
                        ColumnSpec(name="body", type="text", nullable=False),
                        ColumnSpec(name="pinned", type="boolean", nullable=False,
                                   default=False),
                        ColumnSpec(name="created_at", type="datetime", nullable=False),
                        ColumnSpec(name="deleted_at", type="datetime")]
                if person and person != target:
                    cols.insert(2, self.fk_col("author_id", person, nullable=True))
                else:
                    cols.insert(2, ColumnSpec(name="author", type="text"))
                self.new_table(TableSpec(name=notes, columns=cols,
                                         description=f"notes written on {target}"), "notes")
                self.fill(notes, int(1.2 * len(self.f.rows[target])) + 3)
                self.notes.append(f"children: {notes} ({len(self.f.rows[notes])} rows)")
                return True
            if not self.has(files):
                self.new_table(TableSpec(
                    name=files, description=f"files attached to {target}",
                    columns=[ColumnSpec(name="id", type="integer", primary_key=True,
                                        nullable=False),
                             self.fk_col(fk, target),
                             ColumnSpec(name="file_name", type="text", nullable=False),
                             ColumnSpec(name="file_path", type="text", nullable=False,
                                        unique=True),
                             ColumnSpec(name="mime_type", type="text"),
                             ColumnSpec(name="size_bytes", type="integer"),
                             ColumnSpec(name="uploaded_at", type="datetime", nullable=False)]),
                    "notes")
                self.fill(files, len(self.f.rows[target]) + 3)
                self.notes.append(f"children: {files} ({len(self.f.rows[files])} rows)")
                return True
        return False

    def history_row(self, hist: str) -> dict[str, Any] | None:
        """An 'updated'/'status_changed' entry whose old value is the record's current value
        and whose new value is a fresh one of the same kind, after the record was created."""
        t = self.table(hist)
        fkc = next((c for c in t.columns if c.foreign_key and not c.nullable), None)
        if fkc is None or {"field_name", "old_value", "new_value"} - {c.name for c in t.columns}:
            return self.f.make(hist, skew=True)
        target = fkc.foreign_key.split(".")[0]  # type: ignore[union-attr]
        if not self.has(target) or not self.f.rows.get(target):
            return self.f.make(hist, skew=True)
        tcols = [c for c in self.table(target).columns
                 if not c.primary_key and not c.foreign_key and c.type in ("text", "integer",
                                                                           "real", "boolean")]
        pid = self.f.pick_parent(hist, fkc, True)
        parent = self.f.parent_row(fkc, pid)
        if parent is None or not tcols:
            return self.f.make(hist, skew=True)
        col = self.rng.choice(tcols)
        new = self.f.value(target, col, parent)
        for _ in range(4):  # a change changes something
            if new != parent.get(col.name):
                break
            new = self.f.value(target, col, parent)
        at = _parse(parent.get("created_at")) or WINDOW_START
        action = "status_changed" if col.name in ("status", "state") else "updated"
        if action == "status_changed" and new == "archived":
            action = "archived"
        return self.f.make(hist, overrides={
            fkc.name: pid, "action": action, "field_name": col.name,
            "old_value": None if parent.get(col.name) is None else str(parent.get(col.name)),
            "new_value": str(new),
            "changed_at": _iso(self.f._rand_time(at, datetime.fromisoformat(self.clock)))})

    SCHEDULE = (("actors", "history"), ("tags", "status"), ("lookup", "children"),
                ("history", "children"), ("tags", "lookup"), ("children", "actors"))
    FALLBACK = ("history", "tags", "children", "lookup", "actors", "status")

    # ---- data operations -----------------------------------------------------------------
    def grow(self, factor: float) -> None:
        for tname in table_order(self.tables):
            kind = self.kinds.get(tname, "core")
            if kind in ("reference", "lookup"):
                continue
            n = len(self.f.rows[tname])
            extra = max(2, math.ceil(n * (factor - 1))) if kind != "tags" else 2
            if kind == "history":
                for _ in range(extra):
                    self.history_row(tname)
            else:
                self.fill(tname, extra, skew=True)

    def edge_cases(self) -> None:
        boundary = ["2024-02-29T00:00:00", "2025-12-31T23:59:59", self.clock,
                    "2024-01-01T00:00:00"][(self.iteration - 1) % 4]
        added: Counter[str] = Counter()
        for t in list(self.tables):
            kind = self.kinds.get(t.name, "core")
            if kind in ("reference", "lookup", "join"):
                continue
            # terminal states
            status = next((c for c in t.columns if c.name in ("status", "state") and c.enum),
                          None)
            if status is not None:
                have = set(status.enum or [])
                for trigger, terminal in TERMINAL_FOR:
                    if have & trigger and terminal not in have:
                        status.enum = [*(status.enum or []), terminal]
                        have.add(terminal)
                        self.notes.append(f"edge: {t.name}.status += {terminal}")
                        for _ in range(2):
                            if self.f.make(t.name, skew=True, overrides={status.name: terminal}):
                                added[t.name] += 1
                        break
            # every nullable column NULL at once
            nullable = {c.name: None for c in t.columns
                        if c.nullable and not c.primary_key}
            if nullable and self.f.make(t.name, skew=True, overrides=nullable):
                added[t.name] += 1
            # duplicate label with a new id
            label = next((c for c in t.columns if c.name in ("name", "title", "subject")
                          and not c.unique), None)
            if label is not None and self.f.rows[t.name]:
                src = self.f.rows[t.name][self.rng.randrange(len(self.f.rows[t.name]))]
                if src.get(label.name) is not None and self.f.make(
                        t.name, skew=True, overrides={label.name: src[label.name]}):
                    added[t.name] += 1
            # boundary dates
            times = [c for c in t.columns if c.type in ("date", "datetime")]
            if times:
                over = {c.name: (boundary[:10] if c.type == "date" else boundary)
                        for c in times}
                if self.f.make(t.name, skew=True, overrides=over):
                    added[t.name] += 1
        if added:
            self.notes.append(f"edge cases: {sum(added.values())} rows in {len(added)} tables "
                              f"(NULLs, duplicate names, terminal states, boundary {boundary})")

    def run(self) -> ComplexifyResult:
        planned = list(self.SCHEDULE[(self.iteration - 1) % len(self.SCHEDULE)])
        for op in planned:
            if getattr(self, f"op_{op}")():
                continue
            for alt in self.FALLBACK:
                if alt not in planned and getattr(self, f"op_{alt}")():
                    break
        self.grow(1.3)
        self.edge_cases()
        return ComplexifyResult(self.tables, self.f.rows, self.kinds, self.added, self.notes)


@dataclass
class ComplexifyResult:
    tables: list[TableSpec]
    rows: dict[str, list[dict[str, Any]]]
    kinds: dict[str, str]  # every table's role
    added: list[str]  # tables added by complexification so far (all iterations)
    notes: list[str]


def complexify_offline(spec: EnvSpec, iteration: int, seed: int) -> ComplexifyResult:
    """One offline complexification iteration (not yet validated: the caller does that)."""
    return _Complexifier(spec, iteration, seed).run()


def scale_rows(spec: EnvSpec, seed: int | str, minimum: dict[str, int]) -> dict[str, list]:
    """Top tables up to `minimum` rows with the offline generator (LLM path volumes)."""
    f = RowFactory(spec.tables, spec.rows, f"scale:{seed}", spec.clock_start)
    kinds = table_kinds(spec)
    for tname in table_order(spec.tables):
        if kinds.get(tname) == "reference" and tname in CURATED_TABLES:
            f.curated_rows(tname, max(0, minimum.get(tname, 0) - len(f.rows[tname])))
        for _ in range(max(0, minimum.get(tname, 0) - len(f.rows[tname]))):
            if f.make(tname, skew=True) is None:
                break
    return f.rows


def fill_column(spec: EnvSpec, table: str, col: ColumnSpec, seed: int | str) -> list[Any]:
    """Values for a new column on a table's existing rows (LLM path)."""
    f = RowFactory(spec.tables, spec.rows, f"fill:{seed}:{table}.{col.name}", spec.clock_start)
    out = []
    for row in spec.rows.get(table, []):
        if col.foreign_key:
            v = f.pick_parent(table, col, True, own_id=row.get("id"))
            out.append(v if v is not None or col.nullable else col.default)
        elif col.default is not None:
            out.append(col.default)
        else:
            out.append(f.value(table, col, row))
    return out


# ============================================================================================
# Questions (offline)
# ============================================================================================


def plan_questions_offline(doc: SourceDocument, limit: int = 16) -> list[str]:
    """Research questions from a quick scan of the source's tools and entity hints: the
    entities, each one's attributes and lifecycle, the relations and their cardinalities, what
    the writing tools change, and realistic volumes/edge cases (each kind kept under `limit`)."""
    subject = doc.title or doc.name
    m = derive_model(doc, collect_evidence(doc, []))
    core = [e for e in m.entities.values() if e.kind in ("core", "activity", "reference")]
    attrs = [f"What attributes does a {e.name.replace('_', ' ')} have, which are required, "
             f"and what types and formats do they take?" for e in core]
    states = [f"Which states or lifecycle does a {e.name.replace('_', ' ')} go through "
              f"(created, active, cancelled, expired, archived)?"
              for e in core if e.kind != "reference"]
    relations = []
    for e in m.entities.values():
        for p in dict.fromkeys(e.parents()):
            child, parent = e.name.replace("_", " "), p.replace("_", " ")
            relations.append(f"How does a {child} relate to a {parent}, and how many "
                             f"{plural(e.name).replace('_', ' ')} does a typical {parent} have?")
    writes = [f"Which records does `{t.name}` create or change, and what can make it fail?"
              for t in doc.tools if not tool_shape(t.name, t.read_only, None).read]
    first = [f"What are the core entities managed by {subject}, and which identifiers do its "
             f"tools use to refer to them?"]
    last = [f"What realistic data volumes, skew and edge cases (missing values, duplicates, "
            f"cancelled or expired records) occur in {subject}?"]
    buckets = [attrs, states, relations, writes]
    out: list[str] = []
    budget = max(0, limit - len(first) - len(last))
    while budget > 0 and any(buckets):
        for b in buckets:  # round-robin so every kind of question is asked
            if b and budget > 0:
                out.append(b.pop(0))
                budget -= 1
    return list(dict.fromkeys(first + out + last))
