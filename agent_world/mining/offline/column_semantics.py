"""What kind of value a column holds (`column_semantic`: from its name, type, declared format,
description and table), and the role of a time column in a row's life (`time_role`)."""

from __future__ import annotations

import re

from agent_world.envs.table_spec import ColumnSpec
from agent_world.mining.offline.markup_values import markup_kind
from agent_world.mining.offline.naming import is_person, singular, unnumbered
from agent_world.mining.offline.record_bodies import GUIDE_NOUNS, body_kind
from agent_world.mining.offline.reference_data import TECH_NOUNS
from agent_world.mining.offline.service_values import exact_kind, service_kind
from agent_world.mining.offline.vocabulary import FILE_PLACES, PERSON_NOUNS, PERSON_ROLES
from agent_world.mining.offline.web_results import web_part

# records whose name is a title a person gives a piece of work or writing
DOCUMENT_NOUNS = frozenset({
    "doc", "document", "note", "page", "report", "file", "article", "post", "issue", "task",
    "project", "board", "presentation", "spreadsheet", "sheet", "notebook", "draft", "template",
    "story", "epic", "milestone", "objective", "checklist", "ticket", "dashboard", "list",
    "folder", "playbook", "plan", "proposal", "memo", "wiki", "guide", "section", "chapter",
    "course", "lesson", "campaign", "initiative", "goal", "form", "survey", "meeting", "event",
    "agenda", "thread", "conversation", "card", "category", "address", "documentation",
    "collection", "album", "playlist", "recipe", "workbook", "slide", "deck", "diagram",
    "whiteboard", "canvas", "brief", "spec", "requirement", "feature", "bug", "incident",
    "experiment", "study", "paper", "publication", "tutorial", "blog", "newsletter", "view"})

# records whose name is a value of a known kind
_NAMED_KINDS = {"language": "language_name", "country": "country_name",
                "currency": "currency_name", "color": "color", "colour": "color",
                "team": "team_name", "group": "team_name"}


def time_role(name: str) -> str:
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


# declared formats decide before names do
_FORMAT_SEMANTICS = {"email": "email", "uri": "url", "url": "url", "uuid": "uuid",
                     "ipv4": "ip", "hostname": "domain", "time": "hhmm"}
# column names whose meaning is unambiguous whatever the table
_NAMED = {
    "given_name": "first_name", "first_name": "first_name", "family_name": "last_name",
    "surname": "last_name", "last_name": "last_name", "middle_name": "first_name",
    "mrn": "mrn", "medical_record_number": "mrn", "isbn": "isbn", "isbn13": "isbn",
    "barcode": "barcode", "ean": "barcode", "upc": "barcode",
    "authors": "people", "author_names": "people", "opening_hours": "opening_hours",
    "business_hours": "opening_hours", "hours": "opening_hours",
    "condition": "condition", "sku": "code", "iban": "iban",
    "license_plate": "license_plate", "ssn": "ssn",
}
# sizes nothing has none of: a Word table of 0 columns, a print of 0 copies ("add a table,
# using rows 3 and cols 0")
_EXTENTS = frozenset({"rows", "cols", "columns", "num_rows", "num_cols", "num_columns",
                      "row_count", "col_count", "column_count", "copies", "pages",
                      "page_count", "quantity", "qty"})
# how many results a page holds, as list arguments call it
_PAGE_SIZES = frozenset({"limit", "per_page", "page_size", "top", "max_results", "max_items",
                         "count_per_page", "max_count"})
# the people a `<role>_name` column names: the miner's person roles and nouns, and the roles of
# records people sign, borrow, hold or commit
_PERSON_ROLES = frozenset(PERSON_ROLES | PERSON_NOUNS | {"borrower", "committer", "holder",
                                                          "signer"})
# columns that name a person by themselves (Shortcut's requester had been
# 'checkout-requester'); not every role: a `host` is a machine, a `lead` a record, a `sender`
# an address
_PERSON_COLUMNS = frozenset({"author", "changed_by", "assignee", "reviewer", "owner",
                             "requester", "approver", "reporter", "submitter", "creator",
                             "requested_by", "approved_by", "reported_by", "submitted_by",
                             "assigned_to"})


# a region of a cloud provider ('us-east-1'), not of a map
_CLOUD = re.compile(r"\baws\b|amazon|cloud|azure|gcp|google cloud|data ?cent|deploy|地域|"
                    r"us-east-1|nyc3")


