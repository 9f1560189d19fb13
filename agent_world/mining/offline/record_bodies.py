"""What a record's body holds, by what the record is: a document's content is a Markdown document
under its own title, a file's content is text of the file's type (a CSV file holds rows, a
Python file code, a PNG file its bytes in base64), a private key's or certificate's content a
PEM block. Every such column had held a chat message ('Could we push the budget review to
Monday?' as a wiki page, a stored file and an SSH key alike); messages, comments and notes keep
theirs.

The body is made after the rest of the record (`RowTimes._order`), so it agrees with the
record's title or file name."""

from __future__ import annotations

import base64
import json
import posixpath
import random
import re
from typing import Any

from faker import Faker

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.category_names import category_description, category_name
from agent_world.mining.offline.naming import ADDED_LABEL, brand, singular, slug
from agent_world.mining.offline.prose import prose
from agent_world.mining.offline.value_pools import in_turn
from agent_world.mining.offline.web_results import WEB_KINDS, web_value

# the columns that hold a record's whole body
BODY_COLUMNS = frozenset({"content", "contents", "body", "markdown", "file_content",
                          "document_content", "page_content"})
_DOCUMENTS = frozenset({"doc", "document", "documentation", "wiki", "article", "guide", "readme",
                        "pdf", "manual", "handbook", "runbook", "playbook", "knowledge", "spec",
                        "specification", "memo", "writeup"})
_FILES = frozenset({"file", "object", "blob", "attachment", "upload"})
_KEYS = ("private_key", "ssh_key", "signing_key", "certificate", "cert")
# made after the rest of the record (`record_body`): bodies, a docs page's address (from its
# title), a web result's parts and a category's name (from its id)
BODY_KINDS = frozenset({"document_body", "file_body", "key_body", "doc_url", "doc_path",
                        "exchange_body", "css_body", "code_body", "sql_body",
                        "listing_body", "category_name", "category_description"}) | WEB_KINDS
# an HTTP exchange's body is JSON (a debugger's requests and mocks, Postman's responses); a
# stylesheet's is CSS; a page's or an article's text is the page (Wikipedia's articles,
# DevTools' pages, a PDF's pages)
_EXCHANGES = frozenset({"mock", "replay", "payload"})
_HTTP = frozenset({"request", "response"})  # bare or of HTTP, not a pull or leave request's
_HTTP_HEADS = frozenset({"network", "http", "api", "collection", "webhook", "mock", "graphql"})
_STYLES = frozenset({"css", "stylesheet", "style_sheet"})
_TEXTS = frozenset({"page", "article", "pdf"})
# a record's code, in the language its table says ('script_content' of a Worker is JavaScript,
# a Roblox script's line Luau; a database function's body is SQL)
_CODE_COLUMNS = frozenset({"script_content", "source_code", "function_body", "code_content"})
_CODE_RECORDS = frozenset({"script", "snippet", "bin", "playground"})
_LANGUAGES = ((re.compile(r"worker|playground|bins?\b|component"), "js"),
              (re.compile(r"script_line|roblox|luau?\b"), "lua"),
              (re.compile(r"script"), "sh"))
# a folder's content is what it lists; a sheet's or a range's its cells
_FOLDERS = frozenset({"directory", "folder", "dir"})
_GRIDS = frozenset({"sheet", "worksheet", "range"})
# pages of a product's documentation (a docs server's), not documents people write
GUIDE_NOUNS = frozenset({"doc", "documentation", "guide", "readme", "manual"})
# records that are pages, each at an address of its own
PAGE_NOUNS = GUIDE_NOUNS | {"document", "page", "article"}
DOC_TOPICS = ["Getting started", "Installation", "Configuration", "Theming", "API reference",
              "Authentication", "Deployment", "Routing", "Forms", "Data fetching", "Testing",
              "Migration guide", "Troubleshooting", "Accessibility", "Performance",
              "Environment variables", "CLI reference", "Error handling", "Caching",
              "Internationalization", "Styling", "Plugins", "Webhooks", "Rate limits",
              "Pagination", "Security", "Upgrading", "Logging", "Permissions", "TypeScript"]
