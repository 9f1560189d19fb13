"""Word lists the offline miner reads names and sentences with.

Verbs (all known verbs, phrasal verbs, noun-verbs such as ``commit``, reading, creating,
transforming and state-changing verbs with the state they lead to), the lifecycle state words
and the terminal states complexification adds, the words a tool name is split on (modifiers,
qualifiers, id words, value nouns and the attributes they map to), argument vocabulary
(identifier suffixes, role prefixes, filter arguments, aliases to entities), person nouns and
roles, common entity nouns and file words. Pure data: nothing here imports from the package.
"""

from __future__ import annotations

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
    "uninstall", "upgrade",
    "append", "log", "record", "create_or_update", "order", "buy", "sell", "rent", "plan",
    "manage", "organize", "print", "retire", "renew", "place", "waive", "suspend", "reactivate",
    "reserve", "borrow", "lend", "collect", "receive", "scan", "expire", "revoke", "check_in",
    "check_out", "sign_in", "sign_up", "log_in", "log_out", "opt_in", "opt_out",
    "roll_back", "set_up", "clean_up", "look_up", "pick_up", "drop_off",
    # verbs of the harvested servers' tool names ('format_range', 'mute_host'): without
    # them the whole name was taken for a record's kind ('format_ranges'); the verbs that
    # work out an answer (ANSWER_VERBS) and the acts on a screen (UI_VERBS) are added below
    "format", "replace", "watch", "unwatch", "index", "reindex", "login", "logout", "accept",
    "decline", "restart", "reboot", "shutdown", "protect", "unprotect", "connect", "disconnect",
    "reconnect", "trigger", "optimize", "expand", "prepare", "change", "rebuild", "sort",
    "reload", "reorder", "trash", "untrash", "unmerge", "launch", "terminate", "cleanup",
    "broadcast", "undo", "simulate", "reopen", "pause", "unpause", "resume", "wipe", "rerun",
    "retry", "mute", "unmute", "kill", "transform", "instantiate", "skip", "clean", "init",
    "rebase", "stash", "fork", "unapprove", "respond", "hide", "unhide", "star", "unstar",
    "empty", "exec", "flush", "snooze", "reauthorize", "allocate", "configure", "finalize",
    "autofix", "activate", "deactivate", "recycle", "toggle", "abort", "redeploy", "pin",
    "unpin", "customize", "auto_fit",
}
PHRASAL_VERBS = {"check_in", "check_out", "sign_in", "sign_up", "log_in", "log_out", "opt_in",
                 "opt_out", "roll_back", "set_up", "clean_up", "look_up", "pick_up", "drop_off",
                 "go_back", "go_forward", "long_press", "double_tap", "auto_fit"}
# acts on what a screen shows or on a session ('browser_hover(element, ref)',
# 'press_key(key)', 'mobile_swipe_on_screen'): what they touch is no record of the service,
# so a tool named by one keeps no table of its calls or of its object ('hovers', 'keys');
# it acts on a record only when an argument names one ('resize_page(page_id)')
UI_VERBS = frozenset({"click", "hover", "type", "press", "wait", "scroll", "drag", "tap",
                      "swipe", "pinch", "long_press", "double_tap", "go_back", "go_forward",
                      "sleep", "focus", "dismiss", "emulate", "resize", "interact", "fill"})
# what such a tool (or 'take_screenshot') names as its object: a picture of the screen or an
# input device, no record either
UI_OBJECTS = frozenset({"screenshot", "snapshot", "key", "keyboard", "mouse", "screen"})
# a picture drawn from the call's own arguments ('generate_area_chart(data, title, width)',
# 'generate_mermaid_diagram'): no record the service keeps (a chart created in a workbook,
# 'create_chart', is one)
DRAWING_VERBS = frozenset({"generate", "render", "draw", "plot"})
DRAWINGS = frozenset({"chart", "diagram", "plot", "visualization", "visualisation",
                      "infographic", "graph", "map"})
GENERIC_TAILS = {"account", "profile", "record", "details", "entry", "info", "data"}
DTO_WORDS = {"error", "errors", "problem", "exception", "request", "response", "input",
             "output", "payload", "body", "envelope", "dto", "params", "parameters"}
NOUN_VERBS = {"commit", "comment", "review", "message", "post", "order", "note", "bookmark",
              "tag", "label", "vote", "tweet", "reply", "transfer", "deposit", "return"}
READ_VERBS = {"get", "list", "search", "find", "fetch", "read", "show", "query", "lookup",
              "retrieve", "check", "count", "describe", "view", "browse", "export", "download",
              "scrape", "navigate", "look_up", "scan", "dump", "status", "diff", "history",
              "current"}