# the kinds a record's 'content' takes from the record's own name (see column_semantic)
_CONTENT_KINDS = frozenset({"url", "command", "emoji", "sql"})
# the columns that hold a program's text when their description names its language
_CODE_HOLDERS = frozenset({"expression", "expr", "script", "code", "content", "source",
                           "init_script", "snippet", "body"})


# records a cloud keeps in a region
# an address of one of these is a mailbox, not a street
_MAIL_ROLES = frozenset({"reply", "sender", "recipient", "from", "cc", "bcc", "list",
                         "forwarding", "forward", "mail", "im", "notification", "alias"})
CLOUD_THINGS = frozenset({"bucket", "cluster", "instance", "vpc", "subnet", "volume",
                           "snapshot", "function", "queue", "topic", "registry"})


_DOC_ADDRESSES = {**dict.fromkeys(("url", "link", "href", "uri", "page_url", "doc_url"),
                                  "doc_url"),
                  **dict.fromkeys(("path", "route", "slug", "doc_path", "page_path"),
                                  "doc_path")}


def _of_guides(table: str) -> bool:
    """A table of documentation pages, or of their URLs (MUI's `doc_urls`)."""
    words = singular(table).split("_")
    return words[-1] in GUIDE_NOUNS or words[0] in GUIDE_NOUNS and words[-1] in ("url", "link")


def _format_of(col: ColumnSpec) -> str | None:
    m = re.search(r"\bformat[:=]\s*([a-z0-9-]+)", col.description.lower())
    return m.group(1) if m else None


# things described by a blurb of their own (a book's, a product's, a place's)
_BLURBED = frozenset({"title", "book", "edition", "novel", "publication", "product", "item",
                      "listing", "hotel", "place", "restaurant", "recipe", "course", "variant"})