# where a record says what it is called, most telling first
_NAMES = ("title", "name", "filename", "file_name", "path", "file_path", "key", "object_key",
          "object_name")


def body_kind(table: str, column: str) -> str | None:
    """`document_body`, `file_body`, `key_body`, `exchange_body`, `css_body` or `k8s_manifest`
    for a body column of such a record; None for any other column (a message's body stays a
    message)."""
    entity = singular(table)
    last = entity.split("_")[-1]
    words = entity.split("_")
    if column in BODY_COLUMNS | {"text", "body_replace"} and (last in _EXCHANGES or last in _HTTP
                                                             and (len(words) == 1 or
                                                                  words[0] in _HTTP_HEADS)):
        return "exchange_body"
    if column in BODY_COLUMNS and (last in _STYLES or entity in _STYLES):
        return "css_body"
    if column == "text" and (last in _TEXTS or entity.endswith("page_text")):
        return "document_body"
    if "kubectl" in entity and column in BODY_COLUMNS:
        return "k8s_manifest"  # what `kubectl apply -f` is given
    if column == "function_body":
        return "sql_body"  # a database function's: PL/pgSQL
    if column in _CODE_COLUMNS or column in BODY_COLUMNS and (
            last in _CODE_RECORDS or entity.endswith("script_line")):
        return "code_body"
    if column in BODY_COLUMNS and last in _FOLDERS:
        return "listing_body"
    if column in BODY_COLUMNS and last in _GRIDS:
        return "csv_text"  # a markup kind: rows of cells
    if column not in BODY_COLUMNS:
        return None
    if entity.endswith(_KEYS):
        return "key_body"
    if last in _DOCUMENTS:
        return "document_body"
    if last in _FILES:
        return "file_body"
    return None


# a record that has one of these is a file, whatever its table is called (the memory bank's
# `banks`: a file name and its content)
_FILE_NAMES = frozenset({"filename", "file_name", "file_path"})
# records that carry a file's name beside their own text (a message with an attachment)
_SAYINGS = frozenset({"message", "comment", "note", "reply", "post", "email", "update", "chat",
                      "thread", "review", "mail", "answer", "question", "feedback"})


def file_record_body(table: TableSpec, col: ColumnSpec, sem: str) -> str:
    """`file_body` for the body of a record that has a file name; `sem` otherwise."""
    if sem != "sentence" or col.name not in BODY_COLUMNS or \
            singular(table.name).split("_")[-1] in _SAYINGS:
        return sem
    return "file_body" if any(c.name in _FILE_NAMES for c in table.columns) else sem


def _named(row: dict[str, Any]) -> str | None:
    return next((row[k] for k in _NAMES if isinstance(row.get(k), str) and row[k].strip()),
                None)


def _extension(row: dict[str, Any]) -> str | None:
    for k in _NAMES:
        v = row.get(k)
        if isinstance(v, str):
            ext = posixpath.splitext(v.rstrip("/"))[1].lower().lstrip(".")
            if ext and ext.isalnum():
                return ext
    return None


def _heading(row: dict[str, Any], rng: random.Random, fake: Faker, guide: bool = False) -> str:
    name = _named(row)
    if name is None:
        return rng.choice(DOC_TOPICS) if guide else prose("title", rng, fake)
    stem = posixpath.splitext(posixpath.basename(name.rstrip("/")))[0] if "/" in name or \
        re.search(r"\.[A-Za-z0-9]{1,5}$", name) else name
    words = re.sub(r"[-_]+", " ", stem).strip()
    return words[:1].upper() + words[1:] if words else prose("title", rng, fake)