# verbs a tool's name starts with that only ever read
PURE_READS = frozenset({"get", "list", "search", "find", "read", "retrieve", "describe", "view",
                        "show", "lookup", "browse"})
# verbs that, leading a tool's name, read or work out an answer and change nothing
# ('compare_political_groups', 'diagnose_dag_run'); unlike READ_VERBS, words a name may
# also hold as nouns ('update_audit_config'), so only the leading verb is read so
ANSWER_VERBS = frozenset({
    "compare", "extract", "diagnose", "ask", "research", "audit", "crawl", "explore",
    "geocode", "lint", "detect", "parse", "explain", "aggregate", "measure", "troubleshoot",
    "filter", "assess", "correlate", "trace", "brainstorm", "introspect", "poll", "rerank",
    "inspect", "predict", "estimate", "recommend", "suggest", "preview", "ping"})
# every verb a name may start with (VERBS above names the rest)
VERBS |= ANSWER_VERBS | UI_VERBS
CREATE_VERBS = {"create", "add", "new", "book", "schedule", "register", "insert", "upsert",
                "make", "submit", "upload", "send", "invite", "post", "save", "write", "open",
                "import", "clone", "attach", "deploy", "build", "append", "record", "log"}
# the verbs whose tool makes a record of its own, value word and all (create_commit_status
# makes a commit status, not a commit)
MAKES_RECORD = frozenset({"create", "add", "new", "insert", "post", "make", "generate",
                          "submit"})
TRANSFORM_VERBS = {
    "convert": "conversion", "translate": "translation", "calculate": "calculation",
    "compute": "computation", "fetch": "fetch", "search": "search", "run": "run",
    "execute": "execution", "send": "delivery", "generate": "generation",
    "evaluate": "evaluation", "analyze": "analysis", "summarize": "summary",
    "transcribe": "transcription", "render": "render", "scrape": "scrape", "query": "query",
    "invoke": "invocation", "call": "call", "download": "download", "export": "export",
    "navigate": "navigation", "transfer": "transfer",
}
# the nouns of acts: a table named by one holds calls, not things (a search's suggestions)
ACT_NOUNS = frozenset(set(TRANSFORM_VERBS.values()) - {"run", "call"} | {
    "suggestion", "recommendation", "prediction", "inspection", "estimation", "lookup",
    "validation", "verification", "comparison"})
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
    "pause": "paused", "reopen": "open", "mute": "muted", "accept": "accepted",
    "decline": "declined",
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
STATE_SET = set(STATE_WORDS)
LENT_STATES = ("checked_out", "on_loan", "borrowed")  # one state, three names
# final states an edge-case row is put in, the first its table's enum has
TERMINAL_EDGE_STATES = ("cancelled", "expired", "archived")
# how well a tool does its work, not what it works on: add_footnote_robust and
# add_footnote_enhanced add footnotes (were tables 'footnote_robusts' and 'footnote_enhanceds',
# and tasks asked for "that footnote robust's filename")
QUALITY_WORDS = frozenset({"robust", "enhanced", "improved", "safe", "unsafe",
                           # merge_table_cells_horizontal merges table cells
                           # ('table_cells_horizontals' was a table of its calls)
                           "horizontal", "vertical", "horizontally", "vertically"})
MODIFIERS = {"current", "all", "new", "existing", "my", "staged", "unstaged", "latest",
             "recent", "details", "detail", "info", "single", "many", "multiple", "batch",
             "bulk", "one", "the", "a", "an", "full", "raw", "local", "remote", "specific",
             "available", "v1", "v2", "v3", "api", *QUALITY_WORDS}
# where a tool acts, after its record (insert_header_near_text inserts a header,
# add_footnote_before_text a footnote; were tables 'header_nears', 'footnote_befores')
WHERE_WORDS = frozenset({"near", "before", "after", "below", "above", "between"})
# where a name's object ends: what follows says where or how
QUALIFIERS = {"by", "for", "with", "from", "to", "in", "of", "on", "at", "and", "or", "via",
              "into", "as", *WHERE_WORDS}
ID_WORDS = {"id", "ids", "uuid", "guid", "gid", "key", "pk"}
VALUE_ATTRS = {"balance": "real", "price": "real", "score": "real", "rating": "real",
               "total": "real", "quota": "integer", "usage": "real"}