def column_semantic(table: str, col: ColumnSpec) -> str:
    """What kind of value a column holds, from its name, type, description and table."""
    n = unnumbered(col.name.lower())  # Word's color1 and color2 are colors
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
    if t == "text" and (web := web_part(table, n)):
        return web  # a web search result's title, URL or snippet: one page's
    if t == "text" and n in ("description", "summary") and \
            singular(table).split("_")[-1] == "category":
        return "category_description"  # 'Videos in the Music category.', under its name
    if t in ("date", "datetime"):
        return f"{t}:{time_role(n)}"
    if "base64" in words and t == "text":
        return "base64"  # Excel's content_base64 held 'Looks good to me, approved.'
    if t == "real":
        if words & {"latitude", "lat"}:
            return "latitude"
        if words & {"longitude", "lng", "lon"}:
            return "longitude"
        if words & {"rating", "score", "stars"}:
            return "rating"
        if words & {"count", "qty", "quantity", "replicas"}:  # a count stored as a real is whole
            return "count"
        if words & {"font"}:
            return "font_size"  # a text box's font size: 11 pt, not 193.44
        if words & {"width", "height"} and not words & {"line", "border", "stroke"}:
            return "pixels"  # a shape's size in points or pixels: 320 x 240, not 6.98 x 132.8
        if n in ("x", "y") or words & FILE_PLACES:
            # where on a page or a slide, in a file (LSP's line 26, character 14): no money
            return "position"
        if words & {"percent", "percentage", "pct", "discount", "rate"}:
            return "percent"
        return "money"
    if t == "integer":
        if n in ("status_code", "http_status", "response_code", "http_code"):
            return "http_status"
        if words & {"year"}:
            return "year"
        if words & {"age"}:
            return "age"
        if words & {"rating", "stars", "score", "priority", "level", "rank", "floor"}:
            return "small_int"
        if words & {"minutes", "duration"}:
            return "duration"
        if words & {"font", "pt"}:
            return "font_size"
        if words & {"width", "height"} and not words & {"line", "border", "stroke"}:
            return "pixels"  # a window's or an image's size: 1280 x 720, not 3 x 8
        if n in _PAGE_SIZES:
            return "page_size"
        if n in ("offset", "skip", "start", "start_index"):
            return "offset"
        if n in ("page", "page_number", "page_no"):
            return "page"
        if words & {"size", "bytes"}:
            return "bytes"
        if words & {"decimals"}:
            return "decimals"
        if words & {"order", "position"}:
            return "position"
        if n in _EXTENTS:
            return "extent"
        return "count"
    d = col.description.lower()
    single = singular(table).split("_")[-1]
    fmt = _format_of(col)
    if fmt in _FORMAT_SEMANTICS:
        return _FORMAT_SEMANTICS[fmt]
    if n in _NAMED:
        return _NAMED[n]
    if n == "year" or n.endswith("_year"):
        return "year_text"  # a year kept as text ("2025"): no '7776'
    # kinds the corpus's tool arguments name most often, before the word lists below catch
    # them by one of their words (a message_id is no message, a font_size no byte count)
    if n in ("id", "uid", "gid", "iid", "udid", "guid") or \
            n.endswith(("_id", "_gid", "_iid", "_uid", "_ids")):
        return "text_id"
    if n.endswith("_date") or words & {"date", "since", "until"} or \
            re.search(r"yyyy-mm-dd|iso[ -]?8601 date|\(date\)", d):
        return "text_date"
    if words & {"font"}:
        return "font_name"
    if n in ("style", "style_name") or n.endswith("_style"):
        return "style_name"
    if words & {"sheet", "worksheet"} and n not in ("sheet_count", "sheets") or \
            single in ("sheet", "worksheet") and n in ("name", "new_name", "title"):
        return "sheet_name"
    if n in ("cell", "cell_ref", "cell_address") or n.endswith("_cell") or \
            n == "at" and re.search(r"\bcell\b", d):
        return "cell"
    if words & {"cell", "cells"} or n in ("used_range", "cell_range", "freeze_panes",
                                           "auto_filter", "a1_range", "print_area") or \
            n == "address" and re.search(r"range|worksheet|workbook", table):
        return "cell_ref"  # Microsoft Graph's range address is 'A1:C10', no street
    if words & {"password", "passphrase", "secret"}:
        return "password"
    if n in ("query", "q", "search", "search_query", "search_term", "keyword", "keywords",
             "term", "search_text"):
        return "search_terms"
    if n in ("expression", "expr") and re.search(r"calculat|\bmath|arithmetic", f"{table} {d}"):
        return "math_expression"  # a calculator's input is '(120 - 45) / 3', no name
    if n in _CODE_HOLDERS and re.search(r"\bjavascript\b|(?<!\.)\bjs\b", d):  # not Mermaid.js
        return "js_expression"  # Selenium's script content had been a chat message
    if n in _CODE_HOLDERS and re.search(r"\blua[u]?\b", d):
        return "lua_code"  # Roblox Studio's run_code(code: "Luau code to execute"): 'ZX-3460'
    if n in _CODE_HOLDERS and re.search(r"\bcode snippet\b|\bsnippet of code\b", d):
        return "code_snippet"
    if n in ("command", "cmd", "shell_command", "script"):
        return "command"
    if n in ("namespace", "k8s_namespace", "kube_namespace"):
        # a CloudWatch metric's namespace is 'AWS/EC2', no Kubernetes 'kube-system'
        return "metric_namespace" if re.search(r"metric|alarm|cloudwatch", f"{table} {d}") \
            else "namespace"
    if n in ("opt_fields", "fields", "select", "columns", "include_fields"):
        return "field_list"
    if n in ("database", "database_name", "db", "db_name"):
        return "database_name"
    # no declared enum: the states of its kind of record (`value_pools.status_pool`), never
    # '<area>-<noun>' ('admin-payment-status')
    if (n == "status" or n.endswith("_status") and not words & {"http", "response", "exit",
                                                                  "return", "code"}) \
            and t == "text":
        return "status"
    if n in ("platform", "os", "operating_system"):
        return "platform"
    if n in ("environment", "deploy_environment"):
        return "deploy_environment"
    if n in ("repository", "repo", "repository_name", "repo_name"):
        return "slug_name"
    if words & {"image"} and (words & {"docker", "container"} or "docker" in d):
        return "docker_image"
    markup = markup_kind(words, d) if t == "text" else None
    if markup:
        return markup  # draw.io's CSV content, a docker-compose file: a document of that kind
    if single in ("query", "statement", "sql") and n in ("content", "sql", "query", "statement"):
        return "sql"  # PostgREST's sqlToRest(sql) kept its statement as a 'content'
    if n == "content" and single != "content":
        # a tool's argument named as its record is kept as the record's 'content' (
        # slack_add_reaction(reaction), run_command(command), ref_read_url(url)): a value of
        # the kind that name says, where that is a technical one, not a sentence
        kind = column_semantic(table, ColumnSpec(name=single, type=t,
                                                 description=col.description))
        if kind in _CONTENT_KINDS:
            return kind
    if single == "table" and n in ("name", "table_name"):
        return "table_name"
    if single == "insight" and n in ("content", "text", "body", "insight"):
        return "insight"
    if n == "reason" and single in ("appointment", "visit", "booking", "consultation"):
        return "visit_reason"
    if n.endswith("_number") and not n.startswith(("num", "number")):
        return "digits"
    if "hh:mm" in d or n in ("time", "local_time", "start_hhmm"):
        return "hhmm"
    if "email" in words or n == "address" and "email" in singular(table).split("_"):
        return "email"  # an email address record's address is a mailbox, no street
    if words & {"phone", "mobile", "fax", "telephone"}:
        return "phone"
    if n == "first_name":
        return "first_name"
    if n == "last_name":
        return "last_name"
    if n in ("full_name", "display_name") or (n == "name" and is_person(table)) or \
            n in _PERSON_COLUMNS:
        return "person_name"
    if n in ("username", "login", "handle", "user_name"):
        return "username"
    if n.endswith("_name") and (words & _PERSON_ROLES or d.startswith("who ")):
        return "person_name"  # a commit's author_name is a person, not a word
    if n in ("anchor_text", "anchor", "link_text"):
        return "anchor"
    if n in _DOC_ADDRESSES and _of_guides(table):
        # a docs page's address on its docs site (HeroUI's docs had been at
        # '/home/jasmine30/Downloads/report-v4.csv', MUI's on blogs)
        return _DOC_ADDRESSES[n]
    if words & {"url", "uri", "link", "links", "urls", "website", "homepage", "endpoint", "href"}:
        return "url"
    if n in ("path", "endpoint_path", "api_path") and re.search(
            r"request|http|rest|endpoint|route", table) and not re.search(r"\bfile\b", d):
        return "api_path"  # PostgREST's request path ('/orders?status=eq.open'), no file
    if n in ("file_name", "filename"):
        return "file_name"
    if words & {"path", "paths", "pathname"} and not re.search(r"\bfile\b", d):
        if re.search(r"\brout(?:e|es|ing)\b|\bforward|\bwebpage path\b|"
                     r"\bwithout (?:the )?domain", d):
            return "route_path"  # Dokploy's domain internal_path: '/api/v1', no file on a disk
        watched = "watch" in words or "watch" in table.split("_")  # application_watch_paths
        if re.search(r"within (?:the |a )?repo", d) or words & {"build", "context"} or watched:
            # a build, context or watched path inside a repository ('apps/web'); Dokploy's
            # had been '/Users/danny/Projects/contract-2022.gif'
            return "watch_glob" if watched else "repo_dir"
    if single not in ("repository", "repo") and (words & {"directory", "dir", "folder"} or (
            "path" in words and (re.search(r"\b(?:directory|folder|project root)\b", d)
                                 or single in ("directory", "dir", "folder"))
            and not re.search(r"\bfile\b", d))):
        # a path its source says is a directory (claude-context's index_codebase(path):
        # "absolute path to the codebase directory"), or a directory's own path, not a file
        # ('.../sales.mp4'; filesystem's create_directory was given '.../pricing-signed.mp3')
        return "dir_path"
    if words & {"path", "directory", "dir", "file", "folder"}:
        return "repo_path" if single in ("repository", "repo") else "file_path"
    if "timezone" in words or n in ("tz", "time_zone", "tz_name") or \
            n.endswith("_time_zone") or (single == "timezone" and n == "name"):
        return "timezone"
    if n in ("utc_offset", "offset"):
        return "utc_offset"
    if "currency" in words:
        return "currency"
    if n in ("country", "country_code", "nationality"):
        return "country"
    if n == "city":
        return "city"
    if n == "location" and (single in CLOUD_THINGS or _CLOUD.search(f"{d} {table}")):
        return "cloud_region"  # a bucket's location is 'us-east1', no street address
    if "address" in words and words & _MAIL_ROLES:
        return "email"  # Gmail's reply_to_address, a mailing list's list_address: mailboxes
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
    if words & {"diff", "patch"} and not words & {"count", "size", "lines", "stat", "stats"}:
        return "diff"
    if n.split("_")[-1] in ("type", "kind") and len(words) > 1:
        # a kind of something: roblox's value_type is 'number', not a sentence for 'value'
        return "category"
    if n in ("day_of_week", "weekday", "day_of_the_week", "dow"):
        return "weekday"
    if n in ("text", "content") and single in ("heading", "header", "headline"):
        return "title"  # Word's add_heading(text) had headed documents 'Looks good to me.'
    if t == "text" and (n == "value" or n.endswith("_value") and not words & {
            "message", "text", "body", "comment", "note", "description"}):
        # a header's, an env var's, a cell's, a filter's compare value, a property's: short,
        # of its kind
        return "setting_value"
    if t == "text" and (body := body_kind(table, n)):
        return body  # a document's, a file's or a key's whole body, not a message
    if words & {"message", "body", "content", "comment", "notes", "note", "text", "reason",
                "bio", "summary", "instructions", "instruction", "observation",
                "observations", "caption", "answer", "question", "feedback", "value",
                "prompt", "error", "response", "why", "preconditions", "replacement",
                "paragraph", "explanation", "rationale", "stdout", "stderr", "snippet",
                "excerpt"} and exact_kind(n) in (None, "sentence"):
        # a name with a prose word whose name alone says it is none (an attendee's
        # response_status, a monitor's schedule_text, Asana's html_notes) is of its kind
        return "sentence"
    if words & {"description", "details", "desc"}:
        # a document's or a thing's blurb; a service's record (a model, a tag, a repository)
        # is described by who uses it, not as a 'Working copy of the Q3 onboarding doc.'
        return "paragraph" if single in DOCUMENT_NOUNS | _BLURBED else "record_description"
    if n == "subject" and single in ("title", "book", "novel", "publication", "edition"):
        return "book_subject"
    if n in ("name", "title") and single.split("_")[-1] in GUIDE_NOUNS:
        return "doc_topic"  # a docs server's page: 'Installation', not 'Q3 budget review'
    if words & {"title", "subject", "headline", "caption"}:
        return "book_title" if n == "title" and single in (
            "title", "book", "album", "novel", "publication", "edition") else "title"
    if "slug" in words:  # 'payments-api', 'hansen-group': no ticket key ('LN-5130')
        return "org_slug" if (words | {single}) & {"organization", "org", "company", "team",
                                                   "workspace", "owner", "account"} \
            else "slug_name"
    if words & {"company", "organization", "employer", "vendor", "brand"}:
        return "company"
    if words & {"code", "sku", "reference", "ref", "isbn", "number", "slug", "key"}:
        return "code"
    if words & {"region", "continent", "area"}:
        return "cloud_region" if _CLOUD.search(f"{d} {table}") else "region"
    if words & {"type", "kind", "category", "genre", "role", "target", "action", "method",
                "channel", "source", "unit"}:
        return "category"
    if n in ("tag", "tag_name", "hashtag", "keyword"):  # 'urgent', never 'users-tag'
        return "tag"
    if n.endswith("_name") and n not in ("field_name", "column_name"):  # a script's, an app's
        return "slug_name"
    if n in ("name", "label"):
        if single in TECH_NOUNS or set(singular(table).split("_")) & TECH_NOUNS:
            return "slug_name"
        if single == "branch":
            return "branch_name"
        if single in ("book", "title", "album", "novel", "publication", "edition"):
            return "book_title"
        if single in ("tag", "label", "keyword", "topic"):
            return "tag"
        if single in ("company", "organization", "vendor", "supplier", "clinic", "hospital"):
            return "company"
        if single in ("city", "location", "venue", "place", "hotel", "airport", "store"):
            return "place"
        if single in ("calendar",):
            return "calendar_name"
        if single in ("product", "good", "listing", "merchandise", "variant"):
            return "product_name"
        if single in ("channel", "test", "artifact"):  # '#design-reviews', 'test_checkout_api'
            return {"channel": "channel_name", "test": "test_name"}.get(single, "file_name")
        if single in _NAMED_KINDS:  # a languages table's name is 'English', not a title
            return _NAMED_KINDS[single]
        if single.split("_")[-1] == "category":  # 'cs.LG', 'news', not 'Q4 roadmap'
            return "category_name"
        # a document's title ('Q3 budget review'); any other record is named for what it is
        # ('checkout-screenshot'), never 'Sales weekly backlog' for a flight or a subnet
        return "title" if single.split("_")[-1] in DOCUMENT_NOUNS else "record_name"
    return service_kind(table, col.name, col.description) or "word"