_SECTIONS = {
    "Overview": lambda f, r, t: [f"This page covers {t}: what it is for, who owns it "
                                 f"and what changes next.",
                                 f"Last reviewed by {f.name()} on "
                                 f"{f.date_between('-1y').strftime('%B %d, %Y')}."],
    "Owners": lambda f, r, t: [f"- {f.name()} ({r.choice(_TEAMS)})" for _ in range(r.randint(1, 3))],
    "Steps": lambda f, r, t: [f"{i}. {s}" for i, s in enumerate(r.sample(_STEPS, 3), 1)],
    "Timeline": lambda f, r, t: [f"- {f.date_between('-6M', '+6M').isoformat()}: {m}"
                                 for m in r.sample(_MILESTONES, 2)],
    "Decisions": lambda f, r, t: [f"- {d}" for d in r.sample(_DECISIONS, 2)],
    "Open questions": lambda f, r, t: [f"- {q}" for q in r.sample(_QUESTIONS, 2)],
}
_TEAMS = ["design", "platform", "sales", "support", "data", "mobile", "finance", "marketing"]
_STEPS = ["Request access from the platform team.", "Copy the template and fill in the owner.",
          "Run the checks and attach the results.", "Share the draft for review.",
          "Publish once two reviewers have approved.", "Update the changelog.",
          "Archive the previous version."]
_LOG_LINES = ["INFO request completed in 124 ms", "INFO cache warmed: 312 keys",
              "WARN retrying upstream call (attempt 2 of 3)", "INFO job finished: 48 rows written",
              "ERROR upstream timed out after 30 s", "INFO user signed in",
              "WARN disk usage at 81 %", "INFO deploy started"]
_MILESTONES = ["draft shared", "review complete", "rollout to all regions", "sign-off",
               "kickoff", "first customer pilot"]
_DECISIONS = ["Keep the current pricing until the review.", "Move the launch to the next sprint.",
              "Support only the latest two versions.", "Store exports for 90 days.",
              "Route escalations to the on-call engineer."]
_QUESTIONS = ["Who signs off on the budget?", "Do we need legal review?",
              "Which regions go first?", "How long do we keep the old version?"]


_GUIDE = {  # (faker, rng, title, the service's CLI name)
    "Prerequisites": lambda f, r, t, c: [f"- {p}" for p in r.sample(_NEEDS, 2)],
    "Steps": lambda f, r, t, c: [f"{i}. {s}" for i, s in enumerate(r.sample(_HOW, 3), 1)],
    "Example": lambda f, r, t, c: [f"```bash\n{r.choice(_COMMANDS).format(c=c)}\n```"],
    "Common errors": lambda f, r, t, c: [f"- {e}" for e in r.sample(_ERRORS, 2)],
}
_NEEDS = ["Node.js 18 or later", "Python 3.10 or later", "an API key in the environment",
          "a project initialised with the CLI", "admin access to the workspace",
          "Docker installed locally"]
_HOW = ["Install the package.", "Add the provider at the root of the app.",
        "Set the options in the config file.", "Restart the dev server.",
        "Run the check command and fix what it reports.", "Commit the generated files."]
_COMMANDS = ["npm install --save-dev @{c}/cli", "pip install {c}-sdk", "npx {c} init",
             "{c} config set region eu-west-1", "{c} deploy --prod", "{c} doctor"]
_ERRORS = ["`401 Unauthorized`: the API key is missing or expired.",
           "`MODULE_NOT_FOUND`: the package is not installed in this project.",
           "`429 Too Many Requests`: wait and retry with backoff.",
           "A blank page after build: check the base path in the config."]