VALUE_NOUNS = {"balance", "price", "score", "rating", "total", "quota", "usage",
               "time", "status", "diff", "log", "logs", "content", "contents", "summary",
               "stats", "statistics", "health", "version", "result", "results", "data", "text",
               "help", "count", "value", "values", "state", "overview", "report", "metadata",
               "config", "settings", "date", "now", "history", "changes", "output", "tree",
               "info", "url", "web", "page", "html", "markdown", "json", "response",
               # a document's structure or markup read whole: get_document_outline and
               # get_document_xml read a document, not 'document_outlines' of their own
               "outline", "xml",
               # a layout property set on a record: set_table_column_width sets a table
               # column's width (tables 'table_column_widths', 'table_column_width_widths')
               "width", "widths", "height", "alignment", "shading", "padding", "spacing",
               "indent", "indentation", "margin", "margins"}
# what a tool named for removing a record starts with (planning and walks read names alike)
DELETE_VERBS = frozenset({"delete", "remove", "drop", "purge", "destroy", "unlink", "uninstall"})
# words a tool's name says it changes something with (a service's tool left unbuilt that has
# one would have written: Google Sheets' gsheets_update_cell, shadcn's apply_theme)
WRITE_VERBS = frozenset(CREATE_VERBS | DELETE_VERBS | set(STATE_VERBS) | {
    "update", "edit", "modify", "patch", "put", "set", "change", "rename", "move", "replace",
    "apply", "install", "reset", "clear", "kill", "restart", "unassign", "grant", "transfer"})
ID_SUFFIXES = {"id", "ids", "path", "name", "key", "code", "slug", "uuid", "sha", "number",
               "handle", "email", "url", "uri", *("gid", "gids", "guid")}
# suffixes that make an argument a record's own key: Asana's task_gid and tag_gid (a 'gid' is
# its global id; add_tag_to_task had inserted a tag with columns task_gid and tag_gid)
KEY_SUFFIXES = frozenset({"id", "ids", "uuid", "gid", "gids", "guid"})
ROLE_PREFIXES = {"source", "target", "src", "dst", "dest", "destination", "from", "to",
                 "parent", "base", "head", "new", "old", "default", "primary", "secondary",
                 "origin", "home", "main", "related", "original", "previous", "next", "other"}
# free text to look for ('search_issues(query)', 'list_issues(search)')
SEARCH_ARGS = {"q", "query", "search", "search_query", "search_term", "keyword", "keywords",
               "term", "text_query"}
FILTER_ARGS = {"limit", "max_count", "offset", "page", "page_size", "per_page", "cursor",
               "sort", "sort_by", "order", "order_by", "q", "query", "max_results", "top_k",
               "num",
               "context_lines", "start_index", "max_length", "raw", "format", "fields",
               "include", "expand", "verbose", "dry_run", "page_token", "skip", "count",
               "filter", "direction", "ascending", "descending",
               "recursive", "depth", "timeout", "number_of_results", "num_results",
               "n_results", "result_count", "max_items", "top_n"} | SEARCH_ARGS
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


def past_prefix(words: list[str]) -> list[str]:
    """A tool name's words from its verb on: a service's prefix before the verb names nothing
    the tool is about (`git_create_branch` -> create, branch)."""
    if len(words) > 2 and words[0] not in VERBS and words[1] in VERBS:
        return words[1:]
    return words


# numbers that say where or when, rate or code something: their highest or lowest is a question,
# their total is not ("add up the year of the dst transitions", "add up the status code of the
# pages"); a number, index or day last in a name is a position ("page number"), elsewhere it
# may count ("number of guests", "days overdue")
NOT_ADDITIVE = frozenset({
    "year", "month", "week", "hour", "minute", "age", "latitude", "longitude", "lat", "lon",
    "lng", "offset", "rating", "score", "rank", "priority", "version", "percent", "percentage",
    "temperature", "stars", "port", "floor", "code", "status", "zip", "postal",
    # a setting's bound or pace: "the combined group expansion max" totals nothing
    "max", "min", "maximum", "minimum", "limit", "threshold", "timeout", "ttl", "interval",
    "ratio", "rate", "level",
})
# where in a file or a grid a value points: a whole number, no amount (LSP's line 26,
# character 14)
FILE_PLACES = frozenset({"line", "character", "column", "offset", "row"})
# ... and an identifier of a record with no table of its own (chrome's page_id, page_idx)
POSITION_LAST = frozenset({"number", "no", "index", "sequence", "position", "day", "second",
                           "id", "idx", "uid"})


# numbers that name or place a record, no amount of anything: no total, highest nor lowest
# ("the sum of the issue id or key", "the smallest port", "the highest map index")
LABEL_NUMBERS = frozenset({"key", "number", "num", "no", "index", "position", "order", "port",
                           "seed", "code", "version", "rank", "end", "line", "pid"})


def not_additive(words: list[str]) -> bool:
    """Whether a numeric field named by `words` has no meaningful total (a year, a code)."""
    return bool(words) and (words[-1] in POSITION_LAST or any(w in NOT_ADDITIVE for w in words))