def document_body(row: dict[str, Any], rng: random.Random, fake: Faker, guide: bool = False,
                  cli: str = "acme") -> str:
    """A short Markdown document under the record's own title (`guide`: a documentation
    page: prerequisites, steps, an example running the service's `cli`, common errors)."""
    title = _heading(row, rng, fake, guide)
    if guide:
        # 'installation', but 'API reference' and 'TypeScript' as they are
        said = title[:1].lower() + title[1:] if title[1:2].islower() and \
            not re.search(r"[A-Z]", title[1:]) else title
        intro = f"This guide explains {said}: what you need, the " \
                f"steps and the errors you may see."
        parts = [f"# {title}", intro]
        for name in ["Prerequisites", *rng.sample(["Steps", "Example", "Common errors"], 2)]:
            parts.append(f"## {name}\n" + "\n".join(_GUIDE[name](fake, rng, title, cli)))
        return "\n\n".join(parts)
    parts = [f"# {title}", "\n".join(_SECTIONS["Overview"](fake, rng, title))]
    for name in rng.sample([k for k in _SECTIONS if k != "Overview"], rng.randint(1, 2)):
        parts.append(f"## {name}\n" + "\n".join(_SECTIONS[name](fake, rng, title)))
    return "\n\n".join(parts)


_CODE = {
    "py": lambda f, r, s: f'def {s}(items):\n    """The items of {s.replace("_", " ")}, '
                          f'sorted."""\n    return sorted(items)\n',
    "js": lambda f, r, s: f"export function {_camel(s)}(items) {{\n  return [...items]"
                          f".sort();\n}}\n",
    "ts": lambda f, r, s: f"export function {_camel(s)}(items: string[]): string[] {{\n  "
                          f"return [...items].sort();\n}}\n",
    "sh": lambda f, r, s: f"#!/usr/bin/env bash\nset -euo pipefail\necho \"running {s}\"\n",
    "go": lambda f, r, s: f"package main\n\nfunc {_camel(s)}(items []string) int {{\n\treturn "
                          f"len(items)\n}}\n",
    "lua": lambda f, r, s: f"local function {_camel(s)}(items)\n  return #items\nend\n\n"
                           f"return {_camel(s)}\n",
}
_CODE["css"] = lambda f, r, s: (f".{s.strip('-_') or 'card'} {{\n  display: flex;\n  gap: "
                                f"{r.choice([0.5, 1, 1.5])}rem;\n  color: "
                                f"{r.choice(['#1f2937', '#0f766e', '#b91c1c'])};\n}}\n")
_LISTED = ["README.md", "src/", "package.json", "docs/", "notes.txt", "report.pdf", "images/",
           "data.csv", "Makefile", ".gitignore"]
_CODE.update({"jsx": _CODE["js"], "tsx": _CODE["ts"], "mjs": _CODE["js"], "bash": _CODE["sh"],
              "luau": _CODE["lua"]})
_MAGIC = {"png": b"\x89PNG\r\n\x1a\n", "jpg": b"\xff\xd8\xff\xe0", "jpeg": b"\xff\xd8\xff\xe0",
          "gif": b"GIF89a", "pdf": b"%PDF-1.7\n", "zip": b"PK\x03\x04", "docx": b"PK\x03\x04",
          "xlsx": b"PK\x03\x04", "pptx": b"PK\x03\x04", "mp4": b"\x00\x00\x00\x18ftypmp42",
          "mp3": b"ID3\x04", "wav": b"RIFF", "webp": b"RIFF", "mov": b"\x00\x00\x00\x14ftypqt"}


def _camel(stem: str) -> str:
    head, *rest = re.sub(r"[^A-Za-z0-9_]", "_", stem).split("_") or ["main"]
    return (head.lower() or "main") + "".join(w.title() for w in rest if w)


def _stem(row: dict[str, Any], rng: random.Random, fake: Faker) -> str:
    """The record's name as an identifier: what its code names ('cron_cleanup')."""
    return re.sub(r"\W+", "_", _heading(row, rng, fake).lower()).strip("_") or "main"


def file_body(row: dict[str, Any], rng: random.Random, fake: Faker, default: str = "txt"
              ) -> str:
    """Text of the type the record's file name says (`default` when it names none)."""
    ext = _extension(row) or default
    stem = _stem(row, rng, fake)
    if ext in ("md", "markdown"):
        return document_body(row, rng, fake)
    if ext in _CODE:
        return _CODE[ext](fake, rng, stem)
    if ext == "json":
        return json.dumps({"name": stem, "version": f"{rng.randint(0, 3)}.{rng.randint(0, 9)}.0",
                           "enabled": rng.random() < 0.7, "owner": fake.email()}, indent=2)
    if ext in ("yml", "yaml"):
        return f"name: {stem}\nversion: {rng.randint(1, 5)}\nowner: {fake.user_name()}\n" \
               f"enabled: {str(rng.random() < 0.7).lower()}\n"
    if ext == "csv":
        rows = [f"{i},{fake.name()},{rng.randint(1, 500)}" for i in range(1, rng.randint(3, 7))]
        return "\n".join(["id,name,amount", *rows]) + "\n"
    if ext in ("html", "htm"):
        return f"<!doctype html>\n<html><head><title>{_heading(row, rng, fake)}</title></head>\n" \
               f"<body><h1>{_heading(row, rng, fake)}</h1><p>{rng.choice(_STEPS)}</p></body></html>\n"
    if ext == "sql":
        return f"SELECT id, name FROM {stem} ORDER BY id LIMIT {rng.choice([10, 20, 50])};\n"
    if ext == "log":
        return "".join(f"{fake.date_time_between('-7d').isoformat(timespec='seconds')} "
                       f"{rng.choice(_LOG_LINES)}\n"
                       for _ in range(rng.randint(2, 4)))
    if ext in ("env", "ini", "cfg", "conf", "properties", "toml"):
        return f"NAME={stem}\nPORT={rng.choice([3000, 5432, 8000, 8080])}\n" \
               f"LOG_LEVEL={rng.choice(['info', 'debug', 'warn'])}\n"
    if ext in _MAGIC or ext in ("svg", "ico", "bmp", "tiff", "avi", "mkv", "apk", "ipa", "bin"):
        raw = _MAGIC.get(ext, b"\x00") + rng.randbytes(24)
        return base64.b64encode(raw).decode()
    # plain text: the document without its markup
    return re.sub(r"^#+ ", "", document_body(row, rng, fake), flags=re.M) + "\n"


def exchange_body(table: str, rng: random.Random, fake: Faker) -> str:
    """The JSON body of an HTTP request or response: what a client sends, what a server
    answers."""
    if singular(table).split("_")[-1] == "request":
        body: dict[str, Any] = {"email": fake.email(), "quantity": rng.randint(1, 5),
                                "sku": f"SKU-{rng.randint(1000, 9999)}"}
    else:
        body = {"id": rng.randint(1, 9999), "status": rng.choice(["ok", "created", "queued"]),
                "items": rng.randint(0, 40)}
    return json.dumps(body)


def key_body(table: str, rng: random.Random) -> str:
    """A PEM block of the record's kind (the bytes are random, the armour is real)."""
    label = "CERTIFICATE" if singular(table).endswith(("certificate", "cert")) else \
        "OPENSSH PRIVATE KEY" if "ssh" in table else "PRIVATE KEY"
    raw = base64.b64encode(rng.randbytes(96)).decode()
    lines = [raw[i:i + 64] for i in range(0, len(raw), 64)]
    return "\n".join([f"-----BEGIN {label}-----", *lines, f"-----END {label}-----"])


def doc_topic(table: str, row: dict[str, Any], rng: random.Random, service: str = "") -> str:
    """A docs page's topic: the pages of a service's table go through the topics in an order
    of their own before any repeats (two 'Webhooks' pages made 'the doc named Webhooks'
    ambiguous)."""
    return in_turn(DOC_TOPICS, row.get("id"), rng, order=f"{service}:{table}")


def docs_address(table: str, row: dict[str, Any], rng: random.Random, full: bool,
                 parent: dict[str, Any] | None = None, service: str = "") -> str:
    """Where a docs page is: '/docs/installation' under its title (or its `parent` page's, for
    a table of pages' URLs), on the service's docs site (`full`: the whole URL; 'apple-docs'
    -> https://docs.apple.com)."""
    title = next((v for own in (row, parent or {}) for k in ("title", "name")
                  if isinstance(v := own.get(k), str) and v.strip()), None)
    topic = title if title and not title.startswith(("/", "http")) else rng.choice(DOC_TOPICS)
    path = "/docs/" + slug(topic)
    return f"https://docs.{brand(service or 'acme')}.com{path}" if full else path


def record_body(kind: str, table: str, row: dict[str, Any], rng: random.Random, fake: Faker,
                file_types: list[str] | None = None, parent: dict[str, Any] | None = None,
                service: str = "") -> str:
    """The body of one record of `kind` (one of `BODY_KINDS`); `file_types`: the types the
    source's files are, for a file whose record names none; `parent`: the record it belongs
    to; `service`: the source's name (its docs host, its CLI, its pages' order)."""
    if kind in ("doc_url", "doc_path"):
        return docs_address(table, row, rng, kind == "doc_url", parent, service)
    if kind in WEB_KINDS:  # a web search result's title, URL or snippet
        return web_value(kind, table, row, rng, service)
    if kind == "category_name":  # by its id: a table's categories differ
        return category_name(table, row.get("id"), rng, service)
    if kind == "category_description":
        return category_description(table, row, service)
    if kind == "key_body":
        return key_body(table, rng)
    if kind == "file_body":
        return file_body(row, rng, fake, default=(file_types or ["txt"])[0])
    if kind == "exchange_body":
        return exchange_body(table, rng, fake)
    if kind == "code_body":
        lang = next((ext for said, ext in _LANGUAGES if said.search(table)), "py")
        code = _CODE[lang](fake, rng, _stem(row, rng, fake))
        # a script's line is one line of its code
        return next(ln for ln in code.splitlines() if ln.strip()) if "line" in table else code
    if kind == "sql_body":
        return f"BEGIN\n  RETURN (SELECT count(*) FROM {singular(table)}_items);\nEND;\n"
    if kind == "listing_body":
        return "\n".join(rng.sample(_LISTED, rng.randint(2, 5)))
    if kind == "css_body":
        return _CODE["css"](fake, rng, re.sub(r"\W+", "-", _heading(row, rng, fake).lower()))
    return document_body(row, rng, fake, guide=singular(table).split("_")[-1] in GUIDE_NOUNS,
                         cli=brand(service or "acme"))




# records that are documentation pages: what a read of one returns is the page's text
_PAGES = GUIDE_NOUNS | {"handbook", "runbook", "playbook", "knowledge", "document"}
_HAS_BODY = BODY_COLUMNS | {"text", "html", "document", "summary"}


def give_pages_content(tables: list[Any], kinds: dict[str, str]) -> list[str]:
    """Documentation pages hold a title and their text: a `content` column where a table of
    them has none (the docs servers' fetch tools declare no output, so MUI's, Context7's and
    Vuetify's docs were an id and a name, and every read of one was rejected as empty), and
    the name the miner gave each page is its title, which a fetch of it shows (no question
    could ask which page a URL is: made-up labels are never asked). The notes of what was
    added."""
    notes = []
    for t in tables:
        if kinds.get(t.name) in ("join", "child") or \
                singular(t.name).split("_")[-1] not in _PAGES:
            continue
        label = next((c for c in t.columns if c.name == "name"), None)
        if label is not None and label.description == ADDED_LABEL:
            label.description = "the page's title"
        if {c.name for c in t.columns} & _HAS_BODY:
            continue
        t.columns.append(ColumnSpec(name="content", type="text",
                                    description="the page's text (Markdown)"))
        notes.append(f"{t.name}: content (a documentation page holds its text)")
    return notes


__all__ = ["BODY_COLUMNS", "BODY_KINDS", "body_kind", "document_body", "file_body",
           "doc_topic", "file_record_body", "give_pages_content", "key_body", "record_body", "DOC_TOPICS",
           "GUIDE_NOUNS", "PAGE_NOUNS"]
